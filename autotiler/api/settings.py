"""Model settings: files, symbols, memory sizes and devices, kernel options and controls, the
generator's options and code generation."""

from __future__ import annotations

import re
import sys
import warnings
from typing import Optional

from ..cli import install_error_hook, parse_generator_options
from ..codegen.files import check_l2_fit, generate, manifest_name, write_files
from ..constants import (
    WARM_ALL,
    WARM_DISABLED,
    WARM_L1,
    WARM_L2_DYN_L1,
    AT_GraphCtrl_T,
    AT_MemLocation_T,
    InlineModeT,
    KernelOptimizationT,
)
from ..errors import ModelError, ModelWarning, OptionsError
from ..model.devices import FLASH_LOCATIONS, L3_DEVICES
from ..model.graph import GRAPH_OPTION_FIELDS, GraphOptions
from ..model.ir import caller_where
from ..model.session import current_model
from ..model.validate import check_name
from ..objectives import OBJECTIVES
from ..reports import GenerationReport
from .common import check_memory_symbols, enum, flags, int_arg

# ----------------------------------------------------------------------------------------------
# Files and symbols


_FILE_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]*")


def _file_name(name, what: str, where: str, suffix: str = "") -> str:
    """A file name the generated code includes or is written to: a plain non-empty name."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name:
        raise ModelError(f"{what} {name!r} must be a plain file name", where=where,
                         hint="e.g. \"MatAddBasicKernels.h\" (the output directory is chosen with -o DIR)")
    if not _FILE_NAME.fullmatch(name):
        # it is written into #include "..." lines and onto gcc's command line
        raise ModelError(f"{what} {name!r} has characters a C #include or a build line cannot carry", where=where,
                         hint="use letters, digits, '_', '-', '+' and '.', not starting with '.' or '-'")
    if suffix and not name.endswith(suffix):
        raise ModelError(f"{what} {name!r} must end in '{suffix}'", where=where,
                         hint=f"e.g. \"MatAddKernels{suffix}\"")
    return name


def SetUsedFilesNames(StdTypedefsName, LibKernelFileCount: Optional[int] = None, *names) -> None:
    where = caller_where()
    files = current_model().files
    std = _file_name(StdTypedefsName, "standard types header", where) if StdTypedefsName else "KernelLibStdTypes.h"
    headers = tuple(_file_name(n, "header name", where) for n in names)
    if LibKernelFileCount is not None:
        count = int_arg(LibKernelFileCount, "SetUsedFilesNames count", where, minimum=0)
        if count != len(headers):
            raise ModelError(f"SetUsedFilesNames announces {count} header(s) but {len(headers)} follow",
                             where=where, hint=f"pass {len(headers)} as the count")
    files.std_types, files.lib_headers = std, headers


def SetGeneratedFilesNames(*names) -> None:
    """``(Kernels.c, Kernels.h)`` or the guide's 4-name form ``(Init.c, Init.h, Kernels.c, Kernels.h)``."""
    where = caller_where()
    files = current_model().files
    if len(names) not in (2, 4):
        raise ModelError(f"SetGeneratedFilesNames takes 2 or 4 file names, got {len(names)}", where=where,
                         hint="(\"XKernels.c\", \"XKernels.h\") or (\"XInit.c\", \"XInit.h\", \"XKernels.c\", \"XKernels.h\")")
    for n in names:
        _file_name(n, "generated file name", where)
    manifest = manifest_name(names[-2])
    for i, n in enumerate(names):
        if n in names[:i] or n == manifest:
            what = "the JSON manifest of the kernels" if n == manifest else "another generated file"
            raise ModelError(f"SetGeneratedFilesNames: '{n}' is also {what} (one would overwrite the other)",
                             where=where, hint="give each generated file its own name")
    for i, n in enumerate(names):
        _file_name(n, "generated file name", where, ".h" if i % 2 else ".c")
    if len(names) == 2:
        files.kernels_c, files.kernels_h = names
        files.init_c = files.init_h = None
    else:
        files.init_c, files.init_h, files.kernels_c, files.kernels_h = names


