"""The guide's user kernel group example: a 2D FFT of a Dim x Dim byte image.

The group ``FFT2D_128`` calls two user kernels in sequence:

1. ``FFT2D_128Horizontal`` (TILE_HOR): expand the byte image to complex Q15 samples
   (``Image2Complex``), run a 1D FFT on each line (``Radix2FFT_DIF_2D_Horizontal``, decimated
   in frequency, output in bit-reversed order) and put each line back in natural order
   (``SwapSamples_2D_Horizontal_Par``);
2. ``FFT2D_128Vertical`` (TILE_VER): the same on each column of the result, in place
   (``Radix2FFT_DIF_2D_Vertical``, ``SwapSamples_2D_Vertical_Par``).

Generated C function (the group)::

    void FFT2D_128(Wordu8 * __restrict__ In, Word32 * __restrict__ Out,
                   Word16 * __restrict__ Twiddles, Word16 * __restrict__ SwapTable);

In: Dim x Dim bytes; Out: Dim x Dim complex samples, each a Word32 holding a v2s (I, Q) pair
of Q15 shorts; Twiddles: Dim/2 complex Q15 values (cos, -sin) of exp(-2*pi*i*k/Dim);
SwapTable: the Dim bit-reversal indices (reference.py builds both tables).

Only the radix-2 basic kernels are written for this example, so ``declare`` calls
``FFT2D(..., ForceRadix2=1)``; with Dim = 128 (an odd power of 2) the guide's selection picks
radix 2 anyway.

Run: ``python examples/fft2d/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
DIM = 128
NAME = "FFT2D_128"       # the kernel group, i.e. the generated C function
FORCE_RADIX2 = 1         # only radix-2 basic kernels are provided
# Horizontal: (128 + 4 * 128) bytes a line, double buffered = 1280 bytes a line; vertical:
# 4 * 128 bytes a column, double buffered = 1024 bytes a column. 32768 bytes gives tiles of
# 24 lines (preferred multiple of 8; 5 x 24 + 8) and of 32 columns: several tiles each way.
L1_BUDGET = 32768
SIZES = {"Dim": DIM}
BASIC_KERNELS_HEADER = "FFT2DBasicKernels.h"
GENERATED_FILES = ("FFT2DKernels.c", "FFT2DKernels.h")


def ConfigureTiler(L1Memory):
    """Basic kernel header, generated file names, L1 budget."""
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)
    SetSymbolDynamics()


def _log2_cost(name, bits=10):
    """floor(log2(name)) as a Cost expression (only + - * / are allowed there), exact for
    1 <= name < 2**(bits+1), i.e. FFTs up to 1024 points (a 512 x 512 2D FFT already needs 1 MiB of L2):
    the sum over k of [name >= 2**k], with [x >= 1] written 2*x/(x + 1) for an integer x >= 0."""
    terms = (f"2*({name}/{1 << k})/({name}/{1 << k} + 1)" for k in range(1, bits + 1))
    return "(" + " + ".join(terms) + ")"


# Cost of a radix-2 FFT basic kernel (an estimate, from Radix2FFT_DIF_Internal in
# FFT2DBasicKernels.c): each core runs ceil(Nb/ncores) FFTs of N_fft/2 * log2(N_fft) butterflies;
# a butterfly of this scalar C is ~30 cycles (6 loads, 4 stores, ~14 ALU ops incl. the Q15
# multiply-adds with rounding, ~6 for indices and addresses, at 1 load/store or ALU op a cycle;
# GAP's optimised v2s kernels need ~6-8); plus ~20 cycles of set-up and barrier.
FFT_RADIX2_COST = f"30*(N_fft/2)*{_log2_cost('N_fft')}*((Nb + ncores - 1)/ncores) + 20"


def LoadFFT2DLibrary():
    """The basic kernels of the 2D FFT (radix 2 only)."""
    # Cost (an estimate, from FFT2DBasicKernels.c): each core expands ceil(H/ncores) lines of W
    # pixels at ~4 cycles a pixel (1 byte load, 1 shift, 1 pack into a v2s, 1 store; GAP cores
    # do 1 load/store and ~1 ALU op a cycle), plus ~20 cycles of set-up and barrier.
    LibKernel("Image2Complex", CALL_PARALLEL,
        CArgs(4,
            TCArg("Wordu8 * __restrict__", "In"),
            TCArg("v2s * __restrict__", "Out"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H")
        ),
        "Image2Complex_Arg_T",
        Cost="4*W*((H + ncores - 1)/ncores) + 20"
    )
    # Cost: FFT_RADIX2_COST above (an estimate).
    LibKernel("Radix2FFT_DIF_2D_Horizontal", CALL_PARALLEL,
        CArgs(4,
            TCArg("Word16 * __restrict__", "Data"),
            TCArg("Word16 * __restrict__", "Twiddles"),
            TCArg("unsigned int", "N_fft"),     # FFT size: the tile width
            TCArg("unsigned int", "Nb")         # Number of FFTs: the tile height
        ),
        "FFT_2D_Arg_T",
        Cost=FFT_RADIX2_COST
    )
    # Cost: FFT_RADIX2_COST above (an estimate; strided samples cost the same in L1).
    LibKernel("Radix2FFT_DIF_2D_Vertical", CALL_PARALLEL,
        CArgs(4,
            TCArg("Word16 * __restrict__", "Data"),
            TCArg("Word16 * __restrict__", "Twiddles"),
            TCArg("unsigned int", "N_fft"),     # FFT size: the tile height
            TCArg("unsigned int", "Nb")         # Number of FFTs: the tile width
        ),
        "FFT_2D_Arg_T",
        Cost=FFT_RADIX2_COST
    )
    # Cost (an estimate, from SwapSamples_Internal): each core reorders ceil(Nb/ncores) FFTs of
    # Ni samples at ~7 cycles a sample (1 table load, 2 compares and branches, and for about
    # half of the samples a swap of 2 loads and 2 stores with strided addresses), plus ~20
    # cycles of set-up and barrier.
    LibKernel("SwapSamples_2D_Horizontal_Par", CALL_PARALLEL,
        CArgs(4,
            TCArg("v2s * __restrict__", "Data"),
            TCArg("Word16 * __restrict__", "SwapTable"),
            TCArg("unsigned int", "Ni"),        # Samples per FFT: the tile width
            TCArg("unsigned int", "Nb")         # Number of FFTs: the tile height
        ),
        "SwapSamples_2D_Arg_T",
        Cost="7*Ni*((Nb + ncores - 1)/ncores) + 20"
    )
    # Cost: as SwapSamples_2D_Horizontal_Par (an estimate).
    LibKernel("SwapSamples_2D_Vertical_Par", CALL_PARALLEL,
        CArgs(4,
            TCArg("v2s * __restrict__", "Data"),
            TCArg("Word16 * __restrict__", "SwapTable"),
            TCArg("unsigned int", "Ni"),        # Samples per FFT: the tile height
            TCArg("unsigned int", "Nb")         # Number of FFTs: the tile width
        ),
        "SwapSamples_2D_Arg_T",
        Cost="7*Ni*((Nb + ncores - 1)/ncores) + 20"
    )


def FFT2D(Name, Dim, ForceRadix2):
    """A 2D FFT of a Dim x Dim byte image as a group of two user kernels."""
    # Dim is the dimension of the FFT, first select the right 1D FFT (Radix 2
    # or 4) depending on Dim
    if Dim <= 0 or (Dim & (Dim - 1)) != 0:
        GenTilingError("FFT2D: %s, Incorrect Dim: %d, it has to be a a power of 2" % (Name, Dim))
        return
    elif not ForceRadix2 and ((Dim.bit_length() - 1) % 2) == 0:
        # Radix 4 FFT
        KerHorizontal = "Radix4FFT_DIF_2D_Horizontal"
        KerVertical = "Radix4FFT_DIF_2D_Vertical"
    else:
        # Radix 2 FFT
        KerHorizontal = "Radix2FFT_DIF_2D_Horizontal"
        KerVertical = "Radix2FFT_DIF_2D_Vertical"
    # Here we open the kernel group
    OpenKernelGroup(Name)
    # First user kernel in the group.
    # The group input is a byte image, we have to expand it to a
    # complex representation (I and Q in Q15).
    # Then we perform a 1D FFT on each line of the expanded input
    # Finally we reorder the FFT output
    UserKernel(AppendNames(Name, "Horizontal"),
        KernelDimensions(1, Dim, Dim, 1),
        KernelIterationOrder(KER_DIM2, KER_TILE),
        TILE_HOR,
        CArgs(4,
            TCArg("Wordu8 * __restrict__", "In"),
            # The guide declares Out as "v2s * __restrict__"; Word32 (same size) keeps the
            # group's call FFT2D_128Horizontal(In, Out, ...) type-correct C.
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("Word16 * __restrict__", "Twiddles"),
            TCArg("Word16 * __restrict__", "SwapTable")
        ),
        Calls(3,
            Call("Image2Complex", LOC_INNER_LOOP,
                Bindings(4,
                    K_Arg("In", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("In", KER_ARG_TILE_W),
                    K_Arg("In", KER_ARG_TILE_H))),
            Call(KerHorizontal, LOC_INNER_LOOP,
                Bindings(4,
                    K_Arg("Out", KER_ARG_TILE),
                    C_Arg("Twiddles"),
                    K_Arg("Out", KER_ARG_TILE_W),
                    K_Arg("Out", KER_ARG_TILE_H))),
            Call("SwapSamples_2D_Horizontal_Par", LOC_INNER_LOOP,
                Bindings(4,
                    K_Arg("Out", KER_ARG_TILE),
                    C_Arg("SwapTable"),
                    K_Arg("Out", KER_ARG_TILE_W),
                    K_Arg("Out", KER_ARG_TILE_H)))
        ),
        KerArgs(2,
            KerArg("In",  OBJ_IN_DB,  Dim, Dim, sizeof("Wordu8"), 0, 0, 0, "In", 0),
            KerArg("Out", OBJ_OUT_DB, Dim, Dim, sizeof("Word32"), 0, 0, 8, "Out", 0)
        )
    )
    # Second user kernel in the group.
    # This user kernel takes as an input the output of the horizontal FFT step
    # It performs a 1D FFT on each column of the input matrix (note that here
    # the tiling is vertical)
    # Finally we reorder the FFT output and we are done
    UserKernel(AppendNames(Name, "Vertical"),
        KernelDimensions(1, Dim, Dim, 1),
        KernelIterationOrder(KER_DIM2, KER_TILE),
        TILE_VER,
        CArgs(3,
            # The guide declares InOut as "Word16 * __restrict__"; Word32 (one complex
            # sample per item) keeps the group's call FFT2D_128Vertical(Out, ...) type-correct.
            TCArg("Word32 * __restrict__", "InOut"),
            TCArg("Word16 * __restrict__", "Twiddles"),
            TCArg("Word16 * __restrict__", "SwapTable")
        ),
        Calls(2,
            Call(KerVertical, LOC_INNER_LOOP,
                Bindings(4,
                    K_Arg("InOut", KER_ARG_TILE),
                    C_Arg("Twiddles"),
                    K_Arg("InOut", KER_ARG_TILE_H),
                    K_Arg("InOut", KER_ARG_TILE_W))),
            Call("SwapSamples_2D_Vertical_Par", LOC_INNER_LOOP,
                Bindings(4,
                    K_Arg("InOut", KER_ARG_TILE),
                    C_Arg("SwapTable"),
                    K_Arg("InOut", KER_ARG_TILE_H),
                    K_Arg("InOut", KER_ARG_TILE_W)))
        ),
        KerArgs(1,
            KerArg("InOut", OBJ_IN_OUT_DB, Dim, Dim, sizeof("Word32"), 0, 0, 8, "InOut", 0)
        )
    )
    # The kernel group is closed
    CloseKernelGroup()

    # Now we model the kernel group C template, then we provide the list of
    # user calls, in this case horizontal and vertical FFT and we model the
    # bindings between user kernel group C arguments and the 2 called
    # user kernels in the group
    UserKernelGroup(Name,
        CArgs(4,
            TCArg("Wordu8 * __restrict__", "In"),
            TCArg("Word32 * __restrict__", "Out"),
            TCArg("Word16 * __restrict__", "Twiddles"),
            TCArg("Word16 * __restrict__", "SwapTable")
        ),
        Calls(2,
            UserKernelCall(AppendNames(Name, "Horizontal"), LOC_GROUP,
                Bindings(4, C_Arg("In"), C_Arg("Out"), C_Arg("Twiddles"), C_Arg("SwapTable"))),
            UserKernelCall(AppendNames(Name, "Vertical"), LOC_GROUP,
                Bindings(3, C_Arg("Out"), C_Arg("Twiddles"), C_Arg("SwapTable")))
        )
    )


def declare(l1=L1_BUDGET, Dim=DIM, name=None, ForceRadix2=FORCE_RADIX2):
    """Declare the whole model (configuration, basic kernels, kernel group) in the current
    model, without parsing options or generating code. The group is named ``FFT2D_<Dim>``
    unless ``name`` is given."""
    ConfigureTiler(l1)
    LoadFFT2DLibrary()
    FFT2D(name if name is not None else "FFT2D_%d" % Dim, Dim, ForceRadix2)


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
