"""bench/gvsoc_networks.py without GVSoC: the importer's fusion mode it measures with (--fusion,
"none" by default: one user kernel per layer, the per-node comparison) and its tables saying it."""

from __future__ import annotations

import pytest

from .conftest import bench_script

B = bench_script("gvsoc_networks")


def test_fusion_is_one_of_the_importers_modes():
    with pytest.raises(SystemExit) as err:
        B.main(["--fusion", "every"])
    assert err.value.code == 2
    assert "none" in B.FUSION_MODES and "fit" in B.FUSION_MODES


def test_tables_say_the_fusion_measured():
    data = {"revision": {"head": "a" * 40, "kernels": "b" * 40, "uncommitted_kernel_files": []}, "fusion": "none",
            "networks": []}
    assert 'Imported with fusion "none"' in B.markdown(data)
