"""The GAP SDK's MatMult generator (tools/autotiler_v3/Generators/MatMult): two tiled spaces.

``Out = M1 x M2`` on 16-bit fixed-point matrices, each output
``clip16(roundnorm(sum of the products, Norm))`` with an int32 accumulator. Ported as the SDK's
model (examples/autotiler/MatMult) uses the generators, with its sizes: M1 of 200 lines x 70
columns times M2 of 70 x 150, an L1 of 45000 bytes, and buffer promotion off:

* ``ParMatMultGenerator``: the iteration space has two tiled spaces, ``T1`` outside ``T0``.
  M1 and Out are tiled horizontally along T1 (bands of full lines), M2 vertically along T0
  (``OBJ_CONSTRAINTS_TILE_VER``: bands of full columns, a 2D transfer each). For each band of
  M1 the T0 loop streams the column bands of M2 and the basic kernel fills the matching
  columns of the Out band (``OutFirstCol`` = ``KER_ARG_TILE_BASE`` of M2, in columns); the Out
  band is written back once per T1 iteration, after the T0 loop.
* ``ParVectMatMultGenerator``: the same, with a vectorial basic kernel that copies two columns
  of M2 at a time into an L1 scratch buffer ``KerBuff`` (``O_BUFF|O_NTILED``, 2 x ColM1
  items, the SDK's Nbuff = 2 for 16 bits) and computes them with 2-way dot products.

Only the 16-bit type (the SDK's ``Type`` 1: short, with Norm) has basic kernels here
(MatMultBasicKernels.c); the generators refuse the other types.

The kernel group ``MatMult`` runs both user kernels on the same inputs, as the SDK example's
main.c does (a group is one generated function, which the example tests call):

Generated C functions::

    void ParMatMult(short int * __restrict__ M1, short int * __restrict__ M2,
                    short int * __restrict__ Out, unsigned int Norm);
    void ParVectMatMult(short int * __restrict__ M1, short int * __restrict__ M2,
                        short int * __restrict__ Out, unsigned int Norm);
    void MatMult(short int * __restrict__ M1, short int * __restrict__ M2,
                 short int * __restrict__ Out, short int * __restrict__ VectOut, unsigned int Norm);

Run: ``python examples/matmult/model.py -o OUTDIR [--L1 BYTES]``
"""

import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

# Model-level constants (imported by the tests): the SDK example's sizes and memories.
LINE_M1, COL_M1 = 200, 70    # M1: 200 lines of 70
LINE_M2, COL_M2 = 70, 150    # M2: 70 lines of 150
TYPE = 1                     # 16-bit (short int) with Norm
L1_BUDGET = 45000            # bytes of shared L1 given to the tiler
L2_SIZE = 360 * 1024
L3_HRAM_SIZE = 8 * 1024 * 1024
L3_HFLASH_SIZE = 20 * 1024 * 1024
GROUP = "MatMult"            # both kernels on the same inputs (the example's test sequence)
SIZES = {"LineM1": LINE_M1, "ColM1": COL_M1, "ColM2": COL_M2}
BASIC_KERNELS_HEADER = "MatMultBasicKernels.h"
GENERATED_FILES = ("MatMultKernels.c", "MatMultKernels.h")

# Data type, scalar kernel, vectorial kernel and its number of buffered columns, per Type
# (the SDK's types 0 (char), 2 (int), 3 (f16) and 4 (float) have no basic kernels here).
TYPES = {1: ("short int", "KerMatMultParallel16", "KerMatMultParallelVectorial16", 2)}

# The argument struct of the kernels (KerMatMultParallel16_ArgT in MatMultBasicKernels.h).
MATMULT16_CARGS = (
    ("short int * __restrict__", "In1"),
    ("unsigned int", "W_In1"),
    ("unsigned int", "H_In1"),
    ("short int * __restrict__", "In2"),
    ("unsigned int", "W_In2"),
    ("short int * __restrict__", "Out"),
    ("unsigned int", "W_Out"),
    ("unsigned int", "OutFirstCol"),
    ("short int * __restrict__", "BufferColIn2"),
    ("unsigned int", "Norm"),
)


def MatMultConfiguration(L1Memory):
    """The SDK model's settings: dynamic symbols, file names, no buffer promotion, memories."""
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetKernelOpts(KER_OPT_NONE, KER_OPT_BUFFER_PROMOTE)
    SetMemoryDeviceInfos(4,
        AT_MEM_L1, L1Memory, "L1_Memory", 0, 0,
        AT_MEM_L2, L2_SIZE, "L2_Memory", 0, 0,
        AT_MEM_L3_HRAM, L3_HRAM_SIZE, "0", 0, 0,
        AT_MEM_L3_HFLASH, L3_HFLASH_SIZE, "0", 0, 0
    )


