"""Tile solver: the guide's tilings, L1 layout, promotion, constraints, and properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotiler import *
from autotiler.errors import ModelError
from autotiler.platforms import get_platform

ROLE_DYNTILE, ROLE_RESIDENT, ROLE_TILE = "dyntile", "resident", "tile"

P32 = "Word32 * __restrict__"


def copy_lib():
    LibKernel("Copy", CALL_PARALLEL, CArgs(TCArg("void *", "In"), TCArg("void *", "Out"),
                                           TCArg("unsigned int", "W"), TCArg("unsigned int", "H")), "Copy_T")


def copy_kernel(name, w, h, item=4, in_type=OBJ_IN_DB, out_type=OBJ_OUT_DB, overlap=0, cons=0, pref=0,
                orient=TILE_HOR, nip=1, nop=1, out_w=None, out_h=None, order=None):
    order = order or KernelIterationOrder(KER_DIM2, KER_TILE)
    return UserKernel(
        name, KernelDimensions(nip, w, h, nop), order, orient,
        CArgs(TCArg("void *", "In"), TCArg("void *", "Out")),
        Calls(Call("Copy", LOC_INNER_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                    K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H)))),
        KerArgs(KerArg("In", in_type, w, h, item, overlap, cons, pref, "In", 0),
                KerArg("Out", out_type, out_w or w, out_h or h, item, 0, 0, 0, "Out", 0)))


def test_guide_matadd_tiling():
    with Model():
        SetL1MemorySize(51200)
        SetTilingObjective("original")  # the guide shows the original's rule: largest tile that fits
        LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"),
                                                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
                  "MatrixAdd_Arg_T")
        t = UserKernel("MatAdd", KernelDimensions(1, 200, 300, 1), KernelIterationOrder(KER_DIM2, KER_TILE),
                       TILE_HOR, CArgs(3, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out")),
                       Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                           5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                           K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                       KerArgs(3, KerArg("In1", OBJ_IN_DB, 200, 300, 4, 0, 0, 0, "In1", 0),
                               KerArg("In2", OBJ_IN_DB, 200, 300, 4, 0, 0, 0, "In2", 0),
                               KerArg("Out", OBJ_OUT_DB, 200, 300, 4, 0, 0, 0, "Out", 0)))
    assert (t.ntiles, t.arg("In1").tile_std, t.arg("In1").tile_last) == (30, 10, 10)
    assert [a.offset for a in t.args] == [0, 16000, 32000]  # as in the guide's generated code
    assert t.l1_bytes == 48000 and t.traffic == 3 * 240000


def test_guide_matrix_max_tiling():
    with Model():
        SetL1MemorySize(51200)
        SetTilingObjective("original")
        LibKernel("KerMatrixMax", CALL_PARALLEL, CArgs(6, TCArg(P32, "In"), TCArg(P32, "Out"),
                                                       TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                       TCArg("unsigned int", "TileIndex"),
                                                       TCArg("unsigned int", "CompareWithOut")), "MatrixMax_Arg_T")
        LibKernel("KerMatrixMaxReduction", CALL_SEQUENTIAL, CArgs(3, TCArg(P32, "In"), TCArg(P32, "Out"),
                                                                  TCArg("unsigned int", "Ntile")), "")
        t = UserKernel("MatMax", KernelDimensions(1, 200, 300, 1), KernelIterationOrder(KER_DIM2, KER_TILE),
                       TILE_HOR, CArgs(2, TCArg("int * __restrict__", "In"), TCArg("int * __restrict__", "Out")),
                       Calls(2, Call("KerMatrixMax", LOC_INNER_LOOP, Bindings(
                           6, K_Arg("In", KER_ARG_TILE), K_Arg("TiledOut", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W),
                           K_Arg("In", KER_ARG_TILE_H), K_Arg("In", KER_ARG_TILEINDEX), Imm(0))),
                           Call("KerMatrixMaxReduction", LOC_INNER_LOOP_EPILOG, Bindings(
                               3, K_Arg("TiledOut", KER_ARG), C_Arg("Out"), K_Arg("TiledOut", KER_ARG_NTILES)))),
                       KerArgs(2, KerArg("In", OBJ_IN_DB, 200, 300, sizeof("int"), 0, 0, 0, "In", 0),
                               KerArg("TiledOut", OBJ_BUFFER_DYN, 1, 300, sizeof("int"), 0, 0, 0, 0, 0)))
    assert (t.ntiles, t.arg("In").tile_std, t.arg("In").tile_last) == (10, 31, 21)
    dyn = t.arg("TiledOut")
    assert dyn.role == ROLE_DYNTILE and dyn.offset == 49600 and dyn.l1_bytes == 40  # guide: L1_Memory + 49600


def test_promotion_when_everything_fits_and_not_when_disabled():
    with Model():
        copy_lib()
        SetL1MemorySize(10000)
        SetTilingObjective("original")
        order = KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE)
        t = copy_kernel("Small", 20, 20, in_type=OBJ_IN_DB_3D, out_type=OBJ_OUT_DB_3D, nip=2, nop=2, order=order)
        assert t.promoted and t.ntiles == 1
        assert all(a.role == ROLE_RESIDENT and a.nbuf == 1 for a in t.args)
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
        t2 = copy_kernel("Small2", 20, 20, in_type=OBJ_IN_DB_3D, out_type=OBJ_OUT_DB_3D, nip=2, nop=2, order=order)
        assert not t2.promoted and t2.arg("In").role == ROLE_TILE
        assert t2.traffic > t.traffic  # planes move one at a time, the input once per output plane


def test_promotion_of_3d_arguments_keeps_all_planes():
    with Model():
        copy_lib()
        SetL1MemorySize(20000)
        SetTilingObjective("original")  # promotion is the only candidate under the original's rule
        t = copy_kernel("P3", 10, 10, in_type=OBJ_IN_DB_3D, out_type=OBJ_OUT_DB_3D, nip=3, nop=2,
                        order=KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE))
        assert t.promoted and t.arg("In").slot_bytes == 3 * 400 and t.arg("Out").slot_bytes == 2 * 400
        assert t.traffic == 3 * 400 + 2 * 400  # compulsory: everything moved once


def test_overlap_and_ratio():
    with Model():
        copy_lib()
        SetL1MemorySize(4000)
        t = copy_kernel("Conv", 40, 36, item=2, overlap=4, out_w=36, out_h=32)
        i, o = t.arg("In"), t.arg("Out")
        assert i.tile_std - i.decl.overlap == o.tile_std  # a K x K neighbourhood needs K-1 extra lines
        assert (t.ntiles - 1) * i.step + i.tile_last == 36 and (t.ntiles - 1) * o.step + o.tile_last == 32
        pool = copy_kernel("Pool", 16, 32, out_w=8, out_h=16)
        assert pool.arg("In").tile_std == 2 * pool.arg("Out").tile_std


def test_even_odd_and_preferred_multiple():
    with Model():
        copy_lib()
        SetL1MemorySize(3000)
        even = copy_kernel("E", 10, 102, cons=OBJ_CONSTRAINTS_EVEN)
        assert even.arg("In").tile_std % 2 == 0 and even.ntiles > 1
        odd = copy_kernel("O", 10, 101, cons=OBJ_CONSTRAINTS_ODD)
        assert odd.arg("In").tile_std % 2 == 1
        pref = copy_kernel("Pr", 10, 101, pref=8)
        assert pref.arg("In").tile_std % 8 == 0


def test_vertical_tiling_cuts_columns():
    with Model():
        copy_lib()
        SetL1MemorySize(3000)
        t = copy_kernel("V", 100, 10, orient=TILE_VER)
        a = t.arg("In")
        assert a.tile_h() == 10 and a.tile_w() == a.tile_std < 100


def test_single_buffer_takes_one_slot():
    with Model():
        copy_lib()
        SetL1MemorySize(3000)
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
        t = copy_kernel("S", 10, 100, in_type=OBJ_IN, out_type=OBJ_OUT)
        assert all(a.nbuf == 1 for a in t.args)
        db = copy_kernel("D", 10, 100)
        assert db.arg("In").tile_std < t.arg("In").tile_std  # double buffering halves the tile


@settings(max_examples=120, deadline=None)
@given(w=st.integers(1, 64), h=st.integers(1, 300), item=st.sampled_from([1, 2, 4]),
       overlap=st.integers(0, 4), vert=st.booleans(), ratio=st.sampled_from([1, 2]),
       budget_scale=st.floats(0.0, 1.2), cons=st.sampled_from([0, OBJ_CONSTRAINTS_EVEN, OBJ_CONSTRAINTS_ODD]))
def test_property_tilings_fit_and_cover(w, h, item, overlap, vert, ratio, budget_scale, cons):
    orient = TILE_VER if vert else TILE_HOR
    dim = w if vert else h
    if dim - overlap < 1 or (dim - overlap) % ratio:
        return
    out_dim = (dim - overlap) // ratio
    out_w, out_h = (out_dim, h) if vert else (w, out_dim)
    if cons == OBJ_CONSTRAINTS_EVEN and (dim - overlap) % 2:
        with Model(), pytest.raises(ModelError, match="OBJ_CONSTRAINTS_EVEN on an odd tiled size"):
            copy_lib()
            copy_kernel("K", w, h, item=item, overlap=overlap, cons=cons, orient=orient,
                        out_w=out_w, out_h=out_h)
        return
    in_line = (h if vert else w) * item
    out_line = (out_h if vert else out_w) * item
    align = lambda n: -(-n // 4) * 4  # noqa: E731  (L1 slots are 4-byte aligned)
    minimum = 2 * align((ratio + overlap) * in_line) + 2 * align(out_line)
    everything = w * h * item + out_w * out_h * item
    budget = max(minimum, int(minimum + budget_scale * (everything - minimum)))
    with Model(get_platform("gap8", l1_size=1 << 20)):  # budgets up to all-fits
        copy_lib()
        SetL1MemorySize(budget)
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = copy_kernel("K", w, h, item=item, overlap=overlap, cons=cons, orient=orient,
                            out_w=out_w, out_h=out_h)
    if t is None:
        assert cons  # without constraints the minimal tiling always fits this budget
        return
    assert t.l1_bytes <= budget
    for a in t.args:
        assert a.offset % 4 == 0
        if a.role == ROLE_TILE:
            d = a.w if a.orientation == TILE_VER else a.h
            assert (t.ntiles - 1) * a.step + a.tile_last == d  # tiles cover the plane exactly
            assert 0 < a.tile_last <= a.tile_std
            if t.ntiles > 1 and a.name == "In" and cons == OBJ_CONSTRAINTS_EVEN:
                assert a.step % 2 == 0  # the constraint holds on the step (the tile less its overlap)
    spans = sorted((a.offset, a.offset + a.l1_bytes) for a in t.args)
    assert all(e <= s for (_, e), (s, _) in zip(spans, spans[1:]))  # no two slots overlap
