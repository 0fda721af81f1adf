"""The SQ8 generators with the original's 1-byte requantisation (Scale_DataSize 1, CHW;
autotiler/generators/sq8_gen_original.py and the CNN_SQ8_Orig_*.c kernels) against the numpy
reference autotiler/generators/sq8_original.py, bit for bit on the simulated chip, and their typed
errors.

Builds are few: every hypothesis example declares a batch of layers in one model (one build). Scale,
ScaleN and Infos are drawn the way NNTool makes them (compute_scales of a float scale, with the
filter's bit budget); outputs are pre-filled with a sentinel; the simulated cycles of every user
kernel are its predicted ones; budgets go down to the smallest L1 that tiles the layer.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.generators import CNN_KERNELS_DIR, sq8_kernels_original
from autotiler.generators import sq8_original as Q
from autotiler.generators.cnn_geometry import CNN_EdgePaddingValue, CNN_LayerOutputDim, CNN_TotalPaddingValue
from autotiler.generators.sq8_generators import (
    CNN_Act_SQ8,
    CNN_ConcatChannels_SQ8,
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GlobalPoolAct_SQ8,
    CNN_GroupedConvolutionPoolAct_SQ8,
    CNN_LinearAct_SQ8,
    CNN_MatAddAct_SQ8,
    CNN_MatEltMulAct_SQ8,
    CNN_MatMulAct_SQ8,
    CNN_MatSubAct_SQ8,
    CNN_PoolAct_SQ8,
    CNN_SoftMax_SQ8,
    CNN_TensorVectMultAct_SQ8,
)
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_gen_original.py"
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
SOURCES = sq8_kernels_original.SOURCES
SENTINEL = -99
# no shrinking: a failing batch reports its layers as drawn (a shrink rebuilds the C each step)
SWEEP = dict(deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                    HealthCheck.data_too_large])
ACTS = {KOP_NONE: "none", KOP_RELU: "relu", KOP_RELUN: "relun", KOP_RELUM: "relum", KOP_RELUMN: "relumn",
        KOP_HSIGMOID: "hsigmoid", KOP_HSWISH: "hswish", KOP_LEAKYRELU: "leakyrelu"}
POOL_FUSED = ("none", "relu", "relun")
BIAS_DTYPES = {1: np.int8, 2: np.int16, 4: np.int32}


# ---------------------------------------------------------------------------------------------
# Layers: declared in one model, run, compared


@dataclass
class Layer:
    """One generator call: its generator, parameters (after Name, Ctrl), Ctrl fields, the L1 budget
    ('min': the smallest power of two from 256 bytes on that tiles it) and a seed for its data."""

    name: str
    gen: object
    args: tuple
    ctrl: dict = field(default_factory=dict)
    budget: object = 48000
    seed: int = 0


def make_ctrl(fields: dict):
    if not fields:
        return 0
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    for k, v in fields.items():
        CNN_SetGenCtrl(ctrl, k, v)
    return ctrl


def declare(layer: Layer) -> None:
    budget = 256 if layer.budget == "min" else layer.budget
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF if layer.budget == "min" else AT_OPT_ON)
    while True:
        SetL1MemorySize(min(budget, PLATFORM.l1_size))
        if layer.gen(layer.name, make_ctrl(layer.ctrl), *layer.args):
            break
        assert budget < PLATFORM.l1_size, f"{layer.name}: no tiling fits {budget} B"
        budget *= 2
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)


def build(out_dir, layers: list):
    """Every layer in one model (the original's users' preamble), generated and built."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8OrigLayers.c", "Sq8OrigLayers.h")
        LoadCNN_SQ8_Library()
        for layer in layers:
            declare(layer)
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def run(prog, tilings, layer: Layer, args: dict, expected: np.ndarray, out_dtype=np.int8) -> None:
    """Call the layer with a sentinel-filled Out: bit-exact, and the cycles predicted."""
    out = np.full(expected.shape, SENTINEL, dtype=out_dtype)
    counters = prog.call(layer.name, Out=out, **args)
    np.testing.assert_array_equal(out, expected, err_msg=f"{layer.name}: {layer}")
    if layer.name in tilings:
        assert counters["cycles"] == tilings[layer.name].predicted.cycles, layer.name


# ---------------------------------------------------------------------------------------------
# NNTool-like constants


def int8(rng, shape) -> np.ndarray:
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def channel_scales(rng, n: int, fan_in: int, prenorm: int = 0) -> tuple:
    """(Scale, ScaleN) of n channels as NNTool computes them for a filter of fan_in taps: the real
    scale S_in * S_w / S_out puts the int32 sums back around int8 magnitudes; ScaleN lowered by
    PRENORM as NNTool's qnorms are."""
    real = np.exp(rng.uniform(np.log(0.25), np.log(4.0), size=n)) / (64.0 * np.sqrt(fan_in))
    scale, scale_n = Q.compute_scales(real, min(8, Q.filter_available_bits(fan_in)))
    scale_n = scale_n.astype(np.int64) - prenorm
    return scale, np.maximum(scale_n, 0).astype(np.int8)


