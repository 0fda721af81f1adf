"""The GVSoC back-end (host_harness/gvsoc.py): generated user kernels and graphs cross-compiled
for rv32imc and run on GVSoC's pulp-open cluster, bit-exact with numpy and with the host
simulator: a kernel, a kernel with L3-homed arguments (the L3 RAM emulated in L2) and the guide's
MNIST graph (constructed, run and destructed in one application, its flash image read from the host).

The runs need GVSoC (``../shared/tools/gvsoc/setup.sh``, then ``source ~/.cache/gvsoc/env.sh``):
they are marked ``gvsoc`` and skipped when GVSOC_HOME is not set; CI runs without it. Each run
costs seconds to minutes of CPU, so there is one per feature. The back-end's refusals (what a
graph cannot do on GVSoC, an application over pulp-open's L2), its install hint and the target
at_api.h's L3 macro families are checked everywhere: they stop before anything is compiled (a
stand-in GVSOC_HOME with an empty env.sh).
"""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler import Model, SetConstDir, SetTilingObjective, TilerParseOptions
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError, ModelError
from autotiler.platforms import get_platform
from host_harness import gvsoc
from tests.harness.test_gap_builtins import COVERAGE_DIR, write_pmsis_gen  # the PMSIS-style kernel

from .graph_helpers import ITEMS, declare_residual_graph

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = pytest.mark.usefixtures("private_harness_cache")


def _generate(example: str, out: Path, platform="pulp_open", objective=None, **kw) -> Path:
    mod = runpy.run_path(str(EXAMPLES / example / "model.py"))
    with Model(platform) as m:
        if objective:   # e.g. "original": the largest tiles, the whole budget used
            SetTilingObjective(objective)
        mod["declare"](**kw)
        files = generate(m)
    write_files(files, str(out))
    return out


def _matadd_args(rng):
    a = rng.integers(-(1 << 30), 1 << 30, size=(100, 100), dtype=np.int32)
    b = rng.integers(-(1 << 30), 1 << 30, size=(100, 100), dtype=np.int32)
    return a, b, np.full((100, 100), 0x5A5A5A5A, dtype=np.int32)


def test_unknown_backend(tmp_path):
    gen = _generate("matadd_v3", tmp_path / "gen")
    with pytest.raises(HarnessError, match=r"unknown backend 'fpga'.*backends: host, gvsoc"):
        host_harness.build(gen, backend="fpga")


