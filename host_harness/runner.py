"""Run user kernels of a built library on numpy arrays and read the simulator's counters.

In-process runs load the library with cffi (ABI mode). Sanitized libraries cannot be loaded
into a Python that was not started with the sanitizer runtimes, so those runs go through a child
process (:mod:`host_harness._sanrun`) that exchanges arrays as ``.npz`` files.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from cffi import FFI

import autotiler.errors as errors_module
from autotiler.errors import HarnessError
from autotiler.platforms import PLATFORMS, Platform

from .manifest import KernelSpec
from .toolchain import sanitizer_libraries

L1, L2, L3 = 1, 2, 3
L1_LEVEL = L1  # Graph.run has a parameter named L1
LEVELS = {"L2": L2, "L3": L3}  # an argument's manifest "home" -> simulator level
SANITIZED_CALL_TIMEOUT = 600  # seconds; a kernel stuck in a loop must not hang the test run
# The simulator's limit on forked cores (AT_SIM_MAX_CORES in at_sim.c).
MAX_CORES = 64

CDEF = """
typedef struct {
    long long l3_to_l2, l2_to_l1, l1_to_l2, l2_to_l3;
    long long transfers;
    long long peak_l1, peak_l2;
    long long cycles, compute_cycles, stall_cycles, fork_cycles;
    long long dma_busy_cluster, dma_busy_udma;
    long long peak_l3;
    long long flash_to_l2, dma_busy_flash;
} at_sim_counters_t;
void at_sim_configure(int cores, long long l1_size, long long l2_size,
                      long long dma_setup_cycles, double dma_bytes_per_cycle,
                      long long dma_line_cycles, long long dma_issue_cycles,
                      long long wait_cycles, long long fork_cycles, int dma_duplex,
                      long long kernel_call_cycles);
void at_sim_configure_l3(long long l3_size, long long udma_setup_cycles,
                         double udma_bytes_per_cycle, long long udma_line_cycles);
void at_sim_configure_flash(long long flash_size, long long flash_setup_cycles,
                            double flash_bytes_per_cycle, long long flash_line_cycles,
                            long long mram_setup_cycles, double mram_bytes_per_cycle,
                            long long mram_line_cycles);
