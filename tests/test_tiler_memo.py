"""The time objective's fast paths give the same numbers as the plain ones: ``build_tiling`` with a
memo equals it without, ``arg_tilings`` is the built tiling without its L1 layout, and the
estimator's memoised figures (shared across every choice of a kernel) equal the per-class
reference computation (``reference_estimate`` below: the estimate as first written, one class
at a time, nothing shared), on random CNN layers and every choice of their grids."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotiler import *
from autotiler import objectives as objectives_mod
from autotiler.generators import LoadCNNLibrary
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU
from autotiler.model.session import current_model
from autotiler.platforms import get_platform
from autotiler.schedule import estimate as E
from autotiler.schedule.build import transfer_shape
from autotiler.tiler.geometry import kernel_geometry
from autotiler.tiler.search import Footprint, choices, grid, partial_candidates, promoted_choice
from autotiler.tiler.tiling import arg_tilings, build_tiling

PLATFORM = get_platform("gap8", l1_size=256 * 1024)


def reference_estimate(est: E.Estimator, t) -> int:
    """The estimate computed class by class (first / middle / last iteration of every loop a
    quantity depends on), with no memo: the definition the estimator's shortcuts must meet."""
    p = est.p
    count = {lp.space: lp.count for lp in t.loops}
    order = [lp.space for lp in t.loops]
    args = {a.name: a for a in t.args}
    core = 0
    for call, lib, reads, cost in est.calls:
        live = E._live(order, call.location)
        deps = est._default_spaces(call, args) if cost is None else E._spaces(args, reads)
        for idx, weight in E._classes(live, count, deps):
            if cost is None:
                c = est._default_cost(call, lib, idx, args)
            else:
                env = {"gap_ncore": p.cores}
                env.update((n, E._value(t.kernel, b, idx, count, args)) for n, b in reads)
                c = cost(env)
            core += weight * (max(0, c) + (p.fork_cycles if lib.parallel else 0))
    cluster_busy = udma_busy = ends = 0
    for a in t.args:
        if not (a.reads or a.writes):
            continue
        shape = transfer_shape(a)
        live = order[: order.index(a.level) + 1] if a.level is not None else []
        directions = int(a.reads) + int(a.writes)
        udma = p.udma[a.decl.l3_device.kind] if a.decl.l3_device is not None else p.udma["ram"]
        ring = a.l3 and not a.whole_stage
        per_copy = (p.dma_issue_cycles + p.wait_cycles) * (2 if ring else 1)
        boxes = [(E._box(a, shape, idx), w) for idx, w in E._classes(live, count, {d.space for d in a.dims})]
        single = a.nbuf == 1 and a.level is not None
        for (nbytes, lines), w in boxes:
            d = p.cluster_dma.transfer_cycles(nbytes, lines)
            cluster_busy += w * d * directions
            if ring:
                udma_busy += w * udma.transfer_cycles(nbytes, lines) * directions
            core += w * directions * (per_copy + (d if single else 0))
        first, last = boxes[0][0], boxes[-1][0]
        if a.reads:
            ends += p.cluster_dma.transfer_cycles(*first) + (udma.transfer_cycles(*first) if ring else 0)
        if a.writes:
            ends += p.cluster_dma.transfer_cycles(*last) + (udma.transfer_cycles(*last) if ring else 0)
        if a.whole_stage:
            whole = udma.transfer_cycles(a.geom.l2_bytes) * directions
            udma_busy += whole
            ends += whole
    return max(core + ends, cluster_busy, udma_busy)


