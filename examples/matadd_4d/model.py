"""The guide's 4D user kernel example, "MyFavoriteKernel": accumulated matrix additions.

For each output plane ``op``, adds over all the input planes ``ip`` the two input matrices and
the bias of the output plane::

    Out[op] = sum over ip of (In1[ip] + In2[ip] + Bias[op])

Iteration order 2 (``for OutPlane { for Tile { for InPlane }}}``); the output tile stays in L1
across the whole in-plane loop, so the basic kernel ``MatrixAdd`` accumulates into it. An
output tile is garbage when first used, so a first call to ``KerSetZero32`` at
``LOC_IN_PLANE_PROLOG`` (before the in-plane loop of each tile) clears it (the guide's listing
has only the ``MatrixAdd`` call and leaves this initialisation implicit).

Generated C function::

    void MyFavoriteKernel(Word32 * __restrict__ In1, Word32 * __restrict__ In2,
                          Word32 * __restrict__ Out, Word32 * __restrict__ Bias);

with In1, In2: InPlane planes of W x H; Out: OutPlane planes of W x H; Bias: OutPlane values.

Run: ``python examples/matadd_4d/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "MyFavoriteKernel"  # the user kernel, i.e. the generated C function
IN_PLANE = 4               # KernelDimensions(4, 75, 75, 4) as in the guide
OUT_PLANE = 4
W = 75
H = 75
# 3 double-buffered Word32 args: 75 * 4 * 2 * 3 = 1800 bytes a line, so 51200 bytes gives
# tiles of at most 28 lines: the 75 lines need several tiles (28 + 28 + 19).
L1_BUDGET = 51200
SIZES = {"InPlane": IN_PLANE, "OutPlane": OUT_PLANE, "W": W, "H": H}
BASIC_KERNELS_HEADER = "MatAdd4DBasicKernels.h"
GENERATED_FILES = ("MatAdd4DKernels.c", "MatAdd4DKernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()


def LoadMatAdd4DLibrary():
    """The guide's parallel basic kernel example (MatrixAdd, 6 args) plus the tile clearing."""
    # Cost (an estimate, from MatAdd4DBasicKernels.c): each core clears ceil(W*H/ncores) items
    # at 1 cycle an item (1 store; GAP cores do 1 load/store a cycle), plus ~20 cycles of chunk
    # set-up and barrier.
    LibKernel("KerSetZero32", CALL_PARALLEL,
        CArgs(3,
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("Wordu32", "W"),
            TCArg("Wordu32", "H")
        ),
        "KerSetZero32_Arg_T",
        Cost="(W*H + ncores - 1)/ncores + 20"
    )
    # Cost (an estimate): each core updates ceil(W*H/ncores) items of Out += In1 + In2 + Bias at
    # ~7 cycles an item (3 loads, 3 adds, 1 store at 1 load/store or ALU op a cycle), plus ~20
    # cycles of chunk set-up and barrier.
    LibKernel("MatrixAdd", CALL_PARALLEL,
        CArgs(6,
            TCArg("Word32 * __restrict__", "In1"),
            TCArg("Word32 * __restrict__", "In2"),
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("Word32", "Bias"),
            TCArg("Wordu32", "W"),
            TCArg("Wordu32", "H")
        ),
        "MatrixAdd_Arg_T",
        Cost="7*((W*H + ncores - 1)/ncores) + 20"
    )


def MatrixAdd4D(Name, InPlane, OutPlane, W, H):
    """The guide's "possible final version" of MyFavoriteKernel, for any plane count and size."""
    UserKernel(Name,
        KernelDimensions(InPlane, W, H, OutPlane),
        KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE),
        TILE_HOR,
        CArgs(4,
            TCArg("Word32 * __restrict__", "In1"),
            TCArg("Word32 * __restrict__", "In2"),
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("Word32 * __restrict__", "Bias")
        ),
        Calls(2,
            # Clear the output tile before the in-plane loop accumulates into it
            Call("KerSetZero32", LOC_IN_PLANE_PROLOG,
                Bindings(3,
                    K_Arg("KerOut", KER_ARG_TILE),      # A tile
                    K_Arg("KerOut", KER_ARG_TILE_W),    # Tile width
                    K_Arg("KerOut", KER_ARG_TILE_H)     # Tile height
                )
            ),
            Call("MatrixAdd", LOC_INNER_LOOP,
                Bindings(6,
                    K_Arg("KerIn1", KER_ARG_TILE),          # A tile
                    K_Arg("KerIn2", KER_ARG_TILE),          # A tile
                    K_Arg("KerOut", KER_ARG_TILE),          # A tile
                    C_ArgIndex("Bias", KER_OUT_PLANE, 1),   # Bias[CurrentOutputPlane*1]
                    K_Arg("KerIn1", KER_ARG_TILE_W),        # Tile width
                    K_Arg("KerIn1", KER_ARG_TILE_H)         # Tile height
                )
            )
        ),
        KerArgs(3,
            KerArg("KerIn1", OBJ_IN_DB_3D,  W, H, sizeof("Word32"), 0, 0, 0, "In1", 0),
            KerArg("KerIn2", OBJ_IN_DB_3D,  W, H, sizeof("Word32"), 0, 0, 0, "In2", 0),
            KerArg("KerOut", OBJ_OUT_DB_3D, W, H, sizeof("Word32"), 0, 0, 0, "Out", 0)
        )
    )


def declare(l1=L1_BUDGET, InPlane=IN_PLANE, OutPlane=OUT_PLANE, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current
    model, without parsing options or generating code."""
    ConfigureTiler(l1)
    LoadMatAdd4DLibrary()
    MatrixAdd4D(name, InPlane, OutPlane, W, H)


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
