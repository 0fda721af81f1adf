"""Every error of the model API not already matched by test_errors.py, triggered as a model
script would (v3 API first, then the v2 forms, groups, settings and options): typed, naming
this file and the exact line of the offending call, the kernel and the argument, what is
wrong and the fix. Misuses once silently accepted, or ending in a Python exception, are here
with the typed error that now refuses them; AutoTilerWarnings are matched the same way."""

from __future__ import annotations

import sys
import warnings

import pytest

from autotiler import *
from autotiler.codegen import generate
from autotiler.errors import CodegenError
from autotiler.model.session import current_model

from .error_lines import rendered, with_body_line

THIS = "test_errors_v3.py"
P32 = "int * __restrict__"
T0, T1, D0, D1 = KER_ITER_TILE0, KER_ITER_TILE1, KER_ITER_D0, KER_ITER_D1


@pytest.fixture(autouse=True)
def fresh_model():
    with Model() as m:
        SetL1MemorySize(51200)
        LibKernel("MatSumPar", CALL_PARALLEL,
                  CArgs(TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"), TCArg("unsigned int", "W"),
                        TCArg("unsigned int", "H")), "MatrixAdd_Arg_T", Cost="W*H")
        yield m


def fails(exc, *fragments, kernel=None, arg=None, line=1, at=None):
    """``pytest.raises`` for an ``exc`` rendered as ``THIS:LINE: kernel 'K', argument 'A': ...``
    with the fragments in order (message, then hint), and whose ``kernel`` and ``arg`` fields
    are exactly the ones given. LINE is ``at``, else the ``line``-th line of the ``with`` body
    (1: its first line, 2: the next one, ...)."""
    return rendered(exc, THIS, with_body_line(line) if at is None else at, fragments, kernel, arg, exact=True)


def this_line() -> int:
    """The caller's line (``a, line = KerArg(...), this_line()``)."""
    return sys._getframe(1).f_lineno


def mat_cargs(*extra):
    return CArgs(TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"), *extra)


def mat_kerargs(*given, space=lambda: KerArgSpace(1, T0), w=20, h=30):
    """In1, In2 (inputs) and Out (output), w x h ints in ``space``; those ``given`` replace the
    argument of the same name (or are added)."""
    mine = {a.name: a for a in given}
    std = [KerArg(n, space(), t, w, h, 4, 0, 0, 0, n) for n, t in (("In1", OBJ_IN_DB), ("In2", OBJ_IN_DB),
                                                                     ("Out", OBJ_OUT_DB))]
    return KerArgs(*(mine.pop(a.name, a) for a in std), *mine.values())


def add_bindings(*last):
    """Bindings of MatSumPar; ``last`` replaces the final ones (W, H)."""
    head = [K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE)]
    tail = [K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)]
    return Bindings(*(head + tail)[: 5 - len(last)], *last)


def add_calls(*last, location=LOC_LOOP):
    return Calls(Call("MatSumPar", location, add_bindings(*last)))


def mat_add(name="K", space=None, calls=None, kerargs=None, cargs=None, orientation=TILE_HOR) -> tuple:
    """The arguments of UserKernel for Out = In1 + In2 (20 x 30 ints tiled along T0); a test
    calls ``UserKernel(*mat_add(...))`` on the line its error must name."""
    return (name, space or KernelIterSpace(1, IterTiledSpace(T0)), orientation, cargs or mat_cargs(),
            calls or add_calls(), kerargs or mat_kerargs())


def planes(n=2):
    """A kernel space with n planes (D0) outside the tiled space T0."""
    return KernelIterSpace(2, IterFixedSpace(D0, n), IterTiledSpace(T0))


def test_the_helpers_declare_a_valid_kernel():
    assert UserKernel(*mat_add()).ntiles >= 1


# ---------------------------------------------------------------------------------------------
# Count-prefixed lists, parameter binding, enums and integers (api/common.py)


def test_unfilled_allocated_slot():
    args = AllocateCArgs(2)
    args[0] = TCArg(P32, "In")
    with fails(ModelError, "CArgs: an item is None (an AllocateXXX slot never filled?)",
               "fill every slot, or use the AT_NO_* placeholder"):
        CArgs(*args)


def test_list_item_of_the_wrong_kind():
    with fails(ModelError, "CArgs expects C arguments, got 'int A' (build each item with TCArg(Type, Name))"):
        CArgs("int A")
    with fails(ModelError, "KernelIterSpace expects iteration spaces, got KER_ITER_TILE0 (build each item with "
               "IterTiledSpace(...), IterParSpace(...) or IterFixedSpace(...))"):
        KernelIterSpace(1, KER_ITER_TILE0)
    with fails(ModelError, "Calls expects calls, got KerArg 'A' (build each item with Call(Name, Location, "
               "Bindings(...)) (UserKernelCall(...) in a kernel group))"):
        Calls(KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A"))
    with fails(ModelError, "CArgs expects C arguments, got Call('MatSumPar', ...)"):
        CArgs(Call("MatSumPar", LOC_LOOP, add_bindings()))


def test_list_that_is_a_string_in_a_user_kernel_names_the_kernel():
    with fails(ModelError, "CArgs must be a CArgs(...) list, got 'In1' (wrap the items: CArgs(TCArg(Type, Name), "
               "...))", kernel="K"):
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, "In1", add_calls(), mat_kerargs())


def test_invalid_enum_value():
    with fails(ModelError, "99 is not a valid call location (use one of LOC_LOOP, LOC_LOOP_PROLOG, LOC_LOOP_EPILOG, "
               "LOC_LOOP1, LOC_LOOP1_PROLOG, LOC_LOOP1_EPILOG, ..., LOC_GROUP (24 names, values 0..23))"):
        Call("MatSumPar", 99, add_bindings())
    with fails(ModelError, "'LOC_LOOP' is not a valid call location (pass the constant LOC_LOOP, not its name as a "
               "string)"):
        Call("MatSumPar", "LOC_LOOP", add_bindings())
    with fails(ModelError, "'LOC_LOOOP' is not a valid call location (pass a constant, not a string: did you mean "
               "LOC_LOOP or LOC_LOOP2 or LOC_LOOP1?)"):
        Call("MatSumPar", "LOC_LOOOP", add_bindings())


def test_invalid_tile_orientation_names_the_kernel():
    with fails(ModelError, "5 is not a valid tile orientation (TILE_HOR/TILE_VER)", "use one of TILE_HOR, TILE_VER",
               kernel="K"):
        UserKernel(*mat_add(orientation=5))


def test_too_many_positional_arguments():
    with fails(ModelError, "LibKernel takes 5 argument(s), got 6",
               "LibKernel(KernelName, CallType, CArgs, ParArgTypeName, CNN_Match)"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(), "", None, 7)
    with fails(ModelError, "UserKernel takes 6 argument(s), got 8", "UserKernel(Name, KerIter, Orientation"):
        UserKernel(*mat_add(), 1, 2)


def test_unknown_keyword_argument():
    with fails(ModelError, "KerArg has no parameter 'Size'", "KerArg(KerArgName, KerArgSpace, ObjType, W, H"):
        KerArg("A", KerArgSpace(1, T0), OBJ_IN_DB, 8, 8, Size=4)


def test_argument_given_twice():
    with fails(ModelError, "LibKernel: parameter 'KernelName' given twice (give it either by position or by keyword)"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(), KernelName="X")


def test_missing_argument():
    with fails(ModelError, "LibKernel: missing argument 'CallType'", "LibKernel(KernelName, CallType"):
        LibKernel("L")
    with fails(ModelError, "KerArg: missing argument 'ItemSize'"):
        KerArg("A", KerArgSpace(1, T0), OBJ_IN_DB, 8, 8)


@pytest.mark.parametrize("count", ["3", None, 2.0])
def test_count_that_is_not_an_integer(count):
    with fails(ModelError, f"AllocateCArgs count must be an integer, got {count!r} (pass a plain int (not a string, "
               "float or bool))"):
        AllocateCArgs(count)


def test_negative_count():
    with fails(ModelError, "AllocateKerArgs count must be at least 0, got -1 (use 0 or more)"):
        AllocateKerArgs(-1)
    with fails(ModelError, "AllocateCalls count must be at least 0, got -2"):
        AllocateCalls(-2)


def test_sizeof_unknown_type():
    with fails(ModelError, "sizeof: unknown C type 'struct foo'", "pass the size in bytes instead"):
        sizeof("struct foo")


# ---------------------------------------------------------------------------------------------
# Basic kernels and templates


def test_tcarg_type_must_be_a_string():
    with fails(ModelError, "TCArg type must be a C type string, got 5", 'e.g. TCArg("short int * __restrict__"',
               arg="A"):
        TCArg(5, "A")


@pytest.mark.parametrize("name,fragment", [("1a", "C argument name '1a' is not a valid C identifier"),
                                           ("int", "C argument name 'int' is a C keyword"),
                                           (None, "C argument name None is not a valid C identifier")])
def test_c_argument_name(name, fragment):
    with fails(ModelError, fragment, "use letters, digits and '_' only" if name != "int" else "choose another name"):
        TCArg("int", name)


def test_template_declared_twice_with_other_arguments():
    LibKernelTemplate("T", CArgs(TCArg("int", "A")))
    with fails(ModelError, "template 'T' is already declared with other arguments", "declare each template once"):
        LibKernelTemplate("T", CArgs(TCArg("int", "B")))


def test_unknown_template():
    LibKernelTemplate("KerT", CArgs(TCArg("int", "A")))
    with fails(ModelError, "no basic kernel template 'KerTT'", "declare it with LibKernelTemplate first",
               "did you mean 'KerT'?"):
        KerTypeTemplate("KerTT")


def test_basic_kernel_without_arguments_nor_template():
    with fails(ModelError, "has no C arguments and no LibKernelTemplate named by ParArgTypeName",
               "give CArgs(...) or declare LibKernelTemplate(ParArgTypeName, ...)", kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, 0, "")


def test_call_type_that_is_not_an_integer():
    with fails(ModelError, "'par' is not a valid call type", "use CALL_SEQUENTIAL, CALL_PARALLEL", kernel="L"):
        LibKernel("L", "par", CArgs(), "")


def test_call_type_with_unknown_attribute_bits():
    with fails(ModelError, "call type 64 has unknown attribute bits", "CALL_FLOAT_KER, CALL_HWC_KER, CALL_NE16_KER",
               kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL | 64, CArgs(), "")


def test_argument_struct_type_must_be_an_identifier():
    with fails(ModelError, "argument struct type 'a b' is not a C identifier (give the name of the C struct type the "
               "kernel takes, e.g. \"MatrixAdd_Arg_T\")", kernel="L"):
        LibKernel("L", CALL_PARALLEL, CArgs(), "a b")


def test_basic_kernel_named_like_a_user_kernel():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "'K' is already a user kernel or group (give the basic kernel another name: basic kernels "
               "and generated functions share the C namespace)", kernel="K"):
        LibKernel("K", CALL_SEQUENTIAL, CArgs(), "")


def test_user_kernel_named_like_a_basic_kernel():
    with fails(ModelError, "'MatSumPar' is already the name of a basic kernel",
               "generated functions cannot reuse a basic kernel's name", kernel="MatSumPar"):
        UserKernel(*mat_add("MatSumPar"))


def test_cost_must_be_a_string():
    with fails(ModelError, "Cost must be a string expression, got int 5", 'write e.g. Cost="W*H/ncores + 20"',
               kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(TCArg("int", "N")), "", Cost=5)


def test_cost_syntax_error():
    with fails(ModelError, "Cost expression 'N*' is not a valid expression", 'write e.g. "W*H/ncores + 20"',
               kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(TCArg("int", "N")), "", Cost="N*")


@pytest.mark.parametrize("cost", ["max(N, 2)", "N*1.5", "N**2"])
def test_cost_outside_the_grammar(cost):
    with fails(ModelError, f"Cost expression {cost!r} may only use integers, + - * / % and names (write e.g. "
               "\"W*H/ncores + 20\")", kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(TCArg("int", "N")), "", Cost=cost)


@pytest.mark.parametrize("cost,fragment", [
    ("N/0", "divides by zero (a Cost counts the cycles of one call: divide by a non-zero value)"),
    ("N % (2-2)", "divides by zero"),
    ("-1000", "is a negative cycle count (-1000) (a Cost counts the cycles of one call: give 0 or more)"),
    ("(2-5)*3", "is a negative cycle count (-9)"),
])
def test_cost_that_cannot_be_a_cycle_count(cost, fragment):
    with fails(ModelError, f"Cost expression {cost!r} {fragment}", kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, CArgs(TCArg("int", "N")), "", Cost=cost)


# ---------------------------------------------------------------------------------------------
# Iteration spaces


