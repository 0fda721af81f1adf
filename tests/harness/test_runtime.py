"""Host harness: the simulated chip (async DMA, cores, clock, faults) and the build/run API.

Every test compiles small hand-written "generated-like" C plus basic kernels in a temp dir, with
a hand-written manifest, and checks a behaviour that a broken harness would get wrong.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import host_harness
from autotiler.errors import HarnessError
from autotiler.platforms import get_platform
from host_harness.builder import RUNTIME_DIR
from host_harness.toolchain import have_sanitizers

POISON_I32 = np.frombuffer(b"\xcd" * 4, dtype=np.int32)[0]

# ---------------------------------------------------------------------------------------------
# Basic kernels (user sources)
# ---------------------------------------------------------------------------------------------

ADD_ONE_H = """
#ifndef ADD_ONE_H
#define ADD_ONE_H
#include "Gap.h"
typedef struct { Word32 *In; Word32 *Out; int N; } AddOne_Arg_T;
void KerParAddOne(AddOne_Arg_T *Arg);
void KerParAddOneNoCoreId(AddOne_Arg_T *Arg);
void KerParBarrierBug(AddOne_Arg_T *Arg);
void KerParWaitInCore(AddOne_Arg_T *Arg);
void KerAddOneSeq(Word32 *In, Word32 *Out, int N);
void KerOverrun(Word32 *Out, int N);
void KerBuiltins(Word32 *Out);
#endif
"""

ADD_ONE_C = """
#include "AddOne.h"

/* Out[i] = In[i] + 1, chunked over the cores as the GAP basic kernels do. */
void KerParAddOne(AddOne_Arg_T *Arg)
{
    int Chunk = (Arg->N + gap_ncore() - 1) / gap_ncore();
    int First = gap_coreid() * Chunk, Last = gap_min(First + Chunk, Arg->N), i;
    for (i = First; i < Last; i++) Arg->Out[i] = Arg->In[i] + 1;
    gap_waitbarrier(0);
}

/* BUG: every core does chunk 0. */
void KerParAddOneNoCoreId(AddOne_Arg_T *Arg)
{
    int Chunk = (Arg->N + gap_ncore() - 1) / gap_ncore(), i;
    for (i = 0; i < Chunk; i++) Arg->Out[i] = Arg->In[i] + 1;
    gap_waitbarrier(0);
}

/* BUG: core 0 skips the barrier. */
void KerParBarrierBug(AddOne_Arg_T *Arg)
{
    (void)Arg;
    if (gap_coreid() == 0) return;
    gap_waitbarrier(0);
}

/* BUG: core 3 waits on an event nobody issued (a fault raised on a core's stack). */
void KerParWaitInCore(AddOne_Arg_T *Arg)
{
    AT_L2_EVENT Evt;
    (void)Arg;
    if (gap_coreid() == 3) AT_L2_WAIT(0, &Evt);
    gap_waitbarrier(0);
}

void KerAddOneSeq(Word32 *In, Word32 *Out, int N)
{
    int i;
    for (i = 0; i < N; i++) Out[i] = In[i] + 1;
}

/* BUG: writes one element past the end. */
void KerOverrun(Word32 *Out, int N) { Out[N] = 1; }

void KerBuiltins(Word32 *Out)
{
    int k = 0;
    Out[k++] = gap_clip(300, 7);       Out[k++] = gap_clip(-300, 7);   Out[k++] = gap_clip(5, 7);
    Out[k++] = gap_clipu(-5, 8);       Out[k++] = gap_clipu(300, 8);   Out[k++] = gap_min(3, -2);
    Out[k++] = gap_max(3, -2);         Out[k++] = gap_abs(-7);
    Out[k++] = gap_roundnorm_reg(5, 1); Out[k++] = gap_roundnorm_reg(-5, 1); Out[k++] = gap_roundnorm_reg(7, 0);
    Out[k++] = gap_roundnorm(6, 2);    Out[k++] = gap_norm_reg(-5, 1); Out[k++] = gap_norm(20, 2);
    Out[k++] = gap_muls(0x10003, 5);   Out[k++] = gap_mulsN(300, 300, 8); Out[k++] = gap_mulsRN(3, 3, 1);
    Out[k++] = gap_macs(10, 3, -4);
    Out[k++] = gap_dotp2(gap_pack2(3, -4), gap_pack2(5, 6));
    Out[k++] = gap_sumdotp2(gap_pack2(3, -4), gap_pack2(5, 6), 10);
    Out[k++] = gap_dotp4(gap_pack4(1, 2, 3, 4), gap_pack4(-1, 2, -3, 4));
    Out[k++] = gap_sumdotp4(gap_pack4(1, 2, 3, 4), gap_pack4(1, 1, 1, 1), 100);
    Out[k++] = gap_fl1(0x80);          Out[k++] = gap_ff1(0x80);       Out[k++] = gap_cnt(0xF0F0);
    Out[k++] = gap_ncore();            Out[k++] = gap_coreid();        Out[k++] = gap8_ncore();
}
"""

BUILTINS_EXPECTED = [127, -128, 5, 0, 255, -2, 3, 7, 3, -2, 7, 2, -3, 5, 15, 351, 5, -2, -9, 1, 10, 110,
                     7, 7, 8, 8, 0, 8]

# ---------------------------------------------------------------------------------------------
# "Generated" user kernels: one file with a correct double-buffered kernel and many buggy ones
# ---------------------------------------------------------------------------------------------

SUITE_C = r"""
#include "Suite.h"

L1_CL_MEM AT_L1_POINTER L1_Memory;

/* 200 Word32 in 2 tiles of 400 bytes: In buffers at L1+0/+400, Out buffers at L1+800/+1200. */
static void copy_add(Word32 * __restrict__ In, Word32 * __restrict__ Out, void (*Ker)(AddOne_Arg_T *))
{
    AT_L2_EVENT DmaR_Evt1, DmaW_Evt1;
    AddOne_Arg_T S_KerArg0, *KerArg0 = &S_KerArg0;
    int T0Ind, T0Ind_Total = 0, _SP_Out = 0, _C_Out = 0;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In + 0), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 0), 400, 0, &DmaR_Evt1);
    for (T0Ind = 0; T0Ind < 2; T0Ind++, T0Ind_Total++) {
        int T0Ind_Last = (T0Ind == 1);
        AT_L2_WAIT(0, &DmaR_Evt1);
        if (!T0Ind_Last)
            AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In + 400 * (T0Ind + 1)),
                       ((AT_L2_INT_ADDR_TYPE) L1_Memory + 400 * ((T0Ind_Total + 1) % 2)), 400, 0, &DmaR_Evt1);
        KerArg0->In = (Word32 *) (L1_Memory + 400 * (T0Ind_Total % 2));
        KerArg0->Out = (Word32 *) (L1_Memory + 800 + 400 * (T0Ind_Total % 2));
        KerArg0->N = 100;
        AT_SIM_COMPUTE(100);
        AT_FORK(gap_ncore(), (void *) Ker, (void *) KerArg0);
        __CALL(Ker, KerArg0);
        if (_SP_Out) AT_L2_WAIT(0, &DmaW_Evt1);
        AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out + _C_Out),
                   ((AT_L2_INT_ADDR_TYPE) L1_Memory + 800 + 400 * (T0Ind_Total % 2)), 400, 1, &DmaW_Evt1);
        _SP_Out = 400;
        _C_Out += 400;
    }
    AT_L2_WAIT(0, &DmaW_Evt1);
}

void CopyAdd(Word32 * __restrict__ In, Word32 * __restrict__ Out) { copy_add(In, Out, KerParAddOne); }

void BadChunk(Word32 * __restrict__ In, Word32 * __restrict__ Out) { copy_add(In, Out, KerParAddOneNoCoreId); }

void ReadBeforeWait(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1, DmaW_Evt1;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    AT_SIM_COMPUTE(200);
    KerAddOneSeq((Word32 *) L1_Memory, (Word32 *) (L1_Memory + 800), 200); /* BUG: before the wait */
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 800), 800, 1, &DmaW_Evt1);
    AT_L2_WAIT(0, &DmaW_Evt1);
}

void OutOfRange(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In + 400), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void OutOfRangeL1(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 1200), 800, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void WaitUnknown(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1, DmaR_Evt2;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 400, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt2); /* BUG: never issued */
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void WaitTwice(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 400, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1); /* BUG: already waited */
}

