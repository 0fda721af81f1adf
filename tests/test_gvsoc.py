"""The GVSoC back-end (host_harness/gvsoc.py): generated user kernels cross-compiled for rv32imc
and run on GVSoC's pulp-open cluster, bit-exact with numpy and with the host simulator.

The runs need GVSoC (``../shared/tools/gvsoc/setup.sh``, then ``source ~/.cache/gvsoc/env.sh``):
they are marked ``gvsoc`` and skipped when GVSOC_HOME is not set; CI runs without it. The
back-end's refusals and its install hint are checked everywhere.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler import Model, SetTilingObjective
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError, ModelError
from autotiler.platforms import get_platform
from host_harness import gvsoc

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = pytest.mark.usefixtures("private_harness_cache")


def _generate(example: str, out: Path, platform="pulp_open", objective=None, **kw) -> Path:
    mod = runpy.run_path(str(EXAMPLES / example / "model.py"))
    with Model(platform) as m:
        if objective:   # e.g. "original": the largest tiles, the whole budget used
            SetTilingObjective(objective)
        mod["declare"](**kw)
        files = generate(m)
    write_files(files, str(out))
    return out


def _matadd_args(rng):
    a = rng.integers(-(1 << 30), 1 << 30, size=(100, 100), dtype=np.int32)
    b = rng.integers(-(1 << 30), 1 << 30, size=(100, 100), dtype=np.int32)
    return a, b, np.full((100, 100), 0x5A5A5A5A, dtype=np.int32)


def test_unknown_backend(tmp_path):
    gen = _generate("matadd_v3", tmp_path / "gen")
    with pytest.raises(HarnessError, match=r"unknown backend 'fpga'.*backends: host, gvsoc"):
        host_harness.build(gen, backend="fpga")


def test_without_gvsoc_the_error_says_how_to_install(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.delenv("GVSOC_HOME", raising=False)
    with pytest.raises(HarnessError, match=r"needs GVSoC, and GVSOC_HOME is not set.*setup\.sh.*env\.sh"):
        host_harness.build(gen, sources=[EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"], backend="gvsoc")
    assert not gvsoc.available()


def test_gvsoc_home_without_env_sh(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.setenv("GVSOC_HOME", str(tmp_path))
    with pytest.raises(HarnessError, match=r"has no env\.sh \(not a GVSoC build from setup\.sh\)"):
        host_harness.build(gen, backend="gvsoc")


def test_host_options_are_refused_for_gvsoc(tmp_path, monkeypatch):
    gen = _generate("matadd_v3", tmp_path / "gen")
    monkeypatch.setenv("GVSOC_HOME", str(tmp_path))
    with pytest.raises(HarnessError, match=r"sanitize=True is a host-simulator option"):
        host_harness.build(gen, backend="gvsoc", sanitize=True)
    with pytest.raises(HarnessError, match=r"4 cores: GVSoC's pulp-open cluster has 8"):
        host_harness.build(gen, backend="gvsoc", cores=4)


@needs_gvsoc
@pytest.mark.gvsoc
def test_matadd_on_gvsoc_is_bit_exact(tmp_path):
    gen = _generate("matadd_v3", tmp_path / "gen", l1=20000)
    src, inc = [EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"], [EXAMPLES / "matadd_v3"]
    target = host_harness.build(gen, sources=src, include_dirs=inc, backend="gvsoc")
    host = host_harness.build(gen, sources=src, include_dirs=inc, platform="pulp_open")
    try:
        a, b, out = _matadd_args(np.random.default_rng(1))
        got = target.call("MatADD", In1=a, In2=b, Out=out)
        np.testing.assert_array_equal(out, a + b)
        assert got["backend"] == "gvsoc" and got["cycles"] > 0
        out2 = np.full_like(out, 0x5A5A5A5A)
        on_host = host.call("MatADD", In1=a, In2=b, Out=out2)
        np.testing.assert_array_equal(out, out2)
        prof = target.profile("MatADD", In1=a, In2=b, Out=np.full_like(out, 7))
        calls, cycles, cost = prof["forks"]["MatSumPar"]
        assert calls >= 1 and 0 < cycles < prof["cycles"]
        assert cost == on_host["compute_cycles"]   # the Cost= values the host simulator charged
    finally:
        target.close()


@needs_gvsoc
@pytest.mark.gvsoc
def test_l3_devices_are_refused_on_gvsoc(tmp_path):
    gen = _generate("matadd_l3", tmp_path / "gen", platform="gap8")
    with pytest.raises(HarnessError, match=r"L3 devices .* are not supported on the GVSoC back-end yet"):
        host_harness.build(gen, sources=[EXAMPLES / "matadd_l3" / "MatAddBasicKernels.c"], backend="gvsoc")


@needs_gvsoc
@pytest.mark.gvsoc
def test_l1_too_full_for_the_cluster_stacks_is_said(tmp_path):
    """pulp-runtime starts no cluster when its 8 stacks do not fit in L1 after the static data:
    a typed error with the figures, not a silent empty run. (pulp_open's l1_size leaves them
    room: the model refuses such a budget; a platform given the whole TCDM does not.)"""
    with pytest.raises(ModelError, match=r"the L1 budget of 60000 bytes exceeds the 48896 bytes of L1 of platform "
                                         r"'pulp_open'"):
        _generate("matadd_v3", tmp_path / "refused", l1=60000)
    whole_tcdm = get_platform("pulp_open", l1_size=64 * 1024)
    gen = _generate("matadd_v3", tmp_path / "gen", platform=whole_tcdm, l1=60000, objective="original")
    target = host_harness.build(gen, sources=[EXAMPLES / "matadd_v3" / "MatAddBasicKernels.c"],
                                include_dirs=[EXAMPLES / "matadd_v3"], backend="gvsoc")
    try:
        a, b, out = _matadd_args(np.random.default_rng(2))
        with pytest.raises(HarnessError, match=r"the cluster did not start: its L1 data is \d+ bytes and the 8 "
                                               r"cores' stacks 16384 more, over the 65536 bytes of pulp-open's TCDM "
                                               r"\(generate with an L1 budget of at most \d+ bytes"):
            target.call("MatADD", In1=a, In2=b, Out=out)
    finally:
        target.close()
