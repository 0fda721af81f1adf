"""The SQ8 generators' implementations for TensorFlow Lite Micro's requantisation (Scale_DataSize 4, HWC): linear, element-wise and matrix products.

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` (checker,
control fields, requantisation) then the generator's arguments after ``Ctrl``, in order.
"""
from __future__ import annotations


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
