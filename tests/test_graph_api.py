"""Graphs declare (CreateGraph ... CloseGraph) with user kernels and groups, into the graph IR;
constants files are read and converted (float -> fixed point against numpy, saturation, binary
and text files, containers of 1, 2 and 4 bytes, the const dir)."""

from __future__ import annotations

import numpy as np
import pytest

from autotiler import *
from autotiler.cli import parse_generator_options
from autotiler.model.graph import (
    GraphArgDecl,
    GraphOptions,
    NodeArgForm,
    load_const,
    to_fixed,
)

from .graph_helpers import ITEMS, P32, add_group, const, inp, lib_add, local, mat_add, out, write_bin


@pytest.fixture(autouse=True)
def fresh_model():
    with Model() as m:
        SetL1MemorySize(51200)
        lib_add()
        yield m


def test_mnist_like_graph_declares_into_the_ir(tmp_path, fresh_model):
    mat_add("Add1")
    mat_add("Add2")
    bias = write_bin(tmp_path / "bias.bin", np.arange(ITEMS))
    CreateGraph("G", CArgs(3, inp(), const("Bias", bias), out()), CArgs(1, local("T")))
    AddNode("Add1", Bindings(3, GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "Bias", 0), GNodeArg(GNA_OUT, "T", 0)))
    AddNode("Add2", Bindings(3, GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    AddCallToNode("Add2", CALL_EPILOG, "Trace", Bindings(1, GArg("Out")))
    CloseGraph()
    assert fresh_model.open_graph is None
    g = fresh_model.graphs["G"]
    assert [a.name for a in g.args] == ["In", "Bias", "Out"] and [a.name for a in g.locals] == ["T"]
    b = g.symbol("Bias")
    assert isinstance(b, GraphArgDecl) and b.scope == ARG_SCOPE_GLOBAL and b.direction == ARG_DIR_CONSTIN
    assert b.home == AT_MEM_L3_HFLASH and b.exec_loc == AT_MEM_UNDEF and not b.user_allocated
    assert b.const.item_size == 4 and b.const.count == ITEMS and not b.const.float_format and b.const.binary
    assert load_const(b.const, ITEMS) == np.arange(ITEMS, dtype="<i4").tobytes()
    assert [n.name for n in g.nodes] == ["Add1", "Add2"]
    assert g.nodes[0].args[2].kind == GNA_OUT and g.nodes[0].writes == ("T",) and g.nodes[1].reads == ("T", "In")
    call = g.node("Add2").calls[0]
    assert call.location == CALL_EPILOG and call.function == "Trace" and call.args[0].form == NodeArgForm.GARG
    assert g.options == GraphOptions() and g.constants == (b,)
    assert CNNGraphName() == "G"


def test_group_node_and_operator_forms(fresh_model):
    add_group("Grp")
    CreateGraph("G", CArgs(inp(), inp("B"), TCArgInfo("int", "Off", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2,
                                                          AT_MEM_UNDEF, 0), out()),
                CArgs(local("T"), local("U")))
    AddNode("Grp", Bindings(GNodeArgImmOper(GNA_IN, "In", 0, "+", 4), GNodeArgCArgOper(GNA_IN, "B", 0, "+", "Off"),
                            GNodeArg(GNA_OUT, "T", 0), GNodeArg(GNA_OUT, "U", 0)))
    mat_add("Fin")
    AddNode("Fin", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "U", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()
    node = fresh_model.graphs["G"].nodes[0]
    assert node.group and node.args[0].oper == "+" and node.args[0].value == 4
    assert node.args[1].form == NodeArgForm.CARG_OPER and node.args[1].carg == "Off"


def test_inout_alias_stacked_tensors_exports_incremental_form(tmp_path, fresh_model):
    mat_add("P1")
    mat_add("P2")
    mat_add("Acc")
    k = write_bin(tmp_path / "k.bin", np.ones(ITEMS))
    CreateGraph("G", 0, 0)
    AddGraphCArg(inp())
    AddGraphCArg(const("K", k))
    AddGraphCArg(TCArgInfoA(P32, "Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0))
    AddGraphLocal(local("Cat"))
    CommitGraphArgsAndLocals()
    AddStackedTensors("Cat", 2, "Lo", "Hi")
    AddGraphArgExportSymbols("K", "K_Addr", "K_Loc")
    AddNode("P1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "K", 0), GNodeArg(GNA_OUT, "Lo", 0)))
    AddNode("P2", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "K", 0), GNodeArg(GNA_OUT, "Hi", 0)))
    AddNode("Acc", Bindings(GNodeArg(GNA_IN, "Cat", 0), GNodeArg(GNA_IN, "In", 0),
                            GNodeArg(GNA_INOUT, "Out", "Cat")))
    CloseGraph()
    g = fresh_model.graphs["G"]
    assert g.stacked[0].out == "Cat" and g.stacked[0].inputs == ("Lo", "Hi")
    assert g.exports[0].addr_name == "K_Addr" and g.symbol("Out").user_allocated
    assert g.nodes[2].args[2].alias == "Cat" and g.nodes[2].reads == ("Cat", "In", "Cat")


def test_keyword_arguments_and_graph_options(fresh_model):
    mat_add("Add1")
    AT_SetGraphCtrl(AT_GRAPH_NOINLINE_NODE, AT_OPT_ON)
    CreateGraph(GraphName="G", CArgs=CArgs(TCArgInfo(ArgType=P32, ArgName="In", Scope=ARG_SCOPE_ARG, Dir=ARG_DIR_IN,
                                                     HomeLoc=AT_MEM_L2, ExecLoc=AT_MEM_UNDEF), out()),
                Locals=0)
    AddNode(NodeName="Add1", BindingList=Bindings(GNodeArg(Type=GNA_IN, ArgName="In"), GNodeArg(GNA_IN, "In"),
                                                  GNodeArg(GNA_OUT, "Out", AliasedArgName=0)))
    CloseGraph()
    assert fresh_model.graphs["G"].options.noinline_node is True


def test_memory_devices_accept_every_flash_of_the_guide(fresh_model):
    SetMemoryDeviceInfos(3, AT_MEM_L3_PRI1, 1 << 20, "0", "Pri1.dat", 0, AT_MEM_L3_PRI2, 1 << 20, "0", "Pri2.dat", 0,
                         AT_MEM_L3_MRAMFLASH, 1 << 20, "0", "Mram.dat", 1)
    assert fresh_model.memory_devices[AT_MEM_L3_PRI2] == (1 << 20, "0", "Pri2.dat", False)
    assert fresh_model.memory_devices[AT_MEM_L3_MRAMFLASH][3] is True


# ---------------------------------------------------------------------------------------------
# Constants: reading and conversion


VALUES = [0.5, 1.5, 2.5, -0.5, -1.5, 0.49, -2.51, 1000.0, -1000.0, 3.25, -3.75, 1e9, -1e9, 0.0]


@pytest.mark.parametrize("ctype,size,fract,dtype", [
    ("signed char *", 8, 0, "<i1"), ("signed char *", 1, 3, "<i1"), ("unsigned char *", 8, 2, "<u1"),
    ("short int *", 16, 7, "<i2"), ("unsigned short *", 2, 0, "<u2"), ("int *", 32, 12, "<i4"),
    ("unsigned int *", 4, 1, "<u4")])
def test_float_text_to_fixed_matches_numpy_rint_and_saturates(tmp_path, ctype, size, fract, dtype):
    path = tmp_path / "v.txt"
    path.write_text("  ".join(map(str, VALUES[:7])) + "\n" + ", ".join(map(str, VALUES[7:])) + "\n")
    a = TCArgInfo(ctype, "C", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                  ConstInfo(str(path), 0, 0, size, fract))
    info = np.iinfo(dtype)
    expect = np.clip(np.rint(np.array(VALUES) * 2.0 ** fract), info.min, info.max).astype(dtype)
    assert load_const(a.const, len(VALUES)) == expect.tobytes()
    assert a.const.signed == (dtype[1] == "i")


def test_ties_go_to_even_and_saturate():
    assert to_fixed(np.array([0.5, 1.5, 2.5, -0.5, -2.5]), 0, 1, True).tolist() == [0, 2, 2, 0, -2]
    assert to_fixed(np.array([127.6, -128.6, 300.0]), 0, 1, True).tolist() == [127, -128, 127]
    assert to_fixed(np.array([-1.0, 255.4, 255.6]), 0, 1, False).tolist() == [0, 255, 255]
    assert to_fixed(np.array([0.25]), 2, 2, True).tolist() == [1]


def test_binary_float32_file_converts_to_fixed(tmp_path):
    vals = np.array([0.126, -0.5, 1.99, -2.0], dtype="<f4")
    path = write_bin(tmp_path / "w.bin", vals, "<f4")
    a = const("W", path, ctype="short int *", size=16, fmt=0, fract=8)
    expect = np.clip(np.rint(vals.astype(np.float64) * 256), -32768, 32767).astype("<i2")
    assert load_const(a.const, 4) == expect.tobytes()


@pytest.mark.parametrize("ctype,size,dtype", [("signed char *", 8, "<i1"), ("short int *", 16, "<i2"),
                                              ("unsigned int *", 32, "<u4")])
def test_binary_fixed_file_is_stored_as_is(tmp_path, ctype, size, dtype):
    raw = np.array([1, -1, 7, 0]).astype(dtype)
    a = const("W", write_bin(tmp_path / "w.bin", raw, dtype), ctype=ctype, size=size)
    assert load_const(a.const, 4) == raw.tobytes() and a.const.item_size == np.dtype(dtype).itemsize


def test_text_fixed_values_and_float_symbols(tmp_path):
    (tmp_path / "f.txt").write_text("-128,127 0x10\n")
    a = const("W", str(tmp_path / "f.txt"), ctype="signed char *", size=8, binary=0)
    assert load_const(a.const, 3) == np.array([-128, 127, 16], "<i1").tobytes()
    (tmp_path / "r.txt").write_text("0.1 -2.5 1e3")
    f32 = const("F", str(tmp_path / "r.txt"), ctype="float *", size=32, fmt=0, binary=0)
    assert load_const(f32.const, 3) == np.array([0.1, -2.5, 1e3], "<f4").tobytes() and f32.const.float_c
    f16 = const("H", str(tmp_path / "r.txt"), ctype="f16 *", size=16, fmt=0, binary=0)
    assert load_const(f16.const, 3) == np.array([0.1, -2.5, 1e3], "<f2").tobytes()


def test_relative_files_are_read_under_the_const_dir_and_c_wins(tmp_path, fresh_model):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "w.txt").write_text("1 2")
    (tmp_path / "b" / "w.txt").write_text("3 4 5")
    SetConstDir(str(tmp_path / "a"))
    assert ConstInfo("w.txt", 1, 0, 8, 0).count == 2
    parse_generator_options(["-c", str(tmp_path / "b")], fresh_model)
    SetConstDir(str(tmp_path / "a"))  # -c DIR overrides SetConstDir
    c = ConstInfo("w.txt", 1, 0, 8, 0)
    assert c.count == 3 and c.path == str(tmp_path / "b" / "w.txt")
