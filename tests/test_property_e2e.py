"""Property test, end to end: random sizes, planes, item sizes, overlaps, orientations, constraints,
objectives and L1 budgets from barely-fits to all-fits. Each case is generated, compiled, run on the
simulated chip and compared with numpy; peak L1 stays within the budget and no output element is
left unwritten (outputs are pre-filled with a sentinel)."""

import warnings

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.objectives import footprint_range, reschedule
from autotiler.platforms import get_platform
from autotiler.tiler.tiling import with_stages

from .conftest import ROOT

KERNELS = ROOT / "tests" / "kernels"
PLATFORM = get_platform("gap8", l1_size=2 * 1024 * 1024, l2_size=4 * 1024 * 1024)  # budgets up to all-fits
CTYPES = {1: "Wordu8", 2: "Wordu16", 4: "Wordu32"}
DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def declare(c, budget):
    s, t = CTYPES[c["item"]].replace("Word", ""), CTYPES[c["item"]]
    ptr = f"{t} * __restrict__"
    LibKernel(f"KerInit_{s}", CALL_PARALLEL, CArgs(TCArg(ptr, "Out"), TCArg("unsigned int", "W"),
                                                   TCArg("unsigned int", "H"), TCArg("unsigned int", "Value")),
              f"KerInit_{s}_T")
    LibKernel(f"KerWin_{s}", CALL_PARALLEL, CArgs(TCArg(ptr, "In"), TCArg(ptr, "Out"), TCArg("Wordu32 * __restrict__", "Wt"),
                                                  TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                  TCArg("unsigned int", "Ov"), TCArg("unsigned int", "Vertical")),
              f"KerWin_{s}_T", Cost="W*H*(Ov+1)/ncores + 12")
    SetL1MemorySize(budget)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, "WinKernels.h")
    SetGeneratedFilesNames("WinGen.c", "WinGen.h")
    SetTilingObjective(c["objective"])
    if not c["promote"]:
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    dim4 = c["nip"] > 1 or c["nop"] > 1
    order = (KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE) if dim4
             else KernelIterationOrder(KER_DIM2, KER_TILE))
    vertical = c["vertical"]
    ow, oh = (c["w"] - c["ov"], c["h"]) if vertical else (c["w"], c["h"] - c["ov"])
    db = O_DB if c["db"] else 0
    def l3(name):
        return O_L2DB if name in c["l3"] else 0

    in_type = O_IN | O_TILED | db | (O_3D if dim4 and c["in3d"] else 0) | l3("In")
    out_type = O_OUT | O_TILED | db | (O_3D if dim4 else 0) | l3("Out")
    wt_type = O_IN | db | ((O_3D | O_4D) if dim4 else 0) | l3("Wt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return UserKernel(
            "Win", KernelDimensions(c["nip"], c["w"], c["h"], c["nop"]), order, TILE_VER if vertical else TILE_HOR,
            CArgs(TCArg(ptr, "In"), TCArg(ptr, "Out"), TCArg("Wordu32 * __restrict__", "Wt"),
                  TCArg("Wordu32 * __restrict__", "Bias")),
            Calls(Call(f"KerInit_{s}", LOC_IN_PLANE_PROLOG, Bindings(
                      K_Arg("Out", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE_H),
                      C_ArgIndex("Bias", KER_OUT_PLANE, 1))),
                  Call(f"KerWin_{s}", LOC_INNER_LOOP, Bindings(
                      K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("Wt", KER_ARG_TILE),
                      K_Arg("Out", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE_H), Imm(c["ov"]), Imm(int(vertical))))),
            KerArgs(KerArg("In", in_type, c["w"], c["h"], c["item"], c["ov"], c["cons"], c["pref"], "In", 0),
                    KerArg("Wt", wt_type, 1, 1, 4, 0, 0, 0, "Wt", 0),
                    KerArg("Out", out_type, ow, oh, c["item"], 0, 0, 0, "Out", 0)))


def reference(c, inp, wt, bias):
    bits = 8 * c["item"]
    mask = (1 << bits) - 1
    nip, nop, ov = c["nip"], c["nop"], c["ov"]
    outs = []
    for op in range(nop):
        out = np.full(_out_shape(c)[1:], bias[op] & mask, dtype=np.uint64)
        for ip in range(nip):
            x = inp[ip if inp.shape[0] > 1 else 0].astype(np.uint64)
            if c["vertical"]:
                win = sum(x[:, k:k + x.shape[1] - ov] for k in range(ov + 1))
            else:
                win = sum(x[k:k + x.shape[0] - ov, :] for k in range(ov + 1))
            term = (int(wt[op * nip + ip]) * (win & 0xFFFFFFFF)) & 0xFFFFFFFF
            out = (out + (term & mask)) & mask
        outs.append(out)
    return np.stack(outs).astype(DTYPES[c["item"]])


