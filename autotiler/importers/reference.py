"""The numpy reference of an :mod:`.ir` graph (issue 24): what the source model computes.

* An int8 operator is computed by :mod:`autotiler.generators.sq8_tflm`, TensorFlow Lite Micro's
  integer arithmetic bit for bit, so an int8 graph's outputs are TFLM's (tests/test_import_tflite.py
  proves it against the ``tflite-micro`` interpreter on every committed TFLite model). What
  sq8_tflm lacks is here, written from TFLM's reference kernels:

  - ``MEAN`` over any axes, with or without kept dimensions: reduce.h's ``QuantizedMeanOrSum``
    (sq8_tflm's ``mean_hw`` arithmetic: the raw sum, ``- zp_in * n``, ``1/n`` folded into the
    multiplier) with ``n`` the number of reduced values;
  - ``PAD``: the padded values are the output zero point (pad.cc, int8 without constant values);
  - ``RESHAPE`` / ``SQUEEZE``: the values unchanged (the output tensor holds the new shape);
  - ``QUANTIZE`` float32 -> int8 (reference/quantize.h ``AffineQuantize``):
    ``clamp(round(x / scale) + zp)`` with the division in float32 and rounding half away from
    zero; int8 -> int8 is sq8_tflm's requantisation;
  - ``DEQUANTIZE`` int8 -> float32 (reference/dequantize.h): ``float(double(scale) * (q - zp))``.

* A graph whose :attr:`~.ir.Graph.arithmetic` is "onnxruntime" (an ONNX QDQ model) computes its int8
  operators as onnxruntime 1.32 does (:func:`_int8_ort`, sq8_tflm's onnxruntime section): single
  rounding in CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, SUB, MUL and MEAN; QUANTIZE int8 ->
  int8 and the unary activations by onnxruntime's 256-entry tables; SOFTMAX as QLinearSoftmax;
  AVERAGE_POOL_2D rounded half to even. The other operators are the same in both.

* A float32 operator (a float model, before :mod:`.quantize`) is computed in float: float64
  accumulation, each operator's result rounded to float32. It is the float reference the
  quantiser compares against (SQNR), not TFLite's float kernels bit for bit (summation order
  differs in the last bits).

Errors (a shape or a quantisation TFLM's Prepare refuses, an input of the wrong shape or dtype)
are :class:`ImportModelError` naming the operator.
"""

from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ImportModelError, ModelError
from ..generators import sq8_tflm as R
from ..generators.sq8_gen_tflm_pad import pad
from .ir import Activation, DType, Graph, Op, OpKind, Tensor

Arrays = Sequence[Optional[np.ndarray]]


def _qparams(t: Tensor) -> R.QParams:
    if t.quant is None:
        raise ValueError(f"tensor {t.name!r} has no quantisation")
    if not t.quant.per_tensor:
        raise ValueError(f"tensor {t.name!r} is quantised per channel; an activation must have one scale")
    return R.QParams(t.quant.scales[0], t.quant.zero_points[0])


def _filter_qparams(t: Tensor) -> R.FilterQParams:
    if t.quant is None:
        raise ValueError(f"filter {t.name!r} has no quantisation")
    return R.FilterQParams(tuple(t.quant.scales))


# ---- int8 operators -------------------------------------------------------------------------------


def _mean_int8(x: np.ndarray, axes: Tuple[int, ...], keep_dims: bool, in_q: R.QParams, out_q: R.QParams,
               out_shape: Tuple[int, ...], single_rounding: bool = False) -> np.ndarray:
    """reduce.h ``QuantizedMeanOrSum`` over ``axes``: ``MBQM(sum - zp_in * n, mean_multiplier(n)) + zp_out``;
    with ``single_rounding``, QLinearGlobalAveragePool / ReduceMean in onnxruntime's arithmetic (rounded once)."""
    if x.ndim == 4 and axes == (1, 2):
        return R.mean_hw(x, in_q, out_q, "single" if single_rounding else "double").reshape(out_shape)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    s = R.wrap32(x.astype(np.int64).sum(axis=axes, keepdims=keep_dims))
    r = R.mean_multiplier(in_q, out_q, count)
    shifted = R.wrap32(s - int(in_q.zero_point) * count)
    multiply = R.single_rounding_multiply if single_rounding else R.multiply_by_quantized_multiplier
    res = multiply(shifted, r.multiplier, r.shift) + int(out_q.zero_point)
    return np.clip(res, R.INT8_MIN, R.INT8_MAX).astype(np.int8).reshape(out_shape)


