"""``LoadCNNLibrary()``: the CNN basic kernels (16-bit "_fp", 8-bit "_fps") declared with the
original's names, argument structs and field order.

Call it inside a model, after ``SetUsedFilesNames(0, 1, CNN_HEADER, ...)``; build the generated
code with ``sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR]``. Each struct is declared once
with ``LibKernelTemplate`` (its C fields, in order: the order of the original generator's templates,
which its ``Bindings`` follow) and each kernel with ``LibKernel(Name, CALL_PARALLEL, 0, Struct,
Cost=...)``. Semantics: ``docs/cnn-fixed-point.md``.

Costs (cycles of one call, per core, which the simulator charges):

* Measured (gap_sdk ``benchmarks/gap8/cnn/README.md``, GAPuino, 8 cores, byte data, cycles per
  iteration = printed total / 100):

  - 5x5 convolution, 112x112 input, one 108x108 output plane (291 600 MAC): 22 813 cycles parallel
    with vectors (12.8 MAC/cycle, 1.6 MAC/cycle per core), 177 410 single core with vectors,
    922 413 single core scalar (0.32 MAC/cycle);
  - 2x2/2 max pooling of 112x112 (3 136 outputs): 3 556 cycles parallel with vectors, i.e. 9.1
    cycles per output per core, 2.27 per window tap (average pooling: 3 323);
  - linear layer 1024 inputs x 16 outputs (16 384 MAC): 2 235 cycles parallel with vectors
    (7.3 MAC/cycle, 0.92 per core), 57 651 single core scalar.

  Convolutions charge 5 cycles per 8 MAC per core (fps), pooling 9 cycles per 4 taps, linear
  layers 12 cycles per 11 MAC (fps).
* Assumptions: 16-bit data run half as fast as bytes in the vector units (2 lanes instead of 4),
  so the fp convolutions and linear layers charge twice the fps cycles (pooling the same); output
  counts are taken as ceil(UsedW/S) x ceil(UsedH/Sy) (exact for "same" padding, the Pad vector
  cannot appear in a Cost); set bias: one 32-bit store per cycle; DP reduction: 5 cycles per item
  (load, rounded shift, max, min, store), more for the activations (hsigmoid 7, leaky 6, sigmoid and
  tanh 8, hswish 10, swish 14), the in-place forms 1 cycle per 4 bytes moved more; softmax: 45
  cycles per item (the exponential's 8-term series); matrix addition: 3 cycles per item; global
  pooling: 1 cycle per item; 20 cycles of fork and barrier per call (30 with a reduction).
"""

from __future__ import annotations

from pathlib import Path

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL, CALL_SEQUENTIAL_STRUCT

CNN_KERNELS_DIR = Path(__file__).resolve().parent / "cnn_kernels"
CNN_HEADER = "CNN_BasicKernels.h"
CNN_SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_BiasReLULinear_BasicKernels.c", "CNN_Conv_BasicKernels.c",
                                              "CNN_Pooling_BasicKernels.c", "CNN_SoftMax.c", "CNN_MatAlgebra.c")]

_SP = {"fp": "short int", "fps": "signed char"}
_P = " * __restrict__"


def _template(name: str, fields: list) -> None:
    LibKernelTemplate(name, CArgs(len(fields), *[TCArg(t, n) for t, n in fields]))


