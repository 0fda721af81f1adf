"""The imported test networks on GVSoC's pulp-open cluster (issue 25 item 2): the DS-CNN
keyword spotter, MobileNet v1 0.25 at 96x96, ResNet-8, the autoencoder and MobileNet v2 0.35 at
96x96 (tests/models/import/*.tflite), imported and generated for pulp_open, run with
``GvsocProgram.graph`` (Construct, run and Destruct in one application; the flash image read from
the host through GVSoC's semihosting, so the constants are in L2 once): each output bit-exact
with the tflite-micro interpreter and with the host simulator, every node's cycles measured. One
network also runs through ``autotiler run --backend gvsoc --counters``.

The GVSoC runs are marked ``gvsoc`` and skipped without GVSoC (GVSOC_HOME unset), as in
tests/test_gvsoc.py. Each network is imported and generated once for the module, when a test
first asks for it (2 to 4 s; MobileNet v2 ~30 s); each GVSoC run compiles and simulates one application
(3 to 10 s; MobileNet v2 ~60 s). Cluster core 0's stack overflow is checked on a runner made deeper
than it, and from printed lines.
The refusal of a graph over the platform's L2 stops before anything is compiled, so it is checked
everywhere (a stand-in GVSOC_HOME).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import host_harness
from autotiler.command import library_sources, main
from autotiler.errors import HarnessError
from autotiler.platforms import get_platform
from host_harness import gvsoc

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro is in the test extra: pip install tflite-micro")

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODELS = Path(__file__).parent / "models" / "import"
NETWORKS = ("ds_cnn_kws", "mobilenet_v1_025_96", "resnet8", "autoencoder", "mobilenet_v2_035_96")
# Every network at the import's default budgets: pulp_open's leaves the application's code room in
# L2 (l2_app_bytes; MobileNet v2's linker was 25224 B short before).
IMPORT_ARGS: dict = {}


def cli(*args) -> int:
    return main([str(a) for a in args])


def tflm(model: Path, x: np.ndarray) -> np.ndarray:
    interp = runtime.Interpreter.from_file(str(model), arena_size=1 << 20)
    interp.set_input(x, 0)
    interp.invoke()
    return interp.get_output(0)


class Networks:
    """``nets[name]``: {gen, desc, x, tflm}, the network imported and generated for pulp_open on
    first use, one random int8 input (seeded) and tflite-micro's output on it."""

    def __init__(self, root: Path):
        self.root, self._done = root, {}

    def __getitem__(self, name: str) -> dict:
        if name not in self._done:
            imp, gen = self.root / f"imp_{name}", self.root / f"gen_{name}"
            assert cli("import", MODELS / f"{name}.tflite", "-o", imp, "--name", "net", "--platform", "pulp_open",
                       *IMPORT_ARGS.get(name, ())) == 0
            assert cli("generate", imp / "net.py", "-o", gen, "-q") == 0
            desc = json.loads((imp / "net.json").read_text(encoding="utf-8"))
            rng = np.random.default_rng(100 + NETWORKS.index(name))
            x = rng.integers(-128, 128, size=desc["inputs"][0]["shape"]).astype(np.int8)
            self._done[name] = {"gen": gen, "desc": desc, "x": x, "tflm": tflm(MODELS / f"{name}.tflite", x)}
        return self._done[name]


@pytest.fixture(scope="module")
def nets(tmp_path_factory) -> Networks:
    return Networks(tmp_path_factory.mktemp("nets"))


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


@needs_gvsoc
@pytest.mark.gvsoc
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
    assert 0 < counters["stack"]["used"] < counters["stack"]["size"] == gvsoc.STACK   # cluster core 0's


@needs_gvsoc
@pytest.mark.gvsoc
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
    fused = sum(len(g["layers"]) - 1 for g in desc.get("fusion", {}).get("groups", []))
    assert counters["backend"] == "gvsoc" and len(counters["nodes"]) == 30 - fused   # the import's 30 layers
    assert all(n["cycles"] > 0 for n in counters["nodes"])
    assert f"net: {counters['cycles']} cycles on GVSoC" in capsys.readouterr().out


@pytest.fixture
def stand_in_gvsoc(tmp_path, monkeypatch):
    """A GVSOC_HOME with an empty env.sh: enough for the refusals, which come before anything is
    compiled or run."""
    home = tmp_path / "gvsoc_home"
    home.mkdir()
    (home / "env.sh").write_text("")
    monkeypatch.setenv("GVSOC_HOME", str(home))
    return home


