"""The guide's matrix addition over matrices homed in L3 (external HyperRAM).

Same computation as ``examples/matrix_add`` (Out = In1 + In2, Word32, basic kernel ``MatSumPar``
unchanged), but the three matrices are 512 x 1024 Word32, 2 MiB each: 6 MiB in all, far more
than GAP8's 512 KiB of L2 (or GAP9's 1.5 MiB), well within the 8 MiB of L3 RAM. They are declared
``OBJ_IN_DB_L2DB`` / ``OBJ_OUT_DB_L2DB``: double buffered in L1 *and* homed in L3, so the C
arguments of the generated function are pointers into HyperRAM and only tiles ever reach L2.

What moves where, for every tile of a few lines:

* **L3 -> L2**: the micro-DMA (``AT_HYPERRAM_CL_COPY`` / ``AT_HYPERRAM_CL_WAIT``) stages the next
  tiles of In1 and In2 into L2 staging slots (2 or 3 per argument, a ring in the L2 symbol; the
  tiler picks the depth), ahead of their use;
* **L2 -> L1**: the cluster DMA (``AT_L2_COPY``) moves a staged tile into its L1 buffer while the
  cores add the previous one (``MatSumPar`` on every core, reading and writing L1 only);
* **L1 -> L2 -> L3**: the Out tile goes back to its own L2 staging slot by cluster DMA, and from
  there to HyperRAM by the micro-DMA, while later tiles are computed.

The three levels run concurrently; HyperRAM's bandwidth (1 B/cycle on GAP8) is by far the
narrowest, so the kernel is L3-bound and the tiler's reports give its uDMA busy cycles against
the L3 bound.

Generated C function::

    void MatAddL3(Word32 * __restrict__ In1, Word32 * __restrict__ In2,
                  Word32 * __restrict__ Out);   /* all three in L3 (HyperRam) */

Run: ``python examples/matadd_l3/model.py -o OUTDIR [--L1 BYTES] [--L2 BYTES]``
(``--L2`` caps the L2 used for staging). On the simulated chip, ``host_harness`` reads the
manifest's ``"home": "L3"`` and places the numpy arrays in the simulated L3.
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "MatAddL3"        # the user kernel, i.e. the generated C function
W = 512                  # matrix width
H = 1024                 # matrix height: W x H Word32 = 2 MiB a matrix, 6 MiB for the three
L1_BUDGET = 51200        # bytes of shared L1 given to the tiler (as in examples/matrix_add)
SIZES = {"W": W, "H": H}
BASIC_KERNELS_HEADER = "MatAddBasicKernels.h"
GENERATED_FILES = ("MatAddL3Kernels.c", "MatAddL3Kernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget, and the L3 RAM the L3-homed
    arguments live in (HyperRAM, the original's default, made explicit)."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()
    AT_SetGraphCtrl(AT_GRAPH_PREF_L3_EXEC, AT_OPT_VAL(AT_MEM_L3_HRAM))


def LoadMatAddLibrary():
    """Model the template of the basic kernel MatSumPar function call (as in examples/matrix_add:
    a basic kernel only ever sees L1 tiles, wherever the data is homed)."""
    # Cost (an estimate, from MatAddBasicKernels.c): each core adds a chunk of ceil(W*H/ncores)
    # items at ~4 cycles an item (2 loads, 1 add, 1 store) plus ~20 cycles of chunk set-up and barrier.
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


def MatAddL3Generator(UserKernelName, W, H):
    """Out = In1 + In2, all three W x H Word32 homed in L3, tiled horizontally; each tile is
    staged through L2 on its way to and from L1."""
    UserKernel(UserKernelName,
        # One plane of W x H
        KernelDimensions(1, W, H, 1),
        # 2D iteration space
        KernelIterationOrder(KER_DIM2, KER_TILE),
        # Tile horizontally: a tile is a band of full lines, contiguous in L3, L2 and L1
        TILE_HOR,
        # User kernel C template: the three pointers are L3 addresses
        CArgs(3,
            TCArg("Word32 * __restrict__", "In1"),
            TCArg("Word32 * __restrict__", "In2"),
            TCArg("Word32 * __restrict__", "Out")
        ),
        # One call to the basic kernel, on every tile
        Calls(1,
            Call("MatSumPar", LOC_INNER_LOOP,
                Bindings(5,
                    K_Arg("In1", KER_ARG_TILE),     # A tile (in L1)
                    K_Arg("In2", KER_ARG_TILE),     # A tile (in L1)
                    K_Arg("Out", KER_ARG_TILE),     # A tile (in L1)
                    K_Arg("In1", KER_ARG_TILE_W),   # Tile width
                    K_Arg("In1", KER_ARG_TILE_H)    # Tile height
                )
            )
        ),
        # 3 user kernel arguments, double buffered in L1, home in L3 (_L2DB: staged through L2)
        KerArgs(3,
            KerArg("In1", OBJ_IN_DB_L2DB,  W, H, sizeof("Word32"), 0, 0, 0, "In1", 0),
            KerArg("In2", OBJ_IN_DB_L2DB,  W, H, sizeof("Word32"), 0, 0, 0, "In2", 0),
            KerArg("Out", OBJ_OUT_DB_L2DB, W, H, sizeof("Word32"), 0, 0, 0, "Out", 0)
        )
    )


def declare(l1=L1_BUDGET, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel) in the current
    model, without parsing options or generating code."""
    ConfigureTiler(l1)
    LoadMatAddLibrary()
    MatAddL3Generator(name, W, H)


def main(argv=None):
    argv = sys.argv if argv is None else argv
    # First parse program options (-o DIR, --L1 N, --L2 N) and initialise the tiler
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
