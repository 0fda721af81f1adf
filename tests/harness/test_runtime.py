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
from host_harness.builder import RUNTIME_DIR, sanitizer_libraries

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


@pytest.fixture(scope="module", autouse=True)
def harness_cache(tmp_path_factory):
    """Builds go to a private cache so tests neither depend on nor pollute ~/.cache."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOTILER_CACHE", str(cache))
        yield cache


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
    h, w = data.draw(st.integers(1, 30)), data.draw(st.integers(1, 40))
    y0, x0 = data.draw(st.integers(0, h - 1)), data.draw(st.integers(0, w - 1))
    rows, cols = data.draw(st.integers(1, h - y0)), data.draw(st.integers(1, w - x0))
    src = np.random.default_rng(h * 100 + w).integers(-128, 128, (h, w), dtype=np.int8)
    out = np.zeros_like(src)
    prog.call("Copy2D", In=src, Out=out, W=w, X0=x0, Y0=y0, Cols=cols, Rows=rows)
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

def test_reading_a_tile_before_its_wait_sees_poison(prog):
    a, out = io_arrays()
    prog.call("ReadBeforeWait", In=a, Out=out)
    assert not np.array_equal(out, a + 1)
    assert (out == POISON_I32 + 1).all()


def test_chunking_that_ignores_core_id_is_wrong(prog):
    a, out = io_arrays()
    prog.call("BadChunk", In=a, Out=out)
    tile = np.arange(100)
    done = np.concatenate([tile < 13, tile < 13])  # chunk 0 of each 100-element tile only
    np.testing.assert_array_equal(out[done], a[done] + 1)
    assert (out[~done] == POISON_I32).all()


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


def _have_sanitizers() -> bool:
    try:
        sanitizer_libraries()
    except HarnessError:
        return False
    return True


@pytest.fixture(scope="module")
def san_prog(suite_src):
    if not _have_sanitizers():
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