void at_sim_set_flash_dir(const char *dir);
void at_sim_begin_call(void);
void at_sim_end_call(void);
void at_sim_persist(int on);
int at_sim_end_session(void);
void *at_sim_alloc(int level, long long size, const char *label);
long long at_sim_level_used(int level);
long long at_sim_level_capacity(int level);
const char *at_sim_last_error(void);
void at_sim_get_counters(at_sim_counters_t *out);
int at_sim_node_count(void);
void at_sim_yield_after(int n);
void at_sim_free(int level, void *ptr, long long size, const char *file, int line);
void at_sim_get_node_counters(int node, at_sim_counters_t *out);
"""

# at_sim_configure's parameters, in order.
CONFIG_KEYS = ("cores", "l1_size", "l2_size", "dma_setup_cycles", "dma_bytes_per_cycle", "dma_line_cycles",
               "dma_issue_cycles", "wait_cycles", "fork_cycles", "dma_duplex", "kernel_call_cycles")
# at_sim_configure_l3's parameters, in order.
L3_CONFIG_KEYS = ("l3_size", "udma_setup_cycles", "udma_bytes_per_cycle", "udma_line_cycles")
# at_sim_configure_flash's parameters, in order: flash capacity, platform.udma["flash"] for every
# flash family, platform.udma["mram"] (or the flash numbers without one) for EMRAMFLASH.
FLASH_CONFIG_KEYS = ("flash_size", "flash_setup_cycles", "flash_bytes_per_cycle", "flash_line_cycles",
                     "mram_setup_cycles", "mram_bytes_per_cycle", "mram_line_cycles")
COUNTER_FIELDS = ("l3_to_l2", "l2_to_l1", "l1_to_l2", "l2_to_l3", "transfers", "peak_l1", "peak_l2",
                  "cycles", "compute_cycles", "stall_cycles", "fork_cycles", "peak_l3", "flash_to_l2")


def platform_config(platform) -> dict:
    """The platform numbers the simulator needs, as keyword arguments of at_sim_configure
    (CONFIG_KEYS), at_sim_configure_l3 (L3_CONFIG_KEYS: L3 RAM and its uDMA engine,
    ``platform.udma["ram"]``; a platform without one has no L3 capacity) and
    at_sim_configure_flash (FLASH_CONFIG_KEYS: ``l3_flash_size`` and ``platform.udma["flash"]``,
    ``["mram"]`` for EMRAMFLASH; a platform without a flash engine has no flash capacity)."""
    dma, ram = platform.cluster_dma, platform.udma.get("ram")
    flash = platform.udma.get("flash")
    mram = platform.udma.get("mram", flash)
    return {"cores": platform.cores, "l1_size": platform.l1_size, "l2_size": platform.l2_size,
            "dma_setup_cycles": dma.setup_cycles, "dma_bytes_per_cycle": float(dma.bytes_per_cycle),
            "dma_line_cycles": dma.line_cycles, "dma_issue_cycles": platform.dma_issue_cycles,
            "wait_cycles": platform.wait_cycles, "fork_cycles": platform.fork_cycles,
            "dma_duplex": int(bool(dma.duplex)), "kernel_call_cycles": platform.kernel_call_cycles,
            "l3_size": platform.l3_ram_size if ram else 0,
            "udma_setup_cycles": ram.setup_cycles if ram else 0,
            "udma_bytes_per_cycle": float(ram.bytes_per_cycle) if ram else 1.0,
            "udma_line_cycles": ram.line_cycles if ram else 0,
            "flash_size": platform.l3_flash_size if flash else 0,
            "flash_setup_cycles": flash.setup_cycles if flash else 0,
            "flash_bytes_per_cycle": float(flash.bytes_per_cycle) if flash else 1.0,
            "flash_line_cycles": flash.line_cycles if flash else 0,
            "mram_setup_cycles": mram.setup_cycles if mram else 0,
            "mram_bytes_per_cycle": float(mram.bytes_per_cycle) if mram else 1.0,
            "mram_line_cycles": mram.line_cycles if mram else 0}


def open_library(path, kernel_names, graph_names=()):
    """dlopen a built library; returns (ffi, lib)."""
    ffi = FFI()
    ffi.cdef(CDEF + "".join(f"int __at_call_{k}(void **, const long long *, const double *);\n"
                            for k in kernel_names)
             + "".join(f"int __at_graph_construct_{g}(const int *);\nint __at_graph_destruct_{g}(const int *);\n"
                       f"int __at_graph_run_{g}(void **, const long long *, const double *, void *);\n"
                       f"int __at_graph_memory_{g}(int);\nint __at_graph_control_{g}(int);\n"
                       f"int __at_graph_layer_{g}(void);\n" for g in graph_names))
    try:
        return ffi, ffi.dlopen(str(path))
    except OSError as exc:
        raise HarnessError(f"cannot load {path}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# Argument checking (done in the parent, before any child process is started)
# ---------------------------------------------------------------------------------------------

def _check_array(kernel: KernelSpec, arg, value) -> None:
    name = arg.name
    if not isinstance(value, np.ndarray):
        raise HarnessError(f"expects a numpy array, got {type(value).__name__}", kernel=kernel.name, arg=name)
    problem = ("is not C-contiguous" if not value.flags.c_contiguous else
               "is read-only (results are copied back in place)" if not value.flags.writeable else
               "has an object dtype" if value.dtype.hasobject else None)
    if problem:
        raise HarnessError(f"array {problem}", kernel=kernel.name, arg=name)
    _check_array_type(kernel, arg, value)


def _squeezed(shape: tuple) -> tuple:
    return tuple(d for d in shape if d != 1)


def _shape_accepted(declared: tuple, given: tuple) -> bool:
    """The declared shape up to dimensions of 1 ((H, W) for one plane), the outer spaces merged
    into one ((planes, H, W)), or flat: the same items in the same order."""
    merged = (math.prod(declared[:-2]), *declared[-2:])
    return (_squeezed(given) == _squeezed(declared) or _squeezed(given) == _squeezed(merged)
            or given == (math.prod(declared),))


def _given(value: np.ndarray) -> str:
    dt = value.dtype
    name = dt.name if dt.byteorder != ">" else f"{dt.str} (big-endian)"
    return f"got {name} shape {value.shape}"


def _check_array_type(kernel: KernelSpec, arg, value: np.ndarray) -> None:
    """dtype (and byte order), item count and shape against the manifest, where it says them."""
    want = np.dtype(arg.dtype) if arg.dtype else None
    expects = "expects " + (f"{want.name} (C '{arg.elem}') array" if want is not None else
                            f"an array of C '{arg.elem}'" if arg.elem else "an array")
    if arg.items is not None:
        expects += f" of {arg.items} items"
    if arg.shape is not None:
        expects += f" shaped {arg.shape}"
    fix = None
    accepted = {want} | ({np.dtype(np.uint8)} if arg.elem == "char" else set())  # plain char: either sign
    if want is not None and (value.dtype not in accepted or value.dtype.byteorder == ">"):
        fix = f"convert with arr.astype(np.{want.name})"
    elif arg.items is not None and value.size != arg.items:
        alloc = arg.shape if arg.shape is not None else arg.items
        fix = f"allocate it as np.zeros({alloc}, dtype=np.{value.dtype.name})"
    elif arg.shape is not None and not _shape_accepted(arg.shape, value.shape):
        fix = f"reshape with arr.reshape{arg.shape}, or pass it flat with arr.ravel()"
    if fix:
        raise HarnessError(f"{expects}, {_given(value)}", kernel=kernel.name, arg=arg.name, hint=fix)


def _check_scalar(kernel: KernelSpec, arg, value) -> None:
    kind = numbers.Real if arg.is_float else numbers.Integral
    if isinstance(value, np.ndarray) or not isinstance(value, kind):
        want = "a float" if arg.is_float else "an int"
        raise HarnessError(f"expects {want}, got {type(value).__name__}", kernel=kernel.name, arg=arg.name)
    if arg.is_float:
        _check_float_range(kernel, arg, float(value))
        return
    if arg.dtype and np.dtype(arg.dtype).kind in "iu":
        info = np.iinfo(np.dtype(arg.dtype))
        if not info.min <= int(value) <= info.max:
            raise HarnessError(f"expects an int in {info.min}..{info.max} (C '{arg.elem}'), got {value}",
                               kernel=kernel.name, arg=arg.name,
                               hint="pass a value of the C type's range (C would silently wrap it)")
    elif not -(2 ** 63) <= int(value) < 2 ** 63:
        raise HarnessError(f"value {value} does not fit in 64 bits", kernel=kernel.name, arg=arg.name)


def _check_float_range(kernel: KernelSpec, arg, value: float) -> None:
    """A finite float the C type cannot hold (70000 for an f16, whose largest is 65504) would
    become infinity on the way in: refused, as an int outside its type is."""
    if not arg.dtype or np.dtype(arg.dtype).kind != "f" or not math.isfinite(value):
        return
    top = float(np.finfo(np.dtype(arg.dtype)).max)
    if abs(value) > top:
        raise HarnessError(f"expects a float within +-{top:g} (C '{arg.elem}'), got {value:g}", kernel=kernel.name,
                           arg=arg.name, hint="pass a value of the C type's range (C would make it infinity)")


def check_args(kernel: KernelSpec, values: dict) -> None:
    names = kernel.arg_names
    missing = [n for n in names if n not in values]
    unknown = [n for n in values if n not in names]
    if missing or unknown:
        parts = ([f"missing argument(s) {', '.join(missing)}"] if missing else []) + \
                ([f"unknown argument(s) {', '.join(unknown)}"] if unknown else [])
        raise HarnessError("; ".join(parts), kernel=kernel.name,
                           hint=f"arguments are {', '.join(names) or '(none)'}")
    for arg in kernel.args:
        if arg.pointer:
            _check_array(kernel, arg, values[arg.name])
        else:
            _check_scalar(kernel, arg, values[arg.name])


def _positive_number(value, integer: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral if integer else numbers.Real):
        return False
    return value >= 0 and (not integer or value < 2 ** 63)


def check_platform(platform) -> None:
    """The numbers the simulator is configured with: a core count it runs, positive L1 and L2
    sizes, non-negative cycle counts and L3 size, positive DMA rates."""
    if not isinstance(platform, Platform):
        raise HarnessError(f"platform must be a platform name ({', '.join(sorted(PLATFORMS))}) or an "
                           f"autotiler.platforms.Platform, got {platform!r} ({type(platform).__name__})")
    cores = platform.cores  # an int >= 1 (Platform checks its fields)
    if not 1 <= cores <= MAX_CORES:
        raise HarnessError(f"{cores} cores: the simulator runs 1 to {MAX_CORES}")
    try:
        config = platform_config(platform)
    except (AttributeError, TypeError, ValueError) as err:
        raise HarnessError(f"platform '{platform.name}' is malformed: {err}") from None
    for key in CONFIG_KEYS[1:] + L3_CONFIG_KEYS + FLASH_CONFIG_KEYS:
        value = config[key]
        rate = key.endswith("bytes_per_cycle")
        ok = _positive_number(value, not rate) and (value > 0 if rate or key in ("l1_size", "l2_size") else True)
        if not ok:
            what = ("a positive number" if rate else "a positive int" if key in ("l1_size", "l2_size")
                    else "an int >= 0")
            field = ("cluster_dma" if key.startswith("dma_") and key != "dma_issue_cycles" else
                     "udma['ram']" if key.startswith("udma_") else "l3_ram_size" if key == "l3_size" else
                     "l3_flash_size" if key == "flash_size" else "udma['flash']" if key.startswith("flash_") else
                     "udma['mram']" if key.startswith("mram_") else key)
            raise HarnessError(f"platform '{platform.name}': {key} must be {what}, got {value!r}",
                               hint=f"fix the platform's {field}")


# ---------------------------------------------------------------------------------------------
# One call on the simulator (in this process)
# ---------------------------------------------------------------------------------------------

def _place_array(ffi, lib, kernel: KernelSpec, arg, array: np.ndarray):
    """Allocate an argument in its home level (L2 unless the manifest says L3) and copy its bytes in."""
    level = LEVELS[arg.home]
    ptr = lib.at_sim_alloc(level, array.nbytes, arg.name.encode())
    if ptr == ffi.NULL:
        capacity, used = lib.at_sim_level_capacity(level), lib.at_sim_level_used(level)
        size = "l2_size" if arg.home == "L2" else "l3_ram_size"
        larger = f"build for a larger {arg.home} (platform=get_platform(..., {size}={used + array.nbytes}) or more)"
        hint = (f"home the argument in L3 (an _L2DB object type, or SetKerArgInL3), or {larger}"
                if arg.home == "L2" else larger)
        raise HarnessError(f"{array.nbytes} bytes do not fit in {arg.home} (capacity {capacity} bytes, {used} in use) "
                           "of the simulated chip", kernel=kernel.name, arg=arg.name, hint=hint)
    if array.nbytes:
        ffi.memmove(ptr, array, array.nbytes)
    return ptr


def _marshal(ffi, lib, kernel: KernelSpec, values: dict):
    n = max(len(kernel.args), 1)
    ptrs, ints, flts = ffi.new("void *[]", n), ffi.new("long long[]", n), ffi.new("double[]", n)
    for i, arg in enumerate(kernel.args):
        value = values[arg.name]
        if arg.pointer:
            ptrs[i] = _place_array(ffi, lib, kernel, arg, value)
        elif arg.is_float:
            flts[i] = float(value)
        else:
            ints[i] = int(value)
    return ptrs, ints, flts


def _copy_back(ffi, kernel: KernelSpec, values: dict, ptrs) -> None:
    for i, arg in enumerate(kernel.args):
        array = values[arg.name]
        if arg.pointer and array.nbytes:
            ffi.memmove(array, ptrs[i], array.nbytes)


def _counters_dict(c, fields=COUNTER_FIELDS) -> dict:
    counters = {name: int(getattr(c, name)) for name in fields}
    counters["dma_busy_cycles"] = {"cluster": int(c.dma_busy_cluster), "udma": int(c.dma_busy_udma)}
    counters["flash_busy_cycles"] = int(c.dma_busy_flash)  # the part of dma_busy_cycles["udma"] on flash reads
    return counters


def read_counters(ffi, lib) -> dict:
    c = ffi.new("at_sim_counters_t *")
    lib.at_sim_get_counters(c)
    return _counters_dict(c)


# The per-node figures of a graph run (peaks are not kept per node).
NODE_COUNTER_FIELDS = tuple(f for f in COUNTER_FIELDS if not f.startswith("peak_"))


def read_node_counters(ffi, lib, names) -> list:
    """``counters["nodes"]`` of a graph run: per node (AT_SIM_NODE_BEGIN/END of the generated
    runner), its ``name`` and what the counters did from its begin to its end."""
    out = []
    c = ffi.new("at_sim_counters_t *")
    for i in range(lib.at_sim_node_count()):
        lib.at_sim_get_node_counters(i, c)
        out.append({"name": names[i] if i < len(names) else f"node{i}", **_counters_dict(c, NODE_COUNTER_FIELDS)})
    return out


def begin_call(lib, config: dict) -> None:
    """Configure the simulator for one call and start it (counters reset)."""
    lib.at_sim_configure(*(config[k] for k in CONFIG_KEYS))
    lib.at_sim_configure_l3(*(config[k] for k in L3_CONFIG_KEYS))
    lib.at_sim_configure_flash(*(config[k] for k in FLASH_CONFIG_KEYS))
    # relative flash file names (AT_<DEV>FLASH_FS_OPEN) are resolved against this directory
    lib.at_sim_set_flash_dir(str(config.get("flash_dir") or "").encode())
    lib.at_sim_begin_call()


def run_kernel(ffi, lib, config: dict, kernel: KernelSpec, values: dict) -> dict:
    """Run one user kernel; arrays in ``values`` are updated in place. Faults -> HarnessError."""
    begin_call(lib, config)
    try:
        ptrs, ints, flts = _marshal(ffi, lib, kernel, values)
        status = getattr(lib, f"__at_call_{kernel.name}")(ptrs, ints, flts)
        if status != 0:
            message = ffi.string(lib.at_sim_last_error()).decode(errors="replace")
            raise HarnessError(message or "the simulator reported a fault", kernel=kernel.name)
        _copy_back(ffi, kernel, values, ptrs)
        return read_counters(ffi, lib)
    finally:
        lib.at_sim_end_call()  # frees every simulated allocation, also after a fault


# ---------------------------------------------------------------------------------------------
# Sanitized runs: a child Python with the sanitizer runtimes preloaded
# ---------------------------------------------------------------------------------------------

def _child_env() -> dict:
    env = dict(os.environ)
    # the child imports host_harness and autotiler from wherever this process found them
    roots = {str(Path(__file__).resolve().parent.parent), str(Path(errors_module.__file__).resolve().parent.parent)}
    env["PYTHONPATH"] = os.pathsep.join([*sorted(roots), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["LD_PRELOAD"] = " ".join([*sanitizer_libraries(), env.get("LD_PRELOAD", "")]).strip()
    # Python itself "leaks" at exit; leaks are not what we are looking for.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    env["UBSAN_OPTIONS"] = ":".join(filter(None, [env.get("UBSAN_OPTIONS"), "print_stacktrace=1"]))
    return env


def _sanitizer_report(stderr: str, count: int = 8) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    marks = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: UndefinedBehaviorSanitizer",
             "Traceback")
    start = next((i for i, ln in enumerate(lines) if any(m in ln for m in marks)), max(len(lines) - count, 0))
    return " | ".join(lines[start:start + count]) or "(no output)"


def _write_request(work: Path, library: Path, config: dict, kernel: KernelSpec, values: dict) -> None:
    scalars = {a.name: values[a.name] for a in kernel.args if not a.pointer}
    request = {"library": str(library), "config": config, "kernel": kernel.to_dict(),
               "scalars": {k: (float(v) if isinstance(v, float) else int(v)) for k, v in scalars.items()}}
    (work / "request.json").write_text(json.dumps(request))
    np.savez(work / "in.npz", **{f"a{i}": values[a.name] for i, a in enumerate(kernel.args) if a.pointer})


def _read_result(work: Path, proc, kernel: KernelSpec, values: dict) -> dict:
    result_path = work / "result.json"
    if proc.returncode != 0 or not result_path.exists():
        err = HarnessError(f"sanitizer report (exit {proc.returncode}): {_sanitizer_report(proc.stderr)}",
                           kernel=kernel.name)
        err.details = proc.stderr
        raise err
    result = json.loads(result_path.read_text())
    if "error" in result:
        raise HarnessError(result["error"])
    with np.load(work / "out.npz") as out:
        for i, arg in enumerate(kernel.args):
            if arg.pointer:
                np.copyto(values[arg.name], out[f"a{i}"])
    return result["counters"]


def run_sanitized(library: Path, config: dict, kernel: KernelSpec, values: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="at-sanrun-") as tmp:
        work = Path(tmp)
        _write_request(work, library, config, kernel, values)
        try:
            proc = subprocess.run([sys.executable, "-m", "host_harness._sanrun", str(work)],
                                  check=False, env=_child_env(), capture_output=True, text=True,
                                  timeout=SANITIZED_CALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"sanitized run did not finish in {SANITIZED_CALL_TIMEOUT} s",
                               kernel=kernel.name) from None
        return _read_result(work, proc, kernel, values)


# ---------------------------------------------------------------------------------------------
# Program
# ---------------------------------------------------------------------------------------------

class KernelTable:
    """The user kernels and graphs of a built program by name (``self._kernels``,
    ``self._graph_specs``), for every back-end."""

    _kernels: dict
    _graph_specs: dict

    @property
    def kernels(self) -> list[str]:
        return list(self._kernels)

    def kernel(self, name: str) -> KernelSpec:
        if name not in self._kernels:
            raise HarnessError(f"unknown kernel '{name}'", hint=f"kernels are {', '.join(self._kernels)}")
        return self._kernels[name]

    @property
    def graphs(self) -> list[str]:
        return list(self._graph_specs)

    def graph_spec(self, name: str):
        """The manifest entry of graph ``name``."""
        if name not in self._graph_specs:
            raise HarnessError(f"unknown graph '{name}'", hint=f"graphs are {', '.join(self._graph_specs) or '(none)'}")
        return self._graph_specs[name]


class Program(KernelTable):
    """A built library of user kernels, runnable on numpy arrays. Made by :func:`build`."""

    def __init__(self, library: Path, kernels: dict[str, KernelSpec], platform, *, sanitize: bool = False,
                 cache_hit: bool = False, flash_dir=None, graphs=None):
        self.library = Path(library)
        self.platform = platform
        self.sanitize = sanitize
        self.cache_hit = cache_hit  # True when build() reused a cached library
        check_platform(platform)
        self._kernels = dict(kernels)
        self._graph_specs = dict(graphs or {})
        self._graphs: dict = {}
        self._constructed: set = set()  # graphs between construct() and destruct()
        self._config = platform_config(platform)
        self.flash_dir = flash_dir
        # A sanitized library is only ever loaded by the child process.
        self._ffi, self._lib = (None, None) if sanitize else open_library(self.library, self._kernels,
                                                                          self._graph_specs)

    @property
    def flash_dir(self) -> Path | None:
        """Where a flash image opened by a relative name (``AT_<DEV>FLASH_FS_OPEN(..., "x.dat", ...)``)
        is looked for: :func:`build` sets the generated directory; None is the current directory."""
        return self._flash_dir

    @flash_dir.setter
    def flash_dir(self, value) -> None:
        self._flash_dir = Path(value).resolve() if value is not None else None
        self._config["flash_dir"] = str(self._flash_dir) if value is not None else ""

    def call(self, kernel_name: str, /, **args) -> dict:
        """Run ``kernel_name`` with numpy arrays (pointer args, updated in place) and Python
        scalars; returns the simulator's counters for this call."""
        kernel = self.kernel(kernel_name)
        check_args(kernel, args)
        if self._constructed:
            raise HarnessError(f"graph '{sorted(self._constructed)[0]}' is constructed: its areas (and the L1 "
                               "symbol the kernels share) are in use", kernel=kernel_name,
                               hint="call destruct() on the graph before calling kernels one by one")
        if self.sanitize:
            return run_sanitized(self.library, self._config, kernel, args)
        return run_kernel(self._ffi, self._lib, self._config, kernel, args)

    def graph(self, name: str) -> Graph:
        """The generated graph ``name``: construct(), run(**arrays), memory(which), destruct()."""
        spec = self.graph_spec(name)
        if self.sanitize:
            raise HarnessError(f"graph '{name}': sanitized runs of graphs are not supported yet (the constructed "
                               "state would have to live in the child process)", hint="build with sanitize=False")
        return self._graphs.setdefault(name, Graph(self, spec))

    def __repr__(self) -> str:
        return f"Program({self.library}, kernels={self.kernels}, platform={self.platform.name!r})"