def _set_memory_symbols(l1: str, l2: str, where: str, func: str) -> None:
    model = current_model()
    check_memory_symbols(model, l1, l2, where)
    if (l1, l2) != (model.symbols.l1, model.symbols.l2):
        model.symbols.named_at = f"{func} at {where}" if where else func
    model.symbols.l1, model.symbols.l2 = l1, l2


def SetSymbolNames(L1SymbName: str, L2SymbName: str, KernelDescrName: Optional[str] = None,
                   KernelDescArgName: Optional[str] = None) -> None:
    where = caller_where()
    sym = current_model().symbols
    for n in (L1SymbName, L2SymbName):  # the memory symbols are required: None is not a name
        check_name(n, "symbol", where)
    for n in (KernelDescrName, KernelDescArgName):
        if n is not None:
            check_name(n, "symbol", where)
    _set_memory_symbols(L1SymbName, L2SymbName, where, "SetSymbolNames")
    sym.kernel_descr = KernelDescrName or sym.kernel_descr
    sym.kernel_descr_args = KernelDescArgName or sym.kernel_descr_args


def SetMemoryBaseNames(L1SymbName: str, L2SymbName: str, L3SymbName: str) -> None:
    where = caller_where()
    for n in (L1SymbName, L2SymbName, L3SymbName):
        check_name(n, "symbol", where)
    _set_memory_symbols(L1SymbName, L2SymbName, where, "SetMemoryBaseNames")
    current_model().symbols.l3 = L3SymbName


def SetSymbolDynamics() -> None:
    current_model().symbols.dynamic = True


def InitKernelIterInfos(OldStyle: int) -> None:
    """Loop variable names: OldStyle 0 (T0Ind, D0Ind, ...), 1 the v2 names (InPlaneInd, OutPlaneInd, ...)."""
    current_model().symbols.old_style_names = bool(OldStyle)


def SetStyle(Old: int) -> None:
    """Old=0 (the v3 default): kernel-argument spaces come from KerArgSpace. Old=1 (spaces from
    O_TILEx properties in a v3 kernel) is not supported: use KerArgSpace, or the v2 form."""
    if Old:
        raise ModelError("SetStyle(1) (argument spaces from O_TILE0/1/2 properties in v3 kernels) is not supported yet",
                         where=caller_where(), hint="give each argument a KerArgSpace, or declare the kernel in the "
                         "v2 form (KernelDimensions / KernelIterationOrder)")


# ----------------------------------------------------------------------------------------------
# Memory


def SetL1MemorySize(Size: int) -> None:
    current_model().l1_size = int_arg(Size, "L1 memory size", caller_where(), minimum=1)


def SetMemorySizes(L1Size: int, L2Size: int, L3Size: int = 0) -> None:
    where = caller_where()
    model = current_model()
    model.l1_size = int_arg(L1Size, "L1 memory size", where, minimum=1)
    model.l2_size = int_arg(L2Size, "L2 memory size", where, minimum=1)
    model.l3_size = int_arg(L3Size, "L3 memory size", where, minimum=0)


_FLASH = {AT_MemLocation_T.AT_MEM_L3_HFLASH, AT_MemLocation_T.AT_MEM_L3_QSPIFLASH, AT_MemLocation_T.AT_MEM_L3_OSPIFLASH,
          AT_MemLocation_T.AT_MEM_L3_MRAMFLASH, AT_MemLocation_T.AT_MEM_L3_DEFAULTFLASH,
          AT_MemLocation_T.AT_MEM_L3_PRI1, AT_MemLocation_T.AT_MEM_L3_PRI2}  # flashes of priority 1, 2 (VFS)


