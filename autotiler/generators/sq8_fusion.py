"""Fused layers chosen by the objective, not by hand (issue 26 §2): which consecutive layers of a graph of
SQ8 generator calls become one ``CNN_FusedConvAct_SQ8`` user kernel. Used by ``autotiler import`` on its
lowered graph (:mod:`autotiler.importers.lower`) and by a model script on its open graph
(:func:`CNN_FuseGraph_SQ8`).

A graph here is anything with ``layers`` (:class:`Layer`: one generator call and its node, in execution
order), ``consts`` (:class:`Const`) and ``locals`` ((symbol, bytes) of the intermediate buffers).

**What may fuse.** A *link* joins layer i and layer i+1 (execution order) when layer i is a
convolution or depth-wise convolution (``CNN_ConvolutionPoolAct_SQ8`` without pooling or dilation)
whose output is a local buffer read by layer i+1 alone, and layer i+1 is such a convolution too, or
the ADD (``CNN_MatAddAct_SQ8``) of that output with a buffer computed before the group (MobileNet v2's
inverted residual: the block's input); an ADD ends a group. A group is a run of linked layers; its
intermediates live in L1 only (:mod:`autotiler.generators.sq8_gen_tflm_fused`).

**The objective**, lexicographic:

1. *peak L2* of the activations: the liveness lower bound of the graph's local buffers (which the
   graph planner reaches) under a budget -- with ``fit`` (the default), the L2 budget, each node's
   constants counted with the activations alive at it (a graph that fits layer by layer is not fused for
   memory; one that does not is fused until it fits, rather than spilled to L3, and no fusion for cycles
   takes it above), or ``--fusion-l2 B`` (the activations alone); with ``min``, as low as fusion takes it;
2. *predicted cycles*: a link is then kept when the fused kernel's predicted cycles (the tiler's, on
   the platform and L1 budget of the import) are lower than those of its two sides apart.

The memory step is greedy: each round merges the link (or, when no single link helps, the pair of
links) that lowers the peak most, or failing that leaves fewer layers at the peak; a group whose fused
kernel finds no tiling in L1 is never formed. ``--fuse NAME`` forces the link after layer NAME,
``--no-fuse NAME`` forbids it; ``--fusion none`` fuses nothing. Each kept link records why.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..api import AddNode, AT_SetKernelCtrl, Bindings, GNodeArg, SetL1MemorySize
from ..constants import AT_GraphCtrl_T, GraghNodeArgT, KernelOper_T
from ..errors import AutoTilerError, ModelError
from ..graph.lower import symbol_sizes
from ..graph.plan import Buffer, live_bytes, lower_bound
from ..model.graph import GraphOptions, NodeArgForm
from ..model.ir import caller_where
from ..model.session import Model, current_model
from ..platforms import get_platform
from . import sq8_generators as G
from .cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from .sq8_gen_tflm_fused import CNN_FusedConv
from .sq8_library import LoadCNN_SQ8_Library


class Sym(str):
    """An identifier of the model API (``KOP_CONV``, the Ctrl variable): printed bare in the script."""


CTRL = Sym("TFLM_CTRL")   # the script's Ctrl with SCALE_DATASIZE 4


@dataclass(frozen=True)
class Const:
    """A constant of the graph: its C symbol, C element type and bytes (little endian)."""

    symbol: str
    ctype: str                       # "signed char" or "int"
    data: np.ndarray = field(compare=False, repr=False)

    @property
    def bits(self) -> int:
        return 32 if self.ctype == "int" else 8


@dataclass(frozen=True)
class Layer:
    """One SQ8 generator call and its graph node: ``generator(name, *args)`` and ``AddNode(name,
    bindings)``, bindings (``"in"``/``"out"``, symbol, user kernel argument) in the user kernel's argument order."""

    name: str
    generator: str
    args: tuple
    bindings: Tuple[Tuple[str, str, str], ...]
    source: str                      # the operator it lowers ("operator 3 (CONV_2D)")
    kind: str                        # TFLite operator name
    macs: int = 0