@pytest.mark.parametrize("value", ["T0", None])
def test_space_that_is_not_an_integer(value):
    with fails(ModelError, f"{value!r} is not a valid tiled space", "use KER_ITER_TILE0..2 / KER_ITER_D0..D3"):
        IterTiledSpace(value)


def test_space_out_of_range():
    with fails(ModelError, "99 is not a valid space", "use one of KER_ITER_TILE0"):
        IterFixedSpace(99, 4)


@pytest.mark.parametrize("ctor,args,fragment", [
    (IterFixedSpace, (D0, 0), "IterFixedSpace Dim must be at least 1, got 0 (use 1 or more)"),
    (IterFixedSpace, (D0, "4"), "IterFixedSpace Dim must be an integer, got '4' (pass a plain int (not a string, float "
                                "or bool))"),
    (IterParSpace, (D0, 4, 0), "IterParSpace PrefDiv must be at least 1, got 0"),
    (IterParSpace, (D0, -4, 1), "IterParSpace Dim must be at least 1, got -4"),
    (IterFixedSpaceDynBound, (D0, 0, "N"), "IterFixedSpaceDynBound Dim must be at least 1, got 0"),
])
def test_space_extent(ctor, args, fragment):
    with fails(ModelError, fragment):
        ctor(*args)


def test_run_time_bound_name_must_be_an_identifier():
    with fails(ModelError, "run-time bound C argument name '1x' is not a valid C identifier"):
        IterFixedSpaceDynBound(D0, 4, "1x")


def test_empty_iteration_space():
    with fails(ModelError, "the iteration space has no loop",
               "give at least one space, e.g. KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0))", kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(0)))


def test_space_twice_in_the_iteration_space():
    with fails(ModelError, "space KER_ITER_TILE0 appears twice in the iteration space", "each space names one loop",
               kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(2, IterTiledSpace(T0), IterTiledSpace(T0))))


def test_tiled_space_must_be_tile0_to_2():
    with fails(ModelError, "IterTiledSpace(KER_ITER_D0): only KER_ITER_TILE0..2 can be tiled",
               "use IterFixedSpace or IterParSpace for D0..D3", kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(1, IterTiledSpace(D0))))


def test_tile_space_declared_fixed():
    with fails(ModelError, "KER_ITER_TILE0 is a tiled space: declare it with IterTiledSpace",
               "the non-tiled spaces are KER_ITER_D0..D3", kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(1, IterFixedSpace(T0, 3))))


def test_user_kernel_without_kernel_iter_space():
    with fails(ModelError, "expects KernelIterSpace(...) as its 2nd argument",
               "v3: UserKernel(Name, KernelIterSpace(...), Orientation, CArgs, Calls, KerArgs)", kernel="K"):
        UserKernel("K", IterTiledSpace(T0), TILE_HOR, mat_cargs(), add_calls(), mat_kerargs())


def test_run_time_bound_must_be_a_c_argument():
    with fails(ModelError, 'IterFixedSpaceDynBound(D0, 3, "N"): \'N\' must be an integer C argument of the user kernel',
               'add TCArg("int", "N") to the kernel\'s CArgs', kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(2, IterFixedSpaceDynBound(D0, 3, "N"), IterTiledSpace(T0))))


@pytest.mark.parametrize("bound,ctype", [("In1", P32), ("N", "float")])
def test_run_time_bound_of_the_wrong_type_says_its_type(bound, ctype):
    cargs = mat_cargs(TCArg(ctype, "N")) if bound == "N" else mat_cargs()
    with fails(ModelError, f"IterFixedSpaceDynBound(D0, 3, \"{bound}\"): '{bound}' is '{ctype}', not an integer (a "
               f"run-time bound is an iteration count: declare '{bound}' with an integer type, or name an integer C "
               "argument)", kernel="K"):
        UserKernel(*mat_add(space=KernelIterSpace(2, IterFixedSpaceDynBound(D0, 3, bound), IterTiledSpace(T0)), cargs=cargs))


def test_space_prop_revert_on_the_tiled_iteration_space():
    with fails(ModelError, "IterTiledSpace(KER_ITER_TILE0): SPACE_PROP_REVERT applies to non-tiled spaces (traverse a "
               "D space backwards, e.g. SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT) in KerArgSpace)"):
        IterTiledSpace(SPACE_PROP(T0, SPACE_PROP_REVERT))


def test_space_prop_revert_in_the_kernel_iteration_space():
    with fails(ModelError, "IterFixedSpace(KER_ITER_D0): SPACE_PROP_REVERT belongs in KerArgSpace, not in "
               "KernelIterSpace (give it in the KerArgSpace of the arguments to traverse backwards, e.g. "
               "KerArgSpace(1, SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT)))"):
        IterFixedSpace(SPACE_PROP(D0, SPACE_PROP_REVERT), 4)


@pytest.mark.parametrize("make,fragment,hint", [
    (lambda: IterTiledSpace(SPACE_PROP(T0, SPACE_PROP_ONE_TILE)),
     "IterTiledSpace(KER_ITER_TILE0): SPACE_PROP_ONE_TILE applies to non-tiled spaces",
     "remove it: the tiler chooses how many tiles; OBJ_CONSTRAINTS_ONEPREFTILE asks for a single one"),
    (lambda: IterFixedSpace(SPACE_PROP(D0, SPACE_PROP_ONE_TILE), 4),
     "IterFixedSpace(KER_ITER_D0): SPACE_PROP_ONE_TILE applies to IterParSpace (a single chunk)",
     "remove the property: a fixed space visits each index"),
    (lambda: IterParSpace(D0 | 0x100000, 4, 1), "IterParSpace(KER_ITER_D0) has unknown property bits 0x100000",
     "use SPACE_PROP(Space, SPACE_PROP_ABS | SPACE_PROP_REVERT | SPACE_PROP_PAD2PREF | SPACE_PROP_ONE_TILE)"),
])
def test_space_prop_without_effect_in_the_kernel_iteration_space(make, fragment, hint):
    with fails(ModelError, f"{fragment} ({hint})", at=make.__code__.co_firstlineno):
        make()


def test_tile_hwc_orientation():
    with fails(ModelError, "TILE_HWC is not supported yet", "use TILE_HOR or TILE_VER", kernel="K"):
        UserKernel(*mat_add(orientation=TILE_HWC))


# ---------------------------------------------------------------------------------------------
# KerArgSpace


def test_kerargspace_count_must_match():
    with fails(ModelError, "KerArgSpace(2, ...) announces 2 space(s) but 1 follow", "write KerArgSpace(1, ...)"):
        KerArgSpace(2, T0)


def test_kerargspace_must_start_with_the_count():
    with fails(ModelError, "KerArgSpace(N, spaces...) starts with the number of spaces (write KerArgSpace(2, ...) "
               "(got '1' first))"):
        KerArgSpace("1", T0)


def test_kerargspace_without_arguments():
    with fails(ModelError, "KerArgSpace() needs the number of spaces, then the spaces (e.g. KerArgSpace(1, "
               "KER_ITER_TILE0); KerArgSpace(0) for an argument in no space)"):
        KerArgSpace()


def test_kerargspace_entry_that_is_not_a_space():
    with fails(ModelError, "None is not a valid KerArgSpace entry", "use KER_ITER_TILE0..2 / KER_ITER_D0..D3"):
        KerArgSpace(1, None)


