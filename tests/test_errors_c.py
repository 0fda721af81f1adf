"""Declarations checked against C where they are made: names the headers of the generated code
already define, TCArg types that are not C, item sizes that disagree with the C type they are
passed as, file names an #include cannot carry, options that cannot act yet, an empty model and a
Cost that goes negative. Each error names this file's line, the kernel and argument, and a fix."""

from __future__ import annotations

import inspect
import re
import shutil
from pathlib import Path

import pytest

import autotiler
from autotiler import *
from autotiler.constants import AT_GraphCtrl_T
from autotiler.model import reserved

from .graph_helpers import add_group

THIS = "test_errors_c.py"
P32 = "Word32 * __restrict__"
RUNTIME = Path(__file__).resolve().parents[1] / "host_harness" / "runtime"


@pytest.fixture(autouse=True)
def fresh_model(tmp_path):
    with Model() as m:
        SetL1MemorySize(51200)
        m.output_dir, m.quiet = str(tmp_path), True
        LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"),
                                                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
                  "MatrixAdd_Arg_T")
        yield m


def raises(exc, *fragments):
    """The error names this file (some line of it), then the fragments in order."""
    return pytest.raises(exc, match=re.escape(THIS) + r":\d+: .*" + ".*".join(re.escape(f) for f in fragments))