MODES = ("fit", "min", "none")
CONV = "CNN_ConvolutionPoolAct_SQ8"
ADD = "CNN_MatAddAct_SQ8"
LAYER_INDENT = len("    CNN_FusedConvAct_SQ8(") + 4
PAIR_SPAN = 6           # a pair of links tried together lies within this many layers


class FusedLayersArg(Sym):
    """A fused layer's ``CNN_FusedLayers(...)`` argument: printed in the model script as that call (one
    layer per line, under the call's other arguments), and keeping each layer's CNN_FusedConv arguments
    (``specs``) for the generator."""

    def __new__(cls, specs: tuple):
        body = "".join(f"\n{' ' * LAYER_INDENT}CNN_FusedConv({', '.join(str(v) for v in spec)})," for spec in specs)
        arg = super().__new__(cls, f"CNN_FusedLayers({len(specs)},{body[:-1]})")
        arg.specs = tuple(specs)
        return arg

    def __getnewargs__(self):
        return (self.specs,)


@dataclass(frozen=True)
class Fusion:
    """A fused group in the report: its layers, the fused kernel, why it was kept, and figures."""

    name: str
    layers: Tuple[str, ...]
    reason: str                 # "memory", "cycles" or "forced"
    detail: str

    def to_json(self) -> dict:
        return {"name": self.name, "layers": list(self.layers), "reason": self.reason, "detail": self.detail}


# ---------------------------------------------------------------------------------------------
# Layers and links


def _conv_args(layer: Layer) -> Optional[tuple]:
    """(cin, cout, w, h, oper, (fx, fy), (sx, sy), pad, act) of a fusable convolution, else None."""
    if layer.generator != CONV:
        return None
    (_, _, _, cin, cout, w, h, oper, fx, fy, dx, dy, sx, sy, pad, pool, *_, act) = layer.args
    if pool != "KOP_NONE" or (dx, dy) != (1, 1):
        return None
    return cin, cout, w, h, oper, (fx, fy), (sx, sy), pad, act


def _bound(layer: Layer, arg: str) -> str:
    return next(s for _, s, a in layer.bindings if a == arg)


def _readers(layers: Sequence[Layer]) -> Dict[str, List[int]]:
    out: Dict[str, List[int]] = {}
    for i, layer in enumerate(layers):
        for d, s, _ in layer.bindings:
            if d == "in":
                out.setdefault(s, []).append(i)
    return out


def _link_problem(lowered, i: int, readers: Dict[str, List[int]]) -> Optional[str]:
    """Why layers i and i+1 cannot be in one fused kernel (None: they can)."""
    layers, locals_ = lowered.layers, dict(lowered.locals)
    a, b = layers[i], layers[i + 1]
    if _conv_args(a) is None:
        return f"{a.name} is not a convolution without pooling or dilation"
    out = _bound(a, "Out")
    if out not in locals_:
        return f"{a.name}'s output {out} is a graph output"
    if readers.get(out, []) != [i + 1]:
        return f"{a.name}'s output {out} is read by other layers too"
    if _conv_args(b) is not None:
        (_, fy), (_, sy) = _conv_args(b)[5], _conv_args(b)[6]
        if fy < sy:
            return f"{b.name}'s stride {sy} exceeds its filter {fy} along the lines: its input's tiles would leave gaps"
        return None if _bound(b, "In") == out else f"{b.name} does not read {out} as its input"
    if b.generator == ADD and b.args[-2] == "KOP_MATADD":
        return None
    return f"{b.name} is neither a convolution nor an ADD"


def _residual(layers: Sequence[Layer], group: Tuple[int, ...]) -> Optional[str]:
    """The residual of a group ending with an ADD (its other operand), else None."""
    last = layers[group[-1]]
    if last.generator != ADD:
        return None
    chain_out = _bound(layers[group[-2]], "Out")
    return next(s for _, s, a in last.bindings if a in ("In1", "In2") and s != chain_out)


