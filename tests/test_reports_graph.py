"""Graph reports (issue "Graph mode" §5): the plan of a graph in the manifest (``graphs[i]["plan"]``),
the table GenerationReport prints, its JSON, and the PNG of the L2 plan over time."""

from __future__ import annotations

import json

import pytest

from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.graph.lower import plan_graph
from autotiler.graph.summary import plan_json
from autotiler.plot import plot_plan
from autotiler.reports import GenerationReport, graph_reports

from .graph_helpers import ITEMS, declare_residual_graph, lib_add, mat_add

B = 4 * ITEMS
GENEROUS, TIGHT = 64 * 1024, 3 * B


def declare(tmp_path, l2: int) -> None:
    declare_residual_graph(tmp_path, l2)


def generated(tmp_path, l2: int):
    with Model() as m:
        declare(tmp_path, l2)
        files = generate(m)
        written = write_files(files, str(tmp_path / "gen"))
        report = GenerationReport.from_model(m, written)
        plan = plan_graph(m, m.graphs["G"], m.l2_budget)
    manifest = json.loads(files["GraphKernels.json"])
    return report, manifest, plan


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    return generated(tmp_path_factory.mktemp("tight"), TIGHT)


def test_manifest_carries_the_plan(tight):
    report, manifest, plan = tight
    p = manifest["graphs"][0]["plan"]
    assert p == plan_json(plan) and p == report.graph("G").plan
    assert p["nodes"] == ["K1", "K2", "K3"] and p["l2_budget"] == TIGHT
    assert p["static"] == {"bytes": B, "budget": TIGHT}
    dyn = p["dynamic"]
    assert (dyn["bytes"], dyn["lower_bound"], dyn["ratio"]) == (2 * B, 2 * B, 1.0)
    assert dyn["algorithm"] in dyn["tried"] and dyn["tried"][dyn["algorithm"]] == dyn["bytes"]
    assert p["total"] == 3 * B and p["flash"]["bytes"] == 2 * B
    areas = {s["name"]: s["area"] for s in p["symbols"]}
    assert areas["In"] == areas["Out"] == "arg" and areas["T1"] == areas["T2"] == "dyn"
    # one constant promoted, the other prefetched from flash before its node
    assert sorted([areas["W1"], areas["W2"]]) == ["flash", "static"]
    assert p["flash"]["promoted"] + p["flash"]["prefetched"] in (["W1", "W2"], ["W2", "W1"])
    fetched = next(s for s in p["symbols"] if s["area"] == "flash")
    assert fetched["prefetch_start"] < fetched["first"] and fetched["l2_first"] == fetched["prefetch_start"] + 1
    assert fetched["prefetch_stall"] is not None and fetched["flash_offset"] is not None
    t1 = next(s for s in p["symbols"] if s["name"] == "T1")
    assert (t1["first"], t1["last"], t1["l2_first"], t1["l2_last"], t1["size"]) == (0, 2, 0, 2, B)
    static = next(s for s in p["symbols"] if s["area"] == "static")
    assert (static["offset"], static["l2_first"], static["l2_last"]) == (0, 0, 2)
    # every dynamic symbol inside the dynamic area, none overlapping another alive at the same node
    held = [s for s in p["symbols"] if s["area"] in ("dyn", "flash")]
    assert all(s["offset"] + s["size"] <= dyn["bytes"] for s in held)
    for a in held:
        for b in held:
            if a is not b and a["l2_first"] <= b["l2_last"] and b["l2_first"] <= a["l2_last"]:
                assert a["offset"] + a["size"] <= b["offset"] or b["offset"] + b["size"] <= a["offset"]


def test_generation_report_prints_the_table(tight):
    report, manifest, _ = tight
    text = report.format()
    assert "3 user kernel(s), 0 group(s), 1 graph(s)" in text
    assert "graph G: 3 node(s): 0 K1, 1 K2, 2 K3" in text
    assert "symbol  area" in text and "offset  size  live  flash  prefetch" in text
    lines = {line.split()[0]: line for line in text.splitlines()[1:] if line.startswith("    ")}
    assert lines["T1"].split()[1:] == ["dynamic", "L2", "0", str(B), "0..2", "-"]
    assert "argument" in lines["In"] and "static L2" in (lines["W1"] + lines["W2"])
    fetched = next(s["name"] for s in manifest["graphs"][0]["plan"]["symbols"] if s["area"] == "flash")
    assert "flash->L2" in lines[fetched] and "before node 0" in lines[fetched]
    assert (f"L2 {3 * B} B of {TIGHT} B: static {B} B (budget {TIGHT} B), dynamic {2 * B} B "
            f"(lower bound {2 * B} B, 1.00x, ") in text
    assert f"1 left in flash (prefetch {fetched} before node 0); flash image {2 * B} B" in text
    assert report.to_dict()["graphs"] == [{"name": "G", "plan": manifest["graphs"][0]["plan"]}]
    assert graph_reports(manifest)[0].format() == report.graph("G").format()


def test_generous_l2_promotes_every_constant(tmp_path):
    report, manifest, _ = generated(tmp_path, GENEROUS)
    p = report.graph("G").plan
    assert sorted(p["flash"]["promoted"]) == ["W1", "W2"] and p["flash"]["prefetched"] == []
    assert p["static"]["bytes"] == 2 * B and p["dynamic"]["bytes"] == 2 * B
    assert "2 promoted to static L2 (W1, W2), 0 left in flash; flash image" in report.format()


def test_no_graph_no_graph_table(tmp_path):
    with Model() as m:
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        lib_add()
        mat_add("K1")
        report = GenerationReport.from_model(m, write_files(generate(m), str(tmp_path)))
    assert report.graphs == () and "graph(s)" not in report.format() and "graph K" not in report.format()


def test_plot_plan_writes_a_png(tight, tmp_path):
    report, _, _ = tight
    path = plot_plan(report.graph("G"), tmp_path / "plan.png")
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
