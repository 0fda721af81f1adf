"""Lowering (issue 24): a checked int8 :mod:`.ir` graph (TFLite's semantics, NHWC) to SQ8 layers.

Each operator becomes one call of an SQ8 generator with TensorFlow Lite Micro's requantisation
(``Scale_DataSize`` 4, or the Ctrl field ``SCALE_DATASIZE`` 4; docs/cnn-sq8.md §5), its constants
(Filter, Bias, Scale, ScaleN, Infos, built by the generators' own helpers from the tensors'
quantisation) and the graph's buffers:

=========================================  ====================================================
CONV_2D                                    CNN_ConvolutionPoolAct_SQ8 KOP_CONV (grouped: filter
                                           depth < input channels, CNN_GroupedConvolution...)
DEPTHWISE_CONV_2D                          CNN_ConvolutionPoolAct_SQ8 KOP_CONV_DW
FULLY_CONNECTED                            CNN_LinearAct_SQ8 (batch 1; the input flattened)
ADD, SUB, MUL (equal shapes)               CNN_MatAddAct_SQ8, CNN_MatSubAct_SQ8, CNN_MatEltMulAct_SQ8
MUL broadcast over channels                CNN_TensorVectMultAct_SQ8
AVERAGE_POOL_2D, MAX_POOL_2D               CNN_PoolAct_SQ8
MEAN over H, W                             CNN_GlobalPoolAct_SQ8 KOP_GLOBAL_AVGPOOL
SOFTMAX                                    CNN_SoftMax_SQ8 (one row), CNN_SoftMax2D_SQ8 (rows)
CONCATENATION on channels                  CNN_ConcatChannels_SQ8
RELU, RELU6, LEAKY_RELU, HARD_SWISH,       CNN_Act_SQ8
LOGISTIC, TANH, QUANTIZE (int8 -> int8)
fused activations                          the Infos' ACT_MIN, ACT_MAX clamp
RESHAPE, SQUEEZE                           no layer: NHWC bytes do not move, the consumer binds
                                           the producer's buffer
PAD before a VALID convolution             folded into it when the pads are TFLite's SAME pads
PAD (any other, PADV2)                     CNN_Pad_SQ8 (lines, columns, channels)
QUANTIZE at an input, DEQUANTIZE at an     no layer: the graph takes / returns the int8 tensor,
output (float interface)                   the interface says what the source took
=========================================  ====================================================

A graph in onnxruntime's arithmetic (:attr:`.ir.Graph.arithmetic`, an ONNX QDQ model read with
``arithmetic="onnxruntime"``) lowers the same way but for: the Infos word FLAGS of CONV_2D,
DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, SUB, MUL and MEAN has ``AT_TFLM_FLAG_SINGLE_ROUNDING``;
the unary operators (RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, QUANTIZE int8 -> int8)
are CNN_ActLUT_SQ8 with onnxruntime's table (reference.ort_table); AVERAGE_POOL_2D's Infos have
``AT_TFLM_FLAG_FLOAT_AVERAGE`` (sq8_gen_tflm_conv.ort_avg_pool_infos); SOFTMAX is
CNN_SoftMaxTable_SQ8 (onnxruntime's QLinearSoftmax, float, any output quantisation).

A source in NCHW (ONNX) keeps its interface: 4-D inputs and outputs are permuted
(CNN_3DTensorPermute_SQ8) to and from HWC. Anything else is an :class:`ImportModelError`
naming the operator and the tensor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..errors import ImportModelError
from ..generators import sq8_tflm as T
from ..generators.sq8_fusion import CTRL, Const, Layer, Sym
from ..generators.sq8_gen_tflm_conv import conv_constants, ort_avg_pool_infos, pool_infos
from ..generators.sq8_gen_tflm_dense import add_infos, linear_constants, mul_infos, sub_infos
from ..generators.sq8_gen_tflm_ops import act_infos, concat_infos, mean_infos, ort_softmax_constants, softmax_infos
from ..generators.sq8_gen_tflm_pad import pad_infos
from ..generators.sq8_infos import AT_INF_TFLM_FLAGS, AT_TFLM_FLAG_SINGLE_ROUNDING
from .ir import Activation, DType, Graph, Op, OpKind, Padding, Tensor, op_macs
from .reference import ort_table

MAX_CONCAT = 8

# TFLite's fused activation -> the generators' ActOper (a clamp to the Infos' ACT_MIN, ACT_MAX)
FUSED = {Activation.NONE: "KOP_NONE", Activation.RELU: "KOP_RELU", Activation.RELU6: "KOP_RELUN",
         Activation.RELU_N1_TO_1: "KOP_RELUMN"}
# stand-alone activation operators -> CNN_Act_SQ8's ActOper
ACTIVATIONS = {OpKind.RELU: "KOP_RELU", OpKind.RELU6: "KOP_RELUN", OpKind.LEAKY_RELU: "KOP_LEAKYRELU",
               OpKind.HARD_SWISH: "KOP_HSWISH", OpKind.LOGISTIC: "KOP_SIGMOID", OpKind.TANH: "KOP_TANH",
               OpKind.QUANTIZE: "KOP_ACT_NONE"}
ALIASES = (OpKind.RESHAPE, OpKind.SQUEEZE)
SUPPORTED = ", ".join(k.value for k in OpKind)


@dataclass(frozen=True)
class Port:
    """A graph input or output: its argument name, the shape and dtype the generated graph takes
    or returns, its quantisation, the IR tensor, and what the source takes there when it differs
    (a float interface: ``{"tensor", "shape", "dtype"}``)."""

    name: str
    tensor: str
    shape: Tuple[int, ...]
    dtype: str
    scale: float
    zero_point: int
    source: Optional[dict] = None

    def to_json(self) -> dict:
        out = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "scale": self.scale,
               "zero_point": self.zero_point}
        if self.source is not None:
            out["source"] = dict(self.source)
        return out


@dataclass(frozen=True)
class Lowered:
    """The lowered graph: layers in execution order, constants, local buffers (symbol, bytes),
    inputs and outputs in the source's order."""

    layers: Tuple[Layer, ...]
    consts: Tuple[Const, ...]
    locals: Tuple[Tuple[str, int], ...]
    inputs: Tuple[Port, ...]
    outputs: Tuple[Port, ...]

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)


