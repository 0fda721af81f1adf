"""The ``autotiler`` command (issue "Graph mode" §6), run as ``python -m autotiler`` in a
subprocess on a small graph model (three MatAdd-like nodes, two constants, a tight L2 so that one
constant is prefetched from flash): generate, build, run on .npy files, report with a PNG, help and
version, and each error path with its one-line message and exit status."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from .conftest import ROOT

MATADD = ROOT / "examples" / "matrix_add"
ITEMS = 32
BUILD = ["--sources", str(MATADD / "MatAddBasicKernels.c"), "-I", str(MATADD)]

MODEL = '''
import os
import sys

import numpy as np

from autotiler import *
from tests.graph_helpers import ITEMS, const, inp, lib_add, local, mat_add, out, write_bin

if TilerParseOptions(sys.argv):
    sys.exit(1)
here = os.path.dirname(os.path.abspath(__file__))
SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
SetMemorySizes(51200, 3 * 4 * ITEMS)
lib_add()
for k in ("K1", "K2", "K3"):
    mat_add(k)
w1 = write_bin(os.path.join(here, "w1.bin"), np.arange(ITEMS))
w2 = write_bin(os.path.join(here, "w2.bin"), 2 * np.arange(ITEMS) - 5)
CreateGraph("G", CArgs(inp(), const("W1", w1), const("W2", w2), out()), CArgs(local("T1"), local("T2")))
AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T1", 0)))
AddNode("K2", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "T2", 0)))
AddNode("K3", Bindings(GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "Out", 0)))
CloseGraph()
GenerateTilingCode()
'''


def autotiler(*args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "autotiler", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def one_line_error(proc, status: int, *fragments) -> None:
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotiler: error: "), proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def reference(x: np.ndarray) -> np.ndarray:
    t1 = x.ravel() + np.arange(ITEMS)
    t2 = t1 + (2 * np.arange(ITEMS) - 5)
    return (t2 + t1).astype(np.int32)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The model script, generated into gen/ (quietly), and an input x.npy."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "model.py").write_text(MODEL)
    proc = autotiler("generate", "model.py", "-o", "gen", "-q", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and (tmp / "gen" / "GraphKernels.c").exists()
    np.save(tmp / "x.npy", (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, 4, 8))
    return tmp


def test_generate_alias_prints_the_graph_table(work):
    proc = autotiler("model.py", "-o", "gen2", cwd=work)  # the original form: no subcommand
    assert proc.returncode == 0, proc.stderr
    assert "graph G: 3 node(s): 0 K1, 1 K2, 2 K3" in proc.stdout
    assert "flash->L2" in proc.stdout and "static L2" in proc.stdout and "dynamic L2" in proc.stdout
    assert (work / "gen2" / "GraphKernels.json").exists()


def test_build_prints_library_and_cache_hit(work):
    first = autotiler("build", "gen", *BUILD, cwd=work)
    assert first.returncode == 0, first.stderr
    again = autotiler("build", "gen", *BUILD, "--platform", "gap8", cwd=work)
    assert again.returncode == 0, again.stderr
    lib = again.stdout.splitlines()[0]
    assert lib.startswith("library ") and lib.endswith("(cache hit)") and os.path.exists(lib.split()[1])
    assert "kernels: K1, K2, K3" in again.stdout and "graphs: G" in again.stdout


def test_build_and_run_allow_edits(work):
    """A hand-edited generated file: refused by default (the hint names --allow-edits); built and
    run with --allow-edits, which names the edited file on stderr."""
    shutil.copytree(work / "gen", work / "edited")
    c_file = work / "edited" / "GraphKernels.c"
    c_file.write_text(c_file.read_text() + "\n/* a comment added by hand */\n")
    one_line_error(autotiler("build", "edited", *BUILD, cwd=work), 1, "GraphKernels.c (changed) is not of it",
                   "autotiler build --allow-edits")
    built = autotiler("build", "edited", *BUILD, "--allow-edits", cwd=work)
    assert built.returncode == 0, built.stderr
    assert built.stderr == (f"autotiler: warning: {work / 'edited'}: building GraphKernels.c as edited by hand, not "
                            "as generated (regenerate to undo the edits)\n")
    ran = autotiler("run", "edited", *BUILD, "--allow-edits", "--graph", "G", "--input", "In=x.npy", "--output",
                    "Out=edited.npy", cwd=work)
    assert ran.returncode == 0, ran.stderr
    np.testing.assert_array_equal(np.load(work / "edited.npy").ravel(), reference(np.load(work / "x.npy")))


def test_run_graph_writes_outputs(work):
    proc = autotiler("run", "gen", "--graph", "G", "--input", "In=x.npy", "--output", "Out=y.npy", *BUILD, cwd=work)
    assert proc.returncode == 0, proc.stderr
    got = np.load(work / "y.npy")
    assert got.dtype == np.int32 and got.shape == (1, 4, 8)
    np.testing.assert_array_equal(got.ravel(), reference(np.load(work / "x.npy")))
    assert "G_Construct:" in proc.stdout and "G: " in proc.stdout and " cycles (compute " in proc.stdout
    assert "flash->L2" in proc.stdout and "wrote Out to y.npy (int32, shape (1, 4, 8))" in proc.stdout


def test_run_kernel(work):
    proc = autotiler("run", "gen", "--kernel", "K2", "--input", "In1=x.npy", "--input", "In2=x.npy",
                     "--output", "Out=k.npy", *BUILD, cwd=work)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(work / "k.npy"), 2 * np.load(work / "x.npy"))
    assert proc.stdout.startswith("K2: ") and "L2->L1" in proc.stdout


def test_report_prints_plan_and_writes_png(work):
    proc = autotiler("report", "gen", "--png", "plan.png", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "graph G: 3 node(s)" in proc.stdout and "lower bound" in proc.stdout and "wrote plan.png" in proc.stdout
    data = (work / "plan.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    default = autotiler("report", "gen", cwd=work)
    assert default.returncode == 0 and (work / "gen" / "G_l2_plan.png").stat().st_size > 0


def test_help_and_version(work):
    proc = autotiler("--help", cwd=work)
    assert proc.returncode == 0
    for word in ("generate", "build", "run", "report", "--graph", "--kernel", "--input", "--output", "--png",
                 "--sources", "--cores", "--L1", "--L2", "--L3", "--objective", "--platform", "-q", "--verbose",
                 "time_exhaustive", "original", "max_l1", "gap9"):
        assert word in proc.stdout, word
    version = autotiler("--version", cwd=work)
    assert version.returncode == 0 and version.stdout.startswith("autotiler 0.")


@pytest.mark.parametrize("args", [["--help"], ["report", "--help"], ["--version"]])
def test_a_closed_pipe_ends_quietly(work, args):
    """``autotiler --help | head``: the reader is gone before the command writes (the pipe's read
    end is closed before it starts), so every write fails; the command ends quietly as Unix tools
    do on SIGPIPE: nothing on stderr (once: 'autotiler: error: Broken pipe'), status 141 (or 0
    where argparse prints the text itself and ignores the failed write)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "autotiler", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, cwd=work, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    finally:
        os.close(write_end)
    assert proc.stderr == "" and proc.returncode in ((141,) if args == ["--help"] else (0, 141))


