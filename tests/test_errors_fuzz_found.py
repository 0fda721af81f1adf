"""Misuses found by tests/test_fuzz_models.py that were silently accepted or ended in a Python
exception (or a gcc failure of the generated code): each now a typed error naming this file's
line, the kernel and the argument, what is wrong and the fix."""

import re

import pytest

from autotiler import *

THIS = "test_errors_fuzz_found.py"
P8 = "Wordu8 * __restrict__"
T0, D0 = KER_ITER_TILE0, KER_ITER_D0


@pytest.fixture(autouse=True)
def fresh_model():
    with Model() as m:
        yield m


def fails(*fragments):
    return pytest.raises(ModelError, match=re.escape(THIS) + r":\d+: .*" + ".*".join(re.escape(f) for f in fragments))


def lib(name="K", par="K_T", cost=None, pad="v4s"):
    return LibKernel(name, CALL_PARALLEL, CArgs(TCArg(P8, "In"), TCArg(pad, "Pad"), TCArg(P8, "Out"),
                                                TCArg("unsigned int", "W")), par, Cost=cost)


def kernel(bindings=None, in_arg=None):
    bindings = bindings or Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_PAD), K_Arg("Out", KER_ARG_TILE),
                                    K_Arg("Out", KER_ARG_TILE_W))
    in_arg = in_arg or KerArg("In", KerArgSpace(1, T0), OBJ_IN, 4, 4, 1, 0, 0, 0, "In")
    return UserKernel("U", KernelIterSpace(1, IterTiledSpace(T0)), TILE_HOR, CArgs(TCArg(P8, "In"), TCArg(P8, "Out")),
                      Calls(Call("K", LOC_LOOP, bindings)),
                      KerArgs(in_arg, KerArg("Out", KerArgSpace(1, T0), OBJ_OUT, 4, 4, 1, 0, 0, 0, "Out")))


def test_the_helpers_declare_a_valid_kernel():
    lib()
    assert kernel().ntiles >= 1


@pytest.mark.parametrize("value", [2**40, 2**40 + KER_ITER_D0, 2**32 + KER_ITER_D0, -1])
def test_space_id_beyond_32_bits_or_negative(value):
    """Once masked into KER_ITER_TILE0 / KER_ITER_D0 without a word."""
    with fails(f"{value!r} is not a valid tiled space (a space id, with SPACE_PROP_* bits, is 32 bits, not negative)",
               "SPACE_PROP(Space, SPACE_PROP_*)"):
        IterTiledSpace(value)
    with fails(f"{value!r} is not a valid KerArgSpace entry"):
        KerArgSpace(1, value)


@pytest.mark.parametrize("make", [lambda s: K_ArgPar("In", KER_ARG_PARTILE_SIZE, s), lambda s: C_ArgIndex("In", s, 1),
                                  lambda s: K_ArgPred("In", KER_ARG_TILEFIRST, s), lambda s: Ker_IteratorIndex(s)])
def test_binding_space_with_property_bits(make):
    """Property bits of a binding's space were dropped (unknown ones too)."""
    with fails("is not a valid", "it carries property bits 0x100000", "name the space alone (KER_ITER_D0)"):
        make(KER_ITER_D0 | 0x100000)
    with fails("it carries property bits 0x20000"):
        make(SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT))


@pytest.mark.parametrize("par", [True, "int", 7.5, ["K_T"]])
def test_argument_struct_type_that_is_not_an_identifier(par):
    """True passed str(True).isidentifier() and reached the reserved-name check (AttributeError);
    a keyword or a list ended in gcc or a TypeError."""
    with fails(f"kernel 'K': argument struct type {par!r} is not a C identifier"):
        lib(par=par)


def test_argument_struct_type_named_like_its_kernel():
    with fails("kernel 'K': argument struct type 'K' is also the basic kernel's name", "\"K_T\""):
        lib(par="K")


