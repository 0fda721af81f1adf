"""Illustrative example 2 of the AutoTiler guide: searching the maximum in a 2D matrix.

A classic parallel map/reduce: the parallel basic kernel ``KerMatrixMax`` finds the maximum
of each tile and stores it in a dynamic L1 buffer ``TiledOut`` holding one entry per tile
(``K_Arg("TiledOut", KER_ARG_TILE)`` is the current tile's entry, as in the guide's generated
code); after the last tile the sequential basic kernel ``KerMatrixMaxReduction`` reduces the
per-tile maxima into the single result ``*Out``.

Generated C function::

    void MatMax(int * __restrict__ In, int * __restrict__ Out);

Run: ``python examples/matrix_max/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "MatMax"          # the user kernel, i.e. the generated C function
W = 200                  # the guide calls MatrixMax("MatMax", 200, 300)
H = 300
L1_BUDGET = 51200        # bytes of shared L1 given to the tiler
SIZES = {"W": W, "H": H}
BASIC_KERNELS_HEADER = "MatMaxBasicKernels.h"
GENERATED_FILES = ("MatMaxKernels.c", "MatMaxKernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()


def LoadMatMaxLibrary():
    """The 2 basic kernels are first modeled."""
    # Cost (an estimate, from MatMaxBasicKernels.c): each core scans ceil(H/ncores) lines of W
    # items at ~2 cycles an item (1 load, 1 max; GAP cores do 1 load/store and ~1 ALU op a
    # cycle), then core 0 combines the ncores partial maxima at ~2 cycles each; ~20 cycles of
    # set-up and barrier.
    LibKernel("KerMatrixMax", CALL_PARALLEL,         # A parallel call
        CArgs(6,
            # A tile
            TCArg("Word32 * __restrict__", "In"),
            # A vector of maximums
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("unsigned int", "W"),         # Tile width
            TCArg("unsigned int", "H"),         # Tile Height
            # Which Tile - index into Out for result
            TCArg("unsigned int", "TileIndex"),
            # Out[TileIndex] contains a Max
            TCArg("unsigned int", "CompareWithOut")
        ),
        "MatrixMax_Arg_T",
        Cost="2*W*((H + ncores - 1)/ncores) + 2*ncores + 20"
    )
    # Cost (an estimate): one core scans the Ntile maxima at ~2 cycles each (1 load, 1 max),
    # plus ~10 cycles of call overhead and the final store.
    LibKernel("KerMatrixMaxReduction", CALL_SEQUENTIAL,  # A sequential call
        CArgs(3,
            TCArg("Word32 * __restrict__", "In"),   # A vector of Maximums
            TCArg("Word32 * __restrict__", "Out"),  # Pointer to the unique Maximum
            TCArg("unsigned int", "Ntile")          # Number of entries into In
        ),
        "MatrixMaxReduction_Arg_T",
        Cost="2*Ntile + 10"
    )


def MatrixMax(Name, W, H):
    """A user kernel generator computing the max of a 2D plain matrix of size WxH."""
    UserKernel(Name,
        # Dimension is WxH
        KernelDimensions(1, W, H, 1),
        # 2D iteration space
        KernelIterationOrder(KER_DIM2, KER_TILE),
        # Tile horizontally
        TILE_HOR,
        # User kernel C template
        CArgs(2,
            TCArg("int * __restrict__", "In"),
            TCArg("int * __restrict__", "Out")
        ),
        # 2 calls to basic kernels
        Calls(2,
            # First KerMatrixMax in the inner iterator
            Call("KerMatrixMax", LOC_INNER_LOOP,
                Bindings(6,
                    K_Arg("In", KER_ARG_TILE), K_Arg("TiledOut", KER_ARG_TILE),
                    K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H),
                    K_Arg("In", KER_ARG_TILEINDEX), Imm(0))
            ),
            # Second KerMatrixMaxReduction after we have consumed all tiles.
            # Final result goes directly to *Out thanks to C_Arg("Out")
            Call("KerMatrixMaxReduction", LOC_INNER_LOOP_EPILOG,
                Bindings(3,
                    K_Arg("TiledOut", KER_ARG), C_Arg("Out"),
                    K_Arg("TiledOut", KER_ARG_NTILES))
            )
        ),
        # 2 User kernel arguments
        KerArgs(2,
            # A double buffered input taken from level 2 memory
            # bound to C user kernel In
            KerArg("In", OBJ_IN_DB, W, H,
                sizeof("int"), 0, 0, 0, "In", 0),
            # A dynamic buffer declared as W=1 and height=H but H will
            # be reduced to the number of used tiles
            KerArg("TiledOut", OBJ_BUFFER_DYN,
                1, H, sizeof("int"), 0, 0, 0, 0, 0)
        )
    )


def declare(l1=L1_BUDGET, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current
    model, without parsing options or generating code."""
    ConfigureTiler(l1)
    LoadMatMaxLibrary()
    MatrixMax(name, W, H)


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