void PendingAtReturn(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 400, 0, &DmaR_Evt1);
}

void IssueOnPending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 400, 0, &DmaR_Evt1);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In + 400), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 400), 400, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void SourceModified(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    In[3] = 42; /* BUG: the DMA is still reading In */
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void DestWritten(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    ((Word32 *) L1_Memory)[5] = 1; /* BUG: the DMA is still writing there */
    AT_L2_WAIT(0, &DmaR_Evt1);
}

static void fork_on(Word32 *In, Word32 *Out, void (*Ker)(AddOne_Arg_T *))
{
    AddOne_Arg_T S_KerArg0, *KerArg0 = &S_KerArg0;
    KerArg0->In = In;
    KerArg0->Out = Out;
    KerArg0->N = 200;
    AT_FORK(gap_ncore(), (void *) Ker, (void *) KerArg0);
    __CALL(Ker, KerArg0);
}

void BarrierMismatch(Word32 * __restrict__ In, Word32 * __restrict__ Out) { fork_on(In, Out, KerParBarrierBug); }

void WaitInCore(Word32 * __restrict__ In, Word32 * __restrict__ Out) { fork_on(In, Out, KerParWaitInCore); }

void Clock(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_SIM_COMPUTE(100);
}

void L1AllocTooBig(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L1_POINTER Big = AT_L1_ALLOC(0, 100000);
    AT_L1_POINTER Small = AT_L1_ALLOC(0, 1000);
    (void) In;
    Out[0] = (Big == 0);
    Out[1] = (Small != 0);
    if (Small) AT_L1_FREE(0, Small, 1000);
}

/* Copies L1 (never written by this kernel) out: must read as poison on every call. */
void PeekL1(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaW_Evt1;
    int i;
    (void) In;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 1, &DmaW_Evt1);
    AT_L2_WAIT(0, &DmaW_Evt1);
    for (i = 0; i < 1600; i++) L1_Memory[i] = 0;
}

void Copy2D(Word8 * __restrict__ In, Word8 * __restrict__ Out, int W, int X0, int Y0, int Cols, int Rows)
{
    AT_L2_EVENT DmaR_Evt1, DmaW_Evt1;
    AT_L2_COPY2D(0, ((AT_L2_EXT_ADDR_TYPE) In + Y0 * W + X0), ((AT_L2_INT_ADDR_TYPE) L1_Memory),
                 Rows * Cols, W, Cols, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_L2_COPY2D(0, ((AT_L2_EXT_ADDR_TYPE) Out + Y0 * W + X0), ((AT_L2_INT_ADDR_TYPE) L1_Memory),
                 Rows * Cols, W, Cols, 1, &DmaW_Evt1);
    AT_L2_WAIT(0, &DmaW_Evt1);
}

void Bad2D(Word8 * __restrict__ In, Word8 * __restrict__ Out, int W, int X0, int Y0, int Cols, int Rows)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out; (void) X0; (void) Y0; (void) Rows;
    AT_L2_COPY2D(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 30, W, Cols, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void ScaleF(float * __restrict__ In, float * __restrict__ Out, float F, int N)
{
    int i;
    for (i = 0; i < N; i++) Out[i] = In[i] * F;
}

void Builtins(Word32 * __restrict__ Out) { KerBuiltins(Out); }

void Overrun(Word32 * __restrict__ In, Word32 * __restrict__ Out) { (void) In; KerOverrun(Out, 200); }

void L2AllocOverrun(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    AT_L2_POINTER Buf = AT_L2_ALLOC(0, 100);
    (void) In; (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Buf), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 200, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_L2_FREE(0, Buf, 100);
}

void FreeWhilePending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaW_Evt1;
    AT_L2_POINTER Buf = AT_L2_ALLOC(0, 100);
    (void) In; (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Buf), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 100, 1, &DmaW_Evt1);
    AT_L2_FREE(0, Buf, 100);
    AT_L2_WAIT(0, &DmaW_Evt1);
}

