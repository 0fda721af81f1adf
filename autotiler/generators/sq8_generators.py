"""The original's SQ8 generators (``CNN_Generators_SQ8``), with its names and argument lists, so a
model script written for it ports line by line; plus what imported TFLite graphs need that the
original covers elsewhere or not at all (marked "ours").

Each function checks ``Name`` and ``Ctrl``, picks the requantisation (:mod:`.sq8_common`:
``Scale_DataSize`` or the Ctrl field ``SCALE_DATASIZE``) and hands the rest of its arguments, in
order, to that requantisation's implementation:

* 4, TensorFlow Lite Micro's (HWC): :mod:`.sq8_gen_tflm_conv` (convolutions, pooling),
  :mod:`.sq8_gen_tflm_ops` (activations, global pooling, softmax, concatenation),
  :mod:`.sq8_gen_tflm_dense` (linear, element-wise, matrix products);
* 1, the original's (CHW): :mod:`.sq8_gen_original`.

The permutations (``CNN_3DTensorPermute``, ``CNN_MatTranspose``) move bytes and do not
requantise. Semantics: ``docs/cnn-sq8.md`` (TFLM) and ``docs/cnn-sq8-original.md``.
"""

from __future__ import annotations

from ..model.ir import caller_where
from ..model.session import current_model
from . import sq8_gen_original as OG
from . import sq8_gen_tflm_conv as TC
from . import sq8_gen_tflm_dense as TD
from . import sq8_gen_tflm_fused as TF
from . import sq8_gen_tflm_ops as TO
from . import sq8_gen_tflm_pad as TP
from .cnn_checks import Checker
from .cnn_ctrl import gen_control
from .sq8_common import Requant, sq8_setup
from .sq8_gen_tflm_fused import CNN_FusedConv, CNN_FusedLayers


def _gen(generator: str, where: str, Name, Ctrl, scale_datasize, tflm, original, *args) -> int:
    setup = sq8_setup(generator, where, Name, Ctrl, scale_datasize)
    impl = tflm if setup.requant == Requant.TFLM else original
    made = impl(setup, *args)
    if made and setup.requant == Requant.TFLM:
        current_model().kernel_origins[Name] = (generator, (Ctrl, *args))   # what a graph fusion re-generates
    return made


