"""Fused layers (issue 26): CNN_FusedConvAct_SQ8 (autotiler/generators/sq8_gen_tflm_fused.py) against the
numpy reference sq8_tflm applied layer by layer (itself proven against tflite-micro), on fixed chains
(MobileNet v1's first stage, an inverted residual with its ADD, conv -> conv) and hypothesis-drawn chains
(sizes, strides, paddings, activations, L1 budgets); its typed errors.

Outputs are pre-filled with a sentinel; the simulator faults on writes outside the arguments and on
reads of L1 never written; the simulated cycles of the user kernel are its predicted ones.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError, TilingError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_gen_tflm_conv import conv_constants
from autotiler.generators.sq8_gen_tflm_dense import add_infos
from autotiler.generators.sq8_generators import CNN_FusedConv, CNN_FusedConvAct_SQ8, CNN_FusedLayers
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_fused.py"
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

    def steps(self) -> list:
        """The chain one layer at a time, by sq8_tflm: per layer the arguments of its single-layer
        kernel (In, Filter, Bias, Scale, ScaleN, Infos; the ADD's In1, In2, Infos) and its output Out."""
        rng = np.random.default_rng(self.seed)
        q = T.QParams(0.02, int(rng.integers(-128, 0)))
        y = rng.integers(-128, 128, (1, self.h, self.w, self.cin)).astype(np.int8)
        steps, cin = [], self.cin
        for c in self.layers:
            out_q = T.QParams(float(rng.uniform(0.02, 0.08)), int(rng.integers(-128, 10)))
            reals = rng.uniform(0.001, 0.01 if c.kind == "conv" else 0.05, c.cout)
            w_q = T.FilterQParams(tuple(r * out_q.scale / q.scale for r in reals))
            b = rng.integers(-(1 << 12), 1 << 12, c.cout).astype(np.int32)
            kw = dict(stride=(c.s, c.s), padding=c.padding, activation=c.act)
            x = y
            if c.kind == "dw":
                wt = rng.integers(-127, 128, (1, c.f, c.f, c.cout)).astype(np.int8)
                y = T.depthwise_conv2d(x, wt, b, q, w_q, out_q, depth_multiplier=c.cout // cin, **kw)
            else:
                wt = rng.integers(-127, 128, (c.cout, c.f, c.f, cin)).astype(np.int8)
                y = T.conv2d(x, wt, b, q, w_q, out_q, **kw)
            scale, scale_n, infos = conv_constants(q, w_q, out_q, c.act, c.cout)
            steps.append(dict(In=x, Filter=wt, Bias=b, Scale=scale, ScaleN=scale_n, Infos=infos, Out=y))
            q, cin = out_q, c.cout
        if self.residual:
            res = rng.integers(-128, 128, y.shape).astype(np.int8)
            res_q = T.QParams(0.03, int(rng.integers(-128, 128)))
            out_q = T.QParams(0.05, int(rng.integers(-128, 0)))
            steps.append(dict(In1=y, In2=res, Infos=add_infos(q, res_q, out_q, "RELU"),
                              Out=T.add(y, res, q, res_q, out_q, "RELU")))
        return steps

    def reference(self):
        """(C arguments of the fused kernel, expected output): every layer by sq8_tflm, one after the other."""
        steps = self.steps()
        args = {"In": steps[0]["In"]}
        for k, step in enumerate(steps[:len(self.layers)]):
            args.update({f"{a}{k}": step[a] for a in ("Filter", "Bias", "Scale", "ScaleN", "Infos")})
        if self.residual:
            args.update(Res=steps[-1]["In2"], AddInfos=steps[-1]["Infos"])
        return args, steps[-1]["Out"][0]


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


def call(prog, c: Chain) -> int:
    """Call c's kernel on its reference inputs: the output must be sq8_tflm's (a sentinel-filled buffer
    exactly written); returns the cycles."""
    inputs, expected = c.reference()
    out = np.full(expected.size, SENTINEL, dtype=np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(c.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{c.name}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]} ({c})")
    return counters["cycles"]


def run(prog, tilings, c: Chain) -> None:
    """c bit-exact, its simulated cycles its predicted ones."""
    assert call(prog, c) == tilings[c.name].predicted.cycles


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
    # a 1x1 stride 2 layer after the first: T0 is read every other line, its tiles leave a line between
    # them (overlap F - S = -1), nothing to keep across (found by the sweep: KeepOut -1, fixed in f748b00)
    Chain(8, 8, 4, (Conv("conv", 4), Conv("conv", 4, f=1, s=2)), budget=600, seed=5, name="Gap"),
]


def test_fixed_chains_are_bit_exact(tmp_path):
    tilings = check(tmp_path, FIXED)
    # the small budgets really tile: several tiles, the intermediates' overlaps recomputed by each
    for name in ("MbnStage", "MbnStageSmall", "InvRes", "ConvConv", "DwPw", "Gap"):
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


# ---------------------------------------------------------------------------------------------
# Errors: typed, naming this file's line, the kernel and the parameter


@pytest.fixture
def model():
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetL1MemorySize(48000)
        LoadCNN_SQ8_Library()
        yield m


def conv(ConvOper=KOP_CONV, OutFeat=8, Fcx=3, Fcy=3, Scx=1, Scy=1, ConvPad=1, ActOper=KOP_RELU):
    return CNN_FusedConv(ConvOper, OutFeat, Fcx, Fcy, Scx, Scy, ConvPad, ActOper)


PW = conv(Fcx=1, Fcy=1)
CHAIN = dict(InFeat=4, Width=10, Height=9, Layers=CNN_FusedLayers(2, conv(), PW), AddOper=KOP_NONE,
             AddActOper=KOP_NONE)


def fused(ctrl=None, **over):
    return CNN_FusedConvAct_SQ8("E", ctrl if ctrl is not None else make_ctrl(), **dict(CHAIN, **over))


def _line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + len(lines) - 1


def fails(fn, *fragments, kernel="E"):
    """pytest.raises(ModelError) rendered as 'THIS:LINE: kernel 'E': ...fragments...', LINE the
    last line of fn (the generator's call)."""
    prefix = f"{THIS}:{_line(fn)}: " + (f"kernel '{kernel}': " if kernel else "")
    return pytest.raises(ModelError, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments))