def SetMemoryDeviceInfos(Count: int, *infos) -> None:
    """``SetMemoryDeviceInfos(Count, Space, AvailableMemory, BaseName, ConstFileName, ExtManaged, ...)``:
    Count 5-tuples. L1 and L2 set their budget and symbol name, the L3 RAM its size; flash
    devices (constants of graphs) are recorded."""
    where = caller_where()
    model = current_model()
    if len(infos) != 5 * int_arg(Count, "device count", where, minimum=0):
        raise ModelError(f"SetMemoryDeviceInfos({Count}, ...) needs {5 * Count} values (Space, AvailableMemory, "
                         f"BaseName, ConstFileName, ExtManaged per device), got {len(infos)}", where=where,
                         hint="give five values per device, or the number of devices given as Count")
    for i in range(0, len(infos), 5):
        space, size, base, const_file, ext = infos[i:i + 5]
        loc = enum(AT_MemLocation_T, space, "memory location (AT_MEM_*)", where)
        # L1 and L2 hold the generated code's working areas: a zero size leaves nothing to tile into
        on_chip = loc in (AT_MemLocation_T.AT_MEM_L1, AT_MemLocation_T.AT_MEM_L2)
        size = int_arg(size, f"{loc.name} size", where, minimum=1 if on_chip else 0)
        if base not in ("0", 0, None):
            check_name(base, f"{loc.name} base", where)
        if loc == AT_MemLocation_T.AT_MEM_L1:
            model.l1_size = size
            _set_memory_symbols(base or model.symbols.l1, model.symbols.l2, where, "SetMemoryDeviceInfos")
        elif loc == AT_MemLocation_T.AT_MEM_L2:
            model.l2_size = size
            _set_memory_symbols(model.symbols.l1, base or model.symbols.l2, where, "SetMemoryDeviceInfos")
        elif loc in L3_DEVICES:
            model.l3_size = size
            if base not in ("0", 0, None):
                model.symbols.l3 = base
        elif loc not in _FLASH:
            raise ModelError(f"SetMemoryDeviceInfos: {loc.name} is not a memory device", where=where,
                             hint="use AT_MEM_L1, AT_MEM_L2 or an AT_MEM_L3_* RAM or flash")
        model.memory_devices[loc] = (size, base, const_file, bool(ext))


# ----------------------------------------------------------------------------------------------
# Kernel options and controls


def SetInlineMode(Mode) -> None:
    """ALWAYS_INLINE and SINGLE_INLINE (every user kernel is one specialised C function with its
    tiling constants folded in, which is what the original's inlined code is); NEVER_INLINE (a
    generic routine reading per-kernel descriptors) is not supported yet."""
    where = caller_where()
    mode = enum(InlineModeT, Mode, "inline mode", where)
    if mode == InlineModeT.NEVER_INLINE:
        raise ModelError("SetInlineMode(NEVER_INLINE) (generic kernels reading descriptor tables) is not supported yet",
                         where=where, hint="use ALWAYS_INLINE (specialised kernels, the SDK generators' setting)")
    current_model().ctrl.inline = mode


def SetKernelOpts(On, Off) -> None:
    """Set the options in ``On`` and clear those in ``Off`` (KER_OPT_*)."""
    where = caller_where()
    on = int(flags(KernelOptimizationT, On, "kernel option (KER_OPT_*)", where))
    off = int(flags(KernelOptimizationT, Off, "kernel option (KER_OPT_*)", where))
    ctrl = current_model().ctrl
    for bit, attr in ((KernelOptimizationT.KER_OPT_BUFFER_PROMOTE, "buffer_promote"),
                      (KernelOptimizationT.KER_OPT_PARTIAL_BUFFER_PROMOTE, "partial_buffer_promote"),
                      (KernelOptimizationT.KER_OPT_KEEP_GROUP, "keep_group")):
        value = (getattr(ctrl, attr) or bool(on & bit)) and not off & bit
        setattr(ctrl, attr, value)


_KERNEL_CTRL = {
    AT_GraphCtrl_T.AT_KERNEL_BUFFER_PROMOTE: "buffer_promote",
    AT_GraphCtrl_T.AT_KERNEL_PARTIAL_BUFFER_PROMOTE: "partial_buffer_promote",
    AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR: "nosolution_error",
}


