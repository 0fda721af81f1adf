"""Fused layers' line-buffer (KEEP) mode (issue 26 item 1): CNN_FusedConvAct_SQ8 with each intermediate's
overlapping lines kept in L1 from tile to tile (KerParConvKeep_TFLM_SQ8 / KerParConvDWKeep_TFLM_SQ8,
autotiler/generators/cnn_kernels/CNN_SQ8_Fused.c) instead of recomputed.

- fixed chains forced to KEEP over several tiles, bit-exact with sq8_tflm layer by layer (the chains and
  the reference of tests/test_sq8_fused.py), simulated cycles equal to the predicted ones;
- the generator's choice (LineBuffer None) is the mode with fewer predicted cycles, each mode forced
  alone giving the same tilings; a chain whose intermediates do not overlap has one mode;
- LineBuffer's typed error;
- on GVSoC (skipped when GVSOC_HOME is unset): both modes bit-exact on pulp-open.
"""

from __future__ import annotations

import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_fused as TF
from autotiler.generators.sq8_common import sq8_setup
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from host_harness import gvsoc
from tests.test_sq8_fused import MBN_STAGE, PLATFORM, Chain, Conv, call, make_ctrl

pytestmark = pytest.mark.usefixtures("private_harness_cache")
needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)

KEEP_CHAINS = [
    Chain(24, 24, 3, MBN_STAGE, budget=8000, name="KMbnStage"),
    Chain(12, 10, 8, (Conv("conv", 24, f=1), Conv("dw", 24), Conv("conv", 8, f=1, act="NONE")), residual=True,
          budget=4000, seed=1, name="KInvRes"),
    Chain(11, 9, 4, (Conv("conv", 8), Conv("conv", 6, f=3, s=2, padding="VALID")), budget=2000, seed=2,
          name="KConvConv"),
    # composed paddings (3 lines above T0), a 5x5 and a stride 2 in the middle of the chain
    Chain(30, 4, 2, (Conv("conv", 3), Conv("dw", 3, f=5), Conv("conv", 2, s=2), Conv("conv", 2)), budget=1400,
          seed=5, name="KDeep"),
]


def declare(c: Chain, line_buffer, name: str | None = None) -> int:
    """CNN_FusedConvAct_SQ8 with the generator's LineBuffer argument."""
    setup = sq8_setup("CNN_FusedConvAct_SQ8", "test_sq8_fused_keep", name or c.name, make_ctrl())
    return TF.fused_conv_act(setup, *c.args(), LineBuffer=line_buffer)


def build(out_dir, chains: list, line_buffer, platform=PLATFORM, backend: str = "host"):
    with Model(platform) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("FusedKeep.c", "FusedKeep.h")
        LoadCNN_SQ8_Library()
        for c in chains:
            SetL1MemorySize(c.budget)
            assert declare(c, line_buffer) == 1, c
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    kw = dict(backend="gvsoc") if backend == "gvsoc" else dict(platform=platform)
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], **kw)
    return prog, tilings


def test_keep_chains_are_bit_exact(tmp_path):
    prog, tilings = build(tmp_path, KEEP_CHAINS, 1)
    for c in KEEP_CHAINS:
        t = tilings[c.name]
        assert TF.line_buffer_mode(t) == "keep", c.name
        assert t.loops[0].count > 2, c.name            # tiles after the first keep lines, the last moves none
        assert call(prog, c) == t.predicted.cycles, c.name


def test_choice_is_the_mode_with_fewer_predicted_cycles():
    # KRecompute: at 1500 B its 2 tiles recompute fewer cycles than the Keep kernels cost (call, move)
    chains = [*KEEP_CHAINS, Chain(10, 6, 4, (Conv("conv", 4),) * 3, budget=1500, name="KRecompute")]
    seen = set()
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        for c in chains:
            SetL1MemorySize(c.budget)
            for mode, lb in (("recompute", 0), ("keep", 1), ("auto", None)):
                assert declare(c, lb, f"{c.name}_{mode}") == 1
            rec, keep, auto = (m.tilings[f"{c.name}_{mode}"] for mode in ("recompute", "keep", "auto"))
            assert TF.line_buffer_mode(rec) == "recompute" and TF.line_buffer_mode(keep) == "keep"
            want = "keep" if keep.predicted.cycles < rec.predicted.cycles else "recompute"
            assert TF.line_buffer_mode(auto) == want, c.name
            assert auto.predicted.cycles == min(rec.predicted.cycles, keep.predicted.cycles), c.name
            seen.add(want)
    assert seen == {"keep", "recompute"}        # both choices are exercised


def test_chain_without_overlapping_intermediates_has_one_mode():
    c = Chain(9, 7, 16, (Conv("dw", 16, s=2), Conv("conv", 8, f=1)), budget=1500, seed=4, name="KDwPw")
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        SetL1MemorySize(c.budget)
        assert declare(c, 1) == 1
        assert TF.line_buffer_mode(m.tilings[c.name]) == "recompute"


@pytest.mark.parametrize("value", [2, 0.5, "1"])
def test_line_buffer_must_be_none_0_or_1(value):
    c = KEEP_CHAINS[0]
    with Model(PLATFORM):
        LoadCNN_SQ8_Library()
        with pytest.raises(ModelError, match=r"LineBuffer must be None, 0 or 1, got .*None: the mode with fewer "
                                             r"predicted cycles; 0: recompute the overlaps; 1: keep them in L1"):
            declare(c, value)


# At most 16 transfers pending at once (the cluster DMA's queue: longer chains hang GVSoC, see
# tests/test_gvsoc_fused.py): the input and 5 constants per layer, read in the prolog.
GVSOC_CHAINS = [KEEP_CHAINS[2], Chain(24, 24, 3, MBN_STAGE[:3], budget=6000, seed=7, name="KMbn3")]


@pytest.mark.gvsoc
@needs_gvsoc
def test_keep_and_recompute_are_bit_exact_on_gvsoc(tmp_path):
    chains = GVSOC_CHAINS
    for lb in (0, 1):
        prog, tilings = build(tmp_path / f"lb{lb}", chains, lb, platform="pulp_open", backend="gvsoc")
        try:
            for c in chains:
                assert TF.line_buffer_mode(tilings[c.name]) == ("keep" if lb else "recompute")
                assert tilings[c.name].loops[0].count > 2, c.name
                call(prog, c)
        finally:
            prog.close()
