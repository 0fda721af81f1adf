"""bench/gvsoc_micro.py without GVSoC: the fits of its runtime statements and cold calls on
synthetic records, and pulp_open's constants against the results file they cite."""

from __future__ import annotations

import json

import pytest

from autotiler.platforms import get_platform

from .conftest import ROOT, bench_script

RESULTS = ROOT / "bench" / "results" / "gvsoc_micro.json"


def _micro():
    return bench_script("gvsoc_micro")


def test_pulp_open_takes_its_constants_from_the_micro_benchmarks():
    """The platform fields bench/gvsoc_micro.py suggests (the runtime statements, the cold calls)
    are pulp_open's, and the fork window the compute fit subtracts is in the same file."""
    data = json.loads(RESULTS.read_text())
    fields, plat = data["platform_fields"], get_platform("pulp_open")
    dma = plat.cluster_dma
    assert fields["cluster_dma"] == {"setup_cycles": dma.setup_cycles, "bytes_per_cycle": dma.bytes_per_cycle,
                                     "line_cycles": dma.line_cycles}
    assert (fields["dma_issue_cycles"], fields["wait_cycles"], fields["fork_cycles"], fields["kernel_call_cycles"]) \
        == (plat.dma_issue_cycles, plat.wait_cycles, plat.fork_cycles, plat.kernel_call_cycles)
    assert 0 < data["fit"]["runtime"]["fork_window_cycles"]["value"] < plat.fork_cycles


def _runtime_records(issue=52, wait=22, intercept=68, fork=98):
    """bench/gvsoc/runtime's records of a chip whose statements cost what is given (+1: the
    counter overhead the fit subtracts)."""
    records = [{"kind": "overhead", "v": [1] * 5}]
    for d in ("in", "out"):
        for size in (4, 64, 1024, 4096, 16384):
            records.append({"kind": "rt_dma1d", "what": "issue", "dir": d, "bytes": size, "v": [issue + 1] * 5})
            records.append({"kind": "rt_dma1d", "what": "wait", "dir": d, "bytes": size, "v": [wait + 1] * 5})
            total = max(74, intercept + size // 8) + (size // 256 if d == "out" else 0)
            records.append({"kind": "rt_dma1d", "what": "total", "dir": d, "bytes": size, "v": [total + 1] * 5})
        for line in (16, 64, 256, 1024):
            lines = 4096 // line
            records.append({"kind": "rt_dma2d", "what": "issue", "dir": d, "line": line, "v": [issue + 8] * 5})
            total = intercept + 7 + 512 + (lines if d == "out" else 0)
            records.append({"kind": "rt_dma2d", "what": "total", "dir": d, "line": line, "v": [total + 1] * 5})
    records.append({"kind": "rt_fork", "what": "statement", "v": [fork + 1] * 5})
    return records


def test_the_runtime_fit_reads_issue_wait_setup_lines_and_fork():
    micro = _micro()
    rt = micro.fit_runtime({"records": _runtime_records(), "fork_window": {"calls": 5, "cycles": 310}}, 1, "test")
    assert (rt["dma_issue_cycles"]["value"], rt["wait_cycles"]["value"], rt["dma_issue_2d_cycles"]["value"]) \
        == (52, 22, 59)
    assert rt["transfer_in"]["bytes_per_cycle"] == pytest.approx(8) and rt["transfer_in"]["setup_cycles"] == 16
    assert rt["transfer_in"]["small"] == {"4": 74, "64": 76}
    assert rt["line_cycles_out"]["line_cycles"] == pytest.approx(1) and rt["line_cycles_in"]["line_cycles"] == 0
    assert rt["fork_cycles"]["value"] == 98 and rt["fork_window_cycles"]["value"] == 62


def test_the_cold_call_is_what_a_first_call_adds_outside_its_forks():
    """Per kernel: (cold - median warm) - (cold forks - warm forks); the constant is their median;
    the line in the code size and the calls after another kernel are reported beside it."""
    micro = _micro()
    kernels = [{"case": "c", "kernel": f"K{i}", "cycles": [10_000 + extra + forks, 10_000, 10_002],
                "fork_cycles": [5_000 + forks, 5_000], "text_bytes": 100 * (i + 1), "predicted": 9_000}
               for i, (extra, forks) in enumerate(((400, 300), (500, 100), (900, 700)))]
    after = [{"case": "c", "first": "K0", "kernel": "K1", "cycles": [10_300, 10_001]}]
    fit = micro.fit_cold_calls({"kernels": kernels, "after": after}, "test")
    assert [r["cold_extra_outside"] for r in fit["kernels"]] == [399, 499, 899]
    assert fit["kernel_call_cycles"]["value"] == 499 and fit["kernel_call_cycles"]["max"] == 899
    assert fit["by_code_size"]["cycles_per_byte"] == pytest.approx(2.5)
    assert fit["after"] == [{"first": "K0", "kernel": "K1", "after_cycles": 10_300, "cold_cycles": 10_600,
                             "warm_cycles": 10_001}]
