"""The SQ8 generators' implementations for TensorFlow Lite Micro's requantisation (Scale_DataSize 4, HWC): convolutions and pooling.

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
