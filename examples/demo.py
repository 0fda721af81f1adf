"""`make demo`: the AutoTiler guide's MNIST graph, generated, built and run on the simulated GAP8
as a user would, classifying held-out handwritten digits.

1. runs the model script (the guide's ``MnistModel``, examples/mnist/model.py) into
   ``generated/mnist``: four CNN layers from the generators, the graph's memory plan;
2. compiles the generated C with the CNN basic kernels against the simulated chip;
3. constructs the graph (constants copied from the flash image into L2) and classifies the
   held-out digits through the generated C, checking each output bit-exactly against the numpy
   fixed-point reference: the first 20 with the simulator's access checks on (a race between
   cores or a write outside memory would stop the run), then all of them in a build without;
4. prints the accuracy of the generated C next to the float model's and the reference's, the
   memory per level against the guide's own figures, per-node cycles and bytes moved per level,
   and where the L2 plan's picture was written;
5. then the front door (issue 24): ``autotiler import`` of a trained int8 TFLite model
   (examples/import_digits/digits.tflite, a small CNN trained with Keras on scikit-learn's digits)
   into ``generated/import_digits``, ``autotiler verify`` against TensorFlow Lite Micro, and every
   held-out digit classified through the generated C (examples/import_digits/evaluate.py), output
   for output equal to TFLite's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MNIST = ROOT / "examples" / "mnist"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(MNIST))

import data  # noqa: E402  (examples/mnist)
import float_model  # noqa: E402
import reference  # noqa: E402

import host_harness  # noqa: E402
from autotiler.generators import CNN_KERNELS_DIR, CNN_SOURCES  # noqa: E402
from autotiler.plot import plot_plan  # noqa: E402
from autotiler.reports import graph_reports  # noqa: E402

GEN = ROOT / "generated" / "mnist"
DIGITS = ROOT / "examples" / "import_digits"
IMPORTED = ROOT / "generated" / "import_digits"
GRAPH = "MnistCNN"
# The guide's figures for this graph ("Warm Constructor" section: MnistCNN_Construct)
GUIDE = {"L1": 41632, "L2": 124692, "L2_DYN": 11264}
LEVELS = ("l3_to_l2", "flash_to_l2", "l2_to_l1", "l1_to_l2", "l2_to_l3")
CHECKED = 20   # inferences run with the simulator's access checks (races, writes outside memory)


def generate() -> dict:
    print(f"$ python examples/mnist/model.py -o {GEN.relative_to(ROOT)}")
    start = time.perf_counter()
    subprocess.run([sys.executable, str(MNIST / "model.py"), "-o", str(GEN)], check=True)
    print(f"  (generation took {time.perf_counter() - start:.2f} s including Python start-up)\n")
    return json.loads((GEN / "MnistKernels.json").read_text())


def classify(graph, inputs: np.ndarray, weights: dict) -> tuple:
    """(predictions of the generated C, of the numpy reference, counters of the first run)."""
    ours, ref, first = [], [], None
    out = np.empty(reference.OUT_SHAPE, dtype=np.int16)
    for x in inputs:
        out.fill(-21846)   # a sentinel: a byte the graph does not write stays visible
        counters = graph.run(Input0=x, Output0=out)
        first = first or counters
        expected = reference.fixed_forward(x, weights)
        if not np.array_equal(out, expected):
            raise SystemExit(f"demo failed: the generated graph's output {out} differs from the reference {expected}")
        ours.append(int(np.argmax(out)))
        ref.append(int(np.argmax(expected)))
    return np.array(ours), np.array(ref), first


def build(fast: bool):
    """The generated graph with the CNN basic kernels. Checked (the default): every access of
    the basic kernels is checked by the simulator for races between cores and writes outside
    memory; fast: those checks off and -O2 (the simulated cycles are the same: they come from
    the basic kernels' Cost, not from the host)."""
    start = time.perf_counter()
    flags = ["-fno-sanitize=thread", "-O2"] if fast else []
    program = host_harness.build(GEN, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], cflags=flags)
    print(f"built {GEN.relative_to(ROOT)} with the CNN basic kernels, {'fast' if fast else 'checked'}, in "
          f"{time.perf_counter() - start:.1f} s (gcc, cached by content)")
    return program.graph(GRAPH)


