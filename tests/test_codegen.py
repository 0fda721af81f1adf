"""Generated C: golden files, determinism, warning-free C99, atomic writes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import CodegenError

from .conftest import EXAMPLE_NAMES, EXAMPLES, ROOT, example_reference, run_model

RUNTIME = ROOT / "host_harness" / "runtime"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"]


def c_files(out_dir: Path):
    return sorted(p for p in out_dir.iterdir() if p.suffix in (".c", ".h"))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_matches_golden(name, generated_examples, golden):
    for path in c_files(generated_examples[name]):
        golden(f"{name}/{path.name}", path.read_text())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_same_model_same_bytes(name, generated_examples, tmp_path):
    proc = run_model(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    for path in c_files(generated_examples[name]) + [generated_examples[name] / (c_files(generated_examples[name])[0].stem + ".json")]:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not available")
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_generated_c_is_warning_free_c99(name, generated_examples):
    out = generated_examples[name]
    extra = [f"-I{d}" for d in getattr(example_reference(name), "INCLUDE_DIRS", ())]   # a library's headers
    for src in (p for p in c_files(out) if p.suffix == ".c"):
        cmd = ["gcc", *CFLAGS, "-fsyntax-only", f"-I{RUNTIME}", f"-I{EXAMPLES / name}", *extra, f"-I{out}", str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_generation_failure_leaves_no_partial_files(tmp_path, monkeypatch):
    target = tmp_path / "out"
    files = {"A.c": "int a;\n", "A.h": "extern int a;\n"}
    real_replace = os.replace
    calls = []

    def flaky_replace(src, dst):
        calls.append(dst)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(CodegenError, match="cannot write generated files"):
        write_files(files, str(target))
    monkeypatch.setattr(os, "replace", real_replace)
    assert not [p for p in target.iterdir() if not p.name.startswith(".autotiler-")] if target.exists() else True
    assert not list(target.glob(".autotiler-*"))


def test_model_error_writes_nothing(tmp_path):
    script = tmp_path / "bad_model.py"
    script.write_text(
        "import sys\nfrom autotiler import *\n"
        "if TilerParseOptions(sys.argv): sys.exit(1)\n"
        "SetGeneratedFilesNames('BadKernels.c', 'BadKernels.h')\n"
        "UserKernel('K', KernelDimensions(1, 8, 8, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,\n"
        "  CArgs(TCArg('int *', 'In')), Calls(Call('Missing', LOC_INNER_LOOP, Bindings())),\n"
        "  KerArgs(KerArg('In', OBJ_IN_DB, 8, 8, 4, 0, 0, 0, 'In', 0)))\n"
        "GenerateTilingCode()\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script), "-o", str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad_model.py:6" in lines[0] and "unknown basic kernel 'Missing'" in lines[0]
    assert not out.exists() or not any(out.iterdir())


def test_cli_runs_model_and_reports_one_line_errors(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ok = subprocess.run([sys.executable, "-m", "autotiler", str(EXAMPLES / "matrix_add" / "model.py"), "-o", str(tmp_path)],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "MatAdd: 38 tiles of 8 lines (last 4)" in ok.stdout and (tmp_path / "MatAddKernels.c").exists()
    bad = subprocess.run([sys.executable, "-m", "autotiler", str(EXAMPLES / "matrix_add" / "model.py"), "--L1", "100",
                          "-o", str(tmp_path / "x")], capture_output=True, text=True, env=env)
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1 and "no tiling fits the L1 budget of 100 bytes" in bad.stderr


def test_four_name_form_writes_init_files(tmp_path):
    with Model() as m:
        SetGeneratedFilesNames("XInit.c", "XInit.h", "XKernels.c", "XKernels.h")
        LibKernel("Copy", CALL_SEQUENTIAL, CArgs(TCArg("int *", "In"), TCArg("int *", "Out"), TCArg("int", "N")), "")
        UserKernel("K", KernelDimensions(1, 16, 16, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(TCArg("int *", "In"), TCArg("int *", "Out")),
                   Calls(Call("Copy", LOC_INNER_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                                 K_Arg("In", KER_ARG_TILE_H)))),
                   KerArgs(KerArg("In", OBJ_IN_DB, 16, 16, 4, 0, 0, 0, "In", 0),
                           KerArg("Out", OBJ_OUT_DB, 16, 16, 4, 0, 0, 0, "Out", 0)))
        files = generate(m)
    assert set(files) == {"XInit.c", "XInit.h", "XKernels.c", "XKernels.h", "XKernels.json"}
    assert "char L1_Memory[_L1_Memory_SIZE]" in files["XInit.c"]
    assert '#include "XInit.h"' in files["XKernels.h"]
