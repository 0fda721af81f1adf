"""The simulated cluster catches what a real one would do wrong (docs/simulator.md).

The simulator runs the forked cores one after the other, so a core writing into its neighbour's
chunk, or a reduction reading partial sums without the barrier that makes them ready, would give
the right answer by luck; a write past the end of L1 would land in whatever follows. The basic
kernels are compiled with ThreadSanitizer's instrumentation, whose calls the simulator answers:
races between cores within one barrier epoch and writes outside memory are faults naming the
basic kernel. Basic kernels: tests/kernels/RaceKernels.c; the "generated" code is hand-written
here, with a hand-written manifest, so that every offset in the messages is known.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler.errors import HarnessError
from host_harness.toolchain import have_sanitizers

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
SOURCES = [KERNELS_DIR / "RaceKernels.c"]
N = 64        # ints per argument
L1_SIZE = 1024  # In at L1_Memory+0, Out at +256, the partial sums at +512

# Generated-like user kernels. Each forks one basic kernel over the 8 cores on tiles in L1.
RACES_C = r"""
#include "Races.h"

{l1_definition}

static void run_in_l1(int * __restrict__ In, int * __restrict__ Out, void (*Ker)(Race_Arg_T *), int OutBytes)
{{
    AT_L2_EVENT Evt;
    Race_Arg_T Arg;
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) In), ((AT_L2_INT_ADDR_TYPE) L1_Memory), {n} * 4, 0, &Evt);
    AT_L2_WAIT(0, &Evt);
    Arg.In = (int *) L1_Memory;
    Arg.Out = (int *) (L1_Memory + 256);
    Arg.Partial = (int *) (L1_Memory + 512);
    Arg.N = {n};
    AT_FORK(gap_ncore(), (void *) Ker, (void *) &Arg);
    __CALL(Ker, &Arg);
    AT_L2_COPY(0, ((AT_L2_EXT_ADDR_TYPE) Out), ((AT_L2_INT_ADDR_TYPE) L1_Memory + 256), OutBytes, 1, &Evt);
    AT_L2_WAIT(0, &Evt);
}}

void Scale(int * __restrict__ In, int * __restrict__ Out) {{ run_in_l1(In, Out, KerRaceScale, {n} * 4); }}
void Neighbour(int * __restrict__ In, int * __restrict__ Out) {{ run_in_l1(In, Out, KerRaceNeighbour, {n} * 4); }}
void Sum(int * __restrict__ In, int * __restrict__ Out) {{ run_in_l1(In, Out, KerRaceSum, 4); }}
void SumNoBarrier(int * __restrict__ In, int * __restrict__ Out) {{ run_in_l1(In, Out, KerRaceSumNoBarrier, 4); }}
void SumLastNoBarrier(int * __restrict__ In, int * __restrict__ Out)
{{
    run_in_l1(In, Out, KerRaceSumLastNoBarrier, 4);
}}
void StaticAndStack(int * __restrict__ In, int * __restrict__ Out)
{{
    run_in_l1(In, Out, KerRaceStaticAndStack, {n} * 4);
}}

/* Core 3 writes 4 ints from L1_Memory + {l1} - 12 on: the last one at L1_Memory + {l1}. */
void WritePastL1(int * __restrict__ In, int * __restrict__ Out)
{{
    Race_Arg_T Arg;
    (void) In; (void) Out;
    Arg.Out = (int *) (L1_Memory + {l1} - 12);
    Arg.N = 4;
    AT_FORK(gap_ncore(), (void *) KerRaceWritePast, (void *) &Arg);
    __CALL(KerRaceWritePast, &Arg);
}}

void MemsetRace(int * __restrict__ In, int * __restrict__ Out) {{ run_in_l1(In, Out, KerRaceMemsetAll, {n} * 4); }}

/* memcpy one int past the L2 argument Out, outside any fork. */
void MemcpyPastArg(int * __restrict__ In, int * __restrict__ Out)
{{
    KerRaceMemcpyPast(Out, In, {n});
}}