def _templates() -> None:
    for s, t in _SP.items():
        _template(f"KerSetBias_{s}_T", [(t + _P, "Out"), ("unsigned short int", "W"), ("unsigned short int", "H"),
                                        ("unsigned short int", "OutFeatures"), (t + _P, "Bias"),
                                        ("signed char", "NormBias")])
        _template(f"KerSetBias_fpd_{s}_T", [("int" + _P, "Out"), ("unsigned short int", "W"),
                                            ("unsigned short int", "H"), ("unsigned short int", "OutFeatures"),
                                            (t + _P, "Bias"), ("signed char", "NormBias")])
        for name, out in ((f"KerConv_{s}_T", t), (f"KerConv_DP_{s}_T", "int")):
            _template(name, [(t + _P, "In"), ("unsigned short int", "W"), ("unsigned short int", "UsedW"),
                             ("unsigned short int", "H"), ("unsigned short int", "UsedH"),
                             ("unsigned short int", "InFeatures"), ("unsigned short int", "OutFeatures"),
                             (t + _P, "Filter"), (t + _P, "Bias"), (out + _P, "Out"), ("unsigned char", "Norm"),
                             ("short int", "TotalInFeatures"), ("v4s", "Pad"), ("unsigned char", "Orientation"),
                             ("unsigned char", "N"), ("unsigned char", "S"), ("unsigned char", "D"),
                             ("unsigned char", "Ny"), ("unsigned char", "Sy"), ("unsigned char", "Dy")])
        _template(f"KerDP_{s}_T", [("int" + _P, "In"), ("unsigned short int", "W"), ("unsigned short int", "H"),
                                   (t + _P, "Out"), ("unsigned char", "Norm"), ("signed char", "NormBias"),
                                   ("unsigned short int", "InFeatures"), ("int", "LB"), ("int", "UB"),
                                   (t + _P, "MulBias")])
        _template(f"KerReLUPool_{s}_T", [(t + _P, "In"), ("unsigned short int", "W"), ("unsigned short int", "UsedW"),
                                         ("unsigned short int", "H"), ("unsigned short int", "UsedH"),
                                         ("unsigned short int", "OutFeatures"), (t + _P, "Out"), ("v4s", "Pad"),
                                         ("unsigned char", "M"), ("unsigned char", "S"),
                                         ("unsigned char", "Orientation"), ("unsigned char", "Oper"),
                                         ("unsigned char", "D"), ("unsigned char", "My"), ("unsigned char", "Sy"),
                                         ("unsigned char", "Dy"), ("int", "LB"), ("int", "UB")])
        _template(f"KerGlobalPoolDP_{s}_T", [(t + _P, "In"), ("unsigned short int", "W"), ("unsigned short int", "H"),
                                             ("unsigned short int", "OutFeatures"),
                                             ("unsigned short int", "TileIndex"), ("int" + _P, "Out")])
        _template(f"KerGlobalPoolDPReduct_{s}_T", [("int" + _P, "In"), ("unsigned short int", "W"),
                                                   ("unsigned short int", "H"), ("unsigned short int", "OutFeatures"),
                                                   ("unsigned char", "Norm"), (t + _P, "Out")])
        _template(f"KerGlobalPool_{s}_T", [(t + _P, "In"), ("unsigned short int", "W"), ("unsigned short int", "H"),
                                           ("unsigned short int", "OutFeatures"), ("unsigned char", "Norm"),
                                           (t + _P, "Out")])
        _template(f"KerDPLinearLayerReduct_{s}_T", [("int" + _P, "In"), (t + _P, "Bias"), (t + _P, "Out"),
                                                    ("int", "LB"), ("int", "UB"), ("signed char", "Norm"),
                                                    ("signed char", "NormBias"), ("char", "Oper")])
        _template(f"KerMat3_{s}_T", [(t + _P, "In1"), (t + _P, "In2"), (t + _P, "Out"), ("unsigned short int", "W"),
                                     ("unsigned short int", "H"), ("unsigned short int", "N"), ("int", "LB"),
                                     ("int", "UB"), ("unsigned char", "In1_Q"), ("unsigned char", "In2_Q"),
                                     ("unsigned char", "Out_Q")])
        _template(f"KerSoftMax_{s}_T", [(t + _P, "In"), ("unsigned short int", "N"), ("unsigned short int", "Norm"),
                                        ("short int" + _P, "Out")])
    for name, (ti, tf, tb, to) in LINEAR_TYPES.items():
        _template(name, [(ti + _P, "In"), ("unsigned short int", "InSize"), ("unsigned short int", "TotalInSize"),
                         ("unsigned short int", "OutSize"), (tf + _P, "Filter"), (tb + _P, "Bias"), (to + _P, "Out"),
                         ("unsigned char", "Norm"), ("signed char", "NormBias"), ("int", "LB"), ("int", "UB")])
    for name, (ti, tf) in {"KerDPLinearLayer_fp_T": ("short int", "short int"),
                           "KerDPLinearLayer_fp_fps_T": ("short int", "signed char"),
                           "KerDPLinearLayer_fps_T": ("signed char", "signed char")}.items():
        _template(name, [(ti + _P, "In"), (tf + _P, "Filter"), ("int" + _P, "Out"), ("unsigned short int", "InSize"),
                         ("unsigned char", "Tile")])


LINEAR_TYPES = {
    "KerLinearLayerReLU_fp_T": ("short int", "short int", "short int", "short int"),
    "KerLinearLayerReLU_fps_T": ("signed char", "signed char", "signed char", "signed char"),
    "KerLinearLayerReLU_fp_fps_fp_T": ("short int", "signed char", "short int", "short int"),
    "KerLinearLayerReLU_fps_fps_fp_T": ("signed char", "signed char", "short int", "short int"),
    "KerLinearLayerReLU_fps_fps_fpd_T": ("signed char", "signed char", "signed char", "int"),
    "KerLinearLayerReLU_fp_fp_fpd_T": ("short int", "short int", "short int", "int"),
}

