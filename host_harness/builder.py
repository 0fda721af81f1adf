"""Compile generated C + the user's basic kernels + the simulator into one cached shared library.

The cache key is a sha256 over every source and header the compilation reads (found with
``gcc -MM``), the flags and the compiler version. Of the platform numbers only the core count is
part of it: every unit is compiled with ``-DAT_SIM_NCORES=<cores>`` so that ``gap_ncore()`` is a
constant expression (``static int ActiveCore = gap_ncore();`` at file scope), and the simulator
refuses a call configured for another count; every unit also gets ``-D__EMUL__``, as in the
SDK's emulation builds, so that the original's basic kernels compile unchanged. The other numbers are passed at run time through
``at_sim_configure``, so one build serves every platform with the same core count.
"""

from __future__ import annotations

import hashlib
import numbers
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from autotiler.errors import HarnessError, PlatformError
from autotiler.platforms import Platform, get_platform

from .gvsoc import CORES as GVSOC_CORES
from .gvsoc import GvsocProgram
from .manifest import (
    L3_FAMILIES,
    GraphSpec,
    KernelSpec,
    L3Device,
    Manifest,
    MemSymbol,
    locked_output,
    read_manifests_unlocked,
    report_edits,
)
from .runner import MAX_CORES, Program, check_platform
from .toolchain import CC, compiler_version, run, sanitizer_libraries

RUNTIME_DIR = Path(__file__).parent / "runtime"
# Bump when the trampoline or the runtime's ABI towards Python changes.
HARNESS_ABI = "10"

# -finstrument-functions: entering a user kernel calls the simulator, which charges the platform's
# kernel_call_cycles (at_sim.c); the runtime headers' inline functions are left out.
GEN_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fPIC", "-finstrument-functions",
             f"-finstrument-functions-exclude-file-list={RUNTIME_DIR}")
USER_FLAGS = ("-std=c99", "-Wall", "-O1", "-g", "-fPIC")
RUNTIME_FLAGS = ("-std=gnu99", "-Wall", "-O1", "-g", "-fPIC")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                  "-fno-omit-frame-pointer")
# The user's basic kernels only: ThreadSanitizer's instrumentation without its runtime. Every load,
# store and function entry calls the simulator (at_sim.c, "Access checks"), which catches races
# between cores and writes outside memory. Not combinable with ASan: sanitized builds drop it.
# Before the user's cflags, so that cflags=["-fno-sanitize=thread"] turns the checks off.
CHECK_FLAGS = ("-fsanitize=thread",)
# Library functions the basic kernels call that write memory, checked by the simulator (at_sim_<f>).
CHECKED_LIBC = ("memcpy", "memmove", "memset")
OBJCOPY = "objcopy"
# Plain one-line diagnostics: messages are quoted into single-line HarnessErrors.
DIAG_FLAGS = ("-fdiagnostics-color=never", "-fno-diagnostics-show-caret")
LIBRARY_NAME = "libkernels.so"


@dataclass(frozen=True)
class Unit:
    """One translation unit: source, compile flags (without -I), object file name."""

    source: Path
    flags: tuple[str, ...]
    obj: str


# ---------------------------------------------------------------------------------------------
# Trampoline: one C entry per kernel that Python can call with untyped arrays of arguments.
# ---------------------------------------------------------------------------------------------

def _symbol_decl(mem: MemSymbol, pointer_type: str) -> str:
    if mem.dynamic:
        return f"extern {pointer_type} {mem.symbol};"
    return f"extern char {mem.symbol}[];"


def _symbol_setup(mem: MemSymbol, level: str, pointer_type: str) -> list[str]:
    label = f'"{mem.symbol}"'
    if mem.dynamic:
        return [f"    {mem.symbol} = ({pointer_type})at_sim_alloc_symbol({level}, {mem.size}LL, {label});",
                f"    if (!{mem.symbol})", "        return 1;"]
    return [f"    if (at_sim_register_region({level}, {mem.symbol}, {mem.size}LL, {label}))",
            "        return 1;"]


def _arg_expr(index: int, arg) -> str:
    source = "ptrs" if arg.pointer else ("flts" if arg.is_float else "ints")
    return f"({arg.ctype}){source}[{index}]"


