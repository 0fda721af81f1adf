"""Fused layers chosen by the importer (issue 26 §2, autotiler/importers/fuse.py): the objective (peak L2 of
the activations under a budget first, then predicted cycles), the modes, --fuse / --no-fuse and their
errors, a network that fits L2 only fused, and the fused graphs bit-exact with tflite-micro.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autotiler.errors import ImportModelError
from autotiler.generators import sq8_fusion as S
from autotiler.graph.lower import plan_graph
from autotiler.importers import fuse as F
from autotiler.importers import lower as L
from autotiler.importers import verify as V
from autotiler.importers.script import import_model, read_model

MODELS = Path(__file__).resolve().parent / "models" / "import"
MBN = MODELS / "mobilenet_v1_025_96.tflite"
KWS = MODELS / "ds_cnn_kws.tflite"


def lowered(path: Path) -> L.Lowered:
    return L.lower(read_model(str(path)))


def test_links_follow_single_reader_chains():
    lw = lowered(MODELS / "resnet8.tflite")
    links = S._links(lw)
    names = [layer.name for layer in lw.layers]
    # the block input is read by the first convolution and by the ADD (or the shortcut): no link from it
    assert any(p and "read by other layers" in p for p in links.values())
    # a convolution followed by the ADD of its output with the block's input may fuse (the residual)
    add = names.index(next(n for n in names if n.startswith("Add")))
    assert links[add - 1] is None


def test_none_fit_and_min_modes():
    lw = lowered(MBN)
    bound = F.peak_l2(lw)
    assert bound == 55296
    merged, _ = F.choose(lw, "pulp_open", 48896, 430080, "none")
    assert merged == frozenset()
    # fit with a budget the layer-by-layer plan meets: nothing fused for memory
    merged, steps = F.choose(lw, "pulp_open", 48896, 430080, "fit", cycles=False)
    assert merged == frozenset() and steps == []
    # fit to half the bound: reached, every memory step lowering the peak or the layers at it
    merged, steps = F.choose(lw, "pulp_open", 48896, 430080, "fit", target=bound // 2, cycles=False)
    assert S._profile(lw, merged)[0] <= bound // 2
    assert any(r == "memory" for _, r, _ in steps)
    fused, fusions = S.apply(lw, merged, steps)
    assert F.peak_l2(fused) <= bound // 2 and len(fused.layers) < len(lw.layers)
    assert all(f.layers and f.reason for f in fusions)
    # min goes lower still
    low, _ = F.choose(lw, "pulp_open", 48896, 430080, "min", cycles=False)
    assert S._profile(lw, low)[0] < bound // 2


def test_cycles_step_keeps_links_predicted_faster():
    lw = lowered(KWS)
    t = S._Tiler(lw, "gap8", 65536)
    merged, steps = F.choose(lw, "gap8", 65536, 400000, "fit")
    for _, reason, detail in steps:
        assert reason == "cycles"
        before, after = (int(v) for v in detail.removeprefix("predicted cycles ").split(" -> "))
        assert after < before
    for g in S._groups(len(lw.layers), merged):
        if len(g) > 1:
            assert t.cycles(g) < sum(t.cycles((i,)) for i in g)


def test_fuse_and_no_fuse_force_and_forbid():
    lw = lowered(KWS)
    names = [layer.name for layer in lw.layers]
    links = S._links(lw)
    first = names[min(i for i, p in links.items() if p is None)]
    merged, steps = F.choose(lw, "gap8", 65536, 400000, "none", force=[first])
    assert merged == {names.index(first)} and steps[0][1] == "forced"
    merged, _ = F.choose(lw, "gap8", 65536, 400000, "fit", forbid=[first])
    assert names.index(first) not in merged


def test_fuse_errors_name_the_layer_and_the_reason():
    lw = lowered(KWS)
    names = [layer.name for layer in lw.layers]
    with pytest.raises(ImportModelError, match=r"--fuse NoSuchLayer: no layer has that name"):
        F.choose(lw, "gap8", 65536, 400000, force=["NoSuchLayer"])
    blocked = next(i for i, p in S._links(lw).items() if p)
    with pytest.raises(ImportModelError, match=rf"--fuse {names[blocked]}: it cannot fuse with the next layer: "):
        F.choose(lw, "gap8", 65536, 400000, force=[names[blocked]])
    with pytest.raises(ImportModelError, match=rf"--fuse {names[-1]}: it cannot fuse with the next layer: "
                                               rf"{names[-1]} is the last layer"):
        F.choose(lw, "gap8", 65536, 400000, force=[names[-1]])
    ok = names[min(i for i, p in S._links(lw).items() if p is None)]
    with pytest.raises(ImportModelError, match=rf"--fuse and --no-fuse both name {ok}"):
        F.choose(lw, "gap8", 65536, 400000, force=[ok], forbid=[ok])
    with pytest.raises(ImportModelError, match=r"--fusion 'fastest' is not a fusion mode"):
        F.choose(lw, "gap8", 65536, 400000, "fastest")


def test_fit_counts_each_nodes_constants_against_the_l2_budget():
    """With fit, a fused node's constants count with the activations alive at it (a fused node holds every
    layer's). DS-CNN's 1x1 layers need 20736 B at once with their weights: 14000 B is out of reach, the
    memory rounds could only leave fewer layers at that peak, so they are undone (they would cost cycles
    for nothing); no cycles merge takes the peak above where it was."""
    lw = lowered(KWS)
    start = S._profile(lw, frozenset(), consts=True)
    assert start[0] > 14000
    merged, steps = F.choose(lw, "gap8", 65536, 14000, "fit")
    assert not any(r == "memory" for _, r, _ in steps)
    assert S._profile(lw, merged, consts=True)[0] <= start[0]


def test_a_network_that_fits_l2_only_fused_is_generated_fused(tmp_path):
    """patch_stage_128 (160 KB of activations layer by layer, small weights) in 90000 B of L2: layer by layer
    the plan spills activations to L3 RAM; with fit the import fuses until they fit, and nothing goes to L3."""
    path = MODELS / "patch_stage_128.tflite"
    plans = {}
    for mode in ("none", "fit"):
        r = import_model(str(path), str(tmp_path / mode), name="ps", platform="gap8", l2=90000, fusion=mode)
        plans[mode] = plan_graph(r.model, r.model.graphs["ps"], r.model.l2_budget)
    assert plans["none"].l3 is not None and plans["none"].l3_traffic > 0
    assert plans["fit"].l3 is None and plans["fit"].l3_traffic == 0
    assert plans["fit"].dyn.peak < plans["none"].dyn.peak


@pytest.mark.skipif(V.tflm_runtime is None, reason="tflite-micro is not installed")
def test_fused_mobilenet_is_bit_exact_with_tflm(tmp_path):
    """Half the layer-by-layer peak: several multi-layer fused kernels, the output equal to TFLM's."""
    out = tmp_path / "mbn"
    r = import_model(str(MBN), str(out), name="mbn", platform="gap8", fusion="fit", fusion_l2=27648)
    assert max(len(f.layers) for f in r.fusions) >= 3
    report = V.verify(out, inputs=2, gen_dir=str(tmp_path / "gen"))
    assert report.ok, report
