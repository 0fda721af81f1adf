"""RV32 builds (issue 11 item 4): every example's generated code, its basic kernels, the CNN
basic kernels and Gap.h/Gap8.h compiled for a PULP cluster core (rv32imc, ilp32) as strict C99,
warning-free, with the .text size of each example.

Steps:

1. every example model (``examples/*/model.py``) is generated into a temporary directory, as a
   user runs it (``python examples/<name>/model.py -o DIR -q``; mnist and mobilenet find their
   constants by themselves);
2. every generated ``.c``, the example's own basic kernels (``SOURCES`` of its reference.py,
   with its ``INCLUDE_DIRS``), every CNN basic kernel (``autotiler/generators/cnn_kernels/*.c``)
   and a translation unit including Gap.h and Gap8.h are compiled (``-c``, one object per
   source) with::

       riscv64-unknown-elf-gcc -march=rv32imc -mabi=ilp32 --specs=picolibc.specs -std=c99
           -Wall -Wextra -Werror -O2 -DAT_SIM_NCORES=8 -D__EMUL__

   against the headers the GVSoC back-end stages (``host_harness/gvsoc.py``
   ``GvsocProgram._stage``): Gap.h, Gap8.h, KernelLibStdTypes.h from host_harness/runtime/ beside
   the target's ``host_harness/target/at_api.h`` in one include directory;
3. the ``.text`` size of each object (``riscv64-unknown-elf-size -A``: the ``.text`` and
   ``.text.*`` sections; .rodata, .data and .bss are in the JSON) is summed per example, its
   generated code and its basic kernels apart, printed as a table and written to
   ``bench/results/rv32.json`` (``--json PATH``).

Exit status: 0 when everything compiled warning-free, 1 on any warning or error (the first
compiler lines of each failing unit are printed) or a model that fails to generate, 2 when the
cross compiler (or picolibc) is missing, with the install hint.

Flag choices:

* ``-march=rv32imc``, not the ``rv32imc_zicsr_zifencei`` of the GVSoC back-end: binutils 2.40
  needs ``zicsr`` only to assemble the ``csrr`` instructions of pulp-runtime (``pulp.h``,
  ``at_target.c``). The units compiled here never include ``pulp.h`` (the target's at_api.h
  declares the runtime's functions instead), so the plain ISA of the issue assembles them (the
  objects are byte-for-byte the same size with ``rv32imc_zicsr_zifencei``); a source that starts
  to read a CSR fails here loudly.
* ``--specs=picolibc.specs``: Debian's ``gcc-riscv64-unknown-elf`` ships no C library headers;
  picolibc (``picolibc-riscv64-unknown-elf``) provides the ``stdint.h``, ``stdio.h`` and
  ``stdlib.h`` that Gap.h and the basic kernels include.
* ``-D__EMUL__`` is defined, as the GVSoC back-end (the GAP-like target build that exists)
  defines it for every unit. In the SDK, ``__EMUL__`` selects its portable C emulation of the
  GAP builtins instead of the chip's ``__builtin_pulp_*`` ones; Debian's gcc has no PULP
  extensions, so that portable path is the only one a build with this compiler can take. Gap.h
  does not test the flag (its builtins are always the portable static inline functions; it only
  documents that the SDK's float headers expect it), and neither do the CNN basic kernels nor the
  examples' basic kernels: the objects are the same with or without it (``--no-emul`` compiles
  without it for the comparison). The script lists in the JSON (``emul_sensitive``) and prints
  any compiled source or header that starts to mention ``__EMUL__``, as the choice would then
  matter.
* The Gap.h translation unit adds ``-fkeep-inline-functions``: every static inline builtin is
  then compiled to code, not only parsed, so that the warnings gcc gives on generated code only
  (``-Wmaybe-uninitialized``, out-of-range shifts after constant propagation, ...) are checked
  too. Its .text row is the size of all the builtins, which a kernel only pays for those it
  inlines.
* Generated code that uses L3 devices (the ``AT_<DEV>RAM_*`` and ``AT_<DEV>FLASH_*`` macros:
  matadd_l3, graph_net, mnist, mobilenet) compiles against the target's at_api.h like the rest:
  it provides every device macro family of the host's (an emulation in L2, see docs/gvsoc.md).
  The table's ``runtime`` column says which at_api.h each example's generated code saw;
  ``--runtime host`` compiles every unit against the host harness's at_api.h instead.

Run::

    python bench/rv32.py                         # all examples (make rv32)
    python bench/rv32.py --examples fir,matmult  # a subset (the CNN kernels and Gap.h always)
    AUTOTILER_RV32_CC=/path/to/gcc python bench/rv32.py   # another compiler (or --cc)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from run import git_state  # noqa: E402  (bench/run.py: the commit and whether the tree is dirty)

from host_harness.gvsoc import CORES, RUNTIME_DIR, TARGET_DIR  # noqa: E402
from host_harness.gvsoc import stage_headers as stage_target_headers  # noqa: E402

EXAMPLES = ROOT / "examples"
CNN_KERNELS_DIR = ROOT / "autotiler" / "generators" / "cnn_kernels"
RESULTS = ROOT / "bench" / "results" / "rv32.json"
DEFAULT_CC = "riscv64-unknown-elf-gcc"
CC_ENV = "AUTOTILER_RV32_CC"
INSTALL_HINT = "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf"
# -march=rv32imc: see the module comment (zicsr_zifencei is for pulp.h's CSR accesses only).
ARCH_FLAGS = ("-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs")
C_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-O2")
DIAG_FLAGS = ("-fdiagnostics-color=never",)
GAP_TU = '#include "Gap.h"\n#include "Gap8.h"\n'
GAP_TU_FLAGS = ("-fkeep-inline-functions",)
# A preprocessor line using __EMUL__ (#ifdef, #if defined(...), #elif, #ifndef, #define).
EMUL_TEST = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|define|undef)\b[^\n]*\b__EMUL__\b", re.M)
FIRST_LINES = 12      # compiler lines printed per failing unit
GENERATE_TIMEOUT = 300


class ToolchainMissing(Exception):
    """The cross compiler, its size tool or picolibc is not installed (exit status 2)."""


@dataclass
class Unit:
    """One translation unit: compiled once per (source, runtime) and shared by its users."""

    source: Path
    runtime: str                   # "target" or "host": which at_api.h it sees
    includes: tuple[Path, ...]     # before the runtime's include directory
    extra: tuple[str, ...] = ()
    obj: Path | None = None
    ok: bool = False
    output: str = ""
    sizes: dict = field(default_factory=dict)


@dataclass
class Example:
    name: str
    gen_dir: Path
    runtime: str = "target"
    generated: list[Unit] = field(default_factory=list)
    basic: list[Unit] = field(default_factory=list)
    error: str = ""


def default_cc() -> str:
    return os.environ.get(CC_ENV) or DEFAULT_CC


def size_tool_for(cc: str) -> str:
    """riscv64-unknown-elf-size beside riscv64-unknown-elf-gcc (same prefix and directory)."""
    path = Path(cc)
    if path.name.endswith("gcc"):
        return str(path.with_name(path.name[:-3] + "size"))
    return "riscv64-unknown-elf-size"


def _which(tool: str) -> str | None:
    return shutil.which(tool) if os.sep not in tool else (tool if os.access(tool, os.X_OK) else None)


def check_toolchain(cc: str, size: str, work: Path, defines: tuple[str, ...]) -> None:
    """The compiler and its size tool exist, and picolibc's headers are found with our flags."""
    for tool, what in ((cc, "the RISC-V cross compiler"), (size, "the RISC-V size tool")):
        if _which(tool) is None:
            raise ToolchainMissing(f"{what} '{tool}' is not installed (or not on PATH)")
    probe = work / "probe.c"
    probe.write_text("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\nint32_t at_probe;\n")
    proc = _run([cc, *ARCH_FLAGS, *C_FLAGS, *defines, "-c", str(probe), "-o", str(work / "probe.o")])
    if proc.returncode != 0:
        out = proc.stderr + proc.stdout
        if "picolibc" in out or "No such file" in out:
            raise ToolchainMissing(f"{cc} cannot compile with picolibc: {_first_lines(out, 3)}")
        raise RuntimeError(f"{cc} cannot compile an empty C99 unit for rv32imc:\n{_first_lines(out)}")