def test_kerargspace_lists_a_space_twice():
    with fails(ModelError, "KerArgSpace lists KER_ITER_TILE0 twice (list each space the argument lives in once)",
               kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(2, T0, T0), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_kerargspace_space_absent_from_the_kernel():
    with fails(ModelError, "KerArgSpace names KER_ITER_D0, which is not in the kernel's iteration space "
               "(KER_ITER_TILE0)", "add the space to KernelIterSpace or remove it from KerArgSpace", kernel="K",
               arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(2, D0, T0), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_kerargspace_unknown_property_bits():
    with fails(ModelError, "KerArgSpace entry KER_ITER_TILE0 has unknown property bits 0x100000",
               "use SPACE_PROP(Space, SPACE_PROP_ABS | SPACE_PROP_REVERT", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, T0 | 0x100000), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_space_prop_pad2pref():
    with fails(ModelError, "SPACE_PROP_PAD2PREF is not supported yet", "remove the property", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, SPACE_PROP(T0, SPACE_PROP_PAD2PREF)), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_space_prop_revert_on_a_tiled_space():
    with fails(ModelError, "KerArgSpace entry KER_ITER_TILE0: SPACE_PROP_REVERT applies to non-tiled spaces",
               "traverse a D space backwards, e.g. SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT)", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, SPACE_PROP(T0, SPACE_PROP_REVERT)), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_space_prop_one_tile_on_a_tiled_kerargspace_entry():
    with fails(ModelError, "KerArgSpace entry KER_ITER_TILE0: SPACE_PROP_ONE_TILE applies to non-tiled spaces",
               kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, SPACE_PROP(T0, SPACE_PROP_ONE_TILE)), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_kerargspace_with_two_tiled_spaces():
    space = KernelIterSpace(2, IterTiledSpace(T1), IterTiledSpace(T0))
    with fails(ModelError, "KerArgSpace has more than one tiled space", "an argument's plane is cut along one tiled "
               "space", kernel="K", arg="In1"):
        UserKernel(*mat_add(space=space, kerargs=mat_kerargs(KerArg("In1", KerArgSpace(2, T1, T0), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_tiled_space_not_last_in_kerargspace():
    with fails(ModelError, "the tiled space KER_ITER_TILE0 is not the innermost entry of KerArgSpace: layouts with "
               "the plane outside other dimensions (HWC) are not supported yet", "list the tiled space last",
               kernel="K", arg="In1"):
        UserKernel(*mat_add(space=planes(), kerargs=mat_kerargs(KerArg("In1", KerArgSpace(2, T0, D0), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_tiled_argument_without_tiled_space():
    with fails(ModelError, "is tiled (O_TILED) but its KerArgSpace has no tiled space",
               "add a tiled space (KER_ITER_TILE0..2) to KerArgSpace, or drop O_TILED", kernel="K", arg="In1"):
        UserKernel(*mat_add(space=planes(), kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, D0), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))


def test_onetile_buffer_without_tiled_space():
    with fails(ModelError, "a ONETILE/DYNTILE buffer needs a tiled space in its KerArgSpace",
               "give it the tiled space its tiles follow", kernel="K", arg="B"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("B", KerArgSpace(0), O_BUFF | O_ONETILE, 8, 8, 4, 0, 0, 0, None))))


def test_tile_flag_contradicts_kerargspace():
    with fails(ModelError, "O_TILE1 says the argument is tiled along KER_ITER_TILE1, its KerArgSpace says otherwise",
               "drop O_TILE1: in the v3 form KerArgSpace gives the spaces", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, T0), OBJ_IN_DB | O_TILE1, 20, 30, 4, 0, 0, 0, "In1"))))


def test_v2_plane_flag_in_a_v3_kernel():
    with fails(ModelError, "O_3D is a v2 flag; a v3 kernel gives the planes as spaces of KerArgSpace",
               "e.g. KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0) for a 3D input", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", KerArgSpace(1, T0), OBJ_IN_DB_3D, 20, 30, 4, 0, 0, 0, "In1"))))


def test_v2_argument_in_a_v3_kernel():
    with fails(ModelError, "is declared in the v2 form (no KerArgSpace) in a v3 kernel",
               "give its spaces: KerArg(Name, KerArgSpace(1, KER_ITER_TILE0), Type, ...)", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1", 0))))


@pytest.mark.parametrize("obj_type", [OBJ_BUFFER_IN_NTILED, O_BUFF | O_IN, OBJ_BUFFER_NTILED])
def test_buffer_whose_tiling_only_the_v3_rule_decides_warns(obj_type):
    carg = "B" if obj_type & O_IN else None
    kerargs, line = mat_kerargs(KerArg("B", S(), obj_type, 20, 30, 4, 0, 0, 0, carg)), this_line()
    cargs = mat_cargs(TCArg(P32, "B")) if carg else mat_cargs()
    with pytest.warns(AutoTilerWarning) as record:
        UserKernel(*mat_add(kerargs=kerargs, cargs=cargs))
    assert len(record) == 1 and str(record[0].message).endswith(
        f"{THIS}:{line}: kernel 'K', argument 'B': O_BUFF without O_TILED or O_NTILED, and its KerArgSpace holds "
        "KER_ITER_TILE0: under the v3 rule it is tiled along that space (add O_NTILED to keep it whole, or O_TILED to "
        "say it is tiled and silence this)")
    assert record[0].filename.endswith(THIS) and record[0].lineno == line


@pytest.mark.parametrize("obj_type", [O_BUFF | O_IN | O_NTILED, OBJ_BUFFER_IN, OBJ_BUFFER_ONETILE, OBJ_BUFFER_DYNTILE])
def test_buffer_that_says_whether_it_is_tiled_does_not_warn(obj_type):
    carg = "B" if obj_type & O_IN else None
    kerargs = mat_kerargs(KerArg("B", S(), obj_type, 20, 30, 4, 0, 0, 0, carg))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        UserKernel(*mat_add(kerargs=kerargs, cargs=mat_cargs(TCArg(P32, "B")) if carg else mat_cargs()))


# ---------------------------------------------------------------------------------------------
# Kernel arguments: fields and flags (checked where the argument is declared)


def S():
    """The KerArgSpace of a plane tiled along T0."""
    return KerArgSpace(1, T0)


@pytest.mark.parametrize("obj_type", [-1, "OBJ_IN", None])
def test_invalid_object_type(obj_type):
    with fails(ModelError, f"invalid object type {obj_type!r}", "use OBJ_* names or O_* flags", arg="A"):
        KerArg("A", S(), obj_type, 8, 8, 4, 0, 0, 0, "A")


@pytest.mark.parametrize("constraint", [-1, "EVEN"])
def test_invalid_constraint(constraint):
    with fails(ModelError, f"invalid constraint {constraint!r}", "use OBJ_CONSTRAINTS_* names", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, constraint, 0, "A")


@pytest.mark.parametrize("w", ["8", None, 8.0, True])
def test_size_of_the_wrong_type(w):
    with fails(ModelError, f"W must be a positive integer, got {w!r}", "give W a size of at least 1", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, w, 8, 4, 0, 0, 0, "A")


def test_kernel_argument_name():
    with fails(ModelError, "kernel argument name '1A' is not a valid C identifier", "use letters, digits and '_'"):
        KerArg("1A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A")


def test_tile_overlap_of_the_wrong_type():
    with fails(ModelError, "TileOverlap must be an integer, got '1' (pass a plain int (not a string, float or bool))",
               arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, "1", 0, 0, "A")


def test_negative_preferred_tile_size():
    with fails(ModelError, "PreferedTileSize must be at least 0, got -1 (use 0 or more)", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, -1, "A")


@pytest.mark.parametrize("ctor,args,fragment", [
    (KerArgPad, (8, 8, -1, 0, 4), "BottomBuffer must be at least 0, got -1"),
    (KerArgPad, (8, 8, 0, -2, 4), "TopBuffer must be at least 0, got -2"),
    (KerArgPBuff, (8, 8, 8, 8, -1, 0, 0, 0, 4), "BottomBuffer must be at least 0, got -1"),
])
def test_negative_delay_line(ctor, args, fragment):
    with fails(ModelError, fragment, arg="A"):
        ctor("A", S(), OBJ_IN_DB, *args, 0, 0, 0, "A")


def test_negative_padding():
    with fails(ModelError, "PadTile (-1, 0, 0, 0) must be four non-negative item counts (left, right, top, bottom) "
               "(e.g. (1, 1, 0, 0), or 0 for none)",
               arg="A"):
        KerArgP("A", S(), OBJ_IN_DB, 8, 8, 8, 8, (-1, 0, 0, 0), 0, 4, 0, 0, 0, "A")


@pytest.mark.parametrize("pad", [(1, 0, 0), "1", (1.0, 0, 0, 0)])
def test_padding_that_is_not_a_v4s(pad):
    with fails(ModelError, f"PadExec {pad!r} must be a v4s: (left, right, top, bottom) (four item counts, e.g. (1, 1, "
               "0, 0), or 0 for none)", arg="A"):
        KerArgP("A", S(), OBJ_IN_DB, 8, 8, 8, 8, 0, pad, 4, 0, 0, 0, "A")


def test_used_part_larger_than_the_plane():
    with fails(ModelError, "UsedW 9 must be between 1 and 8", "the used part of the plane cannot exceed the plane (W)",
               arg="A"):
        KerArgP("A", S(), OBJ_IN_DB, 8, 8, 9, 8, 0, 0, 4, 0, 0, 0, "A")
    with fails(ModelError, "UsedH 0 must be between 1 and 8", "cannot exceed the plane (H)", arg="A"):
        KerArgPart("A", S(), OBJ_IN_DB, 8, 8, 8, 0, 4, 0, 0, 0, "A")


def test_pad_value_of_the_wrong_type():
    with fails(ModelError, "PadValue must be an integer, got 'x'", arg="A"):
        KerArgPV("A", S(), OBJ_IN_DB, 8, 8, 8, 8, 0, 0, "x", 4, 0, 0, 0, "A")


def test_object_type_with_unknown_bits():
    with fails(ModelError, "object type has unknown bit(s) 0x4000000000000", "build it from O_* flags or OBJ_* names",
               arg="A"):
        KerArg("A", S(), OBJ_IN_DB | (1 << 50), 8, 8, 4, 0, 0, 0, "A")


@pytest.mark.parametrize("flag,name,what", [(O_BIT, "O_BIT", "item sizes in bits"), (O_HWC, "O_HWC", "HWC tensors"),
                                            (O_ALIAS, "O_ALIAS", "aliased arguments"),
                                            (O_NE16_DW, "O_NE16_DW", "NE16 weight layouts")])
def test_unsupported_object_flags(flag, name, what):
    with fails(ModelError, f"{name} ({what}) is not supported yet", "remove the flag", arg="A"):
        KerArg("A", S(), OBJ_IN_DB | flag, 8, 8, 4, 0, 0, 0, "A")


def test_const_on_an_output():
    with fails(ModelError, "O_CONST marks a constant input, but this argument is not a pure input",
               "drop O_CONST or make the argument O_IN only", arg="A"):
        KerArg("A", S(), OBJ_OUT_DB | O_CONST, 8, 8, 4, 0, 0, 0, "A")


@pytest.mark.parametrize("flags,fragment,fix", [
    (OBJ_IN_DB | O_NO_LOAD, "O_NO_LOAD applies to O_IN|O_BUFF arguments", "use it with O_IN|O_BUFF"),
    (OBJ_IN_DB | O_ALWAYS_LOAD, "O_ALWAYS_LOAD applies to O_IN|O_BUFF arguments", "use it with O_IN|O_BUFF"),
    (O_IN | O_BUFF | O_NO_STORE, "O_NO_STORE applies to O_OUT|O_BUFF arguments", "use it with O_OUT|O_BUFF"),
])
def test_load_store_flags_need_a_buffer(flags, fragment, fix):
    with fails(ModelError, fragment, fix, arg="A"):
        KerArg("A", S(), flags, 8, 8, 4, 0, 0, 0, "A")


def test_no_load_and_always_load():
    with fails(ModelError, "O_NO_LOAD and O_ALWAYS_LOAD contradict each other", "keep one", arg="A"):
        KerArg("A", S(), O_IN | O_BUFF | O_NO_LOAD | O_ALWAYS_LOAD, 8, 8, 4, 0, 0, 0, "A")


def test_two_tile_flags():
    with fails(ModelError, "more than one of O_TILE0/O_TILE1/O_TILE2 is set", "an argument is tiled along one tiled "
               "space", arg="A"):
        KerArg("A", S(), OBJ_IN_DB | O_TILE0 | O_TILE1, 8, 8, 4, 0, 0, 0, "A")


def test_constraint_with_unknown_bits():
    with fails(ModelError, "constraint has unknown bit(s) 0x1000", "use OBJ_CONSTRAINTS_* names", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 1 << 12, 0, "A")


@pytest.mark.parametrize("constraint,text", [
    (OBJ_CONSTRAINTS_TILE_HOR | OBJ_CONSTRAINTS_TILE_VER, "TILE_HOR and TILE_VER"),
    (OBJ_CONSTRAINTS_PAD_REM | OBJ_CONSTRAINTS_DROP_REM, "PAD_REM and DROP_REM"),
])
def test_contradictory_constraints(constraint, text):
    with fails(ModelError, f"constraints {text} contradict each other", "keep one of them", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, constraint, 0, "A")


@pytest.mark.parametrize("constraint,what", [
    (OBJ_CONSTRAINTS_DYNAMIC, "run-time tile sizes (OBJ_CONSTRAINTS_DYNAMIC)"),
    (OBJ_CONSTRAINTS_2D, "2D strided arguments (OBJ_CONSTRAINTS_2D)"),
])
def test_unsupported_constraints(constraint, what):
    with fails(ModelError, f"{what} is not supported yet", "remove the constraint", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, constraint, 0, "A")


def test_one_preferred_tile_without_preferred_size():
    with fails(ModelError, "OBJ_CONSTRAINTS_ONEPREFTILE needs a PreferedTileSize",
               "give the tile size the single tile must have", arg="A"):
        KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, OBJ_CONSTRAINTS_ONEPREFTILE, 0, "A")


def test_min_tile_size_without_preferred_size():
    a = KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A")
    with fails(ModelError, "SetKerArgMinTileSize needs a PreferedTileSize (the minimum applies to the preferred "
               "multiple: give 'A' a PreferedTileSize)", arg="A"):
        SetKerArgMinTileSize(a, 2)


def test_refused_min_tile_size_leaves_the_argument_unchanged():
    a = KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A")
    with fails(ModelError, "SetKerArgMinTileSize needs a PreferedTileSize", arg="A"):
        SetKerArgMinTileSize(a, 2)
    assert a.min_tile == 0


def test_min_tile_size_of_something_else():
    with fails(ModelError, "SetKerArgMinTileSize expects a kernel argument, got 'A' (pass the object KerArg(...) "
               "returned)"):
        SetKerArgMinTileSize("A", 2)


def test_negative_min_tile_size():
    a = KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 2, "A")
    with fails(ModelError, "MinTileSize must be at least 0, got -2 (use 0 or more)", arg="A"):
        SetKerArgMinTileSize(a, -2)
    assert a.min_tile == 0


def test_min_tile_size_after_use():
    args = mat_kerargs()
    UserKernel(*mat_add(kerargs=args))
    with fails(ModelError, "SetKerArgMinTileSize on an argument already part of a user kernel",
               "set it before passing the argument to UserKernel", arg="In1"):
        SetKerArgMinTileSize(args[0], 2)


def test_pad_align():
    with fails(ModelError, "KerArgPadAlign with a TileWPadAlign is not supported yet", "use KerArg, or align W yourself",
               arg="A"):
        KerArgPadAlign("A", S(), OBJ_IN_DB, 8, 8, 4, 4, 4, 0, 0, 0, "A")


def test_aliased_argument():
    with fails(ModelError, "KerArgAliased (arguments sharing L1 memory, O_ALIAS) is not supported yet",
               "declare a separate argument", arg="A"):
        KerArgAliased("A", S(), 0, OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A")


@pytest.mark.parametrize("ctor", [KerArg2D, KerArg3D, KerArg2DP, KerArg3DP])
def test_v2_strided_arguments(ctor):
    with fails(ModelError, f"{ctor.__name__} (v2 strided/3D argument) is not supported yet",
               "declare the planes as a space"):
        ctor("A", OBJ_IN_DB, 8, 8, 4)


def test_group_argument_must_be_input_or_output():
    with fails(ModelError, "a kernel group argument is O_IN or O_OUT (use O_IN, O_OUT or O_IN|O_OUT)", arg="A"):
        KerGroupArg("A", O_BUFF, 8, 4, "A")
    with fails(ModelError, "ArgSize must be at least 1, got 0", arg="A"):
        KerGroupArg("A", O_IN, 0, 4, "A")


def test_kerargs_item_of_the_wrong_kind():
    with fails(ModelError, "KerArgs expects kernel arguments, got 'In1' (build each item with KerArg(...) (or "
               "KerArgP, KerArgPad, KerArgPart, ...))"):
        KerArgs("In1")


def test_kernel_argument_bound_to_a_scalar_c_argument():
    with fails(ModelError, "is bound to C argument 'Out' of type 'int', which is not a pointer",
               "kernel arguments live in memory: bind them to pointer C arguments", kernel="K", arg="Out", line=2):
        UserKernel(*mat_add(cargs=CArgs(TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg("int", "Out")),
                            kerargs=mat_kerargs(KerArg("Out", S(), OBJ_OUT_DB, 20, 30, 4, 0, 0, 0, "Out"))))


def test_argument_larger_than_int_offsets():
    with fails(ModelError, "is 3200000000 bytes: the generated C addresses memory with 32-bit int offsets, so an "
               "argument must stay below 2147483648 bytes", "split the data over several kernels", kernel="K",
               arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", S(), OBJ_IN_DB, 40000, 20000, 4, 0, 0, 0, "In1"))))


def test_overlap_as_large_as_the_tiled_dimension():
    with fails(ModelError, "TileOverlap 30 leaves no useful line in a tiled dimension of 30",
               "overlap must be smaller than the tiled dimension", kernel="K", arg="In1"):
        UserKernel(*mat_add(kerargs=mat_kerargs(KerArg("In1", S(), OBJ_IN_DB, 20, 30, 4, 30, 0, 0, "In1"))))


@pytest.mark.parametrize("obj_type", [OBJ_OUT_DB, OBJ_IN_OUT_DB])
def test_negative_tile_overlap_of_an_output(obj_type):
    with fails(ModelError, "TileOverlap must be at least 0 for an output, got -2 (only an input's tiles may skip "
               "lines (a negative overlap); every line of an output is written)", arg="A"):
        KerArg("A", S(), obj_type, 20, 30, 4, -2, 0, 0, "A")


def test_negative_raw_item_size():
    with fails(ModelError, "RawItemSize must be at least 0, got -1 (use 0 or more)", arg="A"):
        KerArgPadAlign("A", S(), OBJ_IN_DB, 8, 8, 0, 4, -1, 0, 0, 0, "A")


# ---------------------------------------------------------------------------------------------
# Calls and their locations


def test_call_location_group_inside_a_user_kernel():
    with fails(ModelError, "call to 'MatSumPar' uses LOC_GROUP/UserKernelCall inside a user kernel",
               "user kernel calls belong in UserKernelGroup; use Call(..., LOC_LOOP, ...)", kernel="K", line=2):
        UserKernel(*mat_add(
            calls=Calls(Call("MatSumPar", LOC_GROUP, add_bindings()))))


def test_call_location_of_a_space_the_kernel_does_not_have():
    with fails(ModelError, "call to 'MatSumPar' at LOC_D0: space KER_ITER_D0 is not in the kernel's iteration space "
               "(KER_ITER_TILE0)", "place the call at a location of an existing space, LOC_PROLOG or LOC_EPILOG",
               kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_D0, add_bindings()))))


def test_call_in_the_body_of_a_loop_that_is_not_innermost():
    with fails(ModelError, "call to 'MatSumPar' at LOC_D0: the body of KER_ITER_D0 is not the innermost loop "
               "(KER_ITER_TILE0 runs inside it), so where the call goes is unclear",
               "use LOC_LOOP_PROLOG (before the inner loop) or LOC_LOOP_EPILOG (after it)", kernel="K"):
        UserKernel(*mat_add(space=planes(), kerargs=mat_kerargs(space=lambda: KerArgSpace(2, D0, T0)), calls=Calls(Call("MatSumPar", LOC_D0, add_bindings()))))


def test_ignored_argument_of_a_sequential_basic_kernel():
    LibKernel("Seq", CALL_SEQUENTIAL, CArgs(TCArg(P32, "A")), "")
    with fails(ModelError, "call to 'Seq': AT_IGNORE_ARG_BINDING for 'A' of a sequential basic kernel (its arguments "
               "are passed in the call, none can be left out)", "bind a value, e.g. Imm(0)", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("Seq", LOC_LOOP, Bindings(AT_IGNORE_ARG_BINDING)))))