def AT_SetKernelCtrl(Ctrl, Val) -> None:
    where = caller_where()
    ctrl = enum(AT_GraphCtrl_T, Ctrl, "kernel control option", where)
    if ctrl not in _KERNEL_CTRL:
        raise ModelError(f"{ctrl.name} is not a kernel option", where=where,
                         hint="kernel options: " + ", ".join(c.name for c in _KERNEL_CTRL))
    if not isinstance(Val, int) or Val not in (0, 1):  # bool("off"), bool(-1) would turn the option on
        raise ModelError(f"AT_SetKernelCtrl({ctrl.name}, ...): the value must be AT_OPT_ON or AT_OPT_OFF, got {Val!r}",
                         where=where, hint="use AT_OPT_ON / AT_OPT_OFF (or 1 / 0, True / False)")
    setattr(current_model().ctrl, _KERNEL_CTRL[ctrl], bool(Val))


def AT_GetKernelCtrl(Ctrl) -> int:
    where = caller_where()
    ctrl = enum(AT_GraphCtrl_T, Ctrl, "kernel control option", where)
    if ctrl not in _KERNEL_CTRL:
        raise ModelError(f"{ctrl.name} is not a kernel option", where=where,
                         hint="kernel options: " + ", ".join(c.name for c in _KERNEL_CTRL))
    return int(getattr(current_model().ctrl, _KERNEL_CTRL[ctrl]))


# The graph options that act (docs/graph.md "Options"), by kind of value; any other option is
# accepted only at its default value (GraphOptions) and refused otherwise.
_C = AT_GraphCtrl_T
_GRAPH_ON_OFF = (_C.AT_GRAPH_MONITOR_CYCLES, _C.AT_GRAPH_PRODUCE_NODE_NAMES, _C.AT_GRAPH_PRODUCE_OPERINFOS,
                 _C.AT_GRAPH_REORDER_CONSTANT_IN, _C.AT_GRAPH_TRACE_EXEC, _C.AT_GRAPH_NOINLINE_NODE,
                 _C.AT_GRAPH_SIZE_OPT, _C.AT_GRAPH_CHECKSUM, _C.AT_GRAPH_DUMP_TENSOR_TO_FILE,
                 _C.AT_GRAPH_DUMP_GRAPH_OUTPUTS, _C.AT_GRAPH_RUNNER_RE_ENTRANT, _C.AT_GRAPH_DISABLE_CONST_L2_PROMOTION,
                 _C.AT_GRAPH_CONST_EXEC_FROM_FLASH)
_GRAPH_CVAR_NAMES = (_C.AT_GRAPH_MONITOR_CVAR_NAME, _C.AT_GRAPH_PRODUCE_NODE_CVAR_NAME,
                     _C.AT_GRAPH_PRODUCE_OPERINFOS_CVAR_NAME)
_GRAPH_ACTING = (*_KERNEL_CTRL, *_GRAPH_ON_OFF, *_GRAPH_CVAR_NAMES, _C.AT_GRAPH_PREF_L3_EXEC, _C.AT_GRAPH_PREF_L3_HOME,
                 _C.AT_GRAPH_PRIVILEGED_L3_HOME,
                 _C.AT_GRAPH_DUMP_TENSOR, _C.AT_GRAPH_DUMP_ONE_NODE, _C.AT_GRAPH_WARM_CONSTRUCT,
                 _C.AT_GRAPH_L2_STATIC_MEMORY_BUDGET)
# What a refused option would do (the guide's words), for its message.
_GRAPH_REFUSED = {
    _C.AT_GRAPH_ARG2STRUCT: "kernel C arguments promoted to a struct",
    _C.AT_GRAPH_GROUP_WEIGHTS: "const inputs of a user kernel grouped when they have identical structure",
    _C.AT_GRAPH_ASYNC_FORK: "synchronous forks replaced by asynchronous ones",
    _C.AT_GRAPH_L1_PROMOTION: "whole tensors promoted to L1 at graph level",
    _C.AT_GRAPH_USE_MERGED_DMA: "merged DMA copies",
    _C.AT_GRAPH_L3_STATIC_MEMORY_BUDGET: "an L3 RAM budget for constant promotion",
}


