"""Every constant of the AutoTiler API, with the original's names.

Numeric values follow the newest v3 headers (``AutoTilerLibTypes.h``); the guide's v2 names are
aliases of their v3 counterparts where the v3 headers alias them (``KER_TILE`` is
``KER_ITER_TILE0``, ``KER_IN_PLANE`` is ``KER_ITER_D0``, ``LOC_INNER_LOOP`` is ``LOC_LOOP``, ...).
Flags that exist only in v2 (``O_3D``, ``O_4D``, ...) and constraints that exist only in some
versions (``EVEN``/``ODD``) take bits of their own so that every name can be OR-ed with every
other. Names are the contract; values only matter for OR-ing flags together.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class KernelCallTypeT(IntEnum):
    CALL_SEQUENTIAL = 0
    CALL_PARALLEL = 1
    CALL_SEQUENTIAL_STRUCT = 2
    CALL_PARALLEL_CC = 3


CALL_MASK = 3
CALL_FLOAT_KER = 4   # call-type attributes, OR-ed with the call type
CALL_HWC_KER = 8
CALL_NE16_KER = 16
CALL_ATTRIBUTES = {"CALL_FLOAT_KER": CALL_FLOAT_KER, "CALL_HWC_KER": CALL_HWC_KER, "CALL_NE16_KER": CALL_NE16_KER}


class Tile_Orientation_T(IntEnum):
    TILE_HOR = 0   # full-width tiles, variable height
    TILE_VER = 1   # full-height tiles, variable width
    TILE_HWC = 2   # vertical, HWC order (newest header)


class KernelIterationDimT(IntEnum):
    KER_DIM0 = 0
    KER_DIM1 = 1
    KER_DIM2 = 2
    KER_DIM3 = 3
    KER_DIM4 = 4


class KernelIteratorT(IntEnum):
    """Iteration spaces: three tiled (T0..T2) and four non-tiled (D0..D3). The v2 names are
    the v3 headers' aliases: KER_TILE=T0, KER_IN_PLANE=D0, KER_OUT_PLANE=D1, KER_IN_OUT_PLANE=D2."""

    KER_ITER_TILE0 = 0
    KER_ITER_TILE1 = 1
    KER_ITER_TILE2 = 2
    KER_ITER_D0 = 3
    KER_ITER_D1 = 4
    KER_ITER_D2 = 5
    KER_ITER_D3 = 6
    KER_TILE = 0
    KER_TILE1 = 1
    KER_TILE2 = 2
    KER_IN_PLANE = 3
    KER_OUT_PLANE = 4
    KER_IN_OUT_PLANE = 5


KER_ITER_TILE_MAX = 3
MAX_ARG_DIM = 5

# Short names the SDK's generators #define for themselves (T0..T2, D0..D3), and the generated
# code's iterator variable prefixes.
SPACE_SHORT = {0: "T0", 1: "T1", 2: "T2", 3: "D0", 4: "D1", 5: "D2", 6: "D3"}
V2_ITERATOR_NAMES = {0: "KER_TILE", 1: "KER_TILE1", 2: "KER_TILE2", 3: "KER_IN_PLANE", 4: "KER_OUT_PLANE",
                     5: "KER_IN_OUT_PLANE"}


def is_tiled_space(space: int) -> bool:
    return int(space) < KER_ITER_TILE_MAX


