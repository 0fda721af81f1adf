"""Regressions found writing the SDK's generators as examples: each once gave wrong C, a
spurious verifier failure, a wrong tiling or a silent acceptance."""

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.platforms import get_platform
from autotiler.schedule.cost import predict

from . import test_property_e2e as e2e
from .conftest import ROOT

KERNELS = ROOT / "tests" / "kernels"
U8 = "Wordu8 * __restrict__"
S16 = "short * __restrict__"


def win_u8():
    LibKernel("KerWin_u8", CALL_PARALLEL, CArgs(TCArg(U8, "In"), TCArg(U8, "Out"), TCArg("Wordu32 * __restrict__", "Wt"),
                                                TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                TCArg("unsigned int", "Ov"), TCArg("unsigned int", "Vertical")),
              "KerWin_u8_T", Cost="W*H/ncores + 12")


def test_l3_prefetch_offset_that_is_a_bare_select_is_parenthesised(tmp_path):
    """One-byte items, one per line: the micro-DMA prefetch offset is the select itself
    (``(T0Ind==4)?0:(T0Ind + 1)``), once printed unparenthesised after the pointer cast."""
    with Model() as m:
        SetUsedFilesNames(0, 1, "WinKernels.h")
        SetGeneratedFilesNames("L3Gen.c", "L3Gen.h")
        SetTilingObjective("naive")
        SetL1MemorySize(64)
        win_u8()
        t = UserKernel("K", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                       CArgs(TCArg(U8, "In"), TCArg(U8, "Out"), TCArg("Wordu32 * __restrict__", "Wt")),
                       Calls(Call("KerWin_u8", LOC_LOOP, Bindings(
                           K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("Wt", KER_ARG_TILE),
                           K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H), Imm(0), Imm(0)))),
                       KerArgs(KerArg("In", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB_L2DB, 1, 5, 1, 0, 0, 0, "In"),
                               KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_OUT_DB, 1, 5, 1, 0, 0, 0, "Out"),
                               KerArg("Wt", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_BUFF | O_NTILED, 1, 1, 4, 0, 0, 0,
                                      "Wt")))
        assert t.ntiles == 5
        files = generate(m)
    assert "(char *) In + ((T0Ind==" in files["L3Gen.c"]
    write_files(files, str(tmp_path))
    prog = host_harness.build(tmp_path, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS],
                              platform=get_platform("gap8"))
    x = np.arange(1, 6, dtype=np.uint8).reshape(5, 1)
    out = np.zeros_like(x)
    counters = prog.call("K", In=x, Out=out, Wt=np.array([3], dtype=np.uint32))
    np.testing.assert_array_equal(out, x * 3)
    assert counters["cycles"] == t.predicted.cycles


def _prolog_kernel(pad: int):
    """A loop-prolog call binding the tile of a double-buffered input (the SDK's FIR init)."""
    SetL1MemorySize(1024)
    LibKernel("Zero", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg("unsigned int", "N")), "", Cost="1")
    LibKernel("Copy", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out"), TCArg("unsigned int", "N")), "",
              Cost="1")
    return UserKernel("K", KernelIterSpace(1, IterTiledSpace(KER_TILE)), TILE_HOR,
                      CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                      Calls(Call("Zero", LOC_LOOP_PROLOG, Bindings(K_Arg("In", KER_ARG_TILE), Imm(4))),
                            Call("Copy", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                            K_Arg("In", KER_ARG_TILE_H)))),
                      KerArgs(KerArgPad("In", KerArgSpace(1, KER_TILE), OBJ_IN_DB, 1, 1000, pad, 0, 2, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(1, KER_TILE), OBJ_OUT_DB, 1, 1000, 2, 0, 0, 0, "Out")))


def test_prolog_call_may_touch_the_delay_line_while_the_first_tile_lands():
    with Model():
        t = _prolog_kernel(pad=4)
    assert t.ntiles > 1 and t.arg("In").nbuf == 2  # the schedule verified: only the delay line is touched