GEN = "CNN_FusedConvAct_SQ8: "
ERRORS = [
    (dict(Layers=()), [GEN + "Layers must be a non-empty CNN_FusedLayers(N, CNN_FusedConv(...), ...), got a list of 0 item(s)",
                       "list the chain's layers with CNN_FusedLayers"]),
    (dict(Layers=PW), [GEN + "Layers must be a non-empty CNN_FusedLayers(N, CNN_FusedConv(...), ...), got "
                       "a FusedConv", "list the chain's layers with CNN_FusedLayers"]),
    (dict(Layers=[conv(), KOP_CONV]), [GEN + "layer 1 is not a CNN_FusedConv(...)",
                                       "build each layer with CNN_FusedConv"]),
    (dict(Layers=(PW,) * 17), [GEN + "17 layers in one fused kernel: at most 16 are supported",
                               "split the chain into several fused kernels"]),
    (dict(Layers=CNN_FusedLayers(1, conv())), [GEN + "a fused chain of one layer without a residual ADD fuses nothing",
                                               "use CNN_ConvolutionPoolAct_SQ8 for a single layer"]),
    (dict(AddOper=KOP_MATADD_DYNADJUST), [GEN + "AddOper KOP_MATADD_DYNADJUST is not KOP_NONE or KOP_MATADD",
                                "use one of KOP_NONE, KOP_MATADD"]),
    (dict(AddOper=12345), [GEN + "AddOper 12345 is not a KernelOper_T (unknown KOP)", "use one of KOP_NONE"]),
    (dict(AddActOper=KOP_HSIGMOID), [GEN + "AddActOper: TFLite has no fused KOP_HSIGMOID: its convolutions and poolings only "
                                     "clamp", "generate CNN_Act_SQ8 after this layer"]),
    (dict(Layers=CNN_FusedLayers(2, conv(), conv(ConvOper=KOP_MAXPOOL))),
     [GEN + "layer 1: ConvOper KOP_MAXPOOL is not a convolution (KOP_CONV or KOP_CONV_DW)",
      "use one of KOP_CONV, KOP_CONV_DW"]),
    (dict(Layers=CNN_FusedLayers(2, conv(ConvOper=KOP_CONV_DP), PW)),
     [GEN + "layer 0: ConvOper KOP_CONV_DP is not a convolution (KOP_CONV or KOP_CONV_DW)"]),
    (dict(Layers=CNN_FusedLayers(2, conv(ConvOper=KOP_NONE), PW)),
     [GEN + "layer 0: ConvOper KOP_NONE is not a convolution (KOP_CONV or KOP_CONV_DW)"]),
    (dict(Layers=CNN_FusedLayers(2, conv(), conv(ConvOper=KOP_CONV_DW, OutFeat=12))),
     [GEN + "layer 1: a depth wise convolution needs OutFeat a multiple of InFeat (TFLite's depth multiplier), got InFeat 8 "
      "and OutFeat 12", "use KOP_CONV to mix the features"]),
    (dict(Layers=CNN_FusedLayers(2, conv(ActOper=KOP_HSWISH), PW)),
     [GEN + "layer 0: ActOper: TFLite has no fused KOP_HSWISH: its convolutions and poolings only clamp",
      "generate CNN_Act_SQ8 after this layer"]),
    (dict(Layers=CNN_FusedLayers(2, conv(), conv(Fcx=11, ConvPad=0))),
     [GEN + "layer 1: the convolution filter (spanning 11) is larger than the width 10 with VALID padding: it has no output",
      "or SAME padding (ConvPad = 1)"]),
    # the planes shrink along the chain: the second layer's 5 lines are too few for a 7-line window
    (dict(Layers=CNN_FusedLayers(2, conv(Scx=2, Scy=2), conv(Fcy=7, ConvPad=0))),
     [GEN + "layer 1: the convolution filter (spanning 7) is larger than the height 5 with VALID padding"]),
    (dict(Layers=CNN_FusedLayers(2, conv(OutFeat=0), PW)), [GEN + "layer 0: OutFeat must be at least 1, got 0"]),
    (dict(Layers=CNN_FusedLayers(2, conv(Scy=0), PW)), [GEN + "layer 0: Scy (stride) must be at least 1, got 0",
                                                        "a stride is 1 or more"]),
    (dict(LineBuffer=2), [GEN + "LineBuffer must be None, 0 or 1, got 2",
                          "None: the mode with fewer predicted cycles; 0: recompute the overlaps; 1: keep them in L1"]),
    (dict(LineBuffer=1.0), [GEN + "LineBuffer must be None, 0 or 1, got 1.0"]),
    (dict(ResidualFirst=2), [GEN + "ResidualFirst must be at most 1, got 2"]),
]


