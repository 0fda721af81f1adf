"""Names the generated C cannot give to a user's kernel, argument, type or symbol.

Generated files include the runtime headers (``KernelLibStdTypes.h``, ``Gap.h``, ``Gap8.h``,
``at_api.h``) and, through them, ``<stdio.h>`` and ``<stdlib.h>``. A user kernel named
``printf`` or ``AT_FORK``, an argument struct type named ``Word32`` or a C argument named
``AT_L2_EVENT`` breaks the generated C in gcc, far from the model line. The names are data,
``reserved_names.txt`` (one ``name kind origin`` per line), extracted from those headers with
gcc by :func:`extract`; ``tests/test_reserved_names.py`` re-extracts it and fails when it is
stale (``python -m autotiler.model.reserved RUNTIME_DIR > autotiler/model/reserved_names.txt``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Optional

DATA = Path(__file__).with_name("reserved_names.txt")
# What generated C includes, in the flags it is compiled with (host_harness/builder.py GEN_FLAGS).
PROBE = '#include "KernelLibStdTypes.h"\n#include "Gap8.h"\n#include "at_api.h"\n'
CFLAGS = ("-std=c99", "-D__EMUL__", "-DAT_SIM_NCORES=8")
# ISO C functions gcc declares itself (its "other builtins"): a clashing declaration is an error
# under -Werror even without the header (-Wbuiltin-declaration-mismatch). And main.
GCC_BUILTINS = """abort abs acos acosf acosh asin asinf asinh atan atan2 atan2f atanf atanh calloc cbrt ceil ceilf
copysign cos cosf cosh erf erfc exit exp exp2 expf expm1 fabs fabsf fdim floor floorf fma fmax fmin fmod fmodf fprintf
fputc fputs free frexp fscanf fwrite hypot ilogb isalnum isalpha isblank iscntrl isdigit isgraph islower isprint
ispunct isspace isupper isxdigit labs ldexp lgamma llabs llrint llround log log10 log10f log1p log2 logb logf lrint
lround main malloc memchr memcmp memcpy memmove memset modf nearbyint nextafter nexttoward pow powf printf putchar
puts realloc remainder remquo rint round roundf scalbln scalbn scanf sin sinf sinh snprintf sprintf sqrt sqrtf sscanf
strcat strchr strcmp strcpy strcspn strlen strncat strncmp strncpy strpbrk strrchr strspn strstr tan tanf tanh tgamma
tolower toupper trunc vfprintf vprintf vsnprintf vsprintf""".split()
KINDS = {"macro": "a macro", "typedef": "a type", "function": "a function", "variable": "a variable"}


def _c_reserved(name: str) -> bool:
    """C99 7.1.3: identifiers starting with '__' or '_' + capital are the implementation's."""
    return name.startswith("__") or (len(name) > 1 and name[0] == "_" and name[1].isupper())


@cache
def table() -> dict:
    """{name: (kind, origin)}; origin is 'runtime' (autotiler's headers) or 'libc'."""
    out = {}
    for line in DATA.read_text().splitlines():
        if line and not line.startswith("#"):
            name, kind, origin = line.split()
            out[name] = (kind, origin)
    return out


def reserved(name: str, parameter: bool = False) -> Optional[str]:
    """What ``name`` already is in the headers generated C includes, or None. A ``parameter``
    (a C argument of a generated function) only clashes with macros, types and the runtime's
    own functions (which the runtime macros expand to); it may reuse a C library function's name."""
    if _c_reserved(name):
        return "reserved by the C standard (names starting with '__' or '_' and a capital)"
    kind, origin = table().get(name, (None, None))
    if kind is None or (parameter and kind in ("function", "variable") and origin == "libc"):
        return None
    where = "the runtime headers (Gap.h, at_api.h)" if origin == "runtime" else "the C library (stdio.h, stdlib.h, gcc builtins)"
    return f"{KINDS[kind]} of {where} that generated code includes"


# ---------------------------------------------------------------------------------------------
# Extraction (development tool; needs gcc)
# ---------------------------------------------------------------------------------------------

def _gcc(runtime_dir: Path, *args: str) -> str:
    return subprocess.run(["gcc", *CFLAGS, f"-I{runtime_dir}", *args, "-x", "c", "-"], input=PROBE,
                          capture_output=True, text=True, check=True).stdout


def _origin(path: str, runtime_dir: Path) -> str:
    return "runtime" if Path(path).resolve().parent == runtime_dir.resolve() else "libc"


def _macros(runtime_dir: Path) -> dict:
    """Macros, with their origin (``-dD`` keeps the line markers of each definition)."""
    out, origin = {}, "libc"
    for line in _gcc(runtime_dir, "-E", "-dD").splitlines():
        marker = re.match(r'# \d+ "([^"]+)"', line)
        if marker:
            origin = _origin(marker.group(1), runtime_dir)
        m = re.match(r"#define (\w+)", line)
        if m:
            out[m.group(1)] = ("macro", origin)
    return out


def _statements(runtime_dir: Path):
    """(origin, file-scope statement) of the preprocessed headers, brace bodies dropped."""
    origin, depth, text = "libc", 0, []
    for line in _gcc(runtime_dir, "-E").splitlines():
        marker = re.match(r'# \d+ "([^"]+)"', line)
        if marker:
            origin = _origin(marker.group(1), runtime_dir)
            continue
        if line.startswith("#"):  # a #pragma the preprocessor keeps (Gap.h's GCC optimize): no declaration
            continue
        for ch in line + " ":
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    text.append(" ")  # a function body ends its statement
                    if not "".join(text).lstrip().startswith(("typedef", "struct", "union", "enum")):
                        yield origin, "".join(text)
                        text = []
            elif depth == 0:
                if ch == ";":
                    yield origin, "".join(text)
                    text = []
                else:
                    text.append(ch)


_ATTR = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|__asm__\s*\([^)]*\)")


def _declared(statement: str) -> tuple:
    """(kind, name) declared by one file-scope statement, or (None, None)."""
    s = _ATTR.sub(" ", statement).strip()
    if not s:
        return None, None
    if s.startswith("typedef"):
        names = re.findall(r"\(\s*\*\s*(\w+)\s*\)", s) or re.findall(r"(\w+)\s*(?:\[[^\]]*\]\s*)*$", s)
        return ("typedef", names[0]) if names else (None, None)
    func = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", s)
    if func and not re.search(r"\(\s*\*", s):
        return "function", func.group(1)
    var = re.search(r"(\w+)\s*(?:\[[^\]]*\]\s*)*(?:=.*)?$", s)
    return ("variable", var.group(1)) if var and " " in s.split("=")[0].strip() else (None, None)


def extract(runtime_dir) -> dict:
    """{name: (kind, origin)} of every identifier the runtime headers and the C library headers
    they include define, except names the C standard reserves anyway."""
    runtime_dir = Path(runtime_dir)
    out = {name: ("function", "libc") for name in GCC_BUILTINS}
    for origin, statement in _statements(runtime_dir):
        kind, name = _declared(statement)
        if kind and not _c_reserved(name) and (name not in out or origin == "runtime"):
            out[name] = (kind, origin)
    for name, value in _macros(runtime_dir).items():
        if not _c_reserved(name):
            out[name] = value  # a macro wins: it also hides a declaration of the same name
    return out


def render(names: dict) -> str:
    lines = ["# name kind origin: generated by `python -m autotiler.model.reserved RUNTIME_DIR`; do not edit"]
    lines += [f"{n} {k} {o}" for n, (k, o) in sorted(names.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(extract(sys.argv[1])))