def test_prolog_call_binding_a_tile_in_flight_without_delay_line_is_refused():
    with Model(), pytest.raises(TilingError, match="a call outside the T0 loop binds the tile of 'In', whose first "
                                                   r"instance is still being read there.*give it a delay line"):
        _prolog_kernel(pad=0)


def test_naive_objective_keeps_a_next_buffer_for_ker_arg_tile_nextdb():
    with Model():
        SetTilingObjective("naive")
        SetL1MemorySize(1024)
        LibKernel("Fir", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg(S16, "Next"), TCArg(S16, "Out")), "", Cost="1")
        t = UserKernel("K", KernelIterSpace(1, IterTiledSpace(KER_TILE)), TILE_HOR,
                       CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                       Calls(Call("Fir", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_NEXTDB),
                                                            K_Arg("Out", KER_ARG_TILE)))),
                       KerArgs(KerArgPad("In", KerArgSpace(1, KER_TILE), OBJ_IN_DB, 1, 100, 4, 0, 2, 0, 0, 0, "In"),
                               KerArg("Out", KerArgSpace(1, KER_TILE), OBJ_OUT_DB, 1, 100, 2, 0, 0, 0, "Out")))
    assert t.arg("In").nbuf == 2 and t.arg("Out").nbuf == 1  # single buffering but where NEXTDB needs two


def _stride2(tile_cons: int):
    SetL1MemorySize(2500)
    LibKernel("K2", CALL_PARALLEL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out")), "K_T", Cost="10")
    return UserKernel("S2", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                      CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                      Calls(Call("K2", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE)))),
                      KerArgs(KerArgP("In", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_DB, 16, 64, 16, 64, (0, 0, 1, 0),
                                      (0, 0, 1, 0), 2, 1, 0, tile_cons, "In"),
                              KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), O_OUT | O_DB, 16, 32, 2, 0, 0, 0, "Out")))


def test_preferred_tile_size_constrains_the_step_not_the_overlapping_tile():
    """A 3-line stride-2 window (overlap 1) with the SDK's TileCons = 2: tiles of 2k + 1 lines,
    never even, so checking the whole tile allowed a single tile only."""
    with Model():
        t = _stride2(2)
    a = t.arg("In")
    assert t.ntiles > 1 and a.step % 2 == 0 and a.tile_std % 2 == 1


def test_promoted_input_with_unused_lines_holds_only_the_used_lines():
    """A KerArgP using 5 of its 6 lines, promoted: L1 holds 5 lines per plane (what KER_ARG_TILE_H
    says), moved by a 2D copy of 2 planes x 80 B with the 96 B plane stride of L2."""
    with Model() as m:
        SetL1MemorySize(10000)
        LibKernel("CopyPlanes", CALL_PARALLEL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out"), TCArg("int", "W"),
                                                     TCArg("int", "H"), TCArg("int", "N")), "CopyPlanes_T",
                  Cost="W*H*N")
        t = UserKernel("K", KernelIterSpace(2, IterTiledSpace(KER_ITER_TILE0), IterParSpace(KER_ITER_D0, 2, 1)),
                       TILE_HOR, CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                       Calls(Call("CopyPlanes", LOC_D0, Bindings(
                           K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W),
                           K_Arg("In", KER_ARG_TILE_H), K_ArgPar("In", KER_ARG_PARTILE_SIZE, KER_ITER_D0)))),
                       KerArgs(KerArgP("In", KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0), O_IN | O_DB, 8, 6, 8, 5, 0, 0,
                                       2, 0, 0, 0, "In"),
                               KerArg("Out", KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0), O_OUT | O_DB, 8, 5, 2, 0, 0, 0,
                                      "Out")))
        code = generate(m)["GenKernels.c"]
    assert t.promoted and t.arg("In").slot_bytes == 2 * 5 * 8 * 2
    assert "KerArg0->H = (int) (5);" in code
    assert "AT_L2_COPY2D(0, (AT_L2_EXT_ADDR_TYPE) ((char *) In), (AT_L2_INT_ADDR_TYPE) (L1_Memory), 160, 96, 80," in code


