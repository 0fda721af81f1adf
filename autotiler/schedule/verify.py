"""The schedule verifier: runs on every kernel before its code is emitted.

It walks the schedule (:mod:`.walk`) with a checker instead of a clock and refuses, with a
CodegenError naming the kernel, the argument and the statement:

* an L1 or L2 region outside its memory symbol (slots, staging rings);
* a transfer issued on an event that still holds one, a wait on an event holding none, a
  transfer still pending when the kernel returns;
* a transfer into a region that a pending transfer writes or reads, or out of a region a
  pending transfer is still filling (no buffer is rewritten while in flight);
* a basic-kernel call touching a region a pending transfer writes (every read waited before
  use), or writing a region a pending transfer reads;
* an output argument not written completely (every byte of its used data written back to its
  home at least once, nothing written outside it).

Kernels of up to ``FULL_WALK_LIMIT`` loop iterations are walked in full; longer ones skip
repeated stretches like the cost model does (buffer parities included in the period), and
output coverage is then checked on the bytes written.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from math import prod

from ..errors import CodegenError, ModelError
from .expr import compile_expr, names
from .ir import Direction, Schedule
from .walk import Machine, Program, Walker, environment

FULL_WALK_LIMIT = 50_000  # loop iterations: up to this many the verifier walks every one (exact coverage)


@dataclass
class _Pending:
    arg: str
    what: str
    reads: tuple   # (level, lo, hi) the transfer reads from
    writes: tuple  # (level, lo, hi) the transfer writes


def _overlap(a: tuple, b: tuple) -> bool:
    """Spans are (level, base, lo, hi, lines): the same memory and intersecting bytes; ``lines``
    is None for a contiguous range, else the sorted (lo, hi) lines of a 2D transfer."""
    if a[:2] != b[:2] or not (a[2] < b[3] and b[2] < a[3]):
        return False
    if a[4] is None and b[4] is None:
        return True
    xs = a[4] or ((a[2], a[3]),)
    ys = b[4] or ((b[2], b[3]),)
    i = j = 0
    while i < len(xs) and j < len(ys):
        if xs[i][0] < ys[j][1] and ys[j][0] < xs[i][1]:
            return True
        if xs[i][1] <= ys[j][1]:
            i += 1
        else:
            j += 1
    return False


class Checker(Machine):
    def __init__(self, schedule: Schedule, tiling, fns: dict):
        self.s = schedule
        self.t = tiling
        self.sizes = {level: size for level, (_, size) in schedule.symbols.items()}
        self.pending: dict = {}
        self.fns = fns
        self.written: dict = {}     # arg -> list of (lo, hi) ranges of its home written
        self.bytes: dict = {}       # arg -> bytes written to its home
        self.skipped = False
        self.cargs = {c.name for c in tiling.kernel.cargs}
        self.transfers = 0

    def fail(self, node, msg: str) -> None:
        where = f" ({node.comment})" if getattr(node, "comment", "") else ""
        raise CodegenError(f"schedule verification failed: {msg}{where}", kernel=self.s.name,
                           arg=getattr(node, "arg", None),
                           hint="this is a bug of autotiler: please report the model that triggers it")

    def region(self, r, env) -> tuple:
        lo = self.fns[id(r.offset)](env)
        return r.level, r.base, lo, lo + self.fns[id(r.size)](env), None

    def check_bounds(self, node, span: tuple, what: str) -> None:
        level, _, lo, hi, _ = span
        size = self.sizes.get(level)
        if size is not None and (lo < 0 or hi > size):
            self.fail(node, f"{what} [{lo}, {hi}) is outside the {level.value} symbol of {size} bytes")

    # -- machine -----------------------------------------------------------------------------------
    def copy(self, node, env: dict, size: int, lines: int, event: tuple) -> None:
        self.transfers += 1
        if event in self.pending:
            self.fail(node, f"transfer on event {event[0]} which still holds the transfer of "
                      f"'{self.pending[event].arg}'")
        loc = self.region(node.loc, env)
        ext_lo = self.fns[id(node.ext.offset)](env)
        if node.length is not None:
            stride, length = self.fns[id(node.stride)](env), self.fns[id(node.length)](env)
            rows = tuple((ext_lo + i * stride, ext_lo + i * stride + length) for i in range(lines))
            ext = (node.ext.level, node.ext.base, rows[0][0], rows[-1][1], tuple(sorted(rows)))
        else:
            stride = length = size
            ext = (node.ext.level, node.ext.base, ext_lo, ext_lo + size, None)
        self.check_bounds(node, loc, "the transfer's local side")
        if node.ext.base in self._symbols():
            self.check_bounds(node, ext, "the transfer's staging side")
        src, dst = (ext, loc) if node.direction == Direction.IN else (loc, ext)
        for p in self.pending.values():
            if any(_overlap(dst, w) or _overlap(dst, r) for w in p.writes for r in p.reads):
                self.fail(node, f"transfer of '{node.arg}' into {dst[0].value} [{dst[2]}, {dst[3]}) while "
                          f"{p.what} of '{p.arg}' is still in flight there")
            if any(_overlap(src, w) for w in p.writes):
                self.fail(node, f"transfer of '{node.arg}' out of {src[0].value} [{src[2]}, {src[3]}) while "
                          f"{p.what} of '{p.arg}' is still filling it")
        self.pending[event] = _Pending(node.arg, f"the {node.engine.value} transfer", (src,), (dst,))
        home = node.ext.base not in self._symbols()
        if node.direction == Direction.OUT and home:
            self.bytes[node.arg] = self.bytes.get(node.arg, 0) + size
            self.written.setdefault(node.arg, []).extend(
                (ext_lo + i * stride, ext_lo + i * stride + length) for i in range(max(1, size // max(1, length))))

    def _symbols(self) -> set:
        return {name for name, _ in self.s.symbols.values()}

    def wait(self, node, env: dict, event: tuple) -> None:
        if self.pending.pop(event, None) is None:
            self.fail(node, f"wait on event {event[0]} which holds no transfer")

    def compute(self, node, env: dict, cost: int) -> None:
        if cost < 0 and not names(node.cost) & self.cargs:  # C arguments: the simulator checks at run time
            # the model's error, not autotiler's: a Cost= that goes negative for this tiling's tiles
            raise ModelError(f"the Cost of basic kernel '{node.kernel}' evaluates to {cost} cycles on a call of "
                             f"this tiling ({node.location})", where=self.t.kernel.where, kernel=self.s.name,
                             hint="a Cost counts the cycles of one call: write it so that it stays 0 or more for "
                             "every tile size the call can see (e.g. \"W*H/ncores + 20\", not \"W - 100\")")
        for acc in node.accesses:
            span = self.region(acc.region, env)
            self.check_bounds(node, span, f"'{acc.arg}' as seen by {node.kernel}")
            for p in self.pending.values():
                if any(_overlap(span, w) for w in p.writes):
                    self.fail(node, f"{node.kernel} uses '{acc.arg}' at {span[0].value} [{span[2]}, {span[3]}) "
                              f"before {p.what} of '{p.arg}' filling it was waited")
                if acc.writes and any(_overlap(span, r) for r in p.reads):
                    self.fail(node, f"{node.kernel} may write '{acc.arg}' at {span[0].value} [{span[2]}, {span[3]}) "
                              f"while {p.what} of '{p.arg}' is still reading it")

    def key(self):
        return tuple(sorted((k, tuple(p.reads), tuple(p.writes)) for k, p in self.pending.items()))

    def figures(self) -> tuple:
        names = sorted(self.bytes)
        return (0, self.transfers, *(self.bytes[n] for n in names))

    def repeat(self, delta: tuple, reps: int) -> None:
        self.skipped = True
        self.transfers += reps * delta[1]
        for n, d in zip(sorted(self.bytes), delta[2:]):
            self.bytes[n] += reps * d

    def restore(self, key, delta: tuple) -> None:
        self.repeat(delta, 1)

    # -- coverage --------------------------------------------------------------------------------
    def check_end(self) -> None:
        if self.pending:
            event, p = next(iter(self.pending.items()))
            raise CodegenError(f"schedule verification failed: {p.what} of '{p.arg}' on {event[0]} is still pending "
                               "at the end of the kernel", kernel=self.s.name, arg=p.arg)
        for a in self.t.args:
            if not a.writes:
                continue
            need = _needed_ranges(a)
            total = sum(hi - lo for lo, hi in need)
            got = self.bytes.get(a.name, 0)
            if self.skipped:
                if got < total:
                    raise CodegenError(f"schedule verification failed: output '{a.name}' gets {got} bytes written "
                                       f"back, its data has {total}", kernel=self.s.name, arg=a.name)
                continue
            missing = _missing(need, self.written.get(a.name, []))
            if missing:
                lo, hi = missing[0]
                raise CodegenError(f"schedule verification failed: bytes [{lo}, {hi}) of output '{a.name}' are never "
                                   "written back", kernel=self.s.name, arg=a.name)
            extent = a.geom.l2_bytes
            for lo, hi in self.written.get(a.name, []):
                if lo < 0 or hi > extent:
                    raise CodegenError(f"schedule verification failed: a write-back of '{a.name}' covers "
                                       f"[{lo}, {hi}), outside its {extent} bytes", kernel=self.s.name, arg=a.name)


def _needed_ranges(a) -> list:
    """Byte ranges of an output's home that must be written: every unit of its non-tiled
    dimensions and of its plane, but for the lines (columns) of its tiled direction only the
    used ones (less what OBJ_CONSTRAINTS_DROP_REM drops). Independent of the tiling. Inner
    dimensions needed whole merge into one range, so a long column is one range, not a
    range per line."""
    t = a.geom.tile
    extents = []
    for d in a.dims:
        n = d.full
        if t is not None and d.space == t.space and not a.geom.kind.value == "dyntile":
            n = min(t.used, t.span - t.pad_before + t.overlap) if t.drop else t.used
        extents.append(n)
    dims = a.dims
    k = len(dims) - 1
    while k > 0 and extents[k] == dims[k].full and dims[k - 1].stride == dims[k].full * dims[k].stride:
        k -= 1
    length = extents[k] * dims[k].stride
    ranges = []
    for units in _product([range(n) for n in extents[:k]]):
        base = sum(u * d.stride for u, d in zip(units, dims))
        ranges.append((base * a.item, (base + length) * a.item))
    return ranges


def _product(ranges: list):
    if not ranges:
        yield ()
        return
    for u in ranges[0]:
        for rest in _product(ranges[1:]):
            yield (u, *rest)


def _missing(need: list, got: list) -> list:
    merged: list = []
    for lo, hi in sorted(got):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    starts = [m[0] for m in merged]
    out = []
    for lo, hi in need:
        i = bisect.bisect_right(starts, lo) - 1
        if i < 0 or merged[i][1] < hi:
            out.append((lo, hi))
    return out


def _fns(schedule: Schedule) -> dict:
    """Compiled offsets and sizes of every region of the schedule, by expression identity."""
    fns: dict = {}

    def visit(stmts):
        for s in stmts:
            for r in (getattr(s, "ext", None), getattr(s, "loc", None)):
                if r is not None:
                    fns[id(r.offset)] = compile_expr(r.offset)
                    fns[id(r.size)] = compile_expr(r.size)
            for e in (getattr(s, "stride", None), getattr(s, "length", None)):
                if e is not None:
                    fns[id(e)] = compile_expr(e)
            for acc in getattr(s, "accesses", ()):
                fns[id(acc.region.offset)] = compile_expr(acc.region.offset)
                fns[id(acc.region.size)] = compile_expr(acc.region.size)
            visit(getattr(s, "body", ()))
    visit(schedule.body)
    return fns


def verify(schedule: Schedule, tiling) -> None:
    """Check a schedule (see the module docstring); CodegenError on the first violation."""
    program = Program(schedule, periodic=True)
    checker = Checker(schedule, tiling, _fns(schedule))
    env = environment(schedule, [c.name for c in tiling.kernel.cargs], 8)
    iterations = prod(n for _, _, n in schedule.loops)
    Walker(program, checker, env, skip=iterations > FULL_WALK_LIMIT).run()
    checker.check_end()


__all__ = ["verify", "Checker", "FULL_WALK_LIMIT"]
