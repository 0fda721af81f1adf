"""Illustrative example 1 of the AutoTiler guide: matrix addition.

Adds two integer matrices and stores the result in a third one. The basic kernel
``MatSumPar`` (MatAddBasicKernels.c) adds two tiles of W x H Word32 in parallel on all the
cluster cores; the user kernel ``MatAdd`` tiles the three matrices horizontally so that the
three double-buffered tiles fit in the L1 budget.

Generated C function::

    void MatAdd(Word32 * __restrict__ In1, Word32 * __restrict__ In2,
                Word32 * __restrict__ Out);

Run: ``python examples/matrix_add/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "MatAdd"          # the user kernel, i.e. the generated C function
W = 200                  # matrix width  (the guide calls MatAddGenerator("MatAdd", 200, 300))
H = 300                  # matrix height
L1_BUDGET = 51200        # bytes of shared L1 given to the tiler
SIZES = {"W": W, "H": H}
BASIC_KERNELS_HEADER = "MatAddBasicKernels.h"
GENERATED_FILES = ("MatAddKernels.c", "MatAddKernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget (guide: 'Controlling tiled code generation')."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()


def LoadMatAddLibrary():
    """Model the template of the basic kernel MatSumPar function call."""
    # Cost (an estimate, from MatAddBasicKernels.c): each core adds a chunk of ceil(W*H/ncores)
    # items at ~4 cycles an item (2 loads, 1 add, 1 store; GAP cores do 1 load/store and ~1 ALU op
    # a cycle, hardware loops cost nothing) plus ~20 cycles of chunk set-up and barrier.
    LibKernel("MatSumPar", CALL_PARALLEL,
        CArgs(5,
            TCArg("Word32 * __restrict__", "In1"),
            TCArg("Word32 * __restrict__", "In2"),
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H")
        ),
        "MatrixAdd_Arg_T",
        Cost="4*((W*H + ncores - 1)/ncores) + 20"
    )


def MatAddGenerator(UserKernelName, W, H):
    """A user kernel generator with no restriction on the matrices dimensions (they must fit
    in L2): Out = In1 + In2, all three W x H Word32, tiled horizontally."""
    UserKernel(UserKernelName,
        # One plane of W x H
        KernelDimensions(1, W, H, 1),
        # 2D iteration space
        KernelIterationOrder(KER_DIM2, KER_TILE),
        # Tile horizontally
        TILE_HOR,
        # User kernel C template
        CArgs(3,
            TCArg("Word32 * __restrict__", "In1"),
            TCArg("Word32 * __restrict__", "In2"),
            TCArg("Word32 * __restrict__", "Out")
        ),
        # One call to the basic kernel, on every tile
        Calls(1,
            Call("MatSumPar", LOC_INNER_LOOP,
                Bindings(5,
                    K_Arg("In1", KER_ARG_TILE),     # A tile
                    K_Arg("In2", KER_ARG_TILE),     # A tile
                    K_Arg("Out", KER_ARG_TILE),     # A tile
                    K_Arg("In1", KER_ARG_TILE_W),   # Tile width
                    K_Arg("In1", KER_ARG_TILE_H)    # Tile height
                )
            )
        ),
        # 3 user kernel arguments, double buffered, home in L2, bound to the C arguments
        KerArgs(3,
            KerArg("In1", OBJ_IN_DB,  W, H, sizeof("Word32"), 0, 0, 0, "In1", 0),
            KerArg("In2", OBJ_IN_DB,  W, H, sizeof("Word32"), 0, 0, 0, "In2", 0),
            KerArg("Out", OBJ_OUT_DB, W, H, sizeof("Word32"), 0, 0, 0, "Out", 0)
        )
    )


def declare(l1=L1_BUDGET, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current
    model, without parsing options or generating code."""
    ConfigureTiler(l1)
    LoadMatAddLibrary()
    MatAddGenerator(name, W, H)


def main(argv=None):
    argv = sys.argv if argv is None else argv
    # First parse program options (-o DIR, --L1 N) and initialise the tiler
    if TilerParseOptions(argv):
        print("Failed to initialize or incorrect arguments.", file=sys.stderr)
        return 1
    # Set up the tiler, load the basic kernels and declare the user kernel
    # (with L1_BUDGET; --L1 on the command line overrides it)
    declare()
    # Now that the model is built we produce code for it
    GenerateTilingCode()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
