"""What every SQ8 generator decides first (autotiler/generators/sq8_common.py): the requantisation
(Scale_DataSize, or the Ctrl field SCALE_DATASIZE) and the layout, with typed errors naming the
model line, the kernel and the argument; and the Ctrl fields only the SQ8 generators read."""

from __future__ import annotations

import inspect
import re

import pytest

from autotiler import *
from autotiler.errors import ModelError
from autotiler.generators.cnn_ctrl import GenControl, gen_control
from autotiler.generators.sq8_common import Requant, sq8_setup

THIS = "test_sq8_generators.py"


def _ctrl(**fields):
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    for k, v in fields.items():
        CNN_SetGenCtrl(ctrl, k, v)
    return ctrl


def raises(*fragments: str, kernel: str = "L"):
    """The error names this file, the line below the call (the next line), the kernel, then the fragments."""
    at = inspect.stack()[1].lineno + 1
    prefix = f"{THIS}:{at}: kernel '{kernel}': "
    return pytest.raises(ModelError, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments))


def test_requantisation_from_scale_datasize_or_ctrl():
    assert sq8_setup("G", "x:1", "L", 0, 4).requant == Requant.TFLM
    assert sq8_setup("G", "x:1", "L", 0, 1).requant == Requant.ORIGINAL
    assert sq8_setup("G", "x:1", "L", 0).requant == Requant.ORIGINAL
    assert sq8_setup("G", "x:1", "L", _ctrl(SCALE_DATASIZE=4)).requant == Requant.TFLM
    assert sq8_setup("G", "x:1", "L", _ctrl(SCALE_DATASIZE=4, HWC=1)).hwc
    assert not sq8_setup("G", "x:1", "L", _ctrl(HWC=0), 1).hwc


def test_scale_datasize_other_than_1_or_4_is_refused():
    with raises("CNN_LinearAct_SQ8: Scale_DataSize 2 is not supported", "use 1 or 4"):
        CNN_LinearAct_SQ8("L", 0, 4, 2, 16, 8, KOP_LINEAR, KOP_NONE)


def test_scale_datasize_contradicting_ctrl_is_refused():
    with raises("Scale_DataSize 1 contradicts the Ctrl field SCALE_DATASIZE 4"):
        CNN_LinearAct_SQ8("L", _ctrl(SCALE_DATASIZE=4), 4, 1, 16, 8, KOP_LINEAR, KOP_NONE)


def test_other_layout_is_not_supported_yet():
    with raises("CHW feature maps with Scale_DataSize 4 are not supported yet", "leave HWC unset"):
        CNN_Act_SQ8("L", _ctrl(SCALE_DATASIZE=4, HWC=0), 4, 5, 5, KOP_RELU)
    with raises("HWC feature maps with Scale_DataSize 1 are not supported yet"):
        CNN_Act_SQ8("L", _ctrl(HWC=1), 4, 5, 5, KOP_RELU)


def test_kernel_name_must_be_an_identifier():
    with pytest.raises(ModelError, match=re.escape("CNN_Act_SQ8: the kernel name must be a C identifier, got '1x'")):
        CNN_Act_SQ8("1x", 0, 4, 5, 5, KOP_RELU)


def test_ctrl_values_are_checked():
    with pytest.raises(ModelError, match=re.escape("the value must be -1, 1 (the original's")):
        _ctrl(SCALE_DATASIZE=2)
    with pytest.raises(ModelError, match=re.escape("the value must be -1, 0 (CHW) or 1 (HWC)")):
        _ctrl(HWC=2)


def test_fixed_point_generators_refuse_the_sq8_fields():
    for field, value in (("HWC", 1), ("SCALE_DATASIZE", 4)):
        with pytest.raises(ModelError, match=re.escape(f"Ctrl field \"{field}\" is read by the SQ8 generators only")):
            gen_control(_ctrl(**{field: value}), "CNN_ConvolutionPoolReLU", "L", "x:1")
    assert gen_control(_ctrl(HWC=0), "CNN_ConvolutionPoolReLU", "L", "x:1", sq8=True).hwc == 0
    assert gen_control(0, "G", "L", "x:1") == GenControl()


def test_softmax_2d_with_the_original_requantisation_is_not_supported_yet():
    with raises("CNN_SoftMax2D_SQ8 is not supported yet with Scale_DataSize 1", "call CNN_SoftMax_SQ8 once per row"):
        CNN_SoftMax2D_SQ8("L", 0, 10, 3, KOP_SOFTMAX)