void SignedOverflow(Word32 * __restrict__ In, Word32 * __restrict__ Out) { Out[0] = In[199] + 2147483600; }
"""

IN_OUT = ["CopyAdd", "BadChunk", "ReadBeforeWait", "OutOfRange", "OutOfRangeL1", "WaitUnknown", "WaitTwice",
          "PendingAtReturn", "IssueOnPending", "SourceModified", "DestWritten", "BarrierMismatch",
          "WaitInCore", "Clock", "L1AllocTooBig", "PeekL1", "Overrun", "SignedOverflow",
          "L2AllocOverrun", "FreeWhilePending"]
BYTES_2D = ["Copy2D", "Bad2D"]


def ptr(name: str, ctype: str) -> dict:
    return {"name": name, "ctype": f"{ctype} * __restrict__", "pointer": True, "float": False}


def scalar(name: str, ctype: str = "int", is_float: bool = False) -> dict:
    return {"name": name, "ctype": ctype, "pointer": False, "float": is_float}


def suite_kernels() -> list[dict]:
    kernels = [{"name": k, "args": [ptr("In", "Word32"), ptr("Out", "Word32")]} for k in IN_OUT]
    kernels += [{"name": k, "args": [ptr("In", "Word8"), ptr("Out", "Word8")]
                 + [scalar(n) for n in ("W", "X0", "Y0", "Cols", "Rows")]} for k in BYTES_2D]
    kernels.append({"name": "ScaleF", "args": [ptr("In", "float"), ptr("Out", "float"),
                                               scalar("F", "float", True), scalar("N")]})
    kernels.append({"name": "Builtins", "args": [ptr("Out", "Word32")]})
    return kernels


def prototype(kernel: dict) -> str:
    return f"void {kernel['name']}({', '.join(a['ctype'] + ' ' + a['name'] for a in kernel['args'])});"


def write_basic_kernels(root: Path) -> tuple[Path, Path]:
    bk = root / "bk"
    bk.mkdir(parents=True, exist_ok=True)
    (bk / "AddOne.h").write_text(ADD_ONE_H)
    (bk / "AddOne.c").write_text(ADD_ONE_C)
    return bk, bk / "AddOne.c"


def write_generated(gen: Path, name: str, c_text: str, kernels: list[dict], l1: dict, l2=None) -> Path:
    """A generated-like directory: <name>.c, <name>.h and <name>.json (the manifest)."""
    gen.mkdir(parents=True, exist_ok=True)
    decl = "extern AT_L1_POINTER L1_Memory;" if l1.get("dynamic", True) else "extern char L1_Memory[];"
    header = "\n".join([f"#ifndef {name.upper()}_H", f"#define {name.upper()}_H",
                        '#include "KernelLibStdTypes.h"', '#include "AddOne.h"', decl,
                        *map(prototype, kernels), "#endif", ""])
    (gen / f"{name}.h").write_text(header)
    (gen / f"{name}.c").write_text(textwrap.dedent(c_text))
    manifest = {"format": "autotiler-manifest/1", "c_files": [f"{name}.c"], "header": f"{name}.h",
                "l1": l1, "l2": l2 or {"symbol": "L2_Memory", "size": 0, "dynamic": True}, "kernels": kernels}
    (gen / f"{name}.json").write_text(json.dumps(manifest, indent=1))
    return gen


# builds go to a private cache (tests/conftest.py), neither depending on nor polluting ~/.cache
pytestmark = pytest.mark.usefixtures("private_harness_cache")


@pytest.fixture(scope="module")
def suite_src(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    bk, add_one = write_basic_kernels(root)
    gen = write_generated(root / "gen", "Suite", SUITE_C, suite_kernels(),
                          {"symbol": "L1_Memory", "size": 1600, "dynamic": True})
    return {"gen": gen, "sources": [add_one], "include_dirs": [bk]}


@pytest.fixture(scope="module")
def prog(suite_src):
    return host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                              include_dirs=suite_src["include_dirs"])


def io_arrays(n: int = 200):
    return np.arange(n, dtype=np.int32) * 3 - 100, np.zeros(n, dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# Correct kernels: results and counters
# ---------------------------------------------------------------------------------------------

def test_double_buffered_parallel_kernel_is_exact(prog):
    a, out = io_arrays()
    prog.call("CopyAdd", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)
    np.testing.assert_array_equal(a, np.arange(200, dtype=np.int32) * 3 - 100)  # input copied back intact


def test_counters_of_double_buffered_kernel(prog):
    a, out = io_arrays()
    c = prog.call("CopyAdd", In=a, Out=out)
    assert (c["l2_to_l1"], c["l1_to_l2"], c["transfers"]) == (800, 800, 4)
    assert (c["l3_to_l2"], c["l2_to_l3"]) == (0, 0)
    assert (c["peak_l1"], c["peak_l2"]) == (1600, 1600)
    assert (c["compute_cycles"], c["fork_cycles"]) == (200, 120)
    # Hand-computed on gap8 (issue 10, setup 30, 8 B/cycle, wait 4, fork 60): R0 lands at 90, R1
    # is prefetched under tile 0's compute, W0 overlaps tile 1, only the final W1 is waited for.
    assert (c["cycles"], c["stall_cycles"]) == (528, 152)
    assert c["dma_busy_cycles"] == {"cluster": 4 * 80, "udma": 0}


def test_clock_on_hand_computed_case(prog):
    a, out = io_arrays()
    c = prog.call("Clock", In=a, Out=out)
    p = get_platform("gap8")
    # issue (10) + setup (30) + 800 B / 8 B per cycle (100) + compute (100); the wait's own 4
    # cycles are hidden in the stall because the transfer is still running when it starts.
    assert c["cycles"] == 10 + 30 + 100 + 100 == 240
    assert c["cycles"] == p.dma_issue_cycles + p.cluster_dma.transfer_cycles(800) + 100
    assert c["stall_cycles"] == 30 + 100 - p.wait_cycles
    assert c["compute_cycles"] == 100
    assert c["dma_busy_cycles"]["cluster"] == 130


def test_counters_are_deterministic(prog):
    runs = []
    for _ in range(2):
        a, out = io_arrays()
        runs.append(prog.call("CopyAdd", In=a, Out=out))
    assert runs[0] == runs[1]


def test_clock_follows_platform_given_at_run_time(suite_src, prog):
    fast = host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                              include_dirs=suite_src["include_dirs"], platform="gap9")
    assert fast.library == prog.library  # platform numbers are not part of the build
    a, out = io_arrays()
    c = fast.call("Clock", In=a, Out=out)
    p = get_platform("gap9")
    assert c["cycles"] == p.dma_issue_cycles + p.cluster_dma.transfer_cycles(800) + 100 != 240


def test_2d_transfer_both_directions(prog):
    src = np.arange(12 * 10, dtype=np.int8).reshape(12, 10)
    out = np.full_like(src, 7)
    c = prog.call("Copy2D", In=src, Out=out, W=10, X0=3, Y0=2, Cols=4, Rows=5)
    expect = np.full_like(src, 7)
    expect[2:7, 3:7] = src[2:7, 3:7]
    np.testing.assert_array_equal(out, expect)
    assert (c["l2_to_l1"], c["l1_to_l2"], c["transfers"]) == (20, 20, 2)
    assert c["dma_busy_cycles"]["cluster"] == 2 * get_platform("gap8").cluster_dma.transfer_cycles(20, 5)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_2d_transfer_matches_numpy_slicing(prog, data):
    check_2d_block_copy(prog, "Copy2D", data)


def check_2d_block_copy(program, kernel, data):
    """A random Rows x Cols block of a random H x W int8 matrix, copied by a 2D transfer."""
    h, w = data.draw(st.integers(1, 30)), data.draw(st.integers(1, 40))
    y0, x0 = data.draw(st.integers(0, h - 1)), data.draw(st.integers(0, w - 1))
    rows, cols = data.draw(st.integers(1, h - y0)), data.draw(st.integers(1, w - x0))
    src = np.random.default_rng(h * 100 + w).integers(-128, 128, (h, w), dtype=np.int8)
    out = np.zeros_like(src)
    program.call(kernel, In=src, Out=out, W=w, X0=x0, Y0=y0, Cols=cols, Rows=rows)
    expect = np.zeros_like(src)
    expect[y0:y0 + rows, x0:x0 + cols] = src[y0:y0 + rows, x0:x0 + cols]
    np.testing.assert_array_equal(out, expect)


def test_float_and_int_scalars(prog):
    a = np.linspace(-1, 1, 16, dtype=np.float32)
    out = np.zeros_like(a)
    prog.call("ScaleF", In=a, Out=out, F=2.5, N=10)
    np.testing.assert_allclose(out[:10], a[:10] * np.float32(2.5))
    assert not out[10:].any()


def test_builtins_semantics(prog):
    out = np.zeros(len(BUILTINS_EXPECTED), dtype=np.int32)
    prog.call("Builtins", Out=out)
    assert out.tolist() == BUILTINS_EXPECTED


def test_core_count_given_at_run_time(suite_src):
    four = host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                              include_dirs=suite_src["include_dirs"], cores=4)
    out = np.zeros(len(BUILTINS_EXPECTED), dtype=np.int32)
    four.call("Builtins", Out=out)
    assert out[25] == 4 and four.platform.cores == 4
    a, res = io_arrays()
    four.call("CopyAdd", In=a, Out=res)
    np.testing.assert_array_equal(res, a + 1)


def test_l1_symbol_is_poisoned_before_every_call(prog):
    for _ in range(2):  # PeekL1 zeroes L1 at the end: the next call must see poison again
        a, out = io_arrays()
        prog.call("PeekL1", In=a, Out=out)
        assert (out == POISON_I32).all()


# ---------------------------------------------------------------------------------------------
# Pipelining and multi-core bugs the original emulation would miss
# ---------------------------------------------------------------------------------------------

def test_reading_a_tile_before_its_wait_is_a_fault(prog):
    """The basic kernel reads its tile while the transfer filling it is in flight: poison here,
    stale data on a chip; the read itself faults, naming the transfer and its missing wait."""
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"^kernel 'ReadBeforeWait': basic kernel 'KerAddOneSeq' on core 0 reads "
                       r"L1_Memory\+\[0, 4\) before the wait of transfer #1 \(L2->L1, 800 bytes, ext In\+0, loc "
                       r"L1_Memory\+0\) at Suite\.c:\d+ \(missing AT_L2_WAIT before the basic kernel runs\): it reads "
                       r"0xCD poison on the simulator, stale data on the chip$"):
        prog.call("ReadBeforeWait", In=a, Out=out)
    assert not out.any()  # nothing copied back from a faulted call


def test_chunking_that_ignores_core_id_is_a_race(prog):
    """Every core writes chunk 0: run one after another the cores agree, on a chip they race."""
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"data race in basic kernel 'KerParAddOneNoCoreId' \(AT_FORK at "
                       r"Suite\.c:\d+\): cores 0 and 1 both write L1_Memory\+\[800, 852\)"):
        prog.call("BadChunk", In=a, Out=out)


# ---------------------------------------------------------------------------------------------
# Faults: each aborts the call with a message naming the culprit
# ---------------------------------------------------------------------------------------------

FAULTS = {
    "OutOfRange": r"transfer #1 \(L2->L1, 800 bytes, ext In\+400, loc L1_Memory\+0\) at Suite\.c:\d+: "
                  r"L2 \(ext\) side \[In\+400, In\+1200\) is not inside one live L2 allocation \('In' is",
    "OutOfRangeL1": r"transfer #1 .*L1 \(loc\) side \[L1_Memory\+1200, L1_Memory\+2000\) .*'L1_Memory'",
    "WaitUnknown": r"AT_L2_WAIT at Suite\.c:\d+ on an event with no pending transfer",
    "WaitTwice": r"AT_L2_WAIT at Suite\.c:\d+ on an event with no pending transfer",
    "PendingAtReturn": r"transfer #1 \(L2->L1, 400 bytes.* still pending when the user kernel returned",
    "IssueOnPending": r"transfer #2 .* issued on an event that still holds pending transfer #1",
    "SourceModified": r"source of transfer #1 \(L2->L1, 800 bytes.*modified while in flight.*In\+12",
    "DestWritten": r"destination of transfer #1 .*written while in flight .*L1_Memory\+20",
    "BarrierMismatch": r"barrier mismatch .*core\(s\) 1,2,3,4,5,6,7 wait at barrier #1 while core\(s\) 0 returned",
    "WaitInCore": r"AT_L2_WAIT at AddOne\.c:\d+ on an event with no pending transfer",
    "L2AllocOverrun": r"\[AT_L2_ALLOC@Suite\.c:\d+\+0, AT_L2_ALLOC@Suite\.c:\d+\+200\) is not inside",
    "FreeWhilePending": r"AT_L2_FREE at Suite\.c:\d+ frees 'AT_L2_ALLOC@Suite\.c:\d+' while transfer #1 "
                        r"\(L1->L2, 100 bytes",
}


@pytest.mark.parametrize("kernel", sorted(FAULTS))
def test_fault_raises_harness_error(prog, kernel):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=FAULTS[kernel]):
        prog.call(kernel, In=a, Out=out)
    a, out = io_arrays()  # the simulator recovers: the next call is clean
    prog.call("CopyAdd", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)


def test_2d_size_not_multiple_of_line_length(prog):
    src = np.zeros((4, 10), dtype=np.int8)
    with pytest.raises(HarnessError, match=r"size 30 is not a multiple of the line length 4"):
        prog.call("Bad2D", In=src, Out=src.copy(), W=10, X0=0, Y0=0, Cols=4, Rows=1)


def test_l1_alloc_past_capacity_returns_null(prog):
    a, out = io_arrays()
    prog.call("L1AllocTooBig", In=a, Out=out)
    assert out[:2].tolist() == [1, 1]  # 100000 bytes -> NULL, 1000 bytes -> fine


def test_l1_symbol_larger_than_capacity_fails(suite_src):
    tiny = host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                              include_dirs=suite_src["include_dirs"],
                              platform=get_platform("gap8", l1_size=1000))
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"L1 symbol 'L1_Memory' needs 1600 bytes but L1 capacity is 1000"):
        tiny.call("CopyAdd", In=a, Out=out)


def test_argument_larger_than_l2_fails(suite_src):
    small = host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                               include_dirs=suite_src["include_dirs"],
                               platform=get_platform("gap8", l2_size=1000))
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"argument 'Out': 800 bytes do not fit in L2 \(capacity 1000"):
        small.call("CopyAdd", In=a, Out=out)


# ---------------------------------------------------------------------------------------------
# API errors
# ---------------------------------------------------------------------------------------------

def test_bad_arguments_are_reported(prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"missing argument\(s\) Out.*arguments are In, Out"):
        prog.call("CopyAdd", In=a)
    with pytest.raises(HarnessError, match=r"unknown argument\(s\) Extra.*arguments are In, Out"):
        prog.call("CopyAdd", In=a, Out=out, Extra=a)
    with pytest.raises(HarnessError, match=r"unknown kernel 'Nope'.*CopyAdd"):
        prog.call("Nope", In=a, Out=out)
    with pytest.raises(HarnessError, match=r"argument 'Out': expects a numpy array"):
        prog.call("CopyAdd", In=a, Out=3)
    with pytest.raises(HarnessError, match=r"argument 'N': expects an int"):
        prog.call("ScaleF", In=a, Out=out, F=1.0, N=2.5)
    assert "CopyAdd" in prog.kernels and prog.platform.name == "gap8"


def test_compile_error_shows_compiler_message(tmp_path):
    bk, add_one = write_basic_kernels(tmp_path)
    bad = "#include \"Broken.h\"\nvoid Broken(Word32 * __restrict__ In) { int unused; In[0] = 1 }\n"
    gen = write_generated(tmp_path / "gen", "Broken", bad, [{"name": "Broken", "args": [ptr("In", "Word32")]}],
                          {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with pytest.raises(HarnessError, match=r"compiling Broken\.c failed: .*error: expected ';'"):
        host_harness.build(gen, sources=[add_one], include_dirs=[bk])


def test_generated_code_warnings_are_errors(tmp_path):
    bk, add_one = write_basic_kernels(tmp_path)
    warn = "#include \"Warn.h\"\nvoid Warn(Word32 * __restrict__ In) { int unused; In[0] = 1; }\n"
    gen = write_generated(tmp_path / "gen", "Warn", warn, [{"name": "Warn", "args": [ptr("In", "Word32")]}],
                          {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with pytest.raises(HarnessError, match=r"unused variable 'unused'"):
        host_harness.build(gen, sources=[add_one], include_dirs=[bk])


def test_missing_manifest(tmp_path):
    with pytest.raises(HarnessError, match=r"no 'autotiler-manifest/1' manifest"):
        host_harness.build(tmp_path)


def test_gap_h_is_c99_clean_with_extra_warnings(tmp_path):
    bk, add_one = write_basic_kernels(tmp_path)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME_DIR}", f"-I{bk}",
                    "-c", str(add_one), "-o", str(tmp_path / "a.o")], check=True)


# ---------------------------------------------------------------------------------------------
# Static L1 array mode
# ---------------------------------------------------------------------------------------------

ARRAY_C = r"""
#include "Arr.h"

