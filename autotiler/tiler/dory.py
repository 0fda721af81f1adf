"""DORY's L2->L1 conv tiling rule, applied to our candidate tilings (the ``"dory"`` objective).

DORY (pulp-platform/dory, ``dory/Hardware_targets/PULP/Common/Tiler/tiler_conv2d.py``,
``Tiler_Conv2D_PULP.get_tiling_conv2d_L2``) solves a CP model per layer (OR-tools, not CP-SAT)
over ``tile_n_in, tile_n_out, tile_h_*, tile_w_*``. It does not model time or traffic: it
maximises the L1 bytes the tile uses plus shape bonuses tuned for the pulp-nn kernels. Here the
same rule ranks the tilings our tiler can express; nothing is solved, every candidate of the
cheap objectives' grid is scored (:func:`dory_key`). Pure functions over a
:class:`~autotiler.tiler.tiling.KernelTiling`.

**Which kernels.** A kernel is *conv-like* when it has one written data argument (the output),
one read constant argument with the most items (the weights; other constants are biases) and a
read, non-constant data or O_BUFF argument (the input):

* ``"conv"``: input and output planes tiled along the same space (``CNN_ConvolutionPoolReLU``
  with ``KOP_CONV*``): the output-feature spaces are the output's non-tiled spaces, the
  reduction (input-feature) spaces the weights' spaces the output does not have;
* ``"depthwise"``: the same without reduction space (``KOP_CONV_DW*``: weights over the output's
  feature space, ``tile_n_in == tile_n_out`` by construction);
* ``"fc"``: a 1x1 output plane (``CNN_LinearReLU``): DORY tiles fully connected layers with the
  same conv2d tiler, no im2col, ``h = w = 1``.

Anything else (pooling, softmax, matrix add, user kernels) is *not conv-like*: DORY's conv rule
says nothing about it, and the objective maximises L1 use (then fewer iterations), the naive
reading of "DORY maximises L1 utilisation".

**Constraints** (``tiler_conv2d.py``, "CONSTRAINTS FOR BACKEND LIMITS"), mapped onto our spaces:

* standard conv and fc: ``solver.Add(tile_n_in == int(in_ch))``: every reduction space is one
  chunk (the D0 loop of a conv layer runs once; with ``ParallelFeatures 0`` its D0 is a fixed
  space of ``InFeat`` iterations and the constraint cannot hold unless ``InFeat == 1``);
* depthwise: ``tile_n_in == tile_n_out`` (always true here), and ``if inp_dim[0] <= 32 and
  inp_dim[1] <= 32``: the whole plane in one tile, else ``tile_w_in == inp_dim[1]``: full-width
  tiles;
* ``tile_n_out % int(8 / min(bits)) == 0``: a sub-byte rule, always true for our 8/16-bit data
  (DORY's kernels are 8-bit or less; for 16-bit data we apply the rule with 16-bit sizes);
* the geometric constraints (``tile_h_out * s == tile_h_in - (k - 1) + (s - 1)`` ...) hold by
  construction of our tiles.

**Capacity** (``constraint_all <= L1_memory``)::

    constraint_all = bias_memory + db*(in + out + weights) + im2col + 40,   db = 2

with ``in``/``out``/``weights`` our boxes of the input, output and weights (bytes), the whole
bias, ``im2col = 2 * CORES * k*k * tile_n_in`` (standard conv, ``CORES = 4`` in DORY's file),
``CORES * (k * (tile_n_in + p_top + p_bottom) + k)`` (depthwise), 0 (fc). ``L1_memory`` is
DORY's GAP8 L1: ``HW_description.json`` ``64000 - 3500 (core0 stack) - 7 * 3400 = 36700`` bytes;
we use ``min(model budget, 36700)`` (:func:`dory_l1`). A candidate *fits* when DORY's sum is
within that L1 and so is our real footprint (``KernelTiling.l1_bytes``, which includes buffers
our kernels need and DORY's do not: the output tile of a fused pooling, a DP convolution's
32-bit accumulators): a DORY tiling never gets more L1 than DORY has.
``db = 2`` is the tiler's default (``Tiler_PULP(..., double_buffering=2)``); DORY's GAP8
``HW_description.json`` at some commits sets ``double_buffering: 1`` with blocking DMA, not
modelled here: our generated code double-buffers every moving argument either way.

**Early exit.** DORY first checks the whole layer single-buffered (``buffer_total = weights +
bias + in + out + im2col <= L1_memory``) and then does not tile. Here: when the untiled layer fits
DORY's L1 that way, one-tile candidates (the promoted tiling first) come before every other.

**Objective** (``Maximize(obj_expr)``, "HEURISTICS ADDITION"), exactly DORY's terms. DORY's
"bonuses" are modulo expressions in the CP model, graded, not booleans: ``2000000 * ((tile_h_out
- 1) % 8)`` is 14e6 for a height multiple of 8, 12e6 for 7 mod 8, ... 0 for 1 mod 8. Standard
conv and fc::

    2e6*((h-1)%8) + 3e6*((w-1)%2) + 1e6*((n-1)%4) + 1e6*(w*h >= 16) + constraint_all + 1e5*n
    + 1e4*((C-1)%n) + 1e4*(((C-1)%n)%4) + 2e4*(((H-1)%h)%8) + 3e4*(((W-1)%w)%2)

depthwise::

    1e4*(n > 7) + 2e4*((n-1)%16) + 1e4*(h%4 == 0) + constraint_all + 1e3*w + 1e3*h
    + 1e2*((H-1)%h) + 1e2*((W-1)%w) + 1e2*(((C-1)%n) > 7) + 1e2*(((H-1)%h)%4)

with ``h``, ``w``, ``n`` the output tile's lines, columns and features (our output argument: for
a conv fused with a pooling, the pooled output tile) and ``H``, ``W``, ``C`` the layer's.

**No candidate satisfies DORY's constraints** (or none fits DORY's L1): DORY's solver would stop
("Conv2d ERROR: no L2-L1 tiling found ... Exiting"). We *fall back* rather than fail, so that the
layer still runs and can be compared: the candidates are ranked (1) early exit, (2) constraints
met and DORY's capacity met, by DORY's objective, (3) constraints violated but DORY's capacity
met, by DORY's objective, (4) the rest (model budget only), by L1 use. :func:`explain` says which
case the chosen tiling is in and why, and benches report it (``status`` ``"fallback"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Optional

from ..constants import Object_Type_T
from ..model.ir import SpaceKind
from .geometry import ArgKind
from .tiling import ArgTiling, KernelTiling

O = Object_Type_T

# GAP8 as DORY budgets it (dory/Hardware_targets/PULP/GAP8/HW_description.json)
DORY_GAP8_L1 = 64000
DORY_CORE0_STACK = 3500
DORY_CORE_STACK = 3400
DORY_L1 = DORY_GAP8_L1 - DORY_CORE0_STACK - 7 * DORY_CORE_STACK   # 36700, as tiler_conv2d.py computes L1_memory
DORY_CORES = 4            # tiler_conv2d.py: CORES = 4 (its im2col term)
DORY_DB = 2               # Tiler_PULP(..., double_buffering=2)
DORY_SLACK = 40           # constraint_all's "+ 40"

# Ranks of dory_key (smallest first)
EARLY_EXIT, MEETS, VIOLATES, OVER = 0, 1, 2, 3


@dataclass(frozen=True)
class ConvView:
    """A conv-like kernel's tiling seen as DORY's variables."""

    kind: str               # "conv", "depthwise" or "fc"
    inp: ArgTiling
    out: ArgTiling
    weights: ArgTiling
    biases: tuple
    others: tuple           # arguments of no DORY role (our kernels' L1 buffers)
    feat_spaces: tuple      # output-feature spaces
    red_spaces: tuple       # reduction (input-feature) spaces
    n_out: int              # tile_n_out (standard chunk)
    n_in: int               # tile_n_in (fc: bytes of the input box)
    c_out: int              # the layer's output features
    c_in: int
    h: int                  # tile_h_out, tile_w_out (standard tile)
    w: int
    H: int                  # the layer's output height and width
    W: int
    in_h: int               # the layer's input height and width
    in_w: int
    k2: int                 # filter taps (k*k)
    k: int
    pad_tb: int             # input padding, top + bottom
    bits: int


def _space(a: ArgTiling) -> set:
    s = {r.space for r in a.geom.refs}
    if a.geom.tiled_space is not None and a.geom.tile is not None:
        s.add(a.geom.tiled_space)
    return s


def _chunk(t: KernelTiling, spaces) -> int:
    """Features per chunk over ``spaces``: a parametric loop's standard chunk, 1 for a fixed
    space (one feature per iteration), the whole extent of a tiled one run once."""
    out = 1
    for sp in spaces:
        lp = t.loop(sp)
        if lp is None:
            continue
        if lp.kind == SpaceKind.PARAMETRIC:
            out *= min(lp.std, lp.dim)
        elif lp.kind == SpaceKind.TILED:
            out *= 1 if lp.count > 1 else max(1, lp.dim)
    return out


def _dim(t: KernelTiling, spaces) -> int:
    return prod(s.dim for s in t.geom.spaces if s.space in spaces) if spaces else 1


def conv_view(t: KernelTiling) -> Optional[ConvView]:
    """DORY's view of a conv-like kernel's tiling, or None (see the module's documentation)."""
    data = [a for a in t.args if a.kind == ArgKind.DATA]
    outs = [a for a in data if a.writes]
    consts = [a for a in t.args if a.reads and a.decl.has(O.O_CONST)]
    inps = [a for a in t.args if a.kind in (ArgKind.DATA, ArgKind.BUFFER) and a.reads and not a.writes
            and not a.decl.has(O.O_CONST)]
    if len(outs) != 1 or not consts or not inps:
        return None
    out = outs[0]
    weights = max(consts, key=lambda a: (a.geom.l2_bytes, len(a.geom.refs)))
    inp = max(inps, key=lambda a: a.geom.l2_bytes)
    biases = tuple(a for a in consts if a is not weights)
    others = tuple(a for a in t.args if a is not out and a is not weights and a is not inp and a not in biases)
    feat = tuple(r.space for r in out.geom.refs)
    red = tuple(sp for sp in sorted(_space(weights) | _space(inp), key=int)
                if sp not in _space(out) and any(s.space == sp for s in t.geom.spaces))
    plane_out = out.geom.w * out.geom.h
    if plane_out == 1 and out.geom.tile is None:
        kind = "fc"
    elif out.geom.tile is not None and inp.geom.tile is not None and out.geom.tiled_space == inp.geom.tiled_space:
        kind = "depthwise" if not red and set(feat) <= _space(inp) else "conv"
    else:
        return None
    if kind == "fc":
        h = w = 1
    else:
        h, w = out.tile_h(), out.tile_w()
    item = inp.item
    k2 = max(1, weights.item // item) if kind != "fc" else 1
    k = max(1, round(k2 ** 0.5))
    pad = inp.decl.pad_tile if kind != "fc" else None
    if kind == "fc":    # the input vector, in bytes (its items may be whole vectors: O_BUFF|O_NTILED)
        n_in, c_in = inp.box_bytes_max, inp.geom.l2_bytes
    elif kind == "depthwise":
        n_in, c_in = _chunk(t, feat), _dim(t, feat)
    else:
        n_in, c_in = _chunk(t, red), _dim(t, red)
    return ConvView(kind, inp, out, weights, biases, others, feat, red, n_out=_chunk(t, feat), n_in=n_in,
                    c_out=_dim(t, feat), c_in=c_in, h=h, w=w, H=out.geom.h if kind != "fc" else 1,
                    W=out.geom.w if kind != "fc" else 1, in_h=inp.geom.h, in_w=inp.geom.w, k2=k2, k=k,
                    pad_tb=(pad.top + pad.bottom) if pad is not None else 0, bits=8 * item)


def dory_l1(budget: int) -> int:
    """The L1 DORY's rule may use: DORY's GAP8 L1 (36 700 B), or less when the model's budget is."""
    return min(budget, DORY_L1)


def _sub(v: ConvView) -> int:
    """int(8 / min(bits)) of DORY's sub-byte rules, 1 for our 8- and 16-bit data."""
    return max(1, 8 // v.bits)


def im2col_bytes(v: ConvView) -> int:
    if v.kind == "fc":
        return 0
    if v.kind == "conv":
        return 2 * DORY_CORES * v.k2 * v.n_in
    return DORY_CORES * (v.k * (v.n_in + v.pad_tb) + v.k) * _sub(v)


def dory_bytes(t: KernelTiling, v: Optional[ConvView] = None, db: int = DORY_DB) -> int:
    """DORY's ``constraint_all`` for this tiling: whole bias + db * (input, output, weights
    boxes) + im2col + 40 bytes."""
    v = v or conv_view(t)
    bias = sum(a.geom.l2_bytes for a in v.biases)
    boxes = v.inp.box_bytes_max + v.out.box_bytes_max + v.weights.box_bytes_max
    return bias + db * boxes + im2col_bytes(v) + DORY_SLACK


def extra_bytes(v: ConvView) -> int:
    """L1 our kernels need and DORY's do not (arguments of no DORY role)."""
    return sum(a.l1_bytes for a in v.others)


def whole_bytes(t: KernelTiling, v: ConvView) -> int:
    """DORY's early-exit ``buffer_total`` of the untiled layer (single buffered)."""
    bias = sum(a.geom.l2_bytes for a in v.biases)
    if v.kind == "conv":
        im2col = 2 * DORY_CORES * v.k2 * v.c_in * v.bits // 8
    elif v.kind == "depthwise":
        im2col = DORY_CORES * (v.k * (v.in_h + v.pad_tb) + v.k) * _sub(v)
    else:
        im2col = 0
    return v.inp.geom.l2_bytes + v.out.geom.l2_bytes + v.weights.geom.l2_bytes + bias + im2col


def violations(t: KernelTiling, v: Optional[ConvView] = None) -> list:
    """DORY's constraints this tiling breaks (empty: none), as sentences."""
    v = v or conv_view(t)
    out = []
    if v.kind in ("conv", "fc"):
        split = [sp for sp in v.red_spaces if t.count(sp) > 1]
        if split:
            out.append(f"input features split at L2->L1 ({v.n_in} of {v.c_in} per chunk; DORY: tile_n_in == in_ch)")
    if v.kind == "depthwise":
        odims = v.out.dims
        if v.in_h <= 32 and v.in_w <= 32:
            if any(d.moving for d in odims[-2:]):
                out.append(f"a {v.in_w}x{v.in_h} input tiled (DORY: depth wise inputs up to 32x32 in one tile)")
        elif odims[-1].moving:
            out.append("depth wise tiles narrower than the plane (DORY: tile_w_in == inp_dim[1])")
    if v.n_out % _sub(v):
        out.append(f"tile_n_out {v.n_out} not a multiple of {_sub(v)}")
    return out


def score(t: KernelTiling, v: Optional[ConvView] = None) -> int:
    """DORY's objective (``obj_expr``, maximised) with its exact weights."""
    v = v or conv_view(t)
    h, w, n, H, W, C = v.h, v.w, v.n_out, v.H, v.W, v.c_out
    total = dory_bytes(t, v)
    if v.kind == "depthwise":
        return (10000 * (n > 7) + 20000 * ((n - 1) % 16) + 10000 * (h % 4 == 0) + total
                + 1000 * w + 1000 * h + 100 * ((H - 1) % h) + 100 * ((W - 1) % w)
                + 100 * (((C - 1) % n) > 7) + 100 * (((H - 1) % h) % 4))
    return (2000000 * ((h - 1) % 8) + 3000000 * ((w - 1) % 2) + 1000000 * ((n - 1) % 4) + 1000000 * (w * h >= 16)
            + total + 100000 * n
            + 10000 * ((C - 1) % n) + 10000 * (((C - 1) % n) % 4) + 20000 * (((H - 1) % h) % 8)
            + 30000 * (((W - 1) % w) % 2))


def fits(t: KernelTiling, budget: int, v: Optional[ConvView] = None) -> bool:
    """DORY's capacity rule, and our real footprint, within :func:`dory_l1`."""
    v = v or conv_view(t)
    cap = dory_l1(budget)
    return dory_bytes(t, v) <= cap and t.l1_bytes <= cap


def early_exit(t: KernelTiling, budget: int, v: Optional[ConvView] = None) -> bool:
    """DORY would not tile this layer (its whole footprint fits, single buffered) and ``t`` is
    one tile that fits :func:`dory_l1`."""
    v = v or conv_view(t)
    cap = dory_l1(budget)
    return t.iterations == 1 and whole_bytes(t, v) <= cap and t.l1_bytes <= cap


def rank(t: KernelTiling, budget: int) -> int:
    """EARLY_EXIT, MEETS, VIOLATES (DORY's capacity met, a constraint broken) or OVER (DORY's
    L1 exceeded); OVER too for a kernel that is not conv-like."""
    v = conv_view(t)
    if v is None:
        return OVER
    if early_exit(t, budget, v):
        return EARLY_EXIT
    if not fits(t, budget, v):
        return OVER
    return VIOLATES if violations(t, v) else MEETS


def dory_key(t: KernelTiling, options) -> tuple:
    """The ``"dory"`` objective's sort key (smallest is best): rank, then DORY's objective
    (maximised); in the last rank, and for kernels that are not conv-like, L1 use (maximised)."""
    budget = options.budget
    v = conv_view(t)
    if v is None:
        return (OVER, -t.l1_bytes, t.iterations, t.l2_bytes)
    r = rank(t, budget)
    if r == OVER:
        return (r, -t.l1_bytes, t.iterations, t.l2_bytes)
    return (r, -score(t, v), not t.promoted, t.iterations, t.l2_bytes)


def explain(t: KernelTiling, budget: int) -> dict:
    """What the rule saw in a (chosen) tiling: ``status`` ``"dory"`` (DORY's rule applied,
    early exit or not), ``"fallback"`` (no candidate met DORY's constraints or its L1: the
    reason given), ``"not conv"`` (maximise L1 use); DORY's variables, bytes and score."""
    v = conv_view(t)
    if v is None:
        return {"status": "not conv", "rule": "maximise L1 use (DORY's conv rule does not apply)",
                "l1_bytes": t.l1_bytes}
    r = rank(t, budget)
    info = {"kind": v.kind, "tile_n_out": v.n_out, "tile_n_in": v.n_in, "tile_h_out": v.h, "tile_w_out": v.w,
            "dory_bytes": dory_bytes(t, v), "extra_bytes": extra_bytes(v), "dory_l1": dory_l1(budget),
            "score": score(t, v), "early_exit": r == EARLY_EXIT}
    if r in (EARLY_EXIT, MEETS):
        return {"status": "dory", **info}
    why = violations(t, v)
    if r == OVER:
        why = why + [f"DORY's L1 ({dory_l1(budget)} B) exceeded: constraint_all {info['dory_bytes']} B, "
                     f"real footprint {t.l1_bytes} B"]
    return {"status": "fallback", "reason": "no candidate meets DORY's rule: " + "; ".join(why), **info}


__all__ = ["ConvView", "conv_view", "dory_l1", "dory_bytes", "extra_bytes", "whole_bytes", "violations", "score",
           "fits", "early_exit", "rank", "dory_key", "explain", "DORY_L1", "DORY_CORES", "DORY_DB"]