class KernelCallLocationT(IntEnum):
    """Where a call goes in the loop nest. ``LOC_<S>`` is the body of space S's loop,
    ``LOC_<S>_PROLOG``/``_EPILOG`` are just before its first / after its last iteration (inside
    the enclosing loop); LOC_LOOP* name the tiled spaces T0..T2. v2 names are aliases."""

    LOC_LOOP = 0
    LOC_LOOP_PROLOG = 1
    LOC_LOOP_EPILOG = 2
    LOC_LOOP1 = 3
    LOC_LOOP1_PROLOG = 4
    LOC_LOOP1_EPILOG = 5
    LOC_LOOP2 = 6
    LOC_LOOP2_PROLOG = 7
    LOC_LOOP2_EPILOG = 8
    LOC_D0 = 9
    LOC_D0_PROLOG = 10
    LOC_D0_EPILOG = 11
    LOC_D1 = 12
    LOC_D1_PROLOG = 13
    LOC_D1_EPILOG = 14
    LOC_D2 = 15
    LOC_D2_PROLOG = 16
    LOC_D2_EPILOG = 17
    LOC_D3 = 18
    LOC_D3_PROLOG = 19
    LOC_D3_EPILOG = 20
    LOC_PROLOG = 21
    LOC_EPILOG = 22
    LOC_GROUP = 23
    LOC_INNER_LOOP = 0
    LOC_INNER_LOOP_PROLOG = 1
    LOC_INNER_LOOP_EPILOG = 2
    LOC_INNER_LOOP1 = 3
    LOC_INNER_LOOP1_PROLOG = 4
    LOC_INNER_LOOP1_EPILOG = 5
    LOC_INNER_LOOP2 = 6
    LOC_INNER_LOOP2_PROLOG = 7
    LOC_INNER_LOOP2_EPILOG = 8
    LOC_IN_PLANE = 9
    LOC_IN_PLANE_PROLOG = 10
    LOC_IN_PLANE_EPILOG = 11
    LOC_OUT_PLANE = 12
    LOC_OUT_PLANE_PROLOG = 13
    LOC_OUT_PLANE_EPILOG = 14
    LOC_IN_OUT_PLANE = 15
    LOC_IN_OUT_PLANE_PROLOG = 16
    LOC_IN_OUT_PLANE_EPILOG = 17


# (space, part) of every per-space location; part is "body", "prolog" or "epilog".
LOCATION_SPACE = {int(KernelCallLocationT.LOC_LOOP) + 3 * i + k: (i, part)
                  for i in range(7) for k, part in enumerate(("body", "prolog", "epilog"))}
V2_LOCATION_NAMES = {0: "LOC_INNER_LOOP", 1: "LOC_INNER_LOOP_PROLOG", 2: "LOC_INNER_LOOP_EPILOG",
                     3: "LOC_INNER_LOOP1", 4: "LOC_INNER_LOOP1_PROLOG", 5: "LOC_INNER_LOOP1_EPILOG",
                     6: "LOC_INNER_LOOP2", 7: "LOC_INNER_LOOP2_PROLOG", 8: "LOC_INNER_LOOP2_EPILOG",
                     9: "LOC_IN_PLANE", 10: "LOC_IN_PLANE_PROLOG", 11: "LOC_IN_PLANE_EPILOG",
                     12: "LOC_OUT_PLANE", 13: "LOC_OUT_PLANE_PROLOG", 14: "LOC_OUT_PLANE_EPILOG",
                     15: "LOC_IN_OUT_PLANE", 16: "LOC_IN_OUT_PLANE_PROLOG", 17: "LOC_IN_OUT_PLANE_EPILOG"}


class KernelArgSelect_T(IntEnum):
    """What a K_Arg binding selects of a kernel argument (newest v3 numbering)."""

    KER_ARG_NONE = 0
    KER_ARG_TILE = 1
    KER_ARG_TILE_NEXTDB = 2
    KER_ARG_TILE_OFF = 3
    KER_ARG_TILE_1_2 = 4
    KER_ARG_TILE_W = 5
    KER_ARG_TILE_USEDW = 6
    KER_ARG_TILE_H = 7
    KER_ARG_TILE_USEDH = 8
    KER_ARG_TILE_W0 = 9
    KER_ARG_TILE_H0 = 10
    KER_ARG = 11
    KER_ARG_W = 12
    KER_ARG_H = 13
    KER_ARG_NTILES = 14
    KER_ARG_TILEFIRST = 15
    KER_ARG_TILELAST = 16
    KER_ARG_TILEINDEX = 17
    KER_ARG_TILE_BASE = 18
    KER_ARG_TILE_PRED_LIST = 19
    KER_ARG_IT_INDEX = 20
    KER_ARG_PAD = 21
    KER_ARG_TILE_PAD = 22
    KER_ARG_PARTILE_DIM = 23
    KER_ARG_PARTILE_SIZE = 24
    KER_ARG_LOADEDPARTILE_SIZE = 25
    KER_ARG_FIRST_TILE = 26
    KER_ARG_NEXT_TILE = 27
    KER_ARG_FIRST_TILE_W = 28
    KER_ARG_NEXT_TILE_W = 29
    KER_ARG_FIRST_TILE_H = 30
    KER_ARG_NEXT_TILE_H = 31
    KER_ARG_FIRST_TILE_PAD = 32
    KER_ARG_NEXT_TILE_PAD = 33
    KER_ARG_FIRST_PARTILE_SIZE = 34
    KER_ARG_NEXT_PARTILE_SIZE = 35
    KER_ARG_NEXT_TILELAST = 36
    KER_IT_INDEX = 37
    KER_ARG_INPLANEINDEX = 45
    KER_ARG_OUTPLANEINDEX = 46
    KER_ARG_TILEOFFSET = 18  # the guide's name for the tile's start in lines/columns (= TILE_BASE)


