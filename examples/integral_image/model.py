"""The integral image of a byte image: port of the GAP SDK generator ``GenerateIntegralImage``.

``GenerateIntegralImage(Name, W, H)`` declares the user kernel ``Body<Name>`` computing
``II[l][c] = sum of In[i][j] for i <= l, j <= c`` (unsigned 32-bit) of a W x H byte image. The
image is tiled horizontally; a line's integral depends on every line above it, so the column
sums are carried from tile to tile in ``KerBuffer``: a W x 1 int L1 buffer that is neither
read nor written in L2, not tiled and not double buffered (``O_BUFF|O_NDB|O_NOUT|O_NIN|
O_NTILED``, no C argument). ``KerPrime`` zeroes it once before the tiles
(``LOC_LOOP_PROLOG``); ``KerProcess`` (``LOC_LOOP``) computes each tile's column sums seeded by
the buffer, saves those of the tile's last line into it, then the prefix sums along the lines.

The SDK's example runs it on a 161 x 121 image at an L1 budget of 40000 bytes.

Generated C function::

    void BodyIntegralImage(unsigned char * __restrict__ ImageIn,
                           unsigned int * __restrict__ IntegralImage);

Run: ``python examples/integral_image/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NAME = "IntegralImage"   # GenerateIntegralImage("IntegralImage", W, H) -> BodyIntegralImage
W = 161                  # the SDK example's image (Pedestrian.ppm)
H = 121
L1_BUDGET = 40000        # IntegralImageConfiguration(40000)
SIZES = {"W": W, "H": H}
BASIC_KERNELS_HEADER = "IntegralImgBasicKernels.h"
GENERATED_FILES = ("IntegralImgKernels.c", "IntegralImgKernels.h")


def IntegralImageConfiguration(L1Memory):
    """As the SDK's IntegralImageConfiguration: inlining, symbols, files, L1 budget."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetSymbolNames("II_L1_Memory", "II_L2_Memory")
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)


def LoadIntegralImageLibrary():
    """The two basic kernels."""
    # Cost (an estimate, from IntegralImgBasicKernels.c; GAP cores do 1 load/store and ~1 ALU
    # op a cycle, hardware loops cost nothing): each core zeroes ceil(W/ncores) items at 1 cycle
    # an item (1 store), plus ~20 cycles of set-up.
    LibKernel("KerPrime", CALL_PARALLEL,
        CArgs(2,
            TCArg("unsigned int * __restrict__", "KerBuffer"),
            TCArg("unsigned int", "W")
        ),
        "KerPrimeImage_ArgT",
        Cost="(W + ncores - 1)/ncores + 20"
    )
    # Cost (an estimate): vertical pass, each core runs down ceil(W/ncores) columns of H pixels
    # at 3 cycles a pixel (1 byte load, 1 add, 1 store) plus 2 cycles a column for the buffer
    # (1 load, 1 store); horizontal pass, each core runs along ceil(H/ncores) lines of W-1
    # items at 3 cycles an item (1 load, 1 add, 1 store; the running sum stays in a register);
    # ~40 cycles of set-up and the barrier between the passes.
    LibKernel("KerProcess", CALL_PARALLEL,
        CArgs(5,
            TCArg("unsigned char * __restrict__", "In"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H"),
            TCArg("unsigned int * __restrict__", "IntegralImage"),
            TCArg("unsigned int * __restrict__", "KerBuffer")
        ),
        "KerProcessImage_ArgT",
        Cost="((W + ncores - 1)/ncores)*(3*H + 2) + ((H + ncores - 1)/ncores)*3*(W - 1) + 40"
    )


def GenerateIntegralImage(Name, W, H):
    """The integral image of a W x H byte image, as the user kernel Body<Name>."""
    return UserKernel(AppendNames("Body", Name),
        # KernelDimensions(0, W, H, 0), KernelIterationOrder(1, KER_TILE) in the v2 form
        KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)),
        TILE_HOR,
        CArgs(2,
            TCArg("unsigned char * __restrict__", "ImageIn"),
            TCArg("unsigned int * __restrict__", "IntegralImage")
        ),
        Calls(2,
            # Zero the column sums, once before the tiles
            Call("KerPrime", LOC_LOOP_PROLOG,
                Bindings(2,
                    K_Arg("KerBuffer", KER_ARG),
                    K_Arg("KerIn", KER_ARG_TILE_W)
                )
            ),
            Call("KerProcess", LOC_LOOP,
                Bindings(5,
                    K_Arg("KerIn", KER_ARG_TILE),
                    K_Arg("KerIn", KER_ARG_TILE_W),
                    K_Arg("KerIn", KER_ARG_TILE_H),
                    K_Arg("KerOut", KER_ARG_TILE),
                    K_Arg("KerBuffer", KER_ARG)
                )
            )
        ),
        KerArgs(3,
            KerArg("KerIn", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB, W, H, sizeof("char"), 0, 0, 0, "ImageIn"),
            # The column sums carried from tile to tile: one W x 1 L1 buffer, never moved
            KerArg("KerBuffer", KerArgSpace(1, KER_ITER_TILE0), O_BUFF | O_NDB | O_NOUT | O_NIN | O_NTILED,
                W, 1, sizeof("int"), 0, 0, 0, ""),
            KerArg("KerOut", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, W, H, sizeof("int"), 0, 0, 0,
                "IntegralImage")
        )
    )


def declare(l1=L1_BUDGET, W=W, H=H, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernel Body<name>) in the
    current model, without parsing options or generating code."""
    IntegralImageConfiguration(l1)
    LoadIntegralImageLibrary()
    GenerateIntegralImage(name, W, H)


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
