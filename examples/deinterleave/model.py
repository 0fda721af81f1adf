"""One channel out of a multi-channel interleaved stream (a 4-microphone array's samples, frame
after frame): ``Out[i][j] = In[i][j * Channels + Channel]``, ``Channel`` a C argument.

A kernel whose transfers outweigh its compute: every tile of ``In`` is moved whole (the cluster
DMA cannot skip the other channels' samples: a 2D transfer of one 4-byte item per line is one
line per sample) and the cores copy one item in four. On a cluster DMA of 8 bytes a cycle
(pulp-open, GAP8) a 256-frame line of 4 channels takes 512 cycles to read, its 256 samples about
40 cycles per core to copy on 8 cores: the DMA bounds the kernel, which is what the calibration
on GVSoC (bench/calibrate.py) needs one example of to check the DMA model inside a whole kernel.

The user kernel is declared with the v3 constructors, as examples/matadd_v3: one tiled space
(``KER_ITER_TILE0``, horizontal tiles of whole lines), the call in its loop, both arguments double
buffered in it.

Generated C function::

    void Deinterleave(int * __restrict__ In, int * __restrict__ Out, unsigned int Channel);

Run: ``python examples/deinterleave/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

NAME = "Deinterleave"    # the user kernel, i.e. the generated C function
FRAMES = 256             # frames per line (W)
LINES = 32               # lines (H)
CHANNELS = 4             # samples per frame
L1_BUDGET = 32768        # bytes of shared L1 given to the tiler
SIZES = {"W": FRAMES, "H": LINES, "Channels": CHANNELS}
BASIC_KERNELS_HEADER = "DeinterleaveBasicKernels.h"
GENERATED_FILES = ("DeinterleaveKernels.c", "DeinterleaveKernels.h")


def DeinterleaveConfiguration(L1Memory):
    """Inlined kernels, dynamic memory symbols, file names and the L1 budget."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)


def LoadDeinterleaveLibrary():
    """The template of the basic kernel KerSelectChannelPar's call."""
    # Cost (an estimate, from DeinterleaveBasicKernels.c): each core copies H lines of
    # ceil(W/ncores) samples at ~2 cycles a sample (a load and a store; a GAP core's hardware
    # loops cost nothing), plus ~2 cycles a line for the inner loop and its row pointers, plus
    # ~20 cycles for the chunk bounds and the final barrier.
    LibKernel("KerSelectChannelPar", CALL_PARALLEL,
        CArgs(6,
            TCArg("int * __restrict__", "In"),
            TCArg("int * __restrict__", "Out"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H"),
            TCArg("unsigned int", "Channels"),
            TCArg("unsigned int", "Channel")
        ),
        "KerSelectChannel_Arg_T", None,
        Cost="H*(2*((W + ncores - 1)/ncores) + 2) + 20"
    )


def GenerateDeinterleave(UserKernelName, W, H, Channels):
    """Out = channel ``Channel`` of In: In is H lines of W frames of Channels int samples, Out H
    lines of W ints, both in L2, tiled horizontally in one tiled space."""
    UserKernel(UserKernelName,
        # One tiled space: the loop over the tiles
        KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)),
        TILE_HOR,
        CArgs(3,
            TCArg("int * __restrict__", "In"),
            TCArg("int * __restrict__", "Out"),
            TCArg("unsigned int", "Channel")
        ),
        # One call, on every tile: in the body of the tile loop
        Calls(1,
            Call("KerSelectChannelPar", LOC_LOOP,
                Bindings(6,
                    K_Arg("In", KER_ARG_TILE),       # the current tile of In in L1
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE_W),    # frames per line
                    K_Arg("Out", KER_ARG_TILE_H),    # lines of the tile (the last one may be smaller)
                    Imm(Channels),
                    C_Arg("Channel")                 # the channel kept, as the caller gives it
                )
            )
        ),
        # Both arguments tiled along Tile0, double buffered, bound to the C arguments
        KerArgs(2,
            KerArg("In",  KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB,  W * Channels, H, sizeof("int"), 0, 0, 0, "In"),
            KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), O_OUT | O_DB, W, H, sizeof("int"), 0, 0, 0, "Out")
        )
    )


def declare(l1=L1_BUDGET, W=FRAMES, H=LINES, Channels=CHANNELS, name=NAME):
    """Declare the whole model (configuration, basic kernel, user kernel) in the current model,
    without parsing options or generating code."""
    DeinterleaveConfiguration(l1)
    LoadDeinterleaveLibrary()
    GenerateDeinterleave(name, W, H, Channels)


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