def test_bindings_item_that_is_not_a_binding():
    with fails(ModelError, "Bindings expects bindings, got 'In1'", "use K_Arg, C_Arg, Imm, ... or "
               "AT_IGNORE_ARG_BINDING"):
        Bindings("In1")


def test_call_given_a_plain_list_of_non_bindings():
    items = ["In1", "In2", "Out", "W", "H"]
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': 'In1' is not a binding",
               "use K_Arg, C_Arg, Imm, ... (or AT_IGNORE_ARG_BINDING)", kernel="K", line=2):
        UserKernel(*mat_add(
            calls=Calls(Call("MatSumPar", LOC_LOOP, items))))


def test_call_given_a_string_as_binding_list():
    with fails(ModelError, "call to 'MatSumPar': the binding list must be Bindings(...), got 'abc' (wrap the "
               "bindings: Bindings(K_Arg(...), C_Arg(...), Imm(...), ...))"):
        Call("MatSumPar", LOC_LOOP, "abc")


# ---------------------------------------------------------------------------------------------
# Bindings: constructors


def test_binding_selector():
    with fails(ModelError, "999 is not a valid kernel argument selector (use one of KER_ARG_NONE, KER_ARG_TILE, "
               "KER_ARG_TILE_NEXTDB, KER_ARG_TILE_OFF, KER_ARG_TILE_1_2, KER_ARG_TILE_W, ..., KER_ARG_OUTPLANEINDEX "
               "(40 names, values 0..46))"):
        K_Arg("In1", 999)
    with fails(ModelError, "'KER_ARG_TILE' is not a valid kernel argument selector (pass the constant KER_ARG_TILE, "
               "not its name as a string)"):
        K_Arg("In1", "KER_ARG_TILE")


def test_binding_operator():
    with fails(ModelError, "'^' is not a binding operator", "use one of + - * / % << >> & | == != (and '@' for "
               "K_TileOper)"):
        K_ArgOp("In1", KER_ARG_TILE_W, "^", 2)


@pytest.mark.parametrize("make,ctor", [(lambda: K_ArgOp("In1", KER_ARG_TILE_H, "@", 1), "K_ArgOp"),
                                       (lambda: C_ArgImmOper("N", "@", 1), "C_ArgImmOper"),
                                       (lambda: KG_ArgOper("In1", "@", 1), "KG_ArgOper")])
def test_subscript_operator_outside_k_tileoper(make, ctor):
    with fails(ModelError, f"{ctor}: operator '@' (subscript) belongs to K_TileOper (use one of + - * / % << >> & | "
               "== !=)", at=make.__code__.co_firstlineno):
        make()


def test_k_argoper_with_a_number_that_is_neither_space_nor_selector():
    with fails(ModelError, "99 is not a valid space (KER_ITER_*) nor kernel argument selector (KER_ARG_*) "
               "(K_ArgOper(Name, Space, Oper, Value) takes a KER_ITER_* space (v3) or, in the guide's v2 form, a "
               "KER_ARG_* selector)"):
        K_ArgOper("In1", 99, "+", 1)


@pytest.mark.parametrize("make,fragment", [
    (lambda: K_ArgOp("In1", KER_ARG_TILE_W, "+", "2"), "K_ArgOp value must be an integer, got '2'"),
    (lambda: Imm("3"), "Imm value must be an integer, got '3'"),
    (lambda: Imm(True), "Imm value must be an integer, got True"),
    (lambda: C_ArgPlusImmOffset("In1", "4"), "offset must be an integer, got '4'"),
    (lambda: K_TileOper("In1", "char *", "+", None), "K_TileOper value must be an integer, got None"),
])
def test_binding_value_of_the_wrong_type(make, fragment):
    with fails(ModelError, fragment, at=make.__code__.co_firstlineno):
        make()


def test_k_argpred_selector():
    with fails(ModelError, "K_ArgPred takes KER_ARG_TILEFIRST or KER_ARG_TILELAST, not KER_ARG_TILE (for other values "
               "of the argument use K_Arg or K_ArgPar)", arg="In1"):
        K_ArgPred("In1", KER_ARG_TILE, T0)


def test_k_argpredlist_conjunction():
    with fails(ModelError, "K_ArgPredList takes BIND_PRED_AND or BIND_PRED_OR (BIND_K_ARG is not a conjunction: use "
               "BIND_PRED_AND (&&) or BIND_PRED_OR (||))"):
        K_ArgPredList(BIND_K_ARG, 0)
    with fails(ModelError, "'and' is not a valid predicate conjunction (BIND_PRED_AND/BIND_PRED_OR)"):
        K_ArgPredList("and", 0)


def test_k_argpredlist_count():
    with fails(ModelError, "K_ArgPredList announces 2 predicate(s) but 1 follow"):
        K_ArgPredList(BIND_PRED_AND, 2, K_ArgPred("In1", KER_ARG_TILEFIRST, T0))


def test_k_argpredlist_count_that_is_not_an_integer():
    with fails(ModelError, "K_ArgPredList count must be an integer, got '1' (pass a plain int (not a string, float "
               "or bool))"):
        K_ArgPredList(BIND_PRED_AND, "1", K_ArgPred("In1", KER_ARG_TILEFIRST, T0))


@pytest.mark.parametrize("ctype", [5, "int"])
def test_k_tileoper_access_type_that_is_not_a_pointer(ctype):
    with fails(ModelError, f"K_TileOper's access type must be a C pointer type, got {ctype!r} (e.g. \"char *\": the "
               "tile pointer is cast to it before the operator)", arg="In1"):
        K_TileOper("In1", ctype, "+", 1)


def test_kerdim_selector():
    with fails(ModelError, "9 is not a valid kernel dimension (K_INP, K_OUTP, K_W, K_H)", "use one of K_INP"):
        KerDim(9)


def test_iterator_index_space():
    with fails(ModelError, "77 is not a valid iterator", "use one of KER_ITER_TILE0"):
        Ker_IteratorIndex(77)
    with fails(ModelError, "'D0' is not a valid space", "use KER_ITER_TILE0..2"):
        K_ArgPar("In1", KER_ARG_PARTILE_SIZE, "D0")


# ---------------------------------------------------------------------------------------------
# Bindings checked against the user kernel


def test_k_tileoper_unknown_argument():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': K_TileOper names unknown kernel argument 'Nope'",
               "kernel arguments are: In1, In2, Out", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(K_TileOper("Nope", "int *", "+", 1), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_k_tileoper_subscript_bound_to_a_pointer():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': the binding gives an integer but 'In1' is "
               "'int * __restrict__'", "K_TileOper with '@' reads one item; other operators give a pointer",
               kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(K_TileOper("In1", "int *", "@", 1), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


@pytest.mark.parametrize("pred", [Imm(1), K_Arg("In1", KER_ARG_TILE_H)])
def test_k_argpredlist_of_something_else_than_predicates(pred):
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': K_ArgPredList takes K_ArgPred(..., "
               "KER_ARG_TILEFIRST|KER_ARG_TILELAST, ...) (build each predicate with K_ArgPred(Arg, KER_ARG_TILEFIRST, "
               "Space))", kernel="K"):
        UserKernel(*mat_add(calls=add_calls(K_ArgPredList(BIND_PRED_AND, 1, pred))))


def test_predicate_bound_to_a_pointer():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': KER_ARG_TILEFIRST gives an integer but 'In1' is "
               "'int * __restrict__'", "KER_ARG_TILE/KER_ARG_TILE_NEXTDB/KER_ARG bind pointers", kernel="K",
               arg="In1", line=2):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(
            K_ArgPredList(BIND_PRED_AND, 1, K_ArgPred("In1", KER_ARG_TILEFIRST, T0)), K_Arg("In2", KER_ARG_TILE),
            K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_immediate_bound_to_a_pointer():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': Imm(3) bound to pointer argument 'In1' ('int * "
               "__restrict__')", "only Imm(0) (a null pointer) makes sense for a pointer", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(Imm(3), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_kerdim_in_a_v3_kernel():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': KerDim needs a kernel declared with "
               "KernelDimensions (v2 form)", "bind the value with Imm(...)", kernel="K"):
        UserKernel(*mat_add(calls=add_calls(KerDim(K_W))))


def test_iterator_index_of_a_space_the_kernel_does_not_have():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': Ker_IteratorIndex(KER_ITER_D0): no such space in "
               "the kernel (the kernel's spaces: KER_ITER_TILE0)", kernel="K"):
        UserKernel(*mat_add(calls=add_calls(Ker_IteratorIndex(D0))))


def test_user_symbol_binding():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': UserSymb('X') is not supported yet (user symbols)",
               "bind the value with Imm(...) or a C argument", kernel="K"):
        UserKernel(*mat_add(calls=add_calls(UserSymb("X"))))


@pytest.mark.parametrize("make,name", [(BindKExpr, "BindKExpr"), (BindKGExpr, "BindKGExpr")])
def test_expression_bindings(make, name):
    with fails(ModelError, f"binding of 'H' in call to 'MatSumPar': {name}('KArg(In1, TILE_H)') is not supported "
               "yet (the original's binding expression language)", "use K_Arg / K_ArgOp / C_Arg* / Imm bindings",
               kernel="K"):
        UserKernel(*mat_add(calls=add_calls(make("KArg(In1, TILE_H)"))))


def test_selector_not_supported_yet():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': selector KER_ARG_FIRST_TILE_W is not supported yet",
               "see docs/semantics.md for the supported KER_ARG_* selectors", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_Arg("In1", KER_ARG_FIRST_TILE_W))))


def test_space_of_a_binding_absent_from_the_kernel():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': K_ArgPar(..., KER_ITER_D0): no such space in the "
               "kernel", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_ArgPar("In1", KER_ARG_PARTILE_SIZE, D0))))
    with fails(ModelError, "K_ArgOper(..., KER_ITER_D0): no such space in the kernel (the kernel's spaces: "
               "KER_ITER_TILE0)", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_ArgOper("In1", D0, "+", 1))))


