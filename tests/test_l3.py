"""L3-homed (O_L2DB) arguments: L2 staging layout, objectives, generated code, in-out arguments
and the device choice, checked end to end on the simulated chip (data placed in simulated L3)."""

import json

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.objectives import reschedule
from autotiler.platforms import get_platform
from autotiler.tiler.tiling import with_stages

from .conftest import ROOT

KERNELS = ROOT / "tests" / "kernels"
PLATFORM = get_platform("gap8")
U32 = "Wordu32 * __restrict__"


def scale_kernel(x_type, w=24, h=20, orientation=TILE_HOR, budget=1200, objective="time"):
    """X = X * (1 + Wt[0]) in place: KerWin with In and Out bound to the same tile of X."""
    SetL1MemorySize(budget)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, "WinKernels.h")
    SetGeneratedFilesNames("ScaleGen.c", "ScaleGen.h")
    SetTilingObjective(objective)
    AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
    LibKernel("KerWin_u32", CALL_PARALLEL, CArgs(TCArg(U32, "In"), TCArg(U32, "Out"), TCArg(U32, "Wt"),
                                                 TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                 TCArg("unsigned int", "Ov"), TCArg("unsigned int", "Vertical")),
              "KerWin_u32_T", Cost="W*H/ncores + 12")
    return UserKernel("Scale", KernelDimensions(1, w, h, 1), KernelIterationOrder(KER_DIM2, KER_TILE), orientation,
                      CArgs(TCArg(U32, "X"), TCArg(U32, "Wt")),
                      Calls(Call("KerWin_u32", LOC_INNER_LOOP, Bindings(
                          K_Arg("X", KER_ARG_TILE), K_Arg("X", KER_ARG_TILE), K_Arg("Wt", KER_ARG_TILE),
                          K_Arg("X", KER_ARG_TILE_W), K_Arg("X", KER_ARG_TILE_H), Imm(0), Imm(0)))),
                      KerArgs(KerArg("X", x_type, w, h, 4, 0, 0, 0, "X", 0),
                              KerArg("Wt", OBJ_IN_NTILED, 1, 1, 4, 0, 0, 0, "Wt", 0)))


def build_and_run(model, tmp_path, w=24, h=20):
    gen = tmp_path / "gen"
    write_files(generate(model), str(gen))
    prog = host_harness.build(gen, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS], platform=PLATFORM)
    x = np.arange(h * w, dtype=np.uint32).reshape(h, w)
    got = x.copy()
    counters = prog.call("Scale", X=got, Wt=np.array([2], dtype=np.uint32))
    np.testing.assert_array_equal(got, x * 3)
    return counters, gen


@pytest.mark.parametrize("x_type", [OBJ_IN_OUT_DB_L2DB, OBJ_IN_OUT_L2DB], ids=["l1-double", "l1-single"])
@pytest.mark.parametrize("orientation", [TILE_HOR, TILE_VER], ids=["hor", "ver"])
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_in_out_argument_round_trips_through_l3(x_type, orientation, stage, tmp_path):
    with Model() as m:
        t = scale_kernel(x_type, orientation=orientation, budget=1200 if x_type & O_DB else 600)
        x = t.arg("X")
        assert x.l3 and x.reads and x.writes and t.ntiles > 3
        t = with_stages(t, {"X": stage})
        t = reschedule(t, m.libs, m.platform)
        m.tilings["Scale"] = t
        # a read ring then a write ring, each of `stage` slots of one tile
        assert t.arg("X").stage_write_offset == stage * x.slot_bytes and t.l2_bytes == 2 * stage * x.slot_bytes
        counters, gen = build_and_run(m, tmp_path)
    assert counters["l3_to_l2"] == counters["l2_to_l3"] == 24 * 20 * 4 == t.traffic_l3_in == t.traffic_l3_out
    assert counters["cycles"] == t.predicted.cycles
    assert counters["peak_l2"] >= t.l2_bytes
    if orientation == TILE_VER:  # columns are gathered by the micro-DMA, so the cluster DMA copies are 1D
        text = (gen / "ScaleGen.c").read_text()
        assert "AT_HYPERRAM_CL_COPY2D(" in text and "AT_L2_COPY2D(" not in text