L1_CL_MEM char L1_Memory[1600];
L2_MEM AT_L2_POINTER L2_Memory;

/* Stages In through the L2_Memory scratch area, which is a live L2 allocation for the DMA. */
void ArrCopyAdd(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1, DmaW_Evt1;
    int i;
    for (i = 0; i < 800; i++) L2_Memory[3200 + i] = ((char *) In)[i];
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) L2_Memory + 3200), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    KerAddOneSeq((Word32 *) L1_Memory, (Word32 *) (L1_Memory + 800), 200);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 800), 800, 1, &DmaW_Evt1);
    AT_L2_WAIT(0, &DmaW_Evt1);
}

void ArrPeek(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaW_Evt1;
    (void) In;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 800), 800, 1, &DmaW_Evt1);
    AT_L2_WAIT(0, &DmaW_Evt1);
}
"""


def test_static_l1_array_is_registered_and_poisoned(tmp_path):
    bk, add_one = write_basic_kernels(tmp_path)
    kernels = [{"name": k, "args": [ptr("In", "Word32"), ptr("Out", "Word32")]} for k in ("ArrCopyAdd", "ArrPeek")]
    gen = write_generated(tmp_path / "gen", "Arr", ARRAY_C, kernels,
                          {"symbol": "L1_Memory", "size": 1600, "dynamic": False},
                          {"symbol": "L2_Memory", "size": 4000, "dynamic": True})
    arr = host_harness.build(gen, sources=[add_one], include_dirs=[bk])
    a, out = io_arrays()
    c = arr.call("ArrCopyAdd", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)
    assert (c["peak_l1"], c["peak_l2"]) == (1600, 800 + 800 + 4000)
    a, out = io_arrays()
    arr.call("ArrPeek", In=a, Out=out)  # the static array still holds the last call's results
    assert (out == POISON_I32).all()


# ---------------------------------------------------------------------------------------------
# Build cache and sanitizers
# ---------------------------------------------------------------------------------------------

def test_second_build_is_a_cache_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTILER_CACHE", str(tmp_path / "cache"))
    bk, add_one = write_basic_kernels(tmp_path)
    gen = write_generated(tmp_path / "gen", "Suite", SUITE_C, suite_kernels(),
                          {"symbol": "L1_Memory", "size": 1600, "dynamic": True})
    t0 = time.perf_counter()
    first = host_harness.build(gen, sources=[add_one], include_dirs=[bk])
    t1 = time.perf_counter()
    second = host_harness.build(gen, sources=[add_one], include_dirs=[bk])
    t2 = time.perf_counter()
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert second.library == first.library and first.library.is_relative_to(tmp_path / "cache")
    assert t2 - t1 < (t1 - t0) / 2
    (bk / "AddOne.c").write_text(ADD_ONE_C + "\n/* changed */\n")  # a source change is a new build
    third = host_harness.build(gen, sources=[add_one], include_dirs=[bk])
    assert not third.cache_hit and third.library != first.library
    for program in (first, third, first):  # two libraries in one process: independent simulators
        a, out = io_arrays()
        assert program.call("CopyAdd", In=a, Out=out)["cycles"] == 528
        np.testing.assert_array_equal(out, a + 1)


@pytest.fixture(scope="module")
def san_prog(suite_src):
    if not have_sanitizers():
        pytest.skip("gcc has no libasan/libubsan")
    return host_harness.build(suite_src["gen"], sources=suite_src["sources"],
                              include_dirs=suite_src["include_dirs"], sanitize=True)


def test_sanitized_happy_path_matches_in_process_run(prog, san_prog):
    a, out = io_arrays()
    counters = san_prog.call("CopyAdd", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)
    a, out = io_arrays()
    assert counters == prog.call("CopyAdd", In=a, Out=out)
    assert san_prog.library != prog.library


def test_sanitized_run_reports_simulator_faults(san_prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=FAULTS["WaitInCore"]):
        san_prog.call("WaitInCore", In=a, Out=out)


def test_sanitizer_catches_overrun_of_an_l2_argument(san_prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"sanitizer report.*AddressSanitizer: heap-buffer-overflow"):
        san_prog.call("Overrun", In=a, Out=out)


def test_sanitizer_catches_undefined_behaviour(san_prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"sanitizer report.*runtime error: signed integer overflow"):
        san_prog.call("SignedOverflow", In=a, Out=out)


# ---------------------------------------------------------------------------------------------
# L3 memory and the uDMA engine
# ---------------------------------------------------------------------------------------------

L3_C = r"""
#include "L3Suite.h"