def test_l1_budget_above_the_chip_is_refused():
    with Model():
        SetL1MemorySize(200000)
        LibKernel("K2", CALL_PARALLEL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out")), "K_T", Cost="10")
        with pytest.raises(ModelError, match=r"the L1 budget of 200000 bytes exceeds the 65536 bytes of L1 of platform "
                                             r"'gap8'.*get_platform\('gap8', l1_size=...\)"):
            UserKernel("S", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                       CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                       Calls(Call("K2", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE)))),
                       KerArgs(KerArg("In", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB, 16, 64, 2, 0, 0, 0, "In"),
                               KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, 16, 64, 2, 0, 0, 0, "Out")))


U32 = "Wordu32 * __restrict__"


def _frames_kernel(order_dyn_first=True, in_type=OBJ_IN_DB):
    """Out[f] += 3 * In[f] for the first NFrames frames of 6 (the SDK's MFCC/RNN pattern):
    IterFixedSpaceDynBound on the outer space, frames tiled by lines."""
    SetUsedFilesNames(0, 1, "WinKernels.h")
    SetGeneratedFilesNames("DynGen.c", "DynGen.h")
    SetL1MemorySize(600)
    LibKernel("KerWin_u32", CALL_PARALLEL, CArgs(TCArg(U32, "In"), TCArg(U32, "Out"), TCArg(U32, "Wt"),
                                                 TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                 TCArg("unsigned int", "Ov"), TCArg("unsigned int", "Vertical")),
              "KerWin_u32_T", Cost="W*H/ncores + 12")
    dyn, tiled = IterFixedSpaceDynBound(KER_ITER_D0, 6, "NFrames"), IterTiledSpace(KER_ITER_TILE0)
    return UserKernel("Frames", KernelIterSpace(2, *((dyn, tiled) if order_dyn_first else (tiled, dyn))), TILE_HOR,
                      CArgs(TCArg(U32, "In"), TCArg(U32, "Out"), TCArg(U32, "Wt"), TCArg("int", "NFrames")),
                      Calls(Call("KerWin_u32", LOC_LOOP, Bindings(
                          K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("Wt", KER_ARG_TILE),
                          K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H), Imm(0), Imm(0)))),
                      KerArgs(KerArg("In", KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0), in_type, 4, 10, 4, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0), OBJ_IN_OUT_DB, 4, 10, 4, 0, 0, 0,
                                     "Out"),
                              KerArg("Wt", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_BUFF | O_NTILED, 1, 1, 4, 0, 0, 0,
                                     "Wt")))


def test_run_time_bound_runs_the_first_frames_only(tmp_path):
    with Model() as m:
        t = _frames_kernel()
        assert t.count(KER_ITER_D0) == 6 and t.ntiles > 1
        files = generate(m)
    code = files["DynGen.c"]
    assert "for (D0Ind=0; D0Ind<NFrames; D0Ind++" in code
    write_files(files, str(tmp_path))
    prog = host_harness.build(tmp_path, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS],
                              platform=get_platform("gap8"))
    x = np.arange(6 * 10 * 4, dtype=np.uint32).reshape(6, 10, 4)
    for frames in (6, 3, 1):
        out = np.full_like(x, 7)
        counters = prog.call("Frames", In=x, Out=out, Wt=np.array([3], dtype=np.uint32), NFrames=frames)
        np.testing.assert_array_equal(out[:frames], 7 + 3 * x[:frames])
        np.testing.assert_array_equal(out[frames:], 7)  # frames past the bound untouched
        if frames == 6:
            assert counters["cycles"] == t.predicted.cycles  # predicted for the static extent, the worst case
        else:
            assert counters["cycles"] < t.predicted.cycles


def test_run_time_bound_on_an_inner_space_is_not_supported_yet():
    with Model(), pytest.raises(ModelError, match=r"IterFixedSpaceDynBound\(D0, 6, \"NFrames\"\): a run-time bound is "
                                                  r"supported on the outermost space only.*make it the first space"):
        _frames_kernel(order_dyn_first=False)


def test_run_time_bound_with_a_moving_l3_argument_is_not_supported_yet():
    with Model(), pytest.raises(TilingError, match=r"'In' is homed in L3 and moves per iteration of a loop bounded at "
                                                   r"run time by 'NFrames': not supported yet.*keep 'In' in L2"):
        _frames_kernel(in_type=OBJ_IN_DB_L2DB)