def test_a_graph_over_l2_is_refused_without_counting_its_flash_image(nets, stand_in_gvsoc):
    """MobileNet on a pulp_open given 10000 B of L2 less than its arguments (27650 B: input and
    output) and L2 areas (the constants promoted to L2 and the activations, as generated; the
    fusion the import chooses sets them) need: refused before anything is compiled; its 234674 B
    flash image is read from the host and counted nowhere."""
    net = nets["mobilenet_v1_025_96"]
    sources, dirs = library_sources(str(net["gen"]))
    first = _build(net, "gvsoc")
    sizes = first.graph("net").spec.sizes
    first.close()
    areas = gvsoc.heap_bytes(sizes.get("L2", 0), sizes.get("L2_DYN", 0))
    need = 27650 + areas
    prog = host_harness.build(net["gen"], sources=sources, include_dirs=dirs, backend="gvsoc",
                              platform=get_platform("pulp_open", l2_size=need - 10000))
    try:
        graph = prog.graph("net")
        graph.construct()
        y = np.zeros(net["desc"]["outputs"][0]["shape"], dtype=np.int8)
        with pytest.raises(HarnessError, match=rf"kernel 'net': the application needs {need} bytes of L2 \(arguments "
                                               rf"27650, static and dynamic L2 areas {areas}\), over the {need - 10000} "
                                               r"bytes of L2 of platform 'pulp_open' \(on GVSoC the L3 RAM is emulated "
                                               r"in L2 \(the flash images are read from the host and take none\)"):
            graph.run(Input_1=net["x"].copy(), Output_1=y)
        assert not (prog.work / "main.c").exists()
    finally:
        prog.close()


@needs_gvsoc
@pytest.mark.gvsoc
def test_a_flash_image_that_does_not_read_stops_the_application(nets, monkeypatch):
    """A flash image's host file whose size is not the one the application lists (regenerated
    meanwhile) makes the constructor return 1, said with the file's name; one that does not open
    through semihosting stops GVSoC (its warnings are fatal), said with the path."""
    net = nets["autoencoder"]
    real = gvsoc.GvsocProgram._flash_images
    prog = _build(net, "gvsoc")
    cases = ((lambda n, p, s: (n, p, s + 1),
              r"net_Construct\(\) returned 1: opening the flash image of the constants failed "
              r"\('net_L3_Flash_Const\.dat'\): flash image 'net_L3_Flash_Const\.dat': its host file "
              r"/\S+/net_L3_Flash_Const\.dat has \d+ bytes, not the \d+ listed"),
             (lambda n, p, s: (n, p.with_name("gone.dat"), s),
              r"the application stopped on GVSoC: its semihosting open of the host file /\S+/gone\.dat failed "
              r"\(No such file or directory\)"))
    try:
        y = np.zeros(net["desc"]["outputs"][0]["shape"], dtype=np.int8)
        for change, text in cases:
            monkeypatch.setattr(gvsoc.GvsocProgram, "_flash_images",
                                lambda self, spec, change=change: [change(*i) for i in real(self, spec)])
            graph = prog.graph("net")
            graph.construct()
            with pytest.raises(HarnessError, match=text):
                graph.run(Input_1=net["x"].copy(), Output_1=y)
            graph.destruct()
    finally:
        prog.close()


def _deep_runner(net: dict, root: Path) -> Path:
    """A copy of the network's generated code whose runner has a 4 KiB local (declared as
    generated: the manifest's hash follows), deeper than cluster core 0's stack."""
    gen = root / "deep"
    shutil.copytree(net["gen"], gen)
    c = gen / "netKernels.c"
    text = c.read_text(encoding="utf-8")
    head = re.search(r"\nint net\(\n[^{]*\{\n", text)
    text = text[:head.end()] + "\tvolatile char Deep[4096];\n\tDeep[0] = 0;\n" + text[head.end():]
    c.write_text(text, encoding="utf-8")
    manifest = json.loads((gen / "netKernels.json").read_text(encoding="utf-8"))
    manifest["set"]["files"]["netKernels.c"] = hashlib.sha256(text.encode()).hexdigest()
    (gen / "netKernels.json").write_text(json.dumps(manifest), encoding="utf-8")
    return gen