def _on_off(ctrl, Val, where: str) -> bool:
    if not isinstance(Val, int) or Val not in (0, 1):  # bool("off"), bool(-1) would turn the option on
        raise ModelError(f"AT_SetGraphCtrl({ctrl.name}, ...): the value must be AT_OPT_ON or AT_OPT_OFF, got "
                         f"{Val!r}", where=where, hint="use AT_OPT_ON / AT_OPT_OFF (or 1 / 0, True / False)")
    return bool(Val)


def _graph_value(ctrl, Val, where: str):
    """The GraphOptions value of an acting option, checked."""
    if ctrl in _GRAPH_ON_OFF:
        return _on_off(ctrl, Val, where)
    if ctrl in _GRAPH_CVAR_NAMES:
        return check_name(Val, f"AT_SetGraphCtrl({ctrl.name}, ...): C variable", where)
    if ctrl == _C.AT_GRAPH_PREF_L3_EXEC:
        loc = enum(AT_MemLocation_T, Val, "AT_GRAPH_PREF_L3_EXEC location", where)
        if loc not in L3_DEVICES:
            raise ModelError(f"AT_GRAPH_PREF_L3_EXEC must be an L3 RAM, got {loc.name}", where=where,
                             hint="use " + ", ".join(d.name for d in L3_DEVICES) + " (flash is read-only)")
        return loc
    if ctrl == _C.AT_GRAPH_PREF_L3_HOME:
        loc = enum(AT_MemLocation_T, Val, "AT_GRAPH_PREF_L3_HOME location", where)
        if loc not in _FLASHES:
            raise ModelError(f"AT_GRAPH_PREF_L3_HOME must be a flash, got {loc.name}", where=where,
                             hint="use " + ", ".join(d.name for d in _FLASHES))
        return loc
    if ctrl == _C.AT_GRAPH_PRIVILEGED_L3_HOME:
        loc = enum(AT_MemLocation_T, Val, "AT_GRAPH_PRIVILEGED_L3_HOME location", where)
        if loc != AT_MemLocation_T.AT_MEM_UNDEF and loc not in _FLASHES:
            raise ModelError(f"AT_GRAPH_PRIVILEGED_L3_HOME must be a flash (or AT_MEM_UNDEF: none), got {loc.name}",
                             where=where, hint="use " + ", ".join(d.name for d in _FLASHES))
        return loc
    if ctrl == _C.AT_GRAPH_DUMP_TENSOR:
        if isinstance(Val, bool) or not isinstance(Val, int) or not 0 <= Val <= 7:
            raise ModelError(f"AT_SetGraphCtrl(AT_GRAPH_DUMP_TENSOR, ...): the value must be a bit vector of "
                             f"AT_DUMP_CONSTANT_IN (1), AT_DUMP_IN (2), AT_DUMP_OUT (4), got {Val!r}", where=where,
                             hint="e.g. AT_OPT_VAL(AT_DUMP_IN | AT_DUMP_OUT); 0 dumps nothing")
        return int(Val)
    if ctrl == _C.AT_GRAPH_DUMP_ONE_NODE:
        if Val in (None, 0):
            return None
        return check_name(Val, "AT_SetGraphCtrl(AT_GRAPH_DUMP_ONE_NODE, ...): node", where)
    if ctrl == _C.AT_GRAPH_WARM_CONSTRUCT:
        if isinstance(Val, bool) or Val not in _WARM_MODES:
            raise ModelError(f"AT_SetGraphCtrl({ctrl.name}, ...): the value must be one of "
                             + ", ".join(f"{n} ({v})" for v, n in _WARM_MODES.items()) + f", got {Val!r}",
                             where=where, hint="e.g. AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(WARM_ALL))")
        return int(Val)
    if ctrl == _C.AT_GRAPH_L2_STATIC_MEMORY_BUDGET:
        if isinstance(Val, bool) or not isinstance(Val, int) or Val < 0:
            raise ModelError(f"AT_SetGraphCtrl(AT_GRAPH_L2_STATIC_MEMORY_BUDGET, ...): the value must be a byte count "
                             f"(0: the whole L2), got {Val!r}", where=where,
                             hint="e.g. AT_OPT_VAL(100000): at most that many bytes of constants promoted to L2")
        return int(Val)
    raise AssertionError(ctrl)


