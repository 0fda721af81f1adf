"""examples/mnist: the AutoTiler guide's MNIST graph (its first listing, translated line by line)
with trained weights, generated in-process, its memory plan checked against the figures the guide
prints (static L2 124692 B, dynamic L2 11264 B, the constants' flash offsets of its constructor),
then run on the simulated chip on held-out digits: every output bit-exact with the numpy
fixed-point reference, the accuracy of the generated C that of the float model."""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.api import kernels as api_kernels
from autotiler.codegen import generate, write_files
from autotiler.errors import TilingError
from autotiler.graph.lower import plan_graph

from .conftest import EXAMPLES, load_module

HERE = EXAMPLES / "mnist"
MODEL = load_module(HERE / "model.py", "model_mnist_tests")
REF = load_module(HERE / "reference.py", "reference_mnist_tests")
DATA = load_module(HERE / "data.py", "data_mnist_tests")
BUDGETS = (48000, 300 * 1024, 8 * 1024 * 1024, 20 * 1024 * 1024)
# The guide's MnistCNN_Construct ("Warm Constructor" section): each constant's flash offset, which
# is also its static L2 offset
GUIDE_OFFSETS = {"Step2Weights": 0, "Step3Weights": 102400, "Step1Weights": 122880, "Step2Biases": 124480,
                 "Step1Biases": 124608, "Step3Biases": 124672}
FAST = ["-fno-sanitize=thread", "-O2"]   # the simulator's access checks off (the checked build runs too)


@pytest.fixture(scope="module")
def mnist(tmp_path_factory):
    gen = tmp_path_factory.mktemp("mnist")
    with Model() as m:
        SetConstDir(str(HERE))
        MODEL.MnistModel(*BUDGETS)
        plan = plan_graph(m, m.graphs[MODEL.GRAPH], BUDGETS[1])
        files = generate(m)
        kernels = dict(m.kernels)
    write_files(files, str(gen))
    return gen, plan, files, kernels


def test_the_plan_is_the_guides(mnist):
    _, plan, files, _ = mnist
    assert plan.static_bytes == 124692 and plan.dyn.peak == 11264 == plan.dyn.lower_bound
    assert {s.name: s.offset for s in plan.symbols if s.area == "static"} == GUIDE_OFFSETS
    assert {s.name: s.flash_offset for s in plan.symbols if s.area == "static"} == GUIDE_OFFSETS
    c = files["MnistKernels.c"]
    # constants homed in AT_MEM_L3_HFLASH, the only flash declared is AT_MEM_L3_DEFAULTFLASH: read from it
    assert 'AT_DEFAULTFLASH_FS_OPEN(&DefaultFlash, &DefaultFlashConf, "Mnist_L3_Flash_Const.dat", &Error);' in c
    assert "/* Moving Step2Weights, size 102400 from DefaultFlash at 0 to (size 102400) L2 at 0..102399 */" in c
    assert files["Mnist_L3_Flash_Const.dat"] == plan.flash.data and len(plan.flash.data) == 124692


def test_node_kernels_take_the_graphs_homes(mnist):
    """The listing passes In/Filter/Bias/Out_InL3 = 1: as graph nodes, the kernels' arguments live
    where the graph plans them (here all in L2)."""
    _, _, files, kernels = mnist
    assert not any(a.in_l3 for k in kernels.values() for a in k.kerargs)
    assert "HYPERRAM" not in files["MnistKernels.c"]


def test_held_out_digits_bit_exact_and_accurate(mnist):
    gen, *_ = mnist
    graph = host_harness.build(gen, sources=REF.SOURCES, include_dirs=REF.INCLUDE_DIRS, cflags=FAST).graph(
        MODEL.GRAPH)
    inputs, labels = DATA.heldout_inputs()
    weights = REF.load_weights()
    graph.construct()
    assert graph.counters["flash_to_l2"] == 124692         # every constant promoted at construction
    got = []
    out = np.empty(REF.OUT_SHAPE, dtype=np.int16)
    for x in inputs[:60]:
        out.fill(REF.SENTINEL)
        graph.run(Input0=x, Output0=out)
        np.testing.assert_array_equal(out, REF.fixed_forward(x, weights))
        got.append(int(np.argmax(out)))
    graph.destruct()
    assert np.mean(np.array(got) == labels[:60]) >= 0.95


def test_one_inference_with_the_simulators_access_checks(mnist):
    gen, *_ = mnist
    graph = host_harness.build(gen, sources=REF.SOURCES, include_dirs=REF.INCLUDE_DIRS).graph(MODEL.GRAPH)
    x = DATA.heldout_inputs()[0][7]
    out = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int16)
    graph.construct()
    counters = graph.run(Input0=x, Output0=out)
    graph.destruct()
    np.testing.assert_array_equal(out, REF.fixed_forward(x, REF.load_weights()))
    assert [n["name"] for n in counters["nodes"]] == ["Conv5x5ReLUMaxPool2x2_0", "Conv5x5ReLUMaxPool2x2_1",
                                                     "LinearLayerReLU_0", "SoftMax_0"]


def test_a_node_kernel_that_cannot_be_tiled_in_l2_is_named(monkeypatch, tmp_path):
    def no_tiling(kernel, options):
        raise TilingError("no tiling fits (forced by the test)", kernel=kernel.name)

    with Model():
        SetConstDir(str(HERE))
        SetMemoryDeviceInfos(2, AT_MEM_L1, 48000, "L1_Memory", 0, 0, AT_MEM_L2, 300 * 1024, "L2_Memory", 0, 0)
        LoadCNNLibrary()
        CNN_SoftMax("SoftMax_0", 0, 2, 2, 15, 15, 1, 1, 10, KOP_SOFTMAX)
        CreateGraph("G", CArgs(2, TCArgInfo("short int *__restrict__", "In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2,
                                            AT_MEM_UNDEF, 0),
                               TCArgInfo("short int *__restrict__", "Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF,
                                         AT_MEM_L2, 0)), CArgs(0))
        monkeypatch.setattr(api_kernels, "solve", no_tiling)
        with pytest.raises(ModelError, match="kernel 'SoftMax_0' homes arguments in L3 .* as a graph node they live "
                                             "where the graph plans them, but with them in L2 the kernel cannot be "
                                             "tiled: no tiling fits"):
            AddNode("SoftMax_0", Bindings(2, GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