# ---------------------------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------------------------

# <G>_Construct's return codes (the guide's): what failed.
CONSTRUCT_ERRORS = {1: "opening the flash image of the constants failed", 2: "an L3 allocation failed",
                    3: "an L2 allocation failed", 4: "the L1 allocation failed"}
# Graph.memory(which): the original's AT_MEM_TYPE, by name or short name.
MEMORY_KINDS = {"AT_L1_MEM": 0, "AT_L2_MEM": 1, "AT_L2_DYN_MEM": 2, "AT_L3_MEM": 3, "AT_L3_DYN_MEM": 4,
                "AT_CTXT_MEM": 5, "L1": 0, "L2": 1, "L2_DYN": 2, "L3": 3, "L3_DYN": 4, "CTXT": 5}
# ControlCtxt's actions (a reentrant graph, -R).
CONTROL_ACTIONS = {"reset": 0, "abort": 1, 0: 0, 1: 1}


# AT_GRAPH_WARM_CONSTRUCT modes (GraphSpec.warm) and WARM_ALL's flags, in the C order.
WARM_MODES = {0: "WARM_DISABLED", 1: "WARM_L1", 2: "WARM_L2_DYN_L1", 3: "WARM_ALL"}
WARM_ALL_CONSTRUCT = ("DoL1Alloc", "DoL2Alloc", "DoL2DynAlloc", "DoL3Init", "DoL3Alloc", "DoPromotion")
WARM_ALL_DESTRUCT = ("DoL1Dealloc", "DoL2Dealloc", "DoL2DynDealloc", "DoL3Dealloc", "DoL3DeInit")
# What a graph holds between calls, as the harness tracks it (Graph.live), and which flag makes it.
PARTS = {"flash": "the flash image of the constants (open)", "ram": "the L3 RAM (open)",
         "L3": "the L3 RAM area (spilled activations)", "L2": "static L2", "L2_DYN": "dynamic L2",
         "L1": "L1", "promoted": "the promoted constants (loaded into static L2)"}