def AT_SetGraphCtrl(Ctrl, Val) -> None:
    where = caller_where()
    ctrl = enum(AT_GraphCtrl_T, Ctrl, "graph control option", where)
    if ctrl in _KERNEL_CTRL:
        AT_SetKernelCtrl(ctrl, Val)
        return
    field = GRAPH_OPTION_FIELDS[ctrl]
    if ctrl in _GRAPH_ACTING:
        current_model().graph_ctrl[ctrl] = _graph_value(ctrl, Val, where)
        return
    default = getattr(GraphOptions(), field)
    if Val == default and not isinstance(Val, str) and Val is not None:
        current_model().graph_ctrl[ctrl] = default  # an option at its default value changes nothing
        return
    raise ModelError(f"AT_SetGraphCtrl({ctrl.name}, ...) is not supported yet: autotiler does not generate "
                     f"{_GRAPH_REFUSED.get(ctrl, 'what it asks for')} (its default, {default!r}, is accepted)",
                     where=where, hint="remove the call; options that act today: "
                     + ", ".join(c.name for c in _GRAPH_ACTING))


# The flashes AT_GRAPH_PREF_L3_HOME / AT_GRAPH_PRIVILEGED_L3_HOME may name.
_FLASHES = FLASH_LOCATIONS
# AT_GRAPH_WARM_CONSTRUCT's values (the guide's #defines), by value.
_WARM_MODES = {WARM_DISABLED: "WARM_DISABLED", WARM_L1: "WARM_L1", WARM_L2_DYN_L1: "WARM_L2_DYN_L1",
               WARM_ALL: "WARM_ALL"}


def SetConstDir(DirName: str) -> None:
    """Where ConstInfo() files of a graph are looked up (``-c DIR`` overrides it)."""
    if not isinstance(DirName, str) or not DirName:
        raise ModelError(f"SetConstDir expects a directory name, got {DirName!r}", where=caller_where(),
                         hint="e.g. SetConstDir(\"consts\") (-c DIR overrides it)")
    current_model().const_dir = DirName


def SetTilingObjective(Objective: str, KernelName: Optional[str] = None) -> None:
    """Extension: choose the tiling objective for the model, or for one kernel declared later."""
    where = caller_where()
    if not isinstance(Objective, str) or Objective not in OBJECTIVES:
        raise ModelError(f"unknown tiling objective {Objective!r}", where=where,
                         hint=f"objectives: {', '.join(sorted(OBJECTIVES))}")
    model = current_model()
    if KernelName is None:
        model.ctrl.objective = Objective
        return
    check_name(KernelName, "user kernel", where)
    if KernelName in model.kernels:  # its tiling is chosen when it is declared
        raise ModelError(f"SetTilingObjective('{Objective}', '{KernelName}'): kernel '{KernelName}' is already "
                         "declared and tiled", where=where, kernel=KernelName,
                         hint=f"call SetTilingObjective before UserKernel('{KernelName}', ...)")
    model.per_kernel_objective[KernelName] = Objective
    model.per_kernel_objective_where[KernelName] = where  # checked at generation: a kernel of that name


# ----------------------------------------------------------------------------------------------
# Generator flow