def _run(cmd: list[str], timeout: float | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    # LC_ALL=C: plain ASCII diagnostics whatever the user's locale
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**(env or os.environ), "LC_ALL": "C"})


def _first_lines(text: str, count: int = FIRST_LINES) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:count]) or "(no output)"


def stage_headers(work: Path) -> dict[str, Path]:
    """The include directory of each runtime: ``target`` as GvsocProgram._stage makes it (the
    harness's shared headers beside the target's at_api.h), ``host`` the harness's own."""
    return {"target": stage_target_headers(work / "include"), "host": RUNTIME_DIR}


def _load_reference(name: str):
    spec = importlib.util.spec_from_file_location(f"rv32_reference_{name}", EXAMPLES / name / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate(example: Example) -> None:
    """``python examples/<name>/model.py -o DIR -q`` (what tests/conftest.py's run_model does)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, str(EXAMPLES / example.name / "model.py"), "-o", str(example.gen_dir), "-q"]
    try:
        proc = _run(cmd, timeout=GENERATE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        example.error = f"generation took more than {GENERATE_TIMEOUT} s"
        return
    if proc.returncode != 0:
        example.error = "generation failed:\n" + "\n".join((proc.stderr or proc.stdout).splitlines()[-FIRST_LINES:])


def _compile(unit: Unit, cc: str, defines: tuple[str, ...], inc: dict[str, Path]) -> None:
    includes = [f"-I{d}" for d in (*unit.includes, inc[unit.runtime])]
    cmd = [cc, *ARCH_FLAGS, *C_FLAGS, *DIAG_FLAGS, *defines, *unit.extra, *includes,
           "-c", str(unit.source), "-o", str(unit.obj)]
    proc = _run(cmd)
    unit.output = (proc.stderr + proc.stdout).strip()
    unit.ok = proc.returncode == 0 and not unit.output
    if not unit.ok and not unit.output:
        unit.output = f"{cc} exited with status {proc.returncode}"


def section_sizes(size: str, obj: Path) -> dict:
    """.text, .rodata, .data (+ .sdata) and .bss (+ .sbss) bytes of one object (``size -A``)."""
    proc = _run([size, "-A", str(obj)])
    if proc.returncode != 0:
        raise RuntimeError(f"{size} -A {obj} failed: {_first_lines(proc.stderr)}")
    out = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    groups = {"text": (".text",), "rodata": (".rodata", ".srodata"), "data": (".data", ".sdata"),
              "bss": (".bss", ".sbss")}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        name = parts[0]
        for key, prefixes in groups.items():
            if any(name == p or name.startswith(p + ".") for p in prefixes):
                out[key] += int(parts[1])
    return out


def _total(units: list[Unit], key: str = "text") -> int:
    return sum(u.sizes.get(key, 0) for u in units)


def emul_sensitive(paths) -> list[str]:
    """The compiled sources and headers whose preprocessor lines test __EMUL__ (none today: see
    the module comment; Gap.h only names it in a comment)."""
    found = []
    for p in sorted({Path(p).resolve() for p in paths}):
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        if EMUL_TEST.search(text):
            found.append(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else p.name)
    return found


def run(names: list[str], cc: str, size: str, runtime: str, emul: bool, jobs: int, keep: Path | None) -> tuple[int, dict]:
    """Generate, compile and measure; (exit status, results)."""
    work = Path(tempfile.mkdtemp(prefix="autotiler-rv32-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run_in(work, names, cc, size, runtime, emul, jobs)
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def _run_in(work: Path, names: list[str], cc: str, size: str, runtime: str, emul: bool, jobs: int) -> tuple[int, dict]:
    defines = (f"-DAT_SIM_NCORES={CORES}",) + (("-D__EMUL__",) if emul else ())
    check_toolchain(cc, size, work, defines)
    inc = stage_headers(work)
    base = "host" if runtime == "host" else "target"
    t0 = time.perf_counter()

    examples = [Example(n, work / "gen" / n) for n in names]
    for ex in examples:
        ex.gen_dir.mkdir(parents=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(generate, examples))
    t_gen = time.perf_counter() - t0

    units: dict[tuple, Unit] = {}

    def unit(source: Path, rt: str, includes, extra=()) -> Unit:
        key = (source.resolve(), rt, tuple(extra))
        if key not in units:
            obj = work / "obj" / f"{len(units):03d}_{source.stem}.o"
            units[key] = Unit(source.resolve(), rt, tuple(Path(d).resolve() for d in includes), tuple(extra), obj)
        return units[key]

    gap_tu = work / "gap_h.c"
    gap_tu.write_text(GAP_TU)
    gap_unit = unit(gap_tu, base, (), GAP_TU_FLAGS)
    library = [unit(src, base, (CNN_KERNELS_DIR,)) for src in sorted(CNN_KERNELS_DIR.glob("*.c"))]
    # A basic kernel is compiled once per runtime: its includes add only the example's own
    # directories, which do not change what a source of the library or of another example reads.
    for ex in examples:
        if ex.error:
            continue
        ref = _load_reference(ex.name)
        includes = (ex.gen_dir, EXAMPLES / ex.name, *map(Path, getattr(ref, "INCLUDE_DIRS", ())))
        gen_sources = sorted(ex.gen_dir.glob("*.c"))
        ex.runtime = runtime
        ex.generated = [unit(src, ex.runtime, includes) for src in gen_sources]
        ex.basic = [unit((EXAMPLES / ex.name / s), base, includes) for s in ref.SOURCES]

    (work / "obj").mkdir()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda u: _compile(u, cc, defines, inc), units.values()))
    for u in units.values():
        if u.ok:
            u.sizes = section_sizes(size, u.obj)
    t_total = time.perf_counter() - t0

    failed = [u for u in units.values() if not u.ok]
    bad_examples = [ex for ex in examples if ex.error]
    headers = [TARGET_DIR / "at_api.h", *RUNTIME_DIR.glob("*.h"), *CNN_KERNELS_DIR.glob("*.h")]
    for ex in examples:
        headers += [*ex.gen_dir.glob("*.h"), *(EXAMPLES / ex.name).glob("*.h")]
    sensitive = emul_sensitive([u.source for u in units.values()] + headers)

    def rel(p: Path) -> str:
        for base_dir, label in ((ROOT, ""), (work / "gen", "<generated>/")):
            if p.is_relative_to(base_dir):
                return label + str(p.relative_to(base_dir))
        return "<gap_h.c>" if p == gap_tu.resolve() else str(p)

    def objects(us: list[Unit]) -> list[dict]:
        return [{"source": rel(u.source), "runtime": u.runtime, **u.sizes} for u in us]

    results = {
        **git_state(),
        "compiler": _run([cc, "--version"]).stdout.splitlines()[0],
        "command": " ".join([Path(cc).name, *ARCH_FLAGS, *C_FLAGS, *defines]),
        "runtime": runtime,
        "generation_seconds": round(t_gen, 2),
        "total_seconds": round(t_total, 2),
        "emul_sensitive": sensitive,
        "gap_h": {"flags": list(GAP_TU_FLAGS), **gap_unit.sizes},
        "cnn_kernels": {"text": _total(library), "objects": objects(library)},
        "examples": [{"name": ex.name, "runtime": ex.runtime, "generated_text": _total(ex.generated),
                      "basic_kernels_text": _total(ex.basic), "generated": objects(ex.generated),
                      "basic_kernels": objects(ex.basic), **({"error": ex.error} if ex.error else {})}
                     for ex in examples],
        "ok": not failed and not bad_examples,
    }
    print_table(results)
    if sensitive:
        print(f"note: these compiled files mention __EMUL__, the -D__EMUL__ choice matters: {', '.join(sensitive)}")
    for ex in bad_examples:
        print(f"\nFAILED {ex.name}: {ex.error}", file=sys.stderr)
    for u in failed:
        print(f"\nFAILED {rel(u.source)} (runtime {u.runtime}):\n{_first_lines(u.output)}", file=sys.stderr)
    return (0 if results["ok"] else 1), results


def print_table(results: dict) -> None:
    rows = [(e["name"], e["runtime"], str(e["generated_text"]), str(e["basic_kernels_text"]),
             str(e["generated_text"] + e["basic_kernels_text"])) for e in results["examples"]]
    head = ("example", "runtime", "generated .text", "basic kernels .text", "total .text")
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    print(results["command"])
    print("  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths))))
    for r in rows:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    print(f"CNN basic kernels (autotiler/generators/cnn_kernels/*.c): .text {results['cnn_kernels']['text']} B")
    print(f"Gap.h + Gap8.h, every builtin kept (-fkeep-inline-functions): .text {results['gap_h'].get('text', 0)} B")
    print(f"(bytes; generation {results['generation_seconds']} s, total {results['total_seconds']} s)")


def example_names(arg: str | None) -> list[str]:
    every = sorted(p.parent.name for p in EXAMPLES.glob("*/model.py"))
    if not arg:
        return every
    names = [n.strip() for n in arg.split(",") if n.strip()]
    unknown = [n for n in names if n not in every]
    if unknown:
        raise SystemExit(f"unknown example(s) {', '.join(unknown)}; examples are {', '.join(every)}")
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--examples", help="comma-separated example names (default: every examples/*/model.py)")
    p.add_argument("--cc", default=None, help=f"the cross compiler (default: ${CC_ENV} or {DEFAULT_CC})")
    p.add_argument("--size", default=None, help="the size tool (default: beside the compiler)")
    p.add_argument("--runtime", choices=("target", "host"), default="target",
                   help="target: the target's at_api.h; host: the host harness's at_api.h for every unit")
    p.add_argument("--no-emul", action="store_true", help="compile without -D__EMUL__ (see the module comment)")
    p.add_argument("--json", type=Path, default=RESULTS, help=f"results file (default {RESULTS.relative_to(ROOT)})")
    p.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it (generated code, objects)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = p.parse_args(argv)
    cc = args.cc or default_cc()
    size = args.size or size_tool_for(cc)
    names = example_names(args.examples)
    try:
        status, results = run(names, cc, size, args.runtime, not args.no_emul, max(1, args.jobs), args.keep)
    except ToolchainMissing as exc:
        print(f"rv32: {exc}\ninstall it with: {INSTALL_HINT}", file=sys.stderr)
        return 2
    if status == 0:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        print(f"results: {args.json}")
    return status


if __name__ == "__main__":
    sys.exit(main())
