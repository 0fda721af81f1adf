"""A FIR filter with a delay line: port of the GAP SDK generator ``GeneratorFIR``.

``GeneratorFIR(Name, NSamples, NCoeffs, Generic, Scalar)`` declares a user kernel filtering
NSamples 16-bit samples with NCoeffs 16-bit taps (32-bit sums, rounded, shifted by Norm and
saturated to 16 bits; see FirBasicKernels.h). As the original, it makes two attempts:

1. an untiled kernel (the whole signal in L1, its delay line zeroed by ``KerFirParallelInit``),
   tried with ``AT_KERNEL_NOSOLUTION_ERROR`` off so that ``UserKernel`` returns None when the
   signal does not fit;
2. otherwise a tiled kernel: ``KerIn`` is a ``KerArgPad`` with NCoeffs items of BottomBuffer
   before every double-buffered tile (its delay line), ``KER_ARG_TILE`` is the tile's first
   sample and ``KER_ARG_TILE_NEXTDB`` the first sample of the other buffer, where the next tile
   arrives; the filter kernel of a tile copies the tile's last NCoeffs-1 samples just below
   that address, so the next tile finds its delay line in place. The init kernel at
   ``LOC_LOOP_PROLOG`` zeroes the first buffer's delay line; tile lengths are preferably
   multiples of NCoeffs (PreferedTileSize).

The coefficients are a non-tiled L1 buffer (read once). The SDK's FirModel.c declares the
10- and 20-tap kernels below (and 40-tap ones) on 32768 samples at an L1 budget of 51200
bytes, where the untiled attempt (about 128 KiB) fails and the tiled one is used.

The kernel group ``Fir`` runs every kernel on the same signal, each into its own output, as
the SDK example's main.c does (a group is one generated function, which the example tests
call).

Generated C functions (one per generator, and the group)::

    void TiledFir10Generic(short int * __restrict__ In, short int * __restrict__ Coeffs,
                           short int * __restrict__ Out, unsigned int Norm);
    void Fir(short int * __restrict__ In, short int * __restrict__ Coeffs10,
             short int * __restrict__ Coeffs20, short int * __restrict__ TiledFir10GenericScalarOut,
             ... (one output per generator, in GENERATORS order), unsigned int Norm);

Run: ``python examples/fir/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests).
NSAMPLES = 32768         # the SDK's FirModel.c: Samples = 32768
L1_BUDGET = 51200        # FIRConfiguration(51200)
# (Name, NCoeffs, Generic, Scalar) as in the SDK's FirModel.c (10 and 20 taps).
GENERATORS = (
    ("TiledFir10GenericScalar", 10, 1, 1),
    ("TiledFir10Generic", 10, 1, 0),
    ("TiledFir10Opt", 10, 0, 0),
    ("TiledFir20GenericScalar", 20, 1, 1),
    ("TiledFir20Generic", 20, 1, 0),
    ("TiledFir20Opt", 20, 0, 0),
)
GROUP = "Fir"            # every kernel on the same signal (the example's test sequence)
SIZES = {"NSamples": NSAMPLES}
BASIC_KERNELS_HEADER = "FirBasicKernels.h"
GENERATED_FILES = ("FirKernels.c", "FirKernels.h")


def FIRConfiguration(L1Memory):
    """As the SDK's FIRConfiguration: inlining, symbol names, files, L1 budget."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolNames("FIR_L1_Memory", "FIR_L2_Memory")
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetL1MemorySize(L1Memory)


