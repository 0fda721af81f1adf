"""bench/rv32.py (issue 11 item 4): generated code, basic kernels, the CNN basic kernels and
Gap.h compile warning-free for rv32imc as strict C99 with Debian's riscv64-unknown-elf-gcc; the
check's failure paths (a compiler diagnostic: exit 1; no compiler: exit 2 with the hint)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT, bench_script

SCRIPT = ROOT / "bench" / "rv32.py"


RV32 = bench_script("rv32")
HAVE_CC = shutil.which(RV32.default_cc()) is not None and shutil.which(RV32.size_tool_for(RV32.default_cc()))


def run_script(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.mark.skipif(not HAVE_CC, reason=f"{RV32.default_cc()} is not installed ({RV32.INSTALL_HINT})")
def test_examples_cnn_kernels_and_gap_h_compile_for_rv32(tmp_path):
    """matrix_add and matadd_l3 (L3 RAM: the target's device macros) against the target's
    at_api.h, the CNN library and Gap.h: no diagnostics, sizes reported."""
    out = tmp_path / "rv32.json"
    proc = run_script("--examples", "matrix_add,matadd_l3", "--json", str(out))
    if proc.returncode == 2:   # the compiler is there, picolibc is not
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(out.read_text())
    assert res["ok"] and "-march=rv32imc -mabi=ilp32" in res["command"] and "-Werror" in res["command"]
    runtimes = {e["name"]: e["runtime"] for e in res["examples"]}
    assert runtimes == {"matrix_add": "target", "matadd_l3": "target"}
    for e in res["examples"]:
        assert e["generated_text"] > 0 and e["basic_kernels_text"] > 0, e
        assert e["generated_text"] + e["basic_kernels_text"] == sum(o["text"] for o in e["generated"] + e["basic_kernels"])
    assert len(res["cnn_kernels"]["objects"]) == len(list(RV32.CNN_KERNELS_DIR.glob("*.c")))
    assert all(o["text"] > 0 for o in res["cnn_kernels"]["objects"])
    assert res["gap_h"]["text"] > 0          # every builtin compiled (-fkeep-inline-functions)
    # -D__EMUL__ changes nothing while no compiled file tests it (the script's docstring)
    assert res["emul_sensitive"] == []
    assert "matrix_add" in proc.stdout and "total .text" in proc.stdout


def test_a_compiler_diagnostic_fails_with_its_first_lines(tmp_path):
    """A compiler that reports a warning (as an error, -Werror) on every unit: exit 1, the unit and
    the compiler's lines printed, no results written. Needs no cross compiler."""
    fake = tmp_path / "fake-gcc"
    fake.write_text("#!/bin/sh\n"
                    "for a in \"$@\"; do case \"$a\" in *probe.c) exit 0;; esac; done\n"
                    "for a in \"$@\"; do case \"$a\" in --version) echo fake-gcc 1.0; exit 0;; esac; done\n"
                    "echo \"unit.c:3:7: error: unused variable 'x' [-Werror=unused-variable]\" >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    out = tmp_path / "rv32.json"
    proc = run_script("--examples", "matrix_max", "--cc", str(fake), "--size", shutil.which("true") or "/bin/true",
                      "--json", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED <gap_h.c>" in proc.stderr and "FAILED autotiler/generators/cnn_kernels/CNN_SoftMax.c" in proc.stderr
    assert "FAILED <generated>/matrix_max/MatMaxKernels.c (runtime target)" in proc.stderr
    assert "FAILED examples/matrix_max/MatMaxBasicKernels.c" in proc.stderr
    assert "unused variable 'x' [-Werror=unused-variable]" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("how", ["env", "option"])
def test_missing_compiler_exits_2_with_the_install_hint(tmp_path, how):
    missing = str(tmp_path / "no-such-riscv64-unknown-elf-gcc")
    if how == "env":
        proc = run_script("--json", str(tmp_path / "r.json"), env={RV32.CC_ENV: missing})
    else:
        proc = run_script("--cc", missing, "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert missing in proc.stderr
    assert "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf" in proc.stderr
    assert not (tmp_path / "r.json").exists()