def _quantize_float(x: np.ndarray, q: R.QParams) -> np.ndarray:
    """``AffineQuantize``: ``round(x / scale)`` in float32, half away from zero, ``+ zp``, clamp."""
    v = np.asarray(x, np.float32) / np.float32(q.scale)
    r = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))
    return np.clip(r.astype(np.int64) + int(q.zero_point), R.INT8_MIN, R.INT8_MAX).astype(np.int8)


def _dequantize(x: np.ndarray, t: Tensor) -> np.ndarray:
    q = t.quant
    shape = [1] * x.ndim
    if not q.per_tensor:
        shape[q.axis] = -1
    scales = np.asarray([float(np.float32(s)) for s in q.scales], np.float64).reshape(shape)
    zps = np.asarray(q.zero_points, np.int64).reshape(shape)
    return (scales * (x.astype(np.int64) - zps)).astype(np.float32)


#: The int8 operators whose onnxruntime arithmetic differs from TFLM's (the others are computed alike).
ORT_SPECIFIC = (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED, OpKind.ADD, OpKind.SUB,
                OpKind.MUL, OpKind.MEAN, OpKind.AVERAGE_POOL_2D, OpKind.QUANTIZE, OpKind.SOFTMAX, OpKind.LOGISTIC,
                OpKind.TANH, OpKind.HARD_SWISH, OpKind.LEAKY_RELU, OpKind.RELU, OpKind.RELU6)

#: The onnxruntime table (sq8_tflm.ort_lookup_table) of a unary operator.
ORT_TABLE_KIND = {OpKind.QUANTIZE: "IDENTITY", OpKind.LOGISTIC: "LOGISTIC", OpKind.TANH: "TANH",
                  OpKind.HARD_SWISH: "HARD_SWISH", OpKind.LEAKY_RELU: "LEAKY_RELU", OpKind.RELU: "RELU",
                  OpKind.RELU6: "RELU6"}


def ort_table(graph: Graph, op: Op) -> np.ndarray:
    """The 256-entry int8 table of a unary int8 operator in onnxruntime's arithmetic (``table[x + 128]``)."""
    alpha = op.options.alpha if op.kind == OpKind.LEAKY_RELU else 0.0
    return R.ort_lookup_table(ORT_TABLE_KIND[op.kind], _qparams(graph.tensor(op.inputs[0])),
                              _qparams(graph.tensor(op.outputs[0])), alpha)


def _int8_ort(graph: Graph, op: Op, xs: Arrays) -> np.ndarray:
    """One int8 operator of :data:`ORT_SPECIFIC` (not float -> int8 QUANTIZE), onnxruntime's arithmetic."""
    k, o = op.kind, op.options
    ins = [None if n is None else graph.tensor(n) for n in op.inputs]
    out = graph.tensor(op.outputs[0])
    x, oq, iq = xs[0], _qparams(out), _qparams(ins[0])
    if k in ORT_TABLE_KIND:
        return R.apply_lookup_table(x, ort_table(graph, op))
    if k in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
        w, b, wq, act = xs[1], xs[2] if len(xs) > 2 else None, _filter_qparams(ins[1]), o.activation.value
        if k == OpKind.FULLY_CONNECTED:
            return R.fully_connected(x, w, b, iq, wq, oq, act, rounding="single").reshape(out.shape)
        kw = dict(stride=o.stride, dilation=o.dilation, padding=o.padding.value, activation=act, rounding="single")
        if k == OpKind.CONV_2D:
            return R.conv2d(x, w, b, iq, wq, oq, **kw)
        return R.depthwise_conv2d(x, w, b, iq, wq, oq, depth_multiplier=o.depth_multiplier, **kw)
    if k == OpKind.AVERAGE_POOL_2D:
        return R.ort_average_pool2d(x, iq, oq, o.filter, o.stride, o.padding.value, o.activation.value)
    if k in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        f = {OpKind.ADD: R.add, OpKind.SUB: R.sub, OpKind.MUL: R.mul}[k]
        return f(x, xs[1], iq, _qparams(ins[1]), oq, o.activation.value, rounding="single")
    if k == OpKind.MEAN:
        return _mean_int8(x, o.axes, o.keep_dims, iq, oq, out.shape, single_rounding=True)
    return R.ort_softmax(x, iq, oq)       # SOFTMAX (beta 1: onnxruntime's Softmax has none)