def _valid_group(layers: Sequence[Layer], group: Tuple[int, ...]) -> bool:
    """An ADD only ends a group of convolutions, and its residual is not computed inside it."""
    if any(layers[i].generator == ADD for i in group[:-1]):
        return False
    if layers[group[0]].generator == ADD:
        return len(group) == 1
    res = _residual(layers, group)
    return res is None or all(_bound(layers[i], "Out") != res for i in group[:-1])


# ---------------------------------------------------------------------------------------------
# Groups: peak L2 and the fused layer


def _groups(n: int, merged: frozenset) -> List[Tuple[int, ...]]:
    """Layers 0..n-1 cut where a link is not merged."""
    out, cur = [], [0]
    for i in range(1, n):
        if i - 1 in merged:
            cur.append(i)
        else:
            out.append(tuple(cur))
            cur = [i]
    out.append(tuple(cur))
    return out


def _internal(lowered, groups: Sequence[Tuple[int, ...]]) -> set:
    """The buffers a fused group keeps in L1: every output of its layers but the last's."""
    return {_bound(lowered.layers[i], "Out") for g in groups for i in g[:-1]}


def _buffers(lowered, groups: Sequence[Tuple[int, ...]], consts: bool = False) -> List[Buffer]:
    """The local buffers of the graph with these groups as nodes (internal ones gone): each lives from
    the first node binding it (its writer) to the last."""
    sizes = dict(lowered.locals)
    internal = _internal(lowered, groups)
    first: Dict[str, int] = {}
    last: Dict[str, int] = {}
    for k, g in enumerate(groups):
        for i in g:
            for _, s, _ in lowered.layers[i].bindings:
                if s in sizes and s not in internal:
                    first.setdefault(s, k)
                    last[s] = k
    out = [Buffer(s, sizes[s], first[s], last[s]) for s in first]
    if consts:      # each node's constants, staged into L2 while it runs when L2 cannot keep them all
        nbytes = {c.symbol: c.data.nbytes for c in lowered.consts}
        for k, g in enumerate(groups):
            used = {s for i in g for d, s, _ in lowered.layers[i].bindings if s in nbytes}
            out.append(Buffer(f"_consts_{k}", sum(nbytes[s] for s in used), k, k))
    return out


def _profile(lowered, merged: frozenset, consts: bool = False) -> Tuple[int, int]:
    """(peak L2 of the activations (with ``consts``, plus each node's constants), how many nodes reach it)."""
    live = live_bytes(_buffers(lowered, _groups(len(lowered.layers), merged), consts))
    peak = max(live, default=0)
    return peak, sum(1 for v in live if v == peak)


def peak_l2(lowered) -> int:
    """The liveness lower bound of a lowered graph's local buffers (one node per layer)."""
    return lower_bound(_buffers(lowered, [(i,) for i in range(len(lowered.layers))]))


def _spec(layer: Layer) -> tuple:
    cin, cout, w, h, oper, (fx, fy), (sx, sy), pad, act = _conv_args(layer)
    return oper, cout, fx, fy, sx, sy, pad, act


def fused_layer(lowered, group: Tuple[int, ...]) -> Layer:
    """The CNN_FusedConvAct_SQ8 layer of a group."""
    layers = lowered.layers
    res = _residual(layers, group)
    convs = group[:-1] if res is not None else group
    first = layers[convs[0]]
    cin, _, w, h, *_ = _conv_args(first)
    bindings = [("in", _bound(first, "In"), "In")]
    for k, i in enumerate(convs):
        for arg in ("Filter", "Bias", "Scale", "ScaleN", "Infos"):
            bindings.append(("in", _bound(layers[i], arg), f"{arg}{k}"))
    add_oper, add_act, res_first = Sym("KOP_NONE"), Sym("KOP_NONE"), 0
    if res is not None:
        add = layers[group[-1]]
        bindings += [("in", res, "Res"), ("in", _bound(add, "Infos"), "AddInfos")]
        add_oper, add_act = Sym("KOP_MATADD"), Sym(add.args[-1])
        res_first = int(_bound(add, "In1") == res)     # the ADD's Infos name its operands in its order
    bindings.append(("out", _bound(layers[group[-1]], "Out"), "Out"))
    names = [layers[i].name for i in group]
    layer = Layer(f"{names[0]}_F{len(group)}", "CNN_FusedConvAct_SQ8",
                    (CTRL, cin, w, h, FusedLayersArg(tuple(_spec(layers[i]) for i in convs)), add_oper, add_act,
                     res_first),
                    tuple(bindings), f"{layers[group[0]].source} .. {layers[group[-1]].source}",
                    "+".join(layers[i].kind for i in group), sum(layers[i].macs for i in group))
    return layer


