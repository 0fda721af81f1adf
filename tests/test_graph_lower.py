"""A declared graph lowered onto the planner: symbol sizes from the kernels, lifetimes from the
node order, activations placed in dynamic L2 at the lower bound, constants promoted to static L2
or prefetched from flash as L2 allows, and a typed error when L2 cannot hold the graph."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from autotiler import *
from autotiler.graph.lower import _promote, lifetimes, plan_graph, symbol_sizes
from autotiler.graph.plan import PlanError, check_placement

from .graph_helpers import ITEMS, const, inp, lib_add, local, mat_add, out, write_bin

B = 4 * ITEMS  # bytes of every symbol of these graphs


@pytest.fixture
def graph(tmp_path):
    """K1: T1 = In + W1; K2: T2 = T1 + W2; K3: Out = T2 + T1 (T1 is read again: a residual join)."""
    with Model() as m:
        SetL1MemorySize(51200)
        lib_add()
        for k in ("K1", "K2", "K3"):
            mat_add(k)
        w1 = write_bin(tmp_path / "w1.bin", np.arange(ITEMS))
        w2 = write_bin(tmp_path / "w2.bin", 2 * np.arange(ITEMS))
        CreateGraph("G", CArgs(inp(), const("W1", w1), const("W2", w2), out()), CArgs(local("T1"), local("T2")))
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T1", 0)))
        AddNode("K2", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "T2", 0)))
        AddNode("K3", Bindings(GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        yield m, m.graphs["G"]


def test_sizes_and_lifetimes_come_from_the_kernels_and_the_node_order(graph):
    m, g = graph
    assert symbol_sizes(m, g) == {n: B for n in ("In", "W1", "T1", "W2", "T2", "Out")}
    assert lifetimes(g) == {"In": (0, 0), "W1": (0, 0), "T1": (0, 2), "W2": (1, 1), "T2": (1, 2), "Out": (2, 2)}


def test_generous_l2_promotes_every_constant_and_places_activations_at_the_bound(graph):
    m, g = graph
    plan = plan_graph(m, g, l2_budget=64 * 1024)
    assert plan.dyn.peak == plan.dyn.lower_bound == 2 * B  # T1 and T2 live together at K2 and K3
    check_placement(plan.dyn.buffers, plan.dyn.offsets)
    t1, t2 = plan.symbol("T1"), plan.symbol("T2")
    assert (t1.area, t2.area) == ("dyn", "dyn") and {t1.offset, t2.offset} == {0, B}
    assert {plan.symbol(n).area for n in ("W1", "W2")} == {"static"} and plan.static_bytes == 2 * B
    assert {plan.symbol(n).area for n in ("In", "Out")} == {"arg"}
    # the flash image holds both constants, as load_const packs them
    assert plan.flash.read("W1") == np.arange(ITEMS, dtype="<i4").tobytes()
    assert plan.flash.read("W2") == (2 * np.arange(ITEMS)).astype("<i4").tobytes()


def test_tight_l2_leaves_a_constant_in_flash_prefetched_into_dynamic_l2(graph):
    m, g = graph
    plan = plan_graph(m, g, l2_budget=3 * B)   # the activations (2B) and one constant (B)
    areas = {n: plan.symbol(n).area for n in ("W1", "W2")}
    assert sorted(areas.values()) == ["flash", "static"] and plan.static_bytes == B
    fetched = next(plan.symbol(n) for n, a in areas.items() if a == "flash")
    assert fetched.prefetch_start is not None and fetched.prefetch_start < fetched.first
    assert plan.static_bytes + plan.dyn.peak <= 3 * B
    check_placement(plan.dyn.buffers, plan.dyn.offsets)


def test_l2_too_small_for_the_activations_names_level_bytes_and_node(graph):
    m, g = graph
    with pytest.raises(PlanError, match=re.escape("graph 'G': L2 is ") + r"\d+" + re.escape(" bytes short at node ")
                       + r"\d \('K\d'\).*with every spillable buffer in L3.*give the graph more L2") as err:
        plan_graph(m, g, l2_budget=B)
    assert err.value.level == "L2" and err.value.missing > 0 and "test_graph_lower.py" in str(err.value)


def test_promotion_tries_each_refused_constant_once():
    """The greedy promotion (most flash traffic saved first) tries a constant refused once no
    more: a promotion only grows static + dynamic L2, so it would be refused again. Here L2 holds
    300 bytes; 'big' (200 B, read most) fits alone, then 'mid' no longer does, 'small' still
    does: 'big' and 'small' are promoted, and 'mid' is not tried again after 'small'."""
    consts = {"big": 200, "mid": 120, "small": 60}
    uses = {"big": 4, "mid": 4, "small": 1}
    trials = []

    def layout(promoted):
        trials.append(tuple(promoted))
        static = sum(consts[n] for n in promoted)
        return static, SimpleNamespace(peak=sum(consts[n] for n in consts if n not in promoted) // 4), ()

    assert _promote(consts, uses, budget=300, l2=300, layout=layout) == ["big", "small"]
    assert trials == [("big",), ("big", "mid"), ("big", "small")]   # not ("big", "small", "mid") again