def _out_shape(c):
    if c["vertical"]:
        return (c["nop"], c["h"], c["w"] - c["ov"])
    return (c["nop"], c["h"] - c["ov"], c["w"])


cases = st.fixed_dictionaries({
    "w": st.integers(1, 40), "h": st.integers(1, 40), "item": st.sampled_from([1, 2, 4]),
    "ov": st.integers(0, 4), "vertical": st.booleans(), "nip": st.integers(1, 3), "nop": st.integers(1, 3),
    "db": st.booleans(), "promote": st.booleans(), "in3d": st.booleans(),
    "cons": st.sampled_from([0, OBJ_CONSTRAINTS_EVEN, OBJ_CONSTRAINTS_ODD]), "pref": st.sampled_from([0, 0, 2, 3]),
    "objective": st.sampled_from(["time", "original", "naive", "max_l1", "traffic"]),
    "budget_frac": st.floats(0.0, 1.1), "seed": st.integers(0, 2**16),
    # L3-homed arguments, and a forced L2 staging depth (None: the objective's choice)
    "l3": st.sets(st.sampled_from(["In", "Wt", "Out"])), "stage": st.sampled_from([None, 1, 2, 3]),
})


def _budget(c):
    with Model(PLATFORM) as m:
        declare(c, 1 << 20)
        uk = m.kernels["Win"]
        low, high = footprint_range(uk)
    return max(low, int(low + c["budget_frac"] * (high - low)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(c=cases)
def test_random_kernels_match_numpy_on_the_simulated_chip(c, tmp_path_factory):
    tiled = (c["w"] if c["vertical"] else c["h"]) - c["ov"]
    if tiled < 1 or (c["cons"] == OBJ_CONSTRAINTS_EVEN and tiled % 2):  # an odd EVEN size is refused
        return
    budget = _budget(c)
    with Model(PLATFORM) as m:
        tiling = declare(c, budget)
        if tiling is None:  # only tile constraints can make a budget >= the smallest footprint fail
            assert c["cons"] or c["pref"]
            return
        if c["stage"] is not None and c["l3"]:
            tiling = with_stages(tiling, {a.name: c["stage"] for a in tiling.args if a.l3})
            tiling = reschedule(tiling, m.libs, m.platform)
            m.tilings["Win"] = tiling
        files = generate(m)
    gen = tmp_path_factory.mktemp("win")
    write_files(files, str(gen))
    program = host_harness.build(gen, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS], platform=PLATFORM)
    rng = np.random.default_rng(c["seed"])
    dtype = DTYPES[c["item"]]
    planes = c["nip"] if c["in3d"] or not (c["nip"] > 1 or c["nop"] > 1) else 1
    inp = rng.integers(0, np.iinfo(dtype).max, size=(planes, c["h"], c["w"]), dtype=dtype, endpoint=True)
    wt = rng.integers(0, 7, size=c["nip"] * c["nop"], dtype=np.uint32)
    bias = rng.integers(0, 1 << 20, size=c["nop"], dtype=np.uint32)
    out = np.full(_out_shape(c), 0xA5A5A5A5 & np.iinfo(dtype).max, dtype=dtype)
    counters = program.call("Win", In=inp, Out=out, Wt=wt, Bias=bias)
    event(f"ran {tiling.ntiles} tile(s), partial={tiling.partial}, promoted={tiling.promoted}, "
          f"L3 stages {sorted(a.stage for a in tiling.args if a.l3)}")
    np.testing.assert_array_equal(out, reference(c, inp, wt, bias))
    assert counters["peak_l1"] <= budget
    assert counters["l2_to_l1"] == tiling.traffic_in and counters["l1_to_l2"] == tiling.traffic_out
    assert counters["l3_to_l2"] == tiling.traffic_l3_in and counters["l2_to_l3"] == tiling.traffic_l3_out
    assert counters["dma_busy_cycles"]["udma"] == tiling.predicted["udma_busy_cycles"]
    assert counters["cycles"] == tiling.predicted.cycles  # the predictor replays the generated schedule