L1_CL_MEM AT_L1_POINTER L1_Memory;
L2_MEM AT_L2_POINTER L2_Memory;
extern AT_HYPERRAM_T HyperRam; /* defined and opened by the harness (manifest "l3") */
AT_QSPIRAM_T QspiRam;          /* not in the manifest: only open if the kernel opens it */

#define U_IN(off, size, evt) \
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) ((char *) In + (off)), \
                        (AT_HYPERRAM_INT_ADDR_TYPE) (L2_Memory + 0), size, AT_HYPERRAM_EXT2LOC, evt)

static void open_qspi(void)
{
    AT_QSPIRAM_CONF_T Conf;
    int Err;
    AT_QSPIRAM_CONF_INIT(&Conf, 2, 0);
    AT_QSPIRAM_OPEN(&QspiRam, &Conf, &Err);
    if (Err) AT_QSPIRAM_CLOSE(&QspiRam);
}

/* In, Out: 8 x 50 Word32 in L3, in 5 column blocks of 10 columns. Per block: uDMA 2D gather
 * (8 lines of 40 bytes every 200) into L2, cluster copy into L1, add one, and back. */
void L3AddOne(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT UchanR_In, UchanW_Out;
    AT_L2_EVENT DmaR_Evt1, DmaW_Evt1;
    int B;
    for (B = 0; B < 5; B++) {
        AT_HYPERRAM_CL_COPY2D(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) ((char *) In + 40 * B),
                              (AT_HYPERRAM_INT_ADDR_TYPE) (L2_Memory + 0), 320, 200, 40,
                              AT_HYPERRAM_EXT2LOC, &UchanR_In);
        AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanR_In);
        AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) L2_Memory + 0), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 0), 320,
                   AT_L2_EXT2LOC, &DmaR_Evt1);
        AT_L2_WAIT(0, &DmaR_Evt1);
        AT_SIM_COMPUTE(80);
        KerAddOneSeq((Word32 *) L1_Memory, (Word32 *) (L1_Memory + 320), 80);
        AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) L2_Memory + 320), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 320), 320,
                   AT_L2_LOC2EXT, &DmaW_Evt1);
        AT_L2_WAIT(0, &DmaW_Evt1);
        AT_HYPERRAM_CL_COPY2D(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) ((char *) Out + 40 * B),
                              (AT_HYPERRAM_INT_ADDR_TYPE) (L2_Memory + 320), 320, 200, 40,
                              AT_HYPERRAM_LOC2EXT, &UchanW_Out);
        AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanW_Out);
    }
}

void L3Clock(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT UchanR;
    (void) Out;
    U_IN(0, 800, &UchanR);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanR);
    AT_SIM_COMPUTE(100);
}

/* Two uDMA reads queue on the uDMA engine while a cluster copy and compute run. */
void L3Overlap(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1, Uchan2;
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) In, (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory,
                        400, AT_HYPERRAM_EXT2LOC, &Uchan1);
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) ((char *) In + 400),
                        (AT_HYPERRAM_INT_ADDR_TYPE) (L2_Memory + 400), 400, AT_HYPERRAM_EXT2LOC, &Uchan2);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) L2_Memory + 800), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 800,
               AT_L2_EXT2LOC, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
    AT_SIM_COMPUTE(300);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan2);
}

/* A block of Rows x Cols bytes at (Y0, X0) of a W-wide byte image: L3 -> L2 -> L3. */
void U2D(Word8 * __restrict__ In, Word8 * __restrict__ Out, int W, int X0, int Y0, int Cols, int Rows)
{
    AT_HYPERRAM_CL_EVENT UchanR, UchanW;
    AT_HYPERRAM_CL_COPY2D(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) (In + Y0 * W + X0),
                          (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory, Rows * Cols, W, Cols, AT_HYPERRAM_EXT2LOC, &UchanR);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanR);
    AT_HYPERRAM_CL_COPY2D(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) (Out + Y0 * W + X0),
                          (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory, Rows * Cols, W, Cols, AT_HYPERRAM_LOC2EXT, &UchanW);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanW);
}

/* Args homed in L2 here: the kernel writes Out itself. */
void L3AllocTooBig(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_POINTER Big = AT_HYPERRAM_ALLOC(&HyperRam, 100000000);
    AT_HYPERRAM_POINTER Small = AT_HYPERRAM_ALLOC(&HyperRam, 1000);
    (void) In;
    Out[0] = (Big == 0);
    Out[1] = (Small != 0);
    if (Small) AT_HYPERRAM_FREE(&HyperRam, Small, 1000);
}

/* Opens a second device itself, uses it correctly and leaves it open. */
void QspiRoundTrip(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_QSPIRAM_CL_EVENT UchanR, UchanW;
    open_qspi();
    AT_QSPIRAM_CL_COPY(&QspiRam, (AT_QSPIRAM_EXT_ADDR_TYPE) In, (AT_QSPIRAM_INT_ADDR_TYPE) L2_Memory, 800,
                       AT_QSPIRAM_EXT2LOC, &UchanR);
    AT_QSPIRAM_CL_WAIT(&QspiRam, &UchanR);
    AT_QSPIRAM_CL_COPY(&QspiRam, (AT_QSPIRAM_EXT_ADDR_TYPE) Out, (AT_QSPIRAM_INT_ADDR_TYPE) L2_Memory, 800,
                       AT_QSPIRAM_LOC2EXT, &UchanW);
    AT_QSPIRAM_CL_WAIT(&QspiRam, &UchanW);
}

void UWaitUnknown(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1, Uchan2;
    (void) Out;
    U_IN(0, 400, &Uchan1);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan2); /* BUG: never issued */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void UPendingAtReturn(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    U_IN(0, 400, &Uchan1); /* BUG: never waited */
}

void UIssueOnPending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    U_IN(0, 400, &Uchan1);
    U_IN(400, 400, &Uchan1); /* BUG: the first is still pending */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void UExtNotL3(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) In; (void) Out;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) (L2_Memory + 800), /* BUG: an L2 address */
                        (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory, 400, AT_HYPERRAM_EXT2LOC, &Uchan1);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void ULocNotL2(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) In, /* BUG: loc is L3 */
                        (AT_HYPERRAM_INT_ADDR_TYPE) Out, 400, AT_HYPERRAM_EXT2LOC, &Uchan1);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void ClusterFromL3(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_L2_EVENT DmaR_Evt1;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), 400, 0, &DmaR_Evt1);
    AT_L2_WAIT(0, &DmaR_Evt1);
}

void USourceModified(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    U_IN(0, 800, &Uchan1);
    In[3] = 42; /* BUG: the uDMA is still reading In */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void UDestWritten(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT UchanW;
    (void) In;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) Out, (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory, 800,
                        AT_HYPERRAM_LOC2EXT, &UchanW);
    Out[5] = 1; /* BUG: the uDMA is still writing Out */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanW);
}

void UNotOpen(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_QSPIRAM_CL_EVENT Uchan1;
    (void) Out;
    AT_QSPIRAM_CL_COPY(&QspiRam, (AT_QSPIRAM_EXT_ADDR_TYPE) In, (AT_QSPIRAM_INT_ADDR_TYPE) L2_Memory, 400,
                       AT_QSPIRAM_EXT2LOC, &Uchan1); /* BUG: QspiRam was never opened */
    AT_QSPIRAM_CL_WAIT(&QspiRam, &Uchan1);
}

void UAfterClose(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    AT_HYPERRAM_CLOSE(&HyperRam);
    U_IN(0, 400, &Uchan1); /* BUG: closed */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Uchan1);
}

void UWrongDevice(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    open_qspi();
    U_IN(0, 400, &Uchan1);
    AT_QSPIRAM_CL_WAIT(&QspiRam, &Uchan1); /* BUG: issued on HyperRam */
}