def _device_open(dev: L3Device) -> list[str]:
    """Open with the at_api.h macros, as the generated code's constructor would on the chip. A
    fault while opening longjmps like any other; the host open never reports an error."""
    f = dev.family
    return ["    {", f"        AT_{f}_CONF_T conf;", "        int err;",
            f"        AT_{f}_CONF_INIT(&conf, {int(L3_FAMILIES[f])}, 0);",
            f"        AT_{f}_OPEN(&{dev.symbol}, &conf, &err);",
            "        if (err) {", "            at_sim_arm(0);", "            return 1;", "        }", "    }"]


def _entry(kernel: KernelSpec) -> list[str]:
    lines = [f"int __at_call_{kernel.name}(void **ptrs, const long long *ints, const double *flts)",
             "{", "    jmp_buf env;", "    int status;", "    (void)ptrs;", "    (void)ints;", "    (void)flts;"]
    for mem, level, ptype in ((kernel.l1, "AT_SIM_L1", "AT_L1_POINTER"),
                              (kernel.l2, "AT_SIM_L2", "AT_L2_POINTER")):
        if mem.size > 0:
            lines += _symbol_setup(mem, level, ptype)
    args = ", ".join(_arg_expr(i, a) for i, a in enumerate(kernel.args))
    # A fault longjmps back here; nothing set between setjmp and the call is read afterwards.
    # After a fault the devices stay open until at_sim_end_call resets the simulator's table.
    lines += ["    if (setjmp(env))", "        return 1;", "    at_sim_arm(&env);"]
    for dev in kernel.devices:
        lines += _device_open(dev)
    lines += [f"    {kernel.name}({args});", "    status = at_sim_finish();"]
    lines += [f"    AT_{dev.family}_CLOSE(&{dev.symbol});" for dev in kernel.devices]
    lines += ["    return status;", "}", ""]
    return lines


# The constructor's and destructor's parameters per AT_GRAPH_WARM_CONSTRUCT mode (how many flags).
GRAPH_WARM_FLAGS = {0: (0, 0), 1: (1, 1), 2: (1, 1), 3: (6, 5)}


def _graph_entries(graph: GraphSpec) -> list[str]:
    """``__at_graph_{construct,destruct}_<G>(flags)`` pass the mode's flags (``Warm``, or
    WARM_ALL's ``DoL1Alloc, ...``) and return the function's code, -1 after a fault (or a transfer
    left pending); ``__at_graph_run_<G>(ptrs, ints, flts, l1)`` 0, 1 after a fault, 2 when the
    runner returned non-zero (``l1``: WARM_ALL's ``_L1_Memory``, ignored otherwise);
    ``__at_graph_memory_<G>(which)`` the bytes of one memory."""
    if graph.reentrant:
        return _reentrant_entries(graph)
    lines = []
    counts = GRAPH_WARM_FLAGS[graph.warm]
    for (what, fn), n in zip((("construct", graph.construct), ("destruct", graph.destruct)), counts):
        flags = ", ".join(f"flags[{i}]" for i in range(n))
        lines += [f"int __at_graph_{what}_{graph.name}(const int *flags)", "{", "    jmp_buf env;", "    int code;",
                  "    (void)flags;", "    if (setjmp(env))", "        return -1;", "    at_sim_arm(&env);",
                  f"    code = {fn}({flags});", "    if (at_sim_finish())", "        return -1;", "    return code;",
                  "}", ""]
    args = ", ".join([_arg_expr(i, a) for i, a in enumerate(graph.args)] + (["l1"] if graph.warm == 3 else []))
    lines += [f"int __at_graph_run_{graph.name}(void **ptrs, const long long *ints, const double *flts, void *l1)",
              "{", "    jmp_buf env;", "    int code;", "    (void)ptrs;", "    (void)ints;", "    (void)flts;",
              "    (void)l1;", "    if (setjmp(env))", "        return 1;", "    at_sim_arm(&env);",
              f"    code = {graph.name}({args});", "    if (at_sim_finish())", "        return 1;",
              "    return code ? 2 : 0;", "}", "",
              f"int __at_graph_memory_{graph.name}(int which)", "{",
              f"    return {graph.memory}((AT_MEM_TYPE)which);", "}", ""]
    return lines