class Object_Type_T(IntFlag):
    """Kernel-argument properties. v3 bit layout; the v2-only flags (O_3D, O_4D, O_PBUFF and the
    negations v3 dropped) sit above bit 39 so that every name combines with every other."""

    O_IN = 1 << 0
    O_NIN = 1 << 1
    O_OUT = 1 << 2
    O_NOUT = 1 << 3
    O_BUFF = 1 << 4
    O_NBUFF = 1 << 5
    O_TILED = 1 << 6
    O_NTILED = 1 << 7
    O_ONETILE = 1 << 8
    O_NONETILE = 1 << 9
    O_DB = 1 << 10
    O_NDB = 1 << 11
    O_L2DB = 1 << 12
    O_NL2DB = 1 << 13
    O_ALIAS = 1 << 14
    O_NALIAS = 1 << 15
    O_DYNTILE = 1 << 16
    O_CONST = 1 << 17
    O_STACK_PRED = 1 << 18
    O_ALWAYS_LOAD = 1 << 19
    O_NO_LOAD = 1 << 20
    O_NO_STORE = 1 << 21
    O_BIT = 1 << 22
    O_LINEAR = 1 << 23
    O_NE16_PW = 1 << 24
    O_NE16_DW = 1 << 25
    O_NE16_LIN = 1 << 26
    O_NE16_3X3 = 1 << 27
    O_FLOAT = 1 << 28
    O_HWC = 1 << 29
    O_NE16_RNN = 1 << 30
    O_NE16_INTER = 1 << 31
    O_NE16_MODE16 = 1 << 32
    O_3D = 1 << 40
    O_N3D = 1 << 41
    O_4D = 1 << 42
    O_N4D = 1 << 43
    O_PBUFF = 1 << 44
    O_NPBUFF = 1 << 45
    O_NDYNTILE = 1 << 46
    O_NCONST = 1 << 47
    O_TILE2 = 1 << 59
    O_TILE1 = 1 << 60
    O_TILE0 = 1 << 61


# Each positive flag and its negation: setting both is contradictory.
FLAG_PAIRS = (
    ("O_IN", "O_NIN"), ("O_OUT", "O_NOUT"), ("O_BUFF", "O_NBUFF"), ("O_TILED", "O_NTILED"),
    ("O_ONETILE", "O_NONETILE"), ("O_DB", "O_NDB"), ("O_L2DB", "O_NL2DB"), ("O_ALIAS", "O_NALIAS"),
    ("O_3D", "O_N3D"), ("O_4D", "O_N4D"), ("O_PBUFF", "O_NPBUFF"), ("O_DYNTILE", "O_NDYNTILE"),
    ("O_CONST", "O_NCONST"),
)
OBJECT_FLAG_BITS = int(sum(Object_Type_T))


