"""The 'original' objective with several tiled spaces (issue 22, item 7): the tiled spaces grow
together, smallest tile first, until the next growth would leave less than RESERVE bytes of L1
free (autotiler/tiler/original.py). Each case is a data point of the original's public generated
code (sources in docs/semantics.md, "The original's rule with several tiled spaces"); the
tilings are checked without building them."""

from fractions import Fraction

import pytest

from autotiler import *
from autotiler.model.session import current_model
from autotiler.tiler.geometry import kernel_geometry
from autotiler.tiler.original import RESERVE, grow, grown_spaces, legal_steps, tile_measure

from .conftest import EXAMPLES, load_module

matmult = load_module(EXAMPLES / "matmult" / "model.py", "model_matmult_original")
T2, T1, T0 = KER_ITER_TILE2, KER_ITER_TILE1, KER_ITER_TILE0


def loops(t) -> list:
    return [(lp.space, lp.count, lp.std) for lp in t.loops]


def matmult_tilings(l1=matmult.L1_BUDGET) -> dict:
    with Model():
        SetTilingObjective("original")
        matmult.declare(l1)
        return dict(current_model().tilings)


def test_sdk_matmult_at_45000_as_the_sdk_generated_it():
    """The SDK's MatMult (200x70 * 70x150, 45000 B) ported line by line: the SDK's generated
    MatMultKernels.c has ParMatMult in 6 x 4 tiles (T1 x T0) of 38 lines and 38 columns in
    44080 B, ParVectMatMult in 7 x 3 tiles of 31 lines and 61 columns in 44640 B (the largest-
    first rule gave 4 x 50 and 4 x 75 tiles in 44840 B)."""
    t = matmult_tilings()
    par, vect = t["ParMatMult"], t["ParVectMatMult"]
    assert loops(par) == [(T1, 6, 38), (T0, 4, 38)] and par.l1_bytes == 44080
    assert (par.arg("M1").tile_h(), par.arg("M1").tile_h(last=True)) == (38, 10)
    assert (par.arg("M2").tile_w(), par.arg("M2").tile_w(last=True)) == (38, 36)
    assert [(a.name, a.offset, a.nbuf) for a in par.args] == [("M1", 0, 2), ("M2", 10640, 2), ("Out", 21280, 2)]
    assert loops(vect) == [(T1, 7, 31), (T0, 3, 61)] and vect.l1_bytes == 44640
    assert (vect.arg("M1").tile_h(), vect.arg("M1").tile_h(last=True)) == (31, 14)
    assert (vect.arg("M2").tile_w(), vect.arg("M2").tile_w(last=True)) == (61, 28)
    assert vect.arg("KerBuff").l1_bytes == 280


def test_why_vect_takes_wider_t0_tiles():
    """ParVectMatMult's T0 holds M2 (its tile's columns) and KerBuff (one line): T0 measures
    (61 + 1) / 2 = 31 like T1's 31 lines, so the tiles stop growing there; the next growth (T1,
    the outer space, on a tie) would need 45520 B. ParMatMult's equal 38 x 38 stop because
    39 lines would leave only 40 B of the 45000 free, less than the reserve."""
    with Model() as m:
        matmult.declare()
        vect, par = kernel_geometry(m.kernels["ParVectMatMult"]), kernel_geometry(m.kernels["ParMatMult"])
    t1, t0 = vect.space(T1), vect.space(T0)
    assert tile_measure(vect, t0, 61) == Fraction(31) == tile_measure(vect, t1, 31)
    assert tile_measure(vect, t0, 62) == Fraction(63, 2)
    assert tile_measure(par, par.space(T0), 38) == 38 == tile_measure(par, par.space(T1), 38)
    assert grown_spaces(vect, list(vect.spaces)) == [t1, t0]
    assert legal_steps(vect, t0) == list(range(1, 151))
    # the growth alone, with the footprint of the MatMult kernels (880 B per line, 280 per column)
    fits = lambda s: 880 * s[T1] + 280 * s[T0] + 280 <= 45000 - RESERVE  # noqa: E731
    assert grow(vect, [t1, t0], fits) == {T1: 31, T0: 61}
    assert grow(par, [par.space(T1), par.space(T0)], lambda s: 880 * s[T1] + 280 * s[T0] <= 45000 - RESERVE) \
        == {T1: 38, T0: 38}


def recurrent_layer(name: str, fixed: int, budget: int, *kernels) -> object:
    """The tiling of a recurrent layer as the public GRU/LSTM generators declare it: the outer
    tiled space holds the vectors of one line, each of ``kernels`` ((space, W, H): a recurrent
    kernel matrix, 16 bit) is tiled vertically along its own inner tiled space. The vectors'
    L1 bytes are those of the original's layout, ``fixed`` (the original double-buffers them
    even though they never move: here one vector of that size stands for them)."""
    outer = T2 if len(kernels) == 2 else T1
    spaces = [outer] + [sp for sp, _, _ in kernels]
    names = ["Vec"] + [f"Rec{i}" for i in range(len(kernels))]
    with Model() as m:
        SetL1MemorySize(budget)
        SetTilingObjective("original")
        LibKernel("KerRnn", CALL_PARALLEL, CArgs(len(names), *(TCArg("short int *", n) for n in names)), "KerRnn_ArgT")
        UserKernel(name, KernelIterSpace(len(spaces), *(IterTiledSpace(sp) for sp in spaces)), TILE_HOR,
                   CArgs(len(names), *(TCArg("short int *", n) for n in names)),
                   Calls(1, Call("KerRnn", LOC_LOOP, Bindings(len(names), *(K_Arg(n, KER_ARG_TILE) for n in names)))),
                   KerArgs(len(names),
                           KerArg("Vec", KerArgSpace(1, outer), O_IN | O_DB, fixed // 2, 1, 2, 0,
                                  OBJ_CONSTRAINTS_PAD_REM, 0, "Vec"),
                           *(KerArg(n, KerArgSpace(1, sp), O_IN | O_DB, w, h, 2, 0,
                                    OBJ_CONSTRAINTS_TILE_VER | OBJ_CONSTRAINTS_PAD_REM, 0, n)
                             for n, (sp, w, h) in zip(names[1:], kernels))))
        return m.tilings[name]