# The original's fixed-geometry convolution names: (suffix, N, Ny, S, Sy); None keeps the argument
CONV_GEOMETRIES = [
    ("1x1Stride1", 1, 1, 1, 1), ("1x1Stride2", 1, 1, 2, 2), ("1x1StrideS", 1, 1, None, "S"),
    ("3x1Stride1x1", 3, 1, 1, 1), ("3x1Stride2x1", 3, 1, 2, 1), ("1x3Stride1x1", 1, 3, 1, 1),
    ("1x3Stride1x2", 1, 3, 1, 2), ("3x3Stride1", 3, 3, 1, 1), ("3x3Stride2", 3, 3, 2, 2),
    ("3x3StrideS", 3, 3, None, "S"), ("5x1Stride1x1", 5, 1, 1, 1), ("5x1Stride2x1", 5, 1, 2, 1),
    ("1x5Stride1x1", 1, 5, 1, 1), ("1x5Stride1x2", 1, 5, 1, 2), ("5x5Stride1", 5, 5, 1, 1),
    ("5x5Stride2", 5, 5, 2, 2), ("5x5StrideS", 5, 5, None, "S"), ("7x7StrideS", 7, 7, None, "S"),
    ("NxNStrideS", None, "N", None, "S"), ("NxMStrideSxSy", None, None, None, None),
    ("NxMDxDyStrideSxSy", None, None, None, None),
]

# (prefix, suffix, struct, regular (sums InFeatures inputs) or depth wise, feature-parallel)
CONV_FAMILIES = [
    (pre, post, struct, dw, par)
    for par, p in ((True, "KerParConv"), (False, "KerConv"))
    for pre, post, struct, dw in (
        (p, "_fp", "KerConv_fp_T", False), (p, "_fps", "KerConv_fps_T", False),
        (p, "_DP_fp", "KerConv_DP_fp_T", False), (p, "_DP_fps", "KerConv_DP_fps_T", False),
        (p + "DW", "_fp", "KerConv_fp_T", True), (p + "DW", "_fps", "KerConv_fps_T", True),
        (p + "DWDP", "_fp", "KerConv_DP_fp_T", True), (p + "DWDP", "_fps", "KerConv_DP_fps_T", True))
]

DP_ACTIVATIONS = {"": 5, "_hsigmoid": 7, "_hswish": 10, "_leakyrelu": 6, "_sigmoid": 8, "_tanh": 8, "_swish": 14}


def _conv_cost(geom, dw: bool, par: bool, byte: bool) -> str:
    _, n, ny, s, sy = geom
    n = "N" if n is None else str(n)
    ny = {None: "Ny", "N": n}.get(ny, str(ny))
    s = "S" if s is None else str(s)
    sy = {None: "Sy", "S": s}.get(sy, str(sy))
    wo, ho = f"((UsedW + {s} - 1)/{s})", f"((UsedH + {sy} - 1)/{sy})"
    feats = "" if dw else "InFeatures*"
    if par:
        macs = f"((OutFeatures + ncores - 1)/ncores)*{feats}{wo}*{ho}*{n}*{ny}"
    else:
        macs = f"{'' if dw else 'InFeatures*'}{wo}*(({ho} + ncores - 1)/ncores)*{n}*{ny}"
    return f"5*{macs}/{8 if byte else 4} + 20"


