"""Hazards the simulated chip names (issue 22, items 3 and 4; docs/simulator.md).

A host fault in a basic kernel (a wild read, a division by zero) is a HarnessError naming the
kernel and the address, and the process goes on; an unsigned index that wraps below a core's
stack array reads what the chip reads; a DMA transfer computed from one argument's pointer that
leaves it is refused, naming the arrays; partial sums reduced through a file-scope static without
their barrier are a data race naming the variable. Basic kernels: tests/kernels/HazardKernels.c;
the "generated" code is hand-written here, with a hand-written manifest (as in test_sim_races).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler.errors import HarnessError

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
SOURCES = [KERNELS_DIR / "HazardKernels.c"]
N = 64          # ints per argument
L1_SIZE = 1024  # In at L1_Memory+0, Out at +256

HAZARDS_C = r"""
#include <stdint.h>
#include "Hazards.h"

L1_CL_MEM AT_L1_POINTER L1_Memory;

static void run_in_l1(int * __restrict__ In, int * __restrict__ Out, void (*Ker)(Hazard_Arg_T *), int N,
                      int OutBytes)
{{
    AT_L2_EVENT Evt;
    Hazard_Arg_T Arg;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), {n} * 4, 0, &Evt);
    AT_L2_WAIT(0, &Evt);
    Arg.In = (int *) L1_Memory;
    Arg.Out = (int *) (L1_Memory + 256);
    Arg.N = N;
    AT_FORK(gap_ncore(), (void *) Ker, (void *) &Arg);
    __CALL(Ker, &Arg);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 256), OutBytes, 1, &Evt);
    AT_L2_WAIT(0, &Evt);
}}

void WildRead(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    (void) In2;
    run_in_l1(In, Out, KerHazardWildRead, 64, 4);
}}

void StackOverflow(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    (void) In2;
    run_in_l1(In, Out, KerHazardStackOverflow, 1, 4);
}}

void Divide(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    Hazard_Arg_T Arg;
    (void) In2;
    Arg.In = In;
    Arg.Out = Out;
    Arg.N = 0;
    KerHazardDivide(&Arg);
}}

void WildInGenerated(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    volatile uintptr_t Addr = 64;
    (void) In; (void) In2;
    Out[0] = *(volatile int *) Addr;
}}

void StackWrap(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    (void) In2;
    run_in_l1(In, Out, KerHazardStackWrap, {n}, {n} * 4);
}}

void StaticSum(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    (void) In2;
    run_in_l1(In, Out, KerHazardStaticSum, {n}, 4);
}}

void StaticSumNoBarrier(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    (void) In2;
    run_in_l1(In, Out, KerHazardStaticSumNoBarrier, {n}, 4);
}}

/* The cores read their tile while the transfer filling it is still in flight. */
void ForkBeforeWait(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    AT_L2_EVENT Evt;
    Hazard_Arg_T Arg;
    (void) In2;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), {n} * 4, 0, &Evt);
    Arg.In = (int *) L1_Memory;
    Arg.Out = (int *) (L1_Memory + 256);
    Arg.N = {n};
    AT_FORK(gap_ncore(), (void *) KerHazardStaticSum, (void *) &Arg);
    __CALL(KerHazardStaticSum, &Arg);
    AT_L2_WAIT(0, &Evt);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 256), 4, 1, &Evt);
    AT_L2_WAIT(0, &Evt);
}}

/* Double buffering that prefetches one tile too many: the tile after In's last one. */
void PrefetchPastEnd(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    AT_L2_EVENT Evt;
    (void) In2; (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), {n} * 4, 0, &Evt);
    AT_L2_WAIT(0, &Evt);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) (In + {n})), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 256), {n} * 4, 0, &Evt);
    AT_L2_WAIT(0, &Evt);
}}

