"""Fused layers in a hand-written graph (issue 26 §2): a model script calls CNN_FuseGraph_SQ8() after its
AddNode calls and the planner fuses its SQ8 TFLM layers (autotiler/generators/sq8_fusion.py), as the
importer does; the fused graph is bit-exact with tflite-micro; its errors name the script line.

The graph is the model script ``autotiler import --fusion none`` writes: the original's graph API
(CreateGraph, TCArgInfo/ConstInfo, one generator call and one AddNode per layer, CloseGraph), as a user
would write it by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autotiler import *
from autotiler.errors import ModelError
from autotiler.importers import verify as V
from autotiler.importers.script import import_model

MODELS = Path(__file__).resolve().parent / "models" / "import"
KWS = MODELS / "ds_cnn_kws.tflite"


def script_with(tmp_path: Path, call: str) -> Path:
    out = tmp_path / "kws"
    import_model(str(KWS), str(out), name="kws", platform="gap8", fusion="none", check=False)
    script = out / "kws.py"
    text = script.read_text(encoding="utf-8")
    assert text.count("    CloseGraph()") == 1
    script.write_text(text.replace("    CloseGraph()", f"    {call}\n    CloseGraph()"), encoding="utf-8")
    return out


@pytest.mark.skipif(V.tflm_runtime is None, reason="tflite-micro is not installed")
def test_a_hand_written_graph_fused_by_the_planner_is_bit_exact(tmp_path):
    out = script_with(tmp_path, 'CNN_FuseGraph_SQ8(Mode="min")')
    gen = tmp_path / "gen"
    report = V.verify(out, inputs=2, gen_dir=str(gen))
    assert report.ok, report
    manifest = json.loads(next(gen.glob("*Kernels.json")).read_text())
    graph = manifest["graphs"][0]
    assert graph["fusions"], "the planner fused nothing"
    fused = {f["name"] for f in graph["fusions"]}
    assert fused <= set(graph["plan"]["nodes"])
    layers = [n for f in graph["fusions"] for n in f["layers"]]
    assert not set(layers) & set(graph["plan"]["nodes"]), "a fused layer is still a node"
    # the fused layers' own kernels are gone from the C
    text = next(gen.glob("*Kernels.c")).read_text()
    for name in layers:
        assert not re.search(rf"\bvoid {name}\(", text), name
    assert graph["plan"]["dynamic"]["bytes"] < 16000            # the layer-by-layer peak


def test_no_fusion_keeps_the_graph(tmp_path):
    out = script_with(tmp_path, 'CNN_FuseGraph_SQ8(Mode="none")')
    gen = tmp_path / "gen"
    V.generate(V.read_import_dir(out), str(gen))
    graph = json.loads(next(gen.glob("*Kernels.json")).read_text())["graphs"][0]
    assert graph["fusions"] == [] and len(graph["plan"]["nodes"]) == 12


@pytest.mark.parametrize("call, message", [
    ('CNN_FuseGraph_SQ8(Fuse=["NoSuchNode"])', r"CNN_FuseGraph_SQ8: Fuse NoSuchNode: no layer has that name"),
    ('CNN_FuseGraph_SQ8(Fuse="Conv2D_0")', r"CNN_FuseGraph_SQ8: Fuse must be a list of node names, got 'Conv2D_0'"),
    ('CNN_FuseGraph_SQ8(Mode="fast")', r"CNN_FuseGraph_SQ8: Mode 'fast' is not a fusion mode"),
    ('CNN_FuseGraph_SQ8(Fuse=["DepthwiseConv2D_1"], NoFuse=["DepthwiseConv2D_1"])',
     r"CNN_FuseGraph_SQ8: Fuse and NoFuse both name DepthwiseConv2D_1"),
    ('CNN_FuseGraph_SQ8(Fuse=["Softmax_11"])', r"CNN_FuseGraph_SQ8: Fuse Softmax_11: it cannot fuse with the next "
     r"layer: Softmax_11 is the last layer"),
])
def test_errors_name_the_script_line(tmp_path, call, message):
    out = script_with(tmp_path, call)
    with pytest.raises(ModelError, match=message) as err:
        V.generate(V.read_import_dir(out), str(tmp_path / "gen"))
    assert err.value.where and err.value.where.startswith(str(out / "kws.py") + ":")


def test_outside_a_graph_is_refused():
    with Model("gap8"):
        with pytest.raises(ModelError, match=r"CNN_FuseGraph_SQ8: no graph is open") as err:
            CNN_FuseGraph_SQ8()
    assert "test_graph_fuse.py:" in err.value.where