def LoadCNNLibrary() -> None:
    """Declare every CNN basic kernel (templates, then kernels) in the current model."""
    _templates()
    for s, size in (("fp", 2), ("fps", 1)):
        stores = {"fp": "/2", "fps": "/4"}[s]
        LibKernel(f"KerParSetBias_{s}", CALL_PARALLEL, 0, f"KerSetBias_{s}_T",
                  Cost=f"((OutFeatures + ncores - 1)/ncores)*W*H{stores} + 20")
        LibKernel(f"KerParSetBias_DP_{s}", CALL_PARALLEL, 0, f"KerSetBias_fpd_{s}_T",
                  Cost="((OutFeatures + ncores - 1)/ncores)*W*H + 20")
        LibKernel(f"KerSetBias_{s}", CALL_PARALLEL, 0, f"KerSetBias_{s}_T", Cost=f"((W*H + ncores - 1)/ncores){stores} + 20")
        LibKernel(f"KerSetBias_DP_{s}", CALL_PARALLEL, 0, f"KerSetBias_fpd_{s}_T", Cost="(W*H + ncores - 1)/ncores + 20")

        for act, cycles in DP_ACTIVATIONS.items():
            items = "((W*H*InFeatures + ncores - 1)/ncores)"
            LibKernel(f"KerDP{act}_{s}", CALL_PARALLEL, 0, f"KerDP_{s}_T", Cost=f"{cycles}*{items} + 20")
            LibKernel(f"KerDP_IO{act}_{s}", CALL_PARALLEL, 0, f"KerDP_{s}_T",
                      Cost=f"{cycles}*{items} + {items}*{size}/4 + 20*ncores")

        pool = f"KerReLUPool_{s}_T"
        for name, cycles in (("ReLU", 2), ("Hswish", 10), ("Hsigmoid", 7), ("Leakyrelu", 6)):
            LibKernel(f"KerPar{name}_{s}", CALL_PARALLEL, 0, pool,
                      Cost=f"{cycles}*((OutFeatures + ncores - 1)/ncores)*W*H + 20")
        LibKernel(f"KerReLU_{s}", CALL_PARALLEL, 0, pool, Cost="2*((W*H + ncores - 1)/ncores) + 20")
        for geom, m, st in (("2x2Stride2", "2", "2"), ("NxNStrideS", "M", "S"), ("NxMStrideSxSy", "M", "S")):
            my, sy = ("My", "Sy") if geom == "NxMStrideSxSy" else (m, st)
            wo, ho = f"((UsedW + {st} - 1)/{st})", f"((UsedH + {sy} - 1)/{sy})"
            LibKernel(f"KerParPool{geom}_{s}", CALL_PARALLEL, 0, pool,
                      Cost=f"9*((OutFeatures + ncores - 1)/ncores)*{wo}*{ho}*{m}*{my}/4 + 20")
            LibKernel(f"KerPool{geom}_{s}", CALL_PARALLEL, 0, pool,
                      Cost=f"9*{wo}*(({ho} + ncores - 1)/ncores)*{m}*{my}/4 + 20")

        for kind in ("Max", "Avg"):
            LibKernel(f"KerParGlobal{kind}PoolDP_{s}", CALL_PARALLEL, 0, f"KerGlobalPoolDP_{s}_T",
                      Cost="((OutFeatures + ncores - 1)/ncores)*W*H + 20")
            LibKernel(f"KerParGlobal{kind}PoolDPReduct_{s}", CALL_PARALLEL, 0, f"KerGlobalPoolDPReduct_{s}_T",
                      Cost="5*((OutFeatures + ncores - 1)/ncores) + 20")
            LibKernel(f"KerParGlobal{kind}PoolFullFeat_{s}", CALL_PARALLEL, 0, f"KerGlobalPool_{s}_T",
                      Cost="((OutFeatures + ncores - 1)/ncores)*W*H + 20")

        rate = "12/11" if s == "fps" else "24/11"
        linear = f"((OutSize + ncores - 1)/ncores)*InSize*{rate} + 20"
        for name in ("ReLU", "Hswish", "Hsigmoid"):
            LibKernel(f"KerParLinearLayer{name}_{s}", CALL_PARALLEL, 0, f"KerLinearLayerReLU_{s}_T", Cost=linear)
        LibKernel(f"KerDPLinearLayer_{s}", CALL_PARALLEL, 0, f"KerDPLinearLayer_{s}_T",
                  Cost=f"((InSize + ncores - 1)/ncores)*{rate} + 20")
        LibKernel(f"KerDPLinearLayerReduct_{s}", CALL_SEQUENTIAL_STRUCT, 0, f"KerDPLinearLayerReduct_{s}_T",
                  Cost="2*ncores + 20")

        for name in ("MatAdd", "MatAddReLU", "MatAddDynAdjust"):
            LibKernel(f"KerPar{name}_{s}", CALL_PARALLEL, 0, f"KerMat3_{s}_T",
                      Cost="3*((N + ncores - 1)/ncores)*W*H + 20")
        LibKernel(f"KerParSoftMax_{s}", CALL_PARALLEL, 0, f"KerSoftMax_{s}_T", Cost="45*((N + ncores - 1)/ncores) + 30")

    for name in ("fp_fps_fp", "fps_fps_fp", "fps_fps_fpd", "fp_fp_fpd"):
        rate = "12/11" if name.startswith("fps") else "24/11"
        LibKernel(f"KerParLinearLayerReLU_{name}", CALL_PARALLEL, 0, f"KerLinearLayerReLU_{name}_T",
                  Cost=f"((OutSize + ncores - 1)/ncores)*InSize*{rate} + 20")
    LibKernel("KerDPLinearLayer_fp_fps", CALL_PARALLEL, 0, "KerDPLinearLayer_fp_fps_T",
              Cost="((InSize + ncores - 1)/ncores)*24/11 + 20")

    for pre, post, struct, dw, par in CONV_FAMILIES:
        byte = post.endswith("fps")
        for geom in CONV_GEOMETRIES:
            LibKernel(f"{pre}{geom[0]}{post}", CALL_PARALLEL, 0, struct, Cost=_conv_cost(geom, dw, par, byte))


def conv_kernel_names() -> list:
    """Every convolution kernel name LoadCNNLibrary declares."""
    return [f"{pre}{g[0]}{post}" for pre, post, _, _, _ in CONV_FAMILIES for g in CONV_GEOMETRIES]