def _reentrant_entries(graph: GraphSpec) -> list[str]:
    """A reentrant graph's entry points (-R): the descriptor and the context live here;
    ``construct`` is ``<G>_Construct(&Descr)`` then ``<G>_AllocCtxt(&Descr, 0, 0, 0, 0, &Status)``
    (a non-zero Status returned as 100 + Status), ``destruct`` ``<G>_DeAllocCtxt(Ctxt, 1, 1, 1, 1)``
    then ``<G>_Destruct(&Descr, 1, 1)``, ``run`` ``<G>(Ctxt, args, 0)`` (how many layers it runs
    before returning: at_sim_yield_after), ``control(a)`` ``<G>_ControlCtxt(Ctxt, a)`` and
    ``layer()`` ``<G>_CtxtGetLayerIndex(Ctxt)``."""
    g = graph.name
    descr, ctxt = f"__at_descr_{g}", f"__at_ctxt_{g}"
    args = ", ".join([ctxt] + [_arg_expr(i, a) for i, a in enumerate(graph.args)] + ["0"])
    guard = ["    jmp_buf env;", "    int code;", "    if (setjmp(env))", "        return -1;", "    at_sim_arm(&env);"]
    return [f"static CNN_Graph_Descr_T {descr};", f"static {g}_Ctxt_T *{ctxt};", "",
            f"int __at_graph_construct_{g}(const int *flags)", "{", "    int status = 0;", *guard,
            "    (void)flags;", f"    memset(&{descr}, 0, sizeof {descr});", f"    code = {graph.construct}(&{descr});",
            "    if (code == 0) {", f"        {ctxt} = {g}_AllocCtxt(&{descr}, 0, 0, 0, 0, &status);",
            "        if (status)", "            code = 100 + status;", "    }",
            "    if (at_sim_finish())", "        return -1;", "    return code;", "}", "",
            f"int __at_graph_destruct_{g}(const int *flags)", "{", *guard, "    (void)flags;",
            f"    {g}_DeAllocCtxt({ctxt}, 1, 1, 1, 1);", f"    {ctxt} = 0;",
            f"    code = {graph.destruct}(&{descr}, 1, 1);",
            "    if (at_sim_finish())", "        return -1;", "    return code;", "}", "",
            f"int __at_graph_run_{g}(void **ptrs, const long long *ints, const double *flts, void *l1)",
            "{", "    jmp_buf env;", "    int code;", "    (void)ptrs;", "    (void)ints;", "    (void)flts;",
            "    (void)l1;", "    if (setjmp(env))", "        return 1;", "    at_sim_arm(&env);",
            f"    code = {g}({args});", "    if (at_sim_finish())", "        return 1;",
            "    return code ? 2 : 0;", "}", "",
            f"int __at_graph_control_{g}(int action)", "{", f"    {g}_ControlCtxt({ctxt}, action);",
            f"    return {g}_CtxtGetLayerIndex({ctxt});", "}", "",
            f"int __at_graph_layer_{g}(void)", "{", f"    return {g}_CtxtGetLayerIndex({ctxt});", "}", "",
            f"int __at_graph_memory_{g}(int which)", "{",
            f"    return {graph.memory}((AT_MEM_TYPE)which);", "}", ""]


def _device_definitions(manifests: list[Manifest]) -> list[str]:
    """``AT_<FAMILY>_T <symbol>;`` once per symbol across manifests (the generated code declares
    it extern); one symbol with two families is an error."""
    seen: dict[str, tuple[L3Device, Manifest]] = {}
    for m in manifests:
        for dev in m.devices:
            first, where = seen.setdefault(dev.symbol, (dev, m))
            if first.family != dev.family:
                raise HarnessError(f"L3 device '{dev.symbol}' is {first.family} in manifest {where.path.name} "
                                   f"but {dev.family} in manifest {m.path.name}")
    return [f"AT_{dev.family}_T {dev.symbol};" for dev, _ in seen.values()]