class KernelArgConstraints_T(IntFlag):
    """Tile constraints of an argument (bit layout of the headers that have EVEN/ODD)."""

    OBJ_CONSTRAINTS_NONE = 0
    OBJ_CONSTRAINTS_EVEN = 1 << 1
    OBJ_CONSTRAINTS_ODD = 1 << 2
    OBJ_CONSTRAINTS_ONEPREFTILE = 1 << 3
    OBJ_CONSTRAINTS_TILE_HOR = 1 << 4
    OBJ_CONSTRAINTS_TILE_VER = 1 << 5
    OBJ_CONSTRAINTS_PAD_REM = 1 << 6
    OBJ_CONSTRAINTS_DROP_REM = 1 << 7
    OBJ_CONSTRAINTS_DYNAMIC = 1 << 8
    OBJ_CONSTRAINTS_2D = 1 << 9


CONSTRAINT_BITS = int(sum(KernelArgConstraints_T))

# Properties a KerArgSpace entry may carry: SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT).
SPACE_PROP_ABS = 0x10000
SPACE_PROP_REVERT = 0x20000
SPACE_PROP_PAD2PREF = 0x40000
SPACE_PROP_ONE_TILE = 0x80000
ITER_SPACE_MASK = 0x0FFFF
ITER_PROP_MASK = 0xFFFF0000
SPACE_PROPS = {"SPACE_PROP_ABS": SPACE_PROP_ABS, "SPACE_PROP_REVERT": SPACE_PROP_REVERT,
               "SPACE_PROP_PAD2PREF": SPACE_PROP_PAD2PREF, "SPACE_PROP_ONE_TILE": SPACE_PROP_ONE_TILE}


def SPACE_PROP(Space, Prop) -> int:
    """A KerArgSpace entry: ``Space`` with the properties ``Prop`` (SPACE_PROP_*) OR-ed in."""
    return (int(Space) & ITER_SPACE_MASK) | int(Prop)


class InlineModeT(IntEnum):
    NEVER_INLINE = 0
    ALWAYS_INLINE = 1
    SINGLE_INLINE = 2


class KernelOptimizationT(IntFlag):
    KER_OPT_NONE = 0
    KER_OPT_BUFFER_PROMOTE = 1 << 0
    KER_OPT_PARTIAL_BUFFER_PROMOTE = 1 << 1
    KER_OPT_KEEP_GROUP = 1 << 2


class KernelDimT(IntEnum):
    K_INP = 0
    K_OUTP = 1
    K_W = 2
    K_H = 3


class ArgBindingT(IntEnum):
    BIND_K_ARG = 0
    BIND_C_ARG = 1
    BIND_IMM = 2
    BIND_USYMB = 3
    BIND_KDIM = 4
    BIND_PRED_AND = 5
    BIND_PRED_OR = 6


class AT_KernelInfo_T(IntEnum):
    AT_KERINFO_OPER = 0
    AT_KERINFO_BANDWIDTH = 1


class AT_DumpTensor_T(IntFlag):
    """AT_GRAPH_DUMP_TENSOR's filter: which tensors of a node are dumped after it runs."""

    AT_DUMP_CONSTANT_IN = 1
    AT_DUMP_IN = 2
    AT_DUMP_OUT = 4


class AT_GraphCtrl_T(IntEnum):
    AT_KERNEL_BUFFER_PROMOTE = 1
    AT_KERNEL_PARTIAL_BUFFER_PROMOTE = 2
    AT_KERNEL_NOSOLUTION_ERROR = 3
    AT_GRAPH_MONITOR_CYCLES = 4
    AT_GRAPH_MONITOR_CVAR_NAME = 5
    AT_GRAPH_PRODUCE_NODE_NAMES = 6
    AT_GRAPH_PRODUCE_NODE_CVAR_NAME = 7
    AT_GRAPH_PRODUCE_OPERINFOS = 8
    AT_GRAPH_PRODUCE_OPERINFOS_CVAR_NAME = 9
    AT_GRAPH_REORDER_CONSTANT_IN = 10
    AT_GRAPH_TRACE_EXEC = 11
    AT_GRAPH_NOINLINE_NODE = 12
    AT_GRAPH_PREF_L3_EXEC = 13
    AT_GRAPH_CONST_EXEC_FROM_FLASH = 14
    AT_GRAPH_PREF_L3_HOME = 15
    AT_GRAPH_DUMP_TENSOR = 16
    AT_GRAPH_DUMP_ONE_NODE = 17
    AT_GRAPH_ARG2STRUCT = 18
    AT_GRAPH_SIZE_OPT = 19
    AT_GRAPH_WARM_CONSTRUCT = 20
    AT_GRAPH_CHECKSUM = 21
    AT_GRAPH_PRIVILEGED_L3_HOME = 22
    AT_GRAPH_DUMP_TENSOR_TO_FILE = 23
    AT_GRAPH_GROUP_WEIGHTS = 24
    AT_GRAPH_ASYNC_FORK = 25
    AT_GRAPH_DUMP_GRAPH_OUTPUTS = 26
    AT_GRAPH_RUNNER_RE_ENTRANT = 27
    AT_GRAPH_L1_PROMOTION = 28
    AT_GRAPH_DISABLE_CONST_L2_PROMOTION = 29
    AT_GRAPH_USE_MERGED_DMA = 30
    AT_GRAPH_L2_STATIC_MEMORY_BUDGET = 31
    AT_GRAPH_L3_STATIC_MEMORY_BUDGET = 32


