"""Every error of the graph API (CreateGraph ... CloseGraph, TCArgInfo, ConstInfo, node
bindings): typed, naming this file and the line of the offending call, the graph, the node and
the symbol, what is wrong and the fix."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from autotiler import *
from autotiler.graph.lower import plan_graph, symbol_sizes

from .error_lines import rendered, with_body_line
from .graph_helpers import ITEMS, P32, add_group, const, inp, lib_add, local, mat_add, out, write_bin

THIS = "test_graph_errors.py"


@pytest.fixture(autouse=True)
def fresh_model():
    with Model() as m:
        SetL1MemorySize(51200)
        lib_add()
        mat_add("Add1")
        mat_add("Add2")
        yield m


def fails(*fragments, kernel=None, arg=None, at=None):
    """``pytest.raises(ModelError)`` rendered ``THIS:LINE: kernel 'K', argument 'A': ...`` with
    the fragments in order; LINE is ``at``, else the first line of the ``with`` body."""
    return rendered(ModelError, THIS, with_body_line() if at is None else at, fragments, kernel, arg, exact=True)


def line() -> int:
    return sys._getframe(1).f_lineno


def graph(*extra_args, locals_=()):
    CreateGraph("G", CArgs(inp(), *extra_args, out()), CArgs(local("T"), *locals_))


def n1():
    AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


# ---------------------------------------------------------------------------------------------
# Graph structure


def test_create_graph_while_open_close_without_add_node_outside():
    graph()
    with fails("CreateGraph('H'): graph 'G' (created at", "is still open", "call CloseGraph() first"):
        CreateGraph("H", 0, 0)
    n1()
    AddNode("Add2", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()
    with fails("CloseGraph() without CreateGraph()", "open the graph with CreateGraph"):
        CloseGraph()
    with fails("AddNode('Add1') outside a graph", "call CreateGraph("):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0)))


def test_graph_names_and_empty_graph():
    with fails("graph name '1G' is not a valid C identifier"):
        CreateGraph("1G", 0, 0)
    with fails("a user kernel or group named 'Add1' is already declared", kernel="Add1"):
        CreateGraph("Add1", 0, 0)
    CreateGraph("G", 0, 0)
    with fails("graph 'G' has no node", "add its nodes with AddNode"):
        CloseGraph()


def test_unknown_node_kernel_and_duplicate_node():
    graph()
    with fails("graph 'G': node 'Add3' is neither a user kernel nor a kernel group", "did you mean 'Add",
               kernel="Add3"):
        AddNode("Add3", Bindings(GNodeArg(GNA_IN, "In", 0)))
    n1()
    with fails("graph 'G': node 'Add1' is already in the graph", "declare another user kernel", kernel="Add1"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_group_without_template_is_no_node():
    OpenKernelGroup("Grp")
    mat_add("GA")
    CloseKernelGroup()
    graph()
    with fails("node 'Grp' is neither a user kernel nor a kernel group", "UserKernelGroup('Grp'", kernel="Grp"):
        AddNode("Grp", Bindings(GNodeArg(GNA_IN, "In", 0)))


def test_binding_count_differs_from_kernel_and_group():
    add_group("Grp")
    graph()
    with fails("graph 'G': node 'Add1' has 2 binding(s) but user kernel 'Add1' takes 3 C argument(s)",
               "bind, in order: In1, In2, Out", kernel="Add1"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))
    with fails("node 'Grp' has 1 binding(s) but kernel group 'Grp' takes 4", "A, B, T, O", kernel="Grp"):
        AddNode("Grp", Bindings(GNodeArg(GNA_IN, "In", 0)))


def test_unknown_symbol_and_not_a_node_binding():
    graph()
    with fails("graph 'G': node 'Add1' binds unknown symbol 'Inn'", "did you mean 'In'", kernel="Add1", arg="Inn"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "Inn", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))
    with fails("graph 'G': node 'Add1' is bound with", "graph nodes bind GNodeArg", kernel="Add1"):
        AddNode("Add1", Bindings(C_Arg("In"), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_symbol_written_by_two_nodes():
    graph()
    n1()
    with fails("graph 'G': node 'Add2' writes 'T', already written by node 'Add1'", "one producer", kernel="Add2",
               arg="T"):
        AddNode("Add2", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_local_read_before_written_names_the_reading_node():
    graph()
    reader = line() + 1
    AddNode("Add2", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    n1()
    with fails("graph 'G': node 'Add2' reads local 'T' before node 'Add1' writes it",
               "AddNode order is the execution order: add node 'Add1' before node 'Add2'", kernel="Add2", arg="T",
               at=reader):
        CloseGraph()


def test_local_read_but_never_written():
    graph(locals_=(local("U"),))
    reader = line() + 1
    AddNode("Add2", Bindings(GNodeArg(GNA_IN, "U", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    with fails("node 'Add2' reads local 'U', which no node writes", "bind 'U' as GNA_OUT", kernel="Add2", arg="U",
               at=reader):
        CloseGraph()


def test_cycle():
    mat_add("Add3")
    graph(locals_=(local("U"),))
    AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "U", 0), GNodeArg(GNA_OUT, "T", 0)))
    last = line() + 1
    AddNode("Add2", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "U", 0)))
    AddNode("Add3", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    with fails("graph 'G': nodes form a cycle: 'Add1' writes 'T', read by 'Add2'; 'Add2' writes 'U', read by 'Add1'",
               "break the cycle", kernel="Add2", at=last):
        CloseGraph()


def test_output_never_written():
    graph()
    n1()
    with fails("graph 'G': output 'Out' (declared at", "is never written", "bind 'Out' as GNA_OUT", arg="Out"):
        CloseGraph()


def test_graph_input_bound_as_output():
    graph()
    with fails("graph 'G': node 'Add1' binds graph input 'In' (ARG_DIR_IN) as GNA_OUT", "bind it as GNA_IN",
               kernel="Add1", arg="In"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "In", 0)))


def test_direction_against_the_kernel_argument():
    graph()
    with fails("binds 'T' as GNA_IN to 'Out', which kernel 'Add1' writes (kernel argument 'Out')",
               "bind it as GNA_OUT", kernel="Add1", arg="T"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "T", 0)))
    with fails("binds 'T' as GNA_OUT to 'In1', which kernel 'Add1' only reads", kernel="Add1", arg="T"):
        AddNode("Add1", Bindings(GNodeArg(GNA_OUT, "T", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_symbol_type_disagrees_with_the_kernel_c_argument():
    CreateGraph("G", CArgs(inp(), inp("S", "short int *"), TCArgInfo("int", "N", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2,
                                                                      AT_MEM_UNDEF, 0), out()), CArgs(local("T")))
    with fails("node 'Add1' binds 'S' ('short int *'), which has 'short int' items but C argument 'In2' is "
               "'Word32 * __restrict__'", "declare 'S' with the type of the kernel's C argument", kernel="Add1",
               arg="S"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "S", 0), GNodeArg(GNA_OUT, "T", 0)))
    with fails("binds 'N' ('int'), which is not a pointer but C argument 'In1'", kernel="Add1", arg="N"):
        AddNode("Add1", Bindings(GNodeCArg("N"), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_operator_forms_and_c_arguments():
    graph()
    with fails("GNodeArgImmOper('In'): unknown operator '^'", "use one of", arg="In"):
        GNodeArgImmOper(GNA_IN, "In", 0, "^", 4)
    with fails("GNodeArgCArgOper names 'Off', which is not a graph C argument", kernel="Add1", arg="In"):
        AddNode("Add1", Bindings(GNodeArgCArgOper(GNA_IN, "In", 0, "+", "Off"), GNodeArg(GNA_IN, "In", 0),
                                 GNodeArg(GNA_OUT, "T", 0)))
    with fails("GNodeCArg('T') names a ARG_SCOPE_LOCAL symbol, not a graph C argument", kernel="Add1", arg="T"):
        AddNode("Add1", Bindings(GNodeCArg("T"), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))
    with fails("GNodeArg('T'): an aliased symbol ('In') needs GNA_INOUT, not GNA_OUT", arg="T"):
        GNodeArg(GNA_OUT, "T", "In")
    with fails("a graph node argument needs a direction, got GNA_UNDEF"):
        GNodeArg(GNA_UNDEF, "T", 0)
    with fails("GArg('In') binds arguments of AddCallToNode", kernel="Add1", arg="In"):
        AddNode("Add1", Bindings(GArg("In"), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_operators_on_tensor_symbols(tmp_path):
    graph(const("W", write_bin(tmp_path / "w.bin", np.zeros(ITEMS + 8))))
    with fails("GNodeArgImmOper('In', '*', 2) applies '*' to a pointer (Word32 * __restrict__)",
               "use '+' (or '-')", kernel="Add1", arg="In"):
        AddNode("Add1", Bindings(GNodeArgImmOper(GNA_IN, "In", 0, "*", 2), GNodeArg(GNA_IN, "In", 0),
                                 GNodeArg(GNA_OUT, "T", 0)))
    with fails("GNodeArgImmOper('In', '-', 4) points 4 item(s) before the start of 'In'", kernel="Add1", arg="In"):
        AddNode("Add1", Bindings(GNodeArgImmOper(GNA_IN, "In", 0, "-", 4), GNodeArg(GNA_IN, "In", 0),
                                 GNodeArg(GNA_OUT, "T", 0)))
    with fails("GNodeArgImmOper('W', '+', 9) reads bytes 36..163 of constant 'W', which holds 160 bytes",
               "the offset can be at most 8 item(s)", kernel="Add1", arg="W"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArgImmOper(GNA_IN, "W", 0, "+", 9),
                                 GNodeArg(GNA_OUT, "T", 0)))
    AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArgImmOper(GNA_IN, "W", 0, "+", 8),
                             GNodeArg(GNA_OUT, "T", 0)))


def test_a_local_written_at_an_offset_is_sized_for_it(fresh_model):
    graph()
    AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0),
                             GNodeArgImmOper(GNA_OUT, "T", 0, "+", 5)))
    AddNode("Add2", Bindings(GNodeArgImmOper(GNA_IN, "T", 0, "+", 5), GNodeArg(GNA_IN, "In", 0),
                             GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()
    assert symbol_sizes(fresh_model, fresh_model.graphs["G"])["T"] == 4 * (ITEMS + 5)


# ---------------------------------------------------------------------------------------------
# Symbols (TCArgInfo, CreateGraph lists)


def test_symbol_declarations():
    with fails("TCArgInfo: constant 'W' (ARG_DIR_CONSTIN) has no ConstInfo", "pass ConstInfo(", arg="W"):
        TCArgInfo(P32, "W", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF, 0)
    with fails("graph symbol 'W' (ARG_SCOPE_LOCAL) has type 'int', not a pointer", arg="W"):
        TCArgInfo("int", "W", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)
    with fails("graph symbol 'W' is declared with ARG_DIR_UNDEF", arg="W"):
        TCArgInfo(P32, "W", ARG_SCOPE_LOCAL, ARG_DIR_UNDEF, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)
    with fails("C argument name 'in put' is not a valid C identifier"):
        TCArgInfo(P32, "in put", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)
    with fails("graph 'G': TCArg 'X' has no location info", "declare graph symbols with TCArgInfo", arg="X"):
        CreateGraph("G", CArgs(TCArg(P32, "X")), 0)
    with fails("graph 'G': local 'In' has scope ARG_SCOPE_ARG", "locals (the second list", arg="In"):
        CreateGraph("G", 0, CArgs(TCArgInfo(P32, "In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0)))
    with fails("graph 'G': argument 'T' has scope ARG_SCOPE_LOCAL", "put locals in the second list", arg="T"):
        CreateGraph("G", CArgs(TCArgInfo(P32, "T", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, 0, 0, 0)), 0)
    with fails("graph 'G': symbol 'T' is declared twice", arg="T"):
        CreateGraph("G", 0, CArgs(local("T"), TCArgInfo(P32, "T", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, 0, 0, 0)))
    with fails("graph 'G': symbol 'MatSumPar' is also basic kernel 'MatSumPar' in the generated code",
               arg="MatSumPar"):
        CreateGraph("G", 0, CArgs(TCArgInfo(P32, "MatSumPar", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, 0, 0, 0)))
    with fails("graph symbol 'malloc' is"):
        CreateGraph("G", 0, CArgs(TCArgInfo(P32, "malloc", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, 0, 0, 0)))


def test_const_info_on_a_non_constant(tmp_path):
    path = write_bin(tmp_path / "w.bin", np.zeros(ITEMS))
    with fails("TCArgInfo: 'W' has ConstInfo data but is ARG_DIR_IN", "only constants", arg="W"):
        TCArgInfo(P32, "W", ARG_SCOPE_GLOBAL, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, ConstInfo(path, 1, 1, 32, 0))


# ---------------------------------------------------------------------------------------------
# Constants files


def test_const_info_parameters(tmp_path):
    with fails("ConstInfo Size 12 is not a container size", "bits (8, 16, 32) or bytes (1, 2, 4)"):
        ConstInfo("w.bin", 1, 1, 12, 0)
    with fails("ConstInfo Fract 8 leaves no integer bit in a 8-bit container", "0..7"):
        ConstInfo("w.bin", 1, 1, 8, 8)
    with fails("ConstInfo Format must be 0 or 1, got 2"):
        ConstInfo("w.bin", 2, 1, 8, 0)


def test_data_file_missing(tmp_path):
    with fails(f"ConstInfo: constants file '{tmp_path}/nope.bin' not found", "SetConstDir or -c DIR"):
        ConstInfo(str(tmp_path / "nope.bin"), 1, 1, 16, 0)


def test_data_file_malformed(tmp_path):
    write_bin(tmp_path / "odd.bin", np.zeros(3), "<i1")
    with fails("binary file", "has 3 bytes, not a whole number of 2-byte items"):
        ConstInfo(str(tmp_path / "odd.bin"), 1, 1, 16, 0)
    (tmp_path / "t.txt").write_text("1 2 x3")
    with fails("item 2 of text file", "is 'x3', not a number"):
        ConstInfo(str(tmp_path / "t.txt"), 0, 0, 16, 0)
    (tmp_path / "f.txt").write_text("1 2.5")
    with fails("item 1 of text file", "is '2.5', not an integer", "give Format 0 (float)"):
        ConstInfo(str(tmp_path / "f.txt"), 1, 0, 16, 0)


def test_fixed_text_value_outside_the_container(tmp_path):
    (tmp_path / "r.txt").write_text("1 128")
    with fails("item 1 of", "is 128, outside the 1-byte signed container (-128..127)"):
        TCArgInfo("signed char *", "W", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, 0, 0, ConstInfo(str(tmp_path / "r.txt"), 1, 0, 8, 0))
    (tmp_path / "u.txt").write_text("-1")
    with fails("item 0 of", "is -1, outside the 1-byte unsigned container (0..255)"):
        TCArgInfo("unsigned char *", "W", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, 0, 0, ConstInfo(str(tmp_path / "u.txt"), 1, 0, 8, 0))


def test_data_format_does_not_match_the_declaration(tmp_path):
    path = write_bin(tmp_path / "w.bin", np.zeros(ITEMS), "<i2")
    with fails("ConstInfo", "has 2-byte items (Size 16) but 'W' is 'Word32 * __restrict__' (4-byte items)",
               "give Size 32", arg="W"):
        TCArgInfo(P32, "W", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, 0, ConstInfo(path, 1, 1, 16, 0))
    f32 = write_bin(tmp_path / "f.bin", np.zeros(4), "<f4")
    with fails("holds fixed-point values (Format 1) but 'F' is 'float *', a float type", arg="F"):
        TCArgInfo("float *", "F", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, 0, 0, ConstInfo(f32, 1, 1, 32, 0))


def test_data_size_does_not_match_the_kernel_argument(tmp_path):
    graph(const("W", write_bin(tmp_path / "w.bin", np.zeros(ITEMS + 1))))
    with fails("node 'Add1' binds constant 'W' to 'In2' (kernel argument 'In2' of 'Add1', 128 bytes) but",
               "holds 33 item(s) of 4 byte(s) (132 bytes)", "the file must hold 32 item(s)", kernel="Add1", arg="W"):
        AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W", 0), GNodeArg(GNA_OUT, "T", 0)))


def test_data_size_through_a_group(tmp_path):
    add_group("Grp")
    graph(const("W", write_bin(tmp_path / "w.bin", np.zeros(ITEMS - 1))))
    with fails("node 'Grp' binds constant 'W' to 'B' (kernel argument 'In2' of 'GA', 128 bytes)", kernel="Grp",
               arg="W"):
        AddNode("Grp", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W", 0), GNodeArg(GNA_OUT, "T", 0),
                                GNodeArg(GNA_OUT, "Out", 0)))


# ---------------------------------------------------------------------------------------------
# Calls added to nodes, stacked tensors, exports


def test_add_call_to_node():
    graph()
    with fails("AddCallToNode names node 'Add1', which is not in the graph", kernel="Add1"):
        AddCallToNode("Add1", CALL_PROLOG, "Trace", Bindings(GArg("In")))
    n1()
    with fails("AddCallToNode('Add1', CALL_IN, ...): the call goes before or after the node", kernel="Add1"):
        AddCallToNode("Add1", CALL_IN, "Trace", Bindings(GArg("In")))
    with fails("node 'Add1' binds unknown symbol 'Nope'", kernel="Add1", arg="Nope"):
        AddCallToNode("Add1", CALL_PROLOG, "Trace", Bindings(GArg("Nope")))
    with fails("AddCallToNode('Add1', ..., 'In'): 'In' is graph argument 'In' (declared at", "a parameter of the "
               "runner", kernel="Add1"):
        AddCallToNode("Add1", CALL_PROLOG, "In", Bindings(GArg("In")))
    with fails("AddCallToNode('Add1', ..., 'L2_Memory'): 'L2_Memory' is the L2 memory symbol (SetSymbolNames) in "
               "the generated code, not a function", kernel="Add1"):
        AddCallToNode("Add1", CALL_EPILOG, "L2_Memory", Bindings(GArg("In")))
    AddCallToNode("Add1", CALL_EPILOG, "MatSumPar", Bindings(GArg("In")))   # a function: accepted


def test_stacked_tensor_size_differs_from_its_parts(fresh_model):
    mat_add("Wide", w=8, h=3 * 4)   # reads 3 parts' worth: the parts (2 x 32 items) do not fill it
    graph()
    at = line() + 1
    AddStackedTensors("T", 2, "S0", "S1")
    AddNode("Add1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "S0", 0)))
    AddNode("Add2", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "S1", 0)))
    AddNode("Wide", Bindings(GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_IN, "T", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()
    with fails("stacked tensor 'T' is 384 bytes as its nodes use it, but its parts add up to 256 bytes "
               "(S0 128 + S1 128)", "the parts must tile the whole", arg="T", at=at):
        plan_graph(fresh_model, fresh_model.graphs["G"])


def test_stacked_tensors_and_exports(tmp_path):
    graph(const("W", write_bin(tmp_path / "w.bin", np.zeros(ITEMS))))
    with fails("stacked output 'Cat' is not a graph symbol", arg="Cat"):
        AddStackedTensors("Cat", 2, "A", "B")
    with fails("stacked output 'In' is a graph input (ARG_DIR_IN)", arg="In"):
        AddStackedTensors("In", 2, "A", "B")
    with fails("stacked tensor 'In' is also a graph symbol", "do not declare them with TCArgInfo", arg="In"):
        AddStackedTensors("T", 2, "In", "B")
    with fails("AddStackedTensors('T', 3, ...) announces 3 tensor(s) but 2 follow", arg="T"):
        AddStackedTensors("T", 3, "A", "B")
    with fails("AddGraphArgExportSymbols names 'In', which is ARG_SCOPE_ARG, not ARG_SCOPE_GLOBAL", arg="In"):
        AddGraphArgExportSymbols("In", "In_Addr", "In_Loc")
    with fails("exported symbol 'T' is a graph symbol", arg="W"):
        AddGraphArgExportSymbols("W", "T", "W_Loc")
