"""TFLite front end (issue 24): a ``.tflite`` file to an :mod:`.ir` graph.

The flatbuffer is read with the ``tflite`` package (TensorFlow Lite's schema, as TVM's importer
reads it), in two steps:

1. :func:`_parse`: every field the importer needs, copied out of the flatbuffer into plain records
   (tensors with shape, shape signature, type, quantisation and constant data; operators with
   their builtin code, inputs, outputs and options). All flatbuffer access is here, so a truncated
   or corrupt file ends in one :class:`ImportModelError`, never a ``struct.error``.
2. :func:`_build`: the operators in model order. One whose inputs are all constant (or, for
   ``SHAPE``, whose input has a known shape) and whose kind :data:`_FOLD` knows is evaluated with
   numpy and dropped: its outputs become constants. This removes the shape-computing subgraphs
   Keras emits before a ``RESHAPE`` (``SHAPE -> STRIDED_SLICE -> PACK``). Every other operator must
   be one of :class:`~.ir.OpKind`; it gets its typed options and the shapes of its outputs are
   inferred (the converter records a placeholder shape such as ``[1, 1]`` behind a computed
   ``RESHAPE``; the inferred shape replaces it).

What the graph holds, beyond :mod:`.ir`'s contract:

* ``RESHAPE`` and ``SQUEEZE`` have one input; their output tensor's shape is the new shape (a -1
  resolved, a computed shape folded).
* ``MEAN`` has one input; its axes (``>= 0``, sorted) are in :class:`~.ir.ReduceOptions`.
* ``PAD`` keeps its paddings as a constant second input (int32 or int64, ``rank x 2``).
* ``DEPTHWISE_CONV_2D``'s depth multiplier is ``output channels / input channels`` (what TFLite's
  kernels use; some converters leave the option field 0).
* ``CONCATENATION``'s axis is in ``[0, rank)``.
* Constant data is a read-only numpy array of the tensor's dtype (the file is little endian).
* Tensor names are the model's, made unique (``name_<index>``) and never empty (``tensor_<index>``).

Refused, each by an :class:`ImportModelError` naming the file and the operator or tensor: data
that is not a TFLite flatbuffer (no ``TFL3`` identifier), empty or truncated data, an operator that
calls another subgraph (control flow), an operator not supported (named with its index, its
tensors and the list of what is supported), int16 activations, uint8 tensors, other tensor types,
int8 tensors without quantisation, activations quantised per channel, dynamic-range ("hybrid")
quantisation (float activations through int8 weights),
a graph input with a dynamic dimension other than the batch, a batch larger than one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import flatbuffers
import numpy as np
import tflite

from ..errors import ImportModelError, ModelError
from ..generators.sq8_tflm import compute_out_size
from .ir import (
    Activation,
    ActivationOptions,
    ConvOptions,
    DType,
    Graph,
    LeakyReluOptions,
    NoOptions,
    Op,
    OpKind,
    Padding,
    PoolOptions,
    Quant,
    ReduceOptions,
    SoftmaxOptions,
    Tensor,
)

_OP_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
_T = tflite.TensorType
# TFLite tensor type -> (numpy little-endian dtype of its buffer, IR dtype or None when refused)
_TYPES = {
    _T.FLOAT32: ("<f4", DType.FLOAT32), _T.INT8: ("i1", DType.INT8), _T.UINT8: ("u1", DType.UINT8),
    _T.INT16: ("<i2", DType.INT16), _T.INT32: ("<i4", DType.INT32), _T.INT64: ("<i8", DType.INT64),
    _T.BOOL: ("?", DType.BOOL), _T.FLOAT16: ("<f2", None),
}
_ACTIVATIONS = {0: Activation.NONE, 1: Activation.RELU, 2: Activation.RELU_N1_TO_1, 3: Activation.RELU6}
_ACTIVATION_NAMES = {v: k for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_")}
_PADDINGS = {0: Padding.SAME, 1: Padding.VALID}
_CALLS_SUBGRAPH = ("IF", "WHILE", "CALL_ONCE", "CALL")
SUPPORTED = tuple(k.value for k in OpKind)

# Options read per operator: (options class of the ``tflite`` package, fields). A field ending in
# "[]" is a vector.
_OPTIONS = {
    "CONV_2D": (tflite.Conv2DOptions, ("Padding", "StrideW", "StrideH", "FusedActivationFunction",
                                       "DilationWFactor", "DilationHFactor")),
    "DEPTHWISE_CONV_2D": (tflite.DepthwiseConv2DOptions, ("Padding", "StrideW", "StrideH", "DepthMultiplier",
                                                          "FusedActivationFunction", "DilationWFactor",
                                                          "DilationHFactor")),
    "FULLY_CONNECTED": (tflite.FullyConnectedOptions, ("FusedActivationFunction", "WeightsFormat", "KeepNumDims")),
    "ADD": (tflite.AddOptions, ("FusedActivationFunction",)),
    "SUB": (tflite.SubOptions, ("FusedActivationFunction",)),
    "MUL": (tflite.MulOptions, ("FusedActivationFunction",)),
    "AVERAGE_POOL_2D": (tflite.Pool2DOptions, ("Padding", "StrideW", "StrideH", "FilterWidth", "FilterHeight",
                                               "FusedActivationFunction")),
    "MAX_POOL_2D": (tflite.Pool2DOptions, ("Padding", "StrideW", "StrideH", "FilterWidth", "FilterHeight",
                                           "FusedActivationFunction")),
    "MEAN": (tflite.ReducerOptions, ("KeepDims",)),
    "SUM": (tflite.ReducerOptions, ("KeepDims",)),
    "REDUCE_PROD": (tflite.ReducerOptions, ("KeepDims",)),
    "RESHAPE": (tflite.ReshapeOptions, ("NewShape[]",)),
    "SQUEEZE": (tflite.SqueezeOptions, ("SqueezeDims[]",)),
    "CONCATENATION": (tflite.ConcatenationOptions, ("Axis", "FusedActivationFunction")),
    "SOFTMAX": (tflite.SoftmaxOptions, ("Beta",)),
    "LEAKY_RELU": (tflite.LeakyReluOptions, ("Alpha",)),
    "STRIDED_SLICE": (tflite.StridedSliceOptions, ("BeginMask", "EndMask", "EllipsisMask", "NewAxisMask",
                                                   "ShrinkAxisMask", "Offset")),
    "PACK": (tflite.PackOptions, ("ValuesCount", "Axis")),
    "UNPACK": (tflite.UnpackOptions, ("Num", "Axis")),
    "GATHER": (tflite.GatherOptions, ("Axis", "BatchDims")),
    "SHAPE": (tflite.ShapeOptions, ("OutType",)),
    "CAST": (tflite.CastOptions, ("InDataType", "OutDataType")),
}


# ---- step 1: the flatbuffer into plain records --------------------------------------------------


@dataclass(frozen=True)
class _RawTensor:
    index: int
    name: str
    shape: Tuple[int, ...]
    signature: Optional[Tuple[int, ...]]
    type: int
    quant: Optional[Quant]
    data: Optional[np.ndarray]


@dataclass(frozen=True)
class _RawOp:
    index: int
    kind: str                         # the builtin operator's name, or "CUSTOM(code)"
    inputs: Tuple[int, ...]           # tensor indices, -1 for an absent optional input
    outputs: Tuple[int, ...]
    options: dict


@dataclass(frozen=True)
class _RawModel:
    tensors: Tuple[_RawTensor, ...]
    ops: Tuple[_RawOp, ...]
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]


def _vector(obj, field: str) -> Tuple:
    if getattr(obj, field + "IsNone")():
        return ()
    return tuple(getattr(obj, field)(j) for j in range(getattr(obj, field + "Length")()))


def _option_values(cls, fields: Sequence[str], table) -> dict:
    """The fields of an options table; the schema's defaults when the operator has none."""
    if table is None:
        b = flatbuffers.Builder(0)
        getattr(tflite, cls.__name__ + "Start")(b)
        b.Finish(getattr(tflite, cls.__name__ + "End")(b))
        obj = cls.GetRootAs(b.Output(), 0)
    else:
        obj = cls()
        obj.Init(table.Bytes, table.Pos)
    return {f.removesuffix("[]"): _vector(obj, f[:-2]) if f.endswith("[]") else getattr(obj, f)() for f in fields}