/* A transfer from In long enough to run into In2 (allocated after it). */
void CrossArrays(int * __restrict__ In, int * __restrict__ In2, int * __restrict__ Out)
{{
    AT_L2_EVENT Evt;
    (void) Out;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory),
               (int) ((char *) In2 - (char *) In) + 16, 0, &Evt);
    AT_L2_WAIT(0, &Evt);
}}
"""

USER_KERNELS = ["WildRead", "StackOverflow", "Divide", "WildInGenerated", "StackWrap", "StaticSum", "StaticSumNoBarrier",
                "ForkBeforeWait", "PrefetchPastEnd", "CrossArrays"]


def write_generated(gen: Path) -> Path:
    """Hazards.c/.h and a hand-written manifest (L1_Memory allocated by the harness)."""
    gen.mkdir(parents=True, exist_ok=True)
    names = ("In", "In2", "Out")
    args = [{"name": n, "ctype": "int * __restrict__", "pointer": True, "float": False} for n in names]
    params = ", ".join(f"int * __restrict__ {n}" for n in names)
    protos = [f"void {k}({params});" for k in USER_KERNELS]
    (gen / "Hazards.h").write_text("\n".join(["#ifndef HAZARDS_H", "#define HAZARDS_H", '#include "KernelLibStdTypes.h"',
                                              '#include "HazardKernels.h"', "extern AT_L1_POINTER L1_Memory;", *protos,
                                              "#endif", ""]))
    (gen / "Hazards.c").write_text(textwrap.dedent(HAZARDS_C.format(n=N)))
    manifest = {"format": "autotiler-manifest/1", "c_files": ["Hazards.c"], "header": "Hazards.h",
                "l1": {"symbol": "L1_Memory", "size": L1_SIZE, "dynamic": True},
                "l2": {"symbol": "L2_Memory", "size": 0, "dynamic": True},
                "kernels": [{"name": k, "args": args} for k in USER_KERNELS]}
    (gen / "Hazards.json").write_text(json.dumps(manifest, indent=1))
    return gen


pytestmark = pytest.mark.usefixtures("private_harness_cache")


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    gen = write_generated(tmp_path_factory.mktemp("hazards"))
    return host_harness.build(gen, sources=SOURCES, include_dirs=[KERNELS_DIR])


def arrays():
    return {"In": np.arange(N, dtype=np.int32) * 7 - 100, "In2": np.zeros(N, dtype=np.int32),
            "Out": np.full(N, -12345, dtype=np.int32)}


def check_recovers(program):
    """After a fault the simulator is clean: a correct kernel still runs and is exact."""
    args = arrays()
    program.call("StaticSum", **args)
    assert args["Out"][0] == args["In"].sum()


# ---------------------------------------------------------------------------------------------
# Item 3: host faults are faults of the call, the process goes on
# ---------------------------------------------------------------------------------------------

def test_a_wild_read_on_a_core_is_a_fault_not_a_crash(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'WildRead': basic kernel 'KerHazardWildRead' \(in user kernel "
                       r"'WildRead'\) on core 3 reads address 0x40 and the host faults \(SIGSEGV\): outside every "
                       r"live L1/L2 allocation, stack and static variable$"):
        prog.call("WildRead", **arrays())
    check_recovers(prog)


def test_a_stack_overflow_on_a_core_is_a_fault_not_a_crash(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'StackOverflow': basic kernel 'KerHazardStackOverflow' \(in user "
                       r"kernel 'StackOverflow'\) on core 2 writes address 0x[0-9a-f]+ and the host faults \(SIGSEGV\): \d+ "
                       r"bytes below the stack of core 2: a stack "
                       r"overflow \(each core has 256 KiB of stack: keep large arrays out of a basic kernel's locals\)$"):
        prog.call("StackOverflow", **arrays())
    check_recovers(prog)


def test_a_division_by_zero_is_a_fault_not_a_crash(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'Divide': basic kernel 'KerHazardDivide' \(in user kernel "
                       r"'Divide'\) on core 0 divides by zero \(SIGFPE: an integer division by zero or overflow; "
                       r"the chip's division returns a value instead\)$"):
        prog.call("Divide", **arrays())
    check_recovers(prog)


def test_a_wild_read_in_the_generated_code_is_a_fault(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'WildInGenerated': the generated code 'WildInGenerated' on "
                       r"core 0 reads address 0x40 and the host faults \(SIGSEGV\)"):
        prog.call("WildInGenerated", **arrays())
    check_recovers(prog)


def test_repeated_faults_leave_the_process_working(prog):
    for _ in range(3):
        with pytest.raises(HarnessError, match="SIGSEGV"):
            prog.call("WildRead", **arrays())
        with pytest.raises(HarnessError, match="SIGFPE"):
            prog.call("Divide", **arrays())
    check_recovers(prog)


def test_a_wrapped_index_below_a_stack_array_reads_what_the_chip_reads(prog):
    """Window[i - 4], i unsigned and below 4: the chip reads the 4 ints under Window."""
    args = arrays()
    prog.call("StackWrap", **args)
    np.testing.assert_array_equal(args["Out"], args["In"] + np.array([1, 2, 3, 4] + [0] * (N - 4)))


# ---------------------------------------------------------------------------------------------
# Item 4: reads before a wait, transfers that leave their array, races on statics
# ---------------------------------------------------------------------------------------------

def test_cores_reading_a_tile_before_its_wait_is_a_fault(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'ForkBeforeWait': basic kernel 'KerHazardStaticSum' on core 0 "
                       r"reads L1_Memory\+\[0, 4\) before the wait of transfer #1 \(L2->L1, 256 bytes, ext In\+0, "
                       r"loc L1_Memory\+0\) at Hazards\.c:\d+ \(missing AT_L2_WAIT before the basic kernel runs\): it "
                       r"reads 0xCD poison on the simulator, stale data on the chip$"):
        prog.call("ForkBeforeWait", **arrays())
    check_recovers(prog)


def test_a_prefetch_past_the_end_of_an_argument_is_refused(prog):
    """In2 lies after In: the tile after In's last one must not be read from wherever it lands."""
    with pytest.raises(HarnessError, match=rf"^kernel 'PrefetchPastEnd': transfer #2 \(L2->L1, {4 * N} bytes, ext "
                       rf"In\+{4 * N}, loc L1_Memory\+256\) at Hazards\.c:\d+: L2 \(ext\) side \[In\+{4 * N}, "
                       rf"In\+{8 * N}\) is not inside one live L2 allocation \('In' is a {4 * N}-byte L2 allocation\): "
                       rf"it starts 0 bytes past the end of 'In': an address computed from 'In' must stay inside it "
                       rf"\(a tile past the last one\?\)$"):
        prog.call("PrefetchPastEnd", **arrays())
    check_recovers(prog)


