"""The SQ8 generators' implementations for The original's 1-byte requantisation (Scale_DataSize 1, CHW), every SQ8 generator.

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` (checker,
control fields, requantisation) then the generator's arguments after ``Ctrl``, in order.
"""
from __future__ import annotations


def conv_pool_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def grouped_conv_pool_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def pool_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def global_pool_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def softmax(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def linear_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def mat_add_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def mat_sub_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def mat_elt_mul_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def tensor_vect_mult_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def mat_mul_act(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")


def concat_channels(setup, *args) -> int:
    setup.chk.fail("is not supported yet with this requantisation (work in progress, issue 23)",
                   "use the other Scale_DataSize")