# ---------------------------------------------------------------------------------------------
# Predicted cycles: each candidate kernel generated alone on the import's platform and L1


class _Tiler:
    """Predicted cycles of a group's kernel (None: no tiling fits), cached."""

    def __init__(self, lowered, platform: str, l1: int):
        self.lowered, self.platform, self.l1 = lowered, get_platform(platform), l1
        self.memo: Dict[Tuple[int, ...], Optional[int]] = {}

    def cycles(self, group: Tuple[int, ...]) -> Optional[int]:
        if group not in self.memo:
            layer = (self.lowered.layers[group[0]] if len(group) == 1 else
                     fused_layer(self.lowered, group))
            self.memo[group] = self._generate(layer)
        return self.memo[group]

    def _generate(self, layer: Layer) -> Optional[int]:
        with Model(self.platform) as m:
            LoadCNN_SQ8_Library()
            SetL1MemorySize(self.l1)
            AT_SetKernelCtrl(AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR, 0)
            try:
                ok = getattr(G, layer.generator)(layer.name, *(_value(v) for v in layer.args))
            except AutoTilerError:
                return None
            return m.tilings[layer.name].predicted.cycles if ok else None


def _ctrl():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    return ctrl


def _value(v):
    """A script argument as the generator takes it (Sym: a KOP name, the Ctrl, the fused layers)."""
    if not isinstance(v, Sym):
        return v
    if v == CTRL:
        return _ctrl()
    if isinstance(v, FusedLayersArg):
        return tuple(CNN_FusedConv(*(_value(x) for x in spec)) for spec in v.specs)
    return KernelOper_T[v]


# ---------------------------------------------------------------------------------------------
# The choice


@dataclass
class _Search:
    lowered: object              # the graph (layers, consts, locals)
    allowed: frozenset          # links that may merge
    tiler: _Tiler
    merged: frozenset = frozenset()
    consts: bool = False        # fit to the L2 budget: a node's constants count too

    def profile(self, merged: frozenset) -> Tuple[int, int]:
        return _profile(self.lowered, merged, self.consts)

    def feasible(self, merged: frozenset) -> bool:
        n = len(self.lowered.layers)
        for g in _groups(n, merged):
            if len(g) > 1 and (not _valid_group(self.lowered.layers, g) or self.tiler.cycles(g) is None):
                return False
        return True

    def memory_round(self, target: int) -> Optional[frozenset]:
        """The best set of one (else two) more links lowering (peak, nodes at peak), feasible."""
        base = self.profile(self.merged)
        if base[0] <= target:
            return None
        free = sorted(self.allowed - self.merged)
        for size in (1, 2):
            moves = [frozenset(c) for c in combinations(free, size) if max(c) - min(c) <= PAIR_SPAN]
            scored = sorted((self.profile(self.merged | m), sorted(m), m) for m in moves)
            for score, _, m in scored:
                if score >= base:
                    break
                if self.feasible(self.merged | m):
                    return m
        return None


def _links(lowered) -> Dict[int, Optional[str]]:
    readers = _readers(lowered.layers)
    return {i: _link_problem(lowered, i, readers) for i in range(len(lowered.layers) - 1)}