def trampoline_source(manifests: list[Manifest]) -> str:
    lines = ["/* Generated by host_harness.builder: Python entry points, one per user kernel. */",
             "#include <setjmp.h>", "#include <string.h>", '#include "at_sim.h"', '#include "at_api.h"']
    lines += [f'#include "{h}"' for h in dict.fromkeys(m.header for m in manifests)]
    kernels = [k for m in manifests for k in m.kernels]
    decls = {}
    for k in kernels:
        for mem, ptype in ((k.l1, "AT_L1_POINTER"), (k.l2, "AT_L2_POINTER")):
            if mem.size > 0:
                decls.setdefault(_symbol_decl(mem, ptype), None)
    lines += list(decls) + _device_definitions(manifests) + [""]
    user = list(dict.fromkeys(n for m in manifests for n in m.user_kernels))
    names = ", ".join('"' + n + '"' for n in user) or "0"   # C identifiers: nothing to escape
    lines += ["void at_sim_set_user_kernels(const char *const *names, int count); /* at_sim.c */",
              f"static const char *const __at_user_kernels[{max(1, len(user))}] = {{{names}}};",
              "__attribute__((constructor)) static void __at_register_user_kernels(void)", "{",
              f"    at_sim_set_user_kernels(__at_user_kernels, {len(user)});", "}", ""]
    for k in kernels:
        lines += _entry(k)
    for g in (g for m in manifests for g in m.graphs):
        lines += _graph_entries(g)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Compiler invocation
# ---------------------------------------------------------------------------------------------

def _include_flags(gen_dir: Path, include_dirs) -> list[str]:
    # The runtime comes last so a project may override e.g. KernelLibStdTypes.h.
    dirs = [gen_dir, *map(Path, include_dirs), RUNTIME_DIR]
    return [f"-I{d.resolve()}" for d in dirs]


def _dependencies(units: list[Unit], includes: list[str], cflags: tuple[str, ...]) -> list[Path]:
    """Every non-system file the units read (sources and headers), in a stable order."""
    out = run([CC, "-MM", *includes, *cflags, *[str(u.source) for u in units]], "dependency scan")
    text = out.replace("\\\n", " ").replace("\\ ", "\0")  # continuations; escaped spaces in paths
    files: dict[str, None] = {}
    for rule in text.splitlines():
        if ":" in rule:
            for dep in rule.split(":", 1)[1].split():
                files.setdefault(dep.replace("\0", " "), None)
    return [Path(f) for f in files]


def _cache_key(units: list[Unit], deps: list[Path], sanitize: bool) -> str:
    """Contents, not paths: the same code generated into another directory is a cache hit."""
    h = hashlib.sha256()
    h.update(f"abi={HARNESS_ABI}\ncc={compiler_version()}\nsanitize={sanitize}\n".encode())
    for u in units:
        h.update(f"unit {u.obj} {' '.join(u.flags)}\n".encode())
        h.update(hashlib.sha256(u.source.read_bytes()).digest())
    for dep in deps:
        h.update(hashlib.sha256(dep.read_bytes()).digest())
    return h.hexdigest()