/* The functions behind the macros, called directly: messages name the open device's family. */
void URawPending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT Uchan1;
    (void) Out;
    at_sim_udma_copy(&HyperRam, In, L2_Memory, 400, 400, 400, 0, &Uchan1, __FILE__, __LINE__);
    at_sim_udma_wait(&HyperRam, &Uchan1, __FILE__, __LINE__);
    at_sim_udma_copy(&HyperRam, In, L2_Memory, 400, 400, 400, 0, &Uchan1, __FILE__, __LINE__); /* BUG */
}

void UFreeL3WhilePending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT UchanW;
    AT_HYPERRAM_POINTER Buf = AT_HYPERRAM_ALLOC(&HyperRam, 400);
    (void) In; (void) Out;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) Buf, (AT_HYPERRAM_INT_ADDR_TYPE) L2_Memory, 400,
                        AT_HYPERRAM_LOC2EXT, &UchanW);
    AT_HYPERRAM_FREE(&HyperRam, Buf, 400); /* BUG: the uDMA is writing Buf */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanW);
}

void UFreeL2WhilePending(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_HYPERRAM_CL_EVENT UchanR;
    AT_L2_POINTER Buf = AT_L2_ALLOC(0, 400);
    (void) Out;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) In, (AT_HYPERRAM_INT_ADDR_TYPE) Buf, 400,
                        AT_HYPERRAM_EXT2LOC, &UchanR);
    AT_L2_FREE(0, Buf, 400); /* BUG: the uDMA is writing Buf */
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanR);
}
"""

# A second manifest naming HyperRam again, plus an OSPIRAM device used through the FC macros.
L3_EXTRA_C = r"""
#include "L3Extra.h"

extern AT_HYPERRAM_T HyperRam;
extern AT_OSPIRAM_T OctoRam;

