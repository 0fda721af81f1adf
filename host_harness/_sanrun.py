"""Child process of a sanitized call: ``python -m host_harness._sanrun WORKDIR``.

Started by :func:`host_harness.runner.run_sanitized` with the sanitizer runtimes preloaded. Reads
``request.json`` and ``in.npz`` from WORKDIR, runs the kernel exactly as an in-process call would
and writes ``out.npz`` plus ``result.json`` (``{"counters": ...}`` or ``{"error": message}``). A
sanitizer report ends the process with a non-zero status before ``result.json`` exists.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from autotiler.errors import HarnessError

from .manifest import KernelSpec
from .runner import open_library, run_kernel


def _load_values(work: Path, kernel: KernelSpec, scalars: dict) -> dict:
    values = dict(scalars)
    with np.load(work / "in.npz") as arrays:
        for i, arg in enumerate(kernel.args):
            if arg.pointer:
                values[arg.name] = np.array(arrays[f"a{i}"])  # a writable, C-contiguous copy
    return values


def main(argv: list[str]) -> int:
    work = Path(argv[1])
    request = json.loads((work / "request.json").read_text())
    kernel = KernelSpec.from_dict(request["kernel"])
    values = _load_values(work, kernel, request["scalars"])
    try:
        ffi, lib = open_library(request["library"], [kernel.name])
        counters = run_kernel(ffi, lib, request["config"], kernel, values)
    except HarnessError as exc:
        (work / "result.json").write_text(json.dumps({"error": str(exc)}))
        return 0
    np.savez(work / "out.npz", **{f"a{i}": values[a.name] for i, a in enumerate(kernel.args) if a.pointer})
    (work / "result.json").write_text(json.dumps({"counters": counters}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