def test_partile_selector_without_space():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': KER_ARG_PARTILE_SIZE needs a space: use "
               "K_ArgPar('In1', KER_ARG_PARTILE_SIZE, Space) (Space: a D space of the argument's KerArgSpace)",
               kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_Arg("In1", KER_ARG_PARTILE_SIZE))))


def test_partile_selector_on_a_tiled_space():
    with fails(ModelError, "KER_ARG_PARTILE_SIZE of KER_ITER_TILE0: 'In1' has no such non-tiled space in its "
               "KerArgSpace", "name a D space listed in the argument's KerArgSpace", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_ArgPar("In1", KER_ARG_PARTILE_SIZE, T0))))


def test_plane_index_without_the_plane_loop():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': KER_ARG_INPLANEINDEX needs the KER_IN_PLANE loop "
               "(add a KER_ITER_D0 space to KernelIterSpace (KER_IN_PLANE is KER_ITER_D0))", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_Arg("In1", KER_ARG_INPLANEINDEX))))
    with fails(ModelError, "KER_ARG_OUTPLANEINDEX needs the KER_OUT_PLANE loop (add KER_OUT_PLANE to "
               "KernelIterationOrder)", kernel="K", arg="In1"):
        UserKernel("K", KernelDimensions(1, 20, 30, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR, mat_cargs(), Calls(Call("MatSumPar", LOC_INNER_LOOP, add_bindings(K_Arg("In1", KER_ARG_OUTPLANEINDEX)))), v2_kerargs())


def test_iteration_index_without_space():
    with fails(ModelError, "KER_ARG_IT_INDEX needs a space: K_ArgPar('In1', KER_ARG_IT_INDEX, Space) (Space: the loop "
               "whose index is meant)", kernel="K",
               arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_Arg("In1", KER_ARG_IT_INDEX))))


def test_padding_bound_to_something_else_than_a_v4s():
    with fails(ModelError, "binding of 'H' in call to 'MatSumPar': KER_ARG_PAD gives a v4s padding but 'H' is "
               "'unsigned int'", "bind it to a v4s argument", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=add_calls(K_Arg("In1", KER_ARG_PAD))))


def test_size_bound_to_a_pointer():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': KER_ARG_TILE_W gives an integer but 'In1' is "
               "'int * __restrict__'", kernel="K", arg="In1"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(K_Arg("In1", KER_ARG_TILE_W), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_group_operator_in_a_user_kernel():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': KG_ArgOper belongs in a kernel group's "
               "UserKernelCall", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(KG_ArgOper("In1", "*", 2), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


@pytest.mark.parametrize("make,ctor", [(lambda: C_ArgCOper("In1", "+", "Nope"), "C_ArgCOper"),
                                       (lambda: C_ArgPlusCvarOffset("In1", "Nope"), "C_ArgPlusCvarOffset")])
def test_c_variable_that_is_not_a_c_argument(make, ctor):
    with fails(ModelError, f"binding of 'In1' in call to 'MatSumPar': {ctor} names unknown C argument 'Nope'",
               "C arguments are: In1, In2, Out", kernel="K", at=make.__code__.co_firstlineno):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(make(), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_plane_offset_of_a_space_the_kernel_does_not_have():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': C_ArgPlusPlaneOffset('In1', KER_ITER_D0, ...): "
               "no such space in the kernel", "use a space of the kernel's iteration space", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(C_ArgPlusPlaneOffset("In1", D0, 4), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


def test_integer_c_operation_bound_to_a_pointer():
    with fails(ModelError, "binding of 'In1' in call to 'MatSumPar': C_ArgImmOper('In1') gives an integer but 'In1' "
               "is 'int * __restrict__' (only + and - keep a pointer (C_ArgPlusImmOffset))", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, Bindings(C_ArgImmOper("In1", "*", 2), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H))))))


@pytest.mark.parametrize("make,fragment", [
    (lambda: K_Arg(None, KER_ARG_TILE), "K_Arg kernel argument name None"),
    (lambda: K_ArgPar(5, KER_ARG_PARTILE_SIZE, D0), "K_ArgPar kernel argument name 5"),
    (lambda: K_TileOper(None, "char *", "@", 1), "K_TileOper kernel argument name None"),
    (lambda: C_Arg(None), "C_Arg C argument name None"),
    (lambda: C_ArgCOper("In1", "+", 3), "C_ArgCOper C argument name 3"),
    (lambda: KG_ArgOper(None, "*", 3), "KG_ArgOper C argument name None"),
])
def test_binding_name_that_is_not_a_string(make, fragment):
    with fails(ModelError, f"{fragment} is not a valid C identifier (use letters, digits and '_' only, not starting "
               "with a digit)", at=make.__code__.co_firstlineno):
        make()


@pytest.mark.parametrize("make,what", [(lambda: Call(None, LOC_LOOP, add_bindings()), "called basic kernel"),
                                       (lambda: UserKernelCall(7, LOC_GROUP, Bindings()), "called user kernel")])
def test_call_name_that_is_not_a_string(make, what):
    with fails(ModelError, f"{what} name", "is not a valid C identifier", at=make.__code__.co_firstlineno):
        make()


def test_c_argument_name_of_a_kernel_argument_that_is_not_a_string():
    with fails(ModelError, "C argument name 5 is not a valid C identifier (use letters, digits and '_' only, not "
               "starting with a digit)", arg="In1"):
        KerArg("In1", S(), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, 5)


# ---------------------------------------------------------------------------------------------
# Tilings the generated code cannot express


def test_next_buffer_of_an_argument_that_no_tiling_double_buffers():
    """'In' is double buffered (O_DB) but whole (O_NTILED): every tiling reads it once."""
    LibKernel("Fir", CALL_SEQUENTIAL, CArgs(TCArg(P32, "In"), TCArg(P32, "Next"), TCArg(P32, "Out")), "", Cost="1")
    with fails(TilingError, "no tiling that fits can be generated: KER_ARG_TILE_NEXTDB of 'In': the argument is not "
               "double buffered in this tiling (it moves once, or is single buffered), so there is no next buffer",
               kernel="K", arg="In"):
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, CArgs(TCArg(P32, "In"), TCArg(P32, "Out")),
                   Calls(Call("Fir", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_NEXTDB),
                                                        K_Arg("Out", KER_ARG_TILE)))),
                   KerArgs(KerArg("In", S(), O_IN | O_DB | O_NTILED, 1, 100, 4, 0, 0, 0, "In"),
                           KerArg("Out", S(), OBJ_OUT_DB, 1, 100, 4, 0, 0, 0, "Out")))


def test_next_buffer_of_an_argument_declared_without_o_db_says_to_add_it():
    LibKernel("Fir", CALL_SEQUENTIAL, CArgs(TCArg(P32, "In"), TCArg(P32, "Next"), TCArg(P32, "Out")), "", Cost="1")
    with fails(ModelError, "binding of 'Next' in call to 'Fir': KER_ARG_TILE_NEXTDB needs a double-buffered argument, "
               "but 'In' is declared without O_DB (add O_DB to its object type (e.g. OBJ_IN_DB))", kernel="K",
               arg="In", line=4):
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, CArgs(TCArg(P32, "In"), TCArg(P32, "Out")),
                   Calls(Call("Fir", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_NEXTDB),
                                                        K_Arg("Out", KER_ARG_TILE)))),
                   KerArgs(KerArg("In", S(), OBJ_IN, 1, 100, 4, 0, 0, 0, "In"),
                           KerArg("Out", S(), OBJ_OUT_DB, 1, 100, 4, 0, 0, 0, "Out")))


def test_prolog_call_binding_a_tile_in_flight_names_the_argument():
    SetL1MemorySize(1024)
    LibKernel("Zero", CALL_SEQUENTIAL, CArgs(TCArg(P32, "In"), TCArg("unsigned int", "N")), "", Cost="1")
    with fails(TilingError, "no tiling that fits can be generated: a call outside the T0 loop binds the tile of 'In'",
               kernel="K", arg="In"):
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, CArgs(TCArg(P32, "In"), TCArg(P32, "Out")),
                   Calls(Call("Zero", LOC_LOOP_PROLOG, Bindings(K_Arg("In", KER_ARG_TILE), Imm(4))),
                         Call("MatSumPar", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE),
                                                              K_Arg("Out", KER_ARG_TILE), Imm(1),
                                                              K_Arg("In", KER_ARG_TILE_H)))),
                   KerArgs(KerArg("In", S(), OBJ_IN_DB, 1, 1000, 4, 0, 0, 0, "In"),
                           KerArg("Out", S(), OBJ_OUT_DB, 1, 1000, 4, 0, 0, 0, "Out")))


def test_tile_needing_a_3d_transfer():
    """Vertical tiles (columns of H lines) of both planes of D1 (one chunk) in a layout where the
    planes of D0 sit between them: lines of two strides, so no tiling can be moved."""
    SetL1MemorySize(600)
    LibKernel("Cp", CALL_SEQUENTIAL, CArgs(TCArg(P32, "In"), TCArg(P32, "Out")), "", Cost="1")
    space = KernelIterSpace(3, IterParSpace(SPACE_PROP(D1, SPACE_PROP_ONE_TILE), 2, 1), IterFixedSpace(D0, 4),
                            IterTiledSpace(T0))
    with fails(TilingError, "no tiling that fits can be generated: a tile made of [H] x [D1] lines "
               "with different strides needs a 3D transfer, which the cluster DMA cannot do",
               "change the argument's KerArgSpace or tiling orientation", kernel="K", arg="In"):
        UserKernel("K", space, TILE_VER, CArgs(TCArg(P32, "In"), TCArg(P32, "Out")),
                   Calls(Call("Cp", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE)))),
                   KerArgs(KerArg("In", KerArgSpace(3, D1, D0, T0), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "In"),
                           KerArg("Out", KerArgSpace(3, D1, D0, T0), OBJ_OUT_DB, 8, 8, 4, 0, 0, 0, "Out")))


# ---------------------------------------------------------------------------------------------
# v2 forms (KernelDimensions / KernelIterationOrder)


def v2_kerargs(*given, w=20, h=30):
    """In1, In2, Out in the v2 form; those ``given`` replace the argument of the same name."""
    mine = {a.name: a for a in given}
    std = [KerArg(n, t, w, h, 4, 0, 0, 0, n, 0) for n, t in (("In1", OBJ_IN_DB), ("In2", OBJ_IN_DB), ("Out", OBJ_OUT_DB))]
    return KerArgs(*(mine.pop(a.name, a) for a in std))


def v2_add(dims=None, order=None, kerargs=None):
    return ("K", dims or KernelDimensions(1, 20, 30, 1), order or KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
            mat_cargs(), Calls(Call("MatSumPar", LOC_INNER_LOOP, add_bindings())), kerargs or v2_kerargs())


def test_v2_form_without_dimensions_and_order():
    with fails(ModelError, "the v2 form expects KernelDimensions(...) and KernelIterationOrder(...) as 2nd and 3rd "
               "arguments", "or use the v3 form UserKernel(Name, KernelIterSpace(...), Orientation, ...)", kernel="K"):
        UserKernel("K", 1, 2, TILE_HOR, mat_cargs(), Calls(), v2_kerargs())


def test_iteration_order_dimension_that_is_not_an_integer():
    with fails(ModelError, "KernelIterationOrder: 'KER_DIM2' is not a dimension (KER_DIMn) or a count (e.g. "
               "KernelIterationOrder(KER_DIM2, KER_TILE))"):
        KernelIterationOrder("KER_DIM2", KER_TILE)


def test_kernel_dimension_of_the_wrong_type():
    with fails(ModelError, "KernelDimensions W must be an integer, got '20'", kernel="K"):
        UserKernel(*v2_add(dims=KernelDimensions(1, "20", 30, 1)))


def test_iteration_order_without_iterator():
    with fails(ModelError, "KernelIterationOrder lists no iterator", "e.g. KernelIterationOrder(KER_DIM2, KER_TILE)",
               kernel="K"):
        UserKernel(*v2_add(order=KernelIterationOrder(KER_DIM1)))


def test_iteration_order_with_a_v3_only_space():
    with fails(ModelError, "KernelIterationOrder: KER_ITER_D3 is not a v2 iterator", "use KER_TILE, KER_TILE1",
               kernel="K"):
        UserKernel(*v2_add(order=KernelIterationOrder(KER_DIM2, KER_ITER_D3)))


def test_iteration_order_lists_an_iterator_twice():
    with fails(ModelError, "KernelIterationOrder(KER_TILE, KER_TILE) lists an iterator twice (each iterator names one "
               "loop)", kernel="K"):
        UserKernel(*v2_add(order=KernelIterationOrder(KER_DIM3, KER_TILE, KER_TILE)))


