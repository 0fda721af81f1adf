"""The guide's user kernel example: a CNN convolution layer with 5x5 filters.

``InPlane`` input planes of W x H (16-bit fixed point) are convolved with ``InPlane x OutPlane``
5x5 filters into ``OutPlane`` output planes of (W-4) x (H-4) (no padding). Each output tile is
first set to the output plane's bias (``KerSetInBias`` at ``LOC_IN_PLANE_PROLOG``), then every
input plane's convolution is accumulated into it (``KerDirectConv5x5_fp`` in the inner loop):
``Out = clip16(Out + (sum(In * Filter) >> Norm))``.

Generated C function::

    void Conv5x5(short int * __restrict__ In, short int * __restrict__ Filter,
                 short int * __restrict__ Out, unsigned int Norm,
                 short int * __restrict__ Bias);

In: [InPlane][H][W]; Filter: [OutPlane][InPlane][5][5] (plane (ip, op) at op*InPlane + ip);
Out: [OutPlane][H-4][W-4]; Bias: [OutPlane].

Run: ``python examples/cnn_conv5x5/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "Conv5x5"         # the user kernel, i.e. the generated C function
IN_PLANE = 3             # GenerateCnnConv5x5("Conv5x5", 3, 4, 40, 36)
OUT_PLANE = 4
W = 40
H = 36
# Per output line: In 2 x 40 x 2 bytes (plus the 4 overlapping lines), Out 2 x 36 x 2 bytes,
# Filter 2 x 50 bytes: 4096 bytes gives output tiles of about 11 lines, so the 32 output lines
# need several tiles (and the overlapping input lines are re-read).
L1_BUDGET = 4096
SIZES = {"InPlane": IN_PLANE, "OutPlane": OUT_PLANE, "W": W, "H": H}
BASIC_KERNELS_HEADER = "Conv5x5BasicKernels.h"
GENERATED_FILES = ("Conv5x5Kernels.c", "Conv5x5Kernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()


def LoadCnnConv5x5Library():
    """Our 2 basic kernels: KerSetInBias copies the same constant value in a matrix and
    KerDirectConv5x5_fp takes care of the convolution itself."""
    # Cost (an estimate, from Conv5x5BasicKernels.c): each core fills ceil(H/ncores) lines of W
    # items at 1 cycle an item (1 store; GAP cores do 1 load/store a cycle), plus ~20 cycles of
    # set-up and barrier.
    LibKernel("KerSetInBias", CALL_PARALLEL,
        CArgs(4,
            TCArg("short int * __restrict__", "Out"),
            TCArg("int", "W"),
            TCArg("int", "H"),
            TCArg("short int", "Bias")
        ),
        "KerSetInBiasT",
        Cost="W*((H + ncores - 1)/ncores) + 20"
    )
    # Cost (an estimate): W x H is the input tile; each core computes ceil((H-4)/ncores) output
    # lines of W-4 outputs; an output is 25 scalar multiply-accumulates at ~3 cycles each (2 loads
    # and a MAC, no SIMD in this C) plus ~5 cycles to load, shift, add, clip and store Out, i.e.
    # ~80 cycles; plus ~20 cycles of set-up and barrier.
    LibKernel("KerDirectConv5x5_fp", CALL_PARALLEL,
        CArgs(6,
            TCArg("short int * __restrict__", "In"),
            TCArg("int", "W"),
            TCArg("int", "H"),
            TCArg("short int * __restrict__", "Filter"),
            TCArg("short int * __restrict__", "Out"),
            TCArg("unsigned int", "Norm")
        ),
        "KerConv_fpT",
        Cost="80*(W - 4)*((H - 4 + ncores - 1)/ncores) + 20"
    )


def GenerateCnnConv5x5(Name, InPlane, OutPlane, W, H):
    """A CNN 5x5 convolution layer, InPlane inputs of W x H, OutPlane outputs of (W-4) x (H-4)."""
    UserKernel(Name,
        KernelDimensions(InPlane, W, H, OutPlane),
        KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE),
        TILE_HOR,
        CArgs(5,
            TCArg("short int * __restrict__", "In"),
            TCArg("short int * __restrict__", "Filter"),
            TCArg("short int * __restrict__", "Out"),
            TCArg("unsigned int",             "Norm"),
            TCArg("short int * __restrict__", "Bias")
        ),
        Calls(2,
            # Setting the bias must be performed before we start traversing the input planes
            Call("KerSetInBias", LOC_IN_PLANE_PROLOG,
                Bindings(4,
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE_W),
                    K_Arg("Out", KER_ARG_TILE_H),
                    C_ArgIndex("Bias", KER_OUT_PLANE, 1)
                )
            ),
            # The convolution itself is performed on every single tile
            Call("KerDirectConv5x5_fp", LOC_INNER_LOOP,
                Bindings(6,
                    K_Arg("In", KER_ARG_TILE),
                    K_Arg("In", KER_ARG_TILE_W),
                    K_Arg("In", KER_ARG_TILE_H),
                    K_Arg("Filter", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE),
                    C_Arg("Norm")
                )
            )
        ),
        KerArgs(3,
            # Tiled input, 2 adjacent tiles overlap by 5-1 lines
            KerArg("In", OBJ_IN_DB_3D, W, H, sizeof("Word16"), 5 - 1, 0, 0, "In", 0),
            # Untiled filter: the whole 5x5 filter of the current (in, out) plane pair
            KerArg("Filter", OBJ_IN_DB_NTILED_4D, 5, 5,
                sizeof("Word16"), 0, 0, 0, "Filter", 0),
            KerArg("Out", OBJ_OUT_DB_3D, W - 5 + 1, H - 5 + 1,
                sizeof("Word16"), 0, 0, 0, "Out", 0)
        )
    )


def declare(l1=L1_BUDGET, InPlane=IN_PLANE, OutPlane=OUT_PLANE, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current
    model, without parsing options or generating code."""
    ConfigureTiler(l1)
    LoadCnnConv5x5Library()
    GenerateCnnConv5x5(name, InPlane, OutPlane, W, H)


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