def act_infos(rng, act: str, unsigned: bool = False, **fields) -> Q.Infos:
    """Infos as NNTool fills them for act (act scale from compute_scales of a float near 1, or the
    identity (1, 0)); A0/B0/C0 in 0..255 where a kernel reads them unsigned (reductions,
    standalone activations; pooling reads them signed, and fuses ReLUN only), else 0..127 (a negative AT_CLIP_POS bound is not defined
    alike by gap_clipur and the reference)."""
    if rng.integers(0, 2):
        s, n = Q.compute_scales(rng.uniform(0.3, 1.7))
        act_scale, act_scale_n = int(s[0]), int(n[0])
    else:
        act_scale, act_scale_n = 1, 0
    top = 256 if unsigned else 128
    a0, b0, c0 = (int(v) for v in rng.integers(0, top, size=3))
    if act == "relumn":
        b0 = int(rng.integers(a0, top))
    return Q.Infos(act_scale=act_scale, act_scale_n=act_scale_n, a0=a0, b0=b0, c0=c0, **fields)


def params(info: Q.Infos, signed: bool = False) -> Q.ActParams:
    return Q.act_params(Q.read_infos(info.to_bytes(), signed))


# ---------------------------------------------------------------------------------------------
# Convolution, pooling, activation


def conv_reference(args: tuple, pad_type, inp, filt, bias, scale, scale_n, info: Q.Infos) -> np.ndarray:
    """CNN_ConvolutionPoolAct_SQ8 (args after Ctrl) in numpy: the accumulators, then the reduction
    with the activation, or the reduction, the pooling and what activation the pooling leaves."""
    (_, _, _, _, w, h, conv, fx, fy, dx, dy, sx, sy, cpad, pool, fpx, fpy, _, _, spx, spy, ppad, act) = args
    a, p = ACTS[act], params(info)
    pcw = CNN_TotalPaddingValue(w, fx, sx, dx) if cpad else 0
    pch = CNN_TotalPaddingValue(h, fy, sy, dy) if cpad else 0
    pad = CNN_EdgePaddingValue(pad_type, pcw, pch)
    acc = Q.conv_acc(inp, filt, bias, stride=(sx, sy), dilation=(dx, dy), pad=pad, depthwise=conv == KOP_CONV_DW,
                     norm_bias=info.scale)
    if pool == KOP_NONE:
        return Q.reduct(acc, scale, scale_n, a, p, info.prenorm)
    y = Q.reduct(acc, scale, scale_n, "none", p, info.prenorm)
    return pool_reference(y, pool, (fpx, fpy), (spx, spy), ppad, pad_type, a, info)


def conv_data(rng, bias_size: int, nin: int, nout: int, fshape: tuple, fan_in: int, act: str, h: int, w: int):
    """In, Filter, Bias, Scale, ScaleN, Infos drawn as NNTool would make them."""
    inp = int8(rng, (nin, h, w))
    filt = int8(rng, fshape)
    bias = rng.integers(-2000, 2000, size=nout).astype(BIAS_DTYPES[bias_size]) if bias_size > 1 else int8(rng, nout)
    prenorm = int(rng.integers(0, 3)) if rng.integers(0, 3) == 0 else 0
    scale, scale_n = channel_scales(rng, nout, fan_in, prenorm)
    info = act_infos(rng, act, True, scale=int(rng.integers(0, 3)), prenorm=prenorm)
    return inp, filt, bias, scale, scale_n, info


def conv_expected(layer: Layer, rng, tiling=None) -> tuple:
    bias_size, _, nin, nout, w, h, conv, fx, fy = layer.args[:9]
    dw = conv == KOP_CONV_DW
    fshape = (nout, fy, fx) if dw else (nout, nin, fy, fx)
    inp, filt, bias, scale, scale_n, info = conv_data(rng, bias_size, nin, nout, fshape, fx * fy * (1 if dw else nin),
                                                      ACTS[layer.args[-1]], h, w)
    out = conv_reference(layer.args, layer.ctrl.get("PADTYPE", PAD_BALANCED_LEFT), inp, filt, bias, scale, scale_n,
                         info)
    args = dict(In=inp, Filter=filt, Bias=bias, Scale=scale, ScaleN=scale_n, Infos=info.to_bytes().view(np.int8))
    return args, out