def _read_options(op, kind: str, where: str) -> dict:
    if kind not in _OPTIONS:
        return {}
    cls, fields = _OPTIONS[kind]
    table = op.BuiltinOptions()
    if table is not None and op.BuiltinOptionsType() != getattr(tflite.BuiltinOptions, cls.__name__):
        raise ImportModelError(f"{kind} carries options of union type {op.BuiltinOptionsType()}, not "
                               f"{cls.__name__}: the file is corrupt", where=where)
    return _option_values(cls, fields, table)


def _quant(t) -> Optional[Quant]:
    q = t.Quantization()
    if q is None or q.ScaleLength() == 0:
        return None
    scales = tuple(float(s) for s in q.ScaleAsNumpy())
    zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,) * len(scales)
    return Quant(scales, zps, int(q.QuantizedDimension()))


def _buffer_bytes(model, data: bytes, index: int) -> Optional[bytes]:
    if index <= 0 or index >= model.BuffersLength():
        return None
    buf = model.Buffers(index)
    if buf.Offset() > 1:  # stored after the flatbuffer (models over 2 GB)
        end = buf.Offset() + buf.Size()
        if end > len(data):
            raise IndexError("buffer beyond the end of the file")
        return data[buf.Offset():end]
    if buf.DataLength() == 0:
        return None
    return buf.DataAsNumpy().tobytes()