@dataclass(frozen=True)
class Controls:
    """How the caller names the controls in its errors (the import's options, a script's arguments) and
    the error it raises: ``fail(message, hint)``."""

    mode: str = "Mode"
    fuse: str = "Fuse"
    no_fuse: str = "NoFuse"
    l1: str = "SetL1MemorySize"
    fail: Optional[Callable[[str, str], None]] = None

    def error(self, message: str, hint: str):
        if self.fail is not None:
            self.fail(message, hint)
        raise ModelError(message, hint=hint)


def _by_name(lowered, names: Sequence[str], what: str, ctl: Controls) -> List[int]:
    index = {layer.name: i for i, layer in enumerate(lowered.layers)}
    out = []
    for name in names:
        if name not in index:
            ctl.error(f"{what} {name}: no layer has that name",
                      "layer names: " + ", ".join(layer.name for layer in lowered.layers[:12])
                      + (", ..." if len(lowered.layers) > 12 else ""))
        out.append(index[name])
    return out


def choose(lowered, platform: str, l1: int, l2: int, mode: str = "fit", force: Sequence[str] = (),
           forbid: Sequence[str] = (), target: Optional[int] = None, cycles: bool = True,
           ctl: Controls = Controls()) -> Tuple[frozenset, List[Tuple[frozenset, str, str]]]:
    """The merged links and, per step, (links, reason, detail); ``target`` the activations' peak L2 to
    reach (default: the L2 budget with ``fit``, 0 with ``min``); ``cycles`` False: the memory step only."""
    if mode not in MODES:
        ctl.error(f"{ctl.mode} {mode!r} is not a fusion mode", "use " + ", ".join(MODES))
    links = _links(lowered)
    forced = _by_name(lowered, force, ctl.fuse, ctl)
    banned = set(_by_name(lowered, forbid, ctl.no_fuse, ctl))
    for i in forced:
        problem = links.get(i, f"{lowered.layers[i].name} is the last layer")
        if problem:
            ctl.error(f"{ctl.fuse} {lowered.layers[i].name}: it cannot fuse with the next layer: {problem}",
                      f"{ctl.fuse} names a layer whose output only the next layer reads")
        if i in banned:
            ctl.error(f"{ctl.fuse} and {ctl.no_fuse} both name {lowered.layers[i].name}", "keep one")
    allowed = frozenset(i for i, p in links.items() if p is None and i not in banned)
    search = _Search(lowered, allowed, _Tiler(lowered, platform, l1), frozenset(forced))
    steps: List[Tuple[frozenset, str, str]] = []
    if forced:
        if not search.feasible(search.merged):
            ctl.error(f"{ctl.fuse}: the forced fused kernels find no tiling in the L1 budget",
                      f"fuse fewer layers, or give more L1 ({ctl.l1})")
        steps.append((search.merged, "forced", ctl.fuse))
    if mode == "none":
        return search.merged, steps
    if target is None:
        target = 0 if mode == "min" else l2
        search.consts = mode == "fit"
    start = search.profile(search.merged)[0]
    while True:
        before = search.profile(search.merged)[0]
        move = search.memory_round(target)
        if move is None:
            break
        search.merged |= move
        after = search.profile(search.merged)[0]
        steps.append((move, "memory", f"peak L2 {before} -> {after} B"))
    if search.profile(search.merged)[0] >= start:       # the rounds only left fewer layers at the peak
        search.merged = frozenset(forced)
        steps = [s for s in steps if s[1] != "memory"]
    if cycles:
        _cycles_step(search, steps, target)
    return search.merged, steps