@pytest.mark.parametrize("par, use", [("L1_Memory", "the L1 memory symbol"), ("KerArg0", "an argument struct"),
                                      ("T0Ind", "a loop index")])
def test_argument_struct_type_named_like_a_name_of_the_generated_code(par, use):
    with fails(f"kernel 'K': argument struct type '{par}' is also {use}"):
        lib(par=par)


@pytest.mark.parametrize("name, use", [("L1_Memory", "the L1 memory symbol"), ("KerArg0", "an argument struct"),
                                       ("Other_T", "the argument struct type of basic kernel 'Other'")])
def test_basic_kernel_named_like_a_name_of_the_generated_code(name, use):
    LibKernel("Other", CALL_PARALLEL, CArgs(TCArg("int", "A")), "Other_T")
    with fails(f"kernel '{name}': basic kernel '{name}' is also {use}"):
        lib(name=name)


def test_basic_kernel_named_like_a_renamed_memory_symbol():
    SetSymbolNames("K", "MyL2")
    with fails("kernel 'K': basic kernel 'K' is also the L1 memory symbol"):
        lib()


@pytest.mark.parametrize("args", [(None, "L2"), ("L1", None)])
def test_memory_symbol_none(args):
    """None skipped the name check and reached a regular expression (TypeError)."""
    with fails("symbol name None is not a valid C identifier"):
        SetSymbolNames(*args)


@pytest.mark.parametrize("which", ["PadTile", "PadExec"])
def test_padding_beyond_a_v4s(which):
    """A PadExec of 300 gave a v4s initializer gcc refuses; 2**40 was accepted as a padding."""
    pads = {"PadTile": (0, 0, 0, 0), "PadExec": (0, 0, 0, 0)}
    pads[which] = (0, 0, 300, 0)
    with fails(f"argument 'In': {which} (0, 0, 300, 0): a padding is a v4s, whose items are signed chars (at most "
               "127)"):
        KerArgP("In", KerArgSpace(1, T0), OBJ_IN, 4, 4, 4, 4, pads["PadTile"], pads["PadExec"], 1, 0, 0, 0, "In")


def test_used_size_that_is_a_bool():
    with fails("argument 'In': UsedW True must be between 1 and 4"):
        KerArgP("In", KerArgSpace(1, T0), OBJ_IN, 4, 4, True, 4, 0, 0, 1, 0, 0, 0, "In")


@pytest.mark.parametrize("value", [-1, 2, 2**40])
def test_kernel_control_value_that_is_not_on_or_off(value):
    """Any int used to turn the option on."""
    with fails(f"AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, ...): the value must be AT_OPT_ON or AT_OPT_OFF, "
               f"got {value}"):
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, value)


def test_cost_nested_too_deeply():
    """A RecursionError in the parser (or later, in the tiler's recursive evaluation)."""
    with fails("kernel 'K': Cost expression '" + "W+" * 20 + "'... (11999 characters) is nested "
               "more than 200 levels deep"):
        lib(cost="+".join(["W"] * 6000))
    lib(cost="+".join(["W"] * 150))  # a long flat sum is fine


def test_size_selector_bound_to_a_vector():
    """KerArg0->Pad = (v4s) (W): gcc casts an int to a 4-byte vector without a word."""
    lib()
    with fails("kernel 'U', argument 'In': binding of 'Pad' in call to 'K': KER_ARG_TILE_W gives a number but 'Pad' is 'v4s' (a vector)",
               "KER_ARG_TILE_PAD"):
        kernel(Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE),
                        K_Arg("Out", KER_ARG_TILE_W)))


def test_pure_buffer_bound_to_a_c_argument():
    """Its C argument was silently never read nor written."""
    lib()
    with fails("kernel 'U', argument 'In': is a pure L1 buffer (neither O_IN nor O_OUT) but is bound to C argument "
               "'In', which it would never read nor write", "drop the CArgName"):
        kernel(in_arg=KerArg("In", KerArgSpace(1, T0), O_BUFF | O_TILED, 4, 4, 1, 0, 0, 0, "In"))