def test_run_time_bound_reaches_tilelast_ntiles_and_partile_dim():
    """Selectors over a loop bounded at run time read the bound, not the static extent."""
    with Model() as m:
        SetL1MemorySize(600)
        LibKernel("Ker", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg("int", "Last"), TCArg("int", "N"),
                                                TCArg("int", "P")), "", Cost="10")
        UserKernel("K", KernelIterSpace(2, IterFixedSpaceDynBound(KER_ITER_D0, 6, "NFrames"),
                                        IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                   CArgs(TCArg(S16, "In"), TCArg("int", "NFrames")),
                   Calls(Call("Ker", LOC_LOOP, Bindings(
                       K_Arg("In", KER_ARG_TILE), K_ArgPar("In", KER_ARG_TILELAST, KER_ITER_D0),
                       K_ArgPar("In", KER_ARG_NTILES, KER_ITER_D0), K_ArgPar("In", KER_ARG_PARTILE_DIM, KER_ITER_D0)))),
                   KerArgs(KerArg("In", KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0), OBJ_IN_DB, 8, 4, 2, 0, 0, 0, "In")))
        code = generate(m)["GenKernels.c"]
    assert "(int) (D0Ind==NFrames - 1), (int) (NFrames), (int) (NFrames));" in code


def test_prolog_call_binding_a_single_buffered_tile_is_refused():
    """Single-buffered, the tile is in L1 only inside its loop: before it nothing is loaded."""
    with Model(), pytest.raises(TilingError, match="a call outside the T0 loop binds the tile of 'In', whose tile is "
                                                   "in L1 only inside that loop"):
        SetL1MemorySize(1024)
        LibKernel("Zero", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg("unsigned int", "N")), "", Cost="1")
        LibKernel("Copy", CALL_SEQUENTIAL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out"), TCArg("unsigned int", "N")), "",
                  Cost="1")
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(KER_TILE)), TILE_HOR, CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                   Calls(Call("Zero", LOC_LOOP_PROLOG, Bindings(K_Arg("In", KER_ARG_TILE), Imm(4))),
                         Call("Copy", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                         K_Arg("In", KER_ARG_TILE_H)))),
                   KerArgs(KerArg("In", KerArgSpace(1, KER_TILE), OBJ_IN, 1, 1000, 2, 0, 0, 0, "In"),
                           KerArg("Out", KerArgSpace(1, KER_TILE), OBJ_OUT, 1, 1000, 2, 0, 0, 0, "Out")))


def test_era_dma_call_of_a_basic_kernel_runs_on_the_simulated_dma(tmp_path):
    """gap8_dma_memcpy / gap8_dma_wait (Gap8.h) are the simulator's asynchronous cluster DMA."""
    with Model() as m:
        SetUsedFilesNames(0, 1, "Gap8Dma.h")
        SetGeneratedFilesNames("DmaGen.c", "DmaGen.h")
        SetL1MemorySize(4000)
        LibKernel("KerFetch", CALL_PARALLEL, CArgs(TCArg(S16, "Src"), TCArg(S16, "Out"), TCArg("unsigned int", "N")),
                  "KerFetch_T", Cost="N")
        UserKernel("Fetch", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                   CArgs(TCArg(S16, "Src"), TCArg(S16, "Out")),
                   Calls(Call("KerFetch", LOC_LOOP, Bindings(C_Arg("Src"), K_Arg("Out", KER_ARG_TILE), Imm(16)))),
                   KerArgs(KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, 16, 1, 2, 0, 0, 0, "Out")))
        write_files(generate(m), str(tmp_path))
    prog = host_harness.build(tmp_path, sources=[KERNELS / "Gap8Dma.c"], include_dirs=[KERNELS],
                              platform=get_platform("gap8"))
    src = np.arange(16, dtype=np.int16)
    out = np.full(16, -1, dtype=np.int16)
    counters = prog.call("Fetch", Src=src, Out=out)
    np.testing.assert_array_equal(out, 2 * src)
    assert counters["l2_to_l1"] == 32  # the kernel's own transfer, through the simulated DMA