class AT_MemLocation_T(IntEnum):
    AT_MEM_UNDEF = 0
    AT_MEM_L3_HRAM = 1
    AT_MEM_L3_QSPIRAM = 2
    AT_MEM_L3_OSPIRAM = 3
    AT_MEM_L3_HFLASH = 4
    AT_MEM_L3_QSPIFLASH = 5
    AT_MEM_L3_OSPIFLASH = 6
    AT_MEM_L3_MRAMFLASH = 7
    AT_MEM_L2 = 8
    AT_MEM_L1 = 9
    AT_MEM_L3_DEFAULTRAM = 10
    AT_MEM_L3_DEFAULTFLASH = 11
    AT_MEM_L3_PRI1 = 12
    AT_MEM_L3_PRI2 = 13
    AT_MEM_LAST = 14


class ArgScope_T(IntEnum):
    """Scope of a graph symbol (TCArgInfo)."""
    ARG_SCOPE_UNDEF = 0
    ARG_SCOPE_ARG = 1          # a parameter of the graph function
    ARG_SCOPE_ARG_ALLOC = 2    # a parameter whose buffer the graph allocates
    ARG_SCOPE_GLOBAL = 3       # a global symbol (constants)
    ARG_SCOPE_LOCAL = 4        # a graph-internal tensor


class ArgDirection_T(IntEnum):
    ARG_DIR_UNDEF = 0
    ARG_DIR_IN = 1
    ARG_DIR_CONSTIN = 2
    ARG_DIR_OUT = 3
    ARG_DIR_INOUT = 4


class GraghNodeArgT(IntEnum):
    """Direction of a node argument (GNodeArg); the original's spelling."""
    GNA_UNDEF = 0
    GNA_IN = 1
    GNA_OUT = 2
    GNA_INOUT = 3


class CallLocationT(IntEnum):
    """Where AddCallToNode inserts a call: before (CALL_PROLOG) or after (CALL_EPILOG) the node."""
    CALL_IN = 0
    CALL_PROLOG = 1
    CALL_EPILOG = 2
    CALL_LAST = 3


