"""GVSoC back-end: the same generated C and basic kernels, cross-compiled for rv32imc with
pulp-runtime and run on GVSoC's pulp-open cluster (the open PULP simulator).

``host_harness.build(gen_dir, ..., backend="gvsoc")`` returns a :class:`GvsocProgram` with the
shape of :class:`~host_harness.runner.Program`: ``call(kernel, **arrays_and_scalars)`` updates
the arrays in place and returns the counters of the call (``cycles``: the cluster's ``mcycle``
around the user kernel on core 0). Each call writes an application (``main.c``: the arguments as
initialised L2 arrays, the call on the cluster, the results printed), compiles it with
pulp-runtime's make rules in the program's work directory (the generated code, the basic kernels
and the target runtime ``target/at_target.c`` are compiled once, as make sees them unchanged)
and runs it on GVSoC; the printed results are parsed back.

Graphs: ``graph(name)`` gives a :class:`GvsocGraph` with the common path of
:class:`~host_harness.runner.Graph`: ``construct()``, ``run(**arrays)``, ``destruct()``,
``memory(which)``. A GVSoC run is a fresh process, so nothing constructed can be kept from one
run to the next: ``construct()`` only records that the graph is constructed, and every ``run()``
is one application doing ``<G>_Construct`` (its status and cycles in ``counters["construct"]``; a
non-zero status is a HarnessError naming what failed, as on the host), ``<G>(args)`` (``cycles``,
and ``nodes``: per node its ``name`` and ``cycles`` from the runner's AT_SIM_NODE_BEGIN/END, the
keys of the host Graph's ``counters["nodes"]``) and ``<G>_Destruct`` (``counters["destruct"]``).
What the host Graph offers beyond that (warm construct/destruct arguments, the application's L1,
a reentrant graph's stepping: ``until=``, ``resume``, ``step``, ``control``, ``layer_index``) is a
HarnessError saying it is not supported on GVSoC; reentrant graphs (-R) are refused as a whole.

L3 devices are an emulation, not a HyperBus (``target/at_api.h``): the L3 RAM (the arguments a
kernel homes in L3, the area a graph spills activations to) lives in pulp-open's L2 and a copy
from or to it is a memcpy by the calling core; the flash images a graph's constructor opens
(``<base>_L3_Flash_Const.dat``, found next to the generated C as the host harness finds it) are
read from the host file through GVSoC's semihosting (``at_flash.c`` lists their names, host paths
and sizes), so they take no L2, as a flash image takes none on a chip. L3 timings on GVSoC are
not a real chip's (a flash read costs next to nothing). Everything an application places in L2
must fit the platform's ``l2_size`` (448 KiB): a generation that does not is a HarnessError with
the figures before compiling.

The target runtime (``target/at_api.h``) maps the runtime macros onto the cluster DMA, fork and
barrier; the harness's ``Gap.h`` serves both builds (it is staged next to the target's
``at_api.h``). GVSoC is optional: without it (``GVSOC_HOME`` unset) the back-end says how to
install it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from autotiler.errors import HarnessError

from .manifest import L3_FAMILIES, GraphSpec, KernelSpec, Manifest
from .runner import CONSTRUCT_ERRORS, MEMORY_KINDS, GraphBase, KernelTable, check_args
from .toolchain import first_error_lines

RUNTIME_DIR = Path(__file__).parent / "runtime"
TARGET_DIR = Path(__file__).parent / "target"
# The harness's headers that basic kernels include, staged beside the target's at_api.h (Gap.h
# includes "at_api.h" by its own directory first): Gap.h, Gap8.h and the headers under the SDK's
# names (pmsis.h, GapBuiltins.h, ...; docs/harness.md), so that a kernel builds on both back-ends.
SHARED_HEADERS = ("Gap.h", "Gap8.h", "KernelLibStdTypes.h", "pmsis.h", "GapBuiltins.h", "GapSystem.h",
                  "at_api_emul.h", "at_api_pmsis.h", "rt/rt_api.h")
INSTALL_HINT = ("build GVSoC's pulp-open target and pulp-runtime with ../shared/tools/gvsoc/setup.sh, then "
                "`source ~/.cache/gvsoc/env.sh` (it sets GVSOC_HOME) before running Python")
CORES = 8   # pulp-open's cluster (ARCHI_CLUSTER_NB_PE; at_target.c checks it)
L1_BASE, L1_TCDM = 0x10000000, 64 * 1024   # pulp-open's cluster TCDM (properties.h, README)
STACK = 0x800                              # cluster_start's stack per core: CLUSTER_STACK_SIZE (pulp.h)
STACKS = CORES * STACK
RUN_TIMEOUT = 600  # seconds for one compile + simulation
DUMP_STRIDE = 1000  # a sequence's dumps: kernel j's argument i is printed as DUMP_STRIDE * j + i
# The lines an application prints: @ATC cycles, @ATD dump, @ATE end, @ATK fork profile, @ATG graph
# step (construct/run/destruct: status, cycles), @ATN node cycles, @ATR one call of a sequence
# (index, cycles, profiled fork cycles), @ATF fault, @ATW warning, @ATS cluster core 0's stack
# (bytes used, bytes it has).
_RESULT = re.compile(r"^@AT([CDEKGNRFWS]) (.*)$")
# A load or store of a cluster core outside every memory (GVSoC's ISS, lsu.cpp): it stops the run.
_INVALID_ACCESS = re.compile(r"Invalid access \(pc: 0x([0-9a-f]+), offset: 0x([0-9a-f]+), size: 0x[0-9a-f]+, "
                             r"is_write: (\d)\)")
_L2_OVERFLOW = re.compile(r"region `L2' overflowed by (\d+) bytes")
# GVSoC's warning on a semihosting call that failed on the host (its configuration makes warnings
# fatal: the simulation stops there, before the target sees the failure).
_SEMIHOST_FAILED = re.compile(r"Caught error during semi-hosted call \(name: (\w+), path: (.*), mode: \w+, "
                              r"error: ([^)]*)\)")
# Every graph run calls the full constructor and destructor of the graph's AT_GRAPH_WARM_CONSTRUCT
# mode, as the host Graph's construct()/destruct() without arguments: Warm = 0 (everything), or
# WARM_ALL's flags all 1; WARM_ALL's runner gets _L1_Memory = 0 (the constructor's L1).
FULL_CONSTRUCT = {0: "", 1: "0", 2: "0", 3: "1, 1, 1, 1, 1, 1"}
FULL_DESTRUCT = {0: "", 1: "0", 2: "0", 3: "1, 1, 1, 1, 1"}
# pos_alloc (the L3 arena's allocator) aligns the arena's start and every size to 8 bytes.
ARENA_ALIGN = 8
# <G>_Memory(Which) by AT_MEM_TYPE index: the manifest's sizes, which the generated function returns.
MEMORY_KEYS = ("L1", "L2", "L2_DYN", "L3", "L3_DYN")
NOT_ON_GVSOC = "is not supported on the GVSoC back-end"
HOST_HINT = "run it on the host simulator (host_harness.build(..., backend='host'))"


def gvsoc_home() -> Path:
    """The GVSoC installation (``GVSOC_HOME`` with its ``env.sh``); HarnessError when absent."""
    home = os.environ.get("GVSOC_HOME")
    if not home:
        raise HarnessError("the GVSoC back-end needs GVSoC, and GVSOC_HOME is not set", hint=INSTALL_HINT)
    env = Path(home) / "env.sh"
    if not env.is_file():
        raise HarnessError(f"GVSOC_HOME={home} has no env.sh (not a GVSoC build from setup.sh)", hint=INSTALL_HINT)
    return Path(home)


def available() -> bool:
    """True when the GVSoC back-end can run here (tests skip without it)."""
    try:
        gvsoc_home()
    except HarnessError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# The application's C: main.c (one call, or one graph's Construct + run + Destruct), at_flash.c
# ---------------------------------------------------------------------------------------------

def _c_bytes(data: bytes) -> str:
    """``0x..,0x..``."""
    return ",".join(f"0x{b:02x}" for b in data) if data else "0"


def _scalar(arg, value) -> str:
    return repr(float(value)) if arg.is_float else f"({arg.ctype})({int(value)}LL)"


def _headers(manifests: list[Manifest]) -> list[str]:
    return ["#include <stdio.h>", '#include "at_api.h"'] + [f'#include "{h}"'
                                                            for h in dict.fromkeys(m.header for m in manifests)]


def _arg_arrays(args, values: dict, prefix: str = "__at_arg") -> list[str]:
    """The pointer arguments as initialised arrays (``<prefix><index>``), their bytes as given
    (outputs keep the caller's sentinel): L1-homed in the TCDM, the others in L2, L3-homed ones too
    (the L3 RAM emulation: a pointer into "L3" is an L2 address)."""
    lines = []
    for i, arg in enumerate(args):
        if arg.pointer:
            data = np.ascontiguousarray(values[arg.name]).tobytes()
            section = "AT_TARGET_L1_SECTION " if arg.home == "L1" else ""
            where = " /* homed in L3: the emulated L3 RAM is L2 */" if arg.home == "L3" else ""
            lines.append(f"static {section}unsigned char {prefix}{i}[{max(1, len(data))}] "
                         f"__attribute__((aligned(8))) = {{{_c_bytes(data)}}};{where}")
    return lines


def _call_args(args, values: dict, prefix: str = "__at_arg") -> list[str]:
    return [f"({a.ctype}){prefix}{i}" if a.pointer else _scalar(a, values[a.name]) for i, a in enumerate(args)]


_DUMP_FUNCTION = ["static void __at_dump(int index, const unsigned char *p, int size)", "{", "    int i, j;",
                  "    for (i = 0; i < size; i += 32) {", '        printf("@ATD %d %d ", index, i);',
                  "        for (j = i; j < size && j < i + 32; j++)", '            printf("%02x", p[j]);',
                  '        printf("\\n");', "    }", "}", ""]


def _dumps(args, values: dict, prefix: str = "__at_arg", base: int = 0) -> list[str]:
    """Print every argument the call may write (``@ATD <base + arg> <offset> <hex>``)."""
    return [f"    __at_dump({base + i}, {prefix}{i}, {values[a.name].nbytes});"
            for i, a in enumerate(args) if a.pointer and a.direction != "in"]


def _device_opens(devices) -> list[str]:
    """The L3 RAM devices of the manifest opened around a call, as the host trampoline does (the
    application opens them on a chip)."""
    lines = []
    for d in devices:
        lines += ["    {", f"        AT_{d.family}_CONF_T conf;", "        int err;",
                  f"        AT_{d.family}_CONF_INIT(&conf, {int(L3_FAMILIES[d.family])}, 0);",
                  f"        AT_{d.family}_OPEN(&{d.symbol}, &conf, &err);",
                  f'        if (err) at_target_fault("AT_{d.family}_OPEN", "the device did not open");', "    }"]
    return lines


def _dynamic_areas(specs) -> tuple:
    """The L1/L2 areas behind the kernels' dynamic memory symbols, each as large as its largest
    use (L1 ones in the TCDM): their definitions, and the statements pointing the symbols at them."""
    areas: dict = {}
    for spec in specs:
        for mem in (spec.l1, spec.l2):
            if mem.size > 0 and mem.dynamic:
                section = "AT_TARGET_L1_SECTION " if mem is spec.l1 else ""
                areas[mem.symbol] = (max(mem.size, areas.get(mem.symbol, (0,))[0]), section)
    return ([f"static {section}char __at_area_{sym}[{size}] __attribute__((aligned(8)));"
             for sym, (size, section) in areas.items()],
            [f"    {sym} = __at_area_{sym};" for sym in areas])


def main_source(manifests: list[Manifest], kernel: KernelSpec, values: dict, profile: bool = False) -> str:
    """The application of one call: the pointer arguments as initialised arrays in their home
    memory, the L1/L2 symbols, the manifest's L3 RAM devices defined and opened, the call timed
    on cluster core 0 and the results printed as ``@ATD <arg> <offset> <hex>``."""
    areas, point = _dynamic_areas([kernel])
    lines = ["/* Generated by host_harness.gvsoc: one user-kernel call on the cluster. */", *_headers(manifests),
             *areas]
    lines += [f"AT_{d.family}_T {d.symbol};" for d in kernel.devices]
    lines += _arg_arrays(kernel.args, values)
    lines += ["", *_DUMP_FUNCTION, "void at_target_master(void)", "{", "    unsigned int t0, t1;", *point]
    lines += _device_opens(kernel.devices)
    lines += ["    at_target_reset_forks();", f"    at_target_profile_forks = {int(profile)};", "    t0 = at_target_clock();",
              f"    {kernel.name}({', '.join(_call_args(kernel.args, values))});",
              "    t1 = at_target_clock();", '    printf("@ATC %u\\n", t1 - t0);', "    at_target_print_forks();"]
    lines += [f"    AT_{d.family}_CLOSE(&{d.symbol});" for d in kernel.devices]
    lines += _dumps(kernel.args, values)
    lines += ['    printf("@ATE done\\n");', "}", ""]
    return "\n".join(lines)


def sequence_source(manifests: list[Manifest], kernels: dict, values: dict, order: list, profile: bool) -> str:
    """The application of a sequence of calls (``order``: kernel names, each of ``kernels`` with
    its arguments ``values[name]``, the same arrays for every call of a kernel): each call timed
    on core 0 as in :func:`main_source`, with the profiled fork cycles it adds when ``profile``,
    and nothing printed before the last call (printing would evict the code from the
    instruction cache); then ``@ATR <index> <cycles> <fork cycles>`` per call and what each
    kernel's last call left in its outputs (``@ATD <DUMP_STRIDE * kernel + arg> ...``)."""
    names = list(kernels)
    areas, point = _dynamic_areas(kernels.values())
    lines = ["/* Generated by host_harness.gvsoc: a sequence of user-kernel calls on the cluster. */",
             *_headers(manifests), *areas]
    devices = {d.symbol: d for spec in kernels.values() for d in spec.devices}.values()
    lines += [f"AT_{d.family}_T {d.symbol};" for d in devices]
    for j, name in enumerate(names):
        lines += _arg_arrays(kernels[name].args, values[name], f"__at_k{j}_arg")
    lines += ["", *_DUMP_FUNCTION, f"static unsigned int __at_cycles[{len(order)}], __at_forks[{len(order)}];",
              "void at_target_master(void)", "{", "    unsigned int t0, t1, f0;", "    int i;", *point]
    lines += _device_opens(devices)
    lines += ["    at_target_reset_forks();", f"    at_target_profile_forks = {int(profile)};"]
    for i, name in enumerate(order):
        j = names.index(name)
        args = _call_args(kernels[name].args, values[name], f"__at_k{j}_arg")
        lines += ["    f0 = at_target_fork_total;", "    t0 = at_target_clock();", f"    {name}({', '.join(args)});",
                  "    t1 = at_target_clock();", f"    __at_cycles[{i}] = t1 - t0;",
                  f"    __at_forks[{i}] = at_target_fork_total - f0;"]
    lines += [f"    for (i = 0; i < {len(order)}; i++)",
              '        printf("@ATR %d %u %u\\n", i, __at_cycles[i], __at_forks[i]);']
    lines += [f"    AT_{d.family}_CLOSE(&{d.symbol});" for d in devices]
    for j, name in enumerate(names):
        lines += _dumps(kernels[name].args, values[name], f"__at_k{j}_arg", DUMP_STRIDE * j)
    lines += ['    printf("@ATE done\\n");', "}", ""]
    return "\n".join(lines)


def _timed(step: str, call: str) -> list[str]:
    """``code = call`` timed on core 0, printed as ``@ATG <step> <code> <cycles>``."""
    return ["    t0 = at_target_clock();", f"    code = {call};", "    t1 = at_target_clock();",
            f'    printf("@ATG {step} %d %u\\n", code, t1 - t0);']


def _round_up(size: int) -> int:
    return -(-size // ARENA_ALIGN) * ARENA_ALIGN


def heap_bytes(*sizes: int) -> int:
    """An arena holding one allocation of each of ``sizes`` bytes (0: none): pos_alloc rounds each
    up to 8 bytes and aligns the arena's start."""
    sizes = [s for s in sizes if s > 0]
    return sum(_round_up(s) for s in sizes) + ARENA_ALIGN if sizes else 0


def graph_source(manifests: list[Manifest], spec: GraphSpec, values: dict, heap: int, arena: int) -> str:
    """The application of one graph run: its arguments as arrays (as for a call), the L2 heap of
    the graph's areas (``heap`` bytes) and the emulated L3 RAM (``arena`` bytes; none when 0), the
    manifest's L3 RAM devices defined (not opened: the host's graph entries do not open them
    either), then on cluster core 0 ``<G>_Construct`` and, when it returns 0, ``<G>(args)`` with
    its per-node cycles, the outputs, and ``<G>_Destruct``, each step's status and cycles printed."""
    devices = {d.symbol: d for m in manifests for d in m.devices}.values()
    runner = _call_args(spec.args, values) + (["0"] if spec.warm == 3 else [])
    lines = [f"/* Generated by host_harness.gvsoc: graph {spec.name} constructed, run and destructed on the "
             "cluster. */", *_headers(manifests)]
    lines += [f"AT_{d.family}_T {d.symbol};" for d in devices]
    if heap:
        lines.append(f"static char __at_l2_heap[{heap}] __attribute__((aligned({ARENA_ALIGN}))); "
                     "/* the graph's L2 areas */")
    if arena:
        lines.append(f"static char __at_l3_arena[{arena}] __attribute__((aligned({ARENA_ALIGN}))); "
                     "/* the emulated L3 RAM */")
    lines += _arg_arrays(spec.args, values)
    lines += ["", *_DUMP_FUNCTION, "void at_target_master(void)", "{", "    unsigned int t0, t1;", "    int code;"]
    lines += [f"    at_target_l2_init(__at_l2_heap, {heap});"] if heap else []
    lines += [f"    at_target_l3_init(__at_l3_arena, {arena});"] if arena else []
    lines += ["    at_target_reset_forks();", "    at_target_profile_forks = 0;"]
    lines += _timed("construct", f"{spec.construct}({FULL_CONSTRUCT[spec.warm]})")
    lines += ["    if (code == 0) {", "        at_target_reset_nodes();"]
    lines += ["    " + line for line in _timed("run", f"{spec.name}({', '.join(runner)})")]
    lines += [f"        at_target_print_nodes({len(spec.nodes)});"]
    lines += ["    " + line for line in _dumps(spec.args, values)]
    lines += ["    " + line for line in _timed("destruct", f"{spec.destruct}({FULL_DESTRUCT[spec.warm]})")]
    lines += ["    }", '    printf("@ATE done\\n");', "}", ""]
    return "\n".join(lines)


def flash_source(images: list[tuple[str, Path, int]]) -> str:
    """``at_flash.c``: the flash images an application's graph opens, each as (the name the
    generated code opens, its host file, its size): the table at_target_flash_open looks them up
    in by name, then reads the host file through GVSoC's semihosting (no image in L2)."""
    # json's string escapes are C's for the names and paths
    table = [f"    {{{json.dumps(name)}, {json.dumps(str(path))}, {size}}}," for name, path, size in images]
    lines = ["/* Generated by host_harness.gvsoc: the flash images of the application, read from the host. */",
             '#include "at_api.h"', "", f"const at_target_image_t at_target_images[{max(1, len(images))}] = {{",
             *(table or ["    {0, 0, 0},"]), "};", f"const int at_target_image_count = {len(images)};", ""]
    return "\n".join(lines)


def _write_if_changed(path: Path, text: str) -> None:
    """make rebuilds what is newer than its object: an unchanged file keeps its time stamp."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _pointer_bytes(args, values: dict, homes: tuple) -> int:
    return sum(values[a.name].nbytes for a in args if a.pointer and a.home in homes)


def stage_headers(inc: Path) -> Path:
    """``inc`` made the target's include directory: its at_api.h and the harness's shared headers
    (what a basic kernel includes) beside it."""
    inc.mkdir()
    shutil.copy(TARGET_DIR / "at_api.h", inc / "at_api.h")
    for h in SHARED_HEADERS:
        (inc / h).parent.mkdir(exist_ok=True)
        shutil.copy(RUNTIME_DIR / h, inc / h)
    return inc


class GvsocProgram(KernelTable):
    """Generated user kernels and graphs built for GVSoC's pulp-open cluster (see the module
    comment)."""

    backend = "gvsoc"

    def __init__(self, manifests: list[Manifest], gen_dir: Path, sources: tuple, include_dirs: tuple,
                 cflags: tuple, platform):
        self.home = gvsoc_home()
        self.platform = platform
        self._manifests = manifests
        self._kernels = {k.name: k for m in manifests for k in m.kernels}
        self._graph_specs = {g.name: g for m in manifests for g in m.graphs}
        self._graph_manifest = {g.name: m for m in manifests for g in m.graphs}
        self._graphs: dict = {}
        self.work = Path(tempfile.mkdtemp(prefix="autotiler-gvsoc-"))
        self._stage(gen_dir, sources, include_dirs, cflags)

    def _stage(self, gen_dir: Path, sources: tuple, include_dirs: tuple, cflags: tuple) -> None:
        """The work directory: staged headers, the Makefile (its sources fixed; main.c and
        at_flash.c rewritten per application)."""
        inc = stage_headers(self.work / "include")
        (self.work / "app_main.c").write_text(_app_main())
        gen = [str(c.resolve()) for m in self._manifests for c in m.c_files]
        user = [str(Path(s).resolve()) for s in sources]
        includes = " ".join(f"-I{Path(d).resolve()}" for d in (gen_dir, *include_dirs)) + f" -I{inc}"
        defines = f"-DAT_SIM_NCORES={CORES} -D__EMUL__"
        # pulp-runtime compiles every source with one PULP_CFLAGS (GNU C: pulp.h needs it); the
        # strict C99 check of the generated code for rv32 is bench/rv32.py's.
        rules = ["PULP_APP = kernels", f"PULP_APP_SRCS = {' '.join(gen + user)} "
                 f"{TARGET_DIR / 'at_target.c'} app_main.c at_flash.c main.c",
                 f"PULP_CFLAGS = -O2 -Wall {defines} {includes} {' '.join(cflags)}",
                 "include $(PULPRT_HOME)/rules/pulp.mk"]
        (self.work / "Makefile").write_text("\n".join(rules) + "\n")

    # ---- user kernels --------------------------------------------------------------------

    def call(self, kernel_name: str, /, **args) -> dict:
        """Run ``kernel_name`` on GVSoC with numpy arrays (updated in place) and scalars; returns
        ``{"cycles": ..., "backend": "gvsoc"}``."""
        return self._call(kernel_name, args, False)

    def profile(self, kernel_name: str, /, **args) -> dict:
        """As :meth:`call`, with ``"forks": {basic kernel: (calls, cycles, cost)}`` (a fork's
        cycles: the master's, from releasing the cores to the join; cost: the sum of the calls'
        ``Cost=`` values as the generated code computed them); the accounting slows the call a
        little, so ``cycles`` is not the kernel's own here."""
        return self._call(kernel_name, args, True)

    def _call(self, kernel_name: str, args: dict, profile: bool) -> dict:
        kernel = self.kernel(kernel_name)
        check_args(kernel, args)
        self._check_l2(kernel_name, {"arguments in L2": _pointer_bytes(kernel.args, args, ("L2",)),
                                     "arguments homed in L3 (the emulated L3 RAM)":
                                         _pointer_bytes(kernel.args, args, ("L3",)),
                                     f"the L2 area ({kernel.l2.symbol})": kernel.l2.size})
        out = self._application(kernel_name, main_source(self._manifests, kernel, args, profile), [], kernel.l1.size)
        result = _parse(out)
        if result["cycles"] is None:
            raise HarnessError("GVSoC printed no cycle count", kernel=kernel_name)
        _copy_back(kernel_name, kernel.args, args, result["dumps"])
        counters = {"cycles": result["cycles"], "backend": "gvsoc"}
        if profile:
            counters["forks"] = self._fork_names(result["forks"])
        return counters

    def sequence(self, order: list, args: dict, profile: bool = False) -> list:
        """Run the calls ``order`` (kernel names) one after the other in one application, each
        kernel on its arguments ``args[name]`` (numpy arrays updated in place with what its last
        call left; scalars): per call ``{"kernel", "cycles", "fork_cycles"}`` (``fork_cycles``:
        the profiled forks' cycles, when ``profile``; the accounting slows the call then, as in
        :meth:`profile`). The first call of a kernel runs its code cold, the next ones as warm
        as the calls in between leave the instruction cache."""
        order = list(order)
        if not order:
            raise HarnessError("an empty sequence of calls", hint="name at least one kernel")
        kernels = {name: self.kernel(name) for name in dict.fromkeys(order)}
        missing = [name for name in kernels if name not in args]
        if missing:
            raise HarnessError(f"no arguments for {', '.join(missing)}", hint="give args[name] for each kernel called")
        for name, spec in kernels.items():
            check_args(spec, args[name])
        what = ", ".join(kernels)
        self._check_l2(what, {"arguments in L2 or L3": sum(_pointer_bytes(spec.args, args[n], ("L2", "L3"))
                                                           for n, spec in kernels.items()),
                              "L2 areas": max(spec.l2.size for spec in kernels.values())})
        source = sequence_source(self._manifests, kernels, args, order, profile)
        result = _parse(self._application(what, source, [], max(spec.l1.size for spec in kernels.values())))
        if len(result["calls"]) != len(order):
            raise HarnessError(f"GVSoC printed {len(result['calls'])} of the sequence's {len(order)} call timings",
                               kernel=what, hint=f"the application is in {self.work}")
        for j, (name, spec) in enumerate(kernels.items()):
            dumps = {i % DUMP_STRIDE: d for i, d in result["dumps"].items() if i // DUMP_STRIDE == j}
            _copy_back(name, spec.args, args[name], dumps)
        return [{"kernel": name, "cycles": cycles, "fork_cycles": forks if profile else None}
                for name, (cycles, forks) in zip(order, result["calls"])]

    # ---- graphs --------------------------------------------------------------------------

    def graph(self, name: str) -> GvsocGraph:
        """The generated graph ``name``: construct(), run(**arrays), memory(which), destruct()
        (see :class:`GvsocGraph`)."""
        spec = self.graph_spec(name)
        if spec.reentrant:
            raise HarnessError(f"graph '{name}' has a reentrant runner (-R): its context, stepping and control "
                               f"{NOT_ON_GVSOC}", hint=f"generate it without -R for GVSoC, or {HOST_HINT}")
        if any(f'"{name}_TensorDump.txt"' in c.read_text() for c in self._graph_manifest[name].c_files):
            raise HarnessError(f"graph '{name}' writes its tensor dumps to a file (AT_GRAPH_DUMP_TENSOR_TO_FILE), "
                               f"which {NOT_ON_GVSOC} (pulp-runtime has no file system)",
                               hint=f"dump to the output instead (drop AT_GRAPH_DUMP_TENSOR_TO_FILE), or {HOST_HINT}")
        return self._graphs.setdefault(name, GvsocGraph(self, spec))

    def _flash_images(self, spec: GraphSpec) -> list[tuple[str, Path, int]]:
        """(name, host file, size) of every flash image the graph's constructor opens, found next
        to the generated C as the host harness finds them."""
        folder = self._graph_manifest[spec.name].path.parent
        images = []
        for name in dict.fromkeys(spec.flash_files):
            path = folder / name
            if not path.is_file():
                raise HarnessError(f"graph '{spec.name}': its flash image {path} is missing",
                                   hint="regenerate the model: the flash image is written next to the generated C")
            # at_target_flash_open matches base names; GVSoC opens the absolute path
            images.append((Path(name).name, path.resolve(), path.stat().st_size))
        return images

    def _graph_run(self, spec: GraphSpec, values: dict) -> dict:
        """One application: Construct + run + Destruct of ``spec`` on ``values``; the parsed output."""
        images = self._flash_images(spec)
        sizes = spec.sizes
        heap, arena = heap_bytes(sizes.get("L2", 0), sizes.get("L2_DYN", 0)), heap_bytes(sizes.get("L3", 0))
        self._check_l2(spec.name, {"arguments": _pointer_bytes(spec.args, values, ("L2", "L3")),
                                   "L3 area (the emulated L3 RAM)": arena, "static and dynamic L2 areas": heap})
        out = self._application(spec.name, graph_source(self._manifests, spec, values, heap, arena), images, 0,
                                sizes.get("L2", 0) + sizes.get("L2_DYN", 0))
        result = _parse(out)
        result.update(heap=heap, arena=arena)
        return result

    # ---- one application -----------------------------------------------------------------

    def _check_l2(self, what: str, figures: dict) -> None:
        """What an application places in L2 (the arguments, the emulated L3 RAM, the areas its
        code allocates; not the flash images, read from the host) against the platform's l2_size, before anything is compiled;
        the code and the runtime's data take the rest of pulp-open's 512 KiB."""
        need, capacity = sum(figures.values()), self.platform.l2_size
        if need > capacity:
            parts = ", ".join(f"{k} {v}" for k, v in figures.items() if v)
            raise HarnessError(f"the application needs {need} bytes of L2 ({parts}), over the {capacity} bytes of "
                               f"L2 of platform '{self.platform.name}'", kernel=what,
                               hint="on GVSoC the L3 RAM is emulated in L2 (the flash images are read from the "
                                    "host and take none): generate smaller arguments, L3 and L2 areas for it, or "
                                    f"{HOST_HINT}")

    def _application(self, what: str, main: str, images: list, l1_area: int, l2_areas: int = 0) -> str:
        """Write main.c and at_flash.c, compile (make rebuilds what changed) and simulate; the
        combined output."""
        (self.work / "main.c").write_text(main)
        _write_if_changed(self.work / "at_flash.c", flash_source(images))
        return self._run(what, l1_area, l2_areas)

    def _run(self, what: str, l1_area: int, l2_areas: int = 0) -> str:
        """Compile and simulate the application in the work directory; its output. ``l2_areas``:
        a graph's static + dynamic L2 bytes (what its L2 budget bounds), for the hint when the
        linker finds no room."""
        cmd = f'source "{self.home}/env.sh" >/dev/null && make -s all run "${{RT_MAKE_ARGS[@]}}"'
        # its own process group, so that a timeout ends GVSoC too (make's and gapy's children)
        with subprocess.Popen(["bash", "-c", cmd], cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True) as proc:
            try:
                stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise HarnessError(f"GVSoC did not finish in {RUN_TIMEOUT} s", kernel=what,
                                   hint=f"the application is in {self.work}") from None
        out = stdout + stderr
        hint = f"the application is in {self.work}; rerun `make all run` there after sourcing env.sh"
        fault = _parse(out)["faults"]
        if fault:
            raise HarnessError(f"the application stopped on GVSoC: {fault[0]}", kernel=what,
                               hint=f"the host simulator (backend='host') checks such uses in more detail; {hint}")
        semihost = _SEMIHOST_FAILED.search(out)
        if semihost:
            call, path, why = semihost.groups()
            raise HarnessError(f"the application stopped on GVSoC: its semihosting {call} of the host file {path} "
                               f"failed ({why})", kernel=what,
                               hint="the flash images are read from the generated directory while GVSoC runs: "
                                    "keep it in place, or regenerate the model")
        self._check_stack(what, out)
        overflow = _L2_OVERFLOW.search(out)
        if overflow:
            short = int(overflow.group(1))
            budget = (f"import or generate the graph with an L2 budget of at most {l2_areas - short - 2 * ARENA_ALIGN} "
                      f"bytes (its static and dynamic L2 areas take {l2_areas}; autotiler import --L2), "
                      if l2_areas > short else "")
            raise HarnessError(f"the application does not fit in pulp-open's L2: the linker is {short} "
                               "bytes short (code, runtime and data together)", kernel=what,
                               hint=f"{budget}on GVSoC the L3 RAM is emulated in L2: generate smaller arguments and "
                                    f"L2 areas for it, or {HOST_HINT}")
        if proc.returncode != 0:
            raise HarnessError(f"the GVSoC build or run failed: {first_error_lines(out)}", kernel=what, hint=hint)
        if "@ATE done" not in out:
            self._check_l1(what, l1_area)
            raise HarnessError("the application ran on GVSoC but did not finish the call (no results printed)",
                               kernel=what, hint=hint)
        return out

    def _check_stack(self, what: str, out: str) -> None:
        """Cluster core 0 runs the application on pulp-runtime's stack (STACK bytes), the
        cluster's static L1 data and then the end of the TCDM below it: a run whose stack went
        past the TCDM stops GVSoC on an invalid access, one that only overwrote the static data
        leaves at_target.c's fill below the stack overwritten (its @ATS line says the whole
        stack). Either is said as a stack overflow, with the function GVSoC stopped in."""
        access = _INVALID_ACCESS.search(out)
        if access and L1_BASE - STACKS <= int(access.group(2), 16) < L1_BASE:
            pc, addr = int(access.group(1), 16), int(access.group(2), 16)
            raise stack_overflow(what, f"GVSoC stopped on a {'write' if access.group(3) == '1' else 'read'} at "
                                 f"{addr:#x}, {L1_BASE - addr} bytes below the TCDM, in "
                                 f"{self._function_at(pc)} (pc {pc:#x})")
        used = _parse(out)["stack"]
        if used and used[0] >= used[1]:
            raise stack_overflow(what, "the words below it, the cluster's static L1 data, were overwritten")

    def _function_at(self, pc: int) -> str:
        """The ELF's function holding ``pc`` (its hex address when no symbol does)."""
        best = None
        for line in self._tool("nm", "-S").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "Tt" and int(parts[0], 16) <= pc < int(parts[0], 16) + int(parts[1], 16):
                best = parts[3]
        return best or hex(pc)

    def _check_l1(self, what: str, l1_area: int) -> None:
        """pulp-runtime's cluster_start allocates the cores' stacks in L1 after the static L1
        data and, when they do not fit, returns without starting the cluster (nothing runs,
        nothing is said): say so with the figures (``l1_area``: the generated code's L1 area
        among the static data)."""
        sizes = {}
        for line in self._tool("size", "-A").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit() and L1_BASE <= int(parts[2]) < L1_BASE + L1_TCDM:
                sizes[parts[0]] = int(parts[1])
        static = sum(sizes.values())
        if static + STACKS > L1_TCDM:
            raise HarnessError(f"the cluster did not start: its L1 data is {static} bytes and the 8 cores' stacks "
                               f"{STACKS} more, over the {L1_TCDM} bytes of pulp-open's TCDM", kernel=what,
                               hint="generate with an L1 budget of at most "
                                    f"{L1_TCDM - STACKS - (static - l1_area)} bytes (SetL1MemorySize)")

    def _tool(self, name: str, *flags: str) -> str:
        """The output of a cross binutils tool (riscv64-unknown-elf-<name>) on the application's ELF."""
        elf = self.work / "build" / "kernels" / "kernels"
        cmd = f'source "{self.home}/env.sh" >/dev/null && riscv64-unknown-elf-{name} {" ".join(flags)} "{elf}"'
        return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True).stdout

    def text_sizes(self) -> dict:
        """{function: bytes of code} of the last application built (its ELF's text symbols)."""
        sizes = {}
        for line in self._tool("nm", "-S").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "Tt":
                sizes[parts[3]] = int(parts[1], 16)
        return sizes

    def _fork_names(self, forks: dict) -> dict:
        """{basic-kernel name: (calls, cycles, cost)} from {entry address: ...}, named by the ELF's symbols."""
        if not forks:
            return {}
        names = {}
        for line in self._tool("nm").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "Tt":
                names[int(parts[0], 16)] = parts[2]
        return {names.get(addr, hex(addr)): v for addr, v in forks.items()}

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def __repr__(self) -> str:
        return f"<GvsocProgram kernels={self.kernels} graphs={self.graphs} work={self.work}>"


class GvsocGraph(GraphBase):
    """A generated graph of a :class:`GvsocProgram`, with the common path of the host's
    :class:`~host_harness.runner.Graph`: ``construct()``, ``run(**arrays)`` (outputs copied back
    in place; the counters), ``destruct()``, ``memory(which)``; ``counters`` those of the last run.

    Each GVSoC run is a fresh application, so what a construct builds cannot outlive it:
    ``construct()`` runs nothing (it records that the graph is constructed, so that the calls
    keep the host's order) and every ``run()`` does ``<G>_Construct``, ``<G>(args)`` and
    ``<G>_Destruct`` in one application. Its counters: ``cycles`` (the runner's, ``mcycle`` on
    core 0), ``nodes`` (per node ``{"name", "cycles"}``, the host's keys), ``construct`` and
    ``destruct`` (``{"status", "cycles"}``), ``backend``. A constructor returning non-zero is a
    HarnessError naming what failed, as on the host; so is a non-zero runner or destructor.
    Warm construct arguments, ``run(L1=...)``, ``until=``, ``resume``, ``step``, ``control`` and
    ``layer_index`` are HarnessErrors: not supported on GVSoC."""

    def __init__(self, program: GvsocProgram, spec: GraphSpec):
        self._program, self.spec = program, spec
        self.counters: dict = {}
        self._constructed = False

    @property
    def constructed(self) -> bool:
        return self._constructed

    @property
    def reentrant(self) -> bool:
        return False   # GvsocProgram.graph refuses reentrant graphs

    @property
    def suspended(self) -> bool:
        return False   # no run stops between layers here

    def _unsupported(self, what: str, hint: str = HOST_HINT) -> HarnessError:
        return HarnessError(f"graph '{self.name}': {what} {NOT_ON_GVSOC} (each GVSoC run is one application doing "
                            "Construct, run and Destruct: nothing is kept between runs)", hint=hint)

    def _check_full(self, what: str, warm, flags: dict) -> None:
        if warm is not None or flags:
            given = ", ".join([f"warm={warm!r}"] * (warm is not None) + [f"{k}={v!r}" for k, v in flags.items()])
            raise self._unsupported(f"{what}({given}): a partial (warm) {what}",
                                    hint=f"call {what}() for the full one, or {HOST_HINT}")

    def construct(self, warm=None, **flags) -> None:
        """Mark the graph constructed (see the class: every run constructs it on GVSoC)."""
        self._check_full("construct", warm, flags)
        if self._constructed:
            raise HarnessError(f"graph '{self.name}' is already constructed", hint="destruct() it first")
        self._constructed = True

    def run(self, *, L1=None, until=None, **args) -> dict:
        """``<G>_Construct``, ``<G>(args)`` and ``<G>_Destruct`` on GVSoC (see the class); returns
        the counters."""
        if until is not None:
            raise self._unsupported("run(until=...) (stopping a reentrant runner between layers)")
        if L1 is not None:
            raise self._unsupported("run(L1=...) (the application's L1 given to a WARM_ALL runner)",
                                    hint=f"drop L1= (the constructor's L1 is used), or {HOST_HINT}")
        if not self._constructed:
            raise HarnessError(f"graph '{self.name}' is not constructed", hint="call construct() first")
        check_args(self.spec, args)
        result = self._program._graph_run(self.spec, args)
        construct = self._step(result, "construct")
        if construct[0]:
            raise self._construct_error(construct[0], result)
        code, cycles = self._step(result, "run")
        if code:
            raise HarnessError(f"{self.name}() returned {code}", kernel=self.name)
        _copy_back(self.name, self.spec.args, args, result["dumps"])
        destruct = self._step(result, "destruct")
        if destruct[0]:
            raise HarnessError(f"{self.spec.destruct}({FULL_DESTRUCT[self.spec.warm]}) returned {destruct[0]}")
        nodes = [{"name": self.spec.nodes[i] if i < len(self.spec.nodes) else f"node{i}", "cycles": c}
                 for i, c in sorted(result["nodes"].items())]
        self.counters = {"cycles": cycles, "backend": "gvsoc", "nodes": nodes,
                         "construct": {"status": 0, "cycles": construct[1]},
                         "destruct": {"status": 0, "cycles": destruct[1]}}
        if result["stack"]:
            self.counters["stack"] = {"used": result["stack"][0], "size": result["stack"][1]}
        return self.counters

    def _step(self, result: dict, step: str) -> tuple:
        if step not in result["graph"]:
            raise HarnessError(f"GVSoC printed no status for the graph's {step}", kernel=self.name,
                               hint=f"the application is in {self._program.work}")
        return result["graph"][step]

    def _construct_error(self, code: int, result: dict) -> HarnessError:
        """<G>_Construct's non-zero code, said as the host Graph says it, with GVSoC's figures."""
        fn, sizes = f"{self.spec.construct}({FULL_CONSTRUCT[self.spec.warm]})", self.spec.sizes
        what = CONSTRUCT_ERRORS.get(code, "unknown error code")
        detail = {1: f" ('{self.spec.flash_file}'): {'; '.join(result['warnings']) or 'the open failed'}",
                  2: f" (L3: {sizes.get('L3', 0)} bytes asked; the emulated L3 RAM arena holds {result['arena']} "
                     "bytes)",
                  3: f" (static {sizes.get('L2', 0)} + dynamic {sizes.get('L2_DYN', 0)} bytes asked; the "
                     f"application's L2 heap holds {result['heap']} bytes)",
                  4: f" ({sizes.get('L1', 0)} bytes asked; pulp-open's TCDM holds {L1_TCDM} bytes, {STACKS} of them "
                     "the cluster cores' stacks)"}.get(code, "")
        hint = {1: "regenerate the model: the flash image is written next to the generated C",
                3: f"generate with a smaller L2 budget for GVSoC, or {HOST_HINT}",
                4: f"generate with an L1 budget of at most {L1_TCDM - STACKS - 256} bytes (pulp_open's l1_size)"}
        return HarnessError(f"{fn} returned {code}: {what}{detail}", kernel=self.name, hint=hint.get(code, HOST_HINT))

    def destruct(self, warm=None, **flags) -> None:
        """Mark the graph destructed (every run destructed it on GVSoC)."""
        self._check_full("destruct", warm, flags)
        if not self._constructed:
            raise HarnessError(f"graph '{self.name}' is not constructed", hint="call construct() first")
        self._constructed = False

    def memory(self, which) -> int:
        """``<G>_Memory(Which)``: the manifest's sizes, which the generated function returns."""
        if which not in MEMORY_KINDS:
            raise HarnessError(f"unknown memory {which!r}", hint=f"use one of {', '.join(MEMORY_KINDS)}")
        kind = MEMORY_KINDS[which]
        return int(self.spec.sizes.get(MEMORY_KEYS[kind], 0)) if kind < len(MEMORY_KEYS) else 0

    @property
    def layer_index(self) -> int:
        raise self._unsupported("layer_index (a reentrant runner's progress)")

    def resume(self, until=None) -> dict:
        raise self._unsupported("resume() (a reentrant runner's stepping)")

    def step(self) -> dict:
        raise self._unsupported("step() (a reentrant runner's stepping)")

    def control(self, action) -> int:
        raise self._unsupported("control() (a reentrant runner's ControlCtxt)")

    def __repr__(self) -> str:
        return f"GvsocGraph({self.name!r}, {self.warm_mode}, constructed={self._constructed})"


def stack_overflow(what: str, how: str) -> HarnessError:
    """Cluster core 0's stack overflow (GvsocProgram._check_stack), ``how``: what showed it."""
    return HarnessError(f"cluster core 0's stack overflowed pulp-runtime's {STACK} bytes (CLUSTER_STACK_SIZE): "
                        f"{how}; core 0 runs the graph's runner, its user kernels and its share of every basic "
                        "kernel on it", kernel=what,
                        hint="the host simulator does not model the stacks: look for large locals in the "
                             "generated code and the basic kernels (riscv64-unknown-elf-gcc -fstack-usage), "
                             f"or {HOST_HINT}")


def _app_main() -> str:
    """The fabric controller's main: start the cluster on every core, wait for it."""
    return "\n".join(["#include <pulp.h>", "int at_target_cluster_main(void);",
                      "int main(void)", "{", "    cluster_start(0, at_target_cluster_main);",
                      "    return cluster_wait(0);", "}", ""])


def _copy_back(what: str, args, values: dict, dumps: dict) -> None:
    """The printed bytes of every argument the call may write, into the caller's arrays."""
    for i, arg in enumerate(args):
        if arg.pointer and arg.direction != "in":
            array = values[arg.name]
            data = dumps.get(i, b"")
            if len(data) != array.nbytes:
                raise HarnessError(f"GVSoC returned {len(data)} bytes for '{arg.name}', expected {array.nbytes}",
                                   kernel=what, arg=arg.name)
            array.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, dtype=np.uint8)