@pytest.mark.parametrize("args, status, fragments", [
    (["build", "nowhere"], 1, ["directory 'nowhere' not found"]),
    (["run", "nowhere", "--graph", "G"], 1, ["directory 'nowhere' not found"]),
    (["report", "nowhere"], 1, ["directory 'nowhere' not found"]),
    (["generate", "missing.py"], 1, ["model script 'missing.py' not found"]),
    (["run", "gen", "--graph", "H", "--input", "In=x.npy"], 1, ["unknown graph 'H'", "graphs are G"]),
    (["run", "gen", "--kernel", "K9"], 1, ["unknown kernel 'K9'", "K1, K2, K3"]),
    (["run", "gen", "--graph", "G", "--input", "In:x.npy"], 2, ["argument --input: 'In:x.npy' is not NAME=FILE"]),
    (["run", "gen", "--graph", "G"], 1, ["kernel 'G'", "no --input for argument 'In'", "--input In=FILE.npy"]),
    (["run", "gen", "--graph", "G", "--input", "In=none.npy"], 1, ["input file 'none.npy' not found"]),
    (["run", "gen", "--graph", "G", "--input", "Nope=x.npy"], 1, ["'G' has no argument 'Nope'"]),
    (["run", "gen", "--graph", "G", "--input", "In=f.npy"], 1, ["argument 'In'", "float64", "int32"]),
    (["run", "gen"], 2, ["one of the arguments --graph --kernel is required"]),
    (["generate", "model.py", "--L1", "0"], 2, ["argument --L1: '0' must be positive"]),
    (["generate", "model.py", "--objective", "fast"], 2, ["argument --objective: invalid choice: 'fast'"]),
    (["frobnicate"], 1, ["model script 'frobnicate' not found"]),
])
def test_errors_are_one_line(work, args, status, fragments):
    np.save(work / "f.npy", np.zeros((1, 4, 8)))
    one_line_error(autotiler(*args, cwd=work), status, *fragments)


def test_verbose_shows_the_traceback(work):
    proc = autotiler("--verbose", "build", "nowhere", cwd=work)
    assert proc.returncode == 1 and "Traceback" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == ("autotiler: error: directory 'nowhere' not found (generate into "
                                                    "it first: autotiler generate MODEL.py -o nowhere)")


def test_model_error_is_one_line(work):
    proc = autotiler("generate", "model.py", "-o", "gen3", "--L1", "100", cwd=work)
    one_line_error(proc, 1, "no tiling fits the L1 budget of 100 bytes")