def _const_data(raw: Optional[bytes], ttype: int, shape: Tuple[int, ...], name: str, where: str):
    if raw is None:
        return None
    if ttype not in _TYPES:
        return None  # refused by type when an operator uses it
    dt = np.dtype(_TYPES[ttype][0])
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) != count * dt.itemsize:
        raise ImportModelError(f"constant tensor {name!r} holds {len(raw)} bytes, its shape {list(shape)} needs "
                               f"{count * dt.itemsize}: the file is truncated or corrupt", where=where, arg=name)
    arr = np.frombuffer(raw, dtype=dt).astype(dt.newbyteorder("="), copy=False).reshape(shape)
    arr.flags.writeable = False
    return arr


def _tensor(model, data: bytes, g, i: int, where: str, seen: set) -> _RawTensor:
    t = g.Tensors(i)
    name = (t.Name() or b"").decode("utf-8", "replace") or f"tensor_{i}"
    if name in seen:
        name = f"{name}_{i}"
    seen.add(name)
    shape = tuple(int(d) for d in _vector(t, "Shape"))
    sig = tuple(int(d) for d in _vector(t, "ShapeSignature")) if not t.ShapeSignatureIsNone() else None
    raw = _buffer_bytes(model, data, t.Buffer())
    return _RawTensor(i, name, shape, sig, t.Type(), _quant(t), _const_data(raw, t.Type(), shape, name, where))


def _opcode(model, op) -> str:
    code_index = op.OpcodeIndex()
    if code_index >= model.OperatorCodesLength():
        raise IndexError("operator code index out of range")
    oc = model.OperatorCodes(code_index)
    code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
    if code == tflite.BuiltinOperator.CUSTOM:
        return f"CUSTOM({(oc.CustomCode() or b'').decode('utf-8', 'replace')})"
    return _OP_NAMES.get(code, f"builtin operator {code}")


def _parse_model(path: str, data: bytes) -> _RawModel:
    model = tflite.Model.GetRootAsModel(data, 0)
    if model.SubgraphsLength() < 1:
        raise ImportModelError("the model has no subgraph", where=path)
    g = model.Subgraphs(0)
    seen: set = set()
    tensors = tuple(_tensor(model, data, g, i, path, seen) for i in range(g.TensorsLength()))
    ops = []
    for k in range(g.OperatorsLength()):
        op = g.Operators(k)
        kind = _opcode(model, op)
        where = f"{path}: operator {k} ({kind})"
        if kind in _CALLS_SUBGRAPH:
            raise ImportModelError(f"{kind} calls another subgraph (the model has {model.SubgraphsLength()}): "
                                   "control flow is not supported, only a model of one subgraph", where=where)
        ins, outs = tuple(int(i) for i in _vector(op, "Inputs")), tuple(int(i) for i in _vector(op, "Outputs"))
        for i in ins + outs:
            if not -1 <= i < len(tensors):
                raise IndexError("tensor index out of range")
        ops.append(_RawOp(k, kind, ins, outs, _read_options(op, kind, where)))
    gins, gouts = tuple(int(i) for i in _vector(g, "Inputs")), tuple(int(i) for i in _vector(g, "Outputs"))
    for i in gins + gouts:
        if not 0 <= i < len(tensors):
            raise IndexError("graph tensor index out of range")
    return _RawModel(tensors, tuple(ops), gins, gouts)


