"""The SQ8 basic kernels of the original's 1-byte requantisation (CHW): ``SOURCES`` (in ``cnn_kernels/``)
and ``load()``, which declares their structs (``LibKernelTemplate``, the fields of
``CNN_SQ8_Original.h`` in order) and kernels (``LibKernel`` with their ``Cost=``) in the current
model. Called by ``LoadCNN_SQ8_Library()``. Semantics: ``docs/cnn-sq8-original.md``.

Costs (cycles of one call, per core):

* Measured (gap_sdk ``benchmarks/gap8/cnn/README.md``, GAPuino, 8 cores, byte data, as cited in
  :mod:`.cnn_library`): a 5x5 convolution runs 1.6 MAC/cycle per core with the vector unit, so
  the convolutions charge 5 cycles per 8 MAC per core; 2x2/2 pooling 2.27 cycles per window tap
  (9 per 4 taps); a linear layer 0.92 MAC/cycle per core (12 cycles per 11 MAC, the input-tiled form too).
* Assumptions: output counts ceil(UsedW/S) x ceil(UsedH/Sy) (the Pad vector cannot appear in a
  Cost); set bias one 32-bit store per cycle; the reduction 6 cycles per item (load, rounded
  shift, byte multiply, rounded shift, clip, store), 4 more for the activations with a second
  scaling; the input-tiled linear layer's sequential reduction 2 cycles per core's partial sum and
  10 more; the in-place reduction one more cycle per 4 bytes moved by core 0; a standalone
  activation 4 cycles per item plus the activation's extra; MatAdd 7 per item (two loads, two
  scalings, add, clip, store), tensor x vector 6; the matrix product 2 cycles per MAC (a strided
  column of In2 cannot use the vector unit); global pooling one cycle per item and 6-8 per feature; softmax 45 cycles per item (the
  exponential's 8-term series, as :mod:`.cnn_library`'s); 20 cycles of fork and
  barrier per call (30 with two barriers).
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL, CALL_SEQUENTIAL_STRUCT
from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_SQ8_Orig_Conv.c", "CNN_SQ8_Orig_Pool.c", "CNN_SQ8_Orig_Linear.c",
                                         "CNN_SQ8_Orig_MatAlgebra.c", "CNN_SQ8_Orig_SoftMax.c")]

_P = " * __restrict__"
_SC, _UC, _US, _I = "signed char" + _P, "unsigned char" + _P, "unsigned short int", "int" + _P
# Where the Cost= figures come from (the module's documentation): gap_sdk's own SQ8 library, which
# these kernels mirror, declares no cost (its LibKernel calls carry a CNN_Match:
# tools/autotiler_v3/CNN_Generators_SQ8/CNN_Generators_SQ8.c), so they are GAP8's measured rates
# (gap_sdk benchmarks/gap8/cnn/README.md, "Parallel Vector": 5x5 convolution 22813 cycles for
# 291600 MAC, linear 1024x16 2235 cycles, 2x2/2 max pooling 3556 cycles for 3136 outputs, all on 8
# cores) and the assumptions listed there.
# activation name (in the kernel names) -> extra cycles per item over the plain reduction
ACTS = {"ActNone": 0, "ReLU": 1, "ReLUN": 1, "ReLUM": 1, "ReLUMN": 2, "HSigmoid": 4, "HSwish": 5, "LeakyReLU": 5}
POOL_ACTS = ("ActNone", "ReLU", "ReLUN")
MATADD_ACTS = ("ActNone", "ReLU", "ReLUN", "HSigmoid", "HSwish", "LeakyReLU")
BIAS_NAMES = {1: "B8", 2: "B16", 4: "B32"}
_FEAT = "((Feat + ncores - 1)/ncores)"


def _template(name: str, fields: list) -> None:
    LibKernelTemplate(name, CArgs(len(fields), *[TCArg(t, n) for t, n in fields]))


def _templates() -> None:
    _template("KerSetBias_SQ8_T", [(_I, "Out"), (_US, "W"), (_US, "H"), (_US, "Feat"), ("void" + _P, "Bias"),
                                   (_SC, "Infos")])
    _template("KerConv_SQ8_T", [(_SC, "In"), (_US, "W"), (_US, "UsedW"), (_US, "H"), (_US, "UsedH"),
                                (_US, "InFeatures"), (_US, "OutFeatures"), (_US, "TotalInFeatures"), (_SC, "Filter"),
                                ("void" + _P, "Bias"), (_I, "Out"), ("v4s", "Pad"), (_SC, "Infos"),
                                ("unsigned char", "Orientation"), ("unsigned char", "N"), ("unsigned char", "S"),
                                ("unsigned char", "D"), ("unsigned char", "Ny"), ("unsigned char", "Sy"),
                                ("unsigned char", "Dy")])
    _template("KerConvLinReduct_SQ8_T", [(_I, "In"), (_SC, "Out"), (_US, "Feat"), (_US, "W"), (_US, "H"),
                                         (_UC, "Scale"), (_SC, "ScaleN"), (_SC, "Infos")])
    _template("KerPool_SQ8_T", [(_SC, "In"), (_US, "W"), (_US, "UsedW"), (_US, "H"), (_US, "UsedH"), (_US, "Feat"),
                                (_SC, "Out"), ("v4s", "Pad"), ("unsigned char", "FS"), ("unsigned char", "FSy"),
                                ("unsigned char", "S"), ("unsigned char", "Sy"), ("unsigned char", "DoScale"),
                                (_SC, "Infos")])
    _template("KerLinear_SQ8_T", [(_SC, "In"), (_SC, "Weights"), ("void" + _P, "Bias"), (_SC, "Out"), (_US, "InDim"),
                                  (_US, "OutDim"), (_UC, "Scale"), (_SC, "ScaleN"), (_SC, "Infos")])
    _template("KerLinearTile_SQ8_T", [(_SC, "In"), (_SC, "Weights"), (_I, "Reduct"), (_US, "N"), (_US, "Tile")])
    _template("KerLinearReduct_SQ8_T", [(_I, "Reduct"), ("void" + _P, "Bias"), (_SC, "Out"), (_UC, "Scale"),
                                        (_SC, "ScaleN"), (_SC, "Infos")])
    _template("KerMatMul_SQ8_T", [(_SC, "In1"), (_US, "W_In1"), (_US, "H_In1"), (_SC, "In2"), (_US, "W_In2"),
                                  ("void" + _P, "Bias"), (_UC, "Scale"), (_SC, "ScaleN"), (_SC, "Out"), (_US, "W_Out"),
                                  (_US, "OutFirstCol"), (_SC, "Infos")])
    _template("KerMat3_SQ8_T", [(_SC, "In1"), (_SC, "In2"), (_SC, "Out"), (_US, "W"), (_US, "H"), (_US, "Feat"),
                                (_SC, "Infos")])
    _template("KerGlobalPool_SQ8_T", [(_SC, "In"), (_US, "W"), (_US, "H"), (_US, "Feat"), (_SC, "Out"),
                                      ("unsigned char", "DoScale"), (_SC, "Infos")])
    _template("KerGlobalPoolTile_SQ8_T", [(_SC, "In"), (_US, "W"), (_US, "H"), (_US, "Feat"), (_I, "Acc"),
                                          (_US, "Tile")])
    _template("KerGlobalPoolReduct_SQ8_T", [(_I, "Acc"), (_US, "Feat"), ("unsigned int", "Size"), (_SC, "Out"),
                                            ("unsigned char", "DoScale"), (_SC, "Infos")])
    _template("KerSoftMax_SQ8_T", [(_SC, "In"), (_US, "N"), ("short int" + _P, "Out"), (_SC, "Infos")])
    _template("KerActivation_SQ8_T", [(_SC, "In"), (_SC, "Out"), (_US, "W"), (_US, "H"), (_US, "Feat"),
                                      (_SC, "Infos")])


def _conv_cost(dw: bool) -> str:
    wo, ho = "((UsedW + S - 1)/S)", "((UsedH + Sy - 1)/Sy)"
    macs = f"((OutFeatures + ncores - 1)/ncores)*{'' if dw else 'InFeatures*'}{wo}*{ho}*N*Ny"
    bias = f" + ((OutFeatures + ncores - 1)/ncores)*{wo}*{ho}" if dw else ""
    return f"5*{macs}/8{bias} + 20"


def load() -> None:
    """Declare the structs and kernels."""
    _templates()
    for b in BIAS_NAMES.values():
        LibKernel(f"KerParSetBias{b}_SQ8", CALL_PARALLEL, 0, "KerSetBias_SQ8_T", Cost=f"{_FEAT}*W*H + 20")
        LibKernel(f"KerParConvDWNxMDxDyStrideSxSy{b}_SQ8", CALL_PARALLEL, 0, "KerConv_SQ8_T", Cost=_conv_cost(True))
    LibKernel("KerParConvNxMDxDyStrideSxSy_SQ8", CALL_PARALLEL, 0, "KerConv_SQ8_T", Cost=_conv_cost(False))
    for act, extra in ACTS.items():
        LibKernel(f"KerParReduct_CC_{act}_SQ8", CALL_PARALLEL, 0, "KerConvLinReduct_SQ8_T",
                  Cost=f"{6 + extra}*{_FEAT}*W*H + 20")
        LibKernel(f"Ker_{act}_SQ8", CALL_PARALLEL, 0, "KerActivation_SQ8_T",
                  Cost=f"{4 + extra}*((W*H*Feat + ncores - 1)/ncores) + 20")
    LibKernel("KerParReductIO_CC_SQ8", CALL_PARALLEL, 0, "KerConvLinReduct_SQ8_T",
              Cost=f"6*{_FEAT}*W*H + (W*H*Feat)/4 + 30")
    for act, extra in ACTS.items():
        for b in BIAS_NAMES.values():
            LibKernel(f"KerParLinearLayerFullFeat{b}_{act}_SQ8", CALL_PARALLEL, 0, "KerLinear_SQ8_T",
                      Cost=f"((OutDim + ncores - 1)/ncores)*(InDim*12/11 + {6 + extra}) + 20")
            LibKernel(f"KerLinearReduct{b}_{act}_SQ8", CALL_SEQUENTIAL_STRUCT, 0, "KerLinearReduct_SQ8_T",
                      Cost=f"2*ncores + {10 + extra}")
        for b in list(BIAS_NAMES.values()) + ["NoBias"]:
            LibKernel(f"KerParMatMul{b}_{act}_SQ8", CALL_PARALLEL, 0, "KerMatMul_SQ8_T",
                      Cost=f"((H_In1 + ncores - 1)/ncores)*W_In2*(2*W_In1 + {6 + extra}) + 20")
        LibKernel(f"KerParMatVectMul_{act}_SQ8", CALL_PARALLEL, 0, "KerMat3_SQ8_T",
                  Cost=f"{6 + extra}*{_FEAT}*W*H + 20")
    LibKernel("KerParLinearLayerTile_SQ8", CALL_PARALLEL, 0, "KerLinearTile_SQ8_T",
              Cost="((N + ncores - 1)/ncores)*12/11 + 20")
    for act in MATADD_ACTS:
        LibKernel(f"KerParMatAdd_{act}_SQ8", CALL_PARALLEL, 0, "KerMat3_SQ8_T",
                  Cost=f"{7 + ACTS[act]}*{_FEAT}*W*H + 20")
    LibKernel("KerParGlobalAvgPoolFullFeat_SQ8", CALL_PARALLEL, 0, "KerGlobalPool_SQ8_T", Cost=f"{_FEAT}*(W*H + 8) + 20")
    LibKernel("KerParGlobalMaxPoolFullFeat_SQ8", CALL_PARALLEL, 0, "KerGlobalPool_SQ8_T", Cost=f"{_FEAT}*(W*H + 6) + 20")
    for kind in ("Max", "Avg"):
        LibKernel(f"KerParGlobal{kind}Pool_SQ8", CALL_PARALLEL, 0, "KerGlobalPoolTile_SQ8_T", Cost=f"{_FEAT}*W*H + 20")
        LibKernel(f"KerParGlobal{kind}PoolReduct_SQ8", CALL_PARALLEL, 0, "KerGlobalPoolReduct_SQ8_T",
                  Cost=f"8*{_FEAT} + 20")
    LibKernel("KerParSoftMax_SQ8", CALL_PARALLEL, 0, "KerSoftMax_SQ8_T", Cost="45*((N + ncores - 1)/ncores) + 40")
    wo, ho = "((UsedW + S - 1)/S)", "((UsedH + Sy - 1)/Sy)"
    for kind in ("Max", "Avg"):
        for act in POOL_ACTS:
            LibKernel(f"KerPar{kind}PoolNxMStrideSxSy_{act}_SQ8", CALL_PARALLEL, 0, "KerPool_SQ8_T",
                      Cost=f"9*{_FEAT}*{wo}*{ho}*FS*FSy/4 + 20")
