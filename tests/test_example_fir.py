"""The FIR example (examples/fir): the SDK's two attempts (untiled, then tiled with a KerArgPad
delay line carried to the next double buffer through KER_ARG_TILE_NEXTDB), every generator of
the model bit-exact, the delay line bit-exact across tile boundaries at several budgets, and
simulated cycles equal to the predicted ones."""

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.platforms import get_platform

from .conftest import EXAMPLES, example_reference, load_module

FIR = EXAMPLES / "fir"
MODULE = load_module(FIR / "model.py", "model_fir_tests")
REF = example_reference("fir")
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)

# The untiled attempt is expected to fail at most sizes: its "no tiling fits" warning is noise here.
pytestmark = pytest.mark.filterwarnings("ignore:.*no tiling fits:UserWarning")


def generate_and_build(out_dir, **declare_kwargs):
    """Declare the FIR model (``MODULE.declare(**declare_kwargs)``), generate it into out_dir and
    build it with the basic kernels: (tilings by kernel name, program)."""
    with Model() as m:
        MODULE.declare(**declare_kwargs)
        files = generate(m)
        tilings = dict(m.tilings)
    write_files(files, str(out_dir))
    program = host_harness.build(out_dir, sources=[FIR / s for s in REF.SOURCES], include_dirs=[FIR],
                                 platform=PLATFORM)
    return tilings, program


def run_bit_exact(program, tiling, ncoeffs, nsamples, seed):
    """Filter a random signal with kernel ``tiling.name``; compare with numpy; check that the
    simulated cycles are the predicted ones. Returns the counters."""
    args = REF.kernel_args(np.random.default_rng(seed), NSamples=nsamples, NCoeffs=ncoeffs)
    counters = program.call(tiling.name, **args)
    np.testing.assert_array_equal(args["Out"], REF.expected(args)["Out"], err_msg=tiling.name)
    assert counters["cycles"] == tiling.predicted.cycles, tiling.name
    return counters


def test_sdk_sizes_untiled_attempt_fails_and_the_tiled_kernel_is_used():
    """32768 samples at 51200 bytes (the SDK's FirModel.c): the whole signal does not fit, so
    UserKernel returns None with AT_KERNEL_NOSOLUTION_ERROR off; GeneratorFIR then tiles it."""
    with Model() as m:
        MODULE.FIRConfiguration(MODULE.L1_BUDGET)
        MODULE.LoadFIRLibrary()
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        assert MODULE.FirUserKernel("Fir", MODULE.NSAMPLES, 20, "KerFirParallelNTaps", 0) is None
        assert "Fir" not in m.tilings
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)
        t = MODULE.GeneratorFIR("Fir", MODULE.NSAMPLES, 20, 1, 0)
        assert m.tilings["Fir"] is t
        assert m.kernels["Fir"].kerarg("KerIn").obj_type & O_DB   # the tiled form was declared
    kin, kout, coeffs = t.arg("KerIn"), t.arg("KerOut"), t.arg("KerCoeffs")
    assert t.ntiles > 1 and t.l1_bytes <= MODULE.L1_BUDGET
    assert kin.nbuf == kout.nbuf == 2
    assert kin.tile_std % 20 == 0                                # PreferedTileSize = NCoeffs
    assert kin.pad_bytes == 20 * 2                               # BottomBuffer: NCoeffs shorts a slot
    assert kin.slot_bytes >= kin.pad_bytes + kin.tile_std * 2
    assert coeffs.nbuf == 1 and coeffs.level is None             # the taps are loaded once


def test_every_generator_of_the_model_is_bit_exact(tmp_path):
    """The model as shipped (the SDK's 10- and 20-tap generators on 32768 samples): all tiled,
    each bit-exact when called alone (the example test calls them through the group)."""
    tilings, program = generate_and_build(tmp_path)
    assert [(g[0], g[1]) for g in MODULE.GENERATORS] == list(REF.GENERATORS)
    assert set(tilings) == {g[0] for g in MODULE.GENERATORS}
    for seed, (name, ncoeffs, _generic, _scalar) in enumerate(MODULE.GENERATORS):
        t = tilings[name]
        assert t.ntiles > 1 and t.arg("KerIn").nbuf == 2
        run_bit_exact(program, t, ncoeffs, MODULE.NSAMPLES, seed)


# (samples, L1 budget): tiles of a few hundred to a few thousand samples; 4007 at 1024 bytes
# ends with a tile of 7 samples, shorter than the 19-sample delay line; 1000 at 300 bytes has
# 50 tiles of exactly NCoeffs samples.
CARRY_CASES = [(32768, 4096), (32768, 12000), (4007, 1024), (1000, 300)]


@pytest.mark.parametrize("nsamples,l1", CARRY_CASES)
def test_delay_line_is_carried_across_tiles(tmp_path, nsamples, l1):
    """Every tile after the first starts with the NCoeffs-1 samples of the previous tiles in its
    delay line: bit-exact over the tile boundaries, with the 20-tap vector and scalar kernels."""
    gens = (("Fir20", 20, 1, 0), ("Fir20Scalar", 20, 1, 1))
    tilings, program = generate_and_build(tmp_path, l1=l1, NSamples=nsamples, generators=gens, group=None)
    for seed, (name, ncoeffs, _generic, _scalar) in enumerate(gens):
        t = tilings[name]
        kin = t.arg("KerIn")
        assert t.ntiles > 1 and kin.nbuf == 2 and t.l1_bytes <= l1
        assert (kin.tile_std * (t.ntiles - 1) + kin.tile_last) == nsamples
        if (nsamples, l1) == (4007, 1024):
            assert kin.tile_last < ncoeffs - 1 < kin.tile_std
        run_bit_exact(program, t, ncoeffs, nsamples, seed)


def test_small_signal_untiled_attempt_succeeds(tmp_path):
    """1000 samples fit in 51200 bytes: the first attempt is used, one untiled call whose
    NextIn is 0 (no copy), the delay line zeroed by the init kernel."""
    gens = (("Fir10", 10, 0, 0), ("Fir20Scalar", 20, 1, 1))
    tilings, program = generate_and_build(tmp_path, NSamples=1000, generators=gens, group=None)
    c_text = (tmp_path / MODULE.GENERATED_FILES[0]).read_text()
    assert "AT_L2_COPY" in c_text and "NextIn = (short int * __restrict__) (0)" in c_text
    for seed, (name, ncoeffs, _generic, _scalar) in enumerate(gens):
        t = tilings[name]
        assert t.ntiles == 1 and t.iterations == 1
        assert all(a.nbuf == 1 and a.level is None for a in t.args)   # each moved once
        counters = run_bit_exact(program, t, ncoeffs, 1000, seed)
        assert counters["l2_to_l1"] == (1000 + ncoeffs) * 2 and counters["l1_to_l2"] == 1000 * 2