def _cycles_step(search: _Search, steps: list, target: int) -> None:
    """Merge every remaining link whose fused kernel is predicted faster than its two sides apart, unless
    the merged node's constants would take the L2 peak above the budget (fit)."""
    n = len(search.lowered.layers)
    for i in sorted(search.allowed - search.merged):
        if search.consts and search.profile(search.merged | {i})[0] > max(target, search.profile(search.merged)[0]):
            continue
        groups = _groups(n, search.merged)
        left = next(g for g in groups if i in g)
        right = next(g for g in groups if i + 1 in g)
        joined = left + right
        if not _valid_group(search.lowered.layers, joined):
            continue
        apart = [search.tiler.cycles(g) for g in (left, right)]
        fused = search.tiler.cycles(joined)
        if fused is None or None in apart or fused >= sum(apart):
            continue
        search.merged |= {i}
        steps.append((frozenset({i}), "cycles", f"predicted cycles {sum(apart)} -> {fused}"))


def apply(lowered, merged: frozenset, steps: Sequence[Tuple[frozenset, str, str]]
          ) -> tuple:
    """The lowered graph with each group of merged links one fused layer, and the report's records."""
    groups = _groups(len(lowered.layers), merged)
    layers, fusions = [], []
    for g in groups:
        if len(g) == 1:
            layers.append(lowered.layers[g[0]])
            continue
        layer = fused_layer(lowered, g)
        layers.append(layer)
        why = [(r, d) for links, r, d in steps if links & set(g[:-1])]
        fusions.append(Fusion(layer.name, tuple(lowered.layers[i].name for i in g),
                              "/".join(dict.fromkeys(r for r, _ in why)), "; ".join(d for _, d in why)))
    used = {s for layer in layers for _, s, _ in layer.bindings}
    internal = _internal(lowered, groups)
    out = replace(lowered, layers=tuple(layers),
                  consts=tuple(c for c in lowered.consts if c.symbol in used),
                  locals=tuple((s, n) for s, n in lowered.locals if s not in internal))
    return out, tuple(fusions)


def replay(lowered, descriptor):
    """The lowered graph with the fused groups an import recorded (its ``NAME.json``'s ``fusion``)."""
    index = {layer.name: i for i, layer in enumerate(lowered.layers)}
    groups = (descriptor.get("fusion") or {}).get("groups", [])
    merged = frozenset(index[n] for g in groups for n in g["layers"][:-1] if n in index)
    return apply(lowered, merged, [(merged, "recorded", "")])[0]


def fuse(lowered, platform: str, l1: int, l2: int, mode: str = "fit", force: Sequence[str] = (),
         forbid: Sequence[str] = (), target: Optional[int] = None, ctl: Controls = Controls()) -> tuple:
    """Choose the fusions (see the module's documentation) and apply them: (the graph, its Fusions)."""
    merged, steps = choose(lowered, platform, l1, l2, mode, force, forbid, target, ctl=ctl)
    return apply(lowered, merged, steps)


# ---------------------------------------------------------------------------------------------
# A model script's graph


@dataclass(frozen=True)
class GraphView:
    """The open graph as the fusion sees it: a layer per node (a node no SQ8 TFLM generator made, or bound
    other than by plain GNodeArg, has no generator and never fuses), the locals' and constants' sizes."""

    layers: tuple
    consts: tuple
    locals: tuple


def _origin_args(args: tuple) -> tuple:
    """A recorded generator call's arguments as the fusion reads them: operators by name."""
    return tuple(Sym(a.name) if isinstance(a, KernelOper_T) else Sym(a) if isinstance(a, str) else a
                 for a in args)


def _node_layer(model, node) -> Layer:
    uk = model.kernels.get(node.name)
    origin = model.kernel_origins.get(node.name)
    plain = all(a.form == NodeArgForm.PLAIN and a.kind in (GraghNodeArgT.GNA_IN, GraghNodeArgT.GNA_OUT)
                for a in node.args)
    if uk is None or node.group or origin is None or not plain:
        return Layer(node.name, "", (), tuple(("out" if a.writes else "in", a.symbol, "") for a in node.args),
                     f"node {node.name}", "-")
    bindings = tuple(("out" if a.writes else "in", a.symbol, c.name) for c, a in zip(uk.cargs, node.args))
    return Layer(node.name, origin[0], _origin_args(origin[1]), bindings, f"node {node.name}", origin[0])