def _parse(path: str, data: bytes) -> _RawModel:
    """Check the file is a TFLite flatbuffer and copy it out (step 1)."""
    if len(data) == 0:
        raise ImportModelError("the file is empty, not a TFLite model", where=path)
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise ImportModelError("not a TFLite model: no 'TFL3' flatbuffer identifier at bytes 4..7",
                               where=path, hint="give a .tflite file written by TensorFlow Lite's converter")
    try:
        return _parse_model(path, data)
    except (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError, OverflowError,
            AttributeError) as e:
        raise ImportModelError(f"the TFLite model is truncated or corrupt ({type(e).__name__}: {e})",
                               where=path) from None


# ---- step 2: folding, typed operators, shapes ---------------------------------------------------


@dataclass
class _Value:
    """A tensor as the build sees it: its record, its shape (inferred), its data if constant."""

    raw: _RawTensor
    shape: Tuple[int, ...]
    data: Optional[np.ndarray]


def _np_type(ttype: int) -> np.dtype:
    return np.dtype(_TYPES[ttype][0]).newbyteorder("=") if ttype in _TYPES else np.dtype("int32")


def _strided_slice(op: _RawOp, x, begin, end, strides):
    o = op.options
    if o["EllipsisMask"] or o["NewAxisMask"]:
        raise _NotFoldable
    index = []
    for i in range(len(begin)):
        b, e, s = int(begin[i]), int(end[i]), int(strides[i])
        if o["Offset"]:
            e = b + e
        if o["ShrinkAxisMask"] >> i & 1:
            index.append(b)
            continue
        index.append(slice(None if o["BeginMask"] >> i & 1 else b, None if o["EndMask"] >> i & 1 else e, s))
    return np.asarray(x[tuple(index)])


def _reduce_axes(axes, rank: int) -> Tuple[int, ...]:
    return tuple(sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)})) if rank else ()


class _NotFoldable(Exception):
    """An operator with constant inputs this folder does not evaluate (left to the graph)."""


def _fold_reshape(op, vals, out_types):
    del out_types
    return [vals[0].reshape(_new_shape(op, vals[0].size, vals[1] if len(vals) > 1 else None))]


# kind -> f(op, input values (None for an absent input), output numpy dtypes) -> output values.
_FOLD: Dict[str, Callable] = {
    "STRIDED_SLICE": lambda op, v, t: [_strided_slice(op, *v[:4]).astype(t[0])],
    "PACK": lambda op, v, t: [np.stack(v, axis=op.options["Axis"]).astype(t[0])],
    "UNPACK": lambda op, v, t: [np.asarray(a).astype(t[0]) for a in np.moveaxis(v[0], op.options["Axis"], 0)],
    "CONCATENATION": lambda op, v, t: [np.concatenate([np.asarray(a) for a in v], axis=op.options["Axis"]).astype(t[0])],
    "GATHER": lambda op, v, t: [np.take(v[0], v[1], axis=op.options["Axis"]).astype(t[0])],
    "CAST": lambda op, v, t: [np.asarray(v[0]).astype(t[0])],
    "ADD": lambda op, v, t: [(v[0] + v[1]).astype(t[0])],
    "SUB": lambda op, v, t: [(v[0] - v[1]).astype(t[0])],
    "MUL": lambda op, v, t: [(v[0] * v[1]).astype(t[0])],
    "FLOOR_DIV": lambda op, v, t: [np.floor_divide(v[0], v[1]).astype(t[0])],
    "REDUCE_PROD": lambda op, v, t: [np.prod(v[0], axis=_reduce_axes(v[1], v[0].ndim),
                                             keepdims=bool(op.options["KeepDims"])).astype(t[0])],
    "RESHAPE": _fold_reshape,
    "SQUEEZE": lambda op, v, t: [v[0].reshape(_squeezed(op, v[0].shape))],
    "EXPAND_DIMS": lambda op, v, t: [np.expand_dims(v[0], int(np.asarray(v[1]).reshape(-1)[0]))],
    "SLICE": lambda op, v, t: [np.asarray(v[0][tuple(slice(int(b), None if int(s) == -1 else int(b) + int(s))
                                                     for b, s in zip(v[1], v[2]))])],
    "FILL": lambda op, v, t: [np.full([int(d) for d in v[0]], v[1], dtype=t[0])],
}
# Only data movement folds on quantised tensors (TFLite copies the raw values); arithmetic only on
# plain integers and floats.
_MOVES = ("STRIDED_SLICE", "PACK", "UNPACK", "CONCATENATION", "GATHER", "RESHAPE", "SQUEEZE", "EXPAND_DIMS",
          "SLICE")


