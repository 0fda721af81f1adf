"""The SDK's way of indexing a tile: an unsigned int index that goes "negative" (issue 22, item 3).

The GAP SDK's FIR kernels read ``In[i - NCoeffs + j + 1]`` with ``i`` unsigned. On the 32-bit
chip the address wraps back below ``In``, into the delay line; on the 64-bit host it is 2^32
items above, where it used to kill the Python process with SIGSEGV. The simulator's arena maps
its memory again at +4/+8/+16/+32 GiB, so the wrapped access reads and writes the bytes the chip
would: the FIR example's generator, ported line by line, runs bit-exact with kernels written the
SDK's way (tests/kernels/FirSdkKernels.c). Where the wrap cannot be reproduced (a static array of
the generated code), the access is a named fault and the process goes on.
"""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import Model
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError
from autotiler.platforms import get_platform
from host_harness.toolchain import have_sanitizers

from .conftest import EXAMPLES, example_reference, load_module

FIR = EXAMPLES / "fir"
KERNELS = EXAMPLES.parent / "tests" / "kernels"
MODULE = load_module(FIR / "model.py", "model_fir_wrap_tests")
REF = example_reference("fir")
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)
SDK_SOURCES = [KERNELS / "FirSdkKernels.c"]

pytestmark = [pytest.mark.usefixtures("private_harness_cache"),
              pytest.mark.filterwarnings("ignore:.*no tiling fits:UserWarning")]


def build_fir(out_dir, dynamic=True, sanitize=False, **declare_kwargs):
    """The FIR model generated into out_dir (its symbols dynamic or static arrays), built with the
    SDK-style kernels: (tilings by name, program)."""
    with Model() as m:
        MODULE.declare(**declare_kwargs)
        m.symbols.dynamic = dynamic
        files = generate(m)
        tilings = dict(m.tilings)
    write_files(files, str(out_dir))
    return tilings, host_harness.build(out_dir, sources=SDK_SOURCES, include_dirs=[FIR], platform=PLATFORM,
                                       sanitize=sanitize)


@pytest.mark.parametrize("nsamples,l1", [(32768, MODULE.L1_BUDGET), (4007, 1024)])
def test_sdk_fir_kernels_are_bit_exact(tmp_path, nsamples, l1):
    """Every generator of the model (10 and 20 taps, scalar, generic, fixed): the wrapped reads of
    the delay line, the wrapped writes of the init and of the delay-line copy, all as on the chip."""
    tilings, program = build_fir(tmp_path, l1=l1, NSamples=nsamples, group=None)
    for seed, (name, ncoeffs, _generic, _scalar) in enumerate(MODULE.GENERATORS):
        t = tilings[name]
        assert t.ntiles > 1
        args = REF.kernel_args(np.random.default_rng(seed), NSamples=nsamples, NCoeffs=ncoeffs)
        counters = program.call(name, **args)
        np.testing.assert_array_equal(args["Out"], REF.expected(args)["Out"], err_msg=name)
        assert counters["cycles"] == t.predicted.cycles, name


def test_a_wrap_into_a_static_array_is_a_named_fault(tmp_path):
    """Static L1/L2 arrays of the generated code are not in the arena: the init kernel's wrapped
    write is a fault naming the kernels, the address as the chip sees it and the fix."""
    gens = (("Fir10", 10, 1, 1),)
    tilings, program = build_fir(tmp_path, dynamic=False, l1=1024, NSamples=4007, generators=gens, group=None)
    args = REF.kernel_args(np.random.default_rng(0), NSamples=4007, NCoeffs=10)
    with pytest.raises(HarnessError, match=r"^kernel 'Fir10': basic kernel 'KerFirParallelInit' on core 0 writes 2 "
                       r"bytes at 0x[0-9a-f]+, FIR_L1_Memory\+\d+ \+ 8 GiB: an unsigned 32-bit index of 2-byte items "
                       r"gone negative, which on the chip wraps to FIR_L1_Memory\+\d+; the simulator reproduces that "
                       r"wrap only in the memory it allocates \(arguments, dynamic L1/L2 symbols, "
                       r"AT_L1_ALLOC/AT_L2_ALLOC\), not in the static array FIR_L1_Memory \(make the symbols dynamic "
                       r"with SetSymbolDynamics, or index with a signed int\)$"):
        program.call("Fir10", **args)
    # the process and the simulator go on: the same program with the example's own kernels' math
    _, dyn = build_fir(tmp_path / "dyn", l1=1024, NSamples=4007, generators=gens, group=None)
    dyn.call("Fir10", **args)
    np.testing.assert_array_equal(args["Out"], REF.expected(args)["Out"])


@pytest.mark.slow
@pytest.mark.skipif(not have_sanitizers(), reason="gcc has no libasan/libubsan")
def test_sanitized_builds_report_the_wrap_as_asan_does(tmp_path):
    """sanitize=True has no arena (ASan's own allocations): the wrapped write is ASan's SEGV report,
    in the child process, naming the basic kernel."""
    gens = (("Fir10", 10, 1, 1),)
    _, program = build_fir(tmp_path, sanitize=True, l1=1024, NSamples=4007, generators=gens, group=None)
    args = REF.kernel_args(np.random.default_rng(0), NSamples=4007, NCoeffs=10)
    with pytest.raises(HarnessError, match=r"^kernel 'Fir10': sanitizer report \(exit 1\): .*AddressSanitizer: SEGV "
                       r"on unknown address .*WRITE memory access.*#0 .* in KerFirParallelInit .*FirSdkKernels\.c:\d+"):
        program.call("Fir10", **args)