def LoadFIRLibrary():
    """The init kernel and the four filter kernels (same C template KerFirParallel_ArgT)."""
    # Cost (an estimate, from FirBasicKernels.c): each core zeroes ceil(NCoeffs/ncores) items at
    # 1 cycle an item (1 store), plus ~20 cycles of set-up.
    LibKernel("KerFirParallelInit", CALL_PARALLEL,
        CArgs(2,
            TCArg("short int * __restrict__", "In"),
            TCArg("unsigned int", "NCoeffs")
        ),
        "KerFirParallelInit_ArgT",
        Cost="(NCoeffs + ncores - 1)/ncores + 20"
    )
    FirArgs = CArgs(7,
        TCArg("short int * __restrict__", "In"),
        TCArg("short int * __restrict__", "NextIn"),
        TCArg("short int * __restrict__", "Coeffs"),
        TCArg("short int * __restrict__", "Out"),
        TCArg("unsigned int", "NSamples"),
        TCArg("unsigned int", "NCoeffs"),
        TCArg("unsigned int", "Norm")
    )
    # Costs (estimates; GAP cores do 1 load/store and ~1 ALU op a cycle, hardware loops cost
    # nothing): each core computes ceil(NSamples/ncores) outputs, each ~8 cycles of round, clip,
    # store and loop set-up plus the taps; then core 0 copies the NCoeffs-1 delay-line samples at
    # 2 cycles each (1 load, 1 store), plus ~30 cycles of set-up and the two barriers.
    # Scalar: a tap is 3 cycles (2 loads, 1 multiply-accumulate).
    LibKernel("KerFirParallelScalarNTaps", CALL_PARALLEL, FirArgs, "KerFirParallel_ArgT",
        Cost="((NSamples + ncores - 1)/ncores)*(3*NCoeffs + 8) + 2*NCoeffs + 30")
    # Pairs of taps: 2 sample loads and 2 coefficient loads, a pack of each, 1 sumdotp2: 7 cycles.
    LibKernel("KerFirParallelNTaps", CALL_PARALLEL, FirArgs, "KerFirParallel_ArgT",
        Cost="((NSamples + ncores - 1)/ncores)*(7*(NCoeffs/2) + 8) + 2*NCoeffs + 30")
    # Fixed taps kept packed in registers: a pair is 2 sample loads, 1 pack, 1 sumdotp2 (4
    # cycles); packing the taps once per call is 4 cycles a pair.
    LibKernel("KerFirParallel10Taps", CALL_PARALLEL, FirArgs, "KerFirParallel_ArgT",
        Cost="((NSamples + ncores - 1)/ncores)*(4*5 + 8) + 4*5 + 2*NCoeffs + 30")
    LibKernel("KerFirParallel20Taps", CALL_PARALLEL, FirArgs, "KerFirParallel_ArgT",
        Cost="((NSamples + ncores - 1)/ncores)*(4*10 + 8) + 4*10 + 2*NCoeffs + 30")


def FirKernelName(NCoeffs, Generic, Scalar):
    """The SDK's choice of filter kernel."""
    if not Generic:
        return {10: "KerFirParallel10Taps", 20: "KerFirParallel20Taps"}.get(NCoeffs, "KerFirParallelNTaps")
    return "KerFirParallelScalarNTaps" if Scalar else "KerFirParallelNTaps"


