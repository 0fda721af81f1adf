"""A CNN convolution layer in the form of the SDK's ``CNN_ConvolutionPoolReLU`` (v3 API).

``InFeat`` input features of ``Width x Height`` (int16, Q``In_Q``) are convolved with
``OutFeat x InFeat`` filters of ``Fcx x Fcy`` (int16, Q``Filter_Q``), strides ``Scx x Scy``,
optionally zero padded ("same" padding, PAD_BALANCED_LEFT), into ``OutFeat`` output features of
``Wo x Ho`` (int16, Q``Out_Q``), optionally through a ReLU. The arithmetic is the SDK's "double
precision" (DP) flavour: each output tile of a chunk of output features is an int32 accumulator
in L1 (``ConvOut``), set to the biases (``KerParSetBias_DP_fp``, the CNN library's, before the
input features are traversed), accumulated chunk of input features after chunk of input features
(``ConvV3_KerParConvNxMStrideSxSy_DP_fp``), then normalised, rounded, clamped and narrowed to
int16 (``ConvV3_KerDP_fp``, after the last input chunk). The last two are this example's C
(ConvV3BasicKernels.c), named apart from the library's kernels of the original's names, which
compute the same results another way::

    Out[of] = clamp(roundnorm((Bias[of] << NormBias) + sum_if conv(In[if], Filter[of][if]), Norm), LB, UB)

with ``NormBias = In_Q + Filter_Q - Bias_Q``, ``Norm = In_Q + Filter_Q - Out_Q``, ``roundnorm(x, n)
= (x + 2^(n-1)) >> n`` on 32 bits (round half up) and [LB, UB] = [-32768, 32767] (KOP_NONE),
[0, 32767] (KOP_RELU) or [0, ReluN << Out_Q] (KOP_RELUN). Pooling is not done (the generator's
PoolOper = KOP_NONE), and the dilation is 1.

The iteration space is the generator's: output features in chunks (D1, preferably multiples of
8) > horizontal tiles (T0) > input features in chunks (D0, multiples of 2). The filters of the
current output chunk may stay in L1 over all the input features (partial buffer promotion):
the convolution then gets the number of input features resident in L1 (KER_ARG_LOADEDPARTILE_SIZE)
as the row stride of its filters.

Generated C function::

    void ConvV3(short int * __restrict__ In, short int * __restrict__ Filter,
                short int * __restrict__ Bias, short int * __restrict__ Out);

In: [InFeat][Height][Width]; Filter: [OutFeat][InFeat][Fcy][Fcx]; Bias: [OutFeat];
Out: [OutFeat][Ho][Wo].

Run: ``python examples/cnn_conv_v3/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# The CNN library's operation codes this generator understands (autotiler does not ship the CNN
# library, so the KernelOper_T names are defined here).
KOP_NONE = "KOP_NONE"
KOP_RELU = "KOP_RELU"
KOP_RELUN = "KOP_RELUN"
# Padding types of the CNN library (only the default one is used here).
PAD_LEFT, PAD_RIGHT, PAD_BALANCED_LEFT, PAD_BALANCED_RIGHT = range(4)

# Model-level constants (imported by the tests).
NAME = "ConvV3"             # the user kernel, i.e. the generated C function
IN_FEAT = 16
OUT_FEAT = 32
WIDTH = 24
HEIGHT = 24
FCX = FCY = 3
SCX = SCY = 1
CONV_PAD = 1                # "same" padding: 24x24 outputs
IN_Q, FILTER_Q, BIAS_Q, OUT_Q = 11, 8, 11, 12   # Norm = 7, NormBias = 8
RELU = KOP_RELU
# The whole layer takes 135 KB (In 18 KB, Filter 9 KB, Out 36 KB, the int32 accumulator of all the
# outputs 72 KB). With 9600 bytes every space is cut: the default objective chooses 4 chunks of 8
# output features, 6 tiles of 4 output lines and 8 chunks of 2 input features (7904 bytes).
L1_BUDGET = 9600
CONFIG = dict(InFeat=IN_FEAT, OutFeat=OUT_FEAT, Width=WIDTH, Height=HEIGHT, Fcx=FCX, Fcy=FCY, Scx=SCX, Scy=SCY,
              ConvPad=CONV_PAD, In_Q=IN_Q, Filter_Q=FILTER_Q, Bias_Q=BIAS_Q, Out_Q=OUT_Q, ReLUOper=RELU, ReluN=6)
BASIC_KERNELS_HEADER = "ConvV3BasicKernels.h"
GENERATED_FILES = ("ConvV3Kernels.c", "ConvV3Kernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)


def LoadConvV3Library():
    """The three basic kernels of a 16-bit DP convolution layer without pooling."""
    # Cost (an estimate, the CNN library's): each core sets ceil(OutFeatures/ncores) planes of
    # W x H int32 at 1 cycle an item (one store), plus ~20 cycles of set-up and barrier.
    LibKernel("KerParSetBias_DP_fp", CALL_PARALLEL,
        CArgs(6,
            TCArg("int * __restrict__", "Out"),
            TCArg("unsigned short int", "W"),
            TCArg("unsigned short int", "H"),
            TCArg("unsigned short int", "OutFeatures"),
            TCArg("short int * __restrict__", "Bias"),
            TCArg("signed char", "NormBias")
        ),
        "KerSetBias_fpd_fp_T",
        Cost="((OutFeatures + ncores - 1)/ncores)*W*H + 20"
    )
    # Cost (an estimate): each core computes ceil(OutFeatures/ncores) output planes for each of
    # the InFeatures inputs. An output is N x Ny scalar multiply-accumulates at ~3 cycles (two
    # loads and a MAC, no SIMD in this C) plus ~10 cycles (tap bounds, accumulator load and
    # store). Outputs per plane are taken as ceil(UsedW/S) x ceil(UsedH/Sy): exact for "same"
    # padding, a slight over-estimate otherwise (the Pad vector cannot appear in a Cost).
    # Plus ~20 cycles of set-up and barrier.
    LibKernel("ConvV3_KerParConvNxMStrideSxSy_DP_fp", CALL_PARALLEL,
        CArgs(20,
            TCArg("short int * __restrict__", "In"),
            TCArg("unsigned short int", "W"),
            TCArg("unsigned short int", "UsedW"),
            TCArg("unsigned short int", "H"),
            TCArg("unsigned short int", "UsedH"),
            TCArg("unsigned short int", "InFeatures"),
            TCArg("unsigned short int", "OutFeatures"),
            TCArg("short int", "TotalInFeatures"),
            TCArg("short int * __restrict__", "Filter"),
            TCArg("short int * __restrict__", "Bias"),
            TCArg("int * __restrict__", "Out"),
            TCArg("v4s", "Pad"),
            TCArg("unsigned char", "Norm"),
            TCArg("unsigned char", "N"),
            TCArg("unsigned char", "S"),
            TCArg("unsigned char", "Orientation"),
            TCArg("unsigned char", "D"),
            TCArg("unsigned char", "Ny"),
            TCArg("unsigned char", "Sy"),
            TCArg("unsigned char", "Dy")
        ),
        "ConvV3_KerConv_DP_fp_T",
        Cost="((OutFeatures + ncores - 1)/ncores)*InFeatures*((UsedW + S - 1)/S)*((UsedH + Sy - 1)/Sy)"
             "*(3*N*Ny + 10) + 20"
    )
    # Cost (an estimate): the W*H*InFeatures items are split over the cores; an item is a load,
    # the rounded shift, a max, a min and a store, ~5 cycles; plus ~20 cycles of set-up and barrier.
    LibKernel("ConvV3_KerDP_fp", CALL_PARALLEL,
        CArgs(10,
            TCArg("int * __restrict__", "In"),
            TCArg("unsigned short int", "W"),
            TCArg("unsigned short int", "H"),
            TCArg("short int * __restrict__", "Out"),
            TCArg("unsigned char", "Norm"),
            TCArg("signed char", "NormBias"),
            TCArg("unsigned short int", "InFeatures"),
            TCArg("int", "LB"),
            TCArg("int", "UB"),
            TCArg("short int * __restrict__", "MulBias")
        ),
        "ConvV3_KerDP_fp_T",
        Cost="5*((W*H*InFeatures + ncores - 1)/ncores) + 20"
    )


# ----------------------------------------------------------------------------------------------
# The CNN library's geometry helpers (CNN_Generator_Util), dilation 1


def scm(a, b):
    """Smallest common multiple."""
    x, y = a, b
    while y:
        x, y = y, x % y
    return a * b // x


def CNN_UsedInputDimension(Dim, F, S, D, Pad):
    """Input lines (columns) that Dim outputs of a filter F, stride S, dilation D read."""
    return (Dim - 1) * S + (D * (F - 1) + 1) - Pad


def CNN_TotalPaddingValue(Dim, F, S, D):
    """Padding (both sides together) that gives ceil(Dim / S) outputs."""
    if Dim % S == 0:
        return max(D * (F - 1) + 1 - S, 0)
    return max(D * (F - 1) + 1 - Dim % S, 0)


def CNN_EdgePaddingValue(PadType, Padw, Padh):
    """(left, right, top, bottom) of a total padding Padw x Padh."""
    if PadType == PAD_LEFT:
        return (Padw, 0, Padh, 0)
    if PadType == PAD_RIGHT:
        return (0, Padw, 0, Padh)
    if PadType == PAD_BALANCED_LEFT:
        return (Padw - Padw // 2, Padw // 2, Padh - Padh // 2, Padh // 2)
    if PadType == PAD_BALANCED_RIGHT:
        return (Padw // 2, Padw - Padw // 2, Padh // 2, Padh - Padh // 2)
    GenTilingError("CNN_EdgePaddingValue: unknown padding type %d", PadType)


def CNN_TileOverlap(TileOrientation, Fcx, Fcy, Dcx, Dcy, Scx, Scy, Fpx=1, Fpy=1, Dpx=1, Dpy=1, Spx=1, Spy=1):
    """(OverlapC, OverlapP): lines (columns) shared by two adjacent input tiles of the
    convolution, and of the convolution's output tiles feeding the pooling."""
    if TileOrientation == TILE_HOR:
        return Dcy * (Fcy - 1) + 1 + Scy * ((Dpy * (Fpy - 1) + 1) - Spy - 1), (Dpy * (Fpy - 1) + 1) - Spy
    return Dcx * (Fcx - 1) + 1 + Scx * ((Dpx * (Fpx - 1) + 1) - Spx - 1), (Dpx * (Fpx - 1) + 1) - Spx