def test_in_out_plane_combined_with_in_plane():
    with fails(ModelError, "KER_IN_OUT_PLANE traverses input and output planes together: it cannot be combined with "
               "KER_IN_PLANE or KER_OUT_PLANE", kernel="K"):
        UserKernel(*v2_add(order=KernelIterationOrder(KER_DIM3, KER_IN_OUT_PLANE, KER_IN_PLANE)))


def test_in_out_plane_with_different_plane_counts():
    with fails(ModelError, "KER_IN_OUT_PLANE needs as many input as output planes, KernelDimensions gives 2 and 3",
               kernel="K"):
        UserKernel(*v2_add(dims=KernelDimensions(2, 20, 30, 3), order=KernelIterationOrder(KER_DIM3, KER_IN_OUT_PLANE, KER_TILE)))


def test_planes_no_loop_visits():
    with fails(ModelError, "has 3 input planes but no loop of the iteration order visits them (only plane 0 would be "
               "read)", "add KER_IN_PLANE to KernelIterationOrder, or make the argument 2D", kernel="K", arg="In1"):
        UserKernel(*v2_add(dims=KernelDimensions(3, 20, 30, 1), kerargs=v2_kerargs(KerArg("In1", OBJ_IN_DB_3D, 20, 30, 4, 0, 0, 0, "In1", 0))))


def test_output_planes_no_loop_visits_says_written():
    with fails(ModelError, "has 3 output planes but no loop of the iteration order visits them (only plane 0 would be "
               "written) (add KER_OUT_PLANE to KernelIterationOrder, or make the argument 2D)", kernel="K", arg="Out"):
        UserKernel(*v2_add(dims=KernelDimensions(1, 20, 30, 3), kerargs=v2_kerargs(KerArg("Out", OBJ_OUT_DB_3D, 20, 30, 4, 0, 0, 0, "Out", 0))))


def test_tiled_along_a_space_the_order_does_not_have():
    with fails(ModelError, "is tiled along KER_TILE1, which the iteration order does not have",
               "add KER_TILE1 to KernelIterationOrder", kernel="K", arg="In1"):
        UserKernel(*v2_add(kerargs=v2_kerargs(KerArg("In1", OBJ_IN_DB | O_TILE1, 20, 30, 4, 0, 0, 0, "In1", 0))))


@pytest.mark.parametrize("value,fragment", [("x", "NextPlaneUpdate must be an integer, got 'x' (pass a plain int "
                                                     "(not a string, float or bool))"),
                                              (-1, "NextPlaneUpdate must be at least 0, got -1 (use 0 or more)")])
def test_next_plane_update_of_the_wrong_type(value, fragment):
    with fails(ModelError, fragment, arg="A"):
        KerArg("A", OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "A", value)


# ---------------------------------------------------------------------------------------------
# Kernel groups


def group_with_k(*bindings, iterations=None, kerargs=()):
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    calls = Calls(UserKernelCall("K", LOC_GROUP, Bindings(*bindings)))
    if iterations is None:
        return UserKernelGroup("G", mat_cargs(), calls)
    return UserKernelGroupK("G", iterations, mat_cargs(), 0, calls, kerargs)


def test_group_name_must_be_an_identifier():
    with fails(ModelError, "kernel group name '1G' is not a valid C identifier"):
        OpenKernelGroup("1G")


def test_group_named_like_a_declared_group():
    group_with_k(C_Arg("In1"), C_Arg("In2"), C_Arg("Out"))
    with fails(ModelError, "a user kernel or group named 'G' is already declared",
               "user kernel and group names must be unique", kernel="G"):
        OpenKernelGroup("G")


def test_group_template_of_a_group_never_opened():
    with fails(ModelError, "no kernel group 'G' was opened",
               "bracket its user kernels with OpenKernelGroup/CloseKernelGroup first", kernel="G"):
        UserKernelGroup("G", mat_cargs(), Calls())


def test_group_template_while_the_group_is_open():
    OpenKernelGroup("G")
    with fails(ModelError, "the group is still open", "call CloseKernelGroup() before UserKernelGroup(...)",
               kernel="G"):
        UserKernelGroup("G", mat_cargs(), Calls())


def test_group_template_defined_twice():
    OpenKernelGroup("G")
    CloseKernelGroup()
    UserKernelGroup("G", mat_cargs(), Calls())
    with fails(ModelError, "the group's C template is already defined (declare UserKernelGroup once per group)",
               kernel="G"):
        UserKernelGroup("G", mat_cargs(), Calls())


def test_group_with_stacked_tensors():
    OpenKernelGroup("G")
    CloseKernelGroup()
    with fails(ModelError, "UserKernelGroupK: stacked tensors are not supported yet", "pass 0", kernel="G"):
        UserKernelGroupK("G", 2, mat_cargs(), 1, Calls())


def test_group_iteration_count():
    OpenKernelGroup("G")
    CloseKernelGroup()
    with fails(ModelError, "IterCount must be at least 1, got 0", kernel="G"):
        UserKernelGroupK("G", 0, mat_cargs(), 0, Calls())


def test_group_binding_names_unknown_group_c_argument():
    with fails(ModelError, "call to 'K': C_Arg names unknown group C argument 'Nope'",
               "group C arguments are: In1, In2, Out", kernel="G"):
        group_with_k(C_Arg("Nope"), C_Arg("In2"), C_Arg("Out"))


def test_group_binding_with_an_iterator():
    with fails(ModelError, "call to 'K': C_ArgIndex has no iterator in a kernel group",
               "use C_Arg, KG_ArgOper, C_ArgIndirect or Imm", kernel="G"):
        group_with_k(C_ArgIndex("In1", D0, 1), C_Arg("In2"), C_Arg("Out"))


def test_group_immediate_bound_to_a_pointer():
    with fails(ModelError, "call to 'K': Imm(4) bound to pointer argument 'In1'", "pass a group C argument", kernel="G"):
        group_with_k(Imm(4), C_Arg("In2"), C_Arg("Out"))


@pytest.mark.parametrize("kind", ["K_Arg", "KerDim", "AT_IGNORE_ARG_BINDING"])
def test_group_binding_of_a_kind_groups_do_not_have(kind):
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    with fails(ModelError, "call to 'K': only C_Arg, KG_ArgOper, C_ArgIndirect and Imm bindings are allowed in a "
               "kernel group", "use C_Arg(...) or Imm(...)", kernel="G"):
        UserKernelGroup("G", mat_cargs(), Calls(UserKernelCall("K", LOC_GROUP, Bindings(K_Arg("In1", KER_ARG_TILE) if kind == "K_Arg" else KerDim(K_W) if kind == "KerDim" else AT_IGNORE_ARG_BINDING, C_Arg("In2"), C_Arg("Out")))))


def test_kernel_group_arguments_of_the_wrong_kind():
    OpenKernelGroup("G")
    CloseKernelGroup()
    with fails(ModelError, "KerGroupArgs expects kernel group arguments, got KerArg 'A' (build each item with "
               "KerGroupArg(...))", kernel="G"):
        UserKernelGroupK("G", 1, mat_cargs(), 0, Calls(), KerArgs(KerArg("A", S(), OBJ_IN_DB, 8, 8, 4, 0, 0, 0, "A")))


def test_generation_with_a_group_still_open():
    OpenKernelGroup("G")
    with fails(ModelError, "kernel group 'G' is still open", "call CloseKernelGroup()", kernel="G"):
        GenerateTilingCode()


def test_group_operator_subscript():
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    with fails(ModelError, "KG_ArgOper: operator '@' (subscript) belongs to K_TileOper (use one of + - * / % << >> & "
               "| == !=)"):
        KG_ArgOper("In1", "@", 1)


def test_group_scalar_bound_to_a_pointer():
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    with fails(ModelError, "call to 'K': C_Arg('A') gives an integer but 'In1' is 'int * __restrict__' (C argument "
               "'A' is 'int')", kernel="G"):
        UserKernelGroup("G", CArgs(TCArg("int", "A"), TCArg(P32, "In2"), TCArg(P32, "Out")), Calls(UserKernelCall("K", LOC_GROUP, Bindings(C_Arg("A"), C_Arg("In2"), C_Arg("Out")))))


def test_group_operator_that_does_not_keep_a_pointer():
    with fails(ModelError, "call to 'K': KG_ArgOper('In1') gives an integer but 'In1' is 'int * __restrict__' (only + "
               "and - keep a pointer (C_ArgPlusImmOffset))", kernel="G"):
        group_with_k(KG_ArgOper("In1", "<<", 1), C_Arg("In2"), C_Arg("Out"))


def test_group_indirection_of_a_scalar():
    OpenKernelGroup("G")
    UserKernel(*mat_add("K", cargs=mat_cargs(TCArg("int", "N")), calls=add_calls(C_Arg("N"))))
    CloseKernelGroup()
    with fails(ModelError, "call to 'K': C_ArgIndirect needs a pointer but 'N' is 'int' (use C_Arg for scalar "
               "arguments)", kernel="G"):
        UserKernelGroup("G", mat_cargs(TCArg("int", "N")), Calls(UserKernelCall("K", LOC_GROUP, Bindings(C_Arg("In1"), C_Arg("In2"), C_Arg("Out"), C_ArgIndirect("N", 0)))))


def test_group_calling_with_call_instead_of_user_kernel_call():
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    with fails(ModelError, "Call('K', ...) in a kernel group: a group calls user kernels (use UserKernelCall('K', "
               "LOC_GROUP, Bindings(...)))", kernel="G"):
        UserKernelGroup("G", mat_cargs(), Calls(Call("K", LOC_LOOP, Bindings(C_Arg("In1"), C_Arg("In2"), C_Arg("Out")))))


def test_group_reopened():
    OpenKernelGroup("G")
    CloseKernelGroup()
    with fails(ModelError, "kernel group 'G' was already opened at ", f"{THIS}:", "(give each group its own name)",
               kernel="G"):
        OpenKernelGroup("G")


def test_group_arguments_with_the_same_name_or_an_unknown_c_argument():
    OpenKernelGroup("G")
    CloseKernelGroup()
    with fails(ModelError, "duplicate kernel group argument 'A' (each kernel group argument needs a distinct name)",
               kernel="G"):
        UserKernelGroupK("G", 1, mat_cargs(), 0, Calls(), KerArgs(KerGroupArg("A", O_IN, 8, 4, "In1"), KerGroupArg("A", O_IN, 8, 4, "In2")))
    with fails(ModelError, "is bound to C argument 'Nope', which the group does not declare (group C arguments are: "
               "In1, In2, Out)", kernel="G", arg="A"):
        UserKernelGroupK("G", 1, mat_cargs(), 0, Calls(), KerArgs(KerGroupArg("A", O_IN, 8, 4, "Nope")))
    with fails(ModelError, "C argument name '1A' is not a valid C identifier", arg="A"):
        KerGroupArg("A", O_IN, 8, 4, "1A")


@pytest.mark.parametrize("ctype,value,range_", [("unsigned int", -1, "0..4294967295"),
                                                ("signed char", 128, "-128..127"),
                                                ("unsigned short", 70000, "0..65535")])
def test_immediate_out_of_the_range_of_its_c_type(ctype, value, range_):
    LibKernel("Seq", CALL_SEQUENTIAL, CArgs(TCArg(ctype, "V")), "")
    with fails(ModelError, f"binding of 'V' in call to 'Seq': Imm({value}) does not fit 'V' ('{ctype}', {range_}) "
               "(give a value of the argument's range, or widen its type)", kernel="K"):
        UserKernel(*mat_add(calls=Calls(Call("MatSumPar", LOC_LOOP, add_bindings()), Call("Seq", LOC_LOOP, Bindings(Imm(value))))))


def test_group_immediate_out_of_the_range_of_its_c_type():
    with fails(ModelError, "call to 'K': Imm(-3) does not fit 'N' ('unsigned int', 0..4294967295)", kernel="G",
               line=4):
        OpenKernelGroup("G")
        UserKernel(*mat_add("K", cargs=mat_cargs(TCArg("unsigned int", "N"))))
        CloseKernelGroup()
        UserKernelGroup("G", mat_cargs(), Calls(UserKernelCall("K", LOC_GROUP, Bindings(C_Arg("In1"), C_Arg("In2"), C_Arg("Out"), Imm(-3)))))


@pytest.mark.parametrize("pop", ["PopUserKernel", "CopyAndPopUserKernel"])
def test_popping_a_kernel_its_group_calls(fresh_model, pop):
    group_with_k(C_Arg("In1"), C_Arg("In2"), C_Arg("Out"))
    with fails(ModelError, f"{pop}: kernel group 'G' calls 'K' (pop it before UserKernelGroup('G', ...) declares the "
               "call, or keep it)", kernel="K"):
        PopUserKernel() if pop == "PopUserKernel" else CopyAndPopUserKernel("K")
    assert "K" in fresh_model.kernels
    generate(fresh_model)


# ---------------------------------------------------------------------------------------------
# Kernel stack, infos and L3 homes of declared kernels