def _int8(graph: Graph, op: Op, xs: Arrays) -> np.ndarray:
    """One int8 operator, TFLM's arithmetic (or onnxruntime's, as the graph says)."""
    k, o = op.kind, op.options
    if graph.arithmetic == "onnxruntime" and k in ORT_SPECIFIC and graph.tensor(op.inputs[0]).dtype == DType.INT8:
        return _int8_ort(graph, op, xs)
    ins = [None if n is None else graph.tensor(n) for n in op.inputs]
    out = graph.tensor(op.outputs[0])
    x = xs[0]
    if k == OpKind.DEQUANTIZE:
        return _dequantize(x, ins[0])
    oq = _qparams(out)
    if k == OpKind.QUANTIZE:
        if ins[0].dtype == DType.FLOAT32:
            return _quantize_float(x, oq)
        return R.quantize(x, _qparams(ins[0]), oq)
    iq = _qparams(ins[0])
    if k in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
        w, b, wq, act = xs[1], xs[2] if len(xs) > 2 else None, _filter_qparams(ins[1]), o.activation.value
        if k == OpKind.FULLY_CONNECTED:
            return R.fully_connected(x, w, b, iq, wq, oq, act).reshape(out.shape)
        kw = dict(stride=o.stride, dilation=o.dilation, padding=o.padding.value, activation=act)
        if k == OpKind.CONV_2D:
            return R.conv2d(x, w, b, iq, wq, oq, **kw)
        return R.depthwise_conv2d(x, w, b, iq, wq, oq, depth_multiplier=o.depth_multiplier, **kw)
    if k in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        f = R.average_pool2d if k == OpKind.AVERAGE_POOL_2D else R.max_pool2d
        return f(x, iq, oq, o.filter, o.stride, o.padding.value, o.activation.value)
    if k in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        f = {OpKind.ADD: R.add, OpKind.SUB: R.sub, OpKind.MUL: R.mul}[k]
        return f(x, xs[1], iq, _qparams(ins[1]), oq, o.activation.value)
    if k == OpKind.MEAN:
        return _mean_int8(x, o.axes, o.keep_dims, iq, oq, out.shape)
    if k == OpKind.PAD:   # the layer's own reference: PADV2's constant (a third input) as the lowering reads it
        value = int(np.asarray(xs[2]).ravel()[0]) if len(xs) > 2 and xs[2] is not None else None
        return pad(x, np.asarray(xs[1]), oq, value)
    if k in (OpKind.RESHAPE, OpKind.SQUEEZE):
        return x.reshape(out.shape)
    if k == OpKind.CONCATENATION:
        return _clamp_act(R.concatenation(xs, [_qparams(t) for t in ins], oq, o.axis), o.activation, oq)
    if k == OpKind.SOFTMAX:
        return R.softmax(x, iq, oq, o.beta)
    if k == OpKind.LEAKY_RELU:
        return R.leaky_relu(x, iq, oq, o.alpha)
    f = {OpKind.RELU: R.relu, OpKind.RELU6: R.relu6, OpKind.HARD_SWISH: R.hard_swish, OpKind.LOGISTIC: R.logistic,
         OpKind.TANH: R.tanh}[k]
    return f(x, iq, oq)


def _clamp_act(x: np.ndarray, act: Activation, oq: R.QParams) -> np.ndarray:
    """A fused activation on values already in the output's quantisation (CONCATENATION)."""
    lo, hi = R.activation_range(act.value, oq)
    return np.clip(x, lo, hi).astype(np.int8)


# ---- float32 operators ----------------------------------------------------------------------------