/* A basic kernel called on the L2 argument itself, outside any fork. */
void WritePastArg(int * __restrict__ In, int * __restrict__ Out)
{{
    (void) In;
    KerRaceWritePastSeq(Out, {n});
}}
"""

USER_KERNELS = ["Scale", "Neighbour", "Sum", "SumNoBarrier", "SumLastNoBarrier", "StaticAndStack",
                "WritePastL1", "WritePastArg", "MemsetRace", "MemcpyPastArg"]


def write_generated(gen: Path, dynamic: bool) -> Path:
    """Races.c/.h and a hand-written manifest; L1_Memory allocated by the harness (dynamic) or a
    static array of the generated code, registered."""
    gen.mkdir(parents=True, exist_ok=True)
    decl = "extern AT_L1_POINTER L1_Memory;" if dynamic else "extern char L1_Memory[];"
    definition = ("L1_CL_MEM AT_L1_POINTER L1_Memory;" if dynamic
                  else f"L1_CL_MEM char L1_Memory[{L1_SIZE}] __attribute__((aligned(8)));")
    args = [{"name": n, "ctype": "int * __restrict__", "pointer": True, "float": False} for n in ("In", "Out")]
    protos = [f"void {k}(int * __restrict__ In, int * __restrict__ Out);" for k in USER_KERNELS]
    (gen / "Races.h").write_text("\n".join(["#ifndef RACES_H", "#define RACES_H", '#include "KernelLibStdTypes.h"',
                                            '#include "RaceKernels.h"', decl, *protos, "#endif", ""]))
    (gen / "Races.c").write_text(textwrap.dedent(RACES_C.format(l1_definition=definition, n=N, l1=L1_SIZE)))
    manifest = {"format": "autotiler-manifest/1", "c_files": ["Races.c"], "header": "Races.h",
                "l1": {"symbol": "L1_Memory", "size": L1_SIZE, "dynamic": dynamic},
                "l2": {"symbol": "L2_Memory", "size": 0, "dynamic": True},
                "kernels": [{"name": k, "args": args} for k in USER_KERNELS]}
    (gen / "Races.json").write_text(json.dumps(manifest, indent=1))
    return gen


# builds go to a private cache (tests/conftest.py), neither depending on nor polluting ~/.cache
pytestmark = pytest.mark.usefixtures("private_harness_cache")


def _build(tmp_path_factory, dynamic: bool, sanitize: bool = False):
    gen = write_generated(tmp_path_factory.mktemp("races"), dynamic)
    return host_harness.build(gen, sources=SOURCES, include_dirs=[KERNELS_DIR], sanitize=sanitize)


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return _build(tmp_path_factory, dynamic=True)


@pytest.fixture(scope="module")
def static_prog(tmp_path_factory):
    return _build(tmp_path_factory, dynamic=False)


SENTINEL = -12345


def io_arrays():
    return np.arange(N, dtype=np.int32) * 7 - 100, np.full(N, SENTINEL, dtype=np.int32)


def check_recovers(program):
    """After a fault the simulator is clean: the correct kernel still runs and is exact."""
    a, out = io_arrays()
    program.call("Scale", In=a, Out=out)
    np.testing.assert_array_equal(out, 2 * a)


# ---------------------------------------------------------------------------------------------
# Correct kernels pass, bit-exact
# ---------------------------------------------------------------------------------------------

def test_chunked_kernel_is_exact(prog):
    a, out = io_arrays()
    prog.call("Scale", In=a, Out=out)
    np.testing.assert_array_equal(out, 2 * a)


def test_reduction_with_its_barrier_is_exact(prog):
    a, out = io_arrays()
    prog.call("Sum", In=a, Out=out)
    assert out[0] == a.sum()
    assert (out[1:] == SENTINEL).all()


def test_static_variables_and_stack_arrays_are_legal(prog, static_prog):
    for program in (prog, static_prog):
        for _ in range(2):
            a, out = io_arrays()
            program.call("StaticAndStack", In=a, Out=out)
            np.testing.assert_array_equal(out, a)


# ---------------------------------------------------------------------------------------------
# Races between cores
# ---------------------------------------------------------------------------------------------

def test_write_into_the_neighbours_chunk_is_a_race(prog):
    a, out = io_arrays()
    # Out is at L1_Memory+256: Out[8], the first element of core 1's chunk, is [288, 292)
    with pytest.raises(HarnessError, match=r"kernel 'Neighbour': data race in basic kernel 'KerRaceNeighbour' "
                                           r"\(AT_FORK at Races\.c:\d+\): cores 0 and 1 both write "
                                           r"L1_Memory\+\[288, 292\) \(L1\) with no barrier in between "
                                           r"\(write/write"):
        prog.call("Neighbour", In=a, Out=out)
    check_recovers(prog)


def test_reduction_without_barrier_is_a_race(prog):
    a, out = io_arrays()
    # core 0 reads Partial[1] (L1_Memory+516) before core 1 has written it
    with pytest.raises(HarnessError, match=r"data race in basic kernel 'KerRaceSumNoBarrier' \(AT_FORK at "
                                           r"Races\.c:\d+\): core 0 reads L1_Memory\+\[516, 520\) \(L1\) and "
                                           r"core 1 writes it with no barrier in between \(read-then-write"):
        prog.call("SumNoBarrier", In=a, Out=out)
    check_recovers(prog)


def test_reduction_without_barrier_that_happens_to_work_is_a_race(prog):
    """The last core reduces: run in id order, the cores give the right sum, a cluster would not."""
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"data race in basic kernel 'KerRaceSumLastNoBarrier' .*: core 0 "
                                           r"writes L1_Memory\+\[512, 516\) \(L1\) and core 7 reads it with no "
                                           r"barrier in between \(write-then-read"):
        prog.call("SumLastNoBarrier", In=a, Out=out)
    check_recovers(prog)


# ---------------------------------------------------------------------------------------------
# Writes outside memory, caught at the access
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_write_past_the_end_of_l1(prog, static_prog, mode):
    program = prog if mode == "dynamic" else static_prog
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=rf"kernel 'WritePastL1': basic kernel 'KerRaceWritePast' on core 3 "
                                           rf"writes 4 bytes at L1_Memory\+{L1_SIZE}, 0 bytes past the end of "
                                           rf"L1_Memory \({L1_SIZE} bytes in L1\)$"):
        program.call("WritePastL1", In=a, Out=out)
    check_recovers(program)


def test_write_past_the_end_of_an_l2_argument(prog):
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=rf"basic kernel 'KerRaceWritePastSeq' on core 0 writes 4 bytes at "
                                           rf"Out\+{4 * N}, 0 bytes past the end of Out \({4 * N} bytes in L2\)$"):
        prog.call("WritePastArg", In=a, Out=out)
    check_recovers(prog)


def test_memcpy_and_memset_of_basic_kernels_are_checked(prog):
    """The library calls are routed to the simulator's checked copies (builder: objcopy)."""
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"data race in basic kernel 'KerRaceMemsetAll' .*cores 0 and 1 both write "
                                           r"L1_Memory\+\[256, 512\)"):
        prog.call("MemsetRace", In=a, Out=out)
    with pytest.raises(HarnessError, match=rf"basic kernel 'KerRaceMemcpyPast' on core 0 writes {4 * (N + 1)} bytes "
                                           rf"at Out\+0, 4 of them past the end of Out \({4 * N} bytes in L2\)$"):
        prog.call("MemcpyPastArg", In=a, Out=out)
    check_recovers(prog)