def _parse(out: str) -> dict:
    """The application's printed lines: ``cycles`` (None: not printed), ``dumps`` {argument index:
    bytes}, ``forks`` {entry address: (calls, cycles, cost)} (cost: the sum of the calls' Cost=
    values), ``graph`` {step: (status, cycles)}, ``nodes`` {node: cycles}, ``calls`` [(cycles,
    fork cycles)] of a sequence, ``faults`` and ``warnings`` (text), ``stack`` (bytes cluster core 0
    used of its stack, bytes it has; None: not printed)."""
    res = {"cycles": None, "forks": {}, "graph": {}, "nodes": {}, "calls": [], "faults": [], "warnings": [],
           "stack": None}
    parts: dict = {}
    for line in out.splitlines():
        m = _RESULT.match(line.strip())
        if not m:
            continue
        kind, rest = m.groups()
        if kind == "C":
            res["cycles"] = int(rest)
        elif kind == "D":
            index, offset, hexdata = rest.split(" ")
            parts.setdefault(int(index), []).append((int(offset), bytes.fromhex(hexdata)))
        elif kind == "K":
            addr, calls, cyc, cost = rest.split(" ")
            res["forks"][int(addr, 16)] = (int(calls), int(cyc), int(cost))
        elif kind == "G":
            step, code, cyc = rest.split(" ")
            res["graph"][step] = (int(code), int(cyc))
        elif kind == "N":
            node, cyc = rest.split(" ")
            res["nodes"][int(node)] = int(cyc)
        elif kind == "R":
            _, cyc, forks = rest.split(" ")
            res["calls"].append((int(cyc), int(forks)))
        elif kind == "S":
            res["stack"] = tuple(int(v) for v in rest.split(" "))
        elif kind in "FW":
            res["faults" if kind == "F" else "warnings"].append(rest)
    res["dumps"] = {i: b"".join(d for _, d in sorted(chunks)) for i, chunks in parts.items()}
    return res
