"""``autotiler verify`` (issue 24 §5) and the import report (§6) on the whole-network test models
of tests/models/import/ (Keras -> TFLite by TensorFlow's converter, tests/models/make_import_models.py):
every int8 network imported, generated, built and run on the simulated chip equals TensorFlow Lite
Micro bit for bit; a model quantised by the import meets the SQNR bound; verify's inputs from files,
its refusals, its exit status and a detected mismatch; the report's rows and figures.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autotiler.errors import ImportModelError
from autotiler.importers import fuse as F
from autotiler.importers import lower as L
from autotiler.importers import report as R
from autotiler.importers import verify as V
from autotiler.importers.script import import_model, read_model

pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                    reason="tflite-micro (TensorFlow Lite Micro's interpreter) is not installed")

pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODELS = Path(__file__).resolve().parent / "models" / "import"
# Every int8 network of tests/models/import that the importer takes (pad_conv_sym: a PAD that is not
# TFLite's SAME padding, its own CNN_Pad_SQ8 layer; int16_activations: refused by name;
# float_interface: test_float_interface_model).
INT8 = ["ds_cnn_kws", "mobilenet_v1_025_96", "resnet8", "autoencoder", "pad_conv_same", "pad_conv_sym",
        "reshape_dynamic", "squeeze", "concat_branches", "mean", "fused_activations", "activations_mix"]


def raises(fragment: str):
    return pytest.raises(ImportModelError, match=fragment)


@pytest.fixture(scope="module")
def imports(tmp_path_factory):
    """{model name: import directory}, imported once per module (the generation check skipped:
    verify generates)."""
    cache = {}

    def get(name: str, calibration: bool = False) -> Path:
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / name
            cal = str(MODELS / f"{name}.npz") if calibration else None
            import_model(str(MODELS / f"{name}.tflite"), str(out), calibration=cal, check=False)
            cache[name] = out
        return cache[name]
    return get


@pytest.mark.parametrize("name", INT8)
def test_int8_network_is_bit_exact_with_tflite_micro(imports, name):
    side = json.loads((MODELS / f"{name}.json").read_text())
    report = V.verify(imports(name), inputs=2)
    assert report.ok, report.format()
    assert report.reference == "tflite-micro" and report.runs == 2
    (out,) = report.outputs
    assert out.shape == tuple(side["outputs"][0]["shape"])
    assert out.equal == out.items == 2 * int(np.prod(out.shape)) and out.max_lsb == 0
    print("\n" + report.format())


def test_float_model_quantised_by_the_import_meets_the_sqnr_bound(imports):
    report = V.verify(imports("mean_float", calibration=True), inputs=4)
    assert report.ok, report.format()
    (out,) = report.outputs
    assert out.sqnr_db >= V.FLOAT_SQNR_DB and out.top1_equal == 4
    assert "quantised by the import" in report.criterion


def test_float_interface_model(imports):
    """int8 inside, float32 interface: the graph takes and returns the int8 tensors at the edges; the
    source gets them dequantised and its float output is quantised back: bit-exact."""
    report = V.verify(imports("float_interface"), inputs=3)
    assert report.ok, report.format()
    (out,) = report.outputs
    assert out.equal == out.items and out.sqnr_db is not None


def test_onnx_qdq_model_against_onnxruntime(tmp_path):
    """The ONNX path: onnxruntime runs the QDQ model on the dequantised int8 inputs (NCHW, the
    source's layout), its float output is quantised back. The issue's bound (99 % equal) is the
    importer's to meet: here the figures are checked for sense (top-1, at most 1 LSB on this model)."""
    model = MODELS.parent / "onnx" / "kws_qdq.onnx"
    if not model.is_file():
        pytest.skip("tests/models/onnx/kws_qdq.onnx is not there")
    import_model(str(model), str(tmp_path / "kws"), check=False)
    report = V.verify(tmp_path / "kws", inputs=4)
    (out,) = report.outputs
    assert report.reference == "onnxruntime" and "ONNX QDQ" in report.criterion
    assert out.top1_equal == 4 and out.max_lsb <= 1 and out.equal_ratio > 0.5 and out.sqnr_db > 25
    print("\n" + report.format())


# ---- inputs from files ----------------------------------------------------------------------------


def test_inputs_from_files_one_and_stacked(imports, tmp_path):
    d = imports("mean")
    port = V.read_import_dir(d).inputs[0]
    rng = np.random.default_rng(5)
    stack = rng.integers(-128, 128, size=(3, *port.shape)).astype(np.int8)
    np.save(tmp_path / "one.npy", stack[0])
    np.save(tmp_path / "three.npy", stack)
    one = V.verify(d, input_files={port.name: str(tmp_path / "one.npy")})
    three = V.verify(d, input_files={port.name: str(tmp_path / "three.npy")})
    assert one.ok and three.ok and (one.runs, three.runs) == (1, 3)
    runs = V.make_inputs(V.read_import_dir(d), 1, {port.name: str(tmp_path / "three.npy")})
    np.testing.assert_array_equal(runs[2][port.name], stack[2])


def test_input_file_refusals(imports, tmp_path):
    d = V.read_import_dir(imports("mean"))
    port = d.inputs[0]
    np.save(tmp_path / "float.npy", np.zeros(port.shape, np.float32))
    np.save(tmp_path / "shape.npy", np.zeros((2, 3), np.int8))
    np.save(tmp_path / "two.npy", np.zeros((2, *port.shape), np.int8))
    (tmp_path / "text.npy").write_text("not an array")
    with raises(r"input '.*float.npy' is float32, graph input Input_1 takes int8 \(quantise it: q = round"):
        V.make_inputs(d, 1, {port.name: str(tmp_path / "float.npy")})
    with raises(r"input '.*shape.npy' has shape \(2, 3\), graph input Input_1 takes \(1, 11, 7, 3\)"):
        V.make_inputs(d, 1, {port.name: str(tmp_path / "shape.npy")})
    with raises(r"input file '.*nothere.npy' not found"):
        V.make_inputs(d, 1, {port.name: str(tmp_path / "nothere.npy")})
    with raises(r"'.*text.npy' is not a .npy array"):
        V.make_inputs(d, 1, {port.name: str(tmp_path / "text.npy")})
    with raises(r"--input Other: the graph has no input 'Other' \(its inputs are Input_1\)"):
        V.make_inputs(d, 1, {"Other": str(tmp_path / "two.npy")})
    with raises(r"--inputs 0: at least one input is needed"):
        V.make_inputs(d, 0, {})


def test_random_inputs_are_fixed_and_span_int8(imports):
    d = V.read_import_dir(imports("mean"))
    a, b = V.make_inputs(d, 3, {}), V.make_inputs(d, 3, {})
    assert all(np.array_equal(x["Input_1"], y["Input_1"]) for x, y in zip(a, b))
    x = np.stack([r["Input_1"] for r in a])
    assert x.dtype == np.int8 and x.shape == (3, 1, 11, 7, 3) and x.min() < -100 and x.max() > 100


# ---- the directory, the source, the command -------------------------------------------------------


def test_directory_refusals(imports, tmp_path):
    with raises(r"directory '.*nothing' not found \(import a model into it first"):
        V.read_import_dir(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with raises(r"no import descriptor \(NAME.json with graph, model_script, inputs, outputs\) in"):
        V.read_import_dir(tmp_path / "empty")
    moved = tmp_path / "moved"
    shutil.copytree(imports("mean"), moved)
    desc = json.loads((moved / "mean.json").read_text())
    desc["source"] = str(tmp_path / "gone.tflite")
    (moved / "mean.json").write_text(json.dumps(desc))
    with raises(r"the source model '.*gone.tflite' named by mean.json is not found \(verify needs the model file"):
        V.read_import_dir(moved)
    assert V.read_import_dir(moved, source=str(MODELS / "mean.tflite")).source == MODELS / "mean.tflite"
    (moved / "mean.py").unlink()
    with raises(r"model script 'mean.py' named by mean.json is missing"):
        V.read_import_dir(moved)


def test_a_wrong_constant_is_a_mismatch_and_status_1(imports, tmp_path, capsys):
    """A bias changed in the import directory's tensor files: verify says MISMATCH, exit status 1."""
    bad = tmp_path / "bad"
    shutil.copytree(imports("mean"), bad)
    bias = bad / "mean_tensors" / "FullyConnected_2_B.bin"   # the classifier's int32 biases
    data = np.frombuffer(bias.read_bytes(), dtype="<i4").copy()
    data += 1 << 14
    bias.write_bytes(data.tobytes())
    assert V.main([str(bad), "--inputs", "2"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH: int8 TFLite: bit-exact with TFLite Micro" in out and "largest difference" in out
    assert "Output_1 [1, 6]: " in out and " 12/12 items equal" not in out


def test_main_errors_in_one_line(tmp_path, capsys):
    assert V.main([str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("autotiler verify: error: ") and "not found" in err
    assert V.main([str(tmp_path), "--input", "oops"]) == 1
    assert "--input 'oops' is not NAME=FILE" in capsys.readouterr().err


def test_compare_counts_lsbs_top1_and_sqnr():
    port = V.Port("Out", (1, 4), "int8", 0.5, 0)
    want = [V.SourceOutput(np.array([[1, 2, 3, 4]], np.int8), np.array([[0.5, 1, 1.5, 2]], np.float32)),
            V.SourceOutput(np.array([[9, 2, 3, -4]], np.int8), np.array([[4.5, 1, 1.5, -2]], np.float32))]
    got = [np.array([[1, 2, 3, 4]], np.int8), np.array([[7, 2, 3, 3]], np.int8)]
    c = V.compare(port, want, got)
    assert (c.items, c.equal, c.max_lsb, c.top1_equal, c.runs) == (8, 6, 7, 2, 2)
    # signal 35, noise (4.5 - 3.5)^2 + (-2 - 1.5)^2 = 13.25
    assert c.sqnr_db == pytest.approx(10 * np.log10(35 / 13.25))
    assert V.quantise(np.array([0.25, -0.25, 0.75, 100.0]), port).tolist() == [1, -1, 2, 127]


# ---- the report -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["resnet8"])
def test_import_report(imports, tmp_path, name):
    d = V.read_import_dir(imports(name))
    model = V.generate(d, str(tmp_path))
    graph = read_model(str(d.source))
    desc = json.loads(d.descriptor_path.read_text())
    lowered = F.replay(L.lower(graph), desc)          # the fused groups the import chose
    assert len(lowered.layers) < len(L.lower(graph).layers)
    text = R.import_report(model, None, graph, desc, lowered=lowered)
    print("\n" + text)
    lines = text.splitlines()
    table = lines[:next(i for i, ln in enumerate(lines) if ln.strip().startswith("total"))]
    rows = [ln for ln in table if ln.startswith("  ") and not ln.strip().startswith("layer")]
    assert len(rows) == len(lowered.layers)
    macs = sum(R.op_macs(graph, op) for op in graph.ops)
    assert f"{macs} MACs" in lines[0] and macs > 10 ** 6
    assert any(ln.strip().startswith("total") and f" {macs} " in ln for ln in lines)
    assert "at 175 MHz" in text
    arena = R.tflm_arena(d.source.read_bytes())
    assert arena is not None and 0 < arena.head < arena.total
    assert f"TFLM arena for the same model: {arena.head} B" in text and "is within it" in text
    # without the lowering, layers are found by the operator index their name ends with
    assert R.import_report(model, None, graph, desc, arena=arena).splitlines()[0] == lines[0]


def test_report_of_an_onnx_source_has_no_arena():
    class Dyn:
        peak, lower_bound, algorithm = 100, 100, "x"

    class Plan:
        dyn, static_bytes = Dyn(), 0

    lines = R._arena_lines(Plan(), {"format": "onnx"}, None)
    assert lines[-1] == "TFLM arena: none (the source is not a TFLite model)"


def test_report_of_an_import_directory_on_gap9(tmp_path):
    out = tmp_path / "kws gap9"
    import_model(str(MODELS / "ds_cnn_kws.tflite"), str(out), platform="gap9", check=False)
    text = R.report_of_import(out)
    layers = 12 - sum(len(g["layers"]) - 1 for g in json.loads((out / "ds_cnn_kws.json").read_text())["fusion"]["groups"])
    assert text.splitlines()[0].startswith(f"import report: graph ds_cnn_kws on gap9 ({layers} layers, 2656768 MACs)")
    assert "ms at 370 MHz" in text and "liveness lower bound" in text and "is within it" in text
