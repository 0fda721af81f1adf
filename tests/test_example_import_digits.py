"""examples/import_digits (issue 24 §9): a small Keras CNN trained on scikit-learn's 8x8 digits,
converted to int8 TFLite by TensorFlow's converter (examples/import_digits/train.py, run by hand),
imported by ``autotiler import``, generated, built and run on the simulated chip on every held-out
digit: the generated C's int8 scores equal TensorFlow Lite's (and TensorFlow Lite Micro's) bit for
bit, so its predictions and accuracy are TFLite's, output for output.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from autotiler.importers import verify as V
from autotiler.importers.script import import_model

from .conftest import EXAMPLES

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro (TensorFlow Lite Micro's interpreter) is not installed")

pytestmark = pytest.mark.usefixtures("private_harness_cache")

HERE = EXAMPLES / "import_digits"
MODEL = HERE / "digits.tflite"
TEST = np.load(HERE / "test_digits.npz")
SUMMARY = json.loads((HERE / "tflite_accuracy.json").read_text())


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The import directory (a path with a space and a non-ASCII character) and the generated C's
    int8 scores on every held-out digit."""
    out = tmp_path_factory.mktemp("digits") / "import dir é"
    result = import_model(str(MODEL), str(out), check=False)
    d = V.read_import_dir(out)
    gen = tmp_path_factory.mktemp("digits_gen")
    V.generate(d, str(gen))
    runs = [{d.inputs[0].name: x[None]} for x in TEST["x_int8"]]
    got, counters = V.run_generated(d, str(gen), runs)
    scores = np.stack([g[d.outputs[0].name].reshape(-1) for g in got])
    return result, d, scores, counters


def test_the_held_out_set_is_what_train_py_wrote():
    assert TEST["x_int8"].shape == (SUMMARY["test_digits"], 8, 8, 1) and TEST["x_int8"].dtype == np.int8
    assert TEST["tflite_scores"].shape == (SUMMARY["test_digits"], 10)
    assert np.array_equal(np.argmax(TEST["tflite_scores"], axis=1), TEST["tflite_pred"])
    acc = np.mean(TEST["tflite_pred"] == TEST["y"])
    assert acc == pytest.approx(SUMMARY["tflite_int8_accuracy"], abs=1e-4) and acc > 0.95


def test_tflite_micro_gives_tflites_scores():
    """TFLite's reference kernels (train.py) and TFLite Micro agree on every digit: either is the
    reference of the generated C."""
    interp = runtime.Interpreter.from_file(str(MODEL), arena_size=1 << 20)
    outs = []
    for x in TEST["x_int8"]:
        interp.set_input(x[None], 0)
        interp.invoke()
        outs.append(interp.get_output(0).reshape(-1).copy())
    np.testing.assert_array_equal(np.stack(outs), TEST["tflite_scores"])


def test_descriptor_is_the_models_own_interface(imported):
    _, d, _, _ = imported
    (inp,), (out,) = d.inputs, d.outputs
    q = SUMMARY["input"]
    assert (inp.shape, inp.dtype, inp.zero_point) == ((1, 8, 8, 1), "int8", q["zero_point"])
    assert inp.scale == pytest.approx(q["scale"], rel=1e-7)
    assert (out.shape, out.dtype, out.zero_point) == ((1, 10), "int8", SUMMARY["output"]["zero_point"])


def test_generated_c_equals_tflite_on_every_held_out_digit(imported):
    _, _, scores, counters = imported
    bad = np.flatnonzero((scores != TEST["tflite_scores"]).any(axis=1))
    assert bad.size == 0, f"{bad.size} digits differ, first {bad[0]}: {scores[bad[0]]} vs {TEST['tflite_scores'][bad[0]]}"
    pred = np.argmax(scores, axis=1)
    np.testing.assert_array_equal(pred, TEST["tflite_pred"])
    correct = int(np.sum(pred == TEST["y"]))
    assert correct == SUMMARY["tflite_int8_correct"]
    print(f"\ndigits: {correct}/{len(pred)} held-out digits right ({correct / len(pred):.2%}), as TFLite; "
          f"{counters['cycles']} simulated cycles per inference")
