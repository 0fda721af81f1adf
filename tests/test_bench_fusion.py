"""bench/fusion.py (issue 26's targets) on a small model, without the simulator's build (the bench run
itself builds, simulates and checks bit-exactness): the variants' figures, the targets, the Markdown
and the JSON keys; and the smallest-L2 search on a stand-in import."""

from __future__ import annotations

import json

import pytest

from .conftest import bench_script

B = bench_script("fusion")
VARIANT_KEYS = {"variant", "fusion_l2", "l2_budget", "peak_l2", "peak_l2_bound", "ratio_bound", "ratio_tflm",
                "traffic_l2_l1", "traffic_l2_l1_ratio", "group_traffic_l2_l1", "group_traffic_l2_l1_unfused",
                "predicted_cycles", "predicted_cycles_ratio", "host_cycles", "gvsoc_cycles", "gvsoc_not_run",
                "bit_exact_tflm", "bit_exact_unfused", "bit_exact_gvsoc_host", "correct", "groups", "nodes"}


@pytest.fixture(scope="module")
def measured():
    """fused_activations (conv, dw, conv, ADD, ...): ``none`` and ``min``, predicted figures only."""
    return B.measure("fused_activations", "pulp_open", False, variants=("none", "min"), log=lambda s: None,
                     simulate=False)


def test_variants_json_keys(measured):
    data = json.loads(json.dumps(measured))
    assert {"model", "role", "platform", "liveness_bound", "tflm_arena_head", "variants"} <= set(data)
    none, fused = data["variants"]
    assert (none["variant"], fused["variant"]) == ("none", "min")
    for v in (none, fused):
        assert VARIANT_KEYS <= set(v), VARIANT_KEYS - set(v)
        assert v["correct"] is None and v["host_cycles"] is None     # not simulated
    assert data["role"] == "context" and none["groups"] == [] and none["peak_l2"] == data["liveness_bound"]
    assert fused["groups"] and fused["peak_l2"] < none["peak_l2"]
    g = fused["groups"][0]
    assert {"name", "layers", "reason", "l2_l1", "l2_l1_unfused", "predicted", "predicted_unfused",
            "predicted_ratio", "gvsoc_cycles_ratio"} <= set(g)
    assert g["l2_l1_unfused"] == sum(n["l2_l1"] for n in none["nodes"] if n["name"] in g["layers"])


def test_targets_and_markdown(measured):
    model = {**measured, "role": "target"}
    lines = B.targets([model])
    assert lines and all(t["status"] in ("PASS", "FAIL", "n/a") for t in lines)
    assert any("GVSoC cycles" in t["target"] and t["status"] == "n/a" for t in lines)
    smallest = {"none": {"smallest_l2": 8192, "failing_l2": 7936, "l3_activations_at_smallest": 0,
                         "imports": [{"l2": 7936, "ok": False, "need": 8000}, {"l2": 8192, "ok": True}]},
                "fit": {"smallest_l2": 4096, "failing_l2": 3840, "l3_activations_at_smallest": 0,
                        "imports": [{"l2": 4096, "ok": True}]}}
    data = {"git": {"commit": "0" * 40, "dirty": False}, "platform": "pulp_open", "targets": lines,
            "models": [{**model, "smallest_l2": smallest}]}
    text = B.markdown(data)
    assert "## Targets" in text and "| fused_activations | 8192 (needs 8000) | 8192 | 4096 (needs -) | 4096 | 0.50 | 3 |" in text


def test_smallest_l2_follows_the_reported_need():
    """A stand-in import that fits from 70000 B (the failures say so): the reported need is tried, then
    the budget 256 B below it, nothing else."""
    tried = []

    def attempt(l2):
        tried.append(l2)
        return (True, 0) if l2 >= 70000 else (False, 70000)

    got = B.smallest_l2(attempt, 430080, log=lambda s: None)
    assert (got["smallest_l2"], got["failing_l2"]) == (70144, 69888)
    assert tried == [4096, 70144, 69888]


def test_smallest_l2_bisects_without_a_need():
    def attempt(l2):
        return (l2 >= 50000, None)

    got = B.smallest_l2(attempt, 430080, log=lambda s: None)
    assert got["failing_l2"] < 50000 <= got["smallest_l2"] and got["smallest_l2"] - got["failing_l2"] == 256
    assert all(i["ok"] == (i["l2"] >= 50000) for i in got["imports"])
