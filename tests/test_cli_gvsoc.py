"""``autotiler run --backend gvsoc`` and ``--counters`` (issue 25 §2): an imported network run from
the command line on GVSoC's pulp-open cluster gives the host simulator's and tflite-micro's
output bit for bit; ``--counters FILE.json`` (both back-ends) writes the run's ``cycles`` and
per-node ``nodes`` ({name, cycles}).

The GVSoC run is marked ``gvsoc`` and skipped without GVSoC (GVSOC_HOME unset), as in
tests/test_gvsoc.py. The refusals (GVSoC missing, a generation for a platform GVSoC does not
model, ``--platform`` other than pulp_open, an unwritable ``--counters`` path) stop before
anything is built, so they are checked everywhere (a stand-in GVSOC_HOME with an empty env.sh
where GVSoC must look installed).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from autotiler.command import main
from host_harness import gvsoc

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro is in the test extra: pip install tflite-micro")

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODEL = Path(__file__).parent / "models" / "import" / "pad_conv_same.tflite"   # int8 in and out


def cli(*args) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def gens(tmp_path_factory) -> dict:
    """{platform: (generated dir, descriptor)}: the model imported and generated for pulp_open
    (what GVSoC models) and for gap8 (the default, which it does not)."""
    root = tmp_path_factory.mktemp("cli_gvsoc")
    out = {}
    for platform in ("pulp_open", "gap8"):
        imp, gen = root / f"imp_{platform}", root / f"gen_{platform}"
        assert cli("import", MODEL, "-o", imp, "--name", "net", "--platform", platform) == 0
        assert cli("generate", imp / "net.py", "-o", gen, "-q") == 0
        out[platform] = (gen, json.loads((imp / "net.json").read_text(encoding="utf-8")))
    return out


@pytest.fixture(scope="module")
def x_file(gens, tmp_path_factory) -> tuple:
    """(the input .npy, the tflite-micro interpreter's output on it)."""
    desc = gens["pulp_open"][1]
    x = np.random.default_rng(11).integers(-128, 128, size=desc["inputs"][0]["shape"]).astype(np.int8)
    path = tmp_path_factory.mktemp("x") / "x.npy"
    np.save(path, x)
    interp = runtime.Interpreter.from_file(str(MODEL), arena_size=1 << 20)
    interp.set_input(x, 0)
    interp.invoke()
    return path, interp.get_output(0)


def _run(gens, x_file, tmp_path, *extra, platform="pulp_open", name="y") -> tuple:
    gen, desc = gens[platform]
    y = tmp_path / f"{name}.npy"
    rc = cli("run", gen, "--graph", desc["graph"], "--input", f"{desc['inputs'][0]['name']}={x_file[0]}",
             "--output", f"{desc['outputs'][0]['name']}={y}", *extra)
    return rc, y


def _check_counters(path: Path, backend: str) -> dict:
    c = json.loads(path.read_text(encoding="utf-8"))
    assert c["backend"] == backend and c["name"] == "net"
    assert isinstance(c["cycles"], int) and c["cycles"] > 0
    assert c["nodes"] and all(isinstance(n["name"], str) and isinstance(n["cycles"], int) and n["cycles"] > 0
                              for n in c["nodes"])
    assert sum(n["cycles"] for n in c["nodes"]) <= c["cycles"]
    return c


def test_host_counters(gens, x_file, tmp_path, capsys):
    """--counters on the default (host) back-end: no GVSoC needed; the output is tflite-micro's."""
    rc, y = _run(gens, x_file, tmp_path, "--counters", tmp_path / "c.json")
    assert rc == 0
    np.testing.assert_array_equal(np.load(y), x_file[1])
    c = _check_counters(tmp_path / "c.json", "host")
    out = capsys.readouterr().out
    assert f"net: {c['cycles']} cycles" in out and f"wrote counters to {tmp_path / 'c.json'}" in out
    assert [n["name"] for n in c["nodes"]] == [line.split()[2].rstrip(":") for line in out.splitlines()
                                                if line.startswith("  node ")]


@needs_gvsoc
@pytest.mark.gvsoc
def test_gvsoc_run_equals_host_and_tflm(gens, x_file, tmp_path, capsys):
    rc, y_host = _run(gens, x_file, tmp_path, name="host")
    assert rc == 0
    rc, y = _run(gens, x_file, tmp_path, "--backend", "gvsoc", "--counters", tmp_path / "c.json")
    assert rc == 0
    np.testing.assert_array_equal(np.load(y), x_file[1])
    np.testing.assert_array_equal(np.load(y), np.load(y_host))
    c = _check_counters(tmp_path / "c.json", "gvsoc")
    out = capsys.readouterr().out
    assert f"net: {c['cycles']} cycles on GVSoC" in out
    assert "net_Construct: " in out
    for i, n in enumerate(c["nodes"]):
        assert f"  node {i} {n['name']}: {n['cycles']} cycles" in out


def _fails(capsys, rc: int, *texts: str) -> str:
    assert rc == 1
    err = capsys.readouterr().err
    assert err.startswith("autotiler: error: ") and err.count("\n") == 1, err
    for text in texts:
        assert text in err, err
    return err


@pytest.fixture
def fake_gvsoc(tmp_path, monkeypatch):
    """GVSoC looks installed (an empty env.sh): the refusals below come before anything runs."""
    home = tmp_path / "gvsoc_home"
    home.mkdir()
    (home / "env.sh").write_text("", encoding="utf-8")
    monkeypatch.setenv("GVSOC_HOME", str(home))


def test_without_gvsoc_says_how_to_install(gens, x_file, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GVSOC_HOME", raising=False)
    rc, y = _run(gens, x_file, tmp_path, "--backend", "gvsoc", "--counters", tmp_path / "c.json")
    _fails(capsys, rc, "--backend gvsoc needs GVSoC, and GVSOC_HOME is not set", "../shared/tools/gvsoc/setup.sh",
           "source ~/.cache/gvsoc/env.sh")
    assert not y.exists() and not (tmp_path / "c.json").exists()


def test_generation_for_another_platform(gens, x_file, tmp_path, fake_gvsoc, capsys):
    rc, y = _run(gens, x_file, tmp_path, "--backend", "gvsoc", platform="gap8")
    _fails(capsys, rc, "was generated for platform gap8, which GVSoC does not model",
           "--platform pulp_open", "or run it with --backend host")
    assert not y.exists()


def test_platform_option_other_than_pulp_open(gens, x_file, tmp_path, fake_gvsoc, capsys):
    rc, _ = _run(gens, x_file, tmp_path, "--backend", "gvsoc", "--platform", "gap8")
    _fails(capsys, rc, "--platform gap8: GVSoC models platform pulp_open only", "leave --platform out")


@pytest.mark.parametrize("backend", ["host", "gvsoc"])
@pytest.mark.parametrize("where, text", [("missing/c.json", "is in a directory that does not exist"),
                                         (".", "is a directory")])
def test_counters_path_not_writable(gens, x_file, tmp_path, fake_gvsoc, capsys, backend, where, text):
    rc, y = _run(gens, x_file, tmp_path, "--backend", backend, "--counters", tmp_path / where)
    _fails(capsys, rc, f"--counters {tmp_path / where}: the file {text}", "give a writable FILE.json")
    assert not y.exists()


def test_unknown_backend(gens, x_file, tmp_path, capsys):
    rc, _ = _run(gens, x_file, tmp_path, "--backend", "fpga")
    assert rc == 2
    assert "argument --backend: invalid choice: 'fpga'" in capsys.readouterr().err
