"""Fused layers (issue 26): CNN_FusedConvAct_SQ8 (autotiler/generators/sq8_gen_tflm_fused.py) against the
numpy reference sq8_tflm applied layer by layer (itself proven against tflite-micro), on fixed chains
(MobileNet v1's first stage, an inverted residual with its ADD, conv -> conv) and hypothesis-drawn chains
(sizes, strides, paddings, activations, L1 budgets); its typed errors.

Outputs are pre-filled with a sentinel; the simulator faults on writes outside the arguments and on
reads of L1 never written; the simulated cycles of the user kernel are its predicted ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_gen_tflm_conv import conv_constants
from autotiler.generators.sq8_gen_tflm_dense import add_infos
from autotiler.generators.sq8_generators import CNN_FusedConv, CNN_FusedConvAct_SQ8, CNN_FusedLayers
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
SENTINEL = -99
SWEEP = dict(deadline=None, derandomize=True, database=None,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                    HealthCheck.data_too_large])
KOP_OF_ACT = {"NONE": KOP_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN}


@dataclass(frozen=True)
class Conv:
    """One layer of a chain: 'conv' (KxK) or 'dw'; its quantisation drawn from the seed."""

    kind: str
    cout: int
    f: int = 3
    s: int = 1
    padding: str = "SAME"
    act: str = "RELU6"


@dataclass(frozen=True)
class Chain:
    h: int
    w: int
    cin: int
    layers: tuple
    residual: bool = False
    budget: int = 48000
    seed: int = 0
    name: str = "Fused"

    def args(self) -> tuple:
        layers = [CNN_FusedConv(KOP_CONV_DW if c.kind == "dw" else KOP_CONV, c.cout, c.f, c.f, c.s, c.s,
                                int(c.padding == "SAME"), KOP_OF_ACT[c.act]) for c in self.layers]
        return (self.cin, self.w, self.h, CNN_FusedLayers(len(layers), *layers),
                KOP_MATADD if self.residual else KOP_NONE, KOP_RELU if self.residual else KOP_NONE)

    def reference(self):
        """(C arguments, expected output): every layer by sq8_tflm, one after the other."""
        rng = np.random.default_rng(self.seed)
        q = T.QParams(0.02, int(rng.integers(-128, 0)))
        x = rng.integers(-128, 128, (1, self.h, self.w, self.cin)).astype(np.int8)
        args, y, cin = {"In": x}, x, self.cin
        for k, c in enumerate(self.layers):
            out_q = T.QParams(float(rng.uniform(0.02, 0.08)), int(rng.integers(-128, 10)))
            reals = rng.uniform(0.001, 0.01 if c.kind == "conv" else 0.05, c.cout)
            w_q = T.FilterQParams(tuple(r * out_q.scale / q.scale for r in reals))
            b = rng.integers(-(1 << 12), 1 << 12, c.cout).astype(np.int32)
            kw = dict(stride=(c.s, c.s), padding=c.padding, activation=c.act)
            if c.kind == "dw":
                wt = rng.integers(-127, 128, (1, c.f, c.f, c.cout)).astype(np.int8)
                y = T.depthwise_conv2d(y, wt, b, q, w_q, out_q, depth_multiplier=c.cout // cin, **kw)
            else:
                wt = rng.integers(-127, 128, (c.cout, c.f, c.f, cin)).astype(np.int8)
                y = T.conv2d(y, wt, b, q, w_q, out_q, **kw)
            scale, scale_n, infos = conv_constants(q, w_q, out_q, c.act, c.cout)
            args.update({f"Filter{k}": wt, f"Bias{k}": b, f"Scale{k}": scale, f"ScaleN{k}": scale_n,
                         f"Infos{k}": infos})
            q, cin = out_q, c.cout
        if self.residual:
            res = rng.integers(-128, 128, y.shape).astype(np.int8)
            res_q = T.QParams(0.03, int(rng.integers(-128, 128)))
            out_q = T.QParams(0.05, int(rng.integers(-128, 0)))
            args.update(Res=res, AddInfos=add_infos(q, res_q, out_q, "RELU"))
            y = T.add(y, res, q, res_q, out_q, "RELU")
        return args, y[0]


def make_ctrl():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    return ctrl


def declare(c: Chain) -> int:
    SetL1MemorySize(c.budget)
    return CNN_FusedConvAct_SQ8(c.name, make_ctrl(), *c.args())


def build(out_dir, chains: list):
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Fused.c", "Fused.h")
        LoadCNN_SQ8_Library()
        for c in chains:
            assert declare(c) == 1, c
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def run(prog, tilings, c: Chain) -> None:
    inputs, expected = c.reference()
    out = np.full(expected.size, SENTINEL, dtype=np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(c.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{c.name}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]} ({c})")
    assert counters["cycles"] == tilings[c.name].predicted.cycles


def check(tmp_path, chains: list) -> dict:
    prog, tilings = build(tmp_path, chains)
    for c in chains:
        run(prog, tilings, c)
    return tilings


# ---------------------------------------------------------------------------------------------
# Fixed chains


MBN_STAGE = (Conv("conv", 8, s=2), Conv("dw", 8), Conv("conv", 16, f=1), Conv("dw", 16, s=2),
             Conv("conv", 32, f=1))
FIXED = [
    Chain(24, 24, 3, MBN_STAGE, budget=8000, name="MbnStage"),
    Chain(24, 24, 3, MBN_STAGE, budget=6000, seed=3, name="MbnStageSmall"),
    Chain(12, 10, 8, (Conv("conv", 24, f=1), Conv("dw", 24), Conv("conv", 8, f=1, act="NONE")), residual=True,
          budget=4000, seed=1, name="InvRes"),
    Chain(11, 9, 4, (Conv("conv", 8), Conv("conv", 6, f=3, s=2, padding="VALID")), budget=2000, seed=2,
          name="ConvConv"),
    Chain(9, 7, 16, (Conv("dw", 16, s=2), Conv("conv", 8, f=1)), budget=1500, seed=4, name="DwPw"),
]


def test_fixed_chains_are_bit_exact(tmp_path):
    tilings = check(tmp_path, FIXED)
    # the small budgets really tile: several tiles, the intermediates' overlaps recomputed by each
    for name in ("MbnStage", "MbnStageSmall", "InvRes", "ConvConv", "DwPw"):
        assert tilings[name].loops[0].count > 1, name


# ---------------------------------------------------------------------------------------------
# Hypothesis sweep: batches of drawn chains, one build per batch


WHOLE = PLATFORM.l1_size


@st.composite
def chains(draw):
    """(a fusable chain, where its L1 budget lies from the smallest that tiles it (0) to one tile's (1)).
    The chain: 2-5 convolutions KxK (K 1..5) or depth-wise ones (multiplier 1 or 2), strides 1-2 (at
    most one layer of stride 3), SAME or VALID (VALID where the window fits the plane, its leftover
    lines unread), NONE/RELU/RELU6, planes 1..20 x 1..20, channels 1..24, an optional residual ADD."""
    h0, w0, cin = draw(st.integers(1, 20)), draw(st.integers(1, 20)), draw(st.integers(1, 24))
    n = draw(st.integers(2, 5))
    stride3 = draw(st.integers(0, 3 * n))            # the layer of stride 3, if any (< n)
    layers, h, w, c = [], h0, w0, cin
    for k in range(n):
        kind = draw(st.sampled_from(["conv", "dw"]))
        if kind == "dw":
            cout = c * (draw(st.integers(1, 2)) if 2 * c <= 24 else 1)
        else:
            cout = draw(st.integers(1, 24))
        f = draw(st.integers(1, 5))
        s = 3 if k == stride3 else draw(st.sampled_from([1, 2, 1]))
        padding = draw(st.sampled_from(T.PADDINGS)) if f <= min(h, w) else "SAME"
        layers.append(Conv(kind, cout, f, s, padding, draw(st.sampled_from(T.ACTIVATIONS[:3]))))
        h, w, c = T.compute_out_size(padding, h, f, s, 1), T.compute_out_size(padding, w, f, s, 1), cout
    return Chain(h0, w0, cin, tuple(layers), residual=draw(st.booleans())), draw(st.sampled_from([0, 0.5, 1]))


def _tiling(m, c: Chain, budget: int, tag: str):
    """The tiling of ``c`` declared under another name at ``budget`` bytes of L1, or None."""
    name = f"{c.name}_{tag}"
    return m.tilings[name] if declare(replace(c, budget=budget, name=name)) else None


def budgets(c: Chain) -> tuple:
    """(the smallest L1 budget that tiles ``c``, within 5%; the L1 bytes of one tile, the largest tile
    the original's objective takes in the whole L1). The time objective, which the sweep's builds
    use, can prefer several tiles even in the whole L1 (DMA overlapped with compute)."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        SetTilingObjective("original")              # cheap, and the same tilings fit
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        one = _tiling(m, c, WHOLE, "one")
        assert one is not None and one.loops[0].count == 1, c
        lo, hi = 0, one.l1_bytes                    # lo does not fit, hi does
        while hi - lo > max(64, hi // 20):
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if _tiling(m, c, mid, str(mid)) else (mid, hi)
    return hi, one.l1_bytes


def _key(drawn: tuple) -> tuple:
    c = drawn[0]
    return c.h, c.w, c.cin, c.layers, c.residual


@settings(max_examples=2, **SWEEP)
@given(batch=st.lists(chains(), min_size=8, max_size=8, unique_by=_key))
def test_drawn_chains(tmp_path_factory, batch):
    """Drawn chains (see ``chains``) at L1 budgets from the smallest that tiles them to the one of a
    single tile, eight per build: bit-exact with sq8_tflm layer by layer, every output written, the
    predicted cycles the simulated ones, the L1 budget kept; several tiles where one tile needs more
    than twice the budget (a single buffered tile needs at least half of a double buffered one)."""
    drawn = []
    for i, (c, frac) in enumerate(batch):
        low, one = budgets(c)
        drawn.append((replace(c, budget=int(low + frac * (one - low)), seed=i, name=f"C{i}"), one))
    tilings = check(tmp_path_factory.mktemp("fused"), [c for c, _ in drawn])
    for c, one in drawn:
        t = tilings[c.name]
        assert t.l1_bytes <= c.budget, c
        if one > 2 * c.budget:
            assert t.loops[0].count > 1, c