def test_memoised_loop_run_starts_its_event_ring_at_the_same_slot():
    """An inner loop whose L3 staging ring starts at slot D0Ind_Total % 2 was replayed from a run
    that started at the other slot (same machine state, other parity): 6 cycles off the simulator
    (found by tests/test_property_e2e.py). The memo now tells runs apart by the outer indices
    modulo the ring period."""
    c = {"w": 35, "h": 10, "item": 4, "ov": 1, "vertical": False, "nip": 3, "nop": 1, "db": False,
         "promote": False, "in3d": False, "cons": 0, "pref": 2, "objective": "time", "budget_frac": 0.0, "seed": 0,
         "l3": {"Wt"}, "stage": None}
    with Model(e2e.PLATFORM):
        tiling = e2e.declare(c, e2e._budget(c))
    cargs = [a.name for a in tiling.kernel.cargs]
    full = predict(tiling.schedule, e2e.PLATFORM, cargs, skip=False)
    assert full.cycles == 3467  # what the simulator measures
    assert predict(tiling.schedule, e2e.PLATFORM, cargs) == full


def test_tile_subscript_binding_is_read_after_its_tile_lands(tmp_path):
    """A K_TileOper '@' binding reads an item of an L1 tile (the SQ8 kernels' NormBias =
    Infos[AT_INF_BIASN]): loop-invariant, it was once hoisted with the struct's invariant fields,
    before the tile's first transfer was waited for, and read stale L1."""
    (tmp_path / "Scale.h").write_text(
        "#include \"Gap.h\"\ntypedef struct { signed char *In; signed char *Out; unsigned int N; signed char M; } "
        "KerScale_T;\nvoid KerScale(KerScale_T *Arg);\n")
    (tmp_path / "Scale.c").write_text(
        "#include \"Scale.h\"\nvoid KerScale(KerScale_T *Arg)\n{\n\tfor (unsigned int i = gap_coreid(); i < Arg->N; "
        "i += gap_ncore())\n\t\tArg->Out[i] = (signed char) (Arg->In[i] * Arg->M);\n\tgap_waitbarrier(0);\n}\n")
    gen = tmp_path / "gen"
    with Model() as m:
        SetUsedFilesNames(0, 1, "Scale.h")
        SetGeneratedFilesNames("ScaleGen.c", "ScaleGen.h")
        SetL1MemorySize(256)
        S8 = "signed char * __restrict__"
        LibKernel("KerScale", CALL_PARALLEL, CArgs(TCArg("signed char *", "In"), TCArg("signed char *", "Out"),
                                                   TCArg("unsigned int", "N"), TCArg("signed char", "M")),
                  "KerScale_T", Cost="N/ncores + 10")
        t = UserKernel("K", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                       CArgs(TCArg(S8, "In"), TCArg(S8, "Out"), TCArg(S8, "Infos")),
                       Calls(Call("KerScale", LOC_LOOP, Bindings(
                           K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_H),
                           K_TileOper("Infos", "signed char *", "@", 2)))),
                       KerArgs(KerArg("In", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB, 1, 400, 1, 0, 0, 0, "In"),
                               KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, 1, 400, 1, 0, 0, 0, "Out"),
                               KerArg("Infos", KerArgSpace(1, KER_ITER_TILE0), O_IN | O_BUFF | O_NTILED | O_CONST, 1,
                                      4, 1, 0, 0, 0, "Infos")))
        assert t.ntiles > 1
        write_files(generate(m), str(gen))
    prog = host_harness.build(gen, sources=[tmp_path / "Scale.c"], include_dirs=[tmp_path],
                              platform=get_platform("gap8"))
    x = np.arange(400, dtype=np.int64).astype(np.int8).reshape(400, 1)
    out = np.full_like(x, 99)
    prog.call("K", In=x, Out=out, Infos=np.array([0, 0, 3, 0], dtype=np.int8))
    np.testing.assert_array_equal(out, (x.astype(np.int64) * 3).astype(np.int8))