@pytest.mark.parametrize("over, fragments", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(model, over, fragments):
    with fails(fused, *fragments):
        fused(**over)


CTRL_ERRORS = [
    (dict(PADTYPE=PAD_BALANCED_LEFT), ["PadType PAD_BALANCED_LEFT is not TFLite's SAME padding",
                                       "set PAD_BALANCED_RIGHT"]),
    (dict(TILEORIENTATION=TILE_VER), ["TileOrientation TILE_VER is not supported yet with HWC feature maps",
                                      "set TILE_HOR"]),
    (dict(FORCEDPCONV=1), ["ForceDPconv is not supported with this requantisation"]),
]


@pytest.mark.parametrize("fields, fragments", CTRL_ERRORS, ids=[next(iter(f)) for f, _ in CTRL_ERRORS])
def test_ctrl_errors(model, fields, fragments):
    ctrl = make_ctrl()
    for k, v in fields.items():
        CNN_SetGenCtrl(ctrl, k, v)
    with fails(fused, GEN + fragments[0], *fragments[1:]):
        fused(ctrl)


def test_original_requantisation_refused(model):
    """Scale_DataSize 1 (the Ctrl field SCALE_DATASIZE 1, or unset: the original's CHW requantisation)."""
    text = [GEN + "fused layers are built with TensorFlow Lite Micro's requantisation only (HWC feature maps, "
            "Scale_DataSize 4)", "set the Ctrl field SCALE_DATASIZE to 4, or generate the layers one by one"]
    one = CNN_GenControl_T()
    CNN_InitGenCtrl(one)
    CNN_SetGenCtrl(one, "SCALE_DATASIZE", 1)
    for ctrl in (one, 0):
        with fails(fused, *text):
            fused(ctrl)


def test_fused_layers_count_mismatch():
    """CNN_FusedLayers' count must match its items; its items must be CNN_FusedConv (no kernel yet:
    the error names the CNN_FusedLayers call)."""
    def three():
        return CNN_FusedLayers(3, PW, PW)

    def other():
        return CNN_FusedLayers(2, PW, KOP_CONV)

    with fails(three, "CNN_FusedLayers(3, ...) announces 3 item(s) but 2 follow",
               "write CNN_FusedLayers(2, ...) or drop the count", kernel=None):
        three()
    with fails(other, "CNN_FusedLayers expects fused layers, got KOP_CONV", kernel=None):
        other()


def test_error_without_library():
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        with fails(fused, "basic kernel 'KerParConv_TFLM_SQ8' is not declared", "call LoadCNN_SQ8_Library() before"):
            fused()


def test_no_tiling(model):
    """A budget nothing fits in: TilingError, or 0 with AT_KERNEL_NOSOLUTION_ERROR off."""
    SetL1MemorySize(256)
    with pytest.raises(TilingError, match=re.escape(f"{THIS}:{_line(fused)}: kernel 'E': no tiling fits the L1 "
                                                    "budget of 256 bytes")):
        fused()
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    assert fused() == 0
    SetL1MemorySize(48000)
    assert fused() == 1
