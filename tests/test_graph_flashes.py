"""Graph constants in two flashes: AT_GRAPH_PRIVILEGED_L3_HOME fills a smaller, faster flash
first (GAP9's MRAM here: its micro-DMA numbers are the platform's ``udma["mram"]``), constants
homed explicitly in two flashes each stay in theirs. One image per flash, each opened by the
constructor and read back here; runs equal numpy; a constant copied from MRAM costs what the
MRAM engine costs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.graph.lower import plan_graph
from autotiler.model.devices import flash_device
from autotiler.model.validate import validate_user_kernel
from autotiler.platforms import get_platform

from .conftest import ROOT
from .graph_helpers import ITEMS, P32, inp, lib_add, local, mat_add, out, write_bin

MATADD = ROOT / "examples" / "matrix_add"
B = 4 * ITEMS
L2 = 64 * 1024
W = {"W1": np.arange(ITEMS) - 7, "W2": 3 * np.arange(ITEMS), "W3": np.arange(ITEMS)[::-1] * 5}


def const(name, path, home):
    return TCArgInfo(P32, name, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, home, AT_MEM_UNDEF, ConstInfo(path, 1, 1, 32, 0))


def declare(tmp_path, l2: int, privileged=None, mram_size=B, homes=None, fetch=False, exec_flash=False) -> None:
    """K1: T1 = In + W1; K2: T2 = T1 + W2; K3: T3 = T2 + W1 (W1 read twice); K4: Out = T3 + W3;
    ``fetch``: no constant promoted, each fetched from its flash at every use."""
    SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
    SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
    SetMemoryDeviceInfos(4, AT_MEM_L1, 51200, "L1_Memory", 0, 0, AT_MEM_L2, l2, "L2_Memory", 0, 0,
                         AT_MEM_L3_HFLASH, 1 << 20, "0", 0, 0, AT_MEM_L3_MRAMFLASH, mram_size, "0", 0, 0)
    if privileged is not None:
        AT_SetGraphCtrl(AT_GRAPH_PRIVILEGED_L3_HOME, AT_OPT_VAL(privileged))
    if fetch:
        AT_SetGraphCtrl(AT_GRAPH_DISABLE_CONST_L2_PROMOTION, AT_OPT_ON)
    if exec_flash:
        AT_SetGraphCtrl(AT_GRAPH_CONST_EXEC_FROM_FLASH, AT_OPT_ON)
    lib_add()
    for k in ("K1", "K2", "K3", "K4"):
        mat_add(k)
    homes = homes or {}
    consts = [const(n, write_bin(tmp_path / f"{n}.bin", v), homes.get(n, AT_MEM_L3_HFLASH)) for n, v in W.items()]
    CreateGraph("G", CArgs(inp(), *consts, out()), CArgs(local("T1"), local("T2"), local("T3")))
    AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T1", 0)))
    AddNode("K2", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "T2", 0)))
    AddNode("K3", Bindings(GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T3", 0)))
    AddNode("K4", Bindings(GNodeArg(GNA_IN, "T3", 0), GNodeArg(GNA_IN, "W3", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()


def reference(x):
    return (x.ravel() + 2 * W["W1"] + W["W2"] + W["W3"]).astype(np.int32)


def generate_and_run(tmp_path, l2: int, **kw):
    """(plan, files, counters of a run)"""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Model("gap9") as m:
        declare(tmp_path, l2, **kw)
        plan = plan_graph(m, m.graphs["G"], l2)
        files = generate(m)
    gen = tmp_path / "gen"
    write_files(files, str(gen))
    prog = host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD],
                              platform=get_platform("gap9"))
    g = prog.graph("G")
    g.construct()
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, 4, 8)
    got = np.full((1, 4, 8), -7, dtype=np.int32)
    counters = g.run(In=x, Out=got)
    g.destruct()
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return plan, files, counters


def homes_of(plan) -> dict:
    return {s.name: s.flash_loc for s in plan.symbols if s.flash_loc is not None}


def test_privileged_flash_is_filled_first_most_read_constant_first(tmp_path):
    plan, files, counters = generate_and_run(tmp_path, L2, privileged=AT_MEM_L3_MRAMFLASH, mram_size=B, fetch=True)
    assert homes_of(plan) == {"W1": AT_MEM_L3_MRAMFLASH, "W2": AT_MEM_L3_HFLASH, "W3": AT_MEM_L3_HFLASH}
    assert all(s.area == "flash" for s in plan.symbols if s.name in W)       # fetched at each run
    c = files["GraphKernels.c"]
    assert 'AT_EMRAMFLASH_FS_OPEN(&EmramFlash, &EmramFlashConf, "G_L3_EmramFlash_Const.dat", &Error);' in c
    assert 'AT_HYPERFLASH_FS_OPEN(&HyperFlash, &HyperFlashConf, "G_L3_Flash_Const.dat", &Error);' in c
    assert "AT_EMRAMFLASH_FS_CL_COPY(&EmramFlash" in c and "AT_EMRAMFLASH_FS_CLOSE(&EmramFlash);" in c
    # each image holds its flash's constants, as the constructor reads them back
    images = dict(plan.flashes)
    assert files["G_L3_EmramFlash_Const.dat"] == images[AT_MEM_L3_MRAMFLASH].data
    assert images[AT_MEM_L3_MRAMFLASH].read("W1") == W["W1"].astype("<i4").tobytes()
    assert images[AT_MEM_L3_HFLASH].read("W3") == W["W3"].astype("<i4").tobytes()
    assert set(images[AT_MEM_L3_HFLASH].offsets) == {"W2", "W3"}
    assert counters["flash_to_l2"] == 3 * B          # each fetched once (W1 held in L2 from K1 to K3)


def test_privileged_flash_makes_the_fetches_cheaper(tmp_path):
    _, _, plain = generate_and_run(tmp_path / "a", L2, fetch=True)
    _, _, fast = generate_and_run(tmp_path / "b", L2, privileged=AT_MEM_L3_MRAMFLASH, mram_size=3 * B,
                                  fetch=True)
    gap9 = get_platform("gap9")
    saved = 3 * (gap9.udma["flash"].transfer_cycles(B) - gap9.udma["mram"].transfer_cycles(B))
    assert plain["flash_to_l2"] == fast["flash_to_l2"]
    assert plain["nodes"] and sum(n["flash_busy_cycles"] for n in plain["nodes"]) \
        - sum(n["flash_busy_cycles"] for n in fast["nodes"]) == saved


def test_constants_homed_in_two_flashes_stay_in_theirs(tmp_path):
    plan, files, _ = generate_and_run(tmp_path, L2, homes={"W2": AT_MEM_L3_MRAMFLASH})
    assert homes_of(plan) == {"W1": AT_MEM_L3_HFLASH, "W2": AT_MEM_L3_MRAMFLASH, "W3": AT_MEM_L3_HFLASH}
    assert all(s.area == "static" for s in plan.symbols if s.name in W)      # promoted from both
    c = files["GraphKernels.c"]
    assert "AT_EMRAMFLASH_FS_FC_COPY(&EmramFlash" in c and "AT_HYPERFLASH_FS_FC_COPY(&HyperFlash" in c
    assert "AT_EMRAMFLASH_FS_FC_WAIT(&EmramFlash, UchanEmramFlash);" in c


def test_warm_all_opens_and_closes_both_flashes(tmp_path):
    with Model("gap9") as m:
        AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(WARM_ALL))
        declare(tmp_path, L2, privileged=AT_MEM_L3_MRAMFLASH)
        c = generate(m)["GraphKernels.c"]
    init = c[c.index("if (DoL3Init) {"):c.index("if (DoL2Alloc) {")]
    assert "AT_EMRAMFLASH_FS_OPEN" in init and "AT_HYPERFLASH_FS_OPEN" in init
    deinit = c[c.index("if (DoL3DeInit) {"):]
    assert deinit.index("AT_EMRAMFLASH_FS_CLOSE") < deinit.index("}")


def test_privileged_flash_must_be_declared(tmp_path):
    with Model("gap9") as m:
        SetMemoryDeviceInfos(2, AT_MEM_L1, 51200, "L1_Memory", 0, 0, AT_MEM_L2, L2, "L2_Memory", 0, 0)
        AT_SetGraphCtrl(AT_GRAPH_PRIVILEGED_L3_HOME, AT_OPT_VAL(AT_MEM_L3_MRAMFLASH))
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        lib_add()
        mat_add("K1")
        w = write_bin(tmp_path / "w.bin", W["W1"])
        CreateGraph("G", CArgs(inp(), const("W1", w, AT_MEM_L3_HFLASH), out()), CArgs())
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        with pytest.raises(ModelError, match="AT_GRAPH_PRIVILEGED_L3_HOME names AT_MEM_L3_MRAMFLASH, which "
                                             "SetMemoryDeviceInfos does not declare"):
            generate(m)


def test_privileged_home_must_be_a_flash():
    with Model("gap9"):
        with pytest.raises(ModelError, match="AT_GRAPH_PRIVILEGED_L3_HOME must be a flash .*got AT_MEM_L3_HRAM"):
            AT_SetGraphCtrl(AT_GRAPH_PRIVILEGED_L3_HOME, AT_MEM_L3_HRAM)


def test_reentrant_with_two_flashes_is_refused(tmp_path):
    with Model("gap9") as m:
        AT_SetGraphCtrl(AT_GRAPH_RUNNER_RE_ENTRANT, AT_OPT_ON)
        declare(tmp_path, L2, privileged=AT_MEM_L3_MRAMFLASH)
        with pytest.raises(ModelError, match=r"reentrant runner \(-R\) with constants in two flashes .* is not "
                                             "supported yet"):
            generate(m)


# ----------------------------------------------------------------------------------------------
# AT_GRAPH_CONST_EXEC_FROM_FLASH: the nodes' kernels read the constants from flash themselves


def test_const_exec_from_flash_kernels_read_constants_from_flash(tmp_path):
    plan, files, counters = generate_and_run(tmp_path, L2, privileged=AT_MEM_L3_MRAMFLASH, mram_size=B,
                                             exec_flash=True)
    assert {s.name: s.area for s in plan.symbols if s.name in W} == dict.fromkeys(W, "flash_exec")
    assert plan.static_bytes == 0 and not plan.prefetches
    assert [(v.node, v.name, v.flash) for v in plan.variants] == [
        (0, "K1_L3_0", ("W1",)), (1, "K2_L3_1", ("W2",)), (2, "K3_L3_2", ("W1",)), (3, "K4_L3_3", ("W3",))]
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    assert "extern AT_EMRAMFLASH_FS_T EmramFlash;" in h and "extern AT_HYPERFLASH_FS_T HyperFlash;" in h
    assert "\nAT_EMRAMFLASH_FS_T EmramFlash;" in c and "static AT_HYPERFLASH_FS_T" not in c
    k1 = c[c.index("void K1_L3_0("):c.index("void K2_L3_1(")]
    assert "AT_EMRAMFLASH_FS_CL_COPY(&EmramFlash, " in k1 and "AT_EMRAMFLASH_FS_CL_WAIT(&EmramFlash, " in k1
    k4 = c[c.index("void K4_L3_3("):]
    assert "AT_HYPERFLASH_FS_CL_COPY(&HyperFlash, " in k4
    assert "((Word32 * __restrict__) ((AT_HYPERFLASH_FS_EXT_ADDR_TYPE) 128)), /* In2: W3, constant read from flash" in c
    assert "/* Moving " not in c and "/* Prefetching " not in c
    # the kernels' reads are the flash traffic: W1 twice (by K1 and K3), W2, W3
    assert counters["flash_to_l2"] == sum(v.tiling.traffic_l3_in for v in plan.variants) == 4 * B


def test_const_exec_from_flash_refused_when_activations_spill(tmp_path):
    with Model("gap9") as m:
        AT_SetGraphCtrl(AT_GRAPH_CONST_EXEC_FROM_FLASH, AT_OPT_ON)
        declare(tmp_path, B, fetch=False)
        with pytest.raises(ModelError, match="AT_GRAPH_CONST_EXEC_FROM_FLASH in a graph whose activations do not "
                                             "fit L2 .* is not supported yet"):
            generate(m)


def test_a_flash_argument_must_be_an_l3_homed_input():
    with Model() as m:
        lib_add()
        mat_add("K1")
        uk = m.kernels["K1"]
        out_arg = next(a for a in uk.kerargs if a.name == "Out")
        bad = replace(uk, kerargs=tuple(replace(a, obj_type=int(a.obj_type | O_L2DB),
                                                l3_device=flash_device(AT_MEM_L3_HFLASH)) if a is out_arg else a
                                        for a in uk.kerargs))
        with pytest.raises(ModelError, match="is read from flash \\(HyperFlash\\), which only an L3-homed "
                                             "\\(O_L2DB\\) pure input can be"):
            validate_user_kernel(bad, m.libs)


def test_const_exec_from_mram_on_a_chip_without_an_mram_engine(tmp_path):
    """On GAP8 (no udma["mram"]) a constant read from AT_MEM_L3_MRAMFLASH by a kernel is costed with
    the off-chip flash's numbers, as the simulator runs it (it raised KeyError)."""
    with Model("gap8") as m:
        declare(tmp_path, L2, privileged=AT_MEM_L3_MRAMFLASH, mram_size=B, exec_flash=True)
        plan = plan_graph(m, m.graphs["G"], L2)
    gap8 = get_platform("gap8")
    mram_variant = next(v for v in plan.variants if v.flash == ("W1",))
    assert mram_variant.tiling.predicted is not None and "mram" not in gap8.udma