def test_a_transfer_crossing_into_another_argument_names_both(prog):
    with pytest.raises(HarnessError, match=r"^kernel 'CrossArrays': transfer #1 .* L2 \(ext\) side \[In\+0, In\+\d+\) "
                       r"is not inside one live L2 allocation \('In' is a 256-byte L2 allocation\): it starts in 'In' "
                       r"and ends in 'In2' \(its last byte at In2\+15\): a transfer may not cross from one array into "
                       r"another$"):
        prog.call("CrossArrays", **arrays())
    check_recovers(prog)


def test_a_reduction_through_a_static_with_its_barrier_is_exact(prog):
    for _ in range(2):
        check_recovers(prog)


def test_a_reduction_through_a_static_without_barrier_is_a_race(prog):
    """The last core reduces: run one after another the cores get the right sum, a cluster would not."""
    with pytest.raises(HarnessError, match=r"^kernel 'StaticSumNoBarrier': data race in basic kernel "
                       r"'KerHazardStaticSumNoBarrier' \(AT_FORK at Hazards\.c:\d+\): core 0 writes static "
                       r"'Partial'\+\[0, 4\) and core 7 reads it with no barrier in between \(write-then-read: on the "
                       r"chip the read may come first\); and \d+ more conflicting byte access\(es\)"):
        prog.call("StaticSumNoBarrier", **arrays())
    check_recovers(prog)