def _dequantize_const(v: _Value) -> np.ndarray:
    if v.data.dtype == np.float16:
        return v.data.astype(np.float32)
    q = v.raw.quant
    if q is None:
        raise _NotFoldable
    scales, zps = np.asarray(q.scales, np.float64), np.asarray(q.zero_points, np.int64)
    shape = [1] * v.data.ndim
    if len(q.scales) > 1:
        shape[q.axis] = -1
    return (scales.reshape(shape) * (v.data.astype(np.int64) - zps.reshape(shape))).astype(np.float32)


def _try_fold(op: _RawOp, ins: List[Optional[_Value]], outs: List[_RawTensor]) -> Optional[List[np.ndarray]]:
    """The outputs of ``op`` if it can be evaluated now, else None."""
    if op.kind == "SHAPE":
        return [np.asarray(ins[0].shape, dtype=_np_type(outs[0].type))]
    present = [v for v in ins if v is not None]
    if not present or any(v.data is None for v in present):
        return None
    try:
        if op.kind == "DEQUANTIZE":
            return [_dequantize_const(ins[0])]
        if op.kind not in _FOLD:
            return None
        quantised = any(t.quant is not None for t in outs) or any(v.raw.quant is not None for v in present)
        if quantised and op.kind not in _MOVES:
            return None
        return _FOLD[op.kind](op, [None if v is None else v.data for v in ins], [_np_type(t.type) for t in outs])
    except _NotFoldable:
        return None