def matadd(name="MatAdd", cargs=None, item=4, cost_lib="MatSumPar", w=20, h=30):
    cargs = cargs or CArgs(3, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"))
    return UserKernel(name, KernelDimensions(1, w, h, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR, cargs,
                      Calls(1, Call(cost_lib, LOC_INNER_LOOP, Bindings(
                          5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                          K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                      KerArgs(3, KerArg("In1", OBJ_IN_DB, w, h, item, 0, 0, 0, "In1", 0),
                              KerArg("In2", OBJ_IN_DB, w, h, item, 0, 0, 0, "In2", 0),
                              KerArg("Out", OBJ_OUT_DB, w, h, item, 0, 0, 0, "Out", 0)))


# ---------------------------------------------------------------------------------------------
# Names the headers included by generated C define


@pytest.mark.parametrize("name,what", [
    ("printf", "a function of the C library"), ("memcpy", "a function of the C library"),
    ("main", "a function of the C library"), ("AT_FORK", "a macro of the runtime headers"),
    ("Word32", "a type of the runtime headers"), ("gap_coreid", "a function of the runtime headers"),
    ("size_t", "a type of the C library"), ("__mine", "reserved by the C standard"),
    ("_Mine", "reserved by the C standard"),
])
def test_user_kernel_named_like_a_header_name(name, what):
    with raises(ModelError, f"kernel '{name}'", f"user kernel or group name '{name}' is {what}", "rename"):
        matadd(name)


@pytest.mark.parametrize("name,what", [
    ("AT_L2_EVENT", "a macro of the runtime headers"), ("Word32", "a type of the runtime headers"),
    ("at_sim_copy", "a function of the runtime headers"), ("NULL", "a macro of the C library"),
])
def test_c_argument_named_like_a_header_name(name, what):
    cargs = CArgs(4, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"), TCArg("int", name))
    with raises(ModelError, "kernel 'MatAdd'", f"C argument '{name}' is {what}", f"rename the C argument (e.g. '{name}_')"):
        matadd(cargs=cargs)


def test_c_argument_may_reuse_a_c_library_function_name():
    # a parameter named 'exp' hides the function only inside the generated kernel, which never calls it
    cargs = CArgs(4, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"), TCArg("int", "exp"))
    assert matadd(cargs=cargs).ntiles >= 1


def test_basic_kernel_struct_type_and_template_named_like_header_names():
    with raises(ModelError, "kernel 'memset'", "basic kernel 'memset' is a function of the C library"):
        LibKernel("memset", CALL_SEQUENTIAL, CArgs(1, TCArg("int", "N")), "")
    with raises(ModelError, "kernel 'KerX'", "argument struct type 'v4s' is a type of the runtime headers"):
        LibKernel("KerX", CALL_PARALLEL, CArgs(1, TCArg("int", "N")), "v4s")
    with raises(ModelError, "basic kernel template 'FILE' is a type of the C library"):
        LibKernelTemplate("FILE", CArgs(1, TCArg("int", "N")))


def test_memory_symbol_named_like_a_header_name():
    with raises(ModelError, "memory symbol 'malloc' is a function of the C library"):
        SetSymbolNames("malloc", "L2_Memory")


def test_reserved_names_file_is_fresh():
    """The shipped list is what gcc sees in the runtime headers today."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    fresh = reserved.render(reserved.extract(RUNTIME))
    assert fresh == reserved.DATA.read_text(), (
        "autotiler/model/reserved_names.txt is stale: regenerate it with\n  .venv/bin/python -c \"from "
        "autotiler.model import reserved as r; print(r.render(r.extract('host_harness/runtime')), end='')\" "
        "> autotiler/model/reserved_names.txt")


# ---------------------------------------------------------------------------------------------
# C types


@pytest.mark.parametrize("ctype,reason", [
    ("int int ***[", "is not a C type"), ("int [3]", "is not a C type"), ("int x", "is not a C type (a name follows the type"),
    ("int;int", "is not a C type"), ("unsigned float", "is not a C type"),
])
def test_tcarg_type_that_is_not_c(ctype, reason):
    with raises(ModelError, "argument 'X'", f"TCArg type {ctype!r} {reason}", "give a C type such as"):
        TCArg(ctype, "X")


@pytest.mark.parametrize("ctype", ["Word32 * __restrict__", "const short int *", "void (*)(void *)", "struct S *",
                                   "MyStruct_T *", "v4s * __restrict__", "unsigned long long",
                                   "signed char * __attribute__((aligned(4)))", "void *", "_Bool",
                                   "long double", "short unsigned int *"])
def test_tcarg_types_that_are_c(ctype):
    assert TCArg(ctype, "X").ctype == " ".join(ctype.split())


def test_item_size_that_disagrees_with_the_c_argument():
    with raises(ModelError, "kernel 'MatAdd', argument 'In1'", "its C argument binding gives 2-byte items but C "
                "argument 'In1' is 'Word32 * __restrict__' (4-byte items)", "declare 'In1' with item size 4"):
        matadd(item=2)


def test_item_size_that_disagrees_with_the_basic_kernel_formal():
    LibKernel("KerShort", CALL_PARALLEL, CArgs(5, TCArg("short int *", "In1"), TCArg("short int *", "In2"),
                                               TCArg("short int *", "Out"), TCArg("unsigned int", "W"),
                                               TCArg("unsigned int", "H")), "KerShort_T")
    cargs = CArgs(3, TCArg("signed char *", "In1"), TCArg("signed char *", "In2"), TCArg("signed char *", "Out"))
    with raises(ModelError, "kernel 'MatAdd', argument 'In1'", "KER_ARG_TILE of 'In1' gives 1-byte items but 'In1' "
                "is 'short int *' (2-byte items)", "or a multiple of it"):
        matadd(cargs=cargs, item=1, cost_lib="KerShort")


def test_item_size_a_multiple_of_the_pointee_is_accepted():
    # pairs of Word32 (complex data) passed as Word32 *: a multiple strides correctly
    assert matadd(item=8).ntiles >= 1


# ---------------------------------------------------------------------------------------------
# File names, options, empty models, Cost


@pytest.mark.parametrize("name", ['a"b.h', "a b.h", "-x.h", ".hidden.h", "a\nb.h", "é.h"])
def test_header_name_an_include_cannot_carry(name):
    with raises(ModelError, f"header name {name!r} has characters a C #include or a build line cannot carry"):
        SetUsedFilesNames(0, 1, name)


def test_generated_file_names_need_their_suffix():
    with raises(ModelError, "generated file name 'Kernels.h' must end in '.c'"):
        SetGeneratedFilesNames("Kernels.h", "Kernels.c")
    with raises(ModelError, "generated file name 'Kernels.hpp' must end in '.h'"):
        SetGeneratedFilesNames("Kernels.c", "Kernels.hpp")


@pytest.mark.parametrize("ctrl", [AT_GRAPH_ASYNC_FORK, AT_GRAPH_ARG2STRUCT, AT_GRAPH_GROUP_WEIGHTS])
def test_graph_options_say_they_are_not_supported_yet(ctrl):
    with raises(ModelError, f"AT_SetGraphCtrl({AT_GraphCtrl_T(ctrl).name}, ...) is not supported yet",
                "options that act today: AT_KERNEL_BUFFER_PROMOTE"):
        AT_SetGraphCtrl(ctrl, AT_OPT_ON)


def test_noinline_graph_option_acts(fresh_model):
    AT_SetGraphCtrl(AT_GRAPH_NOINLINE_NODE, AT_OPT_ON)
    matadd()
    GenerateTilingCode()
    assert "void __attribute__ ((noinline)) MatAdd(" in (Path(fresh_model.output_dir) / "GenKernels.c").read_text()
    with raises(ModelError, "AT_SetGraphCtrl(AT_GRAPH_NOINLINE_NODE, ...): the value must be AT_OPT_ON or AT_OPT_OFF"):
        AT_SetGraphCtrl(AT_GRAPH_NOINLINE_NODE, "yes")


def test_empty_model_is_an_error_and_writes_nothing(fresh_model):
    with raises(ModelError, "nothing to generate: the model declares no user kernel and no kernel group",
                "declare a UserKernel"):
        GenerateTilingCode()
    assert list(Path(fresh_model.output_dir).iterdir()) == []


def test_model_whose_only_kernel_did_not_tile_is_an_error(fresh_model):
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    SetL1MemorySize(64)
    matadd()
    with raises(ModelError, "nothing to generate: no declaration of MatAdd tiled", "give the kernels more L1"):
        GenerateTilingCode()


def test_cost_that_goes_negative_on_the_tiling():
    LibKernel("KerCost", CALL_PARALLEL, CArgs(5, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"),
                                              TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
              "KerCost_T", Cost="W*H - 5000")
    with raises(ModelError, "kernel 'MatAdd'", "the Cost of basic kernel 'KerCost' evaluates to -", "cycles on a call",
                "stays 0 or more for every tile size"):
        matadd(cost_lib="KerCost")


def test_wrong_number_of_arguments_names_the_line_and_the_form():
    with raises(ModelError, "SetL1MemorySize: too many positional arguments", "call it as SetL1MemorySize(Size)"):
        SetL1MemorySize(51200, 2)
    with raises(ModelError, "UserKernel: missing argument 'Name'", "UserKernel(Name, KerIter, Orientation"):
        UserKernel()


def test_every_api_function_refuses_a_wrong_arity_with_a_model_error():
    checked = 0
    for name in autotiler.api.__all__:
        fn = getattr(autotiler, name)
        if not inspect.isfunction(fn):
            continue
        params = inspect.signature(fn).parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            continue
        with pytest.raises(ModelError, match=re.escape(f"{fn.__name__}: ") + ".*" + re.escape("call it as")):
            fn(*range(len(params) + 1))
        checked += 1
    assert checked > 60


def test_reentrant_option_acts(fresh_model):
    """-R is accepted and asks for the reentrant graph runner (tests/test_graph_reentrant.py runs it)."""
    assert TilerParseOptions(["model.py", "-R"]) == 0
    assert fresh_model.reentrant
    assert fresh_model.graph_ctrl[AT_GraphCtrl_T.AT_GRAPH_RUNNER_RE_ENTRANT] is True


def test_noinline_graph_option_marks_group_functions_too(fresh_model):
    AT_SetGraphCtrl(AT_GRAPH_NOINLINE_NODE, AT_OPT_ON)
    add_group("Grp")
    GenerateTilingCode()
    text = (Path(fresh_model.output_dir) / "GenKernels.c").read_text()
    assert "void __attribute__ ((noinline)) Grp(" in text and "void __attribute__ ((noinline)) GA(" in text