def _act_f(x: np.ndarray, act: Activation) -> np.ndarray:
    bounds = {Activation.NONE: (-np.inf, np.inf), Activation.RELU: (0.0, np.inf), Activation.RELU6: (0.0, 6.0),
              Activation.RELU_N1_TO_1: (-1.0, 1.0)}[act]
    return np.clip(x, *bounds)


def _windows_f(x: np.ndarray, k: Tuple[int, int], stride: Tuple[int, int], dilation: Tuple[int, int],
               padding: str, fill: float) -> np.ndarray:
    """``[N, OH, OW, KH, KW, C]`` taps of an NHWC tensor padded with ``fill`` as TFLite pads."""
    n, h, w, c = x.shape
    oh = R.compute_out_size(padding, h, k[0], stride[0], dilation[0])
    ow = R.compute_out_size(padding, w, k[1], stride[1], dilation[1])
    pt, pb = R.compute_padding(stride[0], dilation[0], h, k[0], oh)
    pl, pr = R.compute_padding(stride[1], dilation[1], w, k[1], ow)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    out = np.empty((n, oh, ow, k[0], k[1], c), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            y0, x0 = i * dilation[0], j * dilation[1]
            out[:, :, :, i, j, :] = xp[:, y0:y0 + (oh - 1) * stride[0] + 1:stride[0],
                                       x0:x0 + (ow - 1) * stride[1] + 1:stride[1], :]
    return out


def _conv_f(op: Op, x: np.ndarray, w: np.ndarray, b: Optional[np.ndarray]) -> np.ndarray:
    o = op.options
    x64 = x.astype(np.float64)
    if op.kind == OpKind.DEPTHWISE_CONV_2D:
        win = _windows_f(x64, w.shape[1:3], o.stride, o.dilation, o.padding.value, 0.0)
        win = np.repeat(win, o.depth_multiplier, axis=-1)
        acc = np.einsum("nhwijc,ijc->nhwc", win, w[0].astype(np.float64))
    else:
        cout, kh, kw, cf = w.shape
        groups = x.shape[3] // cf
        per = cout // groups
        win = _windows_f(x64, (kh, kw), o.stride, o.dilation, o.padding.value, 0.0)
        acc = np.concatenate([np.tensordot(win[..., g * cf:(g + 1) * cf], w[g * per:(g + 1) * per].astype(np.float64),
                                           axes=([3, 4, 5], [1, 2, 3])) for g in range(groups)], axis=-1)
    if b is not None:
        acc = acc + b.astype(np.float64)
    return _act_f(acc, o.activation)


def _pool_f(op: Op, x: np.ndarray) -> np.ndarray:
    o = op.options
    if op.kind == OpKind.MAX_POOL_2D:
        res = _windows_f(x.astype(np.float64), o.filter, o.stride, (1, 1), o.padding.value, -np.inf).max(axis=(3, 4))
    else:  # the average of the in-image taps only
        win = _windows_f(x.astype(np.float64), o.filter, o.stride, (1, 1), o.padding.value, 0.0).sum(axis=(3, 4))
        ones = _windows_f(np.ones(x.shape[:3] + (1,)), o.filter, o.stride, (1, 1), o.padding.value, 0.0)
        res = win / ones.sum(axis=(3, 4))
    return _act_f(res, o.activation)


def _softmax_f(x: np.ndarray, beta: float) -> np.ndarray:
    e = np.exp((x.astype(np.float64) - x.max(axis=-1, keepdims=True)) * float(np.float32(beta)))
    return e / e.sum(axis=-1, keepdims=True)


_FLOAT_UNARY: Dict[OpKind, Callable[[np.ndarray], np.ndarray]] = {
    OpKind.RELU: lambda x: np.maximum(x, 0.0),
    OpKind.RELU6: lambda x: np.clip(x, 0.0, 6.0),
    OpKind.HARD_SWISH: lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    OpKind.LOGISTIC: lambda x: 1.0 / (1.0 + np.exp(-x)),
    OpKind.TANH: np.tanh,
}


def _float(graph: Graph, op: Op, xs: Arrays) -> np.ndarray:
    """One float32 operator."""
    k, o = op.kind, op.options
    out = graph.tensor(op.outputs[0])
    x = np.asarray(xs[0]).astype(np.float64)
    if k == OpKind.QUANTIZE:
        return _quantize_float(xs[0], _qparams(out))
    if k in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        return _conv_f(op, xs[0], xs[1], xs[2] if len(xs) > 2 else None)
    if k == OpKind.FULLY_CONNECTED:
        w = xs[1].astype(np.float64)
        acc = x.reshape(-1, w.shape[1]) @ w.T
        if len(xs) > 2 and xs[2] is not None:
            acc = acc + xs[2].astype(np.float64)
        return _act_f(acc, o.activation).reshape(out.shape)
    if k in (OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D):
        return _pool_f(op, xs[0])
    if k in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
        y = np.asarray(xs[1]).astype(np.float64)
        res = x + y if k == OpKind.ADD else x - y if k == OpKind.SUB else x * y
        return _act_f(res, o.activation)
    if k == OpKind.MEAN:
        return x.mean(axis=o.axes, keepdims=o.keep_dims).reshape(out.shape)
    if k == OpKind.PAD:
        return np.pad(x, np.asarray(xs[1]).reshape(-1, 2).astype(np.int64))
    if k in (OpKind.RESHAPE, OpKind.SQUEEZE):
        return x.reshape(out.shape)
    if k == OpKind.CONCATENATION:
        return _act_f(np.concatenate([np.asarray(v, np.float64) for v in xs], axis=o.axis), o.activation)
    if k == OpKind.SOFTMAX:
        return _softmax_f(x, o.beta)
    if k == OpKind.LEAKY_RELU:
        return np.where(x >= 0, x, x * float(np.float32(o.alpha)))
    if k == OpKind.DEQUANTIZE:
        return x
    return _FLOAT_UNARY[k](x)


# ---- the graph -------------------------------------------------------------------------------------


def _is_float_op(graph: Graph, op: Op) -> bool:
    """Computed in float: its first input is float32 (QUANTIZE float -> int8 included), or it is a
    float32 -> float32 DEQUANTIZE (float16 weights)."""
    first = graph.tensor(op.inputs[0])
    return first.dtype == DType.FLOAT32 and first.quant is None


def _check_inputs(graph: Graph, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    unknown = sorted(set(inputs) - set(graph.inputs))
    if unknown:
        raise ImportModelError(f"{unknown[0]!r} is not an input of the graph (its inputs: "
                               f"{', '.join(graph.inputs)})", where=graph.source, arg=unknown[0])
    values = {}
    for name in graph.inputs:
        t = graph.tensor(name)
        if name not in inputs:
            raise ImportModelError(f"no value given for graph input {name!r}", where=graph.source, arg=name)
        x = np.asarray(inputs[name])
        if x.dtype != t.dtype.numpy or tuple(x.shape) != tuple(t.shape):
            raise ImportModelError(f"graph input {name!r} takes {t.dtype.value} {list(t.shape)}, got {x.dtype} "
                                   f"{list(x.shape)}", where=graph.source, arg=name)
        values[name] = x
    return values


def _evaluate(graph: Graph, op: Op, xs: Arrays) -> np.ndarray:
    out = graph.tensor(op.outputs[0])
    res = _float(graph, op, xs) if _is_float_op(graph, op) else _int8(graph, op, xs)
    res = np.asarray(res)
    if out.dtype == DType.FLOAT32:
        res = res.astype(np.float32)
    if res.dtype != out.dtype.numpy or tuple(res.shape) != tuple(out.shape):
        raise ValueError(f"computed {res.dtype} {list(res.shape)} for an output of {out.dtype.value} "
                         f"{list(out.shape)}")
    return res


def run(graph: Graph, inputs: Mapping[str, np.ndarray]) -> dict:
    """{tensor name: value} of every tensor the graph computes on ``inputs`` (by graph input name),
    graph inputs included."""
    values: Dict[str, np.ndarray] = _check_inputs(graph, inputs)
    for op in graph.ops:
        xs = [None if n is None else (values[n] if n in values else graph.tensor(n).data) for n in op.inputs]
        try:
            values[op.outputs[0]] = _evaluate(graph, op, xs)
        except (ModelError, ValueError, KeyError, IndexError) as e:
            message = e.message if isinstance(e, ModelError) else str(e)
            raise ImportModelError(f"the reference cannot compute this operator: {message}",
                                   where=graph.where(op)) from None
    return values