@needs_gvsoc
@pytest.mark.gvsoc
def test_a_stack_overflow_of_cluster_core_0_is_said(nets, tmp_path):
    """A runner deeper than pulp-runtime's 2 KiB stack: GVSoC stops on a write below the TCDM,
    said as core 0's stack overflow in the runner (not GVSoC's bare invalid access)."""
    net = nets["autoencoder"]
    prog = _build({**net, "gen": _deep_runner(net, tmp_path)}, "gvsoc")
    try:
        with pytest.raises(HarnessError, match=r"kernel 'net': cluster core 0's stack overflowed pulp-runtime's 2048 "
                                               r"bytes \(CLUSTER_STACK_SIZE\): GVSoC stopped on a write at 0x[0-9a-f]+, "
                                               r"\d+ bytes below the TCDM, in net \(pc 0x[0-9a-f]+\); core 0 runs "
                                               r"the graph's runner"):
            _run(prog, net)
    finally:
        prog.close()


def test_a_stack_that_overwrote_the_l1_data_below_it_is_said():
    """at_target.c fills core 0's free stack before the application; an @ATS line saying all of
    it was used means the fill below it went too (the static L1 data): refused as an overflow."""
    check = gvsoc.GvsocProgram._check_stack
    program = SimpleNamespace(_function_at=lambda pc: "KerParConv_TFLM_SQ8")
    check(program, "net", "@ATE done\n@ATS 1520 2048\n")                    # within: nothing said
    with pytest.raises(HarnessError, match=r"kernel 'net': cluster core 0's stack overflowed pulp-runtime's 2048 "
                                           r"bytes \(CLUSTER_STACK_SIZE\): the words below it, the cluster's static "
                                           r"L1 data, were overwritten; core 0 runs"):
        check(program, "net", "@ATE done\n@ATS 2048 2048\n")
    with pytest.raises(HarnessError, match=r"GVSoC stopped on a write at 0xfffff40, 192 bytes below the TCDM, in "
                                           r"KerParConv_TFLM_SQ8 \(pc 0x1c008a2c\)"):
        check(program, "net", "[...] Invalid access (pc: 0x1c008a2c, offset: 0x0fffff40, size: 0x4, is_write: 1)\n")


class LinkerShort:
    """A stand-in for the make run (subprocess.Popen): the linker finds no room."""

    pid, returncode = 0, 2

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def communicate(self, timeout=None):
        return "", "ld: region `L2' overflowed by 24980 bytes\n"


def test_a_graph_the_linker_cannot_place_is_told_the_l2_budget_that_fits(nets, stand_in_gvsoc, monkeypatch):
    """The linker's "region `L2' overflowed by N bytes" (the code did not fit beside the graph's
    areas): the hint gives the L2 budget that leaves N bytes more."""
    net = nets["autoencoder"]
    prog = _build(net, "gvsoc")
    sizes = prog.graph("net").spec.sizes
    areas = sizes.get("L2", 0) + sizes.get("L2_DYN", 0)
    monkeypatch.setattr(gvsoc.subprocess, "Popen", LinkerShort)
    try:
        with pytest.raises(HarnessError, match=r"the linker is 24980 bytes short \(code, runtime and data together\) "
                                               rf"\(import or generate the graph with an L2 budget of at most "
                                               rf"{areas - 24980 - 16} bytes \(its static and dynamic L2 areas take "
                                               rf"{areas}; autotiler import --L2\)"):
            _run(prog, net)
    finally:
        prog.close()


def test_a_run_over_the_timeout_ends_what_it_started(nets, stand_in_gvsoc, monkeypatch):
    """GVSoC past RUN_TIMEOUT: the HarnessError, and the run's process group killed (a GVSoC
    left behind would keep a core busy): here a make that only sleeps, its pid in a file."""
    (stand_in_gvsoc / "env.sh").write_text('make() { sleep 60 & echo $! > "$PWD/sleeper"; wait; }\n')
    monkeypatch.setattr(gvsoc, "RUN_TIMEOUT", 1)
    net = nets["autoencoder"]
    prog = _build(net, "gvsoc")
    try:
        with pytest.raises(HarnessError, match=r"kernel 'net': GVSoC did not finish in 1 s"):
            _run(prog, net)
        pid = int((prog.work / "sleeper").read_text())
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the run's sleep {pid} outlived the timeout")
    finally:
        prog.close()
