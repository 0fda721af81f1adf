"""Import digits.tflite, generate, build, and classify every held-out digit on the simulated chip;
compare with TensorFlow Lite's answers (test_digits.npz, written by train.py), output for output.

    python examples/import_digits/evaluate.py [--dir IMPORT_DIR] [--platform gap8|gap9|pulp_open]

Without ``--dir`` the import goes to a temporary directory. Prints the accuracy of the generated C,
TFLite's, and how many of the int8 score vectors are equal (all of them: bit-exact). Exit status
0 when every output equals TFLite's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    from autotiler.importers import verify as V
    from autotiler.importers.script import import_model
except ImportError:  # running from a source checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler.importers import verify as V
    from autotiler.importers.script import import_model

HERE = Path(__file__).resolve().parent


def evaluate(import_dir: Path, gen_dir: Path, platform: str) -> int:
    test = np.load(HERE / "test_digits.npz")
    summary = json.loads((HERE / "tflite_accuracy.json").read_text())
    t0 = time.perf_counter()
    import_model(str(HERE / "digits.tflite"), str(import_dir), platform=platform)
    d = V.read_import_dir(import_dir)
    V.generate(d, str(gen_dir))
    t1 = time.perf_counter()
    runs = [{d.inputs[0].name: x[None]} for x in test["x_int8"]]
    got, counters = V.run_generated(d, str(gen_dir), runs)
    t2 = time.perf_counter()
    scores = np.stack([g[d.outputs[0].name].reshape(-1) for g in got])
    pred = np.argmax(scores, axis=1)
    same = int(np.sum((scores == test["tflite_scores"]).all(axis=1)))
    correct = int(np.sum(pred == test["y"]))
    n = len(pred)
    print(f"import_digits: digits.tflite imported and generated for {platform} in {t1 - t0:.2f} s, {n} held-out "
          f"digits run on the simulated chip in {t2 - t1:.2f} s ({counters['cycles']} cycles per inference)")
    print(f"  generated C: {correct}/{n} right ({correct / n:.2%}); TFLite: {summary['tflite_int8_correct']}/{n} "
          f"({summary['tflite_int8_accuracy']:.2%}); Keras float: {summary['keras_float_accuracy']:.2%}")
    print(f"  int8 outputs equal to TFLite's: {same}/{n}" + (" (bit-exact)" if same == n else " (MISMATCH)"))
    return 0 if same == n else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", type=Path, help="import into this directory (default: a temporary one)")
    p.add_argument("--platform", default="gap8")
    ns = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="import_digits-") as tmp:
        return evaluate(ns.dir or Path(tmp) / "digits", Path(tmp) / "gen", ns.platform)


if __name__ == "__main__":
    sys.exit(main())