# ---------------------------------------------------------------------------------------------
# Under sanitize=True: ASan instead of the access checks, its report names the basic kernel
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not have_sanitizers(), reason="gcc has no libasan/libubsan")
def test_sanitized_write_past_l1_names_the_basic_kernel(tmp_path_factory):
    program = _build(tmp_path_factory, dynamic=True, sanitize=True)
    a, out = io_arrays()
    with pytest.raises(HarnessError, match=r"sanitizer report.*AddressSanitizer: heap-buffer-overflow.*"
                                           r"WRITE of size 4.*#0 .* in KerRaceWritePast .*RaceKernels\.c:\d+"):
        program.call("WritePastL1", In=a, Out=out)


def test_cflags_can_turn_the_checks_off(tmp_path_factory):
    """The same races and overruns, built with -fno-sanitize=thread: nothing is reported (and the
    one-after-another cores even get the neighbour's chunk and the last-core reduction right)."""
    gen = write_generated(tmp_path_factory.mktemp("unchecked"), dynamic=True)
    program = host_harness.build(gen, sources=SOURCES, include_dirs=[KERNELS_DIR], cflags=["-fno-sanitize=thread"])
    a, out = io_arrays()
    program.call("Neighbour", In=a, Out=out)
    np.testing.assert_array_equal(out, 2 * a)
    a, out = io_arrays()
    program.call("SumLastNoBarrier", In=a, Out=out)
    assert out[0] == a.sum()