def CNN_SetUpperLowerBounds(ReLUOper, DataSize, DoReLU, ReluN, Out_Q):
    """(LB, UB) of the results: the 16-bit range, [0, 32767] with a ReLU, [0, ReluN in
    Q Out_Q] with a ReLUN."""
    assert DataSize == 2, "16-bit outputs only"
    if DoReLU and ReLUOper == KOP_RELU:
        return 0, 32767
    if DoReLU and ReLUOper == KOP_RELUN:
        ub = ReluN << Out_Q
        if ub > 32767:
            GenTilingError("ReLUN: %d in Q%d does not fit in 15 bits", ReluN, Out_Q)
        return 0, ub
    return -32768, 32767


# ----------------------------------------------------------------------------------------------
# The generator


def CNN_ConvolutionPoolReLU(Name, In_Q, Filter_Q, Bias_Q, Out_Q, InFeat, OutFeat, Width, Height,
                            Fcx, Fcy, Scx, Scy, ConvPad, ReLUOper=KOP_NONE, ReluN=6, PadType=PAD_BALANCED_LEFT):
    """CNN_ConvolutionPoolReLU with 16-bit data (In, Filter, Bias, Out), KOP_CONV_DP, dilation 1,
    no pooling (KOP_NONE), horizontal tiles, output features in parallel (ParFeat), arguments in
    L2. The parameters keep the original's names and relative order; the ones fixed by this
    form (Ctrl, data sizes, L3 flags, ConvOper, dilations, pooling) are left out."""
    if ReLUOper not in (KOP_NONE, KOP_RELU, KOP_RELUN):
        GenTilingError("CNN_ConvolutionPoolReLU: unsupported activation %s", ReLUOper)
    In_DataSize = Filter_DataSize = Bias_DataSize = Out_DataSize = 2
    Dcx = Dcy = 1
    Fpx = Fpy = Dpx = Dpy = Spx = Spy = 1      # no pooling
    TileOrientation = TILE_HOR
    ConvOut_DataSize = 2 * Out_DataSize        # DP: int32 accumulator
    Norm = Filter_Q + In_Q - Out_Q
    NormBias = Filter_Q + In_Q - Bias_Q
    if not 0 <= Norm < 32 or not 0 <= NormBias < 32:
        GenTilingError("CNN_ConvolutionPoolReLU %s: In_Q+Filter_Q-Out_Q (%d) and In_Q+Filter_Q-Bias_Q (%d) must be "
                       "in [0, 31]", Name, Norm, NormBias)
    LB, UB = CNN_SetUpperLowerBounds(ReLUOper, Out_DataSize, ReLUOper != KOP_NONE, ReluN, Out_Q)
    InTileCons = {1: 4, 2: 2}.get(Filter_DataSize, 1)

    # Padding and dimensions of the convolution's output (Wc x Hc) and of the pooling's (Wo x Ho)
    PadCw = CNN_TotalPaddingValue(Width, Fcx, Scx, Dcx) if ConvPad else 0
    PadCh = CNN_TotalPaddingValue(Height, Fcy, Scy, Dcy) if ConvPad else 0
    PadInc = list(CNN_EdgePaddingValue(PadType, PadCw, PadCh))
    Wc = (Width - (Dcx * (Fcx - 1) + 1) + PadCw) // Scx + 1
    Hc = (Height - (Dcy * (Fcy - 1) + 1) + PadCh) // Scy + 1
    PadInp = [0, 0, 0, 0]                       # no pooling padding
    Wo = (Wc - (Dpx * (Fpx - 1) + 1) + PadInp[0] + PadInp[1]) // Spx + 1
    Ho = (Hc - (Dpy * (Fpy - 1) + 1) + PadInp[2] + PadInp[3]) // Spy + 1

    def used():
        padt = (PadInp[0] * Scx + PadInc[0], PadInp[1] * Scx + PadInc[1],
                PadInp[2] * Scy + PadInc[2], PadInp[3] * Scy + PadInc[3])
        uwc = CNN_UsedInputDimension(Wo, Fpx, Spx, Dpx, PadInp[0] + PadInp[1])
        uhc = CNN_UsedInputDimension(Ho, Fpy, Spy, Dpy, PadInp[2] + PadInp[3])
        uw = CNN_UsedInputDimension(uwc, Fcx, Scx, Dcx, PadInc[0] + PadInc[1])
        uh = CNN_UsedInputDimension(uhc, Fcy, Scy, Dcy, PadInc[2] + PadInc[3])
        return padt, uwc, uhc, uw, uh

    # A right (bottom) padding that the outputs never reach is dropped, then everything re-evaluated
    PadIncT, UsedWc, UsedHc, UsedWidth, UsedHeight = used()
    PadInc[1] = max(0, PadInc[1] - (Width - UsedWidth))
    PadInc[3] = max(0, PadInc[3] - (Height - UsedHeight))
    PadInp[1] = max(0, PadInp[1] - (Wc - UsedWc))
    PadInp[3] = max(0, PadInp[3] - (Hc - UsedHc))
    PadIncT, UsedWc, UsedHc, UsedWidth, UsedHeight = used()
    Wc, Hc = UsedWc, UsedHc
    OverlapC, OverlapP = CNN_TileOverlap(TileOrientation, Fcx, Fcy, Dcx, Dcy, Scx, Scy, Fpx, Fpy, Dpx, Dpy, Spx, Spy)
    TileCons = scm(Scy, Spy) if TileOrientation == TILE_HOR else scm(Scx, Spx)
    D0, D1, T0 = KER_ITER_D0, KER_ITER_D1, KER_ITER_TILE0

    Kernel = UserKernel(Name,
        KernelIterSpace(3, IterParSpace(D1, OutFeat, 8), IterTiledSpace(T0), IterParSpace(D0, InFeat, InTileCons)),
        TileOrientation,
        CArgs(4,
            TCArg("short int * __restrict__", "In"),
            TCArg("short int * __restrict__", "Filter"),
            TCArg("short int * __restrict__", "Bias"),
            TCArg("short int * __restrict__", "Out")
        ),
        Calls(3,
            # Before the input features are traversed: the accumulators of the output chunk's
            # tile start from the biases
            Call("KerParSetBias_DP_fp", LOC_D0_PROLOG,
                Bindings(6,
                    K_Arg("ConvOut", KER_ARG_TILE),                     # Accumulators
                    K_Arg("ConvOut", KER_ARG_TILE_W),                   # Their width
                    K_Arg("ConvOut", KER_ARG_TILE_H),                   # Their height
                    K_ArgPar("ConvOut", KER_ARG_PARTILE_SIZE, D1),      # Output features in this chunk
                    K_Arg("Bias", KER_ARG_TILE),                        # Biases of the chunk
                    Imm(NormBias)                                       # Bias Q to accumulator Q
                )
            ),
            # Every chunk of input features is accumulated
            Call("ConvV3_KerParConvNxMStrideSxSy_DP_fp", LOC_D0,
                Bindings(20,
                    K_Arg("In", KER_ARG_TILE),                          # Input tile
                    K_Arg("In", KER_ARG_TILE_W),                        # Its width
                    K_Arg("In", KER_ARG_TILE_USEDW),                    # Columns used
                    K_Arg("In", KER_ARG_TILE_H),                        # Its height
                    K_Arg("In", KER_ARG_TILE_USEDH),                    # Lines used
                    K_ArgPar("Filter", KER_ARG_PARTILE_SIZE, D0),       # Input features in this chunk
                    K_ArgPar("ConvOut", KER_ARG_PARTILE_SIZE, D1),      # Output features in this chunk
                    K_ArgPar("Filter", KER_ARG_LOADEDPARTILE_SIZE, D0),  # Input features in L1 (promotion)
                    K_Arg("Filter", KER_ARG_TILE),                      # Filters
                    AT_IGNORE_ARG_BINDING,                              # Bias: depthwise form only
                    K_Arg("ConvOut", KER_ARG_TILE),                     # Accumulators
                    K_Arg("In", KER_ARG_TILE_PAD),                      # Padding of this tile
                    Imm(Norm),                                          # Unused by the DP form
                    Imm(Fcx),                                           # Filter width
                    Imm(Scx),                                           # Horizontal stride
                    Imm(1 if TileOrientation == TILE_HOR else 0),      # Orientation
                    AT_IGNORE_ARG_BINDING,                              # Dilation (1)
                    Imm(Fcy),                                           # Filter height
                    Imm(Scy),                                           # Vertical stride
                    AT_IGNORE_ARG_BINDING                               # Dilation (1)
                )
            ),
            # After the last input chunk: normalise, round, clamp, narrow to 16 bits
            Call("ConvV3_KerDP_fp", LOC_D0_EPILOG,
                Bindings(10,
                    K_Arg("ConvOut", KER_ARG_TILE),                     # Accumulators
                    K_Arg("ConvOut", KER_ARG_TILE_W),                   # Their width
                    K_Arg("ConvOut", KER_ARG_TILE_H),                   # Their height
                    K_Arg("Out", KER_ARG_TILE),                         # Output tile
                    Imm(Norm),                                          # Accumulator Q to Out Q
                    AT_IGNORE_ARG_BINDING,                              # NormBias: unused
                    K_ArgPar("Out", KER_ARG_PARTILE_SIZE, D1),          # Output features in this chunk
                    Imm(LB),                                            # Lower bound
                    Imm(UB),                                            # Upper bound
                    AT_IGNORE_ARG_BINDING                               # MulBias: unused
                )
            )
        ),
        KerArgs(5,
            # Input features, padded; two adjacent tiles share OverlapC lines
            KerArgP("In", KerArgSpace(2, D0, T0), O_IN | O_DB, Width, Height, UsedWidth, UsedHeight,
                    PadIncT, tuple(PadInc), In_DataSize, OverlapC, 0, TileCons, "In"),
            KerArg("Bias", KerArgSpace(1, D1), O_IN | O_DB | O_CONST, 1, 1, Bias_DataSize, 0, 0, 0, "Bias"),
            # One item is a whole Fcx x Fcy filter of an (output feature, input feature) pair
            KerArg("Filter", KerArgSpace(2, D1, D0), O_IN | O_DB | O_CONST, 1, 1, Fcx * Fcy * Filter_DataSize,
                   0, 0, 0, "Filter"),
            KerArg("Out", KerArgSpace(2, D1, T0), O_OUT | O_DB, Wo, Ho, Out_DataSize, 0, 0, 0, "Out"),
            # The int32 accumulators: one tile of the output chunk, in L1 only
            KerArgP("ConvOut", KerArgSpace(2, D1, T0), O_BUFF | O_ONETILE, Wc, Hc, UsedWc, UsedHc,
                    tuple(PadInp), tuple(PadInp), ConvOut_DataSize, OverlapP, 0, 0, "")
        )
    )
    if Kernel:
        AddKernelInfos(Name, AT_KERINFO_OPER, InFeat * OutFeat * Wc * Hc * Fcx * Fcy, 0)
        AddKernelInfos(Name, AT_KERINFO_BANDWIDTH,
                       InFeat * Width * Height * In_DataSize + OutFeat * InFeat * Fcx * Fcy * Filter_DataSize
                       + OutFeat * Bias_DataSize + OutFeat * Wo * Ho * Out_DataSize, 0)
        AddKernelArgDim(Name, "In", 4, InFeat, Height, Width, In_DataSize)
        AddKernelArgDim(Name, "Filter", 5, OutFeat, InFeat, Fcy, Fcx, Filter_DataSize)
        AddKernelArgDim(Name, "Bias", 2, OutFeat, Bias_DataSize)
        AddKernelArgDim(Name, "Out", 4, OutFeat, Ho, Wo, Out_DataSize)
    return Kernel


def declare(l1=L1_BUDGET, name=NAME, **config):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current model,
    without parsing options or generating code; ``config`` overrides entries of CONFIG. Returns
    the kernel's tiling."""
    c = dict(CONFIG, **config)
    ConfigureTiler(l1)
    LoadConvV3Library()
    return CNN_ConvolutionPoolReLU(name, c["In_Q"], c["Filter_Q"], c["Bias_Q"], c["Out_Q"], c["InFeat"], c["OutFeat"],
                                   c["Width"], c["Height"], c["Fcx"], c["Fcy"], c["Scx"], c["Scy"], c["ConvPad"],
                                   c["ReLUOper"], c["ReluN"])


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if TilerParseOptions(argv):
        print("Failed to initialize or incorrect arguments.", file=sys.stderr)
        return 1
    # Declare the model with L1_BUDGET (--L1 on the command line overrides it)
    declare()
    GenerateTilingCode()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