def _layer(cfg) -> object:
    """A CNN layer of ``cfg``, declared (and tiled, cheaply) in the current model."""
    oper, cin, cout, w, f, s, pool, l3 = cfg
    if oper in (KOP_CONV_DW, KOP_CONV_DWDP):
        cout = cin
    CNN_ConvolutionPoolReLU("L", 0, 1, 1, 1, 1, 7, 7, 7, 7, l3, 0, 0, l3, cin, cout, w, w, oper, f, f, 1, 1, s, s, 1,
                            KOP_MAXPOOL if pool else KOP_NONE, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
    return current_model().kernels["L"]


def _check_kernel(uk, budget: int, rng: random.Random, limit: int = 80) -> int:
    kg = kernel_geometry(uk)
    options = objectives_mod.solve_options(current_model(), uk)
    est_shared = E.Estimator(uk, options.libs, PLATFORM)
    spaces, lists = grid(kg, thinned=False)
    variants = [frozenset()] + ([frozenset(partial_candidates(kg))] if partial_candidates(kg) else [])
    cands = [c for part in variants for single in (False, True) for c in choices(kg, lists, spaces, part, single)]
    cands = rng.sample(cands, min(limit, len(cands))) + [promoted_choice(kg)]
    fp, memo, checked = Footprint(kg), {}, 0
    for c in cands:
        plain = build_tiling(kg, c, budget)
        assert build_tiling(kg, c, budget, memo=memo) == plain
        loops, args, l1 = arg_tilings(kg, c, memo)
        assert loops == plain.loops and l1 == plain.l1_bytes == fp.l1(c)
        # the L1 layout and the L2 staging slots apart, the same argument tilings
        assert args == tuple(replace(a, offset=0, stage=0, stage_offset=0) for a in plain.args)
        try:
            want = reference_estimate(E.Estimator(uk, options.libs, PLATFORM), plain)
        except Exception as err:  # an inexpressible transfer: both paths refuse it
            assert type(err).__name__ == "Unsupported"
            continue
        assert est_shared(plain) == want
        assert est_shared.parts(uk, loops, args) == want
        checked += 1
    return checked


def _check_evaluator(uk, l2_budgets: tuple, rng: random.Random, limit: int = 150) -> int:
    """The time objective's estimate of every feasible choice (read off ``arg_tilings``) equals
    the estimate of the built candidate, None exactly when there is none (L1, the L2 staging at
    one slot, the transfers' shapes), at each L2 budget."""
    kg = kernel_geometry(uk)
    base = objectives_mod.solve_options(current_model(), uk)
    spaces, lists = grid(kg, thinned=False)
    variants = [frozenset()] + ([frozenset(partial_candidates(kg))] if partial_candidates(kg) else [])
    cands = [c for part in variants for single in (False, True) for c in choices(kg, lists, spaces, part, single)]
    cands = rng.sample(cands, min(limit, len(cands))) + [promoted_choice(kg)]
    compared = 0
    for l2 in l2_budgets:
        options = replace(base, l2_budget=l2, platform=PLATFORM)
        ev = objectives_mod._Evaluator(kg, options, objectives_mod.OBJECTIVES["time"])
        ref = objectives_mod._Evaluator(kg, options, objectives_mod.OBJECTIVES["time"])
        for c in cands:
            if not ev.fits(c):
                continue
            t = ref.candidate(c)
            assert ev.estimate(c) == (ref.estimator(t) if t is not None else None)
            compared += t is not None
    return compared


CONFIGS = st.tuples(st.sampled_from([KOP_CONV_DP, KOP_CONV, KOP_CONV_DWDP, KOP_CONV_DW]),
                    st.integers(1, 24), st.integers(1, 24), st.integers(4, 20), st.sampled_from([1, 3]),
                    st.sampled_from([1, 2]), st.booleans(), st.sampled_from([0, 0, 1]))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cfg=CONFIGS, budget=st.sampled_from([2048, 6000, 16000]))
def test_memoised_paths_equal_plain_ones(cfg, budget):
    objectives_mod._CACHE.clear()
    with Model(PLATFORM):
        SetMemorySizes(budget, 4 * 1024 * 1024)
        SetTilingObjective("original")
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        LoadCNNLibrary()
        _layer(cfg)
        uk = current_model().kernels.get("L")
        if uk is None:   # no tiling at this budget
            return
        assert _check_kernel(uk, budget, random.Random(repr(cfg))) > 0


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cfg=CONFIGS, budget=st.sampled_from([6000, 16000]))
def test_l3_estimates_equal_built_candidates(cfg, budget):
    """With L3 arguments, the estimate needs no built candidate: same numbers, same refusals,
    L2 budgets from none to tighter than most stagings."""
    objectives_mod._CACHE.clear()
    with Model(PLATFORM):
        SetMemorySizes(budget, 4 * 1024 * 1024)
        SetTilingObjective("original")
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        LoadCNNLibrary()
        _layer(cfg[:-1] + (1,))
        uk = current_model().kernels.get("L")
        if uk is None:
            return
        _check_evaluator(uk, (None, 4 * 1024 * 1024, 3000, 600), random.Random(repr(cfg)))


def test_time_objective_unchanged_by_its_memos():
    """The time objective over a layer equals the exhaustive objective's figures on the choices
    it predicts (same tiling and cycles as when every choice is estimated afresh)."""
    objectives_mod._CACHE.clear()
    with Model(PLATFORM) as m:
        SetMemorySizes(16000, 4 * 1024 * 1024)
        LoadCNNLibrary()
        _layer((KOP_CONV_DP, 16, 24, 12, 1, 1, False, 0))
        uk = m.kernels["L"]
        options = objectives_mod.solve_options(m, uk)
        t = m.tilings["L"]
        fresh = objectives_mod._Evaluator(kernel_geometry(uk), options, objectives_mod.OBJECTIVES["time"])
        built = fresh.candidate(t.choice)   # the estimate off the built candidate, the original path
        assert fresh.estimator(built) == objectives_mod._Evaluator(
            kernel_geometry(uk), options, objectives_mod.OBJECTIVES["time"]).estimate(t.choice)
        ex = objectives_mod.solve(uk, replace(options, objective="time_exhaustive"))
        assert t.predicted.cycles <= ex.predicted.cycles * 1.01