class KernelOper_T(IntEnum):
    """CNN operations (the CNN generators' ``ConvOper``, ``PoolOper``, ``ReLUOper``, ...): the
    newest header's members in its order (older headers are a strict subset in another order, so
    values are not portable; model scripts use the names)."""
    KOP_NONE = 0
    KOP_SETBIAS = 1
    KOP_SETBIAS_DP = 2
    KOP_CONV_HWCE = 3
    KOP_CONV = 4
    KOP_CONV1D = 5
    KOP_CONV_DP = 6
    KOP_CONV1D_DP = 7
    KOP_CONV_DW = 8
    KOP_CONV_DWDP = 9
    KOP_MM_CONV = 10
    KOP_MM_CONV_DW = 11
    KOP_MM_CONV1D = 12
    KOP_DP_REDUCT = 13
    KOP_DP_REDUCT_NOSCALE = 14
    KOP_DP_REDUCT_CHW2HWC = 15
    KOP_DP_REDUCT_IO = 16
    KOP_DP_REDUCT_MULBIAS = 17
    KOP_DP_REDUCT_IO_MULBIAS = 18
    KOP_DP_REDUCT_MULBIAS_SCALAR = 19
    KOP_DP_REDUCT_IO_MULBIAS_SCALAR = 20
    KOP_MAXPOOL = 21
    KOP_AVGPOOL = 22
    KOP_GLOBAL_MAXPOOL = 23
    KOP_GLOBAL_MAXPOOL_REDUCT = 24
    KOP_GLOBAL_AVGPOOL = 25
    KOP_GLOBAL_AVGPOOL_REDUCT = 26
    KOP_GLOBAL_SUMPOOL = 27
    KOP_GLOBAL_SUMPOOL_REDUCT = 28
    KOP_SCALE = 29
    KOP_ACT_NONE = 30
    KOP_RELU = 31
    KOP_RELUN = 32
    KOP_RELUM = 33
    KOP_RELUMN = 34
    KOP_HSIGMOID = 35
    KOP_HTANH = 36
    KOP_HSWISH = 37
    KOP_LEAKYRELU = 38
    KOP_SIGMOID = 39
    KOP_TANH = 40
    KOP_SWISH = 41
    KOP_LINEAR = 42
    KOP_LINEAR_DP = 43
    KOP_DP_REDUCT_LINEAR = 44
    KOP_MATADD = 45
    KOP_MATADD_DYNADJUST = 46
    KOP_MATMUL = 47
    KOP_MATMUL_NOBIAS = 48
    KOP_MATMUL_SM1 = 49
    KOP_MATMUL_SCALE = 50
    KOP_MATMUL_SCALE_SCALAR = 51
    KOP_MATMUL_NOBIAS_SCALE_SCALAR = 52
    KOP_MATMUL_TRANSPOSED = 53
    KOP_MATMUL_NOBIAS_TRANSPOSED = 54
    KOP_MATMUL_SCALE_SCALAR_TRANSPOSED = 55
    KOP_MATMUL_NOBIAS_SCALE_SCALAR_TRANSPOSED = 56
    KOP_MATMUL_SCALE_SM1 = 57
    KOP_MATMUL_SCALE_SCALAR_SM1 = 58
    KOP_MATSCALE_VECTOR = 59
    KOP_MATSCALE_SCALAR = 60
    KOP_MATSCALE_VECTOR_SCALAR = 61
    KOP_MATVECTMUL = 62
    KOP_MATTRANSP = 63
    KOP_MATPERM_CHW2CWH = 64
    KOP_MATPERM_CHW2HWC = 65
    KOP_MATPERM_CHW2WHC = 66
    KOP_MATPERM_CHW2WCH = 67
    KOP_MATPERM_CHW2HCW = 68
    KOP_MATPERM_HWC2HCW = 69
    KOP_MATPERM_HWC2WCH = 70
    KOP_MATPERM_HWC2WHC = 71
    KOP_MATPERM_HWC2CHW = 72
    KOP_MATPERM_HWC2CWH = 73
    KOP_SOFTMAX = 74
    KOP_EXPAND = 75
    KOP_COLLAPSE = 76
    KOP_COPY = 77
    KOP_RNN = 78
    KOP_LSTM = 79
    KOP_GRU = 80
    KOP_CONV_RELU = 81
    KOP_CONV_RELUN = 82
    KOP_CONV_MAXPOOL = 83
    KOP_CONV_MAXPOOL_RELU = 84
    KOP_CONV_MAXPOOL_RELUN = 85
    KOP_CONV_AVGPOOL = 86
    KOP_CONV_AVGPOOL_RELU = 87
    KOP_CONV_AVGPOOL_RELUN = 88
    KOP_CONV_DP_RELU = 89
    KOP_CONV_DP_RELUN = 90
    KOP_CONV_DP_MAXPOOL = 91
    KOP_CONV_DP_MAXPOOL_RELU = 92
    KOP_CONV_DP_MAXPOOL_RELUN = 93
    KOP_CONV_DP_AVGPOOL = 94
    KOP_CONV_DP_AVGPOOL_RELU = 95
    KOP_CONV_DP_AVGPOOL_RELUN = 96
    KOP_CONV_DW_RELU = 97
    KOP_CONV_DW_RELUN = 98
    KOP_CONV_DW_MAXPOOL = 99
    KOP_CONV_DW_MAXPOOL_RELU = 100
    KOP_CONV_DW_MAXPOOL_RELUN = 101
    KOP_CONV_DW_AVGPOOL = 102
    KOP_CONV_DW_AVGPOOL_RELU = 103
    KOP_CONV_DW_AVGPOOL_RELUN = 104
    KOP_CONV_DWDP_RELU = 105
    KOP_CONV_DWDP_RELUN = 106
    KOP_CONV_DWDP_MAXPOOL = 107
    KOP_CONV_DWDP_MAXPOOL_RELU = 108
    KOP_CONV_DWDP_MAXPOOL_RELUN = 109
    KOP_CONV_DWDP_AVGPOOL = 110
    KOP_CONV_DWDP_AVGPOOL_RELU = 111
    KOP_CONV_DWDP_AVGPOOL_RELUN = 112
    KOP_MAXPOOL_RELU = 113
    KOP_MAXPOOL_RELUN = 114
    KOP_AVGPOOL_RELU = 115
    KOP_AVGPOOL_RELUN = 116
    KOP_LINEAR_RELU = 117
    KOP_LINEAR_RELUN = 118
    KOP_MATADD_RELU = 119
    KOP_MATADD_RELUN = 120
    KOP_MATMUL_RELU = 121
    KOP_MATMUL_RELUN = 122
    KOP_ACT_NONE_IN_SCALE = 123
    KOP_RELU_IN_SCALE = 124
    KOP_RELUN_IN_SCALE = 125
    KOP_RELUM_IN_SCALE = 126
    KOP_RELUMN_IN_SCALE = 127
    KOP_HSIGMOID_IN_SCALE = 128
    KOP_HTANH_IN_SCALE = 129
    KOP_HSWISH_IN_SCALE = 130
    KOP_LEAKYRELU_IN_SCALE = 131
    KOP_SIGMOID_IN_SCALE = 132
    KOP_TANH_IN_SCALE = 133
    KOP_SWISH_IN_SCALE = 134
    KOP_DP_REDUCT_UNSIGNED = 135
    KOP_NORM_RGB565 = 136
    KOP_NORM_RGB888 = 137
    KOP_NORM_RGB16 = 138
    KOP_NORM_BW = 139
    KOP_NORM_BW16 = 140
    KOP_CONVERT_FL_FL = 141
    KOP_CONVERT_FP_FP = 142
    KOP_CONVERT_FP_FP_ZEROPOINT = 143
    KOP_CONVERT_FP_FP_SCALE = 144
    KOP_CONVERT_FL_FP = 145
    KOP_CONVERT_FP_FL = 146
    KOP_LAST = 147


