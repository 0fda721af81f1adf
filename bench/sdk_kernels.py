"""The GAP SDK's own basic kernels against the harness headers (issue 22): every basic-kernel
source of a copy of the SDK's sources is compiled as ``host_harness.build`` compiles a user's
basic kernel, and the result is printed as a table (docs/harness.md, "The SDK's basic kernels").

Nothing is downloaded: the SDK's sources are the user's (a checkout of the GAP SDK, or copies of
its files; they never go into this repository). Give the directory as the argument (default
``/tmp/sdk``). Its layout is the SDK's, so a checkout's root works as it is:

* ``tools/autotiler_v3/``: the 2020-2024 libraries (``CNN_Libraries`` 16-bit fixed point,
  ``CNN_Libraries_SQ8``, ``CNN_Libraries_fp16``, ``DSP_Libraries``) and the generator examples'
  basic kernels (``Generators/<name>/*BasicKernels*.c``). Each file sees the libraries'
  directories, as NNTool's and the examples' makefiles pass them (``-I$(TILER_CNN_KERNEL_PATH)``
  ...), after the harness's runtime directory.
* anything else (the 2019 v2 kernels, e.g. the GreenWaves autotiler repository's
  ``generators/<name>/kernels/{src,include}`` or the 2019 SDK's examples): the file's own
  directory, a sibling ``include/`` and the tree's top ``include/``.

Which files: every ``.c`` in a ``*_Libraries*`` directory (tables and helpers included: the
makefiles compile them with the kernels), every ``*BasicKernels*.c`` / ``*Kernels*.c`` elsewhere
and every ``.c`` under a ``kernels`` directory; generators, their tests and models are not basic
kernels and are skipped.

How: the compiler command of ``host_harness.build`` for user sources (``USER_FLAGS``,
``-D__EMUL__``, ``-DAT_SIM_NCORES=N``, ``-I`` the runtime directory first), ``-c`` only, plus
``-Werror=implicit-function-declaration`` (gcc 12 only warns on a call to a function no header
declares; the harness's library would then not load). The SDK headers that the harness replaces (its emulation's ``Gap.h``, ``GapBuiltins.h``,
``at_api*.h``, ``pmsis.h``, ``rt/rt_api.h``...) are hidden: the sources are seen through a
mirror of symbolic links without them (a quoted ``#include`` looks in the including file's
directory first, where ``-I`` order cannot override it). A file that fails is compiled again
with ``-DSTD_FLOAT`` when it is of the fp16 family (NNTool's fp16 builds define it: binary16
``F16``). ``-fsanitize=thread`` is not passed (it instruments, it does not change what
compiles).

Output: one row per file, ``ok``, ``ok with -DSTD_FLOAT`` or ``FAIL`` with the error count and
the first error; warnings are counted (the SDK's own: unused variables...). A copy whose first
lines say ``EXCERPT``, ``STUB`` or ``PARTIAL`` is marked ``*`` (not the whole file). ``--json PATH``
writes the rows. Exit status: 0 when every file compiles (with its family's flag), 1 when one
does not, 2 when the directory holds no basic-kernel source.

Not part of ``make test`` (it needs the SDK's sources, which the repository does not hold). Run::

    python bench/sdk_kernels.py                  # /tmp/sdk
    python bench/sdk_kernels.py ~/gap_sdk -v     # a checkout; -v prints each failure's errors
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from host_harness.builder import RUNTIME_DIR, USER_FLAGS  # noqa: E402

DEFAULT_DIR = Path("/tmp/sdk")
CC = os.environ.get("CC", "gcc")
DIAG_FLAGS = ("-fdiagnostics-color=never", "-fno-diagnostics-show-caret")
# gcc 12 only warns on a call to an undeclared function in C99; in the harness that is a name no
# header provides and the library would not load (undefined symbol), so here it is an error.
SWEEP_FLAGS = ("-Werror=implicit-function-declaration",)
# Headers of the SDK's emulation and runtime that host_harness/runtime replaces: never taken
# from the SDK's tree (paths relative to an include directory).
REPLACED = ("Gap.h", "Gap8.h", "GapBuiltins.h", "GapSystem.h", "at_api.h", "at_api_emul.h",
            "at_api_pmsis.h", "KernelLibStdTypes.h", "pmsis.h", "rt/rt_api.h")
# The autotiler_v3 library directories a basic kernel sees (NNTool's and the examples' -I).
V3_LIBRARIES = ("CNN_Libraries", "CNN_Libraries_SQ8", "CNN_Libraries_fp16", "CNN_Libraries_NE16",
                "DSP_Libraries", "DSP_Libraries/LUT_Tables")
# Sources that are not basic kernels: generators, their test programs and host-side models.
NOT_KERNELS = re.compile(r"(Generator|GenTest|RunTest|GenTwid|Model|Dump|Display|ReadInput|BuildLUT"
                         r"|BuildFilterBank|^Test|^Gen)", re.I)
FP16 = re.compile(r"fp16|f16", re.I)
ERROR = re.compile(r"^(?P<where>[^:\n]+:\d+:\d+): (?:fatal )?error: (?P<msg>.*)$", re.M)
WARNING = re.compile(r"^[^:\n]+:\d+:\d+: warning: .*$", re.M)
# A copy that is not the whole SDK file says so in its first lines (the table marks its row).
EXCERPT = re.compile(r"\b(EXCERPT|STUB|PARTIAL)\b")
EXCERPT_SPAN = 400


@dataclass
class Row:
    path: str                      # relative to the SDK directory
    family: str
    result: str = ""               # "ok", "ok with -DSTD_FLOAT", "FAIL"
    errors: int = 0
    warnings: int = 0
    first_error: str = ""
    flags: list[str] = field(default_factory=list)
    excerpt: bool = False          # the copy says it is not the whole SDK file
    output: str = ""


def is_basic_kernel(rel: Path) -> bool:
    parts = rel.parts
    if any("_Libraries" in p for p in parts[:-1]):
        return not NOT_KERNELS.search(rel.stem) or "LUT_Tables" in parts
    if NOT_KERNELS.search(rel.stem):
        return False
    return "Kernels" in rel.stem or "kernels" in parts[:-1]


def family_of(rel: Path) -> str:
    parts = rel.parts
    for i, p in enumerate(parts):
        if p == "autotiler_v3" and i + 1 < len(parts) - 1:
            return "v3/" + "/".join(parts[i + 1:-1])
    return "/".join(parts[:-1]) or "."


def include_dirs(mirror: Path, rel: Path) -> list[Path]:
    """Where the file's #include "..." lines are looked for, after the runtime directory."""
    src_dir = mirror / rel.parent
    dirs = [src_dir]
    parts = rel.parts
    if "autotiler_v3" in parts:
        v3 = mirror.joinpath(*parts[:parts.index("autotiler_v3") + 1])
        dirs += [v3 / lib for lib in V3_LIBRARIES if (v3 / lib).is_dir()]
    else:
        dirs += [d for d in (src_dir.parent / "include", mirror / rel.parts[0] / "include", mirror / "include")
                 if d.is_dir()]
    seen, out = set(), []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def make_mirror(sdk: Path, into: Path) -> None:
    """Symbolic links to every file of ``sdk`` but the headers the runtime replaces."""
    for src in sdk.rglob("*"):
        if not src.is_file():
            continue
        rel = src.relative_to(sdk)
        if any(rel.as_posix() == r or rel.as_posix().endswith("/" + r) for r in REPLACED):
            continue
        dst = into / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.symlink_to(src.resolve())


