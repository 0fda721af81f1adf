"""examples/matmult: the GAP SDK's MatMult generators (ParMatMult, ParVectMatMult), 16-bit, at the
SDK example's sizes (200x70 times 70x150, L1 45000 B): two tiled spaces (T1 bands of lines of M1
and Out outside T0 bands of columns of M2), M2 moved as vertical tiles (2D DMA), Out written once
per T1 iteration; bit-exact at budgets from barely fitting to everything fitting, at the SDK's own
tilings (61-column tiles, where the SDK's vectorial kernel is wrong) and at odd sizes; simulated
cycles equal to the predicted ones."""

import json

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.model.session import current_model
from autotiler.objectives import footprint_range, reschedule
from autotiler.platforms import get_platform
from autotiler.schedule.ir import Copy, Direction, If, Loop
from autotiler.tiler.geometry import kernel_geometry
from autotiler.tiler.tiling import Choice, build_tiling

from .conftest import EXAMPLES, example_reference, load_module, run_model

NAME = "matmult"
KERNELS = ("ParMatMult", "ParVectMatMult")
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)
GAP9 = get_platform("gap9", l2_size=2 * 1024 * 1024)   # 128 KiB of L1: room for the whole problem
model = load_module(EXAMPLES / NAME / "model.py", "model_matmult_test")
ref = example_reference(NAME)
T1, T0 = KER_ITER_TILE1, KER_ITER_TILE0


def build(gen_dir, platform=PLATFORM, sanitize=False):
    return host_harness.build(gen_dir, sources=[EXAMPLES / NAME / s for s in ref.SOURCES],
                              include_dirs=[EXAMPLES / NAME], platform=platform, sanitize=sanitize)


def generate_and_build(tmp_path, l1, platform=PLATFORM, tilings=None, sanitize=False, **sizes):
    """({kernel: tiling}, program) for the model declared at budget ``l1`` (``tilings``:
    {kernel: Choice sizes, i.e. the steps of T1 and T0} forced instead of the tiler's choice)."""
    with Model(platform) as m:
        model.declare(l1, **sizes)
        for name, sizes_ in (tilings or {}).items():
            t = build_tiling(kernel_geometry(m.kernels[name]), Choice(sizes=sizes_), l1)
            assert t.l1_bytes <= l1, f"forced tiling of {name} needs {t.l1_bytes} B"
            m.tilings[name] = reschedule(t, m.libs, m.platform)
        chosen = {k: m.tilings[k] for k in KERNELS}
        write_files(generate(m), str(tmp_path))
    return chosen, build(tmp_path, platform, sanitize)


def run_kernel(prog, kernel, seed, norm=ref.NORM, **sizes):
    """Run one user kernel on random inputs, check Out bit-exactly, return the counters."""
    args = ref.kernel_args(np.random.default_rng(seed), norm=norm, **sizes)
    counters = prog.call(kernel, **args)
    np.testing.assert_array_equal(args["Out"], ref.expected(args)["Out"], err_msg=f"{kernel}, Norm {norm}")
    return counters


def check_both(tilings, prog, seed=1, **sizes):
    """Both kernels bit-exact, simulated cycles == predicted, L1 as laid out."""
    for k in KERNELS:
        counters = run_kernel(prog, k, seed, **sizes)
        assert counters["cycles"] == tilings[k].predicted.cycles, k
        assert counters["peak_l1"] >= tilings[k].l1_bytes
        assert counters["l2_to_l1"] == tilings[k].traffic_in and counters["l1_to_l2"] == tilings[k].traffic_out


def copies(stmts, loops=()):
    """(Copy, enclosing loop spaces) of every transfer of a schedule."""
    for s in stmts:
        if isinstance(s, Copy):
            yield s, loops
        elif isinstance(s, Loop):
            yield from copies(s.body, loops + (s.space,))
        elif isinstance(s, If):
            yield from copies(s.body, loops)


