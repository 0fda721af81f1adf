"""The GAP SDK's MatAdd generator in its AutoTiler v3 form (tools/autotiler_v3/Generators/MatAdd).

Adds two int matrices: ``Out = In1 + In2``. Written as the SDK's generator and test are:
``MatAddConfiguration(L1)``, ``LoadMatAddLibrary()``, ``GenerateMatAddPar(Name, W, H)``, then
``GenerateTilingCode()``; unlike examples/matrix_add (the guide's v2 form) the user kernel is
declared with the v3 constructors: one tiled iteration space ``KernelIterSpace(1,
IterTiledSpace(KER_ITER_TILE0))``, the call in that space's loop (``LOC_LOOP``) and each kernel
argument placed in that space with ``KerArgSpace(1, KER_ITER_TILE0)``.

The basic kernel ``MatSumPar`` (MatAddBasicKernels.c) shares the columns of a tile among the
cores. With the SDK test's sizes, 100 x 100 ints in an L1 of 45000 bytes, the three
double-buffered matrices need 2 * 3 * 400 = 2400 bytes a line, 240000 bytes in all: they do not
fit, and the tiler cuts the 100 lines into horizontal tiles of at most 18 lines (see
tests/test_example_matadd_v3.py for the tiling it picks).

Generated C function::

    void MatADD(int * __restrict__ In1, int * __restrict__ In2, int * __restrict__ Out);

Run: ``python examples/matadd_v3/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests): those of the SDK's MatAddGenTest / header.
NAME = "MatADD"          # the user kernel, i.e. the generated C function
MAT_W = 100              # matrix width (columns)
MAT_H = 100              # matrix height (lines)
L1_MEMORY_SIZE = 45000   # bytes of shared L1 given to the tiler
L1_BUDGET = L1_MEMORY_SIZE
SIZES = {"W": MAT_W, "H": MAT_H}
BASIC_KERNELS_HEADER = "MatAddBasicKernels.h"
GENERATED_FILES = ("MatAddKernels.c", "MatAddKernels.h")


def MatAddConfiguration(L1Memory):
    """Inlined kernels, dynamic memory symbols, file names and the L1 budget."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)


def LoadMatAddLibrary():
    """The template of the basic kernel MatSumPar's call."""
    # Cost (an estimate, from MatAddBasicKernels.c): each core adds H lines of ceil(W/ncores)
    # columns at ~4 cycles an item (2 loads, 1 add, 1 store: a GAP core does 1 load/store or ALU
    # op a cycle and its hardware loops cost nothing), plus ~2 cycles a line to set up the inner
    # loop and its row pointers, plus ~20 cycles for the chunk bounds and the final barrier.
    LibKernel("MatSumPar", CALL_PARALLEL,
        CArgs(5,
            TCArg("int * __restrict__", "In1"),
            TCArg("int * __restrict__", "In2"),
            TCArg("int * __restrict__", "Out"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H")
        ),
        "MatrixAdd_Arg_T", None,
        Cost="H*(4*((W + ncores - 1)/ncores) + 2) + 20"
    )


def GenerateMatAddPar(UserKernelName, W, H):
    """Out = In1 + In2, three W x H int matrices in L2, tiled horizontally in one tiled space."""
    UserKernel(UserKernelName,
        # One tiled space: the loop over the tiles
        KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)),
        TILE_HOR,
        CArgs(3,
            TCArg("int * __restrict__", "In1"),
            TCArg("int * __restrict__", "In2"),
            TCArg("int * __restrict__", "Out")
        ),
        # One call, on every tile: in the body of the tile loop
        Calls(1,
            Call("MatSumPar", LOC_LOOP,
                Bindings(5,
                    K_Arg("In1", KER_ARG_TILE),      # the current tile of In1 in L1
                    K_Arg("In2", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("In1", KER_ARG_TILE_W),    # its width (all the columns)
                    K_Arg("In1", KER_ARG_TILE_H)     # its height (the last tile may be smaller)
                )
            )
        ),
        # Three arguments tiled along Tile0, double buffered, bound to the C arguments
        KerArgs(3,
            KerArg("In1", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB,  W, H, sizeof("int"), 0, 0, 0, "In1"),
            KerArg("In2", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB,  W, H, sizeof("int"), 0, 0, 0, "In2"),
            KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), O_OUT | O_DB, W, H, sizeof("int"), 0, 0, 0, "Out")
        )
    )


def declare(l1=L1_BUDGET, W=MAT_W, H=MAT_H, name=NAME):
    """Declare the whole model (configuration, basic kernel, user kernel) in the current model,
    without parsing options or generating code: the SDK's MatAddGenTest main."""
    MatAddConfiguration(l1)
    LoadMatAddLibrary()
    GenerateMatAddPar(name, W, H)


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