def CNN_ConvolutionPoolAct_SQ8(Name, Ctrl, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height,
                               ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                               PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    """A convolution (KOP_CONV, KOP_CONV_DW or KOP_NONE), an optional pooling and an activation:
    ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``."""
    return _gen("CNN_ConvolutionPoolAct_SQ8", caller_where(), Name, Ctrl, Scale_DataSize, TC.conv_pool_act,
                OG.conv_pool_act, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy,
                Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)


def CNN_GroupedConvolutionPoolAct_SQ8(Name, Ctrl, GroupIn, GroupOut, Bias_DataSize, Scale_DataSize, InFeat, OutFeat,
                                      Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                                      PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    """A convolution by groups of GroupIn input / GroupOut output features, then pooling and
    activation: ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``."""
    return _gen("CNN_GroupedConvolutionPoolAct_SQ8", caller_where(), Name, Ctrl, Scale_DataSize,
                TC.grouped_conv_pool_act, OG.grouped_conv_pool_act, GroupIn, GroupOut, Bias_DataSize,
                Scale_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)


def CNN_PoolAct_SQ8(Name, Ctrl, Feat, Width, Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad,
                    ActOper) -> int:
    """A pooling (KOP_MAXPOOL, KOP_AVGPOOL) and an activation: ``Name(In, Out, Infos)``."""
    return _gen("CNN_PoolAct_SQ8", caller_where(), Name, Ctrl, None, TC.pool_act, OG.pool_act, Feat, Width, Height,
                PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)


def CNN_Act_SQ8(Name, Ctrl, Feat, Width, Height, ActOper) -> int:
    """An activation alone (with TFLM's requantisation: also QUANTIZE, int8 to int8, with
    KOP_ACT_NONE): ``Name(In, Out, Infos)``."""
    return _gen("CNN_Act_SQ8", caller_where(), Name, Ctrl, None, TO.act, OG.act, Feat, Width, Height, ActOper)


def CNN_ActLUT_SQ8(Name, Ctrl, Feat, Width, Height) -> int:
    """Ours: a unary int8 operator by a 256-entry table, ``Name(In, Out, Table)``, ``Out = Table[In + 128]``
    (onnxruntime's tables of an imported ONNX QDQ model; either requantisation, it does not requantise)."""
    return _gen("CNN_ActLUT_SQ8", caller_where(), Name, Ctrl, None, TO.act_lut, TO.act_lut, Feat, Width, Height)


def CNN_SoftMaxTable_SQ8(Name, Ctrl, Dim, N) -> int:
    """Ours: onnxruntime's QLinearSoftmax over N rows of Dim int8 items, ``Name(In, Out, Table, Infos)``
    (an imported ONNX QDQ model; float exponentials from a table; either requantisation)."""
    return _gen("CNN_SoftMaxTable_SQ8", caller_where(), Name, Ctrl, None, TO.softmax_table, TO.softmax_table, Dim,
                N)


def CNN_GlobalPoolAct_SQ8(Name, Ctrl, Feat, Width, Height, PoolOper, ActOper) -> int:
    """A global pooling (KOP_GLOBAL_MAXPOOL, KOP_GLOBAL_AVGPOOL: TFLite's MEAN, KOP_GLOBAL_SUMPOOL)
    and an activation: ``Name(In, Out, Infos)``."""
    return _gen("CNN_GlobalPoolAct_SQ8", caller_where(), Name, Ctrl, None, TO.global_pool_act, OG.global_pool_act,
                Feat, Width, Height, PoolOper, ActOper)


def CNN_SoftMax_SQ8(Name, Ctrl, Dim, SoftMaxOper) -> int:
    """A softmax over Dim items: ``Name(In, Out, Infos)`` (the original's: Q15 ``short int`` out;
    TFLM's: int8 out, scale 1/256, zero point -128)."""
    return _gen("CNN_SoftMax_SQ8", caller_where(), Name, Ctrl, None, TO.softmax, OG.softmax, Dim, SoftMaxOper)


def CNN_SoftMax2D_SQ8(Name, Ctrl, Dim, N, SoftMaxOper) -> int:
    """A softmax over the last axis of N rows of Dim items: ``Name(In, Out, Infos)``."""
    return _gen("CNN_SoftMax2D_SQ8", caller_where(), Name, Ctrl, None, TO.softmax_2d, OG.softmax_2d, Dim, N,
                SoftMaxOper)


def CNN_LinearAct_SQ8(Name, Ctrl, Bias_DataSize, Scale_DataSize, InDim, OutDim, LinearOper, ActOper) -> int:
    """A fully connected layer and an activation:
    ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``."""
    return _gen("CNN_LinearAct_SQ8", caller_where(), Name, Ctrl, Scale_DataSize, TD.linear_act, OG.linear_act,
                Bias_DataSize, Scale_DataSize, InDim, OutDim, LinearOper, ActOper)


def CNN_MatAddAct_SQ8(Name, Ctrl, Feat, Width, Height, AddMatOper, ActOper) -> int:
    """Element-wise In1 + In2 and an activation: ``Name(In1, In2, Out, Infos)``."""
    return _gen("CNN_MatAddAct_SQ8", caller_where(), Name, Ctrl, None, TD.mat_add_act, OG.mat_add_act, Feat,
                Width, Height, AddMatOper, ActOper)


def CNN_MatSubAct_SQ8(Name, Ctrl, Feat, Width, Height, ActOper) -> int:
    """Ours (TFLite's SUB): element-wise In1 - In2 and an activation: ``Name(In1, In2, Out, Infos)``."""
    return _gen("CNN_MatSubAct_SQ8", caller_where(), Name, Ctrl, None, TD.mat_sub_act, OG.mat_sub_act, Feat, Width,
                Height, ActOper)


def CNN_MatEltMulAct_SQ8(Name, Ctrl, Feat, Width, Height, ActOper) -> int:
    """Ours (TFLite's MUL on equal shapes): element-wise In1 * In2 and an activation:
    ``Name(In1, In2, Out, Infos)``."""
    return _gen("CNN_MatEltMulAct_SQ8", caller_where(), Name, Ctrl, None, TD.mat_elt_mul_act, OG.mat_elt_mul_act,
                Feat, Width, Height, ActOper)


def CNN_TensorVectMultAct_SQ8(Name, Ctrl, Feat, Width, Height, MatOper, ActOper) -> int:
    """Each feature of In1 times its item of In2 (squeeze-and-excitation; TFLite's MUL broadcast
    over channels) and an activation: ``Name(In1, In2, Out, Infos)``."""
    return _gen("CNN_TensorVectMultAct_SQ8", caller_where(), Name, Ctrl, None, TD.tensor_vect_mult_act,
                OG.tensor_vect_mult_act, Feat, Width, Height, MatOper, ActOper)


def CNN_MatMulAct_SQ8(Name, Ctrl, Bias_DataSize, Scale_DataSize, ColM1, LineM1, ColM2, LineM2, Width, Height,
                      Scx, Scy, MatMulOper, ActOper) -> int:
    """A matrix product In1 [LineM1 x ColM1] x In2 [LineM2 x ColM2] plus bias, requantised per
    line of In1: ``Name(In2, In1, Bias, Out, Scale, ScaleN, Infos)`` (the original's order)."""
    return _gen("CNN_MatMulAct_SQ8", caller_where(), Name, Ctrl, Scale_DataSize, TD.mat_mul_act, OG.mat_mul_act,
                Bias_DataSize, Scale_DataSize, ColM1, LineM1, ColM2, LineM2, Width, Height, Scx, Scy, MatMulOper,
                ActOper)


def CNN_ConcatChannels_SQ8(Name, Ctrl, Width, Height, InFeats) -> int:
    """Ours (TFLite's CONCATENATION on channels): inputs of InFeats[i] features each, requantised
    to the output's scale: ``Name(In0, In1, ..., Out, Infos)``."""
    return _gen("CNN_ConcatChannels_SQ8", caller_where(), Name, Ctrl, None, TO.concat_channels, OG.concat_channels,
                Width, Height, InFeats)


def CNN_Pad_SQ8(Name, Ctrl, Feat, Width, Height, PadTop, PadBottom, PadLeft, PadRight, PadFront=0,
                PadBack=0) -> int:
    """Ours (TFLite's int8 PAD of an HWC tensor): In [Height][Width][Feat] padded with the Infos'
    OUT_ZP on lines, columns and (optional) channels: ``Name(In, Out, Infos)``."""
    return _gen("CNN_Pad_SQ8", caller_where(), Name, Ctrl, None, TP.pad_tflm, TP.pad_original, Feat, Width, Height,
                PadTop, PadBottom, PadLeft, PadRight, PadFront, PadBack)


def _fused_original(setup, *args) -> int:
    setup.chk.fail("fused layers are built with TensorFlow Lite Micro's requantisation only (HWC feature maps, "
                   "Scale_DataSize 4)", "set the Ctrl field SCALE_DATASIZE to 4, or generate the layers one by one")


def CNN_FusedConvAct_SQ8(Name, Ctrl, InFeat, Width, Height, Layers, AddOper, AddActOper, ResidualFirst=0,
                         LineBuffer=None) -> int:
    """Ours (issue 26): a chain of convolutions and depth-wise convolutions (``CNN_FusedLayers(N,
    CNN_FusedConv(...), ...)``), optionally ending with TFLite's ADD of a residual (``ResidualFirst`` 1: the
    residual is the ADD's first operand), as one user kernel whose intermediates stay in L1:
    ``Name(In, Filter0, Bias0, Scale0, ScaleN0, Infos0, ..., [Res, AddInfos,] Out)`` (TFLM's requantisation:
    the Ctrl field SCALE_DATASIZE 4). ``LineBuffer`` None: recompute the overlaps or keep them in L1, whichever
    is predicted faster; 0 / 1 forces one."""
    return _gen("CNN_FusedConvAct_SQ8", caller_where(), Name, Ctrl, None, TF.fused_conv_act, _fused_original,
                InFeat, Width, Height, Layers, AddOper, AddActOper, ResidualFirst, LineBuffer)


def _copy(generator: str, where: str, Name, Ctrl, impl, *args) -> int:
    chk = Checker(generator, Name, where)
    if not isinstance(Name, str) or not Name.isidentifier():
        chk.fail(f"the kernel name must be a C identifier, got {Name!r}", "e.g. \"Perm0\"")
    return impl(chk, gen_control(Ctrl, generator, Name, where, sq8=True), *args)


def CNN_3DTensorPermute(Name, Ctrl, Size, InFeat, Width, Height, MatPermOper) -> int:
    """The original's permutation of a [InFeat][Height][Width] (or HWC) tensor of Size-byte items,
    KOP_MATPERM_CHW2HWC ... KOP_MATPERM_HWC2CWH: ``Name(In, Out)``."""
    return _copy("CNN_3DTensorPermute", caller_where(), Name, Ctrl, TO.tensor_permute, Size, InFeat, Width, Height,
                 MatPermOper)


def CNN_3DTensorPermute_SQ8(Name, Ctrl, InFeat, Width, Height, MatPermOper) -> int:
    """``CNN_3DTensorPermute`` on bytes (the original's macro)."""
    return _copy("CNN_3DTensorPermute_SQ8", caller_where(), Name, Ctrl, TO.tensor_permute, 1, InFeat, Width,
                 Height, MatPermOper)


def CNN_MatTranspose(Name, Ctrl, Size, InFeat, Width, Height, MatTranspOper) -> int:
    """The original's transpose of each of InFeat [Height][Width] matrices (KOP_MATTRANSP):
    ``Name(In, Out)``."""
    return _copy("CNN_MatTranspose", caller_where(), Name, Ctrl, TO.mat_transpose, Size, InFeat, Width, Height,
                 MatTranspOper)


def CNN_MatTranspose_SQ8(Name, Ctrl, InFeat, Width, Height, MatTranspOper) -> int:
    """``CNN_MatTranspose`` on bytes (the original's macro)."""
    return _copy("CNN_MatTranspose_SQ8", caller_where(), Name, Ctrl, TO.mat_transpose, 1, InFeat, Width, Height,
                 MatTranspOper)


__all__ = ["CNN_ConvolutionPoolAct_SQ8", "CNN_GroupedConvolutionPoolAct_SQ8", "CNN_PoolAct_SQ8", "CNN_Act_SQ8",
           "CNN_ActLUT_SQ8", "CNN_SoftMaxTable_SQ8",
           "CNN_GlobalPoolAct_SQ8", "CNN_SoftMax_SQ8", "CNN_SoftMax2D_SQ8",
           "CNN_LinearAct_SQ8", "CNN_MatAddAct_SQ8", "CNN_MatSubAct_SQ8",
           "CNN_MatEltMulAct_SQ8", "CNN_TensorVectMultAct_SQ8", "CNN_MatMulAct_SQ8", "CNN_ConcatChannels_SQ8",
           "CNN_Pad_SQ8", "CNN_FusedConvAct_SQ8", "CNN_FusedConv", "CNN_FusedLayers", "CNN_3DTensorPermute", "CNN_3DTensorPermute_SQ8", "CNN_MatTranspose", "CNN_MatTranspose_SQ8"]