_CONSTRUCT_PARTS = {"DoL1Alloc": ("L1",), "DoL2Alloc": ("L2",), "DoL2DynAlloc": ("L2_DYN",),
                    "DoL3Init": ("flash", "ram"), "DoL3Alloc": ("L3",), "DoPromotion": ("promoted",)}
_DESTRUCT_PARTS = {"DoL1Dealloc": ("L1",), "DoL2Dealloc": ("L2",), "DoL2DynDealloc": ("L2_DYN",),
                   "DoL3Dealloc": ("L3",), "DoL3DeInit": ("flash", "ram")}


class GraphBase:
    """What every back-end's graph reads off its manifest entry ``spec``."""

    spec: object

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def warm_mode(self) -> str:
        """The graph's AT_GRAPH_WARM_CONSTRUCT: WARM_DISABLED, WARM_L1, WARM_L2_DYN_L1 or WARM_ALL."""
        return WARM_MODES[self.spec.warm]


class Graph(GraphBase):
    """A generated graph of a :class:`Program`: ``construct()`` (allocations and promoted
    constants, kept between calls), ``run(**arrays)`` (counters; outputs copied back), as many
    times as wanted, ``memory(which)``, ``destruct()`` (then construct again if wanted).
    ``counters``: those of the last construct, run or destruct.

    Under AT_GRAPH_WARM_CONSTRUCT (``warm_mode``) the calls take the generated functions'
    arguments: WARM_L1 / WARM_L2_DYN_L1 ``construct(warm=N)`` / ``destruct(warm=N)`` (``Warm``,
    default 0: everything); WARM_ALL ``construct(DoL1Alloc=1, DoL2Alloc=1, DoL2DynAlloc=1,
    DoL3Init=1, DoL3Alloc=1, DoPromotion=1)`` / ``destruct(DoL1Dealloc=1, DoL2Dealloc=1,
    DoL2DynDealloc=1, DoL3Dealloc=1, DoL3DeInit=1)`` (omitted flags are 1) and ``run(...,
    L1=...)``: the application's L1 given to the runner (``_L1_Memory``): None (NULL: the
    constructor's L1), True (the harness allocates ``memory("L1")`` bytes in the simulated L1
    for the run) or a byte count (at least ``memory("L1")``). ``live`` is what the graph holds
    between calls (:data:`PARTS`); a call that would allocate what is live, free what is not, or
    run without what the runner needs is a HarnessError before any C runs.

    A reentrant graph (generated with -R, ``reentrant``): ``construct()`` is ``<G>_Construct(&Descr)``
    then ``<G>_AllocCtxt(&Descr, 0, 0, 0, 0, &Status)``, ``destruct()`` ``<G>_DeAllocCtxt(Ctxt, 1, 1, 1,
    1)`` then ``<G>_Destruct(&Descr, 1, 1)``, and a run can stop between layers: ``run(...,
    until=k)`` returns once k layers have run (the simulator's AT_YIELD returns non-zero there, the
    runner returns with its progress in the context: ``layer_index`` is k, ``suspended`` is True),
    ``resume(until=None)`` calls the runner again (it continues from ``layer_index``), ``step()``
    runs one more layer; the outputs are copied back into the arrays given to ``run`` when the
    runner completes (the arguments stay in the simulated L2 while suspended).
    ``control("reset" | "abort")`` is ``<G>_ControlCtxt(Ctxt, 0 | 1)``: reset drops the suspended
    run (nothing copied back; the next ``run`` starts at the first layer), abort sets the layer
    index to the number of layers (the next ``resume``/``run`` runs no layer, the runner resets
    the index, what the layers wrote so far is copied back)."""

    def __init__(self, program: Program, spec):
        self._program, self.spec = program, spec
        self._pending = None  # a suspended reentrant run: (args, ptrs, ints, flts)
        self.counters: dict = {}
        self._live: set = set()
        self._session = False  # between the first construct and the destruct that frees the last part

    @property
    def constructed(self) -> bool:
        return self._session

    @property
    def reentrant(self) -> bool:
        """Generated with -R (AT_GRAPH_RUNNER_RE_ENTRANT): the runner takes a context and yields."""
        return self.spec.reentrant

    @property
    def suspended(self) -> bool:
        """A reentrant run returned between layers (``run(until=)``, ``step``) and is not finished."""
        return self._pending is not None

    @property
    def layer_index(self) -> int:
        """``<G>_CtxtGetLayerIndex(Ctxt)``: how many layers of the current run have run (0: none,
        or the run completed)."""
        self._need_reentrant("layer_index")
        return int(getattr(self._program._lib, f"__at_graph_layer_{self.name}")())

    def _need_reentrant(self, what: str) -> None:
        if not self.spec.reentrant:
            raise HarnessError(f"graph '{self.name}': {what} is for a reentrant graph", hint="generate with -R "
                               "(TilerParseOptions([..., '-R'])) or AT_GRAPH_RUNNER_RE_ENTRANT")
        if not self.constructed:
            raise HarnessError(f"graph '{self.name}' is not constructed", hint="call construct() first")

    @property
    def live(self) -> frozenset:
        """What the graph holds now: "flash", "ram", "L3", "L2", "L2_DYN", "L1", "promoted" (see PARTS)."""
        return frozenset(self._live)

    @property
    def parts(self) -> frozenset:
        """What a full construct makes live (areas of 0 bytes and a graph without constants have none)."""
        sizes = self.spec.sizes
        out = {k for k in ("L1", "L2", "L2_DYN") if sizes.get(k, 0) > 0}
        if self.spec.flash_file:
            out.add("flash")
        if sizes.get("L2", 0) > 0:
            out.add("promoted")
        if sizes.get("L3", 0) > 0 or (self.spec.reentrant and sizes.get("L3_DYN", 0) > 0):
            out |= {"ram", "L3"}   # a reentrant graph's spilled activations: the context's dynamic L3
        return frozenset(out)

    def _set_session(self, on: bool) -> None:
        self._session = on
        if on:
            self._program._constructed.add(self.name)
        else:
            self._live.clear()
            self._program._constructed.discard(self.name)

    def _call(self, what: str, flags: list, persist: bool = False) -> int:
        p = self._program
        begin_call(p._lib, p._config)
        try:
            p._lib.at_sim_persist(1 if persist else 0)
            code = getattr(p._lib, f"__at_graph_{what}_{self.name}")(p._ffi.new("int[]", flags or [0]))
            self.counters = read_counters(p._ffi, p._lib)
            return code
        finally:
            p._lib.at_sim_end_call()

    def _last_error(self) -> str:
        return self._program._ffi.string(self._program._lib.at_sim_last_error()).decode(errors="replace")

    def _flags(self, what: str, warm, flags: dict, names: tuple) -> tuple[list, str]:
        """(the C arguments, their text) of construct/destruct in the graph's mode."""
        mode, fn = self.spec.warm, f"{what}()"
        if mode == 0:
            if warm is not None or flags:
                raise HarnessError(f"graph '{self.name}' has no warm {what}or (generated without "
                                   f"AT_GRAPH_WARM_CONSTRUCT): {fn} takes no argument",
                                   hint="AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(WARM_...)) before "
                                   "CreateGraph generates one")
            return [], ""
        if mode in (1, 2):
            if flags:
                raise HarnessError(f"graph '{self.name}' ({self.warm_mode}): {fn} takes warm=N only (the C "
                                   f"function's Warm), got {', '.join(flags)}",
                                   hint="the DoL1Alloc, ... flags are WARM_ALL's")
            warm = 0 if warm is None else warm
            if isinstance(warm, bool) or not isinstance(warm, numbers.Integral) or warm < 0:
                raise HarnessError(f"graph '{self.name}': {what}(warm=...) expects an int >= 0, got {warm!r}",
                                   hint="0: everything; 1: L1 only" + ("; 2: L1 and dynamic L2" if mode == 2 else ""))
            return [int(warm)], str(int(warm))
        if warm is not None:
            raise HarnessError(f"graph '{self.name}' (WARM_ALL): {fn} takes the flags " + ", ".join(names)
                               + ", not warm=", hint=f"e.g. {what}({names[0]}=0)")
        unknown = [k for k in flags if k not in names]
        if unknown:
            raise HarnessError(f"graph '{self.name}' (WARM_ALL): unknown {what} flag(s) {', '.join(unknown)}",
                               hint="flags: " + ", ".join(names))
        values = []
        for k in names:
            v = flags.get(k, 1)
            if not isinstance(v, (bool, numbers.Integral)):
                raise HarnessError(f"graph '{self.name}': {what}({k}=...) expects 0/1 (or a bool), got {v!r}")
            values.append(int(bool(v)))
        return values, ", ".join(str(v) for v in values)

    def _construct_parts(self, values: list) -> set:
        mode = self.spec.warm
        if mode == 3:
            made = {part for k, v in zip(WARM_ALL_CONSTRUCT, values) if v for part in _CONSTRUCT_PARTS[k]}
        elif mode and values[0]:
            made = {"L1"} | ({"L2_DYN"} if mode == 2 and values[0] == 2 else set())
        else:
            made = set(PARTS)
        return made & self.parts

    def _destruct_parts(self, values: list) -> set:
        mode = self.spec.warm
        if mode == 3:
            freed = {part for k, v in zip(WARM_ALL_DESTRUCT, values) if v for part in _DESTRUCT_PARTS[k]}
        elif mode and values[0]:
            freed = {"L1"} | ({"L2_DYN"} if mode == 2 and values[0] == 2 else set())
        else:
            freed = set(PARTS) - {"promoted"}
        return freed & self.parts

    @staticmethod
    def _names(parts) -> str:
        return ", ".join(PARTS[p] for p in PARTS if p in parts)

    def construct(self, warm=None, **flags) -> None:
        """``<G>_Construct(...)`` with the mode's arguments (see the class); a non-zero code is a
        HarnessError naming what failed, after which the harness frees whatever the graph held."""
        values, text = self._flags("construct", warm, flags, WARM_ALL_CONSTRUCT)
        fn = f"{self.spec.construct}({text})"
        made = self._construct_parts(values)
        full = self.spec.warm == 0 or (self.spec.warm in (1, 2) and values[0] == 0)
        if self._live and full:
            raise HarnessError(f"graph '{self.name}' is already constructed", hint="destruct() it first")
        again = made & self._live - {"promoted"}  # promoting again into live static L2 is harmless
        if again:
            raise HarnessError(f"graph '{self.name}': {fn} allocates {self._names(again)}, which the graph "
                               "already holds", hint="free it first (destruct with the flag or warm value that "
                               "frees it)")
        if "promoted" in made and not {"L2", "flash"} & self.parts <= self._live | made:
            raise HarnessError(f"graph '{self.name}': {fn} copies the promoted constants from the flash image "
                               "into static L2, which needs the flash open (DoL3Init) and static L2 allocated "
                               "(DoL2Alloc), in this call or an earlier one")
        if "L3" in made and "ram" not in self._live | made:
            raise HarnessError(f"graph '{self.name}': {fn} allocates the L3 RAM area, which needs the L3 RAM open "
                               "(DoL3Init), in this call or an earlier one")
        code = self._call("construct", values, persist=True)
        if code == 0:
            self._live |= made
            self._set_session(True)
            return
        detail = self._last_error()
        self._program._lib.at_sim_end_session()  # whatever it allocated before failing
        held = self._names(self._live)
        self._set_session(False)
        message = self._construct_message(fn, code, detail, made)
        if held:
            message += f" (the harness freed what the graph held: {held})"
        raise HarnessError(message, hint=self._construct_hint(code))

    def _construct_message(self, fn: str, code: int, detail: str, made: set) -> str:
        if code == -1:
            return f"{fn} faulted: {detail}"
        if self.spec.reentrant and code > 100:
            lib = self._program._lib
            what = {1: "cannot allocate the context in L2",
                    2: f"cannot allocate the dynamic L3 (L3 RAM: {self.spec.sizes.get('L3_DYN', 0)} bytes asked; L3 "
                       f"holds {lib.at_sim_level_capacity(3)} bytes)",
                    3: "cannot allocate the dynamic L2", 4: "cannot allocate L1"}.get(code - 100, "unknown status")
            return f"{self.name}_AllocCtxt(&Descr, 0, 0, 0, 0, &Status) set Status {code - 100}: {what}"
        if self.spec.reentrant and code == 2:
            return f"{fn} returned 2: opening the L3 RAM (Descr->Ram) failed: {detail}"
        what = CONSTRUCT_ERRORS.get(code, "unknown error code")
        sizes, lib = self.spec.sizes, self._program._lib
        if code == 1:
            return f"{fn} returned 1: {what} ('{self.spec.flash_file}'): {detail}"
        if code in (3, 4):
            level = 2 if code == 3 else 1
            l2 = [f"{label} {sizes.get(k, 0)}" for k, label in (("L2", "static"), ("L2_DYN", "dynamic")) if k in made]
            asked = f"{' + '.join(l2)} bytes" if code == 3 else f"{sizes.get('L1', 0)} bytes"
            return (f"{fn} returned {code}: {what} ({asked} asked; L{level} holds "
                    f"{lib.at_sim_level_capacity(level)} bytes)")
        if code == 2:
            return (f"{fn} returned 2: {what} (L3 RAM: {sizes.get('L3', 0)} bytes asked; L3 holds "
                    f"{lib.at_sim_level_capacity(3)} bytes)")
        return f"{fn} returned {code}: {what}"

    def _construct_hint(self, code: int) -> str:
        if code == 102:
            code = 2
        if code == 1:
            return "regenerate the model: the flash image is written next to the generated C"
        if code in (3, 4):
            return "build for a platform with more memory (platform=get_platform(..., l2_size=N / l1_size=N))"
        if code == 2:
            return "build for a platform with more L3 RAM (platform=get_platform(..., l3_ram_size=N))"
        return ""

    def _l1_size(self, L1) -> int:
        """Bytes of the application's L1 for the runner (0: none, the runner gets NULL)."""
        if L1 is None or L1 is False:
            return 0
        if self.spec.warm != 3:
            raise HarnessError(f"graph '{self.name}' ({self.warm_mode}): only a WARM_ALL runner takes the "
                               "application's L1", hint="generate with AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, "
                               "AT_OPT_VAL(WARM_ALL)), or drop L1=")
        need = self.spec.sizes.get("L1", 0)
        if L1 is True:
            size = need
        elif isinstance(L1, numbers.Integral) and L1 > 0:
            size = int(L1)
        else:
            raise HarnessError(f"graph '{self.name}': run(L1=...) expects None, True (memory('AT_L1_MEM') bytes) "
                               f"or a byte count, got {L1!r}")
        if size < need:
            raise HarnessError(f"graph '{self.name}': the application's L1 (L1={size} bytes) is too small: the "
                               f"graph's user kernels need memory('AT_L1_MEM') = {need} bytes", hint="pass L1=True")
        if "L1" in self._live:
            raise HarnessError(f"graph '{self.name}': the constructor's L1 is allocated, and a run given the "
                               "application's L1 leaves the graph's L1 pointer at 0 (the runner resets it), so "
                               "the destructor could not free it", hint="construct with DoL1Alloc=0 to give the "
                               "runner your L1, or run without L1=")
        return size

    def _missing_hint(self, missing: set) -> str:
        mode = self.spec.warm
        if mode == 3:
            flags = {p: k for k, parts in _CONSTRUCT_PARTS.items() for p in parts}
            hint = "construct(" + ", ".join(dict.fromkeys(f"{flags[p]}=1" for p in PARTS if p in missing)) + ")"
            return hint + (" or pass the application's L1: run(..., L1=True)" if missing == {"L1"} else "")
        if mode and missing <= {"L1", "L2_DYN"}:
            return f"construct(warm={2 if 'L2_DYN' in missing else 1}) allocates it again"
        return "construct() it first"

    def run(self, *, L1=None, until=None, **args) -> dict:
        """``<G>(args)`` on numpy arrays (checked as Program.call checks kernel arguments;
        outputs copied back in place); returns the counters of the run. ``L1``: WARM_ALL only,
        the application's L1; ``until``: a reentrant graph only, return once that many layers
        have run (see the class)."""
        if not self.constructed:
            raise HarnessError(f"graph '{self.name}' is not constructed", hint="call construct() first")
        if "L1" in self.spec.arg_names:
            raise HarnessError(f"graph '{self.name}' has an argument named 'L1', which Graph.run reserves for the "
                               "application's L1 (WARM_ALL)", hint="rename the graph argument")
        if self.spec.reentrant:
            return self._run_reentrant(until, args)
        if until is not None:
            raise HarnessError(f"graph '{self.name}': run(until=...) stops a reentrant runner between layers; this "
                               "graph's runner is not reentrant", hint="generate with -R")
        l1 = self._l1_size(L1)
        missing = self.parts - self._live - ({"L1"} if l1 else set())
        if missing:
            raise HarnessError(f"graph '{self.name}' cannot run: it does not hold {self._names(missing)}",
                               hint=self._missing_hint(missing))
        check_args(self.spec, args)
        p = self._program
        begin_call(p._lib, p._config)
        try:
            memory = p._ffi.NULL
            if l1:
                memory = p._lib.at_sim_alloc(L1_LEVEL, l1, b"application L1 (Graph.run L1=)")
                if memory == p._ffi.NULL:
                    raise HarnessError(f"graph '{self.name}': cannot allocate the application's L1 ({l1} bytes): L1 "
                                       f"holds {p._lib.at_sim_level_capacity(L1_LEVEL)} bytes, "
                                       f"{p._lib.at_sim_level_used(L1_LEVEL)} in use")
            ptrs, ints, flts = _marshal(p._ffi, p._lib, self.spec, args)
            code = getattr(p._lib, f"__at_graph_run_{self.name}")(ptrs, ints, flts, memory)
            if code == 1:
                raise HarnessError(self._last_error() or "the simulator reported a fault", kernel=self.name)
            if code:
                raise HarnessError(f"{self.name}() returned non-zero", kernel=self.name)
            _copy_back(p._ffi, self.spec, args, ptrs)
            self.counters = read_counters(p._ffi, p._lib)
            self.counters["nodes"] = read_node_counters(p._ffi, p._lib, self.spec.nodes)
            return self.counters
        finally:
            p._lib.at_sim_end_call()

    def _check_until(self, until, start: int) -> int:
        """at_sim_yield_after's count for ``until`` (0: run to the end)."""
        n = len(self.spec.nodes)
        if until is None:
            return 0
        if isinstance(until, bool) or not isinstance(until, numbers.Integral) or not start < until <= n:
            raise HarnessError(f"graph '{self.name}': until={until!r} must be a layer count in {start + 1}..{n} "
                               f"(layers run so far: {start}, layers: {n})")
        return int(until) - start

    def _run_reentrant(self, until, args: dict) -> dict:
        if self._pending is not None:
            raise HarnessError(f"graph '{self.name}' is suspended after layer {self.layer_index}: its runner "
                               "continues the suspended run", hint="resume() it, or control('reset') to drop it")
        if "until" in self.spec.arg_names:
            raise HarnessError(f"graph '{self.name}' has an argument named 'until', which Graph.run reserves",
                               hint="rename the graph argument")
        count = self._check_until(until, self.layer_index)
        check_args(self.spec, args)
        p = self._program
        begin_call(p._lib, p._config)
        try:
            p._lib.at_sim_persist(1)  # the arguments stay in L2 while the run is suspended
            try:
                self._pending = (args, *_marshal(p._ffi, p._lib, self.spec, args))
            finally:
                p._lib.at_sim_persist(0)
            return self._drive(count)
        finally:
            p._lib.at_sim_end_call()

    def resume(self, until=None) -> dict:
        """Call a reentrant runner again: it continues the suspended run from ``layer_index``, up
        to ``until`` layers run (None: the end, outputs copied back); returns the call's counters."""
        self._need_reentrant("resume()")
        if self._pending is None:
            raise HarnessError(f"graph '{self.name}' has no suspended run", hint="run(..., until=k) first")
        count = self._check_until(until, self.layer_index)
        p = self._program
        begin_call(p._lib, p._config)
        try:
            return self._drive(count)
        finally:
            p._lib.at_sim_end_call()

    def step(self) -> dict:
        """Run one more layer of the suspended run (the last one completes it)."""
        self._need_reentrant("step()")
        if self._pending is None:
            raise HarnessError(f"graph '{self.name}' has no suspended run", hint="run(..., until=1) first")
        nxt = self.layer_index + 1
        return self.resume(None if nxt >= len(self.spec.nodes) else nxt)  # the last layer: to the end

    def control(self, action) -> int:
        """``<G>_ControlCtxt(Ctxt, Action)``: "reset" (0) or "abort" (1); returns the layer index."""
        self._need_reentrant("control()")
        if isinstance(action, bool) or action not in CONTROL_ACTIONS:
            raise HarnessError(f"graph '{self.name}': control({action!r}): the action is 'reset' (0) or 'abort' (1)")
        index = int(getattr(self._program._lib, f"__at_graph_control_{self.name}")(CONTROL_ACTIONS[action]))
        if index == 0:
            self._free_pending()  # reset: the suspended run is dropped
        return index

    def _drive(self, count: int) -> dict:
        """One call of the reentrant runner on the kept arguments (inside a begin_call)."""
        p = self._program
        args, ptrs, ints, flts = self._pending
        p._lib.at_sim_yield_after(count)
        code = getattr(p._lib, f"__at_graph_run_{self.name}")(ptrs, ints, flts, p._ffi.NULL)
        if code:
            self._free_pending()
            if code == 1:
                raise HarnessError(self._last_error() or "the simulator reported a fault", kernel=self.name)
            raise HarnessError(f"{self.name}() returned non-zero", kernel=self.name)
        if self.layer_index == 0:  # the run completed
            _copy_back(p._ffi, self.spec, args, ptrs)
            self._free_pending()
        self.counters = read_counters(p._ffi, p._lib)
        self.counters["nodes"] = read_node_counters(p._ffi, p._lib, self.spec.nodes)
        return self.counters

    def _free_pending(self) -> None:
        if self._pending is None:
            return
        args, ptrs = self._pending[0], self._pending[1]
        self._pending = None
        for i, arg in enumerate(self.spec.args):
            if arg.pointer:
                self._program._lib.at_sim_free(LEVELS[arg.home], ptrs[i], args[arg.name].nbytes, b"Graph.run", 0)

    def memory(self, which) -> int:
        """``<G>_Memory(Which)``: bytes of one memory ("AT_L1_MEM", "AT_L2_MEM", "AT_L2_DYN_MEM",
        "AT_L3_MEM", "AT_L3_DYN_MEM", or "L1", "L2", "L2_DYN", "L3", "L3_DYN")."""
        if which not in MEMORY_KINDS:
            raise HarnessError(f"unknown memory {which!r}", hint=f"use one of {', '.join(MEMORY_KINDS)}")
        return int(getattr(self._program._lib, f"__at_graph_memory_{self.name}")(MEMORY_KINDS[which]))

    def destruct(self, warm=None, **flags) -> None:
        """``<G>_Destruct(...)`` with the mode's arguments (see the class). When it frees the last
        thing the graph holds, what the graph left allocated or open is a HarnessError."""
        if not self.constructed:
            raise HarnessError(f"graph '{self.name}' is not constructed", hint="call construct() first")
        values, text = self._flags("destruct", warm, flags, WARM_ALL_DESTRUCT)
        fn = f"{self.spec.destruct}({text})"
        self._free_pending()  # a suspended run's arguments
        freed = self._destruct_parts(values)
        absent = freed - self._live
        if absent:
            raise HarnessError(f"graph '{self.name}': {fn} frees {self._names(absent)}, which the graph does not "
                               "hold (freed already, or never allocated)",
                               hint="allocate it again first, or free only what the graph holds "
                               f"(now: {self._names(self._live) or 'nothing'})")
        code = self._call("destruct", values)
        if code == -1:
            detail = self._last_error()
            self._program._lib.at_sim_end_session()
            self._set_session(False)
            raise HarnessError(f"{fn} faulted: {detail}")
        self._live -= freed | ({"promoted"} if "L2" in freed else set())
        if not self._live:
            self._set_session(False)
            left = self._program._lib.at_sim_end_session()
            if left:
                raise HarnessError(f"{fn} left {left} allocation(s) or device(s): {self._last_error()}",
                                   hint="free every area the constructor allocated and close the flash")
        if code:
            raise HarnessError(f"{fn} returned {code}")

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, {self.warm_mode}, live={sorted(self._live)})"
