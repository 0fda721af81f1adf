"""Every model-declaration and tiling error: typed, names file:line, kernel, argument, and a fix."""

import os
import re
import subprocess
import sys
import warnings

import pytest

from autotiler import *
from autotiler.codegen import generate
from autotiler.errors import OptionsError
from autotiler.model.session import current_model

from .conftest import ROOT

THIS = "test_errors.py"
P32 = "Word32 * __restrict__"


def lib_add():
    LibKernel("MatSumPar", CALL_PARALLEL,
              CArgs(5, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"),
                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")), "MatrixAdd_Arg_T")


def add_kernel(name="MatAdd", w=200, h=300, kerargs=None, calls=None, cargs=None, order=None):
    order = order or KernelIterationOrder(KER_DIM2, KER_TILE)
    cargs = cargs or CArgs(3, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"))
    calls = calls or Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
        5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
        K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))
    kerargs = kerargs or KerArgs(3, KerArg("In1", OBJ_IN_DB, w, h, 4, 0, 0, 0, "In1", 0),
                                 KerArg("In2", OBJ_IN_DB, w, h, 4, 0, 0, 0, "In2", 0),
                                 KerArg("Out", OBJ_OUT_DB, w, h, 4, 0, 0, 0, "Out", 0))
    return UserKernel(name, KernelDimensions(1, w, h, 1), order, TILE_HOR, cargs, calls, kerargs)


@pytest.fixture(autouse=True)
def fresh_model():
    with Model() as m:
        SetL1MemorySize(51200)
        lib_add()
        yield m


def raises(exc, *fragments):
    pattern = ".*".join(re.escape(f) for f in fragments)
    return pytest.raises(exc, match=pattern)


def test_valid_kernel_declares():
    assert add_kernel().ntiles == 34


def test_unknown_basic_kernel_names_line_kernel_and_suggests():
    with raises(ModelError, THIS, "kernel 'MatAdd'", "unknown basic kernel 'MatSumPal'", "did you mean 'MatSumPar'"):
        add_kernel(calls=Calls(1, Call("MatSumPal", LOC_INNER_LOOP, Bindings(0))))


def test_binding_count_mismatch():
    with raises(ModelError, THIS, "has 2 binding(s) but the basic kernel takes 5", "bind, in order: In1, In2"):
        add_kernel(calls=Calls(Call("MatSumPar", LOC_INNER_LOOP, Bindings(Imm(0), Imm(1)))))


def test_count_prefix_must_match():
    with raises(ModelError, THIS, "CArgs(4, ...) announces 4 item(s) but 3 follow"):
        CArgs(4, TCArg(P32, "a"), TCArg(P32, "b"), TCArg(P32, "c"))
    with raises(ModelError, "Bindings(1, ...) announces 1"):
        Bindings(1, Imm(1), Imm(2))
    with raises(ModelError, "KerArgs(2, ...)"):
        KerArgs(2, KerArg("A", OBJ_IN, 1, 1, 1, 0, 0, 0, "A", 0))
    with raises(ModelError, "Calls(3, ...)"):
        Calls(3)


def test_karg_names_unknown_kernel_argument():
    calls = Calls(Call("MatSumPar", LOC_INNER_LOOP, Bindings(
        K_Arg("Inx", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
        K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))
    with raises(ModelError, THIS, "K_Arg names unknown kernel argument 'Inx'", "kernel arguments are: In1, In2, Out"):
        add_kernel(calls=calls)


def test_carg_names_unknown_c_argument():
    calls = Calls(Call("MatSumPar", LOC_INNER_LOOP, Bindings(
        C_Arg("Nope"), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
        K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))
    with raises(ModelError, "C_Arg names unknown C argument 'Nope'", "C arguments are: In1, In2, Out"):
        add_kernel(calls=calls)


def test_pointer_selector_bound_to_scalar():
    calls = Calls(Call("MatSumPar", LOC_INNER_LOOP, Bindings(
        K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
        K_Arg("In1", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_H))))
    with raises(ModelError, "KER_ARG_TILE gives a pointer but 'W' is 'unsigned int'"):
        add_kernel(calls=calls)


def test_duplicate_names():
    add_kernel()
    with raises(ModelError, THIS, "'MatAdd' is already declared"):
        add_kernel()
    with raises(ModelError, "duplicate C argument 'In1'"):
        add_kernel("K2", cargs=CArgs(TCArg(P32, "In1"), TCArg(P32, "In1"), TCArg(P32, "Out")))
    dup = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In1", 0), KerArg("In1", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In2", 0),
                  KerArg("Out", OBJ_OUT_DB, 8, 8, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, "duplicate kernel argument 'In1'"):
        add_kernel("K3", kerargs=dup)
    with raises(ModelError, "already declared differently"):
        LibKernel("MatSumPar", CALL_SEQUENTIAL, CArgs(0), "")


@pytest.mark.parametrize("w,h,item,what", [(0, 10, 4, "W"), (10, -1, 4, "H"), (10, 10, 0, "ItemSize")])
def test_zero_or_negative_sizes(w, h, item, what):
    with raises(ModelError, THIS, "argument 'In1'", f"{what} must be a positive integer"):
        KerArg("In1", OBJ_IN_DB, w, h, item, 0, 0, 0, "In1", 0)  # refused where it is declared


def test_kernel_dimension_must_not_be_negative():
    with raises(ModelError, "KernelDimensions InPlanes must be at least 0"):
        UserKernel("Z", KernelDimensions(-1, 1, 1, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(0), Calls(0), KerArgs(0))


@pytest.mark.parametrize("flags,fragment", [
    (O_IN | O_NIN | O_TILED, "sets both O_IN and O_NIN"),
    (O_IN | O_TILED | O_ONETILE, "O_ONETILE is a buffer property"),
    (O_BUFF | O_ONETILE | O_DYNTILE, "cannot be combined"),
    (O_TILED, "neither an input, an output nor a buffer"),
])
def test_contradictory_flags(flags, fragment):
    with raises(ModelError, THIS, "argument 'In1'", fragment):
        KerArg("In1", flags, 8, 8, 4, 0, 0, 0, "In1", 0)


def test_even_and_odd_contradict():
    with raises(ModelError, THIS, "EVEN and ODD contradict"):
        KerArg("In1", OBJ_IN_DB, 8, 8, 4, 0, OBJ_CONSTRAINTS_EVEN | OBJ_CONSTRAINTS_ODD, 0, "In1", 0)


def test_4d_output_rejected():
    with raises(ModelError, THIS, "argument 'Out'", "a 4D argument can only be an input"):
        KerArg("Out", OBJ_OUT_DB_4D, 8, 8, 4, 0, 0, 0, "Out", 0)


def test_c_arg_index_on_non_pointer():
    LibKernel("K1", CALL_SEQUENTIAL, CArgs(TCArg("int", "V")), "")
    with raises(ModelError, "C_ArgIndex needs a pointer but 'N' is 'int'"):
        UserKernel("Z", KernelDimensions(1, 8, 8, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(TCArg(P32, "In"), TCArg("int", "N")),
                   Calls(Call("K1", LOC_INNER_LOOP, Bindings(C_ArgIndex("N", KER_TILE, 1)))),
                   KerArgs(KerArg("In", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In", 0)))


def test_kernel_argument_without_c_argument_must_be_buffer():
    kerargs = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, 0, 0),
                      KerArg("In2", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 8, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, "argument 'In1'", "has no C argument but is an input or output",
                "declare a pure buffer (O_BUFF)"):
        add_kernel(kerargs=kerargs)


def test_kernel_argument_bound_to_unknown_or_scalar_c_argument():
    kerargs = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "Zap", 0),
                      KerArg("In2", OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 8, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, "bound to C argument 'Zap', which the user kernel does not declare"):
        add_kernel(kerargs=kerargs)


def test_iteration_order_1_is_a_loop_order_like_any_other():
    t = add_kernel(order=KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_IN_PLANE, KER_TILE))
    assert [lp.space for lp in t.loops] == [KER_ITER_D1, KER_ITER_D0, KER_ITER_TILE0]


def test_iteration_order_dimension_must_match_the_iterators():
    with raises(ModelError, THIS, "KernelIterationOrder(KER_DIM3, KER_TILE): 3 does not match 1 iterator(s)",
                "KER_DIM2"):
        add_kernel(order=KernelIterationOrder(KER_DIM3, KER_TILE))


def test_parallel_kernel_needs_struct_type():
    with raises(ModelError, "kernel 'P'", "needs the name of its argument struct type"):
        LibKernel("P", CALL_PARALLEL, CArgs(TCArg("int", "A")), "")


def test_bad_cost_expression():
    with raises(ModelError, "uses 'Out', which is not a scalar argument"):
        LibKernel("C", CALL_SEQUENTIAL, CArgs(TCArg(P32, "Out"), TCArg("int", "N")), "", Cost="Out*2")


def test_group_errors():
    OpenKernelGroup("G")
    add_kernel("GK")
    with raises(ModelError, "still open"):
        OpenKernelGroup("G2")
    CloseKernelGroup()
    with raises(ModelError, "kernel 'G'", "names 'Nope', which is not a user kernel of this group"):
        UserKernelGroup("G", CArgs(TCArg(P32, "A")), Calls(UserKernelCall("Nope", LOC_GROUP, Bindings(C_Arg("A")))))
    with raises(ModelError, "has 1 binding(s) but the user kernel takes 3"):
        UserKernelGroup("G", CArgs(TCArg(P32, "A")), Calls(UserKernelCall("GK", LOC_GROUP, Bindings(C_Arg("A")))))
    with raises(ModelError, "must use LOC_GROUP"):
        UserKernelCall("GK", LOC_INNER_LOOP, Bindings())
    with raises(ModelError, "CloseKernelGroup() without OpenKernelGroup()"):
        CloseKernelGroup()


def test_no_tiling_reports_budget_smallest_footprint_and_dominant_argument():
    SetL1MemorySize(4000)
    with raises(TilingError, THIS, "kernel 'MatAdd'", "L1 budget of 4000 bytes", "needs 4800 bytes",
                "argument 'In1' takes 1600", "raise the L1 budget to at least 4800"):
        add_kernel()


def test_no_tiling_returns_none_and_warns_at_generation_when_error_is_off():
    SetL1MemorySize(4000)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a probe is silent when declared
        assert add_kernel() is None
    assert "needs 4800 bytes" in current_model().unsolved["MatAdd"].message
    with pytest.warns(AutoTilerWarning, match=r"kernel 'MatAdd'.*needs 4800 bytes.*AT_KERNEL_NOSOLUTION_ERROR is off, "
                                              r"so no code is generated for it"):
        generate(current_model())


def test_failed_probe_followed_by_a_tiled_declaration_does_not_warn():
    SetL1MemorySize(4000)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    assert add_kernel() is None
    SetL1MemorySize(4800)
    assert add_kernel() is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        generate(current_model())


def test_constraints_unsatisfiable():
    kerargs = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 10, 4, 0, OBJ_CONSTRAINTS_EVEN, 5, "In1", 0),
                      KerArg("In2", OBJ_IN_DB, 8, 10, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 10, 4, 0, 0, 0, "Out", 0))
    SetL1MemorySize(500)
    with raises(TilingError, "smallest tiling (1 iteration) needs 960 bytes", "without the tile constraints",
                "it would need only 192 bytes", "relax the tile constraints"):
        add_kernel(w=8, h=10, kerargs=kerargs)


def test_even_constraint_on_an_odd_dimension():
    """H = 301 lines under OBJ_CONSTRAINTS_EVEN: the last tile (or the only one) would be odd."""
    kerargs = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 301, 4, 0, OBJ_CONSTRAINTS_EVEN, 0, "In1", 0),
                      KerArg("In2", OBJ_IN_DB, 8, 301, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 301, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, "kernel 'MatAdd', argument 'In1': OBJ_CONSTRAINTS_EVEN on an odd tiled size: 301 lines "
                "along KER_TILE (used 301 + padding 0 - overlap 0), so the last tile (or the only one) would be odd "
                "(give the argument an even tiled size (PadTile one more line), or drop OBJ_CONSTRAINTS_EVEN if the "
                "basic kernel handles an odd tile)"):
        add_kernel(w=8, h=301, kerargs=kerargs)


def test_non_integer_ratio_between_tiled_arguments():
    kerargs = KerArgs(KerArg("In1", OBJ_IN_DB, 8, 10, 4, 0, 0, 0, "In1", 0),
                      KerArg("In2", OBJ_IN_DB, 8, 10, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 3, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, "argument 'In1'", "is not a multiple of 3"):
        add_kernel(kerargs=kerargs)


def test_generated_file_names_and_options():
    with raises(ModelError, "takes 2 or 4 file names"):
        SetGeneratedFilesNames("a.c")
    with raises(ModelError, "must be a plain file name"):
        SetGeneratedFilesNames("dir/a.c", "a.h")
    assert TilerParseOptions(["prog", "--L1", "abc"]) == 1
    with pytest.raises(OptionsError):
        from autotiler.cli import parse_generator_options
        parse_generator_options(["--bogus"], current())


def current():
    from autotiler.model.session import current_model
    return current_model()


# ---------------------------------------------------------------------------------------------
# L3-homed arguments (O_L2DB)


def l3_kerargs(in1=OBJ_IN_DB_L2DB, in2=OBJ_IN_DB_L2DB, out=OBJ_OUT_DB_L2DB, w=200, h=300, in2_carg="In2"):
    return KerArgs(KerArg("In1", in1, w, h, 4, 0, 0, 0, "In1", 0),
                   KerArg("In2", in2, w, h, 4, 0, 0, 0, in2_carg, 0),
                   KerArg("Out", out, w, h, 4, 0, 0, 0, "Out", 0))


def test_l3_home_on_a_pure_l1_buffer():
    with raises(ModelError, THIS, "argument 'Tmp'", "O_L2DB homes an argument in L3", "pure L1 buffer",
                "drop O_L2DB"):
        KerArg("Tmp", OBJ_BUFFER_L2DB, 200, 300, 4, 0, 0, 0, None, 0)


def test_l3_home_needs_a_c_argument():
    kerargs = KerArgs(*l3_kerargs()[:2], KerArg("Out", OBJ_BUFFER_OUT_L2DB, 200, 300, 4, 0, 0, 0, None, 0))
    with raises(ModelError, THIS, "argument 'Out'", "homed in L3 (O_L2DB) but has no C argument",
                "bind it to a pointer C argument"):
        add_kernel(kerargs=kerargs)


def test_one_c_argument_one_memory():
    with raises(ModelError, THIS, "argument 'In2'", "C argument 'In1' is bound to 'In1' (home L3, O_L2DB) and to "
                "'In2' (home L2)", "set O_L2DB on both or on neither"):
        add_kernel(kerargs=l3_kerargs(in2=OBJ_IN_DB, in2_carg="In1"))


def test_l2_budget_too_small_for_l3_staging():
    SetMemorySizes(51200, 2000)
    with raises(TilingError, THIS, "kernel 'MatAdd'", "argument 'In1'", "no tiling fits the L2 budget of 2000 bytes",
                "staging its L3 (O_L2DB) arguments", "the least needs 2400 bytes", "'In1' takes 800 (1 slot(s) of "
                "800 B per direction)", "raise the L2 size", "to at least 2400 bytes"):
        add_kernel(kerargs=l3_kerargs())


def test_tight_l2_falls_back_to_serial_staging():
    SetMemorySizes(51200, 3000)  # two slots per argument no longer fit; one still does
    t = add_kernel(kerargs=l3_kerargs())
    assert [a.stage for a in t.args] == [1, 1, 1] and t.l2_bytes <= 3000


def test_l2_budget_from_the_command_line_wins():
    TilerParseOptions(["model.py", "--L2", "2000"])
    SetMemorySizes(51200, 1 << 20)  # the script's value; --L2 overrides it, as --L1 does
    with raises(TilingError, "no tiling fits the L2 budget of 2000 bytes"):
        add_kernel(kerargs=l3_kerargs())


def test_l3_exec_location_must_be_a_ram():
    with raises(ModelError, THIS, "AT_GRAPH_PREF_L3_EXEC must be an L3 RAM, got AT_MEM_L3_HFLASH",
                "AT_MEM_L3_HRAM"):
        AT_SetGraphCtrl(AT_GRAPH_PREF_L3_EXEC, AT_OPT_VAL(AT_MEM_L3_HFLASH))


def test_group_argument_passed_to_l2_and_l3_homes():
    OpenKernelGroup("G")
    add_kernel("K3", kerargs=l3_kerargs())
    add_kernel("K2")
    CloseKernelGroup()
    with raises(ModelError, THIS, "kernel 'G'", "argument 'A'", "group argument 'A' is passed to 'K2' as 'In1' "
                "(home L2) and elsewhere with home L3", "same O_L2DB setting"):
        UserKernelGroup("G", CArgs(TCArg(P32, "A"), TCArg(P32, "B"), TCArg(P32, "C")),
                        Calls(UserKernelCall("K3", LOC_GROUP, Bindings(C_Arg("A"), C_Arg("B"), C_Arg("C"))),
                              UserKernelCall("K2", LOC_GROUP, Bindings(C_Arg("A"), C_Arg("B"), C_Arg("C")))))


@pytest.mark.parametrize("nip, nop, order, fragments", [
    (0, 1, (KER_DIM3, KER_IN_PLANE, KER_TILE),
     ["kernel 'MatAdd': KernelDimensions gives 0 input planes but KernelIterationOrder loops over them "
      "(KER_IN_PLANE) (give InPlanes (at least 1), or leave KER_IN_PLANE out of the order for a 2D kernel)"]),
    (1, 0, (KER_DIM3, KER_OUT_PLANE, KER_TILE),
     ["KernelDimensions gives 0 output planes but KernelIterationOrder loops over them (KER_OUT_PLANE)"]),
    (0, 1, (KER_DIM2, KER_TILE),
     ["kernel 'MatAdd', argument 'In1': is 3D but KernelDimensions gives 0 input planes (give KernelDimensions at "
      "least 1 input plane, or make the argument 2D)"]),
])
def test_zero_planes_where_the_kernel_needs_planes(nip, nop, order, fragments):
    kerargs = KerArgs(3, KerArg("In1", OBJ_IN_DB_3D, 8, 4, 4, 0, 0, 0, "In1", 0),
                      KerArg("In2", OBJ_IN_DB, 8, 4, 4, 0, 0, 0, "In2", 0),
                      KerArg("Out", OBJ_OUT_DB, 8, 4, 4, 0, 0, 0, "Out", 0))
    with raises(ModelError, THIS, *fragments):
        UserKernel("MatAdd", KernelDimensions(nip, 8, 4, nop), KernelIterationOrder(*order), TILE_HOR,
                   CArgs(3, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out")),
                   Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                       5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                       K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))), kerargs)


def test_the_sdks_2d_form_with_zero_planes_is_accepted():
    """KernelDimensions(0, W, H, 0) with KER_TILE alone: the SDK's FIR and integral image."""
    t = UserKernel("MatAdd", KernelDimensions(0, 8, 4, 0), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(3, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out")),
                   Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                       5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                       K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                   KerArgs(3, KerArg("In1", OBJ_IN_DB, 8, 4, 4, 0, 0, 0, "In1", 0),
                           KerArg("In2", OBJ_IN_DB, 8, 4, 4, 0, 0, 0, "In2", 0),
                           KerArg("Out", OBJ_OUT_DB, 8, 4, 4, 0, 0, 0, "Out", 0)))
    assert t.ntiles == 1


def test_a_call_type_not_built_from_the_names():
    """7 is CALL_PARALLEL_CC | CALL_FLOAT_KER: on a kernel with no float data, a wrong number."""
    with raises(ModelError, THIS, "kernel 'Ker7': call type 7 is CALL_PARALLEL_CC | CALL_FLOAT_KER, but no C argument "
                "of the kernel is float (use CALL_SEQUENTIAL (0), CALL_PARALLEL (1), CALL_SEQUENTIAL_STRUCT (2) or "
                "CALL_PARALLEL_CC (3); OR CALL_FLOAT_KER in only for a kernel on float data)"):
        LibKernel("Ker7", 7, CArgs(2, TCArg(P32, "In"), TCArg("unsigned int", "N")), "Ker7_T")
    LibKernel("KerF", CALL_PARALLEL | CALL_FLOAT_KER, CArgs(2, TCArg("float * __restrict__", "In"),
                                                           TCArg("unsigned int", "N")), "KerF_T")


def test_warnings_print_as_one_line_like_errors(tmp_path):
    """A model script's warning on stderr: 'autotiler: warning: model.py:LINE: ...', one line,
    without Python's category name and the source line echoed under it."""
    script = tmp_path / "model.py"
    script.write_text("from autotiler import *\n"
                      "with Model():\n"
                      "    GenTilingWarning('layer %s has %d channels', 'conv1', 3)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "autotiler: warning: model.py:3: layer conv1 has 3 channels\n"