def group_expected(layer: Layer, rng, tiling=None) -> tuple:
    gi, go, bias_size, _, nin, nout, w, h, _, fx, fy = layer.args[:11]
    inp, filt, bias, scale, scale_n, info = conv_data(rng, bias_size, nin, nout, (nout, gi, fy, fx), fx * fy * gi,
                                                      ACTS[layer.args[-1]], h, w)
    body = (bias_size, 1, gi, go) + layer.args[6:]
    pad_type = layer.ctrl.get("PADTYPE", PAD_BALANCED_LEFT)
    out = np.concatenate([conv_reference(body, pad_type, inp[g * gi:(g + 1) * gi], filt[g * go:(g + 1) * go],
                                         bias[g * go:(g + 1) * go], scale[g * go:(g + 1) * go],
                                         scale_n[g * go:(g + 1) * go], info) for g in range(nin // gi)])
    args = dict(In=inp, Filter=filt, Bias=bias, Scale=scale, ScaleN=scale_n, Infos=info.to_bytes().view(np.int8))
    return args, out


def pool_reference(inp, pool, size, stride, ppad, pad_type, a, info: Q.Infos):
    """The pooling (its activation reads A0/B0/C0 signed), then the standalone activation (unsigned)
    for what the pooling does not fuse."""
    h, w = inp.shape[1:]
    pw = CNN_TotalPaddingValue(w, size[0], stride[0], 1) if ppad else 0
    ph = CNN_TotalPaddingValue(h, size[1], stride[1], 1) if ppad else 0
    pad = CNN_EdgePaddingValue(pad_type, pw, ph)
    kind = "max" if pool == KOP_MAXPOOL else "avg"
    if a in POOL_FUSED:
        return Q.pool(inp, kind, size, stride, pad, act=a, p=params(info, True), do_scale=a == "none")
    pooled = Q.pool(inp, kind, size, stride, pad, act="none", p=params(info, True), do_scale=False)
    return Q.activation(pooled, a, params(info))


def pool_expected(layer: Layer, rng, tiling=None) -> tuple:
    feat, w, h, pool, fpx, fpy, _, _, spx, spy, ppad, act = layer.args
    a = ACTS[act]
    inp = int8(rng, (feat, h, w))
    info = act_infos(rng, a, True)
    out = pool_reference(inp, pool, (fpx, fpy), (spx, spy), ppad, layer.ctrl.get("PADTYPE", PAD_BALANCED_LEFT), a,
                         info)
    return dict(In=inp, Infos=info.to_bytes().view(np.int8)), out


def act_expected(layer: Layer, rng, tiling=None) -> tuple:
    feat, w, h, act = layer.args
    a = ACTS[act]
    inp = int8(rng, (feat, h, w))
    info = act_infos(rng, a, True)
    return dict(In=inp, Infos=info.to_bytes().view(np.int8)), Q.activation(inp, a, params(info))


def scale_pair(rng, lo: float, hi: float, skip: bool = False) -> tuple:
    """(Scale, ScaleN) of a real scale in [lo, hi] (compute_scales); (0, 0) sometimes when skip."""
    if skip and rng.integers(0, 3) == 0:
        return 0, 0
    s, n = Q.compute_scales(rng.uniform(lo, hi))
    return int(s[0]), int(n[0])


def linear_expected(layer: Layer, rng, tiling=None) -> tuple:
    bias_size, _, in_dim, out_dim, _, act = layer.args
    a = ACTS[act]
    inp, w = int8(rng, in_dim), int8(rng, (out_dim, in_dim))
    bias = rng.integers(-2000, 2000, size=out_dim).astype(BIAS_DTYPES[bias_size]) if bias_size > 1 else int8(rng,
                                                                                                               out_dim)
    prenorm = int(rng.integers(0, 3)) if rng.integers(0, 3) == 0 else 0
    scale, scale_n = channel_scales(rng, out_dim, in_dim, prenorm)
    info = act_infos(rng, a, scale=int(rng.integers(0, 3)), prenorm=prenorm)
    if any(arg.name == "Reduct" for arg in tiling.args):
        # the input-tiled form: the original's SetBias + KerParLinearLayer + KerParReduct_CC
        acc = Q.wrap32(w.astype(np.int64) @ inp + Q.wrap32(bias.astype(np.int64) << info.scale))
        out = Q.reduct(acc, scale, scale_n, a, params(info), prenorm)
    else:
        out = Q.linear(inp, w, bias, scale, scale_n, norm_bias=info.scale, act=a, p=params(info, True))
    return dict(In=inp, Filter=w, Bias=bias, Scale=scale, ScaleN=scale_n, Infos=info.to_bytes().view(np.int8)), out


def matmul_expected(layer: Layer, rng, tiling=None) -> tuple:
    bias_size, _, col1, line1, col2, _, _, _, _, _, oper, act = layer.args
    a = ACTS[act]
    in1, in2 = int8(rng, (line1, col1)), int8(rng, (col1, col2))
    bias = rng.integers(-2000, 2000, size=line1).astype(BIAS_DTYPES[bias_size]) if bias_size > 1 else int8(rng,
                                                                                                             line1)
    scale, scale_n = channel_scales(rng, line1, col1)
    info = act_infos(rng, a, scale=int(rng.integers(0, 3)))
    args = dict(In1=in1, In2=in2, Scale=scale, ScaleN=scale_n, Infos=info.to_bytes().view(np.int8))
    if oper == KOP_MATMUL:
        args["Bias"] = bias
    else:
        bias = np.zeros(line1, dtype=np.int32)
    return args, Q.matmul(in1, in2, bias, scale, scale_n, norm_bias=info.scale, act=a, p=params(info, True))


def global_expected(layer: Layer, rng, tiling=None) -> tuple:
    feat, w, h, pool, act = layer.args
    a = ACTS[act]
    inp = int8(rng, (feat, h, w))
    s, n = scale_pair(rng, 0.4, 2.0)
    info = act_infos(rng, a, True, scale=s, scale_n=n + 7)
    kind = "max" if pool == KOP_GLOBAL_MAXPOOL else "avg"
    do_scale = a == "none"
    out = Q.global_pool(inp, kind, scale=info.scale, scale_n=info.scale_n,
                        act_scale=info.act_scale if do_scale else 0, act_scale_n=info.act_scale_n)
    if a != "none":
        out = Q.activation(out, a, params(info))
    # whole features: the kernel's In is [Feat][Width*Height]; passed flat (either form takes it)
    return dict(In=inp.ravel(), Infos=info.to_bytes().view(np.int8)), out.ravel()


def matadd_expected(layer: Layer, rng, tiling=None) -> tuple:
    feat, w, h, _, act = layer.args
    a = ACTS[act]
    in1, in2 = int8(rng, (feat, h, w)), int8(rng, (feat, h, w))
    (s1, n1), (so, no) = scale_pair(rng, 0.3, 2.0, skip=True), scale_pair(rng, 0.3, 1.0, skip=True)
    info = act_infos(rng, a, scale=s1, scale_n=n1, out_scale=so, out_scale_n=no)
    out = Q.matadd(in1, in2, in1_scale=s1, in1_scale_n=n1, out_scale=so, out_scale_n=no, act=a,
                   p=params(info, True))
    return dict(In1=in1, In2=in2, Infos=info.to_bytes().view(np.int8)), out


def tvm_expected(layer: Layer, rng, tiling=None) -> tuple:
    feat, w, h, _, act = layer.args
    a = ACTS[act]
    in1, in2 = int8(rng, (feat, h, w)), int8(rng, feat)
    s, n = scale_pair(rng, 0.3, 3.0, skip=True)
    s, n = (s, n + 7) if s else (0, 7)
    info = act_infos(rng, a, scale=s, scale_n=n)
    out = Q.tensor_vect_mult(in1, in2, scale=s, scale_n=n, act=a, p=params(info, True))
    return dict(In1=in1, In2=in2, Infos=info.to_bytes().view(np.int8)), out


def softmax_expected(layer: Layer, rng, tiling=None) -> tuple:
    dim, _ = layer.args
    inp = int8(rng, dim)
    info = Q.Infos(act_scale=int(rng.integers(8, 16)))            # AT_INF_BIASL_SM = byte 0: the Q15 shift
    return dict(In=inp, Infos=info.to_bytes().view(np.int8)), Q.softmax_q15(inp, info.act_scale)


EXPECTED = {CNN_SoftMax_SQ8: softmax_expected, CNN_ConvolutionPoolAct_SQ8: conv_expected, CNN_GroupedConvolutionPoolAct_SQ8: group_expected, CNN_PoolAct_SQ8: pool_expected, CNN_Act_SQ8: act_expected,
            CNN_LinearAct_SQ8: linear_expected, CNN_MatMulAct_SQ8: matmul_expected,
            CNN_GlobalPoolAct_SQ8: global_expected, CNN_MatAddAct_SQ8: matadd_expected,
            CNN_TensorVectMultAct_SQ8: tvm_expected}


def run_layer(prog, tilings, layer: Layer) -> None:
    args, expected = EXPECTED[layer.gen](layer, np.random.default_rng(layer.seed), tilings.get(layer.name))
    run(prog, tilings, layer, args, expected, expected.dtype)


def _fit(dim: int, f: int, s: int, d: int, pad: bool) -> int:
    ext = d * (f - 1) + 1
    while dim - ext + (CNN_TotalPaddingValue(dim, f, s, d) if pad else 0) < 0:
        dim += 1
    return dim


POOL_GEOMS = [(2, 2, 1, 1, 2, 2, 0), (3, 3, 1, 1, 2, 2, 1), (3, 2, 1, 1, 1, 2, 1), (2, 2, 1, 1, 1, 1, 1)]
BUDGETS = ["min", "min", 1500, 6000, 200_000]
PAD_TYPES = [PAD_BALANCED_LEFT, PAD_BALANCED_LEFT, PAD_BALANCED_RIGHT, PAD_LEFT, PAD_RIGHT]


@st.composite
def conv_layer(draw, index: int):
    conv = draw(st.sampled_from([KOP_CONV, KOP_CONV, KOP_CONV_DW]))
    fx, fy = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    sx, sy = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    dx, dy = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    cpad = draw(st.integers(0, 1))
    pool = draw(st.sampled_from([KOP_NONE, KOP_NONE, KOP_MAXPOOL, KOP_AVGPOOL]))
    pgeom = draw(st.sampled_from(POOL_GEOMS))
    act = draw(st.sampled_from(list(ACTS)))
    w = _fit(draw(st.integers(3, 18)), fx, sx, dx, cpad)
    h = _fit(draw(st.integers(3, 14)), fy, sy, dy, cpad)
    if pool != KOP_NONE:
        while True:
            wc, hc, *_ = CNN_LayerOutputDim(w, h, conv, fx, fy, dx, dy, sx, sy, cpad, KOP_NONE, 1, 1, 1, 1, 1, 1, 0)
            pw = CNN_TotalPaddingValue(wc, pgeom[0], pgeom[4], 1) if pgeom[6] else 0
            ph = CNN_TotalPaddingValue(hc, pgeom[1], pgeom[5], 1) if pgeom[6] else 0
            if wc + pw >= pgeom[0] and hc + ph >= pgeom[1]:
                break
            w, h = w + sx, h + sy
    nin = draw(st.integers(1, 6))
    nout = nin if conv == KOP_CONV_DW else draw(st.integers(1, 10))
    ctrl = {"TILEORIENTATION": draw(st.sampled_from([TILE_HOR, TILE_HOR, TILE_VER])),
            "PADTYPE": draw(st.sampled_from(PAD_TYPES))}
    args = (draw(st.sampled_from([1, 2, 4])), 1, nin, nout, w, h, conv, fx, fy, dx, dy, sx, sy, cpad, pool, *pgeom,
            act)
    return Layer(f"Conv{index}", CNN_ConvolutionPoolAct_SQ8, args, ctrl, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def group_layer(draw, index: int):
    conv = draw(conv_layer(index))
    gi, go, ngroups = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(2, 3))
    args = (gi, go, conv.args[0], 1, gi * ngroups, go * ngroups) + conv.args[4:6] + (KOP_CONV,) + conv.args[7:]
    # a kernel group cannot be re-declared after a failed tiling: no 'min' search, budgets that fit
    return Layer(f"Group{index}", CNN_GroupedConvolutionPoolAct_SQ8, args, conv.ctrl,
                 draw(st.sampled_from([6000, 200_000])), index)


@st.composite
def pool_layer(draw, index: int):
    pool = draw(st.sampled_from([KOP_MAXPOOL, KOP_AVGPOOL]))
    pgeom = draw(st.sampled_from(POOL_GEOMS + [(4, 3, 1, 1, 3, 2, 1), (1, 1, 1, 1, 1, 1, 0)]))
    w, h = draw(st.integers(4, 20)), draw(st.integers(4, 16))
    ctrl = {"TILEORIENTATION": draw(st.sampled_from([TILE_HOR, TILE_VER])), "PADTYPE": draw(st.sampled_from(PAD_TYPES))}
    args = (draw(st.integers(1, 12)), w, h, pool, *pgeom, draw(st.sampled_from(list(ACTS))))
    return Layer(f"Pool{index}", CNN_PoolAct_SQ8, args, ctrl, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def act_layer(draw, index: int):
    args = (draw(st.integers(1, 12)), draw(st.integers(1, 20)), draw(st.integers(1, 16)),
            draw(st.sampled_from(list(ACTS))))
    return Layer(f"Act{index}", CNN_Act_SQ8, args, {}, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def linear_layer(draw, index: int):
    args = (draw(st.sampled_from([1, 2, 4])), 1, draw(st.integers(1, 700)), draw(st.integers(1, 40)), KOP_LINEAR,
            draw(st.sampled_from(list(ACTS))))
    return Layer(f"Linear{index}", CNN_LinearAct_SQ8, args, {}, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def matmul_layer(draw, index: int):
    col1, line1, col2 = draw(st.integers(1, 40)), draw(st.integers(1, 12)), draw(st.integers(1, 60))
    wh = draw(st.sampled_from([(0, 0), (col2, 1), (1, col2)]))
    args = (draw(st.sampled_from([1, 2, 4])), 1, col1, line1, col2, col1, *wh, 1, 1,
            draw(st.sampled_from([KOP_MATMUL, KOP_MATMUL_NOBIAS])), draw(st.sampled_from(list(ACTS))))
    return Layer(f"MatMul{index}", CNN_MatMulAct_SQ8, args, {}, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def global_layer(draw, index: int):
    args = (draw(st.integers(1, 24)), draw(st.integers(1, 40)), draw(st.integers(1, 30)),
            draw(st.sampled_from([KOP_GLOBAL_MAXPOOL, KOP_GLOBAL_AVGPOOL])), draw(st.sampled_from(list(ACTS))))
    return Layer(f"Global{index}", CNN_GlobalPoolAct_SQ8, args, {}, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def matadd_layer(draw, index: int):
    args = (draw(st.integers(1, 12)), draw(st.integers(1, 20)), draw(st.integers(1, 16)), KOP_MATADD,
            draw(st.sampled_from([KOP_NONE, KOP_RELU, KOP_RELUN, KOP_HSIGMOID, KOP_HSWISH, KOP_LEAKYRELU])))
    ctrl = {"TILEORIENTATION": draw(st.sampled_from([TILE_HOR, TILE_VER]))}
    return Layer(f"MatAdd{index}", CNN_MatAddAct_SQ8, args, ctrl, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def tvm_layer(draw, index: int):
    args = (draw(st.integers(1, 12)), draw(st.integers(1, 20)), draw(st.integers(1, 16)), KOP_MATVECTMUL,
            draw(st.sampled_from(list(ACTS))))
    return Layer(f"TensorVect{index}", CNN_TensorVectMultAct_SQ8, args, {}, draw(st.sampled_from(BUDGETS)), index)


@st.composite
def softmax_layer(draw, index: int):
    return Layer(f"SoftMax{index}", CNN_SoftMax_SQ8, (draw(st.integers(1, 300)), KOP_SOFTMAX), {},
                 draw(st.sampled_from([1024, 200_000])), index)


@st.composite
def batches(draw, *kinds, n: int):
    """n layers, drawn from the strategies in turn."""
    return [draw(kinds[i % len(kinds)](i)) for i in range(n)]


@settings(max_examples=6, **SWEEP)
@given(layers=batches(conv_layer, pool_layer, act_layer, conv_layer, group_layer, n=15))
def test_conv_pool_act_sweep_bit_exact(tmp_path_factory, layers):
    prog, tilings = build(tmp_path_factory.mktemp("sweep"), layers)
    for layer in layers:
        run_layer(prog, tilings, layer)


@settings(max_examples=6, **SWEEP)
@given(layers=batches(linear_layer, matmul_layer, global_layer, matadd_layer, tvm_layer, softmax_layer, n=18))
def test_dense_sweep_bit_exact(tmp_path_factory, layers):
    prog, tilings = build(tmp_path_factory.mktemp("sweep"), layers)
    for layer in layers:
        run_layer(prog, tilings, layer)


def test_small_budgets_tile_and_stay_exact(tmp_path):
    """Layers forced into many tiles, and into the fallback forms (the input-tiled linear layer, the
    tiled-plane global pooling), bit-exact all the same."""
    conv = (4, 1, 5, 7, 23, 19, KOP_CONV, 3, 3, 1, 1, 1, 1, 1, KOP_AVGPOOL, 3, 3, 1, 1, 2, 2, 1, KOP_LEAKYRELU)
    dw = (1, 1, 9, 9, 17, 15, KOP_CONV_DW, 5, 3, 2, 1, 2, 1, 1, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELUN)
    layers = [Layer("Conv0", CNN_ConvolutionPoolAct_SQ8, conv, {}, 1200, 0),
              Layer("Dw1", CNN_ConvolutionPoolAct_SQ8, dw, {"TILEORIENTATION": TILE_VER}, "min", 1),
              Layer("Lin2", CNN_LinearAct_SQ8, (4, 1, 700, 13, KOP_LINEAR, KOP_RELU), {}, 600, 2),
              Layer("Lin3", CNN_LinearAct_SQ8, (1, 1, 333, 5, KOP_LINEAR, KOP_HSWISH), {}, "min", 3),
              Layer("Gap4", CNN_GlobalPoolAct_SQ8, (5, 40, 30, KOP_GLOBAL_AVGPOOL, KOP_RELU), {}, 1000, 4),
              Layer("Gmp5", CNN_GlobalPoolAct_SQ8, (9, 33, 21, KOP_GLOBAL_MAXPOOL, KOP_NONE), {}, "min", 5),
              Layer("MatMul6", CNN_MatMulAct_SQ8, (4, 1, 64, 32, 100, 64, 0, 0, 1, 1, KOP_MATMUL, KOP_RELU), {}, 1500,
                    6),
              Layer("MatAdd7", CNN_MatAddAct_SQ8, (6, 30, 20, KOP_MATADD, KOP_LEAKYRELU), {}, "min", 7),
              Layer("Tvm8", CNN_TensorVectMultAct_SQ8, (6, 30, 20, KOP_MATVECTMUL, KOP_RELUMN), {}, "min", 8),
              Layer("Pool9", CNN_PoolAct_SQ8, (7, 31, 17, KOP_AVGPOOL, 3, 3, 1, 1, 2, 2, 1, KOP_HSIGMOID), {}, "min",
                    9)]
    prog, tilings = build(tmp_path, layers)
    for layer in layers:
        assert tilings[layer.name].ntiles > 1, layer.name
        run_layer(prog, tilings, layer)
    forms = {n: {a.name for a in tilings[n].args} for n in ("Lin2", "Lin3", "Gap4", "Gmp5")}
    assert all("Reduct" in forms[n] for n in ("Lin2", "Lin3")) and all("Acc" in forms[n] for n in ("Gap4", "Gmp5"))


# ---------------------------------------------------------------------------------------------
# Typed errors


def raises(*fragments: str, kernel: str = "L"):
    """The error names this file, the line below the ``with`` (the generator call), the kernel, then
    the fragments."""
    at = inspect.stack()[1].positions.end_lineno + 1
    prefix = f"{THIS}:{at}: kernel '{kernel}': "
    return pytest.raises(ModelError, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments))


def conv_args(**kw) -> tuple:
    """CNN_ConvolutionPoolAct_SQ8's arguments after Ctrl (a 3x3 conv of 4 -> 8 features on 10x8)."""
    p = dict(Bias_DataSize=4, Scale_DataSize=1, InFeat=4, OutFeat=8, Width=10, Height=8, ConvOper=KOP_CONV, Fcx=3,
             Fcy=3, Dcx=1, Dcy=1, Scx=1, Scy=1, ConvPad=1, PoolOper=KOP_NONE, Fpx=2, Fpy=2, Dpx=1, Dpy=1, Spx=2,
             Spy=2, PoolPad=0, ActOper=KOP_RELU)
    p.update(kw)
    return tuple(p.values())


@pytest.fixture
def sq8_model():
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        yield


@pytest.mark.usefixtures("sq8_model")
def test_sigmoid_and_tanh_are_not_supported_yet():
    with raises("CNN_ConvolutionPoolAct_SQ8: ActOper KOP_SIGMOID with Scale_DataSize 1 is not supported yet",
                "SIGMOID_LUT_uint16", "use Scale_DataSize 4"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(ActOper=KOP_SIGMOID))
    with raises("CNN_Act_SQ8: ActOper KOP_TANH with Scale_DataSize 1 is not supported yet"):
        CNN_Act_SQ8("L", 0, 4, 5, 5, KOP_TANH)
    with raises("CNN_PoolAct_SQ8: ActOper KOP_SWISH is not an activation of the original's SQ8 kernels"):
        CNN_PoolAct_SQ8("L", 0, 4, 8, 8, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_SWISH)


@pytest.mark.usefixtures("sq8_model")
def test_conv_misuse():
    with raises("ConvOper KOP_CONV_DP is not a convolution of the original's SQ8 generator"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(ConvOper=KOP_CONV_DP))
    with raises("a depth wise convolution (KOP_CONV_DW) needs InFeat == OutFeat", "use KOP_CONV"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(ConvOper=KOP_CONV_DW))
    with raises("Bias_DataSize 3 is not supported: the bias is 1, 2 or 4 bytes"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(Bias_DataSize=3))
    with raises("the convolution filter (Fcx = 12, spanning 12) is larger than the padded width (10 + 0 of padding)",
                "ConvPad = 1"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(Fcx=12, ConvPad=0))
    with raises("the pooling window (Fpy = 9, spanning 9) is larger than the padded convolution output height"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(PoolOper=KOP_MAXPOOL, Fpy=9))
    with raises("a pooling dilation (Dpx 2, Dpy 1) is not supported yet with Scale_DataSize 1", "Dpx = Dpy = 1"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(PoolOper=KOP_AVGPOOL, Dpx=2))
    with raises("ConvOper KOP_NONE with InFeat 4 != OutFeat 8: without a convolution the features pass through"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(ConvOper=KOP_NONE))
    with raises("Scx (stride) must be at least 1, got 0"):
        CNN_ConvolutionPoolAct_SQ8("L", 0, *conv_args(Scx=0))


@pytest.mark.usefixtures("sq8_model")
def test_parallel_features_0_is_not_supported_yet():
    with raises("CNN_PoolAct_SQ8: ParallelFeatures 0 (one feature at a time, lines split over the cores) is not "
                "supported yet with Scale_DataSize 1", "leave ParallelFeatures unset"):
        CNN_PoolAct_SQ8("L", make_ctrl({"PARALLELFEATURES": 0}), 4, 8, 8, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_NONE)


@pytest.mark.usefixtures("sq8_model")
def test_generators_without_an_original_form_are_refused():
    hint = "has no 1-byte form in the original: use Scale_DataSize 4 (Ctrl SCALE_DATASIZE)"
    with raises("CNN_MatSubAct_SQ8: " + hint):
        CNN_MatSubAct_SQ8("L", 0, 4, 5, 5, KOP_NONE)
    with raises("CNN_MatEltMulAct_SQ8: " + hint):
        CNN_MatEltMulAct_SQ8("L", 0, 4, 5, 5, KOP_NONE)
    with raises("CNN_ConcatChannels_SQ8: " + hint):
        CNN_ConcatChannels_SQ8("L", 0, 5, 5, [2, 3])


def test_kernels_must_be_declared():
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        with raises("basic kernel 'Ker_ReLU_SQ8' is not declared", "call LoadCNN_SQ8_Library()"):
            CNN_Act_SQ8("L", 0, 4, 5, 5, KOP_RELU)


@pytest.mark.usefixtures("sq8_model")
def test_dense_misuse():
    with raises("CNN_GlobalPoolAct_SQ8: PoolOper KOP_GLOBAL_SUMPOOL is not supported yet with Scale_DataSize 1",
                "use KOP_GLOBAL_AVGPOOL"):
        CNN_GlobalPoolAct_SQ8("L", 0, 4, 5, 5, KOP_GLOBAL_SUMPOOL, KOP_NONE)
    with raises("PoolOper KOP_MAXPOOL is not a global pooling"):
        CNN_GlobalPoolAct_SQ8("L", 0, 4, 5, 5, KOP_MAXPOOL, KOP_NONE)
    with raises("CNN_LinearAct_SQ8: LinearOper KOP_MATMUL is not KOP_LINEAR"):
        CNN_LinearAct_SQ8("L", 0, 4, 1, 16, 8, KOP_MATMUL, KOP_NONE)
    with raises("CNN_MatAddAct_SQ8: ActOper KOP_RELUM after a MatAdd has no kernel in the original's SQ8 library",
                "CNN_Act_SQ8 after the add"):
        CNN_MatAddAct_SQ8("L", 0, 4, 5, 5, KOP_MATADD, KOP_RELUM)
    with raises("AddMatOper KOP_MATMUL is not KOP_MATADD"):
        CNN_MatAddAct_SQ8("L", 0, 4, 5, 5, KOP_MATMUL, KOP_NONE)
    with raises("CNN_TensorVectMultAct_SQ8: MatOper KOP_MATADD is not KOP_MATVECTMUL"):
        CNN_TensorVectMultAct_SQ8("L", 0, 4, 5, 5, KOP_MATADD, KOP_NONE)
    with raises("CNN_SoftMax_SQ8: SoftMaxOper KOP_MATADD is not KOP_SOFTMAX"):
        CNN_SoftMax_SQ8("L", 0, 10, KOP_MATADD)


@pytest.mark.usefixtures("sq8_model")
def test_matmul_misuse():
    with raises("CNN_MatMulAct_SQ8: ColM1 8 != LineM2 9", "needs ColM1 == LineM2"):
        CNN_MatMulAct_SQ8("L", 0, 4, 1, 8, 4, 16, 9, 0, 0, 1, 1, KOP_MATMUL, KOP_NONE)
    with raises("Width x Height = 3 x 3 is not ColM2 16"):
        CNN_MatMulAct_SQ8("L", 0, 4, 1, 8, 4, 16, 8, 3, 3, 1, 1, KOP_MATMUL, KOP_NONE)
    with raises("strides (Scx 2, Scy 1) are not supported yet with Scale_DataSize 1", "use Scx = Scy = 1"):
        CNN_MatMulAct_SQ8("L", 0, 4, 1, 8, 4, 16, 8, 4, 4, 2, 1, KOP_MATMUL, KOP_NONE)
    with raises("MatMulOper KOP_MATMUL_TRANSPOSED is not supported yet with Scale_DataSize 1"):
        CNN_MatMulAct_SQ8("L", 0, 4, 1, 8, 4, 16, 8, 0, 0, 1, 1, KOP_MATMUL_TRANSPOSED, KOP_NONE)
    with raises("MatMulOper KOP_LINEAR is not a matrix product"):
        CNN_MatMulAct_SQ8("L", 0, 4, 1, 8, 4, 16, 8, 0, 0, 1, 1, KOP_LINEAR, KOP_NONE)


@pytest.mark.usefixtures("sq8_model")
def test_grouped_conv_misuse():
    with raises("CNN_GroupedConvolutionPoolAct_SQ8: cannot divide InFeat 4 / OutFeat 8 into groups of GroupIn 3"):
        CNN_GroupedConvolutionPoolAct_SQ8("L", 0, 3, 2, *conv_args())
    with raises("ConvOper KOP_CONV_DW is not KOP_CONV (the original's grouped convolution)"):
        CNN_GroupedConvolutionPoolAct_SQ8("L", 0, 2, 4, *conv_args(ConvOper=KOP_CONV_DW))


# ---------------------------------------------------------------------------------------------
# A model script as the original's users write it


def small_net_model() -> None:
    """A small CHW int8 network, layer by layer with the original's generators and arguments."""
    SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
    SetGeneratedFilesNames("SmallNetKernels.c", "SmallNetKernels.h")
    SetL1MemorySize(2500)
    LoadCNN_SQ8_Library()
    CNN_ConvolutionPoolAct_SQ8("Conv0", 0, 4, 1, 2, 8, 20, 16, KOP_CONV, 3, 3, 1, 1, 1, 1, 1,
                               KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
    CNN_ConvolutionPoolAct_SQ8("Dw1", 0, 2, 1, 8, 8, 10, 8, KOP_CONV_DW, 3, 3, 1, 1, 1, 1, 1,
                               KOP_NONE, 1, 1, 1, 1, 1, 1, 0, KOP_RELUN)
    CNN_ConvolutionPoolAct_SQ8("Pw2", 0, 4, 1, 8, 16, 10, 8, KOP_CONV, 1, 1, 1, 1, 1, 1, 0,
                               KOP_AVGPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_HSWISH)
    CNN_TensorVectMultAct_SQ8("Se3", 0, 16, 5, 4, KOP_MATVECTMUL, KOP_NONE)
    CNN_MatAddAct_SQ8("Add4", 0, 16, 5, 4, KOP_MATADD, KOP_RELU)
    CNN_ConvolutionPoolAct_SQ8("Pool5", 0, 4, 1, 16, 16, 5, 4, KOP_NONE, 1, 1, 1, 1, 1, 1, 0,
                               KOP_MAXPOOL, 2, 2, 1, 1, 1, 1, 1, KOP_NONE)
    CNN_GlobalPoolAct_SQ8("Gap6", 0, 16, 5, 4, KOP_GLOBAL_AVGPOOL, KOP_NONE)
    CNN_LinearAct_SQ8("Fc7", 0, 4, 1, 16, 10, KOP_LINEAR, KOP_NONE)
    CNN_SoftMax_SQ8("Softmax8", 0, 10, KOP_SOFTMAX)


def test_small_net_model_script(tmp_path):
    with Model(PLATFORM) as m:
        small_net_model()
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(tmp_path))
    prog = host_harness.build(tmp_path, sources=SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    assert tilings["Conv0"].ntiles > 1 and tilings["Dw1"].ntiles > 1       # 2500 B of L1: tiled
    rng = np.random.default_rng(7)
    x = int8(rng, (2, 16, 20))

    def call(name, ref, **args):
        out = np.full(ref.shape, SENTINEL, dtype=ref.dtype)
        counters = prog.call(name, Out=out, **args)
        np.testing.assert_array_equal(out, ref, err_msg=name)
        assert counters["cycles"] == tilings[name].predicted.cycles, name
        return out

    def conv(name, x, nout, fx, dw, pad, pool, pool_pad, act, stride=2, bias_size=4):
        nin, h, w = x.shape
        fshape = (nout, fx, fx) if dw else (nout, nin, fx, fx)
        _, filt, bias, scale, scale_n, info = conv_data(rng, bias_size, nin, nout, fshape, fx * fx * (1 if dw else nin),
                                                        ACTS[act], h, w)
        args = (bias_size, 1, nin, nout, w, h, KOP_CONV_DW if dw else KOP_CONV, fx, fx, 1, 1, 1, 1, pad, pool, 2, 2, 1, 1,
                stride, stride, pool_pad, act)
        ref = conv_reference(args, PAD_BALANCED_LEFT, x, filt, bias, scale, scale_n, info)
        return call(name, ref, In=x, Filter=filt, Bias=bias, Scale=scale, ScaleN=scale_n,
                    Infos=info.to_bytes().view(np.int8))

    y = conv("Conv0", x, 8, 3, False, 1, KOP_MAXPOOL, 0, KOP_RELU)
    y = conv("Dw1", y, 8, 3, True, 1, KOP_NONE, 0, KOP_RELUN, bias_size=2)
    y = conv("Pw2", y, 16, 1, False, 0, KOP_AVGPOOL, 0, KOP_HSWISH)
    v = int8(rng, 16)
    info = Q.Infos(scale=0, scale_n=7)
    se = call("Se3", Q.tensor_vect_mult(y, v, scale=0, scale_n=7), In1=y, In2=v, Infos=info.to_bytes().view(np.int8))
    info = Q.Infos(act_scale=1, scale=3, scale_n=2, out_scale=1, out_scale_n=1)
    y = call("Add4", Q.matadd(se, y, in1_scale=3, in1_scale_n=2, out_scale=1, out_scale_n=1, act="relu",
                              p=params(info, True)),
             In1=se, In2=y, Infos=info.to_bytes().view(np.int8))
    info = Q.Infos(act_scale=1)
    pad = CNN_EdgePaddingValue(PAD_BALANCED_LEFT, CNN_TotalPaddingValue(5, 2, 1, 1), CNN_TotalPaddingValue(4, 2, 1, 1))
    y = call("Pool5", Q.pool(y, "max", (2, 2), (1, 1), pad, p=params(info)), In=y,
             Infos=info.to_bytes().view(np.int8))
    info = Q.Infos(scale=1, scale_n=7)
    g = call("Gap6", Q.global_pool(y, "avg", scale=1, scale_n=7).ravel(), In=y.ravel(),
             Infos=info.to_bytes().view(np.int8))
    w, b = int8(rng, (10, 16)), rng.integers(-500, 500, size=10).astype(np.int32)
    scale, scale_n = channel_scales(rng, 10, 16)
    info = Q.Infos(act_scale=1)
    f = call("Fc7", Q.linear(g, w, b, scale, scale_n), In=g, Filter=w, Bias=b, Scale=scale, ScaleN=scale_n,
             Infos=info.to_bytes().view(np.int8))
    info = Q.Infos(act_scale=12)
    p = call("Softmax8", Q.softmax_q15(f, 12), In=f, Infos=info.to_bytes().view(np.int8))
    assert abs(int(p.astype(np.int64).sum()) - 32767) < 40      # Q15 probabilities
