"""`make demo`: generate, build and run the guide's MatrixAdd on the simulated GAP8, as a user would.

For each of two model scripts, ``examples/matrix_add`` (the guide's 200x300 matrices, in L2) and
``examples/matadd_l3`` (2 MiB matrices homed in HyperRAM, staged through L2 by the micro-DMA):

1. runs the model script ``examples/<name>/model.py -o generated/<name>`` (the tiler prints its
   choice);
2. compiles the generated C with the hand-written basic kernels against the simulated chip;
3. runs the kernel on random matrices, checks the result bit-exactly against numpy, and prints
   the tiling and the counters of the call (bytes moved per level, transfers, peaks, cycles).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import host_harness  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402

COUNTERS = ("l3_to_l2", "l2_to_l1", "l1_to_l2", "l2_to_l3", "transfers", "peak_l1", "peak_l2", "peak_l3",
            "cycles", "compute_cycles", "stall_cycles", "fork_cycles")


def generate(name: str) -> dict:
    out = ROOT / "generated" / name
    print(f"$ python examples/{name}/model.py -o {out.relative_to(ROOT)}")
    start = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "examples" / name / "model.py"), "-o", str(out)], check=True)
    print(f"  (generation took {1000 * (time.perf_counter() - start):.0f} ms including Python start-up)\n")
    return json.loads(next(out.glob("*.json")).read_text())


def run(name: str, manifest: dict, platform, note: str) -> None:
    example = ROOT / "examples" / name
    reference = _reference(example)
    program = host_harness.build(ROOT / "generated" / name, sources=[example / s for s in reference.SOURCES],
                                 include_dirs=[example], platform=platform)
    args = reference.make_args(np.random.default_rng(2026))
    counters = program.call(reference.KERNEL, **args)
    ok = all(np.array_equal(args[k], v) for k, v in reference.expected(args).items())
    tiling = manifest["tilings"][reference.KERNEL]
    print(f"{reference.KERNEL} on simulated gap8 (8 cores, L1 {platform.l1_size} B, {note}):")
    print(f"  result vs numpy        : {'bit-exact' if ok else 'MISMATCH'}")
    staging = f", L2 staging {tiling['l2_bytes']} B" if tiling.get("l2_bytes") else ""
    print(f"  tiling                 : {tiling['ntiles']} tiles, L1 {tiling['l1_bytes']} of {tiling['budget']} B"
          f"{staging}, objective '{tiling['objective']}'")
    for key in COUNTERS:
        print(f"  {key:<23}: {counters[key]}")
    print(f"  dma_busy_cycles        : {counters['dma_busy_cycles']}\n")
    if not ok:
        raise SystemExit(f"demo failed: the generated {reference.KERNEL} does not match numpy")


def _reference(example: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"reference_{example.name}", example / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    # The guide's MatAdd (3 x 200x300 int) needs 720 KB of L2; GAP8 has 512 KB: raise it.
    run("matrix_add", generate("matrix_add"), get_platform("gap8", l2_size=1024 * 1024), "L2 raised to 1 MiB")
    # 3 x 2 MiB in HyperRAM: only the staging slots live in L2, so the real 512 KiB suffice.
    run("matadd_l3", generate("matadd_l3"), get_platform("gap8"), "real 512 KiB L2, 8 MiB HyperRAM")