def test_declared_with_two_tiled_spaces():
    with Model() as m:
        model.declare()
        for k in KERNELS:
            uk = m.kernels[k]
            assert [(s.space, s.kind.value) for s in uk.space.spaces] == [(T1, "tiled"), (T0, "tiled")]
            spaces = {a.name: a.space.spaces for a in uk.kerargs}
            assert spaces["M1"] == spaces["Out"] == (T1,) and spaces["M2"] == (T0,)
            assert uk.kerarg("M2").constraints == OBJ_CONSTRAINTS_TILE_VER | OBJ_CONSTRAINTS_PAD_REM
            assert [(c.location, len(c.bindings)) for c in uk.calls] == [(LOC_LOOP, 10)]
            assert not uk.options.buffer_promote      # SetKernelOpts(KER_OPT_NONE, KER_OPT_BUFFER_PROMOTE)
        assert m.kernels["ParMatMult"].calls[0].bindings[8] is AT_IGNORE_ARG_BINDING
        buff = m.kernels["ParVectMatMult"].kerarg("KerBuff")
        assert buff.obj_type == O_BUFF | O_NTILED and (buff.w, buff.h) == (2 * model.COL_M1, 1)
        assert m.groups[model.GROUP]


def test_sdk_budget_tilings(tmp_path):
    """At the SDK's 45000 B (the time objective), e.g. ParMatMult: T1 10 tiles of 22 lines (last
    2), T0 a single tile: M2 (21000 B) is read once and stays in L1 (832651 cycles,
    compute-bound); ParVectMatMult: T1 5 x 40 lines, T0 5 x 30 columns (380553 cycles). The
    exact sizes are the search's business; what must hold: M2 stays in L1 for ParMatMult, both
    spaces of ParVectMatMult iterate, everything fits, predicted = simulated, and the tilings are
    predicted no slower than the SDK's own ones (876467 and 408736 cycles) nor than the 'original'
    objective's."""
    tilings, prog = generate_and_build(tmp_path, model.L1_BUDGET)
    par, vect = tilings["ParMatMult"], tilings["ParVectMatMult"]
    assert par.count(T1) > 1 and par.count(T0) == 1
    assert par.arg("M2").level is None and par.arg("M2").slot_bytes == 21000
    assert vect.count(T1) > 1 and vect.count(T0) > 1
    assert vect.arg("KerBuff").l1_bytes == 280
    assert par.l1_bytes <= model.L1_BUDGET and vect.l1_bytes <= model.L1_BUDGET
    assert par.predicted.cycles <= 876467 and vect.predicted.cycles <= 408736
    with Model():
        SetTilingObjective("original")
        model.declare(model.L1_BUDGET)
        original = current_model().tilings
    assert par.predicted.cycles <= original["ParMatMult"].predicted.cycles
    assert vect.predicted.cycles <= original["ParVectMatMult"].predicted.cycles
    check_both(tilings, prog)
    # Norm 0 (no rounding, mostly saturated) and 15 as well
    for norm in (0, 15):
        for k in KERNELS:
            run_kernel(prog, k, 4, norm=norm)


# The tilings of the SDK's generated MatMultKernels.c for these sizes and budget (T1 x T0 steps)
SDK_TILINGS = {"ParMatMult": ((T1, 38), (T0, 38)), "ParVectMatMult": ((T1, 31), (T0, 61))}


def test_sdk_own_tilings_reproduced(tmp_path):
    """Forced, the SDK's tilings come out with the SDK's L1 sizes: ParMatMult T1 6 x 38 lines
    (last 10), T0 4 x 38 columns (last 36), 44080 B; ParVectMatMult T1 7 x 31 (last 14), T0 3 x
    61 (last 28), 44640 B. Bit-exact (the 61-column tiles are where the SDK's Vectorial16_v2 gets
    the last column wrong); the time objective's own tilings are predicted faster."""
    tilings, prog = generate_and_build(tmp_path / "sdk", model.L1_BUDGET, tilings=SDK_TILINGS)
    par, vect = tilings["ParMatMult"], tilings["ParVectMatMult"]
    assert [lp.count for lp in par.loops] == [6, 4] and par.l1_bytes == 44080
    assert (par.arg("M1").tile_h(), par.arg("M1").tile_h(last=True)) == (38, 10)
    assert (par.arg("M2").tile_w(), par.arg("M2").tile_w(last=True)) == (38, 36)
    assert [lp.count for lp in vect.loops] == [7, 3] and vect.l1_bytes == 44640
    assert (vect.arg("M1").tile_h(), vect.arg("M1").tile_h(last=True)) == (31, 14)
    assert (vect.arg("M2").tile_w(), vect.arg("M2").tile_w(last=True)) == (61, 28)
    check_both(tilings, prog)
    with Model() as m:
        model.declare()
        chosen = {k: m.tilings[k] for k in KERNELS}
    for k in KERNELS:
        assert chosen[k].predicted.cycles < tilings[k].predicted.cycles