def test_pop_without_user_kernel():
    with fails(ModelError, "PopUserKernel: no user kernel to pop"):
        PopUserKernel()


def test_unknown_user_kernel():
    UserKernel(*mat_add("MatAdd"))
    with fails(ModelError, "CopyAndPopUserKernel: no user kernel named 'MatAd'", "declare it with UserKernel first",
               "did you mean 'MatAdd'?"):
        CopyAndPopUserKernel("MatAd")
    with fails(ModelError, "AddKernelInfos: no user kernel named 'Nope'"):
        AddKernelInfos("Nope", AT_KERINFO_OPER, 4)


@pytest.mark.parametrize("make,fragment", [
    (lambda: CopyAndPopUserKernel(["K"]), "CopyAndPopUserKernel: no user kernel named ['K'] (declare it with "
                                          "UserKernel first)"),
    (lambda: UserKernelGroup(["G"], CArgs(), Calls()), "kernel group name ['G'] is not a valid C identifier"),
    (lambda: K_ArgOp("In1", KER_ARG_TILE_W, ["+"], 1), "['+'] is not a binding operator"),
])
def test_names_and_operators_that_are_lists(make, fragment):
    with fails(ModelError, fragment, at=make.__code__.co_firstlineno):
        make()


def test_push_back_of_something_else():
    with fails(ModelError, "PushBackUserKernel expects a kernel returned by CopyAndPopUserKernel, got 'K' (pass the "
               "value CopyAndPopUserKernel returned)"):
        PushBackUserKernel("K")


def test_push_back_of_a_kernel_still_declared():
    t = UserKernel(*mat_add("K"))
    with fails(ModelError, "a user kernel or group named 'K' is already declared", kernel="K"):
        PushBackUserKernel(t)


def test_tile_size_of_an_unknown_argument():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "GetKernelTileSize: kernel 'K' has no argument 'In3' (arguments: In1, In2, Out; did you "
               "mean 'In2'?)", kernel="K"):
        GetKernelTileSize("K", "In3", T0)


def test_tile_size_along_a_space_the_argument_does_not_have():
    t = UserKernel(*mat_add("K"))
    with fails(ModelError, "GetKernelTileSize: argument 'In1' has no space KER_ITER_D0 (its spaces: KER_ITER_TILE0)",
               kernel="K"):
        GetKernelTileSize("K", "In1", D0)
    with fails(ModelError, "GetKernelArgTileSize: argument 'In1' has no space KER_ITER_D0 (its spaces: KER_ITER_TILE0)"):
        GetKernelArgTileSize(t.args[0], D0)


def test_arg_tile_size_of_something_else():
    with fails(ModelError, "GetKernelArgTileSize expects an argument of a kernel's tiling, got 'In1' (use "
               "GetKernelTileSize(Kernel, ArgName, Space), or pass an element of the tiling's .args)"):
        GetKernelArgTileSize("In1", T0)


def test_kernel_info_kind_and_value():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "7 is not a valid kernel info (AT_KERINFO_OPER/AT_KERINFO_BANDWIDTH)"):
        AddKernelInfos("K", 7, 4)
    with fails(ModelError, "NumVal must be an integer, got '4'"):
        AddKernelInfos("K", AT_KERINFO_OPER, "4")


def test_argument_dimensions():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "AddKernelArgDim: kernel 'K' has no argument 'Nope' (arguments: In1, In2, Out)", kernel="K"):
        AddKernelArgDim("K", "Nope", 2, 4, 4)
    with fails(ModelError, "AddKernelArgDim announces 3 dimension(s) but 2 follow (pass 2 as NDim (or -1 before a "
               "0-terminated list))", kernel="K", arg="In1"):
        AddKernelArgDim("K", "In1", 3, 4, 4)
    with fails(ModelError, "dimension must be at least 1, got -4 (use 1 or more)", kernel="K", arg="In1"):
        AddKernelArgDim("K", "In1", 2, -4, 4)
    with fails(ModelError, "dimension must be an integer, got '4'", kernel="K", arg="In1"):
        AddKernelFloatArgDim("K", "In1", 2, "4", 4)


def test_argument_interleave():
    with fails(ModelError, "SetKernelArgInterleave (re-laid-out constant arguments) is not supported yet (drop the "
               "call: the argument keeps its layout)", kernel="K",
               arg="In1"):
        SetKernelArgInterleave("K", "In1", 2)


def test_l3_home_of_an_unknown_argument():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "SetKerArgInL3: kernel 'K' has no argument 'Nope' (arguments: In1, In2, Out)", kernel="K"):
        SetKerArgInL3("K", "Nope")
    with fails(ModelError, "SetKerArgInL3: no user kernel named 'Nope'"):
        SetKerArgInL3("Nope", "In1")


def test_l3_home_of_a_buffer_names_the_call():
    UserKernel(*mat_add("K", kerargs=mat_kerargs(KerArg("B", S(), OBJ_BUFFER, 20, 30, 4, 0, 0, 0, None))))
    with fails(ModelError, "SetKerArgInL3: 'B' is a pure L1 buffer (neither O_IN nor O_OUT): only inputs and outputs "
               "can be homed in L3 (home an input or an output argument of the kernel)", kernel="K", arg="B"):
        SetKerArgInL3("K", "B")


