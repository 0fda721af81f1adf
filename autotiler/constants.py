"""Every constant of the AutoTiler guide, with the original's names.

Numeric values follow the guide's (v2) API, which is the one whose model scripts we port line by
line. Names are the contract; values only matter for OR-ing flags together.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class KernelCallTypeT(IntEnum):
    CALL_SEQUENTIAL = 0
    CALL_PARALLEL = 1


class Tile_Orientation_T(IntEnum):
    TILE_HOR = 0
    TILE_VER = 1


class KernelIterationDimT(IntEnum):
    KER_DIM0 = 0
    KER_DIM1 = 1
    KER_DIM2 = 2
    KER_DIM3 = 3
    KER_DIM4 = 4


class KernelIteratorT(IntEnum):
    KER_ITER_NONE = 0
    KER_TILE = 1
    KER_TILE1 = 2
    KER_TILE2 = 3
    KER_IN_PLANE = 4
    KER_OUT_PLANE = 5
    KER_IN_OUT_PLANE = 6


class KernelCallLocationT(IntEnum):
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
    LOC_PROLOG = 18
    LOC_EPILOG = 19
    LOC_GROUP = 20


class KernelArgSelect_T(IntEnum):
    KER_ARG_NONE = 0
    KER_ARG_TILE = 1
    KER_ARG_TILE_NEXTDB = 2
    KER_ARG_TILE_W = 5
    KER_ARG_TILE_H = 7
    KER_ARG_TILE_W0 = 9
    KER_ARG_TILE_H0 = 10
    KER_ARG = 11
    KER_ARG_W = 12
    KER_ARG_H = 13
    KER_ARG_NTILES = 14
    KER_ARG_TILEFIRST = 15
    KER_ARG_TILELAST = 16
    KER_ARG_TILEINDEX = 17
    KER_ARG_TILEOFFSET = 18


class Object_Type_T(IntFlag):
    """Kernel-argument properties (the guide's v2 bit layout)."""

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
    O_3D = 1 << 14
    O_N3D = 1 << 15
    O_4D = 1 << 16
    O_N4D = 1 << 17
    O_DYNTILE = 1 << 22
    O_NDYNTILE = 1 << 23


# Each positive flag and its negation: setting both is contradictory.
FLAG_PAIRS = (
    ("O_IN", "O_NIN"), ("O_OUT", "O_NOUT"), ("O_BUFF", "O_NBUFF"), ("O_TILED", "O_NTILED"),
    ("O_ONETILE", "O_NONETILE"), ("O_DB", "O_NDB"), ("O_L2DB", "O_NL2DB"), ("O_3D", "O_N3D"),
    ("O_4D", "O_N4D"), ("O_DYNTILE", "O_NDYNTILE"),
)


class KernelArgConstraints_T(IntFlag):
    OBJ_CONSTRAINTS_NONE = 0
    OBJ_CONSTRAINTS_EVEN = 1 << 1
    OBJ_CONSTRAINTS_ODD = 1 << 2
    OBJ_CONSTRAINTS_ONEPREFTILE = 1 << 3
    OBJ_CONSTRAINTS_TILE_HOR = 1 << 4
    OBJ_CONSTRAINTS_TILE_VER = 1 << 5


class InlineModeT(IntEnum):
    NEVER_INLINE = 0
    ALWAYS_INLINE = 1
    SINGLE_INLINE = 2


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


AT_OPT_OFF = 0
AT_OPT_ON = 1


def AT_OPT_VAL(value):
    """Wraps an option value, as the C macro does (a no-op in Python)."""
    return value


def _export_enum_members(*enums) -> dict:
    names = {}
    for enum in enums:
        for member in enum:
            names[member.name] = member
    return names


_ENUM_NAMES = _export_enum_members(
    KernelCallTypeT, Tile_Orientation_T, KernelIterationDimT, KernelIteratorT,
    KernelCallLocationT, KernelArgSelect_T, Object_Type_T, KernelArgConstraints_T,
    AT_GraphCtrl_T, AT_MemLocation_T, InlineModeT,
)

_O = Object_Type_T


def _predefined_object_types() -> dict:
    """The OBJ_* names: the v3 list plus the guide's (v2) _3D, _4D and _NTILED variants."""
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
            if base.startswith("OBJ_BUFFER") and vname == "_DB":
                continue
            for dname, dflags in dims.items():
                names[f"{base}{vname}{dname}"] = flags | vflags | dflags | _O.O_TILED
                names[f"{base}{vname}_NTILED{dname}"] = flags | vflags | dflags
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

ALL_CONSTANTS = {**_ENUM_NAMES, **OBJECT_TYPES, **_CONSTRAINT_ALIASES,
                 "AT_OPT_ON": AT_OPT_ON, "AT_OPT_OFF": AT_OPT_OFF}
globals().update(ALL_CONSTANTS)

__all__ = sorted(ALL_CONSTANTS) + ["AT_OPT_VAL", "OBJECT_TYPES", "FLAG_PAIRS"]