def TilerParseOptions(argv, *rest) -> int:
    """Parse the generator's options, program name first as in C (``TilerParseOptions(sys.argv)``
    or ``TilerParseOptions(argc, argv)``): ``-o DIR``, ``-c DIR``, ``--L1 N``, ``--L2 N``,
    ``--L3 N``, ``--objective NAME``, ``--platform NAME``, ``-q``, ``-h``. Returns 0 on success;
    on a bad option prints one line and returns 1. Also makes autotiler errors print as one line
    and exit with status 1."""
    where = caller_where()
    if rest and isinstance(argv, int):
        argv = rest[0]
    if not isinstance(argv, (list, tuple)) or not all(isinstance(a, str) for a in argv):
        raise ModelError(f"TilerParseOptions expects the argument list, program name first, got {argv!r}",
                         where=where, hint="call TilerParseOptions(sys.argv) (or a list such as "
                         "[\"model.py\", \"--L1\", \"51200\"])")
    install_error_hook()
    try:
        parse_generator_options(list(argv)[1:], current_model())
    except OptionsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def GenerateTilingCode() -> GenerationReport:
    """Generate the C code of every user kernel and group into the output directory and
    return (and print, unless -q) a :class:`~autotiler.reports.GenerationReport`."""
    where = caller_where()
    model = current_model()
    if model.open_group:
        raise ModelError(f"kernel group '{model.open_group}' is still open", where=where,
                         kernel=model.open_group, hint="call CloseKernelGroup()")
    if not model.kernels and not model.groups:
        tried = sorted(model.unsolved)
        raise ModelError("nothing to generate: " + (f"no declaration of {', '.join(tried)} tiled"
                         if tried else "the model declares no user kernel and no kernel group"), where=where,
                         hint="declare a UserKernel (or a kernel group) before GenerateTilingCode()" if not tried
                         else "give the kernels more L1 (SetL1MemorySize) or smaller dimensions")
    files = generate(model)
    check_l2_fit(model)  # a warning: arguments that cannot all be in the platform's L2
    written = write_files(files, model.output_dir, where)
    report = GenerationReport.from_model(model, written)
    if not model.quiet:
        print(report.format())
    return report


# ----------------------------------------------------------------------------------------------
# Misc


def AppendNames(Name1: str, Name2: str) -> str:
    return f"{Name1}{Name2}"


def AppendIndex(Name: str, Index: int) -> str:
    return f"{Name}{int_arg(Index, 'AppendIndex Index', caller_where())}"


def _printf(func: str, message, args: tuple, where: str) -> str:
    """``message % args`` as C's printf formats it; a format that does not match its arguments
    is the script's error, named at its line."""
    if not args:
        return str(message)
    try:
        return str(message) % args
    except (TypeError, ValueError) as err:
        raise ModelError(f"{func}: format {message!r} does not match its {len(args)} argument(s): {err}", where=where,
                         hint="give one argument per % conversion, of the conversion's type") from None


def GenTilingError(Message: str, *args) -> None:
    """Abort the model with a message (``printf``-style arguments, as in C)."""
    where = caller_where()
    raise ModelError(_printf("GenTilingError", Message, args, where), where=where)


def GenTilingWarning(Message: str, *args) -> None:
    where = caller_where()
    warnings.warn(f"{where}: {_printf('GenTilingWarning', Message, args, where)}", ModelWarning, stacklevel=2)


def GenTilingInfo(Message: str, *args) -> None:
    where = caller_where()
    text = _printf("GenTilingInfo", Message, args, where)
    if not current_model().quiet:
        print(f"{where}: {text}")


GenTilingDebug = GenTilingInfo


__all__ = [
    "SetUsedFilesNames", "SetGeneratedFilesNames", "SetSymbolNames", "SetMemoryBaseNames", "SetSymbolDynamics",
    "InitKernelIterInfos", "SetStyle", "SetL1MemorySize", "SetMemorySizes", "SetMemoryDeviceInfos", "SetInlineMode",
    "SetKernelOpts", "AT_SetKernelCtrl", "AT_GetKernelCtrl", "AT_SetGraphCtrl", "SetConstDir", "SetTilingObjective",
    "TilerParseOptions", "GenerateTilingCode", "AppendNames", "AppendIndex", "GenTilingError", "GenTilingWarning",
    "GenTilingInfo", "GenTilingDebug", "ModelWarning",
]