def LoadMatMultLibrary():
    """The 16-bit basic kernels (one argument struct for both)."""
    # Cost (an estimate, from KerMatMultParallel16): each core computes ceil(W_In2/ncores)
    # columns of H_In1 outputs; an output is W_In1 multiply-accumulates at ~3 cycles (2 loads,
    # one of them strided down a column of In2, and a MAC: a GAP core does 1 load/store or ALU op
    # a cycle and its hardware loops cost nothing) plus ~8 cycles (round, clip, store, loop and
    # pointer set-up); ~20 cycles for the chunk bounds and the barrier.
    LibKernel("KerMatMultParallel16", CALL_PARALLEL,
        CArgs(10, *(TCArg(t, n) for t, n in MATMULT16_CARGS)),
        "KerMatMultParallel16_ArgT", None,
        Cost="((W_In2 + ncores - 1)/ncores)*H_In1*(3*W_In1 + 8) + 20"
    )
    # Cost (an estimate, from KerMatMultParallelVectorial16): ceil(W_In2/2) column pairs, each
    # (a) a copy of two columns, each core ceil(W_In1/ncores) lines at ~5 cycles a line (2
    # strided loads, 2 stores, the address), then a barrier (~10); (b) each core
    # ceil(H_In1/ncores) lines of In1 at ~5 cycles per pair of items (1 v2s load of In1, 2 of
    # the buffer, 2 sum-dot-products) plus ~12 (2 outputs rounded, clipped, stored, set-up),
    # then a barrier (~10); plus ~20 cycles for the chunk bounds.
    LibKernel("KerMatMultParallelVectorial16", CALL_PARALLEL,
        CArgs(10, *(TCArg(t, n) for t, n in MATMULT16_CARGS)),
        "KerMatMultParallel16_ArgT", None,
        Cost="((W_In2 + 1)/2)*(5*((W_In1 + ncores - 1)/ncores) + 10"
             " + ((H_In1 + ncores - 1)/ncores)*(5*((W_In1 + 1)/2) + 12) + 10) + 20"
    )


def _check(Name, LineM1, ColM1, LineM2, ColM2, Type):
    if ColM1 != LineM2:
        GenTilingError("%s: Incorrect input matrices dimensions for a matrix multiplication: [%d x %d]*[%d x %d]",
                       Name, LineM1, ColM1, LineM2, ColM2)
    if Type not in TYPES:
        GenTilingError("%s: data type %d has no basic kernel in this port (only 1: short int)", Name, Type)
    return TYPES[Type]


def ParMatMultGenerator(Name, LineM1, ColM1, LineM2, ColM2, Type):
    """Out[LineM1 x ColM2] = M1[LineM1 x ColM1] x M2[LineM2 x ColM2], scalar basic kernel."""
    CType, KerName, _, _ = _check(Name, LineM1, ColM1, LineM2, ColM2, Type)
    DataSize = sizeof(CType)
    LineO, ColO = LineM1, ColM2
    UserKernel(Name,
        # T1 (bands of lines of M1 and Out) outside T0 (bands of columns of M2)
        KernelIterSpace(2, IterTiledSpace(KER_ITER_TILE1), IterTiledSpace(KER_ITER_TILE0)),
        TILE_HOR,
        CArgs(4,
            TCArg(CType + " * __restrict__", "M1"),
            TCArg(CType + " * __restrict__", "M2"),
            TCArg(CType + " * __restrict__", "Out"),
            TCArg("unsigned int", "Norm")
        ),
        Calls(1,
            Call(KerName, LOC_LOOP,
                Bindings(10,
                    K_Arg("M1", KER_ARG_TILE),          # In1: the band of M1
                    K_Arg("M1", KER_ARG_TILE_W),        # W_In1 (= ColM1)
                    K_Arg("M1", KER_ARG_TILE_H),        # H_In1: lines of the band
                    K_Arg("M2", KER_ARG_TILE),          # In2: the band of M2
                    K_Arg("M2", KER_ARG_TILE_W),        # W_In2: columns of the band
                    K_Arg("Out", KER_ARG_TILE),         # Out: the band of Out (full lines)
                    K_Arg("Out", KER_ARG_TILE_W),       # W_Out (= ColO)
                    K_Arg("M2", KER_ARG_TILE_BASE),     # OutFirstCol: first column of M2's band
                    AT_IGNORE_ARG_BINDING,              # BufferColIn2: unused by the scalar kernel
                    C_Arg("Norm")                       # Norm
                )
            )
        ),
        KerArgs(3,
            KerArg("M1",  KerArgSpace(1, KER_ITER_TILE1), O_IN | O_DB, ColM1, LineM1, DataSize, 0,
                   OBJ_CONSTRAINTS_PAD_REM, 0, "M1"),
            KerArg("M2",  KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB, ColM2, LineM2, DataSize, 0,
                   OBJ_CONSTRAINTS_TILE_VER | OBJ_CONSTRAINTS_PAD_REM, 0, "M2"),
            KerArg("Out", KerArgSpace(1, KER_ITER_TILE1), O_OUT | O_DB, ColO, LineO, DataSize, 0,
                   OBJ_CONSTRAINTS_PAD_REM, 0, "Out")
        )
    )