def test_m2_moves_as_vertical_tiles_and_out_once_per_t1_iteration(tmp_path):
    """In the SDK's ParMatMult tiling (both loops iterate): M2's tiles are full-height column
    bands moved by 2D transfers (lines of tile-width bytes, 300 B apart in L2), re-read for each
    T1 iteration; M1 and Out move as contiguous bands of full lines, at T1 only; Out is written
    back once per T1 iteration, after the T0 loop (each byte once); OutFirstCol is the first
    column of M2's tile."""
    with Model() as m:
        model.declare()
        t = reschedule(build_tiling(kernel_geometry(m.kernels["ParMatMult"]), Choice(sizes=SDK_TILINGS["ParMatMult"]),
                                    model.L1_BUDGET), m.libs, m.platform)
        m.tilings["ParMatMult"] = t
        code = generate(m)["MatMultKernels.c"]
    assert t.arg("M2").orientation == TILE_VER and t.arg("M1").orientation == t.arg("Out").orientation == TILE_HOR
    assert t.arg("M2").level == T0 and t.arg("M2").instances == 6 * 4
    assert t.arg("M1").level == t.arg("Out").level == T1 and t.arg("Out").instances == 6
    moves = list(copies(t.schedule.body))
    m2 = [c for c, _ in moves if c.arg == "M2"]
    assert m2 and all(c.stride is not None and c.stride.value == 2 * model.COL_M2 for c in m2)
    for name in ("M1", "Out"):
        assert all(c.stride is None and "T0" not in loops for c, loops in moves if c.arg == name)
    writes = [loops for c, loops in moves if c.direction == Direction.OUT]
    assert writes and all(loops == ("T1",) for loops in writes)
    assert t.traffic_out == 2 * model.LINE_M1 * model.COL_M2                      # Out written once
    assert t.traffic_in == 2 * (model.LINE_M1 * model.COL_M1 + 6 * model.COL_M1 * model.COL_M2)
    par = code[code.index("void ParMatMult("):code.index("void ParVectMatMult(")]
    assert "for (T1Ind=0; T1Ind<6; " in par and "for (T0Ind=0; T0Ind<4; " in par
    assert "KerArg0->OutFirstCol = (unsigned int) (T0Ind*38);" in par
    assert "KerArg0->W_In2 = (unsigned int) ((T0Ind==3)?36:38);" in par
    assert "AT_L2_COPY2D(0, (AT_L2_EXT_ADDR_TYPE) ((char *) M2" in par


def test_model_script_at_a_smaller_budget(tmp_path):
    """``model.py --L1 20000``: both loops of ParMatMult iterate (M2 no longer fits whole);
    OutFirstCol = T0Ind times M2's standard tile width; the group bit-exact, its cycles those
    the two tilings predict."""
    proc = run_model(NAME, tmp_path, "--L1", "20000")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "MatMultKernels.json").read_text())
    loops = dict(manifest["tilings"]["ParMatMult"]["loops"])
    assert loops["T1"] > 1 and loops["T0"] > 1
    width = next(a["tile_std"] for a in manifest["tilings"]["ParMatMult"]["args"] if a["name"] == "M2")
    code = (tmp_path / "MatMultKernels.c").read_text()
    par = code[code.index("void ParMatMult("):code.index("void ParVectMatMult(")]
    assert f"KerArg0->OutFirstCol = (unsigned int) (T0Ind*{width});" in par
    with Model() as m:
        model.declare(20000)
        tilings = {k: m.tilings[k] for k in KERNELS}
    assert [lp.count for lp in tilings["ParMatMult"].loops] == [loops["T1"], loops["T0"]]
    prog = build(tmp_path)
    args = ref.make_args(np.random.default_rng(5))
    counters = prog.call(ref.KERNEL, **args)
    for out, value in ref.expected(args).items():
        np.testing.assert_array_equal(args[out], value, err_msg=out)
    assert counters["cycles"] == sum(t.predicted.cycles for t in tilings.values())
    check_both(tilings, prog)