def compile_one(mirror: Path, rel: Path, ncores: int, extra: tuple[str, ...]) -> tuple[int, str]:
    includes = [f"-I{RUNTIME_DIR}"] + [f"-I{d}" for d in include_dirs(mirror, rel)]
    cmd = [CC, *USER_FLAGS, "-D__EMUL__", f"-DAT_SIM_NCORES={ncores}", *extra, *SWEEP_FLAGS, *DIAG_FLAGS,
           *includes, "-c", str(mirror / rel), "-o", os.devnull]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def check(mirror: Path, rel: Path, ncores: int) -> Row:
    row = Row(rel.as_posix(), family_of(rel))
    row.excerpt = bool(EXCERPT.search((mirror / rel).read_text(errors="replace")[:EXCERPT_SPAN]))
    variants: list[tuple[str, ...]] = [()]
    if FP16.search(rel.as_posix()):
        variants.append(("-DSTD_FLOAT",))
    for extra in variants:
        rc, out = compile_one(mirror, rel, ncores, extra)
        out = out.replace(str(mirror) + "/", "")
        row.flags, row.output = list(extra), out
        row.errors = len(ERROR.findall(out))
        row.warnings = len(WARNING.findall(out))
        first = ERROR.search(out)
        row.first_error = f"{first['where']}: {first['msg']}" if first else (out.strip().splitlines() or [""])[-1]
        if rc == 0:
            row.result = "ok" + (" with " + " ".join(extra) if extra else "")
            row.first_error = ""
            return row
    row.result = "FAIL"
    return row


def sources(sdk: Path) -> list[Path]:
    return sorted(p.relative_to(sdk) for p in sdk.rglob("*.c") if is_basic_kernel(p.relative_to(sdk)))


def short(path: str) -> str:
    return re.sub(r"^(.*/)?tools/autotiler_v3/", "v3/", path)


def table(rows: list[Row]) -> str:
    width = max([len(short(r.path)) for r in rows] + [4]) + 2
    lines = [f"{'file':{width}} {'result':22} {'err':>4} {'warn':>4}  first error"]
    for r in rows:
        name = short(r.path) + (" *" if r.excerpt else "")
        lines.append(f"{name:{width}} {r.result:22} {r.errors:4d} {r.warnings:4d}  {r.first_error}")
    ok = sum(r.result != "FAIL" for r in rows)
    lines.append(f"{ok} of {len(rows)} basic-kernel files compile unchanged")
    if any(r.excerpt for r in rows):
        lines.append("* an excerpt of the SDK's file (its first lines say so), not the whole file")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sdk", nargs="?", type=Path, default=DEFAULT_DIR,
                    help="directory of SDK sources, laid out as the SDK (default /tmp/sdk)")
    ap.add_argument("--ncores", type=int, default=8, help="AT_SIM_NCORES (default 8, GAP8/GAP9)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failure's compiler output")
    args = ap.parse_args(argv)
    sdk = args.sdk.resolve()
    if not sdk.is_dir():
        print(f"sdk_kernels: {sdk}: no such directory (copy the SDK's basic-kernel sources there, "
              "laid out as in the SDK)", file=sys.stderr)
        return 2
    rels = sources(sdk)
    if not rels:
        print(f"sdk_kernels: {sdk}: no basic-kernel source found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sdk-kernels-") as tmp:
        mirror = Path(tmp)
        make_mirror(sdk, mirror)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            rows = list(pool.map(lambda r: check(mirror, r, args.ncores), rels))
    print(table(rows))
    if args.verbose:
        for r in rows:
            if r.result == "FAIL":
                print(f"\n== {r.path} {' '.join(r.flags)}\n{r.output.rstrip()}")
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in asdict(r).items() if k != "output"} for r in rows],
                                        indent=1) + "\n")
    return 0 if all(r.result != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