def graph_view(model, g) -> GraphView:
    """The open graph ``g`` of ``model`` as a fusion graph."""
    sizes = symbol_sizes(model, g.close(GraphOptions.from_ctrl(model.graph_ctrl), g.where))
    consts = tuple(Const(a.name, "signed char", np.zeros(a.const.nbytes, np.int8)) for a in g.args
                   if a.const is not None)
    return GraphView(tuple(_node_layer(model, n) for n in g.nodes), consts,
                     tuple((a.name, sizes.get(a.name, 0)) for a in g.locals))


def _rewrite(model, g, fused: GraphView, fusions: tuple, where: str) -> None:
    """Replace each fused group's nodes (and user kernels) by its fused kernel, declared here, in the
    place of the group's first node."""
    by_name = {layer.name: layer for layer in fused.layers}
    for fu in fusions:
        layer = by_name[fu.name]
        if not getattr(G, layer.generator)(layer.name, *(_value(v) for v in layer.args)):
            raise ModelError(f"CNN_FuseGraph_SQ8: the fused kernel {layer.name} finds no tiling", where=where,
                             kernel=layer.name, hint="forbid this fusion (NoFuse) or give more L1")
        binds = [GNodeArg(GraghNodeArgT.GNA_OUT if d == "out" else GraghNodeArgT.GNA_IN, s) for d, s, _ in layer.bindings]
        first = [n.name for n in g.nodes].index(fu.layers[0])
        g.nodes = [n for n in g.nodes if n.name not in fu.layers]
        AddNode(layer.name, Bindings(len(binds), *binds))      # appended, with AddNode's checks
        g.nodes.insert(first, g.nodes.pop())
        for name in fu.layers:
            model.drop_kernel(name)
    kept = {s for layer in fused.layers for _, s, _ in layer.bindings}
    g.locals = [a for a in g.locals if a.name in kept]


def CNN_FuseGraph_SQ8(Mode="fit", Fuse=(), NoFuse=(), FusionL2=None) -> int:
    """Ours (issue 26): in a model script, after the open graph's AddNode calls and before CloseGraph,
    let the planner fuse its layers made by the SQ8 generators with TFLM's requantisation, as ``autotiler
    import`` does (see the module's documentation): Mode "fit" (the model's L2 budget, or FusionL2 B),
    "min" or "none"; Fuse / NoFuse: node names whose link to the next node is forced / forbidden. The fused
    groups' nodes and user kernels are replaced by one CNN_FusedConvAct_SQ8 kernel each, named after its
    first layer. Returns how many fused kernels it made."""
    where = caller_where()
    model = current_model()
    g = model.open_graph
    if g is None:
        raise ModelError("CNN_FuseGraph_SQ8: no graph is open", where=where,
                         hint="call it after the graph's AddNode calls, before CloseGraph()")

    def fail(message: str, hint: str):
        raise ModelError(f"CNN_FuseGraph_SQ8: {message}", where=where, hint=hint)

    for value, what in ((Fuse, "Fuse"), (NoFuse, "NoFuse")):
        if isinstance(value, str) or not all(isinstance(v, str) for v in value or ()):
            fail(f"{what} must be a list of node names, got {value!r}", f'e.g. {what}=["Conv1"]')
    view = graph_view(model, g)
    ctl = Controls("Mode", "Fuse", "NoFuse", "SetL1MemorySize", fail)
    fused, fusions = fuse(view, model.platform, model.l1_budget, model.l2_budget, Mode, tuple(Fuse or ()),
                          tuple(NoFuse or ()), FusionL2, ctl)
    _rewrite(model, g, fused, fusions, where)
    model.fusions[g.name] = fusions
    return len(fusions)


__all__ = ["CNN_FuseGraph_SQ8", "CTRL", "Const", "Controls", "FusedLayersArg", "Fusion", "Layer", "MODES", "Sym",
           "apply", "choose", "fuse", "fused_layer", "graph_view", "peak_l2", "replay"]