def test_l3_home_conflicting_with_another_argument_names_the_call():
    UserKernel(*mat_add("K", kerargs=mat_kerargs(KerArg("In2", S(), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"))))
    with fails(ModelError, "SetKerArgInL3: C argument 'In1' is bound to 'In1' (home L3, O_L2DB) and to 'In2' (home "
               "L2): a pointer lives in one memory (set O_L2DB on both or on neither)", kernel="K", arg="In2"):
        SetKerArgInL3("K", "In1")


# ---------------------------------------------------------------------------------------------
# Settings


def test_used_files_count():
    with fails(ModelError, "SetUsedFilesNames announces 2 header(s) but 1 follow", "pass 1 as the count"):
        SetUsedFilesNames(0, 2, "a.h")


def test_used_files_count_that_is_not_an_integer():
    with fails(ModelError, "SetUsedFilesNames count must be an integer, got '1' (pass a plain int (not a string, float "
               "or bool))"):
        SetUsedFilesNames(0, "1", "a.h")


@pytest.mark.parametrize("args,fragment", [((0, 1, 5), "header name 5"), ((7, 0), "standard types header 7"),
                                           ((0, 1, "inc/a.h"), "header name 'inc/a.h'")])
def test_used_file_names_that_are_not_file_names(args, fragment):
    with fails(ModelError, f"{fragment} must be a plain file name (e.g. \"MatAddBasicKernels.h\" (the output "
               "directory is chosen with -o DIR))"):
        SetUsedFilesNames(*args)


@pytest.mark.parametrize("names,fragment", [
    (("a.c", "a.c"), "'a.c' is also another generated file"),
    (("i.c", "i.h", "k.c", "i.h"), "'i.h' is also another generated file"),
    (("a.c", "a.json"), "'a.json' is also the JSON manifest of the kernels"),
])
def test_generated_files_with_the_same_name(names, fragment):
    with fails(ModelError, f"SetGeneratedFilesNames: {fragment} (one would overwrite the other) (give each generated "
               "file its own name)"):
        SetGeneratedFilesNames(*names)


def test_symbol_names_must_be_identifiers():
    with fails(ModelError, "symbol name 'L1 Mem' is not a valid C identifier"):
        SetSymbolNames("L1 Mem", "L2_Memory")
    with fails(ModelError, "symbol name None is not a valid C identifier"):
        SetMemoryBaseNames("L1_Memory", "L2_Memory", None)


@pytest.mark.parametrize("name,use", [
    ("T0Ind", "a loop index"), ("D1Ind_Total", "a loop index"), ("NextT0Ind", "a loop index"),
    ("InPlaneInd", "a loop index"), ("KerArg0", "an argument struct of a basic-kernel call"),
    ("S_KerArg1", "an argument struct of a basic-kernel call"), ("DmaR_Evt_In1", "a DMA event"),
    ("UchanW_Out", "a DMA event"), ("gap_ncore", "the core-count builtin"),
    ("L1_Memory", "the L1 memory symbol (SetSymbolNames)"), ("L2_Memory", "the L2 memory symbol (SetSymbolNames)"),
    ("HyperRam", "the symbol of L3 device AT_MEM_L3_HRAM"), ("MatSumPar", "basic kernel 'MatSumPar'"),
    ("MatrixAdd_Arg_T", "the argument struct type of basic kernel 'MatSumPar'"),
])
def test_c_argument_named_like_a_name_of_the_generated_code(name, use):
    with fails(ModelError, f"C argument '{name}' is also {use} in the generated code (rename the C argument)",
               kernel="K"):
        UserKernel(*mat_add(cargs=mat_cargs(TCArg("int", name))))


def test_group_c_argument_named_like_a_called_kernel_or_the_iteration_index():
    OpenKernelGroup("G")
    UserKernel(*mat_add("K"))
    CloseKernelGroup()
    with fails(ModelError, "C argument 'K' is also user kernel 'K' (called by the group) in the generated code (rename "
               "the C argument)", kernel="G"):
        UserKernelGroup("G", mat_cargs(TCArg("int", "K")), Calls(UserKernelCall("K", LOC_GROUP, Bindings(C_Arg("In1"), C_Arg("In2"), C_Arg("Out")))))
    with fails(ModelError, "C argument 'Iter' is also the group's iteration index in the generated code", kernel="G"):
        UserKernelGroupK("G", 2, mat_cargs(TCArg("int", "Iter")), 0, Calls(UserKernelCall("K", LOC_GROUP, Bindings(C_Arg("In1"), C_Arg("In2"), C_Arg("Out")))))


def test_memory_symbol_named_like_a_user_kernel():
    """The error at the kernel's line names the SetSymbolNames line too."""
    SetSymbolNames("K", "L2_Memory")
    named = current_model().symbols.named_at
    assert named.startswith("SetSymbolNames at ") and named.endswith(f"{THIS}:{sys._getframe().f_lineno - 2}")
    with fails(ModelError, f"user kernel or group name 'K' is also the L1 memory symbol ({named}) in "
               "the generated code (give the kernel or group another name)", kernel="K"):
        UserKernel(*mat_add("K"))
    with fails(ModelError, "user kernel or group name 'K' is also the L1 memory symbol", kernel="K"):
        OpenKernelGroup("K")


@pytest.mark.parametrize("name,use", [("K", "user kernel 'K' (declared at {kernel})"),
                                      ("In1", "a C argument of user kernel 'K' (declared at {kernel})"),
                                      ("MatSumPar", "basic kernel 'MatSumPar' (declared at {lib})"),
                                      ("T0Ind", "a loop index"), ("QspiRam", "the symbol of L3 device AT_MEM_L3_QSPIRAM")])
def test_memory_symbol_named_like_a_name_of_the_generated_code(name, use):
    """The error at the symbols' line names the line of what they clash with."""
    UserKernel(*mat_add("K"))
    model = current_model()
    use = use.format(kernel=model.kernels["K"].where, lib=model.libs["MatSumPar"].where)
    with fails(ModelError, f"memory symbol '{name}' is also {use} in the generated code (choose another symbol name)"):
        SetSymbolNames(name, "L2_Memory")
    with fails(ModelError, f"memory symbol '{name}' is also {use}"):
        SetMemoryDeviceInfos(1, AT_MEM_L2, 1000, name, "0", 0)


def test_l1_and_l2_symbols_with_the_same_name():
    with fails(ModelError, "the L1 and L2 memory symbols are both named 'Mem' (give each memory symbol its own name "
               "(tiles and L3 staging slots are separate areas))"):
        SetSymbolNames("Mem", "Mem")
    with fails(ModelError, "the L1 and L2 memory symbols are both named 'L1_Memory'"):
        SetMemoryBaseNames("L1_Memory", "L1_Memory", "L3_Memory")
    with fails(ModelError, "the L1 and L2 memory symbols are both named 'L2_Memory'"):
        SetMemoryDeviceInfos(1, AT_MEM_L1, 1000, "L2_Memory", "0", 0)


def test_renamed_memory_symbols_are_free_again():
    SetSymbolNames("L1_Mem", "L2_Mem")
    SetSymbolNames("L2_Mem", "L1_Mem")  # swapped: neither is another name of the generated code
    assert UserKernel(*mat_add(cargs=mat_cargs(TCArg("int", "L1_Memory")))).ntiles >= 1


def test_style_1():
    with fails(ModelError, "SetStyle(1) (argument spaces from O_TILE0/1/2 properties in v3 kernels) is not supported "
               "yet", "give each argument a KerArgSpace"):
        SetStyle(1)


def test_memory_sizes():
    with fails(ModelError, "L1 memory size must be at least 1, got 0"):
        SetL1MemorySize(0)
    with fails(ModelError, "L1 memory size must be an integer, got '51200'"):
        SetL1MemorySize("51200")
    with fails(ModelError, "L2 memory size must be at least 1, got -1"):
        SetMemorySizes(51200, -1)


def test_memory_device_infos():
    with fails(ModelError, "SetMemoryDeviceInfos(1, ...) needs 5 values (Space, AvailableMemory, BaseName, "
               "ConstFileName, ExtManaged per device), got 2 (give five values per device, or the number of devices "
               "given as Count)"):
        SetMemoryDeviceInfos(1, AT_MEM_L1, 100)
    with fails(ModelError, "SetMemoryDeviceInfos: AT_MEM_UNDEF is not a memory device (use AT_MEM_L1, AT_MEM_L2 or an "
               "AT_MEM_L3_* RAM or flash)"):
        SetMemoryDeviceInfos(1, AT_MEM_UNDEF, 100, "L1", "0", 0)
    with fails(ModelError, "99 is not a valid memory location (AT_MEM_*)"):
        SetMemoryDeviceInfos(1, 99, 100, "L1", "0", 0)
    with fails(ModelError, "AT_MEM_L1 size must be at least 1, got -100 (use 1 or more)"):
        SetMemoryDeviceInfos(1, AT_MEM_L1, -100, "L1", "0", 0)
    with fails(ModelError, "AT_MEM_L2 size must be at least 1, got 0"):
        SetMemoryDeviceInfos(1, AT_MEM_L2, 0, "L2", "0", 0)
    with fails(ModelError, "AT_MEM_L3_HRAM size must be at least 0, got -1"):
        SetMemoryDeviceInfos(1, AT_MEM_L3_HRAM, -1, "L3", "0", 0)


def test_memory_device_base_name():
    with fails(ModelError, "AT_MEM_L1 base name '1L' is not a valid C identifier (use letters, digits and '_' only, "
               "not starting with a digit)"):
        SetMemoryDeviceInfos(1, AT_MEM_L1, 100, "1L", "0", 0)


def test_inline_modes():
    with fails(ModelError, "SetInlineMode(NEVER_INLINE) (generic kernels reading descriptor tables) is not supported "
               "yet", "use ALWAYS_INLINE"):
        SetInlineMode(NEVER_INLINE)
    with fails(ModelError, "7 is not a valid inline mode", "use one of NEVER_INLINE, ALWAYS_INLINE, SINGLE_INLINE"):
        SetInlineMode(7)


def test_kernel_options():
    with fails(ModelError, "'KER_OPT_BUFFER_PROMOTE' is not a valid kernel option (KER_OPT_*) (pass the constant "
               "KER_OPT_BUFFER_PROMOTE, not its name as a string)"):
        SetKernelOpts("KER_OPT_BUFFER_PROMOTE", KER_OPT_NONE)


def test_kernel_options_with_unknown_bits():
    with fails(ModelError, "kernel option (KER_OPT_*) 32 has unknown bit(s) 0x20 (combine KER_OPT_BUFFER_PROMOTE, "
               "KER_OPT_PARTIAL_BUFFER_PROMOTE, KER_OPT_KEEP_GROUP)"):
        SetKernelOpts(1 << 5, KER_OPT_NONE)


@pytest.mark.parametrize("func", [AT_SetKernelCtrl, AT_GetKernelCtrl])
def test_kernel_control_that_is_a_graph_option(func):
    with fails(ModelError, "AT_GRAPH_TRACE_EXEC is not a kernel option",
               "kernel options: AT_KERNEL_BUFFER_PROMOTE, AT_KERNEL_PARTIAL_BUFFER_PROMOTE, AT_KERNEL_NOSOLUTION_ERROR"):
        func(AT_GRAPH_TRACE_EXEC, *((1,) if func is AT_SetKernelCtrl else ()))


def test_unknown_kernel_or_graph_control():
    with fails(ModelError, "999 is not a valid kernel control option", "use one of AT_KERNEL_BUFFER_PROMOTE"):
        AT_SetKernelCtrl(999, 1)
    with fails(ModelError, "999 is not a valid graph control option"):
        AT_SetGraphCtrl(999, 1)
    with fails(ModelError, "99 is not a valid AT_GRAPH_PREF_L3_EXEC location"):
        AT_SetGraphCtrl(AT_GRAPH_PREF_L3_EXEC, 99)


@pytest.mark.parametrize("func", [AT_SetKernelCtrl, AT_SetGraphCtrl])
def test_kernel_control_value_that_is_not_an_option_value(func):
    with fails(ModelError, "AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, ...): the value must be AT_OPT_ON or "
               "AT_OPT_OFF, got 'off' (use AT_OPT_ON / AT_OPT_OFF (or 1 / 0, True / False))"):
        func(AT_KERNEL_NOSOLUTION_ERROR, "off")
    assert AT_GetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR) == 1


def test_const_dir():
    with fails(ModelError, "SetConstDir expects a directory name, got 5"):
        SetConstDir(5)


def test_unknown_tiling_objective():
    with fails(ModelError, "unknown tiling objective 'fast'", "objectives: ", "naive"):
        SetTilingObjective("fast")


def test_tiling_objective_of_a_kernel_already_tiled():
    UserKernel(*mat_add("K"))
    with fails(ModelError, "SetTilingObjective('naive', 'K'): kernel 'K' is already declared and tiled (call "
               "SetTilingObjective before UserKernel('K', ...))", kernel="K"):
        SetTilingObjective("naive", "K")


def test_gen_tiling_error():
    with fails(ModelError, "Incorrect matrix size 3"):
        GenTilingError("Incorrect matrix size %d", 3)
    with fails(ModelError, "GenTilingError: format '%d %d' does not match its 1 argument(s): not enough arguments for "
               "format string (give one argument per % conversion, of the conversion's type)"):
        GenTilingError("%d %d", 3)
    with fails(ModelError, "GenTilingWarning: format '%d' does not match its 1 argument(s)"):
        GenTilingWarning("%d", "x")


def test_append_index_of_something_else():
    assert AppendIndex("A", 3) == "A3"
    with fails(ModelError, "AppendIndex Index must be an integer, got 'x'"):
        AppendIndex("A", "x")


# ---------------------------------------------------------------------------------------------
# Generator options and output (TilerParseOptions, GenerateTilingCode)


@pytest.mark.parametrize("argv,fragment", [
    (["--L1", "abc"], "argument --L1: 'abc' is not a number of bytes"),
    (["--L2", "-5"], "argument --L2: '-5' must be positive"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--objective", "fast"], "unknown objective 'fast' (objectives: "),
])
def test_bad_generator_option(argv, fragment, capsys):
    assert TilerParseOptions(["model.py", *argv]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and fragment in err
    if "unknown objective" not in fragment:
        assert "(usage: " in err and "[--L1 BYTES]" in err


def test_unknown_platform_option(capsys):
    assert TilerParseOptions(["model.py", "--platform", "gap99"]) == 1
    assert capsys.readouterr().err == "error: argument --platform: unknown platform 'gap99' (known platforms: gap8, " \
                                      "gap9, pulp_open)\n"


@pytest.mark.parametrize("argv", [None, "p --L1 100", ["p", 100]])
def test_generator_options_that_are_not_a_list(argv):
    with fails(ModelError, f"TilerParseOptions expects the argument list, program name first, got {argv!r} (call "
               "TilerParseOptions(sys.argv) (or a list such as [\"model.py\", \"--L1\", \"51200\"]))"):
        TilerParseOptions(argv)


def test_output_directory_that_cannot_be_created(tmp_path):
    (tmp_path / "file").write_text("")
    assert TilerParseOptions(["model.py", "-o", str(tmp_path / "file" / "sub"), "-q"]) == 0
    UserKernel(*mat_add("K"))
    with fails(CodegenError, f"cannot create output directory '{tmp_path / 'file' / 'sub'}': Not a directory (check "
               "the -o directory and its permissions)"):
        GenerateTilingCode()


def test_generated_file_that_cannot_be_written(tmp_path):
    (tmp_path / "GenKernels.c").mkdir()
    assert TilerParseOptions(["model.py", "-o", str(tmp_path), "-q"]) == 0
    UserKernel(*mat_add("K"))
    with fails(CodegenError, f"cannot write generated files into '{tmp_path}' ('GenKernels.c': Is a directory); "
               "nothing was written (remove or rename what is in the way, or choose another -o directory)"):
        GenerateTilingCode()


def test_failed_generation_leaves_no_partial_output(tmp_path):
    (tmp_path / "GenKernels.c").mkdir()
    (tmp_path / "GenKernels.h").write_text("previous header\n")
    assert TilerParseOptions(["model.py", "-o", str(tmp_path), "-q"]) == 0
    UserKernel(*mat_add("K"))
    with fails(CodegenError, "('GenKernels.c': Is a directory); nothing was written"):
        GenerateTilingCode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["GenKernels.c", "GenKernels.h"]  # no staging left behind
    assert (tmp_path / "GenKernels.h").read_text() == "previous header\n"  # the header moved first is put back


def test_failed_generation_restores_every_replaced_file(tmp_path):
    """A second generation whose last file (the manifest) cannot be replaced: the files of the
    first generation, already replaced, are put back."""
    assert TilerParseOptions(["model.py", "-o", str(tmp_path), "-q"]) == 0
    UserKernel(*mat_add("K"))
    GenerateTilingCode()
    before = {p.name: p.read_text() for p in tmp_path.iterdir() if p.name != "GenKernels.json"}
    (tmp_path / "GenKernels.json").unlink()
    (tmp_path / "GenKernels.json").mkdir()
    UserKernel(*mat_add("K2"))
    with fails(CodegenError, "('GenKernels.json': Is a directory); nothing was written"):
        GenerateTilingCode()
    assert {p.name: p.read_text() for p in tmp_path.iterdir() if p.is_file()} == before


# ---------------------------------------------------------------------------------------------
# Python exceptions instead of typed errors (wrong types for API arguments)


@pytest.mark.parametrize("which,fragment", [
    ("calls", "Calls must be a Calls(...) list, got Call('MatSumPar', ...) (wrap the items: Calls(Call(Name, "
              "Location, Bindings(...)), ...))"),
    ("kerargs", "KerArgs must be a KerArgs(...) list, got KerArg 'In1' (wrap the items: KerArgs(KerArg(...), ...))"),
    ("cargs", "CArgs must be a CArgs(...) list, got 5 (wrap the items: CArgs(TCArg(Type, Name), ...))"),
])
def test_user_kernel_lists_that_are_not_lists(which, fragment):
    parts = dict(calls=add_calls(), kerargs=mat_kerargs(), cargs=mat_cargs())
    parts[which] = {"calls": Call("MatSumPar", LOC_LOOP, add_bindings()), "kerargs": KerArg("In1", S(), OBJ_IN_DB, 20, 30, 4, 0, 0, 0, "In1"), "cargs": 5}[which]
    with fails(ModelError, fragment, kernel="K"):
        UserKernel("K", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, parts["cargs"], parts["calls"], parts["kerargs"])


@pytest.mark.parametrize("cargs", [5, "abc"])
def test_basic_kernel_arguments_that_are_not_a_list(cargs):
    with fails(ModelError, f"CArgs must be a CArgs(...) list, got {cargs!r} (wrap the items: CArgs(TCArg(Type, "
               "Name), ...))", kernel="L"):
        LibKernel("L", CALL_SEQUENTIAL, cargs, "")


@pytest.mark.parametrize("make,fragment,kernel", [
    (lambda: LibKernelTemplate("T", 5), "CArgs must be a CArgs(...) list, got 5", "T"),
    (lambda: LibKernelTemplate("T", "ab"), "CArgs must be a CArgs(...) list, got 'ab'", "T"),
    (lambda: KerTypeTemplate(5), "basic kernel template name 5 is not a valid C identifier (use letters, digits and "
                                 "'_' only, not starting with a digit)", None),
])
def test_templates_with_arguments_of_the_wrong_type(make, fragment, kernel):
    with fails(ModelError, fragment, kernel=kernel, at=make.__code__.co_firstlineno):
        make()


def test_call_bindings_that_are_a_number():
    with fails(ModelError, "call to 'MatSumPar': the binding list must be Bindings(...), got 5"):
        Call("MatSumPar", LOC_LOOP, 5)


def test_per_kernel_objective_naming_no_declared_kernel():
    SetTilingObjective("naive", "MatAd"), (line := this_line())
    UserKernel("MatAdd", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, mat_cargs(),
               Calls(Call("MatSumPar", LOC_LOOP, add_bindings())), mat_kerargs())
    with fails(ModelError, "SetTilingObjective(..., 'MatAd'): no user kernel 'MatAd' was declared",
               "name a kernel declared after it; did you mean 'MatAdd'?", at=line):
        generate(current_model())