def cache_root() -> Path:
    """``$AUTOTILER_CACHE/harness`` or ``~/.cache/autotiler/harness``."""
    base = os.environ.get("AUTOTILER_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "autotiler"
    return root / "harness"


def _compile(unit: Unit, includes: list[str], out_dir: Path, extra: tuple[str, ...]) -> Path:
    obj = out_dir / unit.obj
    run([CC, *unit.flags, *extra, *DIAG_FLAGS, *includes, "-c", str(unit.source), "-o", str(obj)],
         f"compiling {unit.source.name}")
    if set(CHECK_FLAGS) <= set(unit.flags):
        # the checks see memory only through the instrumentation: route the library copies to
        # the simulator's checked ones (at_sim.c, at_sim_memcpy ...)
        run([OBJCOPY, *(f"--redefine-sym={f}=at_sim_{f}" for f in CHECKED_LIBC), str(obj)],
            f"objcopy {unit.obj}")
    return obj


def _link(objs: list[Path], out: Path, extra: tuple[str, ...]) -> None:
    # -z defs: a basic kernel that is declared but not provided fails here, not at dlopen.
    # -Bsymbolic: two libraries loaded in one process never share the simulator's state.
    run([CC, "-shared", *extra, "-Wl,-z,defs", "-Wl,-Bsymbolic", "-o", str(out), *map(str, objs), "-lm"],
         "linking")


def _compile_all(units: list[Unit], includes: list[str], staging: Path, final: Path, sanitize: bool) -> None:
    # The trampoline is compiled in the staging dir, which becomes `final`: point debug info there.
    extra = (SANITIZE_FLAGS if sanitize else ()) + (f"-fdebug-prefix-map={staging}={final}",)
    if sanitize:  # ASan and the access checks' instrumentation exclude each other
        units = [Unit(u.source, tuple(f for f in u.flags if f not in CHECK_FLAGS), u.obj) for u in units]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        objs = list(pool.map(lambda u: _compile(u, includes, staging, extra), units))
    _link(objs, staging / LIBRARY_NAME, extra[:-1])


def _publish(staging: Path, final: Path) -> None:
    """Atomic rename; if a concurrent worker won the race, keep its (identical) build."""
    try:
        os.rename(staging, final)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (final / LIBRARY_NAME).exists():
            raise


def core_defines(cores: int) -> tuple[str, ...]:
    """The defines every unit of a build for ``cores`` cores is compiled with: the core count
    (at_sim.h) and ``__EMUL__``, the flag of the original SDK's host emulation builds, which its
    basic kernels and headers test to pick their host code paths."""
    return (f"-DAT_SIM_NCORES={cores}", "-D__EMUL__")


def _units(manifests: list[Manifest], sources, trampoline: Path, cflags: tuple[str, ...],
           defines: tuple[str, ...]) -> list[Unit]:
    """``defines`` reach every unit, the simulator included; the user's ``cflags`` every unit but
    the simulator; the access checks' instrumentation (CHECK_FLAGS) the basic kernels only. The
    units are linked in this order: the simulator right after the generated code, so that its
    own (never legitimately written) data follows a static L1/L2 array of the generated code."""
    units = [Unit(c.resolve(), GEN_FLAGS + defines + cflags, f"gen{i}_{c.stem}.o")
             for i, c in enumerate(c for m in manifests for c in m.c_files)]
    units.append(Unit(RUNTIME_DIR / "at_sim.c", RUNTIME_FLAGS + defines, "at_sim.o"))
    units += [Unit(Path(s).resolve(), USER_FLAGS + CHECK_FLAGS + defines + cflags, f"user{i}_{Path(s).stem}.o")
              for i, s in enumerate(sources)]
    units.append(Unit(trampoline, RUNTIME_FLAGS + defines + cflags, "at_trampoline.o"))
    return units


def _check_sources(units: list[Unit]) -> None:
    missing = [str(u.source) for u in units if not u.source.is_file()]
    if missing:
        raise HarnessError(f"source file(s) not found: {', '.join(missing)}")


def _kernel_table(manifests: list[Manifest]) -> dict[str, KernelSpec]:
    return {k.name: k for m in manifests for k in m.kernels}


def _build_library(manifests: list[Manifest], units_for, includes: list[str], cflags: tuple[str, ...],
                   sanitize: bool) -> tuple[Path, bool]:
    """Return (library path, cache hit). Builds in a private staging dir that is renamed into
    place, so concurrent builders (pytest workers) never see a half-written library."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        trampoline = staging / "at_trampoline.c"
        trampoline.write_text(trampoline_source(manifests))
        units = units_for(trampoline)
        _check_sources(units)
        final = root / _cache_key(units, _dependencies(units, includes, cflags), sanitize)
        hit = (final / LIBRARY_NAME).exists()
        if not hit:
            _compile_all(units, includes, staging, final, sanitize)
            _publish(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final / LIBRARY_NAME, hit


def _check_cores(cores, cflags: tuple[str, ...]) -> None:
    """``cores`` (None: the platform's) is an int the simulator runs; cflags leave it alone."""
    if cores is not None:
        if isinstance(cores, bool) or not isinstance(cores, numbers.Integral):
            raise HarnessError(f"cores must be an int from 1 to {MAX_CORES}, got {cores!r} ({type(cores).__name__})",
                               hint="pass e.g. cores=8, or leave it out for the platform's count")
        if not 1 <= cores <= MAX_CORES:
            raise HarnessError(f"{cores} cores: the simulator runs 1 to {MAX_CORES}")
    if any(f.startswith(("-DAT_SIM_NCORES", "-UAT_SIM_NCORES")) for f in cflags):
        raise HarnessError("cflags must not set AT_SIM_NCORES",
                           hint="it is the build's core count: pass cores=N instead")


def _platform(platform, cores) -> Platform:
    """The platform to build for, checked before anything is compiled."""
    if not isinstance(platform, (str, Platform)):
        check_platform(platform)  # says what a platform is
    try:
        plat = get_platform(platform)
        if cores is not None:
            plat = plat.with_overrides(cores=int(cores))
    except PlatformError as err:
        raise HarnessError(f"platform: {err.message}", hint=err.hint) from None
    check_platform(plat)
    return plat


def _paths(value, what: str) -> tuple:
    """``sources``, ``include_dirs``, ``cflags``: a list of them (a lone string would be taken
    apart character by character)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        raise HarnessError(f"{what} must be a list, got the single {type(value).__name__} {str(value)!r}",
                           hint=f"wrap it: {what}=[{str(value)!r}]")
    try:
        items = tuple(value)
    except TypeError:
        raise HarnessError(f"{what} must be a list, got {value!r} ({type(value).__name__})") from None
    bad = [v for v in items if not isinstance(v, (str, os.PathLike))]
    if bad:
        raise HarnessError(f"{what} must hold strings or paths, got {bad[0]!r} ({type(bad[0]).__name__})")
    return items


BACKENDS = ("host", "gvsoc")


def _build_gvsoc(gen_dir: Path, sources: tuple, include_dirs: tuple, cflags: tuple, platform, cores,
                 sanitize: bool, allow_edits: bool) -> GvsocProgram:
    if sanitize:
        raise HarnessError("sanitize=True is a host-simulator option", hint="leave it out with backend='gvsoc'")
    plat = _platform(platform, cores)
    if plat.cores != GVSOC_CORES:
        raise HarnessError(f"platform '{plat.name}' with {plat.cores} cores: GVSoC's pulp-open cluster has "
                           f"{GVSOC_CORES}", hint="leave cores out and use platform='pulp_open' (the default "
                                                  "with backend='gvsoc')")
    with locked_output(gen_dir):
        manifests = read_manifests_unlocked(gen_dir, allow_edits)
        report_edits(gen_dir, manifests)
        return GvsocProgram(manifests, gen_dir, sources, include_dirs, cflags, plat)


def build(gen_dir, sources=(), include_dirs=(), platform=None, cores: int | None = None,
          sanitize: bool = False, cflags=(), backend: str = "host", allow_edits: bool = False) -> Program | GvsocProgram:
    """Compile (or fetch from the cache) the generated code in ``gen_dir`` with the basic-kernel
    ``sources`` and return a :class:`Program`. ``cores`` defaults to the platform's count and is
    compiled in (``-DAT_SIM_NCORES``, the value of ``gap_ncore()``); the other platform numbers
    only reach the simulator at run time, so they never cause a rebuild. The arguments are
    checked before anything is compiled; the directory must hold one complete generation (each
    manifest's files as generated; ``allow_edits=True`` builds files edited by hand since, and says
    which on stderr), and a generation into it waits until the build is done.
    ``backend="gvsoc"``: the same code cross-compiled for GVSoC's pulp-open cluster
    (:mod:`host_harness.gvsoc`; ``platform`` and ``cores`` are the cluster's own there)."""
    sources, include_dirs = _paths(sources, "sources"), _paths(include_dirs, "include_dirs")
    cflags = tuple(str(f) for f in _paths(cflags, "cflags"))
    if backend not in BACKENDS:
        raise HarnessError(f"unknown backend {backend!r}", hint=f"backends: {', '.join(BACKENDS)}")
    if platform is None:
        platform = "pulp_open" if backend == "gvsoc" else "gap8"
    _check_cores(cores, cflags)
    if backend == "gvsoc":
        return _build_gvsoc(Path(gen_dir).resolve(), sources, include_dirs, cflags, platform, cores, sanitize,
                            allow_edits)
    plat = _platform(platform, cores)
    gen_dir = Path(gen_dir).resolve()
    defines = core_defines(plat.cores)
    if sanitize:
        sanitizer_libraries()  # fail early with a clear message
    with locked_output(gen_dir):
        manifests = read_manifests_unlocked(gen_dir, allow_edits)
        report_edits(gen_dir, manifests)
        library, hit = _build_library(manifests, lambda tramp: _units(manifests, sources, tramp, cflags, defines),
                                      _include_flags(gen_dir, include_dirs), defines + cflags, sanitize)
    return Program(library, _kernel_table(manifests), plat, sanitize=sanitize, cache_hit=hit, flash_dir=gen_dir,
                   graphs={g.name: g for m in manifests for g in m.graphs})
