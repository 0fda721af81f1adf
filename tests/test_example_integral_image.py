"""The integral image example (examples/integral_image): several tiles, the column-sum buffer
carried across them is a single L1 slot that never moves, bit-exact at several sizes and
budgets, simulated cycles equal to the predicted ones."""

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.platforms import get_platform

from .conftest import EXAMPLES, example_reference, load_module

II = EXAMPLES / "integral_image"
MODULE = load_module(II / "model.py", "model_integral_image_tests")
REF = example_reference("integral_image")
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)


def test_sdk_size_is_tiled_and_the_buffer_is_one_l1_slot():
    """161 x 121 at 40000 bytes (the SDK example): several tiles; KerBuffer is one W-int slot,
    not double buffered, never transferred, apart from the tiles' slots."""
    with Model() as m:
        MODULE.declare()
        t = m.tilings["Body" + MODULE.NAME]
    kin, buf, kout = t.arg("KerIn"), t.arg("KerBuffer"), t.arg("KerOut")
    assert t.ntiles > 1 and t.l1_bytes <= MODULE.L1_BUDGET
    assert kin.nbuf == kout.nbuf == 2
    assert buf.nbuf == 1 and buf.level is None and not buf.reads and not buf.writes
    assert buf.slot_bytes >= MODULE.W * 4
    slots = sorted((a.offset, a.offset + a.nbuf * a.slot_bytes) for a in t.args)
    assert all(end <= start for (_, end), (start, _) in zip(slots, slots[1:]))   # disjoint
    assert t.traffic_in == MODULE.W * MODULE.H and t.traffic_out == MODULE.W * MODULE.H * 4


def generate_and_build(out_dir, objective=None, **declare_kwargs):
    """Declare the model, generate it into out_dir, build it: (tiling of BodyIntegralImage, program)."""
    with Model() as m:
        if objective:
            SetTilingObjective(objective)   # before the kernel is declared (and tiled)
        MODULE.declare(**declare_kwargs)
        files = generate(m)
        t = m.tilings[REF.KERNEL]
    write_files(files, str(out_dir))
    program = host_harness.build(out_dir, sources=[II / s for s in REF.SOURCES], include_dirs=[II],
                                 platform=PLATFORM)
    return t, program


def run_bit_exact(program, t, w, h):
    for seed in (1, 2):  # a second call: KerPrime must clear what the first one left in the buffer
        args = REF.make_args(np.random.default_rng(seed), W=w, H=h)
        counters = program.call(REF.KERNEL, **args)
        np.testing.assert_array_equal(args["IntegralImage"], REF.expected(args)["IntegralImage"])
        assert counters["cycles"] == t.predicted.cycles
        assert counters["peak_l1"] == t.l1_bytes


# (W, H, L1 budget): the SDK example; the 322 x 242 image of another SDK model copy at the same
# budget; smaller budgets for many short tiles (a last tile of a few lines).
CASES = [(161, 121, 40000), (322, 242, 40000), (161, 121, 6000), (97, 203, 2500)]


@pytest.mark.parametrize("w,h,l1", CASES)
def test_bit_exact_across_tiles_and_cycles_as_predicted(tmp_path, w, h, l1):
    t, program = generate_and_build(tmp_path, l1=l1, W=w, H=h)
    assert t.ntiles > 1 and t.l1_bytes <= l1 and t.arg("KerBuffer").nbuf == 1
    run_bit_exact(program, t, w, h)


def test_original_objective_gives_the_sdk_tiling(tmp_path):
    """The original's rule (largest tiles) finds the SDK's generated IntegralImgKernels.c for
    161 x 121 at 40000 bytes: 6 tiles of 24 lines, the last one a single line; 39284 bytes of
    L1 with In at 0 (2 x 3864), the buffer at 7728 (644) and Out at 8372 (2 x 15456)."""
    t, program = generate_and_build(tmp_path, objective="original")
    kin, buf, kout = t.arg("KerIn"), t.arg("KerBuffer"), t.arg("KerOut")
    assert (t.ntiles, kin.tile_std, kin.tile_last, t.l1_bytes) == (6, 24, 1, 39284)
    assert [(a.offset, a.nbuf, a.slot_bytes) for a in (kin, buf, kout)] == [(0, 2, 3864), (7728, 1, 644),
                                                                           (8372, 2, 15456)]
    run_bit_exact(program, t, MODULE.W, MODULE.H)