def FirUserKernel(Name, NSamples, NCoeffs, KerFirName, Tiled):
    """One attempt of GeneratorFIR: the untiled (Tiled=0) or the tiled (Tiled=1) user kernel.
    Returns the kernel, or None if it has no solution and AT_KERNEL_NOSOLUTION_ERROR is off."""
    return UserKernel(Name,
        # KernelDimensions(0, 1, 1, 0), KernelIterationOrder(1, KER_TILE) in the v2 form
        KernelIterSpace(1, IterTiledSpace(KER_TILE)),
        TILE_HOR,
        CArgs(4,
            TCArg("short int * __restrict__", "In"),
            TCArg("short int * __restrict__", "Coeffs"),
            TCArg("short int * __restrict__", "Out"),
            TCArg("unsigned int", "Norm")
        ),
        Calls(2,
            # Zero the delay line of the first buffer, once before the tiles: the first tile's
            # DMA may still be in flight here, so the kernel touches only the NCoeffs samples
            # below the tile pointer (the delay line), as the SDK's generator does.
            Call("KerFirParallelInit", LOC_LOOP_PROLOG,
                Bindings(2,
                    K_Arg("KerIn", KER_ARG_TILE),
                    Imm(NCoeffs)
                )
            ),
            Call(KerFirName, LOC_LOOP,
                Bindings(7,
                    K_Arg("KerIn", KER_ARG_TILE),
                    # Where the next tile is loaded: its delay line is just below it. Untiled:
                    # no next tile (and no other buffer), so no copy
                    K_Arg("KerIn", KER_ARG_TILE_NEXTDB) if Tiled else Imm(0),
                    K_Arg("KerCoeffs", KER_ARG_TILE),
                    K_Arg("KerOut", KER_ARG_TILE),
                    K_Arg("KerIn", KER_ARG_TILE_H) if Tiled else Imm(NSamples),
                    Imm(NCoeffs),
                    C_Arg("Norm")
                )
            )
        ),
        KerArgs(3,
            # NSamples lines of 1 sample, NCoeffs items of delay line before every buffer;
            # tiled: tiles preferably multiples of NCoeffs samples
            KerArgPad("KerIn", KerArgSpace(1, KER_TILE), OBJ_IN_DB if Tiled else O_IN | O_NTILED,
                1, NSamples, NCoeffs, 0, sizeof("short"), 0, 0, NCoeffs if Tiled else 0, "In"),
            # The taps, loaded once into an L1 buffer
            KerArg("KerCoeffs", KerArgSpace(1, KER_TILE), O_IN | O_NTILED | O_BUFF,
                1, NCoeffs, sizeof("short"), 0, 0, 0, "Coeffs"),
            KerArg("KerOut", KerArgSpace(1, KER_TILE), OBJ_OUT_DB if Tiled else O_OUT | O_NTILED,
                1, NSamples, sizeof("short"), 0, 0, 0, "Out")
        )
    )


def GeneratorFIR(Name, NSamples, NCoeffs, Generic, Scalar):
    """A FIR of NCoeffs taps on NSamples samples: the whole signal in L1 if it fits, otherwise
    tiled with the delay line carried from tile to tile. Returns the kernel."""
    KerFirName = FirKernelName(NCoeffs, Generic, Scalar)
    # First try without tiling. The tiled form binds KER_ARG_TILE_NEXTDB, which has no meaning
    # when the whole signal is one tile, so we do not let the untiled try fail with an error
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    Kernel = FirUserKernel(Name, NSamples, NCoeffs, KerFirName, 0)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)
    if Kernel is None:
        Kernel = FirUserKernel(Name, NSamples, NCoeffs, KerFirName, 1)
    return Kernel


def FirTestGroup(Name, Generators):
    """A kernel group calling every generated FIR on the same In and Norm: the taps Coeffs<N>
    for each number of taps N, and one output <Kernel>Out per kernel."""
    Taps = sorted({NCoeffs for _, NCoeffs, _, _ in Generators})
    Args = ([TCArg("short int * __restrict__", "In")] +
            [TCArg("short int * __restrict__", "Coeffs%d" % N) for N in Taps] +
            [TCArg("short int * __restrict__", Kernel + "Out") for Kernel, _, _, _ in Generators] +
            [TCArg("unsigned int", "Norm")])
    KernelCalls = [
        UserKernelCall(Kernel, LOC_GROUP,
            Bindings(4, C_Arg("In"), C_Arg("Coeffs%d" % NCoeffs), C_Arg(Kernel + "Out"), C_Arg("Norm")))
        for Kernel, NCoeffs, _, _ in Generators
    ]
    UserKernelGroup(Name, CArgs(len(Args), *Args), Calls(len(KernelCalls), *KernelCalls))


def declare(l1=L1_BUDGET, NSamples=NSAMPLES, generators=GENERATORS, group=GROUP):
    """Declare the whole model (configuration, basic kernels, one user kernel per generator,
    all in the group ``group`` unless it is None) in the current model, without parsing
    options or generating code."""
    FIRConfiguration(l1)
    LoadFIRLibrary()
    if group:
        OpenKernelGroup(group)
    for Name, NCoeffs, Generic, Scalar in generators:
        GeneratorFIR(Name, NSamples, NCoeffs, Generic, Scalar)
    if group:
        CloseKernelGroup()
        FirTestGroup(group, generators)


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