void OctoRoundTrip(Word32 * __restrict__ In, Word32 * __restrict__ Out)
{
    AT_OSPIRAM_FC_EVENT UchanR;
    AT_HYPERRAM_CL_EVENT UchanW;
    AT_L2_POINTER Buf = AT_L2_ALLOC(0, 800);
    AT_OSPIRAM_FC_COPY2D(&OctoRam, (AT_OSPIRAM_EXT_ADDR_TYPE) In, (AT_OSPIRAM_LOC_ADDR_TYPE) Buf, 800, 80, 80,
                         AT_OSPIRAM_EXT2LOC, &UchanR);
    AT_OSPIRAM_FC_WAIT(&OctoRam, &UchanR);
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) Out, (AT_HYPERRAM_INT_ADDR_TYPE) Buf, 800,
                        AT_HYPERRAM_LOC2EXT, &UchanW);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &UchanW);
    AT_L2_FREE(0, Buf, 800);
}
"""

L3_IN_OUT = ["L3AddOne", "L3Clock", "L3Overlap", "QspiRoundTrip", "UWaitUnknown", "UPendingAtReturn",
             "UIssueOnPending", "UExtNotL3", "ULocNotL2", "ClusterFromL3", "USourceModified", "UDestWritten",
             "UNotOpen", "UAfterClose", "UWrongDevice", "URawPending", "UFreeL3WhilePending",
             "UFreeL2WhilePending"]
HYPERRAM = {"devices": [{"family": "HYPERRAM", "symbol": "HyperRam"}]}


def l3_ptr(name: str, ctype: str) -> dict:
    return {**ptr(name, ctype), "home": "L3"}


def l3_kernels() -> list[dict]:
    kernels = [{"name": k, "args": [l3_ptr("In", "Word32"), l3_ptr("Out", "Word32")]} for k in L3_IN_OUT]
    kernels.append({"name": "U2D", "args": [l3_ptr("In", "Word8"), l3_ptr("Out", "Word8")]
                    + [scalar(n) for n in ("W", "X0", "Y0", "Cols", "Rows")]})
    kernels.append({"name": "L3AllocTooBig", "args": [ptr("In", "Word32"), ptr("Out", "Word32")]})
    return kernels


def with_manifest_fields(gen: Path, name: str, **fields) -> None:
    path = gen / f"{name}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}, indent=1))


def write_l3_generated(gen: Path) -> Path:
    write_generated(gen, "L3Suite", L3_C, l3_kernels(), {"symbol": "L1_Memory", "size": 1600, "dynamic": True},
                    {"symbol": "L2_Memory", "size": 1600, "dynamic": True})
    with_manifest_fields(gen, "L3Suite", l3=HYPERRAM)
    extra = [{"name": "OctoRoundTrip", "args": [l3_ptr("In", "Word32"), l3_ptr("Out", "Word32")]}]
    write_generated(gen, "L3Extra", L3_EXTRA_C, extra, {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with_manifest_fields(gen, "L3Extra", l3={"devices": [{"family": "HYPERRAM", "symbol": "HyperRam"},
                                                         {"family": "OSPIRAM", "symbol": "OctoRam"}]})
    return gen


@pytest.fixture(scope="module")
def l3_src(tmp_path_factory):
    root = tmp_path_factory.mktemp("l3")
    bk, add_one = write_basic_kernels(root)
    return {"gen": write_l3_generated(root / "gen"), "sources": [add_one], "include_dirs": [bk]}


@pytest.fixture(scope="module")
def l3_prog(l3_src):
    return host_harness.build(l3_src["gen"], sources=l3_src["sources"], include_dirs=l3_src["include_dirs"])


def grid_arrays():
    a = (np.arange(8 * 50, dtype=np.int32) * 7 - 1000).reshape(8, 50)
    return a, np.zeros_like(a)


def test_l3_l2_l1_round_trip_is_exact(l3_prog):
    a, out = grid_arrays()
    l3_prog.call("L3AddOne", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)
    np.testing.assert_array_equal(a, grid_arrays()[0])  # the L3 input is copied back intact


def test_counters_of_l3_round_trip(l3_prog):
    a, out = grid_arrays()
    c = l3_prog.call("L3AddOne", In=a, Out=out)
    p = get_platform("gap8")
    assert (c["l3_to_l2"], c["l2_to_l3"], c["l2_to_l1"], c["l1_to_l2"]) == (1600, 1600, 1600, 1600)
    assert c["transfers"] == 20
    assert (c["peak_l3"], c["peak_l2"], c["peak_l1"]) == (3200, 1600, 1600)
    # 10 uDMA transfers of 8 lines of 40 bytes: 200 setup + 320 B at 1 B/cycle + 8 * 20 per line
    udma = p.udma["ram"].transfer_cycles(320, 8)
    assert udma == 200 + 320 + 160
    assert c["dma_busy_cycles"] == {"cluster": 10 * p.cluster_dma.transfer_cycles(320), "udma": 10 * udma}
    # Fully serial: per block two uDMA (10 issue + 680) and two cluster (10 + 70) steps, 80 compute.
    assert c["cycles"] == 5 * (2 * (10 + 680) + 2 * (10 + 70) + 80) == 8100


def test_udma_clock_on_hand_computed_case(l3_prog):
    a, out = io_arrays()
    c = l3_prog.call("L3Clock", In=a, Out=out)
    p = get_platform("gap8")
    # issue (10) + uDMA setup (200) + 800 B at 1 B/cycle (800) + compute (100); the wait's 4
    # cycles are hidden in the stall.
    assert c["cycles"] == 10 + 200 + 800 + 100 == 1110
    assert c["cycles"] == p.dma_issue_cycles + p.udma["ram"].transfer_cycles(800) + 100
    assert c["stall_cycles"] == 200 + 800 - p.wait_cycles
    assert c["dma_busy_cycles"] == {"cluster": 0, "udma": 1000}
    assert (c["l3_to_l2"], c["l2_to_l3"], c["transfers"]) == (800, 0, 1)


def test_udma_numbers_follow_platform_given_at_run_time(l3_src, l3_prog):
    fast = host_harness.build(l3_src["gen"], sources=l3_src["sources"], include_dirs=l3_src["include_dirs"],
                              platform="gap9")
    assert fast.library == l3_prog.library
    a, out = io_arrays()
    c = fast.call("L3Clock", In=a, Out=out)
    p = get_platform("gap9")
    assert c["cycles"] == p.dma_issue_cycles + p.udma["ram"].transfer_cycles(800) + 100 == 8 + 200 + 400 + 100


def test_udma_runs_concurrently_with_cluster_dma_and_compute(l3_prog):
    a, out = io_arrays()
    c = l3_prog.call("L3Overlap", In=a, Out=out)
    p = get_platform("gap8")
    issue, udma, cluster = p.dma_issue_cycles, p.udma["ram"].transfer_cycles(400), p.cluster_dma.transfer_cycles(800)
    assert (udma, cluster) == (600, 130)
    # The two uDMA reads queue on their own FIFO (the second starts when the first ends, at
    # 610); the cluster copy (issued at 30, done at 160) and the 300 compute cycles run under
    # them, so the call ends when the second uDMA read lands.
    assert c["cycles"] == issue + 2 * udma == 1210
    serial = 3 * issue + 2 * udma + cluster + 300
    assert serial - c["cycles"] == 2 * issue + cluster + 300
    assert c["stall_cycles"] == (160 - 34) + (610 - 464) + (1210 - 614)
    assert c["dma_busy_cycles"] == {"cluster": cluster, "udma": 2 * udma}


def test_udma_2d_both_directions(l3_prog):
    src = np.arange(12 * 10, dtype=np.int8).reshape(12, 10)
    out = np.full_like(src, 7)
    c = l3_prog.call("U2D", In=src, Out=out, W=10, X0=3, Y0=2, Cols=4, Rows=5)
    expect = np.full_like(src, 7)
    expect[2:7, 3:7] = src[2:7, 3:7]
    np.testing.assert_array_equal(out, expect)
    assert (c["l3_to_l2"], c["l2_to_l3"], c["transfers"]) == (20, 20, 2)
    assert c["dma_busy_cycles"]["udma"] == 2 * get_platform("gap8").udma["ram"].transfer_cycles(20, 5) == 2 * 320


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_udma_2d_matches_numpy_slicing(l3_prog, data):
    check_2d_block_copy(l3_prog, "U2D", data)


def test_l3_home_places_arrays_in_l3(l3_prog):
    a, out = io_arrays()
    c = l3_prog.call("L3Clock", In=a, Out=out)  # In, Out homed in L3: only L2_Memory is in L2
    assert (c["peak_l3"], c["peak_l2"]) == (1600, 1600)
    a, out = io_arrays()
    c = l3_prog.call("L3AllocTooBig", In=a, Out=out)  # same arrays homed in L2
    assert (c["peak_l3"], c["peak_l2"]) == (1000, 1600 + 1600)


def test_l3_alloc_past_capacity_returns_null(l3_prog):
    a, out = io_arrays()
    l3_prog.call("L3AllocTooBig", In=a, Out=out)
    assert out[:2].tolist() == [1, 1]  # 100000000 bytes -> NULL, 1000 bytes -> fine


def test_argument_larger_than_l3_fails(l3_src):
    small = host_harness.build(l3_src["gen"], sources=l3_src["sources"], include_dirs=l3_src["include_dirs"],
                               platform=get_platform("gap8", l3_ram_size=1000))
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"kernel 'L3Clock', argument 'Out': 800 bytes do not fit in L3 "
                                           r"\(capacity 1000 bytes, 800 in use\)"):
        small.call("L3Clock", In=a, Out=out)


def test_device_opened_by_a_kernel_is_closed_for_the_next_call(l3_prog):
    a, out = io_arrays()  # QspiRoundTrip leaves QspiRam open: the simulator forgets it between calls
    l3_prog.call("QspiRoundTrip", In=a, Out=out)
    np.testing.assert_array_equal(out, a)
    with pytest.raises(HarnessError, match=L3_FAULTS["UNotOpen"]):
        l3_prog.call("UNotOpen", In=a, Out=out)


def test_second_manifest_devices_and_fc_macros(l3_prog):
    a, out = io_arrays()
    c = l3_prog.call("OctoRoundTrip", In=a, Out=out)
    np.testing.assert_array_equal(out, a)
    ram = get_platform("gap8").udma["ram"]
    assert c["dma_busy_cycles"]["udma"] == ram.transfer_cycles(800, 10) + ram.transfer_cycles(800)
    assert (c["l3_to_l2"], c["l2_to_l3"]) == (800, 800)


def test_device_symbol_defined_once_across_manifests(l3_src):
    from host_harness.builder import trampoline_source
    from host_harness.manifest import read_manifests

    text = trampoline_source(read_manifests(l3_src["gen"]))
    assert text.count("AT_HYPERRAM_T HyperRam;") == 1 and text.count("AT_OSPIRAM_T OctoRam;") == 1
    assert "AT_HYPERRAM_OPEN(&HyperRam, &conf, &err);" in text


L3_IN = r"uDMA transfer #1 \(L3->L2, 400 bytes, ext In\+0, loc L2_Memory\+0\) at L3Suite\.c:\d+"
L3_FAULTS = {
    "UWaitUnknown": r"AT_HYPERRAM_CL_WAIT at L3Suite\.c:\d+ on an event with no pending uDMA transfer",
    "UPendingAtReturn": L3_IN + r" is still pending when the user kernel returned \(missing AT_HYPERRAM_CL_WAIT\)",
    "UIssueOnPending": r"uDMA transfer #2 \(L3->L2, 400 bytes, ext In\+400, .* issued on an event that still "
                       r"holds pending uDMA transfer #1 .*\(missing AT_HYPERRAM_CL_WAIT\)",
    "UExtNotL3": r"uDMA transfer #1 \(L3->L2, 400 bytes, ext L2_Memory\+800, loc L2_Memory\+0\) at L3Suite\.c:\d+: "
                 r"L3 \(ext\) side \[L2_Memory\+800, L2_Memory\+1200\) is not inside one live L3 allocation "
                 r"\('L2_Memory' is a 1600-byte L2 allocation; the uDMA's ext side must be in L3",
    "ULocNotL2": r"uDMA transfer #1 .*: L2 \(loc\) side \[Out\+0, Out\+400\) is not inside one live L2 allocation "
                 r"\('Out' is a 800-byte L3 allocation\)",
    "ClusterFromL3": r"^kernel 'ClusterFromL3': transfer #1 \(L2->L1, 400 bytes, ext In\+0, loc L1_Memory\+0\) at "
                     r"L3Suite\.c:\d+: L2 \(ext\) side \[In\+0, In\+400\) is not inside one live L2 allocation "
                     r"\('In' is a 800-byte L3 allocation; L3 data must be staged through L2 with the uDMA\)",
    "USourceModified": r"source of uDMA transfer #1 \(L3->L2, 800 bytes.* was modified while in flight "
                       r"\(first changed byte at In\+12\)",
    "UDestWritten": r"destination of uDMA transfer #1 \(L2->L3, 800 bytes.* was written while in flight "
                    r"\(first written byte at Out\+20\)",
    "UNotOpen": r"uDMA transfer #1 \(L3->L2, 400 bytes, ext In\+0, loc L2_Memory\+0\) at L3Suite\.c:\d+: issued "
                r"on a device that is not open \(missing AT_QSPIRAM_OPEN\)",
    "UAfterClose": L3_IN + r": issued on a device that is not open \(missing AT_HYPERRAM_OPEN\)",
    "UWrongDevice": r"AT_QSPIRAM_CL_WAIT at L3Suite\.c:\d+ waits on another device than the one " + L3_IN,
    "URawPending": r"uDMA transfer #2 \(L3->L2, 400 bytes, ext In\+0, loc L2_Memory\+0\) at L3Suite\.c:\d+ is "
                   r"still pending when the user kernel returned \(missing AT_HYPERRAM_CL_WAIT\)",
    "UFreeL3WhilePending": r"AT_HYPERRAM_FREE at L3Suite\.c:\d+ frees 'AT_HYPERRAM_ALLOC@L3Suite\.c:\d+' while "
                           r"uDMA transfer #1 \(L2->L3, 400 bytes",
    "UFreeL2WhilePending": r"AT_L2_FREE at L3Suite\.c:\d+ frees 'AT_L2_ALLOC@L3Suite\.c:\d+' while "
                           r"uDMA transfer #1 \(L3->L2, 400 bytes",
}


@pytest.mark.parametrize("kernel", sorted(L3_FAULTS))
def test_l3_fault_raises_harness_error(l3_prog, kernel):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=L3_FAULTS[kernel]):
        l3_prog.call(kernel, In=a, Out=out)
    a, out = grid_arrays()  # the simulator recovers (and the trampoline reopens HyperRam)
    l3_prog.call("L3AddOne", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)


def test_l3_macros_of_every_family_are_c99_clean(tmp_path):
    from host_harness.builder import GEN_FLAGS

    body = []
    for fam in ("HYPERRAM", "QSPIRAM", "OSPIRAM", "DEFAULTRAM"):
        body.append(f"""
