"""Stacked tensors of byte items whose parts are not multiples of 4 bytes: two int8 linear layers
of 6 outputs concatenated in place (AddStackedTensors) and read whole by a softmax. The parts lie
end to end (the second at byte 6), as a concatenation must; bit-exact with numpy."""

from __future__ import annotations

import numpy as np

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import cnn_reference as R
from autotiler.generators.cnn_dense_reference import linear_relu
from autotiler.graph.lower import plan_graph

S8 = "signed char * __restrict__"


def const(name):
    return TCArgInfo(S8, name, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                     ConstInfo(f"{name}.bin", 1, 1, 8, 0))


def test_byte_parts_of_a_stacked_tensor_lie_end_to_end(tmp_path):
    rng = np.random.default_rng(5)
    w = {f"W{k}": rng.integers(-60, 60, size=(6, 8), dtype=np.int8) for k in (0, 1)}
    w.update({f"B{k}": rng.integers(-20, 20, size=6, dtype=np.int8) for k in (0, 1)})
    for n, v in w.items():
        v.tofile(tmp_path / f"{n}.bin")
    with Model() as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetMemorySizes(16384, 65536, 1 << 20)
        SetConstDir(str(tmp_path))
        LoadCNNLibrary()
        for k in (0, 1):
            CNN_LinearReLU(f"Lin{k}", 0, 1, 1, 1, 1, 4, 7, 4, 4, 0, 0, 0, 0, 8, 6, KOP_LINEAR, KOP_NONE)
        CNN_SoftMax("Soft", 0, 1, 2, 4, 15, 0, 0, 12, KOP_SOFTMAX)
        CreateGraph("G", CArgs(6, TCArgInfo(S8, "In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
                               const("W0"), const("B0"), const("W1"), const("B1"),
                               TCArgInfo("short int * __restrict__", "Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF,
                                         AT_MEM_L2, 0)),
                    CArgs(1, TCArgInfo(S8, "L", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)))
        AddStackedTensors("L", 2, "L0", "L1")
        for k in (0, 1):
            AddNode(f"Lin{k}", Bindings(4, GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, f"W{k}", 0),
                                        GNodeArg(GNA_IN, f"B{k}", 0), GNodeArg(GNA_OUT, f"L{k}", 0)))
        AddNode("Soft", Bindings(2, GNodeArg(GNA_IN, "L", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        plan = plan_graph(m, m.graphs["G"])
        files = generate(m)
    assert plan.symbol("L1").offset == plan.symbol("L0").offset + 6
    write_files(files, str(tmp_path / "gen"))
    g = host_harness.build(tmp_path / "gen", sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR]).graph("G")
    x = rng.integers(-64, 64, size=8, dtype=np.int8)
    got = np.full(12, -7, dtype=np.int16)
    g.construct()
    g.run(In=x, Out=got)
    g.destruct()
    logits = np.concatenate([linear_relu(x, w[f"W{k}"], w[f"B{k}"], 4, 7, 4, 4, 1, KOP_NONE) for k in (0, 1)])
    np.testing.assert_array_equal(got, R.softmax(logits, 4))