def test_staging_layout_manifest_and_header():
    with Model() as m:
        SetMemorySizes(51200, 100000)
        t = scale_kernel(OBJ_IN_OUT_DB_L2DB, budget=51200 // 20)
        files = generate(m)
    x = t.arg("X")
    manifest = json.loads(files["ScaleGen.json"])
    kernel = manifest["kernels"][0]
    assert [a.get("home", "L2") for a in kernel["args"]] == ["L3", "L2"]
    assert manifest["l2"]["size"] == t.l2_bytes == 2 * x.stage * x.slot_bytes > 0
    assert manifest["l3"] == {"devices": [{"family": "HYPERRAM", "symbol": "HyperRam"}]}
    header = files["ScaleGen.h"]
    assert f"#define _L2_Memory_SIZE {t.l2_bytes}" in header
    assert "Size given for generation: 100000 bytes" in header
    assert "extern AT_HYPERRAM_T HyperRam;" in header
    assert "AT_HYPERRAM_CL_EVENT UchanR_X[2], UchanW_X[2];" in files["ScaleGen.c"]


@pytest.mark.parametrize("objective, stages", [("original", 2), ("traffic", 2), ("max_l1", 2), ("naive", 1)])
def test_alternative_objectives_stage_like_the_original_or_the_naive_baseline(objective, stages):
    with Model():
        t = scale_kernel(OBJ_IN_OUT_DB_L2DB, objective=objective)
    assert t.arg("X").stage == stages


def test_preferred_l3_exec_device_names_the_macros(tmp_path):
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_PREF_L3_EXEC, AT_OPT_VAL(AT_MEM_L3_DEFAULTRAM))
        t = scale_kernel(OBJ_IN_OUT_DB_L2DB)
        counters, gen = build_and_run(m, tmp_path)
    text = (gen / "ScaleGen.c").read_text()
    assert "AT_DEFAULTRAM_CL_COPY(&DefaultRam," in text and "HYPERRAM" not in text
    assert "extern AT_DEFAULTRAM_T DefaultRam;" in (gen / "ScaleGen.h").read_text()
    assert counters["cycles"] == t.predicted.cycles


def test_read_once_l3_argument_and_kernel_comment(tmp_path):
    """One tile: the L3 argument is staged once (one slot), read in the prolog, written in the epilog."""
    with Model() as m:
        t = scale_kernel(OBJ_IN_OUT_L2DB, budget=2000, objective="original")
        assert t.ntiles == 1 and t.arg("X").stage == 1 and t.arg("X").level is None
        counters, gen = build_and_run(m, tmp_path)
    text = (gen / "ScaleGen.c").read_text()
    assert "L3 staging: L2 slots 1 for 'X' (3840 B of L2)" in text
    assert "L3" in text.split("roofline")[0]  # the bounds line names the L3 level
    assert counters["l3_to_l2"] == counters["l2_to_l3"] == 1920 and counters["cycles"] == t.predicted.cycles


def test_static_renamed_l2_symbol(tmp_path):
    """SetSymbolNames + array symbols: the L2 staging area is a static array the harness registers."""
    with Model() as m:
        t = scale_kernel(OBJ_IN_OUT_DB_L2DB)
        SetSymbolNames("Scale_L1", "Scale_L2")
        m.symbols.dynamic = False
        counters, gen = build_and_run(m, tmp_path)
    text = (gen / "ScaleGen.c").read_text()
    assert "L2_MEM char Scale_L2[_Scale_L2_SIZE]" in text and "(Scale_L2 + " in text
    assert counters["cycles"] == t.predicted.cycles
