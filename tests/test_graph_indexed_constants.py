"""Graph symbols that a kernel reads item by item: the guide's convolution passes its bias as a
plain C argument read with ``C_ArgIndex("Bias", KER_OUT_PLANE, 1)`` (no KerArg). Two such
layers in a graph with their biases ConstInfo constants in flash once planned the biases as 0
bytes (nothing copied at Construct, every output wrong, no error). Each constant is now its file
(checked against what the kernel indexes), and a local no view sizes is refused."""

from __future__ import annotations

import re

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError

from .conftest import EXAMPLES, example_reference, load_module
from .graph_helpers import write_bin

CONV = EXAMPLES / "cnn_conv5x5"
conv = load_module(CONV / "model.py", "model_conv5x5_graph_bias")
ref = example_reference("cnn_conv5x5")
S16 = "short int * __restrict__"
RNG = np.random.default_rng(22)
F1 = RNG.integers(-128, 128, size=(4, 3, 5, 5), dtype=np.int16)
B1 = np.array([32000, -32000, 1500, -700], dtype=np.int16)    # clipping both ways
F2 = RNG.integers(-128, 128, size=(2, 4, 5, 5), dtype=np.int16)
B2 = np.array([-1234, 2345], dtype=np.int16)


def constant(tmp_path, name, values):
    return TCArgInfo(S16, name, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                     ConstInfo(write_bin(tmp_path / f"{name}.bin", values.ravel(), "<i2"), 1, 1, 16, 0))


def declare_two_layers(tmp_path, l2: int, b1=B1) -> None:
    """In (3x36x40) -> C1 (3 -> 4 planes) -> T -> C2 (4 -> 2 planes) -> Out, the guide's
    GenerateCnnConv5x5 twice; filters and biases constants in flash, Norm a graph argument."""
    conv.ConfigureTiler(4096)
    SetMemorySizes(4096, l2, 1 << 20)
    conv.LoadCnnConv5x5Library()
    conv.GenerateCnnConv5x5("C1", 3, 4, 40, 36)
    conv.GenerateCnnConv5x5("C2", 4, 2, 36, 32)
    CreateGraph("G", CArgs(TCArgInfo(S16, "In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
                           TCArgInfo("unsigned int", "Norm", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_UNDEF, AT_MEM_UNDEF, 0),
                           constant(tmp_path, "F1", F1), constant(tmp_path, "B1", b1),
                           constant(tmp_path, "F2", F2), constant(tmp_path, "B2", B2),
                           TCArgInfo(S16, "Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)),
                CArgs(TCArgInfo(S16, "T", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)))
    AddNode("C1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "F1", 0), GNodeArg(GNA_OUT, "T", 0),
                           GNodeCArg("Norm"), GNodeArg(GNA_IN, "B1", 0)))
    AddNode("C2", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "F2", 0), GNodeArg(GNA_OUT, "Out", 0),
                           GNodeCArg("Norm"), GNodeArg(GNA_IN, "B2", 0)))
    CloseGraph()


def expected(x: np.ndarray) -> np.ndarray:
    t = ref.expected({"In": x, "Filter": F1, "Out": None, "Norm": 8, "Bias": B1})["Out"]
    return ref.expected({"In": t, "Filter": F2, "Out": None, "Norm": 8, "Bias": B2})["Out"]


# generous (everything promoted to static L2), tight (constants fetched at each run), spilling
# (the activation T in L3 RAM)
@pytest.mark.parametrize("l2, area_t", [(200_000, "dynamic L2"), (10_000, "dynamic L2"), (4_000, "L3 RAM")])
def test_two_conv_layers_with_indexed_bias_constants_are_bit_exact(tmp_path, l2, area_t):
    with Model() as m:
        declare_two_layers(tmp_path, l2)
        files = generate(m)
    text = files["Conv5x5Kernels.c"]
    assert re.search(r"\*   B1 +8 B ", text) and re.search(r"\*   B2 +4 B ", text), text[-2500:]
    assert re.search(rf"\*   T +9216 B  {area_t}", text)
    assert re.search(r"\*   Norm +scalar  argument, nodes 0\.\.1", text)  # a value, not 0 bytes of memory
    write_files(files, str(tmp_path / "gen"))
    prog = host_harness.build(tmp_path / "gen", sources=[CONV / s for s in ref.SOURCES], include_dirs=[CONV])
    x = RNG.integers(-1024, 1024, size=(3, 36, 40), dtype=np.int16)
    g = prog.graph("G")
    g.construct()
    try:
        for _ in range(2):
            got = np.full((2, 28, 32), ref.SENTINEL, dtype=np.int16)
            g.run(In=x, Norm=8, Out=got)
            np.testing.assert_array_equal(got, expected(x))
    finally:
        g.destruct()


def test_a_bias_file_shorter_than_the_indexed_planes_is_refused(tmp_path):
    with Model(), pytest.raises(ModelError) as e:
        declare_two_layers(tmp_path, 200_000, b1=B1[:3])
    assert re.search(r"test_graph_indexed_constants.py:\d+: kernel 'C1', argument 'B1': graph 'G': node 'C1' binds "
                     r"constant 'B1' to 'Bias', which kernel 'C1' reads as C_ArgIndex\('Bias', KER_OUT_PLANE, 1\) up "
                     r"to byte 7, but '.*B1.bin' holds 3 item\(s\) of 2 byte\(s\) \(6 bytes\) \(the file must hold "
                     r"at least 4 item\(s\)", str(e.value)), str(e.value)


def test_an_empty_constant_file_is_refused(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    with Model(), pytest.raises(ModelError, match=r"test_graph_indexed_constants.py:\d+: ConstInfo: '.*empty.bin' "
                                r"holds no item: a constant of 0 bytes \(write the tensor's values"):
        ConstInfo(str(path), 1, 1, 16, 0)


def test_a_local_no_view_sizes_is_refused(tmp_path):
    """A local passed to a C argument that the kernel hands to a basic kernel as a plain pointer:
    nothing tells how many bytes it needs."""
    with Model() as m:
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        SetMemorySizes(51200, 65536)
        p32 = "Word32 * __restrict__"
        LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg(p32, "In1"), TCArg(p32, "In2"), TCArg(p32, "Out"),
                                                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
                  "MatrixAdd_Arg_T")
        UserKernel("K", KernelDimensions(1, 8, 4, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(3, TCArg(p32, "In1"), TCArg(p32, "Lut"), TCArg(p32, "Out")),
                   Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                       5, K_Arg("In1", KER_ARG_TILE), C_Arg("Lut"), K_Arg("Out", KER_ARG_TILE),
                       K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                   KerArgs(2, KerArg("In1", OBJ_IN_DB, 8, 4, 4, 0, 0, 0, "In1", 0),
                           KerArg("Out", OBJ_OUT_DB, 8, 4, 4, 0, 0, 0, "Out", 0)))
        CreateGraph("G", CArgs(TCArgInfo(p32, "In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
                               TCArgInfo(p32, "Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)),
                    CArgs(TCArgInfo(p32, "L", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)))
        AddNode("K", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "L", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        with pytest.raises(ModelError) as e:
            generate(m)
    assert re.search(r"test_graph_indexed_constants.py:\d+: kernel 'K', argument 'L': graph 'G': local 'L' has no "
                     r"known size: node 'K' passes it to 'Lut', which no kernel argument of 'K' describes and no call "
                     r"indexes \(C_ArgIndex\) \(bind 'Lut' to a KerArg", str(e.value)), str(e.value)