class PadType_T(IntEnum):
    """Where the CNN generators put the odd padding element (``CNN_SetGenCtrl(Ctrl, "PADTYPE", v)``)."""
    PAD_LEFT = 0
    PAD_RIGHT = 1
    PAD_BALANCED_LEFT = 2
    PAD_BALANCED_RIGHT = 3


# AT_GRAPH_WARM_CONSTRUCT values (the guide's #defines)
WARM_DISABLED = 0
WARM_L1 = 1
WARM_L2_DYN_L1 = 2
WARM_ALL = 3

AT_OPT_OFF = 0
AT_OPT_ON = 1


def AT_OPT_VAL(value):
    """Wraps an option value, as the C macro does (a no-op in Python)."""
    return value


def _export_enum_members(*enums) -> dict:
    names = {}
    for enum in enums:
        for name, member in enum.__members__.items():  # aliases included
            names[name] = member
    return names


_ENUM_NAMES = _export_enum_members(
    KernelCallTypeT, Tile_Orientation_T, KernelIterationDimT, KernelIteratorT, KernelCallLocationT,
    KernelArgSelect_T, Object_Type_T, KernelArgConstraints_T, AT_GraphCtrl_T, AT_MemLocation_T, InlineModeT,
    KernelOptimizationT, KernelDimT, ArgBindingT, AT_KernelInfo_T, ArgScope_T, ArgDirection_T, GraghNodeArgT,
    CallLocationT, AT_DumpTensor_T, KernelOper_T, PadType_T,
)