def run_set(graph, inputs, weights) -> tuple:
    graph.construct()
    memory = {k: graph.memory(k) for k in ("L1", "L2", "L2_DYN", "L3")}
    memory["construct_flash"] = graph.counters["flash_to_l2"]
    start = time.perf_counter()
    ours, ref, counters = classify(graph, inputs, weights)
    elapsed = time.perf_counter() - start
    graph.destruct()
    return ours, ref, counters, memory, elapsed


def command(*args: str) -> None:
    """Run an ``autotiler`` command as a user would, showing it (paths relative to the repository)."""
    shown = [str(Path(a).relative_to(ROOT)) if a.startswith(str(ROOT)) else a for a in args]
    print("$ autotiler " + " ".join(shown), flush=True)
    subprocess.run([sys.executable, "-m", "autotiler", *args], check=True)


def import_digits() -> None:
    """Import, verify and evaluate examples/import_digits (a trained int8 TFLite model)."""
    print("\n--- the front door: a trained TFLite model imported ---\n")
    command("import", str(DIGITS / "digits.tflite"), "-o", str(IMPORTED))
    command("verify", str(IMPORTED), "--inputs", "4")
    print("$ python examples/import_digits/evaluate.py", flush=True)
    subprocess.run([sys.executable, str(DIGITS / "evaluate.py")], check=True)


def main() -> int:
    manifest = generate()
    inputs, labels = data.heldout_inputs()
    weights = reference.load_weights()
    checked = CHECKED
    _, _, _, _, t_checked = run_set(build(fast=False), inputs[:checked], weights)
    ours, ref, counters, memory, elapsed = run_set(build(fast=True), inputs, weights)
    images = inputs.astype(np.float64) / (1 << data.INPUT_Q)
    floats = np.argmax(float_model.float_forward(float_model.load_float_weights(), images), axis=1)

    n = len(labels)
    print(f"\nthe first {checked} held-out digits with every memory access checked: {t_checked:.1f} s "
          f"({1000 * t_checked / checked:.0f} ms per inference), no race, no write outside memory")
    print(f"classified all {n} held-out digits through the generated C on the simulated GAP8 in {elapsed:.1f} s "
          f"({1000 * elapsed / n:.0f} ms per inference); every output bit-exact with the numpy reference")
    print(f"  accuracy, generated C          : {np.mean(ours == labels):.2%}")
    print(f"  accuracy, numpy fixed point    : {np.mean(ref == labels):.2%}")
    print(f"  accuracy, float model          : {np.mean(floats == labels):.2%}")
    print("\nmemory per level (MnistCNN_Memory), against the guide's figures for this graph:")
    for key, what in (("L1", "L1"), ("L2", "L2 static (promoted constants)"), ("L2_DYN", "L2 dynamic (activations)")):
        note = {"L1": " (the original tiles conv 0 in 3 bands of input lines; ours in output-feature chunks)",
                "L2_DYN": " (the liveness lower bound)"}.get(key, "")
        print(f"  {what:<32}: {memory[key]:>7} B   guide {GUIDE[key]:>7} B{note}")
    print(f"  {'L3 RAM':<32}: {memory['L3']:>7} B")
    print(f"  {'flash -> L2 at construction':<32}: {memory['construct_flash']:>7} B (every constant promoted)")
    print("\nper node (first inference):")
    print(f"  {'node':<26}{'cycles':>10}" + "".join(f"{k:>13}" for k in LEVELS))
    for node in counters["nodes"]:
        print(f"  {node['name']:<26}{node['cycles']:>10}" + "".join(f"{node[k]:>13}" for k in LEVELS))
    print(f"  {'total':<26}{counters['cycles']:>10}" + "".join(f"{counters[k]:>13}" for k in LEVELS))
    report = graph_reports(manifest)[0]
    png = plot_plan(report, GEN / f"{GRAPH}_l2_plan.png")
    print(f"\nL2 plan over time: {Path(png).relative_to(ROOT)}")
    if np.mean(ours == labels) < 0.95:
        raise SystemExit("demo failed: accuracy below 95%")
    import_digits()
    return 0


if __name__ == "__main__":
    sys.exit(main())