def c_identifier(text: str) -> str:
    """``text`` made a C identifier (anything else -> ``_``, a leading digit prefixed)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", text.encode("ascii", "replace").decode("ascii")) or "model"
    return out if not out[0].isdigit() else "_" + out


def _layer_name(op: Op) -> str:
    return f"{op.kind.value.title().replace('_', '')}_{op.index}"


# ---------------------------------------------------------------------------------------------
# The lowering context: buffers of tensors, constants, errors


class _Lowering:
    def __init__(self, graph: Graph):
        self.g = graph
        self.layers: List[Layer] = []
        self.consts: List[Const] = []
        self.locals: Dict[str, int] = {}
        self.symbols: Dict[str, str] = {}        # IR tensor -> graph symbol
        self.alias: Dict[str, str] = {}          # RESHAPE/SQUEEZE output -> its input's root
        self.skip: set = set()                   # id() of ops lowered with another (PAD folded, edge QUANTIZE)
        self.pad_of: Dict[int, Op] = {}          # id(conv op) -> the first PAD folded into it
        self.names: Dict[int, str] = {}          # id(op) -> its layer name (unique)
        self.inputs: List[Port] = []
        self.outputs: List[Port] = []
        self.pending_outputs: List[Layer] = []  # NCHW outputs' permutes, after every layer

    # -- errors ---------------------------------------------------------------------------------

    def fail(self, op: Optional[Op], message: str, tensor: Optional[str] = None, hint: Optional[str] = None):
        where = self.g.where(op) if op is not None else self.g.source
        raise ImportModelError(message, where=where, arg=tensor, hint=hint)

    def t(self, name: str) -> Tensor:
        return self.g.tensor(name)

    def q(self, op: Op, name: str) -> T.QParams:
        """The per-tensor int8 quantisation of activation ``name``."""
        t = self.t(name)
        if t.dtype != DType.INT8:
            self.fail(op, f"{op.kind.value} on a {t.dtype.value} tensor is not supported yet: the SQ8 layers take "
                      "int8 activations", name, "quantise the model to int8 (TFLite's full-integer quantisation)")
        if t.quant is None or not t.quant.per_tensor:
            self.fail(op, f"tensor {name!r} has no per-tensor quantisation (int8 activations need one scale and "
                      "zero point)", name)
        try:
            return T.QParams(t.quant.scales[0], int(t.quant.zero_points[0]))
        except Exception as err:  # noqa: BLE001  (sq8_tflm's ModelError: a scale or zero point out of range)
            self.fail(op, f"tensor {name!r}: {getattr(err, 'message', err)}", name)

    def const(self, op: Op, symbol: str, data: np.ndarray, ctype: str) -> str:
        dtype = np.int32 if ctype == "int" else np.int8
        self.consts.append(Const(symbol, ctype, np.ascontiguousarray(np.asarray(data).astype(dtype)).ravel()))
        return symbol

    def name(self, op: Op) -> str:
        """The layer name of ``op`` (kind and source index; ops sharing an index get a suffix)."""
        if id(op) not in self.names:
            base = name = _layer_name(op)
            taken = set(self.names.values())
            k = 1
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            self.names[id(op)] = name
        return self.names[id(op)]

    def sym(self, name: str) -> str:
        root = self.alias.get(name, name)
        return self.symbols[root]

    def out(self, layer: str, name: str) -> str:
        """The buffer the layer writes tensor ``name`` into (a local unless it is a graph output)."""
        root = self.alias.get(name, name)
        if root not in self.symbols:
            self.symbols[root] = f"{layer}_Out"
            self.locals[f"{layer}_Out"] = int(np.prod(self.t(name).shape))
        return self.symbols[root]

    def add(self, op: Op, generator: str, args: tuple, bindings: list, name: str = "") -> None:
        self.layers.append(Layer(name or self.name(op), generator, args, tuple(bindings),
                                 f"operator {op.label}", op.kind.value, op_macs(self.g, op)))


# ---------------------------------------------------------------------------------------------
# Shapes


def hwc(lw: _Lowering, op: Op, name: str) -> Tuple[int, int, int]:
    """(H, W, C) of an NHWC activation of one image (rank 1 to 4)."""
    shape = tuple(int(d) for d in lw.t(name).shape)
    if len(shape) == 4:
        if shape[0] != 1:
            lw.fail(op, f"batch {shape[0]} is not supported yet (tensor {name!r}, shape {list(shape)}): the "
                    "generated graph runs one image", name, "convert the model with batch size 1")
        return shape[1], shape[2], shape[3]
    if len(shape) == 3:
        return (1,) + shape[1:] if shape[0] == 1 else shape
    if len(shape) == 2:
        if shape[0] != 1:
            lw.fail(op, f"batch {shape[0]} is not supported yet (tensor {name!r}, shape {list(shape)})", name,
                    "convert the model with batch size 1")
        return 1, 1, shape[1]
    if len(shape) == 1:
        return 1, 1, shape[0]
    if len(shape) == 0:
        return 1, 1, 1
    lw.fail(op, f"a tensor of rank {len(shape)} is not supported yet (tensor {name!r}, shape {list(shape)})", name)


def _size(lw: _Lowering, name: str) -> int:
    return int(np.prod(lw.t(name).shape))


def _act(lw: _Lowering, op: Op) -> Tuple[str, str]:
    """(sq8_tflm activation name, ActOper) of a fused activation."""
    a = getattr(op.options, "activation", Activation.NONE)
    return a.value, FUSED[a]


def _no_fused(lw: _Lowering, op: Op) -> None:
    a = getattr(op.options, "activation", Activation.NONE)
    if a != Activation.NONE:
        lw.fail(op, f"{op.kind.value} with a fused {a.value} is not supported yet", op.outputs[0],
                "export the activation as its own operator")


def _mode(lw: _Lowering, infos: np.ndarray) -> np.ndarray:
    """A requantising layer's Infos in the graph's arithmetic: onnxruntime's sets the FLAGS word's single
    rounding bit (sq8_infos)."""
    if lw.g.arithmetic != "onnxruntime":
        return infos
    words = np.asarray(infos).astype(np.int8).view("<i4").copy()
    words[AT_INF_TFLM_FLAGS] |= AT_TFLM_FLAG_SINGLE_ROUNDING
    return words.view(np.int8)


def _quant_checked(lw: _Lowering, op: Op, fn, *args, **kwargs):
    """A constants helper of the generators; its ModelError (a TFLM Prepare refusal) named here."""
    try:
        return fn(*args, **kwargs)
    except ImportModelError:
        raise
    except Exception as err:  # noqa: BLE001  (ModelError from sq8_tflm's Prepare checks)
        lw.fail(op, f"{op.kind.value}: {getattr(err, 'message', err)}", op.outputs[0],
                getattr(err, "hint", None))


# ---------------------------------------------------------------------------------------------
# Convolutions


def _same_pads(h: int, k: int, s: int, d: int) -> Tuple[int, int]:
    return T.compute_padding(s, d, h, k, T.compute_out_size("SAME", h, k, s, d))


def _filter_q(lw: _Lowering, op: Op, name: str, channels: int) -> T.FilterQParams:
    t = lw.t(name)
    if t.dtype != DType.INT8 or t.quant is None:
        lw.fail(op, f"{op.kind.value} filter {name!r} is {t.dtype.value}{'' if t.quant else ' unquantised'}: "
                "int8 weights are supported", name, "quantise the weights to int8")
    if any(int(z) != 0 for z in t.quant.zero_points):
        lw.fail(op, f"{op.kind.value} filter {name!r} has a non-zero zero point: TFLite's int8 weights are "
                "symmetric", name)
    if len(t.quant.scales) not in (1, channels):
        lw.fail(op, f"filter {name!r} has {len(t.quant.scales)} scales for {channels} output channels", name)
    return T.FilterQParams(tuple(float(s) for s in t.quant.scales))


def _bias(lw: _Lowering, op: Op, name: Optional[str], channels: int) -> np.ndarray:
    if name is None:
        return np.zeros(channels, np.int32)
    t = lw.t(name)
    if not t.is_const:
        lw.fail(op, f"bias {name!r} is computed: only constant biases are supported", name)
    if t.dtype != DType.INT32 or int(np.prod(t.shape)) != channels:
        lw.fail(op, f"bias {name!r} is {t.dtype.value} of shape {list(t.shape)}: an int32 bias of {channels} items "
                "is supported", name)
    return np.asarray(t.data, np.int32).ravel()


def _conv_input(lw: _Lowering, op: Op) -> Tuple[str, str]:
    """(input tensor, padding) of a convolution, through a folded PAD."""
    pad = lw.pad_of.get(id(op))
    if pad is None:
        return op.inputs[0], op.options.padding.value
    return pad.inputs[0], "SAME"


def _conv_layer(lw: _Lowering, op: Op) -> None:
    dw = op.kind == OpKind.DEPTHWISE_CONV_2D
    src, padding = _conv_input(lw, op)
    o = op.options
    h, w, cin = hwc(lw, op, src)
    ho, wo, cout = hwc(lw, op, op.outputs[0])
    ft = lw.t(op.inputs[1])
    if not ft.is_const:
        lw.fail(op, f"filter {op.inputs[1]!r} is computed: only constant filters are supported", op.inputs[1])
    f = np.asarray(ft.data)
    if f.ndim != 4:
        lw.fail(op, f"filter {op.inputs[1]!r} has shape {list(f.shape)}: 4 dimensions expected", op.inputs[1])
    if dw:
        kh, kw = f.shape[1], f.shape[2]
        if f.shape[3] != cout:
            lw.fail(op, f"depth-wise filter {op.inputs[1]!r} has {f.shape[3]} channels for {cout} outputs",
                    op.inputs[1])
        group_in = 1
    else:
        kh, kw, group_in = f.shape[1], f.shape[2], f.shape[3]
        if f.shape[0] != cout or cin % group_in or cout % (cin // group_in):
            lw.fail(op, f"filter {op.inputs[1]!r} of shape {list(f.shape)} does not fit input channels {cin} and "
                    f"output channels {cout}", op.inputs[1])
    in_q, out_q = lw.q(op, src), lw.q(op, op.outputs[0])
    w_q = _filter_q(lw, op, op.inputs[1], cout)
    act, act_oper = _act(lw, op)
    scale, scale_n, infos = _quant_checked(lw, op, conv_constants, in_q, w_q, out_q, act, cout)
    bias = _bias(lw, op, op.inputs[2] if len(op.inputs) > 2 else None, cout)
    name = lw.name(op)
    syms = [lw.sym(src), lw.const(op, f"{name}_W", f, "signed char"), lw.const(op, f"{name}_B", bias, "int"),
            lw.out(name, op.outputs[0]), lw.const(op, f"{name}_S", scale, "int"),
            lw.const(op, f"{name}_N", scale_n, "signed char"), lw.const(op, f"{name}_I", _mode(lw, infos), "signed char")]
    (sh, sw), (dh, dwl) = o.stride, o.dilation
    geometry = (Sym("KOP_CONV_DW" if dw else "KOP_CONV"), kw, kh, dwl, dh, sw, sh, 1 if padding == "SAME" else 0,
                Sym("KOP_NONE"), 0, 0, 0, 0, 0, 0, 0, Sym(act_oper))
    if not dw and group_in < cin:
        groups = cin // group_in
        lw.add(op, "CNN_GroupedConvolutionPoolAct_SQ8",
               (0, group_in, cout // groups, 4, 4, cin, cout, w, h) + geometry, _io(syms, CONV_ARGS, 3))
    else:
        lw.add(op, "CNN_ConvolutionPoolAct_SQ8", (0, 4, 4, cin, cout, w, h) + geometry, _io(syms, CONV_ARGS, 3))


CONV_ARGS = ("In", "Filter", "Bias", "Out", "Scale", "ScaleN", "Infos")
ONE_ARGS = ("In", "Out", "Infos")
TWO_ARGS = ("In1", "In2", "Out", "Infos")


def _io(symbols: list, names: tuple, *outs: int) -> list:
    """(direction, symbol, user kernel argument) of each binding."""
    return [("out" if i in outs else "in", s, n) for i, (s, n) in enumerate(zip(symbols, names))]


def _fold_pads(lw: _Lowering) -> None:
    """PAD (or a chain of PADs, as an ONNX Pad before a Conv with pads gives) feeding one VALID
    convolution, with TFLite's SAME pads for it: folded (the convolution reads the first PAD's
    input with SAME padding; both pad with the input zero point). Any other PAD is a layer of its
    own (CNN_Pad_SQ8)."""
    for op in lw.g.ops:
        producer = lw.g.producer(op.inputs[0]) if op.kind == OpKind.PAD else None
        if op.kind != OpKind.PAD or (producer is not None and producer.kind == OpKind.PAD):
            continue
        chain = [op]
        while True:
            users = lw.g.consumers(chain[-1].outputs[0])
            nxt = users[0] if len(users) == 1 else None
            if nxt is None or nxt.kind != OpKind.PAD:
                break
            chain.append(nxt)
        if not _pad_fold_problem(lw, chain, nxt):
            lw.skip.update(id(p) for p in chain)
            lw.pad_of[id(nxt)] = op


def _pads(lw: _Lowering, op: Op, as_layer: bool = False):
    """The [[before, after]] per axis of a PAD, or the reason it cannot fold (``as_layer``: cannot
    be a layer)."""
    pads_t = lw.t(op.inputs[1]) if len(op.inputs) > 1 and op.inputs[1] else None
    if pads_t is None or not pads_t.is_const:
        return "its paddings are not constant"
    if np.any(np.asarray(pads_t.data) < 0):
        return "its paddings are negative"
    x, y = lw.t(op.inputs[0]), lw.t(op.outputs[0])
    if x.quant != y.quant:
        return "its output's quantisation differs from its input's (TFLM's int8 PAD requires them equal)"
    pads = np.asarray(pads_t.data).reshape(-1, 2).tolist()
    if as_layer:
        return pads
    if len(op.inputs) > 2 and op.inputs[2] is not None:
        return "it has a constant pad value (PADV2)"
    if op.outputs[0] in lw.g.outputs:
        return "its output is a graph output"
    if len(pads) != 4 or pads[0] != [0, 0] or pads[3] != [0, 0]:
        return f"paddings {pads} pad more than H and W"
    return pads


def _pad_fold_problem(lw: _Lowering, chain: list, conv: Optional[Op]) -> str:
    if conv is None or conv.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D) or \
            conv.inputs[0] != chain[-1].outputs[0]:
        return "it does not feed exactly one convolution"
    if conv.options.padding != Padding.VALID:
        return "the convolution it feeds already pads (SAME)"
    total = [[0, 0], [0, 0]]
    for op in chain:
        pads = _pads(lw, op)
        if isinstance(pads, str):
            return pads
        total = [[a + b for a, b in zip(t, p)] for t, p in zip(total, pads[1:3])]
    x = lw.t(chain[0].inputs[0])
    if len(x.shape) != 4:
        return f"its input has shape {list(x.shape)}, not NHWC"
    f = lw.t(conv.inputs[1]).shape
    (sh, sw), (dh, dw) = conv.options.stride, conv.options.dilation
    same = [list(_same_pads(x.shape[1], f[1], sh, dh)), list(_same_pads(x.shape[2], f[2], sw, dw))]
    if total != same:
        return f"its pads {total} are not TFLite's SAME pads {same} of the {f[1]}x{f[2]} convolution"
    return ""


def _pad_layer(lw: _Lowering, op: Op) -> None:
    """A PAD that does not fold: CNN_Pad_SQ8 (lines, columns, channels; the batch is not padded)."""
    x = lw.t(op.inputs[0])
    pads = _pads(lw, op, as_layer=True)
    if isinstance(pads, str):
        lw.fail(op, f"PAD is not supported yet here: {pads}", op.outputs[0])
    if len(x.shape) != 4 or pads[0] != [0, 0]:
        lw.fail(op, f"PAD of a {list(x.shape)} tensor by {pads} is not supported yet: lines, columns and channels "
                "of one NHWC image are", op.outputs[0])
    q = lw.q(op, op.inputs[0])
    value = None
    if len(op.inputs) > 2 and op.inputs[2] is not None:
        v = lw.t(op.inputs[2])
        if not v.is_const or v.dtype != DType.INT8 or int(np.prod(v.shape)) != 1:
            lw.fail(op, f"PADV2's value {op.inputs[2]!r} must be one constant int8", op.inputs[2])
        value = int(np.asarray(v.data).ravel()[0])
    infos = _quant_checked(lw, op, pad_infos, q, value)
    h, w, c = hwc(lw, op, op.inputs[0])
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_I", infos, "signed char")]
    (t, b), (left, right), (front, back) = pads[1], pads[2], pads[3]
    lw.add(op, "CNN_Pad_SQ8", (CTRL, c, w, h, t, b, left, right, front, back), _io(syms, ONE_ARGS, 1))


# ---------------------------------------------------------------------------------------------
# Dense, element-wise, pooling, activations


def _fully_connected(lw: _Lowering, op: Op) -> None:
    ft = lw.t(op.inputs[1])
    if not ft.is_const or len(ft.shape) != 2:
        lw.fail(op, f"weights {op.inputs[1]!r} must be a constant [out][in] matrix", op.inputs[1])
    out_dim, in_dim = (int(d) for d in ft.shape)
    if _size(lw, op.inputs[0]) != in_dim:
        lw.fail(op, f"input {op.inputs[0]!r} has {_size(lw, op.inputs[0])} items for {in_dim} weights per output: "
                "batch 1 is supported", op.inputs[0], "convert the model with batch size 1")
    in_q, out_q = lw.q(op, op.inputs[0]), lw.q(op, op.outputs[0])
    w_q = _filter_q(lw, op, op.inputs[1], out_dim)
    act, act_oper = _act(lw, op)
    c = _quant_checked(lw, op, linear_constants, in_q, w_q, out_q, act, out_dim)
    bias = _bias(lw, op, op.inputs[2] if len(op.inputs) > 2 else None, out_dim)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.const(op, f"{name}_W", ft.data, "signed char"),
            lw.const(op, f"{name}_B", bias, "int"), lw.out(name, op.outputs[0]),
            lw.const(op, f"{name}_S", c.scale, "int"), lw.const(op, f"{name}_N", c.scale_n, "signed char"),
            lw.const(op, f"{name}_I", _mode(lw, c.infos), "signed char")]
    lw.add(op, "CNN_LinearAct_SQ8", (0, 4, 4, in_dim, out_dim, Sym("KOP_LINEAR"), Sym(act_oper)),
           _io(syms, CONV_ARGS, 3))


def _operand(lw: _Lowering, op: Op, name: str, layer: str, k: int) -> str:
    """The symbol of an element-wise operand: its buffer, or a constant file for a constant."""
    t = lw.t(name)
    if t.is_const:
        lw.q(op, name)
        return lw.const(op, f"{layer}_C{k}", t.data, "signed char")
    return lw.sym(name)


def _eltwise(lw: _Lowering, op: Op) -> None:
    a, b = op.inputs[0], op.inputs[1]
    sa, sb, so = (tuple(lw.t(n).shape) for n in (a, b, op.outputs[0]))
    qa, qb, qo = lw.q(op, a), lw.q(op, b), lw.q(op, op.outputs[0])
    act, act_oper = _act(lw, op)
    h, w, c = hwc(lw, op, op.outputs[0])
    name = lw.name(op)
    if int(np.prod(sa)) == int(np.prod(sb)) == int(np.prod(so)) and _squeeze(sa) == _squeeze(sb):
        helper, gen, extra = {OpKind.ADD: (add_infos, "CNN_MatAddAct_SQ8", (Sym("KOP_MATADD"),)),
                              OpKind.SUB: (sub_infos, "CNN_MatSubAct_SQ8", ()),
                              OpKind.MUL: (mul_infos, "CNN_MatEltMulAct_SQ8", ())}[op.kind]
        infos = _quant_checked(lw, op, helper, qa, qb, qo, act)
        syms = [_operand(lw, op, a, name, 1), _operand(lw, op, b, name, 2), lw.out(name, op.outputs[0]),
                lw.const(op, f"{name}_I", _mode(lw, infos), "signed char")]
        lw.add(op, gen, (CTRL, c, w, h) + extra + (Sym(act_oper),), _io(syms, TWO_ARGS, 2))
        return
    if op.kind == OpKind.MUL:
        vec = [n for n, s in ((a, sa), (b, sb)) if int(np.prod(s)) == c and s and s[-1] == c]
        big = [n for n, s in ((a, sa), (b, sb)) if _squeeze(s) == _squeeze(so)]
        if len(vec) == 1 and len(big) == 1 and vec[0] != big[0]:
            v, m = vec[0], big[0]
            infos = _quant_checked(lw, op, mul_infos, lw.q(op, m), lw.q(op, v), qo, act)
            syms = [_operand(lw, op, m, name, 1), _operand(lw, op, v, name, 2), lw.out(name, op.outputs[0]),
                    lw.const(op, f"{name}_I", _mode(lw, infos), "signed char")]
            lw.add(op, "CNN_TensorVectMultAct_SQ8", (CTRL, c, w, h, Sym("KOP_MATVECTMUL"), Sym(act_oper)),
                   _io(syms, TWO_ARGS, 2))
            return
    lw.fail(op, f"{op.kind.value} with broadcasting ({list(sa)} and {list(sb)}) is not supported yet"
            + (": MUL broadcasts a [C] vector over the pixels" if op.kind == OpKind.MUL else ""), b,
            "give both inputs the output's shape")


def _squeeze(shape: tuple) -> tuple:
    return tuple(int(d) for d in shape if d != 1)


def _pool(lw: _Lowering, op: Op) -> None:
    o = op.options
    h, w, c = hwc(lw, op, op.inputs[0])
    q, qo = lw.q(op, op.inputs[0]), lw.q(op, op.outputs[0])
    if q != qo:
        lw.fail(op, f"{op.kind.value} with an output quantisation other than its input's is not supported "
                "(TFLM's int8 pooling requires them equal)", op.outputs[0])
    act, act_oper = _act(lw, op)
    ort_avg = lw.g.arithmetic == "onnxruntime" and op.kind == OpKind.AVERAGE_POOL_2D
    infos = _quant_checked(lw, op, ort_avg_pool_infos if ort_avg else pool_infos, q, act)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_I", infos, "signed char")]
    (fh, fw), (sh, sw) = o.filter, o.stride
    oper = "KOP_MAXPOOL" if op.kind == OpKind.MAX_POOL_2D else "KOP_AVGPOOL"
    ho, wo, _ = hwc(lw, op, op.outputs[0])
    lw.add(op, "CNN_PoolAct_SQ8", (CTRL, c, w, h, Sym(oper), fw, fh, 1, 1, sw, sh,
                                   1 if o.padding == Padding.SAME else 0, Sym(act_oper)), _io(syms, ONE_ARGS, 1))


def _mean(lw: _Lowering, op: Op) -> None:
    x = lw.t(op.inputs[0])
    axes = sorted(a % len(x.shape) for a in op.options.axes) if x.shape else []
    if len(x.shape) != 4 or axes != [1, 2]:
        lw.fail(op, f"MEAN over axes {list(op.options.axes)} of a {list(x.shape)} tensor is not supported yet: "
                "MEAN over H and W of an NHWC tensor is", op.inputs[0])
    h, w, c = hwc(lw, op, op.inputs[0])
    infos = _quant_checked(lw, op, mean_infos, lw.q(op, op.inputs[0]), lw.q(op, op.outputs[0]), h * w)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]),
            lw.const(op, f"{name}_I", _mode(lw, infos), "signed char")]
    lw.add(op, "CNN_GlobalPoolAct_SQ8", (CTRL, c, w, h, Sym("KOP_GLOBAL_AVGPOOL"), Sym("KOP_NONE")),
           _io(syms, ONE_ARGS, 1))


def _softmax(lw: _Lowering, op: Op) -> None:
    shape = lw.t(op.inputs[0]).shape
    dim = int(shape[-1]) if shape else 1
    rows = _size(lw, op.inputs[0]) // dim
    if lw.g.arithmetic == "onnxruntime":
        _softmax_ort(lw, op, dim, rows)
        return
    qo = lw.q(op, op.outputs[0])
    if (qo.scale, qo.zero_point) != (T.f32(1 / 256), -128):
        lw.fail(op, f"SOFTMAX output quantisation ({qo.scale}, {qo.zero_point}) is not TFLite's int8 (1/256, -128)",
                op.outputs[0])
    infos = _quant_checked(lw, op, softmax_infos, lw.q(op, op.inputs[0]), float(op.options.beta))
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_I", infos, "signed char")]
    if rows == 1:
        lw.add(op, "CNN_SoftMax_SQ8", (CTRL, dim, Sym("KOP_SOFTMAX")), _io(syms, ONE_ARGS, 1))
    else:
        lw.add(op, "CNN_SoftMax2D_SQ8", (CTRL, dim, rows, Sym("KOP_SOFTMAX")), _io(syms, ONE_ARGS, 1))


def _softmax_ort(lw: _Lowering, op: Op, dim: int, rows: int) -> None:
    """onnxruntime's QLinearSoftmax: CNN_SoftMaxTable_SQ8 (its exponentials' table, any output quantisation)."""
    table, infos = _quant_checked(lw, op, ort_softmax_constants, lw.q(op, op.inputs[0]), lw.q(op, op.outputs[0]),
                                  dim)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_T", table, "int"),
            lw.const(op, f"{name}_I", infos, "signed char")]
    lw.add(op, "CNN_SoftMaxTable_SQ8", (CTRL, dim, rows), _io(syms, ("In", "Out", "Table", "Infos"), 1))


def _concat(lw: _Lowering, op: Op) -> None:
    _no_fused(lw, op)
    out = lw.t(op.outputs[0])
    if op.options.axis % max(len(out.shape), 1) != len(out.shape) - 1:
        lw.fail(op, f"CONCATENATION on axis {op.options.axis} of {list(out.shape)} is not supported yet: on the last "
                "axis (channels) is", op.outputs[0])
    if not 2 <= len(op.inputs) <= MAX_CONCAT:
        lw.fail(op, f"CONCATENATION of {len(op.inputs)} inputs is not supported yet: 2 to {MAX_CONCAT} are",
                op.outputs[0], "split it into several")
    h, w, _ = hwc(lw, op, op.outputs[0])
    feats = []
    for n in op.inputs:
        hi, wi, ci = hwc(lw, op, n)
        if (hi, wi) != (h, w):
            lw.fail(op, f"CONCATENATION input {n!r} is {hi}x{wi}, the output {h}x{w}", n)
        feats.append(ci)
    name = lw.name(op)
    infos = _quant_checked(lw, op, concat_infos, [lw.q(op, n) for n in op.inputs], lw.q(op, op.outputs[0]))
    syms = [_operand(lw, op, n, name, k) for k, n in enumerate(op.inputs, start=1)]
    syms += [lw.out(name, op.outputs[0]), lw.const(op, f"{name}_I", infos, "signed char")]
    args = tuple(f"In{k}" for k in range(len(op.inputs))) + ("Out", "Infos")
    lw.add(op, "CNN_ConcatChannels_SQ8", (CTRL, w, h, list(feats)), _io(syms, args, len(op.inputs)))


def _activation(lw: _Lowering, op: Op) -> None:
    h, w, c = hwc(lw, op, op.inputs[0])
    qi, qo = lw.q(op, op.inputs[0]), lw.q(op, op.outputs[0])
    if lw.g.arithmetic == "onnxruntime":
        _lookup_table(lw, op, h, w, c)
        return
    params = {"alpha": float(op.options.alpha)} if op.kind == OpKind.LEAKY_RELU else {}
    infos = _quant_checked(lw, op, act_infos, op.kind.value, qi, qo, **params)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_I", infos, "signed char")]
    lw.add(op, "CNN_Act_SQ8", (CTRL, c, w, h, Sym(ACTIVATIONS[op.kind])), _io(syms, ONE_ARGS, 1))


def _lookup_table(lw: _Lowering, op: Op, h: int, w: int, c: int) -> None:
    """A unary operator in onnxruntime's arithmetic: CNN_ActLUT_SQ8 with onnxruntime's table."""
    table = _quant_checked(lw, op, ort_table, lw.g, op)
    name = lw.name(op)
    syms = [lw.sym(op.inputs[0]), lw.out(name, op.outputs[0]), lw.const(op, f"{name}_T", table, "signed char")]
    lw.add(op, "CNN_ActLUT_SQ8", (CTRL, c, w, h), _io(syms, ("In", "Out", "Table"), 1))


# ---------------------------------------------------------------------------------------------
# The interface: graph inputs and outputs


def _edge_ops(lw: _Lowering) -> Tuple[Dict[str, str], Dict[str, str]]:
    """QUANTIZE of a float graph input, DEQUANTIZE into a float graph output: {int8 tensor: source
    tensor} for inputs and for outputs; those operators are not lowered."""
    qin, qout = {}, {}
    for op in lw.g.ops:
        if op.kind == OpKind.QUANTIZE and op.inputs[0] in lw.g.inputs and lw.t(op.inputs[0]).dtype == DType.FLOAT32:
            qin[op.outputs[0]] = op.inputs[0]
            lw.skip.add(id(op))
        elif op.kind == OpKind.DEQUANTIZE and op.outputs[0] in lw.g.outputs:
            qout[op.inputs[0]] = op.outputs[0]
            lw.skip.add(id(op))
        elif op.kind == OpKind.DEQUANTIZE:
            lw.fail(op, "DEQUANTIZE inside the graph is not supported: the generated graph computes in int8",
                    op.outputs[0], "keep float only at the model's outputs")
    return qin, qout


def _port(lw: _Lowering, name: str, tensor: str, source: Optional[str], nchw: bool) -> Port:
    t = lw.t(tensor)
    if t.dtype != DType.INT8 or t.quant is None:
        kind = t.dtype.value if t.dtype != DType.INT8 else "int8 without quantisation"
        lw.fail(None, f"graph interface tensor {tensor!r} is {kind}: int8 activations are supported "
                f"({'int16 activations are not supported yet' if t.dtype == DType.INT16 else 'quantise to int8'})",
                tensor, "convert with full-integer int8 quantisation (or give a float model --calibration)")
    if not t.quant.per_tensor:
        lw.fail(None, f"graph interface tensor {tensor!r} has per-channel quantisation: a graph input or output "
                "needs one scale and zero point", tensor)
    shape = tuple(int(d) for d in t.shape)
    if nchw and len(shape) == 4:
        shape = (shape[0], shape[3], shape[1], shape[2])
    src = None
    if source is not None:
        s = lw.t(source)
        sshape = tuple(int(d) for d in s.shape)
        if nchw and len(sshape) == 4:
            sshape = (sshape[0], sshape[3], sshape[1], sshape[2])
        src = {"tensor": source, "shape": list(sshape), "dtype": s.dtype.value}
    return Port(name, source or tensor, shape, "int8", float(t.quant.scales[0]), int(t.quant.zero_points[0]), src)


def _interface(lw: _Lowering) -> None:
    qin, qout = _edge_ops(lw)
    nchw = lw.g.source_layout == "NCHW"
    by_source_in = {v: k for k, v in qin.items()}
    by_source_out = {v: k for k, v in qout.items()}
    for i, name in enumerate(lw.g.inputs, start=1):
        tensor = by_source_in.get(name, name)
        port = _port(lw, f"Input_{i}", tensor, name if tensor != name else None, nchw)
        lw.inputs.append(port)
        lw.symbols[tensor] = port.name
    for i, name in enumerate(lw.g.outputs, start=1):
        tensor = by_source_out.get(name, name)
        port = _port(lw, f"Output_{i}", tensor, name if tensor != name else None, nchw)
        lw.outputs.append(port)
        root = lw.alias.get(tensor, tensor)
        if root in lw.symbols:
            what = "a graph input" if lw.symbols[root].startswith("Input_") else "another graph output"
            lw.fail(None, f"graph output {name!r} is {what} (through RESHAPE/SQUEEZE): nothing computes it", name,
                    "export a model whose outputs are computed")
        lw.symbols[root] = port.name


def _aliases(lw: _Lowering) -> None:
    for op in lw.g.ops:
        if op.kind in ALIASES:
            src, dst = op.inputs[0], op.outputs[0]
            if lw.t(src).is_const:
                lw.fail(op, f"{op.kind.value} of a constant is not supported yet", src)
            if _size(lw, src) != _size(lw, dst):
                lw.fail(op, f"{op.kind.value} from {list(lw.t(src).shape)} to {list(lw.t(dst).shape)} changes the "
                        "item count", dst)
            lw.alias[dst] = lw.alias.get(src, src)
            lw.skip.add(id(op))


def _permute_interface(lw: _Lowering) -> None:
    """NCHW sources: 4-D inputs permuted CHW -> HWC before the first layer, outputs HWC -> CHW after."""
    for port in lw.inputs:
        t = lw.t(_int8_of(lw, port))
        if len(t.shape) != 4:
            continue
        _, h, w, c = (int(d) for d in t.shape)
        name = f"{port.name}_HWC"
        lw.locals[name] = h * w * c
        root = lw.alias.get(t.name, t.name)
        lw.layers.append(Layer(f"{port.name}_ToHWC", "CNN_3DTensorPermute_SQ8",
                               (CTRL, c, w, h, Sym("KOP_MATPERM_CHW2HWC")),
                               (("in", port.name, "In"), ("out", name, "Out")), "the NCHW interface", "TRANSPOSE"))
        lw.symbols[root] = name


def _int8_of(lw: _Lowering, port: Port) -> str:
    for k, v in lw.symbols.items():
        if v == port.name:
            return k
    return port.tensor


def _permute_outputs(lw: _Lowering) -> None:
    for port in lw.outputs:
        tensor = _int8_of(lw, port)
        t = lw.t(tensor)
        if len(t.shape) != 4:
            continue
        _, h, w, c = (int(d) for d in t.shape)
        name = f"{port.name}_HWC"
        lw.locals[name] = h * w * c
        lw.symbols[tensor] = name
        lw.pending_outputs.append(Layer(f"{port.name}_ToCHW", "CNN_3DTensorPermute_SQ8",
                                        (CTRL, c, w, h, Sym("KOP_MATPERM_HWC2CHW")),
                                        (("in", name, "In"), ("out", port.name, "Out")), "the NCHW interface",
                                        "TRANSPOSE"))


# ---------------------------------------------------------------------------------------------
# Entry point

LOWER = {OpKind.CONV_2D: _conv_layer, OpKind.DEPTHWISE_CONV_2D: _conv_layer,
         OpKind.FULLY_CONNECTED: _fully_connected, OpKind.ADD: _eltwise, OpKind.SUB: _eltwise, OpKind.MUL: _eltwise,
         OpKind.AVERAGE_POOL_2D: _pool, OpKind.MAX_POOL_2D: _pool, OpKind.MEAN: _mean, OpKind.SOFTMAX: _softmax,
         OpKind.CONCATENATION: _concat, OpKind.PAD: _pad_layer, **{k: _activation for k in ACTIVATIONS}}


def lower(graph: Graph) -> Lowered:
    """The SQ8 layers of a checked int8 graph (see the module's documentation)."""
    lw = _Lowering(graph)
    _aliases(lw)
    _interface(lw)
    if graph.source_layout == "NCHW":
        _permute_interface(lw)
        _permute_outputs(lw)
    _fold_pads(lw)
    for op in graph.ops:
        if id(op) in lw.skip:
            continue
        fn = LOWER.get(op.kind)
        if fn is None:
            lw.fail(op, f"operator {op.kind.value} is not supported here", op.outputs[0] if op.outputs else None,
                    f"supported: {SUPPORTED}")
        fn(lw, op)
    lw.layers.extend(lw.pending_outputs)
    if not lw.layers:
        lw.fail(None, "the model computes nothing (no operator to generate)", None)
    _check_written(lw)
    return Lowered(tuple(lw.layers), tuple(lw.consts), tuple(lw.locals.items()), tuple(lw.inputs),
                   tuple(lw.outputs))


def _check_written(lw: _Lowering) -> None:
    """Every graph output is written by some layer."""
    written = {s for layer in lw.layers for d, s, _ in layer.bindings if d == "out"}
    for port in lw.outputs:
        if port.name not in written:
            lw.fail(None, f"graph output {port.tensor!r} is computed by no operator the importer lowers", port.tensor)


__all__ = ["Const", "Layer", "Lowered", "Port", "Sym", "CTRL", "c_identifier", "lower"]
