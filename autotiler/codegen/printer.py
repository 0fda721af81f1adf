"""Print a schedule as the C body of a user kernel, against the original's runtime macros.

Every statement of the schedule IR maps to one line (or one block) of C: transfers to
``AT_L2_COPY``/``AT_L2_COPY2D`` (cluster DMA) and ``AT_<DEV>_CL_COPY``/``_COPY2D`` (micro-DMA),
waits to ``AT_L2_WAIT``/``AT_<DEV>_CL_WAIT``, parallel calls to the argument struct's fields,
``AT_SIM_COMPUTE`` (the simulator's compute time; empty on a GAP) and ``AT_FORK``/``__CALL``,
loops to ``for`` (a single iteration to a plain block). The printer adds nothing the schedule
does not say.
"""

from __future__ import annotations

from ..schedule.expr import Expr, plus_c, to_c
from ..schedule.ir import Comment, Compute, Copy, Direction, Engine, If, Let, Level, Loop, Region, Schedule, Wait

INDENT = "\t"


class Printer:
    def __init__(self, schedule: Schedule, family: str = "HYPERRAM", device: str = "HyperRam"):
        self.s = schedule
        self.family = family
        self.device = device
        self.symbols = {name for name, _ in schedule.symbols.values()}

    # -- pieces ------------------------------------------------------------------------------------
    def address(self, r: Region) -> str:
        base = r.base if r.base in self.symbols else f"(char *) {r.base}"
        return base if to_c(r.offset) == "0" else plus_c(base, r.offset)

    def event(self, e) -> str:
        return f"&{e.name}" if e.index is None else f"&{e.name}[{to_c(e.index)}]"

    def copy(self, c: Copy) -> str:
        size = to_c(c.size)
        if c.engine == Engine.CLUSTER:
            ext = f"(AT_L2_EXT_ADDR_TYPE) ({self.address(c.ext)})"
            loc = f"(AT_L2_INT_ADDR_TYPE) ({self.address(c.loc)})"
            d = "AT_L2_EXT2LOC" if c.direction == Direction.IN else "AT_L2_LOC2EXT"
            if c.length is not None:
                text = (f"AT_L2_COPY2D(0, {ext}, {loc}, {size}, {to_c(c.stride)}, {to_c(c.length)}, {d}, "
                        f"{self.event(c.event)});")
            else:
                text = f"AT_L2_COPY(0, {ext}, {loc}, {size}, {d}, {self.event(c.event)});"
        else:
            f, dev = (c.device.family, c.device.symbol) if c.device else (self.family, self.device)
            ext = f"(AT_{f}_EXT_ADDR_TYPE) ({self.address(c.ext)})"
            loc = f"(AT_{f}_INT_ADDR_TYPE) ({self.address(c.loc)})"
            d = f"AT_{f}_EXT2LOC" if c.direction == Direction.IN else f"AT_{f}_LOC2EXT"
            if c.length is not None:
                text = (f"AT_{f}_CL_COPY2D(&{dev}, {ext}, {loc}, {size}, {to_c(c.stride)}, {to_c(c.length)}, "
                        f"{d}, {self.event(c.event)});")
            else:
                text = f"AT_{f}_CL_COPY(&{dev}, {ext}, {loc}, {size}, {d}, {self.event(c.event)});"
        return _commented(text, c.comment)

    def wait(self, w: Wait) -> str:
        if w.engine == Engine.CLUSTER:
            text = f"AT_L2_WAIT(0, {self.event(w.event)});"
        else:
            f, dev = (w.device.family, w.device.symbol) if w.device else (self.family, self.device)
            text = f"AT_{f}_CL_WAIT(&{dev}, {self.event(w.event)});"
        return _commented(text, w.comment)

    def compute(self, c: Compute) -> list:
        lines = [f"/* {c.comment} */"] if c.comment else []
        cost = f"AT_SIM_COMPUTE({to_c(c.cost)});"
        if c.struct is None:
            args = ", ".join(to_c(f.value) for f in c.fields)
            return lines + [cost, f"{c.kernel}({args});"]
        lines += [f"{c.struct}->{f.formal} = {to_c(f.value)};" for f in c.fields if not f.ignored]
        lines.append(cost)
        if c.parallel:
            lines += [f"AT_FORK(gap_ncore(), (void *) {c.kernel}, (void *) {c.struct});",
                      f"__CALL({c.kernel}, {c.struct});"]
        else:
            lines.append(f"{c.kernel}({c.struct});")
        return lines

    # -- statements -------------------------------------------------------------------------------
    def block(self, stmts, depth: int) -> list:
        out = []
        for s in stmts:
            out += self.stmt(s, depth)
        return out

    def stmt(self, s, depth: int) -> list:
        ind = INDENT * depth
        if isinstance(s, Comment):
            return [f"{ind}/* {s.text} */"]
        if isinstance(s, Let):
            return [ind + _commented(f"int {s.name} = {to_c(s.expr)};", s.comment)]
        if isinstance(s, Copy):
            return [ind + self.copy(s)]
        if isinstance(s, Wait):
            return [ind + self.wait(s)]
        if isinstance(s, Compute):
            return [ind + line for line in self.compute(s)]
        if isinstance(s, If):
            return self.if_(s, depth)
        if isinstance(s, Loop):
            return self.loop(s, depth)
        raise TypeError(f"unknown schedule statement {s!r}")

    def if_(self, s: If, depth: int) -> list:
        ind = INDENT * depth
        cond = to_c(s.cond)
        body = self.block(s.body, depth + 1)
        note = f" /* {s.comment} */" if s.comment else ""
        if len(body) == 1 and not isinstance(s.body[0], (If, Loop, Compute)):
            return [f"{ind}if ({cond}){note}", body[0]]
        return [f"{ind}if ({cond}) {{{note}"] + body + [f"{ind}}}"]

    def loop(self, s: Loop, depth: int) -> list:
        ind = INDENT * depth
        body = self.block(s.body, depth + 1)
        if s.extent == 1 and s.bound is None:
            return [f"{ind}{{ /* {s.comment} */"] + body + [f"{ind}}}"]
        incr = f"{s.var}++" + (f", {s.total}++" if s.total else "")
        return [f"{ind}for ({s.var}=0; {s.var}<{s.bound or s.extent}; {incr}) {{ /* {s.comment} */"] + body + \
            [f"{ind}}}"]

    # -- the whole body ---------------------------------------------------------------------------
    def declarations(self) -> list:
        out = []
        by_type: dict = {}
        for ctype, name, length in self.s.events:
            by_type.setdefault(ctype, []).append(f"{name}[{length}]" if length else name)
        for ctype, names_ in by_type.items():
            what = "micro-DMA event per L2 staging slot" if "CL_EVENT" in ctype else "DMA event per argument and direction"
            out.append(f"{ctype} {', '.join(names_)}; /* one {what} */")
        loops = [var for _, var, n in self.s.loops if n > 1]
        if loops:
            out.append(f"int {', '.join(loops)};")
        totals = sorted(self.s.totals)
        if totals:
            out.append(f"int {', '.join(f'{t} = 0' for t in totals)}; /* iterations so far: buffer parity, staging slot */")
        out += [f"{ctype} S_{var}, *{var} = &S_{var};" for ctype, var in self.s.structs]
        return out

    def invariants(self) -> list:
        return [f"{var}->{f.formal} = {to_c(f.value)};" for var, f in self.s.invariant]

    def body(self) -> list:
        lines = [INDENT + line for line in self.declarations()]
        inv = self.invariants()
        if inv:
            lines += ["", f"{INDENT}/* Invariant fields of the basic kernels' argument structs: set once */"]
            lines += [INDENT + line for line in inv]
        lines.append("")
        lines += self.block(self.s.body, 1)
        return lines


def _commented(text: str, comment: str) -> str:
    return f"{text} /* {comment} */" if comment else text


def c_expr(e: Expr) -> str:
    return to_c(e)


__all__ = ["Printer", "c_expr", "Level"]