def test_without_gvsoc_the_error_says_how_to_install(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.delenv("GVSOC_HOME", raising=False)
    with pytest.raises(HarnessError, match=r"needs GVSoC, and GVSOC_HOME is not set.*setup\.sh.*env\.sh"):
        host_harness.build(gen, sources=[EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"], backend="gvsoc")
    assert not gvsoc.available()


def test_gvsoc_home_without_env_sh(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.setenv("GVSOC_HOME", str(tmp_path))
    with pytest.raises(HarnessError, match=r"has no env\.sh \(not a GVSoC build from setup\.sh\)"):
        host_harness.build(gen, backend="gvsoc")


def test_host_options_are_refused_for_gvsoc(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.setenv("GVSOC_HOME", str(tmp_path))
    with pytest.raises(HarnessError, match=r"sanitize=True is a host-simulator option"):
        host_harness.build(gen, backend="gvsoc", sanitize=True)
    with pytest.raises(HarnessError, match=r"4 cores: GVSoC's pulp-open cluster has 8"):
        host_harness.build(gen, backend="gvsoc", cores=4)


@needs_gvsoc
@pytest.mark.gvsoc
def test_matadd_on_gvsoc_is_bit_exact(tmp_path):
    gen = _generate("matadd_v3", tmp_path / "gen", l1=20000)
    src, inc = [EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"], [EXAMPLES / "matadd_v3"]
    target = host_harness.build(gen, sources=src, include_dirs=inc, backend="gvsoc")
    host = host_harness.build(gen, sources=src, include_dirs=inc, platform="pulp_open")
    try:
        a, b, out = _matadd_args(np.random.default_rng(1))
        got = target.call("MatADD", In1=a, In2=b, Out=out)
        np.testing.assert_array_equal(out, a + b)
        assert got["backend"] == "gvsoc" and got["cycles"] > 0
        out2 = np.full_like(out, 0x5A5A5A5A)
        on_host = host.call("MatADD", In1=a, In2=b, Out=out2)
        np.testing.assert_array_equal(out, out2)
        prof = target.profile("MatADD", In1=a, In2=b, Out=np.full_like(out, 7))
        calls, cycles, cost = prof["forks"]["MatSumPar"]
        assert calls >= 1 and 0 < cycles < prof["cycles"]
        assert cost == on_host["compute_cycles"]   # the Cost= values the host simulator charged
    finally:
        target.close()


@needs_gvsoc
@pytest.mark.gvsoc
def test_a_sequence_of_calls_times_each_call_and_its_forks(tmp_path):
    """GvsocProgram.sequence: three calls of MatADD in one application, nothing printed between
    them: the first runs its code cold and takes longer than the next two, which agree within a
    few cycles; with the forks profiled, each call's fork cycles are below its cycles; the output
    is the last call's, right."""
    gen = _generate("matadd_v3", tmp_path / "gen", l1=20000)
    src, inc = [EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"], [EXAMPLES / "matadd_v3"]
    prog = host_harness.build(gen, sources=src, include_dirs=inc, backend="gvsoc")
    try:
        a, b, out = _matadd_args(np.random.default_rng(2))
        args = {"MatADD": {"In1": a, "In2": b, "Out": out}}
        calls = prog.sequence(["MatADD"] * 3, args)
        np.testing.assert_array_equal(out, a + b)
        cold, warm, again = (c["cycles"] for c in calls)
        assert [c["kernel"] for c in calls] == ["MatADD"] * 3 and all(c["fork_cycles"] is None for c in calls)
        assert cold > warm + 300 and abs(warm - again) < 100
        profiled = prog.sequence(["MatADD"] * 2, args, profile=True)
        assert all(0 < c["fork_cycles"] < c["cycles"] for c in profiled)
        assert prog.text_sizes()["MatADD"] > 0
    finally:
        prog.close()


def test_a_sequence_is_checked_before_compiling(tmp_path, stand_in_gvsoc):
    gen = _generate("matadd_v3", tmp_path / "gen", l1=20000)
    prog = host_harness.build(gen, sources=[EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matadd_v3"], backend="gvsoc")
    a, b, out = _matadd_args(np.random.default_rng(2))
    try:
        with pytest.raises(HarnessError, match=r"an empty sequence of calls \(name at least one kernel\)"):
            prog.sequence([], {})
        with pytest.raises(HarnessError, match=r"no arguments for MatADD \(give args\[name\] for each kernel called\)"):
            prog.sequence(["MatADD"], {})
        with pytest.raises(HarnessError, match=r"unknown kernel 'MatAdd' \(kernels are MatADD\)"):
            prog.sequence(["MatAdd"], {"MatAdd": {}})
        with pytest.raises(HarnessError, match=r"kernel 'MatADD', argument 'Out': expects int32 .* got int32 shape "
                                               r"\(10, 100\)"):
            prog.sequence(["MatADD"], {"MatADD": {"In1": a, "In2": b, "Out": out[:10]}})
        assert not (prog.work / "main.c").exists()
    finally:
        prog.close()


@needs_gvsoc
@pytest.mark.gvsoc
def test_l1_too_full_for_the_cluster_stacks_is_said(tmp_path):
    """pulp-runtime starts no cluster when its 8 stacks do not fit in L1 after the static data:
    a typed error with the figures, not a silent empty run. (pulp_open's l1_size leaves them
    room: the model refuses such a budget; a platform given the whole TCDM does not.)"""
    with pytest.raises(ModelError, match=r"the L1 budget of 60000 bytes exceeds the 48896 bytes of L1 of platform "
                                         r"'pulp_open'"):
        _generate("matadd_v3", tmp_path / "refused", l1=60000)
    whole_tcdm = get_platform("pulp_open", l1_size=64 * 1024)
    gen = _generate("matadd_v3", tmp_path / "gen", platform=whole_tcdm, l1=60000, objective="original")
    target = host_harness.build(gen, sources=[EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"],
                                include_dirs=[EXAMPLES / "matadd_v3"], backend="gvsoc")
    try:
        a, b, out = _matadd_args(np.random.default_rng(2))
        with pytest.raises(HarnessError, match=r"the cluster did not start: its L1 data is \d+ bytes and the 8 "
                                               r"cores' stacks 16384 more, over the 65536 bytes of pulp-open's TCDM "
                                               r"\(generate with an L1 budget of at most \d+ bytes"):
            target.call("MatADD", In1=a, In2=b, Out=out)
    finally:
        target.close()


# ---- L3 devices and graphs -----------------------------------------------------------------

MNIST = EXAMPLES / "mnist"
MNIST_NODES = ["Conv5x5ReLUMaxPool2x2_0", "Conv5x5ReLUMaxPool2x2_1", "LinearLayerReLU_0", "SoftMax_0"]
MATADD_L3 = EXAMPLES / "matadd_l3"
FAST = ["-fno-sanitize=thread", "-O2"]   # the host simulator's access checks off


@pytest.fixture
def stand_in_gvsoc(tmp_path, monkeypatch):
    """A GVSOC_HOME with an empty env.sh: enough for the back-end's refusals, which come before
    anything is compiled or run."""
    home = tmp_path / "gvsoc_home"
    home.mkdir()
    (home / "env.sh").write_text("")
    monkeypatch.setenv("GVSOC_HOME", str(home))
    return home


def _mnist(out: Path) -> Path:
    mod = runpy.run_path(str(MNIST / "model.py"))
    with Model("pulp_open") as m:
        SetConstDir(str(MNIST))
        mod["MnistModel"](48000, 300 * 1024, 8 * 1024 * 1024, 20 * 1024 * 1024)
        files = generate(m)
    write_files(files, str(out))
    return out


def _residual(tmp_path: Path, *options, warm=None) -> Path:
    """tests/graph_helpers' residual graph G (three MatAdd nodes, two constants in flash)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Model() as m:
        assert TilerParseOptions(["model.py", *options]) == 0
        declare_residual_graph(tmp_path, 64 * 1024, warm=warm)
        files = generate(m)
    gen = tmp_path / "gen"
    write_files(files, str(gen))
    return gen


@needs_gvsoc
@pytest.mark.gvsoc
def test_mnist_graph_on_gvsoc_is_bit_exact_with_per_node_cycles(tmp_path):
    """The guide's MNIST graph generated for pulp_open, constructed, run on one held-out digit and
    destructed on GVSoC (its flash image read from the host through semihosting): the output bit-exact with
    the host simulator and the numpy fixed-point reference, every node's cycles measured."""
    gen = _mnist(tmp_path / "gen")
    ref = runpy.run_path(str(MNIST / "reference.py"))
    x = runpy.run_path(str(MNIST / "data.py"))["heldout_inputs"]()[0][7]
    want = ref["fixed_forward"](x, ref["load_weights"]())
    host = host_harness.build(gen, sources=ref["SOURCES"], include_dirs=ref["INCLUDE_DIRS"], platform="pulp_open",
                              cflags=FAST).graph("MnistCNN")
    on_host = np.full(10, -21846, dtype=np.int16)
    host.construct()
    host_counters = host.run(Input0=x, Output0=on_host)
    host.destruct()
    prog = host_harness.build(gen, sources=ref["SOURCES"], include_dirs=ref["INCLUDE_DIRS"], backend="gvsoc")
    try:
        graph = prog.graph("MnistCNN")
        out = np.full(10, -21846, dtype=np.int16)
        graph.construct()
        counters = graph.run(Input0=x, Output0=out)
        graph.destruct()
    finally:
        prog.close()
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out, on_host)
    assert counters["backend"] == "gvsoc" and counters["construct"]["status"] == 0
    assert counters["construct"]["cycles"] > 0 and counters["destruct"]["status"] == 0
    assert [n["name"] for n in counters["nodes"]] == [n["name"] for n in host_counters["nodes"]] == MNIST_NODES
    assert all(n["cycles"] > 0 for n in counters["nodes"])
    assert sum(n["cycles"] for n in counters["nodes"]) <= counters["cycles"]


@needs_gvsoc
@pytest.mark.gvsoc
def test_l3_homed_kernel_on_gvsoc_is_bit_exact(tmp_path):
    """examples/matadd_l3 (its three matrices homed in HyperRAM, staged through L2 by
    AT_HYPERRAM_CL_COPY) at 128 x 64, small enough for the L3 RAM emulated in L2."""
    gen = _generate("matadd_l3", tmp_path / "gen", l1=20000, W=64, H=128)
    src, inc = [MATADD_L3 / "MatAddBasicKernels.c"], [MATADD_L3]
    prog = host_harness.build(gen, sources=src, include_dirs=inc, backend="gvsoc")
    host = host_harness.build(gen, sources=src, include_dirs=inc, platform="pulp_open")
    assert {a.home for a in prog.kernel("MatAddL3").args} == {"L3"}
    rng = np.random.default_rng(3)
    a = rng.integers(-(1 << 30), 1 << 30, size=(128, 64), dtype=np.int32)
    b = rng.integers(-(1 << 30), 1 << 30, size=(128, 64), dtype=np.int32)
    out, out_host = (np.full((128, 64), 0x5A5A5A5A, dtype=np.int32) for _ in range(2))
    try:
        got = prog.call("MatAddL3", In1=a, In2=b, Out=out)
    finally:
        prog.close()
    host.call("MatAddL3", In1=a, In2=b, Out=out_host)
    np.testing.assert_array_equal(out, a + b)
    np.testing.assert_array_equal(out, out_host)
    assert got["cycles"] > 0


def test_an_application_over_l2_is_refused_before_compiling(tmp_path, stand_in_gvsoc):
    """examples/matadd_l3 at its own size: 3 x 2 MiB homed in L3, which GVSoC emulates in L2."""
    gen = _generate("matadd_l3", tmp_path / "gen", l1=20000)
    prog = host_harness.build(gen, sources=[MATADD_L3 / "MatAddBasicKernels.c"], include_dirs=[MATADD_L3],
                              backend="gvsoc")
    a = np.zeros((1024, 512), dtype=np.int32)
    try:
        with pytest.raises(HarnessError, match=r"kernel 'MatAddL3': the application needs \d+ bytes of L2 "
                                               r"\(arguments homed in L3 \(the emulated L3 RAM\) 6291456, the L2 "
                                               r"area \(L2_Memory\) \d+\), over the 458752 bytes of L2 of platform "
                                               r"'pulp_open' \(on GVSoC the L3 RAM is emulated in L2 \(the flash images are "
                                               r"read from the host and take none\)"):
            prog.call("MatAddL3", In1=a, In2=a.copy(), Out=a.copy())
        assert not (prog.work / "main.c").exists() and not (prog.work / "build").exists()
    finally:
        prog.close()


def test_what_a_graph_cannot_do_on_gvsoc_is_refused(tmp_path, stand_in_gvsoc):
    """Warm construct arguments, the application's L1, a reentrant runner's stepping: typed
    errors saying GVSoC does not support them, before anything runs."""
    gen = _residual(tmp_path, warm=1)   # WARM_L1
    prog = host_harness.build(gen, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], backend="gvsoc")
    try:
        graph = prog.graph("G")
        assert graph.warm_mode == "WARM_L1" and not graph.constructed
        x, out = np.zeros(ITEMS, dtype=np.int32), np.zeros(ITEMS, dtype=np.int32)
        with pytest.raises(HarnessError, match=r"graph 'G' is not constructed"):
            graph.run(In=x, Out=out)
        not_here = r"is not supported on the GVSoC back-end \(each GVSoC run is one application"
        with pytest.raises(HarnessError, match=r"graph 'G': construct\(warm=1\): a partial \(warm\) construct "
                                               + not_here):
            graph.construct(warm=1)
        graph.construct()
        with pytest.raises(HarnessError, match=r"graph 'G' is already constructed"):
            graph.construct()
        with pytest.raises(HarnessError, match=r"run\(until=...\) \(stopping a reentrant runner between layers\) "
                                               + not_here):
            graph.run(In=x, Out=out, until=1)
        with pytest.raises(HarnessError, match=r"run\(L1=...\) .* " + not_here):
            graph.run(In=x, Out=out, L1=True)
        for call in (graph.step, graph.resume, lambda: graph.control("reset"), lambda: graph.layer_index):
            with pytest.raises(HarnessError, match=not_here):
                call()
        with pytest.raises(HarnessError, match=r"destruct\(warm=1\): a partial \(warm\) destruct " + not_here):
            graph.destruct(warm=1)
        assert graph.memory("AT_L2_MEM") == graph.spec.sizes["L2"] and graph.memory("L3") == 0
        graph.destruct()
        assert not graph.constructed and not (prog.work / "build").exists()
    finally:
        prog.close()
    gen = _residual(tmp_path / "reentrant", "-R")
    prog = host_harness.build(gen, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], backend="gvsoc")
    try:
        with pytest.raises(HarnessError, match=r"graph 'G' has a reentrant runner \(-R\): its context, stepping "
                                               r"and control is not supported on the GVSoC back-end"):
            prog.graph("G")
    finally:
        prog.close()


def _defined_macros(path: Path) -> set:
    """The device macros a header gives generated code (its own helpers, AT_SIM_* / AT_TARGET_*, aside)."""
    names = re.findall(r"^#define (AT_[A-Z_]+(?:RAM|FLASH)(?:_FS)?_[A-Z0-9_]+)\b", path.read_text(), re.M)
    return {n for n in names if not n.startswith(("AT_SIM_", "AT_TARGET_"))}


def test_the_target_runtime_has_every_l3_macro_of_the_host():
    """Every AT_<DEV>RAM_* / AT_<DEV>FLASH[_FS]_* name the host at_api.h gives generated code, the
    target's gives too (so that code using L3 compiles for GVSoC as for the host)."""
    host = _defined_macros(gvsoc.RUNTIME_DIR / "at_api.h")
    target = _defined_macros(gvsoc.TARGET_DIR / "at_api.h")
    assert len(host) > 150 and host <= target, sorted(host - target)


RV32 = shutil.which("riscv64-unknown-elf-gcc")
L3_USES = """
#include "at_api.h"
#include "KernelLibStdTypes.h"
AT_HYPERRAM_T Ram;
AT_QSPIFLASH_FS_T Fs;
int use(char *l2);
int use(char *l2)
{
    AT_HYPERRAM_CONF_T rc;
    AT_QSPIFLASH_FS_CONF_T fc;
    AT_HYPERRAM_CL_EVENT e1;
    AT_QSPIFLASH_FS_FC_EVENT e2;
    int err;
    char *l3;
    AT_HYPERRAM_CONF_INIT(&rc, 3, 0);
    AT_HYPERRAM_OPEN(&Ram, &rc, &err);
    l3 = AT_HYPERRAM_ALLOC(&Ram, 64);
    AT_HYPERRAM_CL_COPY2D(&Ram, (AT_HYPERRAM_EXT_ADDR_TYPE) l3, (AT_HYPERRAM_INT_ADDR_TYPE) l2, 32, 16, 8,
                          AT_HYPERRAM_EXT2LOC, &e1);
    AT_HYPERRAM_CL_WAIT(&Ram, &e1);
    AT_HYPERRAM_FREE(&Ram, l3, 64);
    AT_HYPERRAM_CLOSE(&Ram);
    AT_QSPIFLASH_FS_CONF_INIT(&fc, 8, 0);
    AT_QSPIFLASH_FS_OPEN(&Fs, &fc, "x.dat", &err);
    AT_QSPIFLASH_FS_FC_COPY(&Fs, (AT_QSPIFLASH_FS_EXT_ADDR_TYPE) 0 + 4, (AT_QSPIFLASH_FS_INT_ADDR_TYPE) l2, 8, 0, &e2);
    AT_QSPIFLASH_FS_FC_WAIT(&Fs, &e2);
    AT_QSPIFLASH_FS_CL_COPY2D(&Fs, 0, (AT_QSPIFLASH_FS_EXT_ADDR_TYPE) 0, (AT_QSPIFLASH_FS_INT_ADDR_TYPE) l2, 8, 4, 4, 0,
                              &e2);
    AT_QSPIFLASH_FS_CL_WAIT(&Fs, &e2);
    AT_QSPIFLASH_FS_CLOSE(&Fs);
    return err;
}
"""


@pytest.mark.skipif(RV32 is None, reason="riscv64-unknown-elf-gcc not installed")
def test_l3_macros_compile_warning_free_for_rv32(tmp_path):
    """The target's L3 layer as generated code uses it, strict C99 for the cluster cores."""
    inc = gvsoc.stage_headers(tmp_path / "include")
    (tmp_path / "use.c").write_text(L3_USES)
    proc = subprocess.run([RV32, "-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs", "-std=c99", "-Wall",
                           "-Wextra", "-Werror", "-O2", "-DAT_SIM_NCORES=8", f"-I{inc}", "-c",
                           str(tmp_path / "use.c"), "-o", str(tmp_path / "use.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


PMSIS_USES = """
#include "pmsis.h"
#include "GapBuiltins.h"
#include "rt/rt_api.h"
static int Sum[AT_SIM_NCORES] PI_CL_L1;
static void Body(void *arg) {
    int id = pi_core_id();
    Sum[id] = id + *(int *) arg + (pi_is_fc() ? 1 : 0) + pi_cluster_id();
    pi_cl_team_barrier();
}
int Team(int *arg) {
    pi_cl_team_fork(0, Body, arg);
    return pi_cl_team_nb_cores() + rt_nb_pe() + Sum[0];
}
"""


@pytest.mark.skipif(RV32 is None, reason="riscv64-unknown-elf-gcc not installed")
def test_sdk_header_names_compile_for_rv32(tmp_path):
    """A kernel including pmsis.h (and the other SDK header names) builds for the target as on the
    host: the GVSoC back-end stages them beside the target's at_api.h."""
    inc = gvsoc.stage_headers(tmp_path / "include")
    (tmp_path / "use.c").write_text(PMSIS_USES)
    proc = subprocess.run([RV32, "-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs", "-std=c99", "-Wall",
                           "-Wextra", "-Werror", "-O2", "-DAT_SIM_NCORES=8", "-D__EMUL__", f"-I{inc}", "-c",
                           str(tmp_path / "use.c"), "-o", str(tmp_path / "use.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.gvsoc
@needs_gvsoc
def test_a_pmsis_kernel_runs_on_the_cluster_as_on_the_host(tmp_path):
    """The PMSIS-style basic kernel of tests/harness/test_gap_builtins.py (pi_cl_team_fork of
    every core, pi_core_id, pi_cl_team_nb_cores, a barrier before core 0 sums) on GVSoC's 8 cores:
    the host simulator's result."""
    gen = write_pmsis_gen(tmp_path / "gen")
    prog = host_harness.build(gen, sources=[COVERAGE_DIR / "PmsisCore.c"], include_dirs=[COVERAGE_DIR],
                              backend="gvsoc")
    out = np.full(1 + 64, -7, dtype=np.int32)
    prog.call("PmsisInfo", Out=out)
    per_core = [100 * gvsoc.CORES + i for i in range(gvsoc.CORES)]
    assert out[1:1 + gvsoc.CORES].tolist() == per_core and out[0] == sum(per_core)
