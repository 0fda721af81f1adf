"""The host compiler: running gcc with one-line diagnostics, its version, its sanitizer runtimes
(shared by the builder and by the runner's sanitized child processes)."""

from __future__ import annotations

import os
import subprocess
from functools import cache

from autotiler.errors import HarnessError

CC = "gcc"


def first_error_lines(output: str, count: int = 6) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    errors = [i for i, ln in enumerate(lines) if "error" in ln.lower()]
    start = max(errors[0] - 1, 0) if errors else 0
    return " | ".join(lines[start:start + count]) or "(no output)"


def run(cmd: list[str], what: str) -> str:
    try:
        # LC_ALL=C: ASCII quotes in diagnostics, whatever the user's locale
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True,
                              env={**os.environ, "LC_ALL": "C"})
    except OSError as exc:
        raise HarnessError(f"cannot run {cmd[0]}: {exc}", hint="install gcc") from None
    if proc.returncode != 0:
        err = HarnessError(f"{what} failed: {first_error_lines(proc.stderr + proc.stdout)}")
        err.details = proc.stderr  # full compiler output, for debugging
        raise err
    return proc.stdout


@cache
def compiler_version() -> str:
    return run([CC, "--version"], f"{CC} --version").splitlines()[0] + " " + \
        run([CC, "-dumpmachine"], f"{CC} -dumpmachine").strip()


@cache
def sanitizer_libraries() -> tuple[str, ...]:
    """Absolute paths of gcc's libasan.so and libubsan.so; HarnessError if gcc has none."""
    paths = []
    for name in ("libasan.so", "libubsan.so"):
        path = run([CC, f"-print-file-name={name}"], f"{CC} -print-file-name").strip()
        if not os.path.isabs(path) or not os.path.exists(path):
            raise HarnessError(f"{CC} has no {name}", hint="install the gcc sanitizer runtimes "
                               "(libasan, libubsan) or build without sanitize=True")
        paths.append(path)
    return tuple(paths)


def have_sanitizers() -> bool:
    """Whether gcc has the sanitizer runtimes that ``build(..., sanitize=True)`` needs."""
    try:
        sanitizer_libraries()
    except HarnessError:
        return False
    return True