def ParVectMatMultGenerator(Name, LineM1, ColM1, LineM2, ColM2, Type):
    """As ParMatMultGenerator, with the vectorial basic kernel and its column buffer KerBuff."""
    CType, _, KerName, Nbuff = _check(Name, LineM1, ColM1, LineM2, ColM2, Type)
    DataSize = sizeof(CType)
    LineO, ColO = LineM1, ColM2
    UserKernel(Name,
        KernelIterSpace(2, IterTiledSpace(KER_ITER_TILE1), IterTiledSpace(KER_ITER_TILE0)),
        TILE_HOR,
        CArgs(4,
            TCArg(CType + " * __restrict__", "M1"),
            TCArg(CType + " * __restrict__", "M2"),
            TCArg(CType + " * __restrict__", "Out"),
            TCArg("unsigned int", "Norm")
        ),
        Calls(1,
            Call(KerName, LOC_LOOP,
                Bindings(10,
                    K_Arg("M1", KER_ARG_TILE),
                    K_Arg("M1", KER_ARG_TILE_W),
                    K_Arg("M1", KER_ARG_TILE_H),
                    K_Arg("M2", KER_ARG_TILE),
                    K_Arg("M2", KER_ARG_TILE_W),
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE_W),
                    K_Arg("M2", KER_ARG_TILE_BASE),
                    K_Arg("KerBuff", KER_ARG_TILE),     # BufferColIn2: the L1 scratch buffer
                    C_Arg("Norm")
                )
            )
        ),
        KerArgs(4,
            # Nbuff columns of M2 (ColM1 = LineM2 items each), in L1 only
            KerArg("KerBuff", KerArgSpace(1, KER_ITER_TILE0), O_BUFF | O_NTILED, Nbuff * ColM1, 1, DataSize, 0,
                   0, 0, 0),
            KerArg("M1",  KerArgSpace(1, KER_ITER_TILE1), O_IN | O_DB, ColM1, LineM1, DataSize, 0,
                   OBJ_CONSTRAINTS_PAD_REM, 0, "M1"),
            KerArg("M2",  KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB, ColM2, LineM2, DataSize, 0,
                   OBJ_CONSTRAINTS_TILE_VER | OBJ_CONSTRAINTS_PAD_REM, 0, "M2"),
            KerArg("Out", KerArgSpace(1, KER_ITER_TILE1), O_OUT | O_DB, ColO, LineO, DataSize, 0,
                   OBJ_CONSTRAINTS_PAD_REM, 0, "Out")
        )
    )


def MatMultTestGroup(Name, ParName, VectName, Type):
    """A kernel group calling both user kernels on the same M1, M2 and Norm, into Out and VectOut."""
    CType = TYPES[Type][0] + " * __restrict__"
    UserKernelGroup(Name,
        CArgs(5,
            TCArg(CType, "M1"),
            TCArg(CType, "M2"),
            TCArg(CType, "Out"),
            TCArg(CType, "VectOut"),
            TCArg("unsigned int", "Norm")
        ),
        Calls(2,
            UserKernelCall(ParName, LOC_GROUP,
                Bindings(4, C_Arg("M1"), C_Arg("M2"), C_Arg("Out"), C_Arg("Norm"))),
            UserKernelCall(VectName, LOC_GROUP,
                Bindings(4, C_Arg("M1"), C_Arg("M2"), C_Arg("VectOut"), C_Arg("Norm")))
        )
    )


def declare(l1=L1_BUDGET, LineM1=LINE_M1, ColM1=COL_M1, ColM2=COL_M2, Type=TYPE, group=GROUP):
    """Declare the whole model in the current model, without parsing options or generating
    code: the SDK model's two kernels ParMatMult and ParVectMatMult, in the group ``group``."""
    MatMultConfiguration(l1)
    LoadMatMultLibrary()
    OpenKernelGroup(group)
    ParMatMultGenerator("ParMatMult", LineM1, ColM1, ColM1, ColM2, Type)
    ParVectMatMultGenerator("ParVectMatMult", LineM1, ColM1, ColM1, ColM2, Type)
    CloseKernelGroup()
    MatMultTestGroup(group, "ParMatMult", "ParVectMatMult", Type)


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