@pytest.mark.parametrize("name,units,fixed,budget,t1,t0,l1", [
    # GRU of 200 units at 48000 B (the budget its generated header gives): T1 one column wider
    ("EncGRUlayer200", 200, 12512, 48000, (10, 22), (20, 21), 46912),
    ("DecGRUlayer200", 200, 10848, 48000, (9, 23), (19, 22), 46848),
    # GRU of 100 units: the budget is not in the repository; 45000 B (the SDK examples') assumed
    ("EncGRUlayer100", 100, 6312, 45000, (3, 48), (5, 47), 44312),
    ("DecGRUlayer100", 100, 5448, 45000, (3, 49), (5, 48), 44248),
])
def test_gru_layers_as_their_generated_code(name, units, fixed, budget, t1, t0, l1):
    """Three tiled spaces (T2, the vectors of one line, never grows; T1 the recurrent kernel 2
    (units x units), T0 the recurrent kernel (units x 2*units)): T1 and T0 grow together, T1
    (outer) first on a tie; equal tiles would fit the budget (by 288 to 352 B) but not the
    reserve."""
    t = recurrent_layer(name, fixed, budget, (T1, units, units), (T0, 2 * units, units))
    assert loops(t) == [(T2, 1, 1), (T1, *t1), (T0, *t0)] and t.l1_bytes == l1
    assert budget - RESERVE < l1 + 2 * 2 * units   # one more column of either does not fit the reserve


@pytest.mark.parametrize("name,fixed,t0,l1", [("Encoder", 11512, (11, 55), 44512),
                                              ("Decoder", 12048, (12, 54), 44448)])
def test_lstm_layers_as_their_generated_code(name, fixed, t0, l1):
    """The LSTM layers of 150 units at 45000 B: T1 (the vectors) is one line, T0 (the
    recurrent kernel, 150 x 600) grows alone to the largest tile within the reserve."""
    t = recurrent_layer(name, fixed, 45000, (T0, 600, 150))
    assert loops(t) == [(T1, 1, 1), (T0, *t0)] and t.l1_bytes == l1


def test_only_the_reserve_fits_falls_back_to_largest_first():
    """When even the smallest tiles fit only within the reserve, the growth finds nothing and
    the tiled spaces take the largest-first rule (a tiling that fits, not an error)."""
    smallest = 880 * 1 + 280 * 1 + 280    # ParVectMatMult at one line and one column
    t = matmult_tilings(smallest + RESERVE // 2)["ParVectMatMult"]
    assert loops(t) == [(T1, 200, 1), (T0, 150, 1)] and t.l1_bytes == smallest


def copy_kernel(w: int, ctype: str, item: int):
    """Copy1(In, Out): 200 lines of w items, one tiled space, both arguments double buffered."""
    LibKernel("Copy", CALL_PARALLEL, CArgs(2, TCArg(f"{ctype} *", "In"), TCArg(f"{ctype} *", "Out")), "Copy_T")
    return UserKernel("Copy1", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR,
                      CArgs(2, TCArg(f"{ctype} *", "In"), TCArg(f"{ctype} *", "Out")),
                      Calls(1, Call("Copy", LOC_LOOP, Bindings(2, K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE)))),
                      KerArgs(2, KerArg("In", KerArgSpace(1, T0), O_IN | O_DB, w, 200, item, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(1, T0), O_OUT | O_DB, w, 200, item, 0, 0, 0, "Out")))


def test_one_tiled_space_keeps_the_largest_tile():
    """With one tiled space nothing grows: the largest tile that fits, up to the last byte (the
    reserve is only observed with several tiled spaces)."""
    with Model() as m:
        SetL1MemorySize(44200)
        SetTilingObjective("original")
        t = copy_kernel(100, "short int", 2)
        kg = kernel_geometry(m.kernels["Copy1"])
        assert grown_spaces(kg, list(kg.spaces)) == []
    # 800 B per line: 55 lines take 44000 B, within the reserve of the budget
    assert loops(t) == [(T0, 4, 55)] and t.l1_bytes == 44000 > 44200 - RESERVE


@pytest.mark.parametrize("w, lines", [(50, 56), (37, 76), (100, 28)])
def test_one_tiled_space_takes_every_legal_step(w, lines):
    """The largest tile that fits is a step of its own, not one of the spread the other
    objectives sample: 200 lines of w Word32 items, In and Out double buffered, at 45000 B (56
    lines of 50 items take 44800 B; the sampled steps gave 55)."""
    with Model():
        SetL1MemorySize(45000)
        SetTilingObjective("original")
        t = copy_kernel(w, "int", 4)
    assert loops(t)[0][2] == lines and t.l1_bytes == 16 * w * lines <= 45000 < 16 * w * (lines + 1)