_O = Object_Type_T


def _predefined_object_types() -> dict:
    """The OBJ_* names: the v3 list plus the guide's (v2) _3D, _4D and _NTILED variants, with
    the v2 header's own definitions (OBJ_OUT_4D has no O_3D bit there; O_4D implies 3D)."""
    bases = {
        "OBJ_IN": _O.O_IN, "OBJ_OUT": _O.O_OUT, "OBJ_IN_OUT": _O.O_IN | _O.O_OUT,
        "OBJ_BUFFER": _O.O_BUFF, "OBJ_BUFFER_IN": _O.O_BUFF | _O.O_IN,
        "OBJ_BUFFER_OUT": _O.O_BUFF | _O.O_OUT, "OBJ_BUFFER_IN_OUT": _O.O_BUFF | _O.O_IN | _O.O_OUT,
    }
    variants = {"": 0, "_DB": _O.O_DB, "_L2DB": _O.O_L2DB, "_DB_L2DB": _O.O_DB | _O.O_L2DB}
    dims = {"": 0, "_3D": _O.O_3D, "_4D": _O.O_3D | _O.O_4D}
    names = {}
    for base, flags in bases.items():
        for vname, vflags in variants.items():
            if base.startswith("OBJ_BUFFER") and vname in ("_DB", "_DB_L2DB"):
                continue
            for dname, dflags in dims.items():
                names[f"{base}{vname}{dname}"] = flags | vflags | dflags | _O.O_TILED
                names[f"{base}{vname}_NTILED{dname}"] = flags | vflags | dflags
    names["OBJ_OUT_DB_ALIAS"] = _O.O_OUT | _O.O_DB | _O.O_ALIAS | _O.O_TILED
    names["OBJ_BUFFER_ONETILE"] = _O.O_BUFF | _O.O_TILED | _O.O_ONETILE
    names["OBJ_BUFFER_DB_ONETILE"] = _O.O_BUFF | _O.O_DB | _O.O_TILED | _O.O_ONETILE
    names["OBJ_BUFFER_DYNTILE"] = _O.O_BUFF | _O.O_TILED | _O.O_DYNTILE
    names["OBJ_BUFFER_DYN"] = names["OBJ_BUFFER_DYNTILE"]
    names["OBJ_BUFFER_ONETILE_3D"] = names["OBJ_BUFFER_ONETILE"] | _O.O_3D
    names["OBJ_BUFFER_DYN_3D"] = names["OBJ_BUFFER_DYN"] | _O.O_3D
    return names


OBJECT_TYPES = _predefined_object_types()

# Short aliases the guide uses for constraints ("NONE, EVEN, ODD, ONEPREFTILE, TILE_HOR, TILE_VER").
_CONSTRAINT_ALIASES = {
    name.replace("OBJ_CONSTRAINTS_", "OBJ_CONSTRAINT_"): member
    for name, member in KernelArgConstraints_T.__members__.items()
}

ALL_CONSTANTS = {
    **_ENUM_NAMES, **OBJECT_TYPES, **_CONSTRAINT_ALIASES, **SPACE_PROPS, **CALL_ATTRIBUTES,
    "AT_OPT_ON": AT_OPT_ON, "AT_OPT_OFF": AT_OPT_OFF, "CALL_MASK": CALL_MASK,
    "WARM_DISABLED": WARM_DISABLED, "WARM_L1": WARM_L1, "WARM_L2_DYN_L1": WARM_L2_DYN_L1, "WARM_ALL": WARM_ALL,
    "KER_ITER_TILE_MAX": KER_ITER_TILE_MAX, "MAX_ARG_DIM": MAX_ARG_DIM,
    "ITER_SPACE_MASK": ITER_SPACE_MASK, "ITER_PROP_MASK": ITER_PROP_MASK,
}
globals().update(ALL_CONSTANTS)

__all__ = sorted(ALL_CONSTANTS) + ["AT_OPT_VAL", "SPACE_PROP", "OBJECT_TYPES", "FLAG_PAIRS"]
