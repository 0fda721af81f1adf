"""The four imported test networks on GVSoC's pulp-open cluster (issue 25 item 2): the DS-CNN
keyword spotter, MobileNet v1 0.25 at 96x96, ResNet-8 and the autoencoder
(tests/models/import/*.tflite), imported and generated for pulp_open, run with
``GvsocProgram.graph`` (Construct, run and Destruct in one application; the flash image read from
the host through GVSoC's semihosting, so the constants are in L2 once): each output bit-exact
with the tflite-micro interpreter and with the host simulator, every node's cycles measured. One
network also runs through ``autotiler run --backend gvsoc --counters``.

Marked ``gvsoc`` and skipped without GVSoC (GVSOC_HOME unset), as tests/test_gvsoc.py. The
imports and generations are shared by the module (about 10 s); each GVSoC run compiles and
simulates one application (3 to 10 s).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler.command import library_sources, main
from host_harness import gvsoc

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro is in the test extra: pip install tflite-micro")

pytestmark = [pytest.mark.gvsoc, pytest.mark.usefixtures("private_harness_cache"),
              pytest.mark.skipif(not gvsoc.available(),
                                 reason="GVSoC not installed (GVSOC_HOME unset): " + gvsoc.INSTALL_HINT)]

MODELS = Path(__file__).parent / "models" / "import"
NETWORKS = ("ds_cnn_kws", "mobilenet_v1_025_96", "resnet8", "autoencoder")


def cli(*args) -> int:
    return main([str(a) for a in args])


def tflm(model: Path, x: np.ndarray) -> np.ndarray:
    interp = runtime.Interpreter.from_file(str(model), arena_size=1 << 20)
    interp.set_input(x, 0)
    interp.invoke()
    return interp.get_output(0)


@pytest.fixture(scope="module")
def nets(tmp_path_factory) -> dict:
    """{network: {gen, desc, x, tflm}}: each imported and generated for pulp_open, one random int8
    input (seeded) and tflite-micro's output on it."""
    root = tmp_path_factory.mktemp("nets")
    out = {}
    for i, name in enumerate(NETWORKS):
        imp, gen = root / f"imp_{name}", root / f"gen_{name}"
        assert cli("import", MODELS / f"{name}.tflite", "-o", imp, "--name", "net", "--platform", "pulp_open") == 0
        assert cli("generate", imp / "net.py", "-o", gen, "-q") == 0
        desc = json.loads((imp / "net.json").read_text(encoding="utf-8"))
        x = np.random.default_rng(100 + i).integers(-128, 128, size=desc["inputs"][0]["shape"]).astype(np.int8)
        out[name] = {"gen": gen, "desc": desc, "x": x, "tflm": tflm(MODELS / f"{name}.tflite", x)}
    return out


def _run(prog, net: dict) -> tuple:
    """(output, counters) of one Construct + run + Destruct of the network's graph."""
    desc = net["desc"]
    y = np.zeros(desc["outputs"][0]["shape"], dtype=np.int8)
    graph = prog.graph(desc["graph"])
    graph.construct()
    try:
        counters = graph.run(**{desc["inputs"][0]["name"]: net["x"].copy(), desc["outputs"][0]["name"]: y})
    finally:
        graph.destruct()
    return y, counters


def _build(net: dict, backend: str):
    sources, dirs = library_sources(str(net["gen"]))
    return host_harness.build(net["gen"], sources=sources, include_dirs=dirs, platform="pulp_open", backend=backend)


@pytest.mark.parametrize("name", NETWORKS)
def test_network_on_gvsoc_is_bit_exact_with_tflm_and_host(nets, name):
    net = nets[name]
    y_host, host = _run(_build(net, "host"), net)
    prog = _build(net, "gvsoc")
    try:
        y, counters = _run(prog, net)
    finally:
        prog.close()
    np.testing.assert_array_equal(y, net["tflm"])
    np.testing.assert_array_equal(y, y_host)
    assert counters["backend"] == "gvsoc" and counters["construct"]["status"] == 0
    assert counters["nodes"] and all(n["cycles"] > 0 for n in counters["nodes"])
    assert [n["name"] for n in counters["nodes"]] == [n["name"] for n in host["nodes"]]
    assert sum(n["cycles"] for n in counters["nodes"]) <= counters["cycles"]


def test_mobilenet_from_the_command_line(nets, tmp_path, capsys):
    """`autotiler run --backend gvsoc --counters`: MobileNet, whose constants (234674 B) did not
    fit pulp-open's L2 twice, runs with its flash image read from the host."""
    net, desc = nets["mobilenet_v1_025_96"], nets["mobilenet_v1_025_96"]["desc"]
    x, y, c = tmp_path / "x.npy", tmp_path / "y.npy", tmp_path / "c.json"
    np.save(x, net["x"])
    assert cli("run", net["gen"], "--graph", desc["graph"], "--input", f"{desc['inputs'][0]['name']}={x}",
               "--output", f"{desc['outputs'][0]['name']}={y}", "--backend", "gvsoc", "--counters", c) == 0
    np.testing.assert_array_equal(np.load(y), net["tflm"])
    counters = json.loads(c.read_text(encoding="utf-8"))
    assert counters["backend"] == "gvsoc" and len(counters["nodes"]) == 30   # the import's 30 layers
    assert all(n["cycles"] > 0 for n in counters["nodes"])
    assert f"net: {counters['cycles']} cycles on GVSoC" in capsys.readouterr().out
