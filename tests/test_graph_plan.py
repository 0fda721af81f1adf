"""Graph memory planning (autotiler/graph): placement, lower bound, aliases, L3 spill, flash
image, constant promotion and prefetch."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotiler.errors import AutoTilerError
from autotiler.graph import (
    ALGORITHMS,
    Buffer,
    PlanError,
    check_placement,
    extra_name,
    live_bytes,
    lower_bound,
    merge_aliases,
    node_tops,
    pack_constants,
    placement_conflicts,
    plan_levels,
    plan_static,
    prefetch_schedule,
    promote_constants,
    spill,
)
from autotiler.graph.zoo import chain, random_dag, zoo

# --------------------------------------------------------------------------- buffers, bound, checker


def test_buffer_rejects_bad_lifetimes_and_alignments():
    with pytest.raises(ValueError, match="first <= last"):
        Buffer("a", 4, 3, 2)
    with pytest.raises(ValueError, match="size >= 0"):
        Buffer("a", -1, 0, 0)
    with pytest.raises(ValueError, match="power of two"):
        Buffer("a", 4, 0, 0, align=3)
    assert Buffer("a", 5, 0, 0, align=8).footprint == 8
    assert Buffer("a", 0, 0, 0).footprint == 0


def test_lower_bound_is_the_most_bytes_alive_at_one_node():
    bufs = [Buffer("a", 10, 0, 1), Buffer("b", 6, 1, 2), Buffer("c", 7, 2, 2)]   # footprints 12, 8, 8
    assert live_bytes(bufs) == [12, 20, 16]
    assert lower_bound(bufs) == 20
    assert lower_bound([]) == 0


def test_checker_finds_overlaps_misalignment_missing_offsets_and_capacity():
    a, b, c = Buffer("a", 8, 0, 1), Buffer("b", 8, 1, 2), Buffer("c", 8, 2, 3)
    assert placement_conflicts([a, b, c], {"a": 0, "b": 8, "c": 0}) == []   # a and c never alive together
    problems = placement_conflicts([a, b, c], {"a": 0, "b": 4, "c": 16})
    assert len(problems) == 1 and "'a'" in problems[0] and "'b'" in problems[0] and "node 1" in problems[0]
    assert "not a non-negative multiple of 4" in placement_conflicts([a], {"a": 2})[0]
    assert "has no offset" in placement_conflicts([a], {})[0]
    assert "beyond the capacity 12" in placement_conflicts([a, b], {"a": 0, "b": 8}, capacity=12)[0]
    with pytest.raises(PlanError, match="overlap"):
        check_placement([a, b], {"a": 0, "b": 0})
    check_placement([a, b], {"a": 0, "b": 8}, capacity=16)


# --------------------------------------------------------------------------- placement


def test_greedy_by_size_misses_a_chain_that_the_plan_solves_exactly():
    bufs = chain([5 * 4, 4 * 4, 6 * 4, 8 * 4])   # t0 [0,0], t1 [0,1], t2 [1,2], t3 [2,2]
    assert lower_bound(bufs) == 56
    assert plan_static(bufs, algorithms=["greedy_by_size"]).peak == 72
    plan = plan_static(bufs)
    assert plan.peak == plan.lower_bound == 56 and plan.ratio == 1.0
    check_placement(bufs, plan.offsets)


def test_placement_reports_every_algorithm_and_is_deterministic():
    bufs = random_dag(3, 40)
    plan = plan_static(bufs)
    assert [name for name, _ in plan.tried] == list(ALGORITHMS)
    assert plan.peak == min(peak for _, peak in plan.tried)
    assert dict(plan.tried)[plan.algorithm] == plan.peak
    assert plan_static(bufs) == plan
    with pytest.raises(ValueError, match="unknown placement"):
        plan_static(bufs, algorithms=["best_fit"])
    with pytest.raises(ValueError, match="repeated: a"):
        plan_static([Buffer("a", 4, 0, 0), Buffer("a", 4, 1, 1)])


def test_placement_respects_alignment():
    bufs = [Buffer("a", 3, 0, 1, align=1), Buffer("b", 16, 0, 1, align=16), Buffer("c", 5, 1, 1, align=8)]
    plan = plan_static(bufs)
    assert all(plan.offset(b.name) % b.align == 0 for b in bufs)
    check_placement(bufs, plan.offsets)


def test_capacity_overflow_names_level_bytes_and_node():
    bufs = [Buffer("x", 100, 0, 1), Buffer("y", 60, 1, 2), Buffer("z", 20, 2, 2)]
    with pytest.raises(PlanError) as info:
        plan_static(bufs, capacity=120, level="L2", node_names=["conv", "pool", "fc"])
    err = info.value
    assert isinstance(err, AutoTilerError)
    assert (err.level, err.missing, err.node, err.node_name) == ("L2", 40, 1, "pool")
    assert "L2 is 40 bytes short at node 1 ('pool')" in str(err)
    assert plan_static(bufs, capacity=160).peak == 160


@pytest.mark.parametrize("name", sorted(zoo()))
def test_zoo_graphs_within_five_percent_of_the_bound(name):
    bufs = zoo()[name]
    plan = plan_static(bufs)
    check_placement(bufs, plan.offsets)
    assert plan.lower_bound <= plan.peak <= 1.05 * plan.lower_bound
    if name == "chain":
        assert plan.peak == plan.lower_bound


def test_node_tops_reach_the_peak_where_the_top_buffer_lives():
    bufs = [Buffer("a", 8, 0, 0), Buffer("b", 8, 0, 1), Buffer("c", 4, 2, 2)]
    plan = plan_static(bufs)
    tops = node_tops(plan)
    assert max(tops) == plan.peak == 16 and tops[2] == 4


# --------------------------------------------------------------------------- random DAGs


@st.composite
def dags(draw, max_nodes=14):
    """Buffers of a random DAG run in a random topological order: node v writes one tensor,
    read by its successors; graph inputs are alive from node 0."""
    n = draw(st.integers(1, max_nodes))
    preds = [draw(st.sets(st.integers(0, v - 1), max_size=3)) if v else set() for v in range(n)]
    sizes = draw(st.lists(st.integers(0, 4096), min_size=n, max_size=n))
    aligns = draw(st.lists(st.sampled_from([1, 4, 8]), min_size=n, max_size=n))
    priority = draw(st.permutations(range(n)))
    order, done = [], set()
    while len(order) < n:   # Kahn's algorithm, ties broken by the drawn priority: a random topological order
        ready = [v for v in range(n) if v not in done and preds[v] <= done]
        v = min(ready, key=lambda v: priority[v])
        order.append(v)
        done.add(v)
    pos = {v: i for i, v in enumerate(order)}
    readers = {v: [pos[w] for w in range(n) if v in preds[w]] for v in range(n)}
    return [Buffer(f"t{v}", sizes[v], pos[v], max(readers[v], default=pos[v]), aligns[v]) for v in range(n)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(), st.one_of(st.none(), st.integers(0, 20000)))
def test_random_dag_placement_is_valid_and_bounded(bufs, capacity):
    try:
        plan = plan_static(bufs, capacity=capacity, node_names=[f"n{i}" for i in range(len(bufs))])
    except PlanError as err:
        best = plan_static(bufs)
        assert capacity is not None and best.peak > capacity
        assert err.level == "L2" and err.missing > 0 and 0 <= err.node < len(bufs)
        assert f"{err.missing} bytes short at node {err.node} ('n{err.node}')" in str(err)
        assert err.missing == max(best.lower_bound, best.peak if best.lower_bound <= capacity else 0) - capacity
        return
    assert placement_conflicts(bufs, plan.offsets, capacity) == []
    assert plan.peak >= plan.lower_bound == lower_bound(bufs)
    if capacity is not None:
        assert plan.peak <= capacity


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=30))
def test_chains_reach_the_lower_bound(sizes):
    bufs = chain(sizes)
    plan = plan_static(bufs)
    assert plan.peak == plan.lower_bound
    check_placement(bufs, plan.offsets)


# --------------------------------------------------------------------------- aliases and stacks


def test_inout_alias_is_one_buffer_spanning_both_lifetimes():
    merged = merge_aliases([("in", 64, 0, 2), ("out", 48, 2, 5), ("w", 8, 1, 1)], aliases=[("in", "out")])
    by_name = {b.name: b for b in merged.buffers}
    assert set(by_name) == {"in", "w"}
    assert (by_name["in"].size, by_name["in"].first, by_name["in"].last) == (64, 0, 5)
    assert merged.where["out"] == ("in", 0) and merged.where["w"] == ("w", 0)


def test_stacked_tensor_places_children_end_to_end_in_a_virtual_parent():
    merged = merge_aliases([("a", 12, 0, 3), ("b", 20, 1, 3), ("c", 8, 2, 4)], stacks=[("cat", ("a", "b", "c"))])
    (buf,) = merged.buffers
    assert (buf.name, buf.size, buf.first, buf.last) == ("cat", 40, 0, 4)
    assert [merged.where[n] for n in ("a", "b", "c", "cat")] == [("cat", 0), ("cat", 12), ("cat", 32), ("cat", 0)]


def test_nested_stacks_and_aliases_and_contradictions():
    merged = merge_aliases([("a", 8, 0, 1), ("b", 8, 1, 2), ("c", 16, 2, 3), ("d", 8, 3, 4)],
                           aliases=[("b", "d")], stacks=[("inner", ("a", "b")), ("outer", ("inner", "c"))])
    (buf,) = merged.buffers
    assert (buf.name, buf.size, buf.first, buf.last) == ("outer", 32, 0, 4)
    assert merged.where["d"] == ("outer", 8) and merged.where["c"] == ("outer", 16)
    with pytest.raises(ValueError, match="cannot be both"):
        merge_aliases([("a", 8, 0, 1), ("b", 8, 1, 2)], aliases=[("a", "b")], stacks=[("s", ("a", "b"))])
    with pytest.raises(ValueError, match="unknown child"):
        merge_aliases([("a", 8, 0, 1)], stacks=[("s", ("a", "zz"))])
    with pytest.raises(ValueError, match="alignment 8"):
        merge_aliases([("a", 4, 0, 1), ("b", 8, 0, 1, 8)], stacks=[("s", ("a", "b"))])


# --------------------------------------------------------------------------- L3 spill


def test_no_spill_when_l2_fits():
    bufs = chain([400, 800, 400])
    plan = plan_levels(bufs, l2_capacity=1200)
    assert plan.spilled == () and plan.l3 is None and plan.l3_traffic == 0 and plan.l2.peak == 1200


def test_spill_prefers_the_buffer_with_least_weighted_traffic():
    # At node 1, big (1000, read 10 times) and small (600, read twice) and live (200) are alive: 1800 bytes.
    bufs = [Buffer("big", 1000, 0, 2), Buffer("small", 600, 0, 2), Buffer("live", 200, 1, 1)]
    plan = plan_levels(bufs, l2_capacity=1300, accesses={"big": 10})
    assert plan.spilled == ("small",) and plan.l3_traffic == 1200
    assert plan.level("small") == "L3" and plan.level("big") == "L2"
    # Without weights the larger buffer frees more per byte moved beyond the excess: same cost ratio, most bytes.
    assert plan_levels(bufs, l2_capacity=1300, pinned={"small"}).spilled == ("big",)


def test_unspill_returns_buffers_that_turned_out_redundant():
    bufs = [Buffer(f"b{i}", 100 * (i + 1), 0, 3) for i in range(5)]   # all alive together: 1500 bytes
    plan = plan_levels(bufs, l2_capacity=1100)
    kept = [b for b in bufs if b.name not in plan.spilled]
    assert sum(b.size for b in kept) <= 1100
    for name in plan.spilled:   # minimal: no spilled buffer can come back
        back = [b for b in bufs if b.name == name][0]
        assert sum(b.size for b in kept) + back.size > 1100


def test_staging_and_node_extra_are_placed_pseudo_buffers():
    bufs = [Buffer("a", 1000, 0, 3), Buffer("b", 200, 1, 2)]
    plan = plan_levels(bufs, l2_capacity=600, node_extra=[0, 0, 64], staging={"a": 128}, touches={"a": [0, 3]})
    assert plan.spilled == ("a",)
    assert plan.extra == (128, 0, 64, 128)
    assert plan.extra_offset(1) is None and plan.extra_offset(2) is not None
    check_placement(plan.l2.buffers, plan.l2.offsets, capacity=600)
    assert {b.name for b in plan.l2.buffers} == {"b", extra_name(0), extra_name(2), extra_name(3)}
    assert plan.l3 is not None and plan.offset("a") == 0


def test_spill_infeasible_names_level_bytes_and_node():
    bufs = [Buffer("a", 1000, 0, 2), Buffer("w", 500, 1, 1)]
    with pytest.raises(PlanError) as info:
        plan_levels(bufs, l2_capacity=400, pinned={"w"}, node_names=["n0", "n1", "n2"])
    err = info.value
    assert (err.level, err.missing, err.node, err.node_name) == ("L2", 100, 1, "n1")
    assert "L2 is 100 bytes short at node 1 ('n1')" in str(err) and "spillable" in str(err)
    with pytest.raises(PlanError, match="L2 is 40 bytes short at node 0"):   # staging alone overflows
        plan_levels([Buffer("a", 1000, 0, 2)], l2_capacity=200, staging={"a": 240})
    with pytest.raises(PlanError) as info:
        plan_levels(bufs, l2_capacity=600, l3_capacity=800)
    assert info.value.level == "L3" and info.value.missing == 200


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(max_nodes=10), st.integers(0, 12000), st.integers(0, 256), st.data())
def test_random_spill_plans_fit_or_say_why(bufs, capacity, stage, data):
    pinned = set(data.draw(st.sets(st.sampled_from([b.name for b in bufs]), max_size=2)))
    staging = {b.name: stage for b in bufs}
    try:
        plan = plan_levels(bufs, capacity, staging=staging, pinned=pinned)
    except PlanError as err:
        assert err.level == "L2" and err.missing > 0 and f"node {err.node}" in str(err)
        return
    assert plan.l2.peak <= capacity and not pinned & set(plan.spilled)
    check_placement(plan.l2.buffers, plan.l2.offsets, capacity)
    if plan.l3 is not None:
        check_placement(plan.l3.buffers, plan.l3.offsets)
    assert plan.l3_traffic == sum(2 * b.size for b in bufs if b.name in plan.spilled)


def test_spill_cost_against_exhaustive_optimum_on_small_graphs(monkeypatch):
    cases = []
    for seed in range(6):
        bufs = random_dag(seed, 7)
        capacity = int(lower_bound(bufs) * 0.6)
        best = min(sum(2 * b.size for b in bufs if b.name in subset)
                   for k in range(len(bufs) + 1) for subset in map(set, itertools.combinations([b.name for b in bufs], k))
                   if plan_static([b for b in bufs if b.name not in subset]).peak <= capacity)
        cases.append((bufs, capacity, best))
    for bufs, capacity, best in cases:   # few spillable buffers: the exact search finds the optimum
        assert plan_levels(bufs, capacity).l3_traffic == best
    monkeypatch.setattr(spill, "EXACT_SPILLABLE", 0)   # the greedy, un-spill and swap passes alone
    ratios = [plan_levels(bufs, capacity).l3_traffic / best for bufs, capacity, best in cases]
    assert all(1.0 <= r <= 1.35 for r in ratios) and min(ratios) == 1.0


# --------------------------------------------------------------------------- constants


def test_flash_image_round_trip_and_alignment():
    items = [("w0", bytes(range(5)), 4), ("b0", b"\x01\x02", 2), ("w1", bytes(range(100, 117)), 16), ("z", b"", 8)]
    image = pack_constants(items)
    for name, data, align in items:
        assert image.offsets[name] % align == 0 and image.read(name) == data
    assert image.offsets == {"w0": 0, "b0": 6, "w1": 16, "z": 40}
    assert image.total == 40 and image.data[5:6] == b"\x00"
    with pytest.raises(ValueError, match="packed twice"):
        pack_constants([("a", b"", 1), ("a", b"", 1)])
    with pytest.raises(ValueError, match="power of two"):
        pack_constants([("a", b"x", 6)])


@given(st.lists(st.tuples(st.binary(max_size=40), st.sampled_from([1, 2, 4, 8, 64])), max_size=12))
def test_flash_image_round_trip_property(items):
    image = pack_constants([(f"c{i}", data, align) for i, (data, align) in enumerate(items)])
    for i, (data, align) in enumerate(items):
        assert image.read(f"c{i}") == data and image.offsets[f"c{i}"] % align == 0
    assert image.total == (max(image.offsets[f"c{i}"] + len(d) for i, (d, _) in enumerate(items)) if items else 0)


def test_promotion_takes_most_used_constants_within_the_budget():
    consts = {"a": 1000, "b": 400, "c": 300, "d": 2000, "e": 64}
    uses = {"a": 1, "b": 3, "c": 3, "d": 5, "e": 0}
    promo = promote_constants(consts, 2800, uses)
    assert promo.static == ("b", "c", "d")   # in declaration order
    assert promo.static_bytes == 2700 and promo.flash == ("a", "e")
    assert promo.flash_traffic == 1000
    assert promote_constants(consts, 0, uses).static == ()
    assert promote_constants(consts, 10**6, uses).flash == ("e",)   # never used: no point holding L2


def test_prefetch_starts_as_late_as_the_copy_allows():
    times = [1000.0] * 8
    copy = lambda size: 300 + size   # noqa: E731
    (p,) = prefetch_schedule({"w": 1500}, times, {"w": 5}, [10_000] * 8, last_use={"w": 6}, copy_cycles=copy)
    # 1800 cycles of copy: nodes 3 and 4 cover it, so it starts after node 2.
    assert (p.start, p.stall) == (2, 0.0)
    assert (p.buffer().first, p.buffer().last) == (3, 6)
    # No room at node 3: start after it, and node 5 waits 800 cycles.
    (p,) = prefetch_schedule({"w": 1500}, times, {"w": 5}, [10_000, 10_000, 10_000, 100] + [10_000] * 4,
                             copy_cycles=copy)
    assert (p.start, p.stall) == (3, 800.0)
    # Too early a first use: starts before the run, stalls the rest.
    (p,) = prefetch_schedule({"w": 1500}, times, {"w": 1}, [10_000] * 8, copy_cycles=copy)
    assert (p.start, p.stall) == (-1, 800.0)


def test_prefetches_share_the_channel_and_the_free_l2():
    times = [1000.0] * 6
    copy = lambda size: float(size)   # noqa: E731
    a, b = prefetch_schedule({"a": 900, "b": 900}, times, {"a": 4, "b": 4}, [2000] * 6, copy_cycles=copy)
    assert (a.start, b.start) == (2, 2) and a.stall == 0.0 and b.stall == 800.0
    a, b = prefetch_schedule({"a": 900, "b": 900}, times, {"a": 4, "b": 4}, [1000] * 6, copy_cycles=copy)
    # a holds the free L2 from node 3 on: b finds no room before its use, so it starts just before
    # it (after node 3, stalling) and the caller's placement must make room.
    assert a.start == 2 and (b.start, b.stall) == (3, 900.0)
