"""A probe application on GVSoC's pulp-open cluster, shared by the tests that compare a builtin's
target form (Xpulpv2) with its plain C (tests/test_gvsoc_simd.py, tests/test_gvsoc_sq8_conv.py).

The probe body is compiled twice, ``probe_insn`` (Gap.h's target form) and ``probe_plain``
(``AT_GAP_PLAIN_C``), each filling ``out[rows][N_OPS]``; core 0 runs both and prints every pair of
results. Built with pulp-runtime's make rules in the work directory and run on GVSoC.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from host_harness import gvsoc

MAIN = r"""
#include <pulp.h>
#include <stdio.h>
#include "operands.h"

void probe_insn(CTYPE out[ROWS][N_OPS]);
void probe_plain(CTYPE out[ROWS][N_OPS]);
static CTYPE res_insn[ROWS][N_OPS], res_plain[ROWS][N_OPS];

static int cluster_entry(void)
{
    if (get_core_id() != 0)
        return 0;
    probe_insn(res_insn);
    probe_plain(res_plain);
    for (int b = 0; b < ROWS; b++)
        for (int i = 0; i < N_OPS; i++)
            printf("@R %d %d %08x %08x\n", b, i, (unsigned)res_insn[b][i], (unsigned)res_plain[b][i]);
    printf("@DONE\n");
    return 0;
}

int main(void)
{
    cluster_start(0, cluster_entry);
    return cluster_wait(0);
}
"""


def _run_app(work: Path) -> str:
    cmd = f'source "{gvsoc.gvsoc_home()}/env.sh" >/dev/null && make -s all run "${{RT_MAKE_ARGS[@]}}"'
    proc = subprocess.run(["bash", "-c", cmd], cwd=work, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "@DONE" in out, out[-3000:]
    return out


def run_probe(work: Path, app: str, operands_h: str, probe_body: str, rows: int, n: int, ctype: str,
              cflags: str = "") -> tuple:
    """(results, output): results[0] the target form's, results[1] the plain C's, each [rows][n] as
    uint32; output what the build and the run printed."""
    inc = gvsoc.stage_headers(work / "include")
    (work / "operands.h").write_text(operands_h)
    (work / "probe_insn.c").write_text("#define PROBE_NAME probe_insn\n" + probe_body)
    (work / "probe_plain.c").write_text("#define AT_GAP_PLAIN_C\n#define PROBE_NAME probe_plain\n" + probe_body)
    (work / "main.c").write_text(f"#define ROWS {rows}\n#define CTYPE {ctype}\n" + MAIN)
    (work / "Makefile").write_text(
        f"PULP_APP = {app}\nPULP_APP_SRCS = main.c probe_insn.c probe_plain.c\n"
        f"PULP_CFLAGS = -O2 -Wall -DAT_SIM_NCORES={gvsoc.CORES} -D__EMUL__ -I{work} -I{inc} {cflags}\n"
        "include $(PULPRT_HOME)/rules/pulp.mk\n")
    out = _run_app(work)
    got = np.zeros((2, rows, n), dtype=np.uint32)
    for b, i, insn, plain in re.findall(r"@R (\d+) (\d+) ([0-9a-f]{8}) ([0-9a-f]{8})", out):
        got[:, int(b), int(i)] = int(insn, 16), int(plain, 16)
    return got, out


def code_words(work: Path, app: str, function: str) -> list:
    """The instruction words of ``function`` in the probe application (objdump -d; PULP's own
    instructions show as .4byte: the assembler knows them only by their encoding)."""
    dump = subprocess.run(["bash", "-c", f'source "{gvsoc.gvsoc_home()}/env.sh" >/dev/null && '
                           f'riscv64-unknown-elf-objdump -d build/{app}/{app}'], cwd=work,
                          capture_output=True, text=True).stdout
    code = dump.split(f"<{function}>:")[1].split("\n\n")[0]
    return [int(w, 16) for w in re.findall(r"\t([0-9a-f]{8}) +\t", code)]