def _new_shape(op: _RawOp, size: int, shape_input) -> Tuple[int, ...]:
    """RESHAPE's new shape: its constant shape input, else its options; one -1 resolved."""
    dims = [int(d) for d in (np.asarray(shape_input).reshape(-1) if shape_input is not None
                             else op.options.get("NewShape", ()))]
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if dims.count(-1) > 1 or (dims.count(-1) == 1 and (known == 0 or size % known)) or \
            (dims.count(-1) == 0 and known != size):
        raise ValueError(f"new shape {dims} does not hold {size} values")
    return tuple(size // known if d == -1 else d for d in dims)


def _squeezed(op: _RawOp, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    dims = {int(d) % len(shape) for d in op.options.get("SqueezeDims", ())}
    if not dims:
        return tuple(d for d in shape if d != 1)
    if any(shape[d] != 1 for d in dims):
        raise ValueError(f"SQUEEZE of dimensions {sorted(dims)} of shape {list(shape)}: not all are 1")
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def _padding(code: int) -> Padding:
    if code not in _PADDINGS:
        raise ValueError(f"unknown padding code {code}")
    return _PADDINGS[code]


def _activation(code: int, where: str) -> Activation:
    if code not in _ACTIVATIONS:
        raise ImportModelError(f"fused activation {_ACTIVATION_NAMES.get(code, code)} is not supported (NONE, "
                               "RELU, RELU6, RELU_N1_TO_1 are)", where=where)
    return _ACTIVATIONS[code]


def _conv_options(op: _RawOp, ins: List[Optional[_Value]], where: str) -> ConvOptions:
    o = op.options
    mult = 1
    if op.kind == "DEPTHWISE_CONV_2D":
        cin, cout = ins[0].shape[-1], ins[1].shape[-1]
        if cin == 0 or cout % cin:
            raise ValueError(f"{cout} filter channels for {cin} input channels")
        mult = cout // cin
    return ConvOptions(stride=(o["StrideH"], o["StrideW"]), dilation=(o["DilationHFactor"], o["DilationWFactor"]),
                       padding=_padding(o["Padding"]), activation=_activation(o["FusedActivationFunction"], where),
                       depth_multiplier=mult)


def _options(op: _RawOp, kind: OpKind, ins: List[Optional[_Value]], out_rank: int, where: str):
    o = op.options
    if kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        return _conv_options(op, ins, where)
    if kind in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        return PoolOptions(filter=(o["FilterHeight"], o["FilterWidth"]), stride=(o["StrideH"], o["StrideW"]),
                           padding=_padding(o["Padding"]),
                           activation=_activation(o["FusedActivationFunction"], where))
    if kind == OpKind.FULLY_CONNECTED and o["WeightsFormat"] != 0:
        raise ImportModelError("FULLY_CONNECTED with shuffled weights (WeightsFormat "
                               f"{o['WeightsFormat']}) is not supported", where=where)
    if kind in (OpKind.FULLY_CONNECTED, OpKind.ADD, OpKind.SUB, OpKind.MUL):
        return ActivationOptions(activation=_activation(o["FusedActivationFunction"], where))
    if kind == OpKind.CONCATENATION:
        return ActivationOptions(activation=_activation(o["FusedActivationFunction"], where),
                                 axis=o["Axis"] % out_rank)
    if kind == OpKind.SOFTMAX:
        return SoftmaxOptions(beta=float(o["Beta"]))
    if kind == OpKind.LEAKY_RELU:
        return LeakyReluOptions(alpha=float(o["Alpha"]))
    if kind == OpKind.MEAN:
        return ReduceOptions(axes=_reduce_axes(ins[1].data, len(ins[0].shape)), keep_dims=bool(o["KeepDims"]))
    return NoOptions()


def _window_shape(x: Tuple[int, ...], k: Tuple[int, int], opts, channels: int) -> Tuple[int, ...]:
    pad = opts.padding.value
    dil = getattr(opts, "dilation", (1, 1))
    oh = compute_out_size(pad, x[1], k[0], opts.stride[0], dil[0])
    ow = compute_out_size(pad, x[2], k[1], opts.stride[1], dil[1])
    if oh <= 0 or ow <= 0:
        raise ValueError(f"empty output {oh}x{ow}")
    return (x[0], oh, ow, channels)


def _infer_shape(op: _RawOp, kind: OpKind, ins: List[Optional[_Value]], opts) -> Tuple[int, ...]:
    """The output shape of a kept operator, from its inputs' shapes (TFLite's Prepare)."""
    x = ins[0].shape
    if kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        w = ins[1].shape
        if len(x) != 4 or len(w) != 4:
            raise ValueError(f"input {list(x)} and filter {list(w)} must be 4D")
        cout = w[0] if kind == OpKind.CONV_2D else w[3]
        return _window_shape(x, (w[1], w[2]), opts, cout)
    if kind in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        if len(x) != 4:
            raise ValueError(f"input {list(x)} must be 4D")
        return _window_shape(x, opts.filter, opts, x[3])
    if kind == OpKind.FULLY_CONNECTED:
        cout, cin = ins[1].shape
        size = int(np.prod(x, dtype=np.int64))
        if cin == 0 or size % cin:
            raise ValueError(f"input {list(x)} is not a multiple of {cin} weights per output")
        return x[:-1] + (cout,) if op.options["KeepNumDims"] else (size // cin, cout)
    if kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        return tuple(np.broadcast_shapes(x, ins[1].shape))
    if kind == OpKind.MEAN:
        if opts.keep_dims:
            return tuple(1 if i in opts.axes else d for i, d in enumerate(x))
        return tuple(d for i, d in enumerate(x) if i not in opts.axes)
    if kind == OpKind.PAD:
        p = np.asarray(ins[1].data).reshape(-1, 2)
        if p.shape[0] != len(x) or (p < 0).any():
            raise ValueError(f"paddings {p.tolist()} for a rank {len(x)} input")
        return tuple(d + int(a) + int(b) for d, (a, b) in zip(x, p))
    if kind == OpKind.RESHAPE:
        return _new_shape(op, int(np.prod(x, dtype=np.int64)), ins[1].data if len(ins) > 1 and ins[1] else None)
    if kind == OpKind.SQUEEZE:
        return _squeezed(op, x)
    if kind == OpKind.CONCATENATION:
        others = [v.shape for v in ins]
        ax = opts.axis
        if any(len(s) != len(x) or s[:ax] + s[ax + 1:] != x[:ax] + x[ax + 1:] for s in others):
            raise ValueError(f"shapes {[list(s) for s in others]} do not concatenate on axis {ax}")
        return x[:ax] + (sum(s[ax] for s in others),) + x[ax + 1:]
    return x


# Inputs each kept operator needs: (first optional input index or None, inputs that must be constant)
_ARITY = {
    OpKind.CONV_2D: (2, 3, (1, 2)), OpKind.DEPTHWISE_CONV_2D: (2, 3, (1, 2)), OpKind.FULLY_CONNECTED: (2, 3, (1, 2)),
    OpKind.ADD: (2, 2, ()), OpKind.SUB: (2, 2, ()), OpKind.MUL: (2, 2, ()), OpKind.PAD: (2, 2, (1,)),
    OpKind.MEAN: (2, 2, (1,)), OpKind.RESHAPE: (1, 2, (1,)),
}


def _check_inputs(op: _RawOp, kind: OpKind, ins: List[Optional[_Value]], where: str) -> None:
    lo, hi, const = _ARITY.get(kind, (1, 1 if kind != OpKind.CONCATENATION else 1 << 30, ()))
    if not lo <= len(ins) <= hi or any(v is None for v in ins[:lo]):
        raise ImportModelError(f"{kind.value} takes {lo} to {hi} inputs, the model gives {len(ins)}", where=where)
    for i in const:
        if i < len(ins) and ins[i] is not None and ins[i].data is None:
            raise ImportModelError(f"input {i} ({ins[i].raw.name!r}) of {kind.value} must be constant (a "
                                   "computed filter, bias, padding, axis or shape is not supported)",
                                   where=where, arg=ins[i].raw.name)


def _check_hybrid(kind: OpKind, ins: List[Optional[_Value]], where: str) -> None:
    """Dynamic-range ("hybrid") quantisation: float activations through int8 weights, quantised on the fly
    by TFLite's kernels. Neither a float nor an int8 network: refused."""
    if kind in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED) and \
            ins[0].raw.type == _T.FLOAT32 and ins[1].raw.type != _T.FLOAT32:
        w = ins[1].raw
        raise ImportModelError(f"{kind.value} takes float32 activations through {_TYPE_NAMES.get(w.type, w.type)} "
                               f"weights {w.name!r} (dynamic-range quantisation): not supported; convert with a "
                               "representative dataset (full int8) or without quantisation (float32, then "
                               "--calibration)", where=where, arg=w.name)


def _check_type(t: _RawTensor, is_const: bool, where: str) -> DType:
    name = _TYPE_NAMES.get(t.type, str(t.type))
    if t.type == _T.INT16 and not is_const:
        raise ImportModelError(f"int16 activations (tensor {t.name!r}) are not supported yet: import an int8 "
                               "model (TFLite's converter with int8 full-integer quantisation)", where=where,
                               arg=t.name)
    if t.type == _T.UINT8:
        raise ImportModelError(f"uint8 tensors (tensor {t.name!r}) are not supported: TFLite's uint8 "
                               "quantisation is deprecated; convert the model with int8 quantisation",
                               where=where, arg=t.name)
    if t.type not in _TYPES or _TYPES[t.type][1] is None:
        raise ImportModelError(f"tensor {t.name!r} of type {name} is not supported (int8, int32, int64, "
                               "float32 are)", where=where, arg=t.name)
    if t.type == _T.INT8 and t.quant is None:
        raise ImportModelError(f"int8 tensor {t.name!r} has no quantisation parameters (scale, zero point)",
                               where=where, arg=t.name)
    if t.type == _T.INT8 and not is_const and not t.quant.per_tensor:
        raise ImportModelError(f"activation {t.name!r} is quantised per channel ({len(t.quant.scales)} scales): "
                               "TFLite's int8 activations have one scale and zero point", where=where, arg=t.name)
    return _TYPES[t.type][1]


def _unsupported(op: _RawOp, model: _RawModel, where: str) -> ImportModelError:
    def names(idx):
        return ", ".join(repr(model.tensors[i].name) for i in idx if i >= 0) or "none"

    return ImportModelError(f"operator {op.kind} is not supported (operator {op.index}, inputs {names(op.inputs)}, "
                            f"outputs {names(op.outputs)})", where=where,
                            hint=f"supported TFLite operators: {', '.join(SUPPORTED)}")


def _check_input_shape(t: _RawTensor, path: str) -> Tuple[int, ...]:
    sig = t.signature if t.signature is not None else t.shape
    if any(d < 0 for d in sig[1:]):
        raise ImportModelError(f"graph input {t.name!r} has a dynamic shape {list(sig)} (-1 beyond the batch): "
                               "give the model fixed input dimensions", where=path, arg=t.name)
    shape = (1,) + t.shape[1:] if sig and sig[0] < 0 else t.shape
    if len(shape) >= 2 and shape[0] > 1:
        raise ImportModelError(f"graph input {t.name!r} has a batch of {shape[0]} (shape {list(shape)}): only one "
                               "image per inference is supported; convert with batch 1", where=path, arg=t.name)
    return shape


def _ir_tensor(v: _Value, dtype: DType) -> Tensor:
    return Tensor(v.raw.name, tuple(int(d) for d in v.shape), dtype, v.raw.quant, v.data)


class _Builder:
    """Step 2: walk the operators in order, fold, type and shape the rest."""

    def __init__(self, path: str, model: _RawModel):
        self.path, self.model = path, model
        self.values: Dict[int, _Value] = {}
        for t in model.tensors:
            if t.data is not None:
                self.values[t.index] = _Value(t, t.shape, t.data)
        for i in model.inputs:
            t = model.tensors[i]
            self.values[i] = _Value(t, _check_input_shape(t, path), None)
        self.ops: List[Op] = []
        self.used: Dict[int, DType] = {}

    def value(self, i: int, where: str) -> Optional[_Value]:
        if i < 0:
            return None
        if i not in self.values:
            t = self.model.tensors[i]
            raise ImportModelError(f"input tensor {t.name!r} is neither constant nor computed before this operator",
                                   where=where, arg=t.name)
        return self.values[i]

    def op(self, op: _RawOp) -> None:
        where = f"{self.path}: operator {op.index} ({op.kind})"
        ins = [self.value(i, where) for i in op.inputs]
        outs = [self.model.tensors[i] for i in op.outputs]
        try:
            folded = _try_fold(op, ins, outs)
        except (ValueError, IndexError, TypeError) as e:
            raise ImportModelError(f"cannot evaluate this constant operator: {e}", where=where) from None
        if folded is not None:
            for t, d in zip(outs, folded):
                d = np.array(d)
                d.flags.writeable = False
                self.values[t.index] = _Value(t, tuple(d.shape), d)
            return
        self.keep(op, ins, outs, where)

    def keep(self, op: _RawOp, ins: List[Optional[_Value]], outs: List[_RawTensor], where: str) -> None:
        if op.kind not in SUPPORTED:
            raise _unsupported(op, self.model, where)
        kind = OpKind(op.kind)
        _check_inputs(op, kind, ins, where)
        _check_hybrid(kind, ins, where)
        # RESHAPE's shape and MEAN's axes end in the output shape and the options
        kept = ins[:1] if kind in (OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.MEAN) else ins
        for v in kept:
            if v is not None:
                self.used[v.raw.index] = _check_type(v.raw, v.data is not None, where)
        for t in outs:
            self.used[t.index] = _check_type(t, False, where)
        try:
            out_rank = len(outs[0].shape) if kind != OpKind.CONCATENATION else len(ins[0].shape)
            opts = _options(op, kind, ins, out_rank, where)
            shape = _infer_shape(op, kind, ins, opts)
        except (ValueError, IndexError, TypeError, ModelError) as e:
            raise ImportModelError(f"invalid {op.kind}: {e.message if isinstance(e, ModelError) else e}",
                                   where=where) from None
        for t in outs:
            self.values[t.index] = _Value(t, shape, None)
        ins = kept
        label = f"{op.index} ({op.kind})"
        self.ops.append(Op(kind, op.index, label, tuple(None if v is None else v.raw.name for v in ins),
                           tuple(t.name for t in outs), opts))

    def graph(self) -> Graph:
        for op in self.model.ops:
            self.op(op)
        tensors = {}
        for i, dtype in self.used.items():
            v = self.values[i]
            tensors[v.raw.name] = _ir_tensor(v, dtype)
        for i in self.model.inputs + self.model.outputs:
            v = self.values.get(i)
            if v is None:
                raise ImportModelError(f"graph output {self.model.tensors[i].name!r} is computed by no operator",
                                       where=self.path, arg=self.model.tensors[i].name)
            if v.raw.name not in tensors:
                tensors[v.raw.name] = _ir_tensor(v, _check_type(v.raw, False, self.path))
        names = [self.model.tensors[i].name for i in self.model.inputs]
        return Graph(self.path, "tflite", "NHWC", tensors, tuple(self.ops), tuple(names),
                     tuple(self.model.tensors[i].name for i in self.model.outputs)).check()


def read_tflite(path: str, data: bytes) -> Graph:
    """The checked IR graph of the TFLite model ``data`` (read from ``path``, named in errors)."""
    model = _parse(path, bytes(data))
    return _Builder(path, model).graph()