@pytest.mark.parametrize("platform,l1", [(PLATFORM, "smallest"), (PLATFORM, 8000), (PLATFORM, 20000),
                                         (PLATFORM, 64 * 1024), (GAP9, 109280)],
                         ids=lambda v: str(getattr(v, "name", v)))
def test_bit_exact_from_barely_fitting_to_everything_fitting(platform, l1, tmp_path):
    with Model() as m:
        model.declare()
        ranges = [footprint_range(m.kernels[k]) for k in KERNELS]
    budget = max(r[0] for r in ranges) if l1 == "smallest" else l1
    if platform is GAP9:
        assert max(r[1] for r in ranges) == budget          # everything fits in L1
    tilings, prog = generate_and_build(tmp_path, budget, platform)
    if l1 == "smallest":
        # ParVectMatMult: 2 x (a line of M1, a column of M2, a line of Out) + KerBuff
        assert budget == 2 * (140 + 140 + 300) + 280 == 1440
        assert [lp.count for lp in tilings["ParVectMatMult"].loops] == [200, 150]
    check_both(tilings, prog)


@pytest.mark.parametrize("steps", [(40, 3), (16, 1), (16, 7)], ids=["3cols", "1col", "7cols_last3"])
def test_vectorial_kernel_on_odd_tile_widths(steps, tmp_path):
    """ParVectMatMult forced to tiles of 3, 1 or 7 (last 3) columns: the vectorial kernel's lone
    last column on every tile."""
    forced = {"ParVectMatMult": ((T1, steps[0]), (T0, steps[1]))}
    tilings, prog = generate_and_build(tmp_path, model.L1_BUDGET, tilings=forced)
    m2 = tilings["ParVectMatMult"].arg("M2")
    assert m2.tile_w() == steps[1] and m2.tile_w(last=True) % 2 == 1
    check_both(tilings, prog)


@pytest.mark.parametrize("l1", [2000, 9000, 45000])
def test_odd_sizes(l1, tmp_path):
    """37 x 69 times 69 x 151: odd lines of In1 (the vectorial kernel's item-by-item path), odd
    output widths, line counts not a multiple of the cores."""
    sizes = {"LineM1": 37, "ColM1": 69, "ColM2": 151}
    tilings, prog = generate_and_build(tmp_path, l1, **sizes)
    assert any(tilings[k].iterations > 1 for k in KERNELS)
    check_both(tilings, prog, **sizes)


@pytest.mark.slow
def test_odd_sizes_under_sanitizers(tmp_path):
    """Odd W_In1 leaves In1's lines and the second buffer column 2-byte aligned: the vectorial
    kernel must not read them as v2s (UBSan's alignment check), nor overflow its accumulators."""
    sizes = {"LineM1": 37, "ColM1": 69, "ColM2": 151}
    _, prog = generate_and_build(tmp_path, 9000, sanitize=True, **sizes)
    for k in KERNELS:
        args = ref.kernel_args(np.random.default_rng(6), **sizes)
        prog.call(k, **args)
        np.testing.assert_array_equal(args["Out"], ref.expected(args)["Out"], err_msg=k)


def test_only_the_16_bit_type_and_matching_sizes_are_accepted():
    from autotiler.errors import ModelError

    with Model():
        model.MatMultConfiguration(model.L1_BUDGET)
        model.LoadMatMultLibrary()
        with pytest.raises(ModelError, match="Incorrect input matrices dimensions"):
            model.ParMatMultGenerator("Bad", 10, 20, 21, 10, 1)
        with pytest.raises(ModelError, match="data type 0 has no basic kernel"):
            model.ParVectMatMultGenerator("Bad", 10, 20, 20, 10, 0)