AT_{fam}_T Dev_{fam};
void Use_{fam}(AT_L2_POINTER L2)
{{
    AT_{fam}_CONF_T Conf;
    AT_{fam}_CL_EVENT Cl[3];
    AT_{fam}_FC_EVENT Fc;
    AT_{fam}_POINTER P;
    int Err;
    AT_{fam}_CONF_INIT(&Conf, 1, 0);
    AT_{fam}_OPEN(&Dev_{fam}, &Conf, &Err);
    if (Err) return;
    P = (AT_{fam}_POINTER) AT_{fam}_ALLOC(&Dev_{fam}, 64);
    AT_{fam}_CL_COPY(&Dev_{fam}, (AT_{fam}_EXT_ADDR_TYPE) P, (AT_{fam}_INT_ADDR_TYPE) L2, 64, AT_{fam}_EXT2LOC, &Cl[1 % 3]);
    AT_{fam}_CL_WAIT(&Dev_{fam}, &Cl[1 % 3]);
    AT_{fam}_CL_COPY2D(&Dev_{fam}, (AT_{fam}_EXT_ADDR_TYPE) ((char *) P + 4), (AT_{fam}_LOC_ADDR_TYPE) L2, 16, 8, 4,
                       AT_{fam}_LOC2EXT, &Cl[0]);
    AT_{fam}_CL_WAIT(&Dev_{fam}, &Cl[0]);
    AT_{fam}_FC_COPY(&Dev_{fam}, (AT_{fam}_EXT_ADDR_TYPE) P, (AT_{fam}_INT_ADDR_TYPE) L2, 64, AT_{fam}_EXT2LOC, &Fc);
    AT_{fam}_FC_WAIT(&Dev_{fam}, &Fc);
    AT_{fam}_FC_COPY2D(&Dev_{fam}, (AT_{fam}_EXT_ADDR_TYPE) P, (AT_{fam}_INT_ADDR_TYPE) L2, 16, 8, 4, AT_{fam}_LOC2EXT, &Fc);
    AT_{fam}_FC_WAIT(&Dev_{fam}, &Fc);
    AT_{fam}_FREE(&Dev_{fam}, P, 64);
    AT_{fam}_CLOSE(&Dev_{fam});
}}""")
    src = tmp_path / "fams.c"
    src.write_text('#include "Gap.h"\n' + "\n".join(f"void Use_{f}(AT_L2_POINTER L2);" for f in
                                                    ("HYPERRAM", "QSPIRAM", "OSPIRAM", "DEFAULTRAM")) + "\n".join(body))
    proc = subprocess.run(["gcc", *GEN_FLAGS, f"-I{RUNTIME_DIR}", "-c", str(src), "-o", str(tmp_path / "f.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_cluster_event_in_a_udma_macro_does_not_compile(tmp_path):
    bk, add_one = write_basic_kernels(tmp_path)
    bad = r"""
#include "Mix.h"
extern AT_HYPERRAM_T HyperRam;
void Mix(Word32 * __restrict__ In)
{
    AT_L2_EVENT Evt;
    AT_HYPERRAM_CL_COPY(&HyperRam, (AT_HYPERRAM_EXT_ADDR_TYPE) In, (AT_HYPERRAM_INT_ADDR_TYPE) In, 4,
                        AT_HYPERRAM_EXT2LOC, &Evt);
    AT_HYPERRAM_CL_WAIT(&HyperRam, &Evt);
}
"""
    gen = write_generated(tmp_path / "gen", "Mix", bad, [{"name": "Mix", "args": [l3_ptr("In", "Word32")]}],
                          {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with_manifest_fields(gen, "Mix", l3=HYPERRAM)
    with pytest.raises(HarnessError, match=r"compiling Mix\.c failed: .*incompatible pointer type"):
        host_harness.build(gen, sources=[add_one], include_dirs=[bk])


def _one_kernel_manifest(tmp_path, arg: dict, **fields) -> Path:
    gen = write_generated(tmp_path / "gen", "One", '#include "One.h"\n', [{"name": "One", "args": [arg]}],
                          {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with_manifest_fields(gen, "One", **fields)
    return gen


@pytest.mark.parametrize(("arg", "fields", "message"), [
    ({**ptr("In", "Word32"), "home": "L4"}, {},
     r"manifest One\.json kernel 'One' arg 'In': field 'home' must be one of L2, L3, got 'L4'"),
    ({**scalar("N"), "home": "L3"}, {}, r"manifest One\.json kernel 'One' arg 'N': home L3 needs a pointer"),
    (ptr("In", "Word32"), {"l3": {"devices": [{"family": "HYPERFLASH", "symbol": "Flash"}]}},
     r"manifest One\.json l3 device 'Flash': unknown family 'HYPERFLASH' \(families are HYPERRAM, QSPIRAM"),
    (ptr("In", "Word32"), {"l3": {"devices": [{"family": "HYPERRAM", "symbol": "R"},
                                              {"family": "QSPIRAM", "symbol": "R"}]}},
     r"manifest One\.json l3 devices: 'R' is listed as HYPERRAM and as QSPIRAM"),
    (ptr("In", "Word32"), {"l3": {"devices": [{"family": "HYPERRAM", "symbol": "Hyper Ram"}]}},
     r"symbol 'Hyper Ram' is not a C identifier"),
])
def test_bad_l3_manifest_fields(tmp_path, arg, fields, message):
    gen = _one_kernel_manifest(tmp_path, arg, **fields)
    with pytest.raises(HarnessError, match=message):
        host_harness.build(gen)


def test_one_device_symbol_with_two_families_across_manifests(tmp_path):
    gen = _one_kernel_manifest(tmp_path, ptr("In", "Word32"), l3=HYPERRAM)
    write_generated(gen, "Two", '#include "Two.h"\n', [{"name": "Two", "args": [ptr("In", "Word32")]}],
                    {"symbol": "L1_Memory", "size": 0, "dynamic": True})
    with_manifest_fields(gen, "Two", l3={"devices": [{"family": "QSPIRAM", "symbol": "HyperRam"}]})
    with pytest.raises(HarnessError, match=r"L3 device 'HyperRam' is HYPERRAM in manifest One\.json but "
                                           r"QSPIRAM in manifest Two\.json"):
        host_harness.build(gen)


def test_home_round_trips_to_the_sanitizer_child():
    from host_harness.manifest import KernelSpec, MemSymbol

    unused = MemSymbol("", 0, True)
    spec = KernelSpec("K", (host_harness.manifest.ArgSpec("In", "int *", True, False, "L3"),), "K.h", unused, unused)
    assert KernelSpec.from_dict(json.loads(json.dumps(spec.to_dict()))).args[0].home == "L3"


def test_platform_config_carries_l3_and_udma_numbers():
    from host_harness.runner import L3_CONFIG_KEYS, platform_config

    cfg = platform_config(get_platform("gap9"))
    ram = get_platform("gap9").udma["ram"]
    assert {k: cfg[k] for k in L3_CONFIG_KEYS} == {"l3_size": 8 * 1024 * 1024, "udma_setup_cycles": ram.setup_cycles,
                                                   "udma_bytes_per_cycle": 2.0, "udma_line_cycles": ram.line_cycles}


@pytest.fixture(scope="module")
def san_l3_prog(l3_src):
    if not have_sanitizers():
        pytest.skip("gcc has no libasan/libubsan")
    return host_harness.build(l3_src["gen"], sources=l3_src["sources"], include_dirs=l3_src["include_dirs"],
                              sanitize=True)


def test_sanitized_l3_kernel_matches_in_process_run(l3_prog, san_l3_prog):
    a, out = grid_arrays()
    counters = san_l3_prog.call("L3AddOne", In=a, Out=out)
    np.testing.assert_array_equal(out, a + 1)
    a, out = grid_arrays()
    assert counters == l3_prog.call("L3AddOne", In=a, Out=out)
    assert counters["dma_busy_cycles"]["udma"] > 0 and counters["peak_l3"] == 3200


def test_sanitized_run_reports_udma_faults(san_l3_prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=L3_FAULTS["UPendingAtReturn"]):
        san_l3_prog.call("UPendingAtReturn", In=a, Out=out)
