"""Float models (issue 24 §4): quantise an :mod:`.ir` graph computing in float32 into the int8 graph
TensorFlow Lite's converter would give for the same network and representative data, so that the
rest of the importer (lowering, script, verification) sees an ordinary int8 TFLite graph.

The rules are the converter's (TensorFlow 2.x ``TFLiteConverter`` with ``Optimize.DEFAULT``, a
representative dataset and int8 builtins; checked against TF 2.21's output on the same network and
data, see tests/test_import_quantize.py):

* **Calibration**: every float tensor's range is the min and max of its values over the whole
  calibration set (``calibration_logger.h`` ``MinMax::Update``), the float graph run one sample at
  a time by :func:`.reference.run`. TF 2.21's calibrator also records, for an ADD, SUB or MUL whose
  output the interpreter writes in place over an input, that input with the output's values: the
  first input of the output's shape that is computed (not a graph input nor output) and read by
  this operator only gets the union of both ranges, unless the output is a graph output. It is
  reproduced (the converter's parameters are the target).
* **Activations**: asymmetric int8 from the range widened to include 0
  (``quantization_utils.cc`` ``GetAsymmetricQuantizationParams``): ``scale = (max - min) / 255``,
  ``zero_point = round(-128 - min / scale)`` clamped to [-128, 127] (round half away from zero),
  computed in double, the scale stored as float32. A tensor that is 0 on every calibration input
  (TFLite would give scale 0, which TFLM cannot use) gets scale 1.0, zero point -128 (assumption).
* **Weights** (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): symmetric per output channel
  (``SymmetricPerChannelQuantization``): ``scale[c] = max|w[c]| / 127``, ``q = round(w / scale[c])``
  in [-127, 127], zero point 0; the channel axis is 0 (conv, FC) or 3 (depth wise: the last). An
  all-zero channel gets scale 1/127 (assumption: TFLite gives 0). A scale too small for the bias
  to fit int32 is widened as ``AdjustWeightsForBiasScale`` does.
* **Biases**: int32 at ``scale = s_in * s_w[c]``, zero point 0 (``SymmetricPerChannelBiasQuantize``).
* **Fixed output quantisations** (``operator_property.cc``): SOFTMAX and LOGISTIC ``1/256, -128``,
  TANH ``1/128, 0``.
* **Same-scale operators**: AVERAGE_POOL_2D, MAX_POOL_2D, RESHAPE, SQUEEZE, PAD, RELU6 and
  CONCATENATION (all inputs) keep their input's quantisation (TFLM does not rescale there), so
  every tensor they join takes one quantisation. As TF 2.x's quantiser propagates it (forward
  through single-input operators, backward from a concatenation): the range of the group's last
  CONCATENATION output if it holds one (a convolution feeding a concatenation, directly or through
  a pool, takes the concatenation's quantisation: its own range is not used), else the range of
  the group's first tensor (the one a chain of pools starts from); an operator's fixed output
  quantisation wins over both.
  One deliberate difference: TF 2.21 gives a standalone RELU6 its own output range (``[0, 6]``
  measured), but TFLM's int8 RELU6 clamps without rescaling (``Relu6Quantized`` reads the input's
  quantisation only), so that model computes wrong values on TFLM; here RELU6 keeps its input's
  quantisation, which TFLM computes right. A standalone RELU takes its own range, as the
  converter does (TFLM's RELU rescales).
* Constant float inputs of ADD, SUB, MUL, CONCATENATION are quantised as activations from their
  own values (``quantize_input_as_activations``).

Against TF 2.21's converter on the float test models (tests/models/import/*_float.tflite and their
int8 conversions): every zero point, int8 weight and int32 bias equal, every scale within 1e-6
(the float32 ranges differ in their last bits: TFLite's float kernels sum in another order).

The report lines give, per operator, its output's quantisation and the SQNR (dB) of the quantised
network against the float one over the calibration set (NNTool's ``qerror``), then each graph
output's SQNR and, for a vector output, how often its top-1 index agrees with the float model's.
Both networks run on :func:`.reference.run` (the float one in float32, the int8 one with TFLM's
arithmetic, bit for bit), so the SQNR is the deployed network's.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import ImportModelError
from . import reference
from .ir import (
    DType,
    Graph,
    Op,
    OpKind,
    Quant,
    Tensor,
)

INT8_MIN, INT8_MAX = -128, 127
WEIGHT_MAX = 127                     # symmetric weights: [-127, 127] (kMaxQuantizedValue)
INT32_MAX = 2**31 - 1

SOFTMAX_QUANT = Quant((1.0 / 256.0,), (-128,))
LOGISTIC_QUANT = Quant((1.0 / 256.0,), (-128,))
TANH_QUANT = Quant((1.0 / 128.0,), (0,))
FIXED_OUTPUT = {OpKind.SOFTMAX: SOFTMAX_QUANT, OpKind.LOGISTIC: LOGISTIC_QUANT, OpKind.TANH: TANH_QUANT}

# Operators whose data inputs and output share one quantisation (TFLM does not rescale there).
SAME_SCALE = frozenset({OpKind.AVERAGE_POOL_2D, OpKind.MAX_POOL_2D, OpKind.RESHAPE, OpKind.SQUEEZE,
                        OpKind.PAD, OpKind.RELU6, OpKind.CONCATENATION})
WEIGHTED = {OpKind.CONV_2D: 0, OpKind.DEPTHWISE_CONV_2D: 3, OpKind.FULLY_CONNECTED: 0}
# Operators whose constant float inputs are quantised as activations.
CONST_AS_ACTIVATION = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.CONCATENATION})
NOT_IN_FLOAT = frozenset({OpKind.QUANTIZE, OpKind.DEQUANTIZE})

CALIBRATION_HINT = "give --calibration FILE.npz: one float array per graph input name, shape [N, *input shape]"


# ---- entry points -------------------------------------------------------------------------------


def is_float(graph: Graph) -> bool:
    """The graph computes in float (needs calibration to import): an operator other than QUANTIZE
    and DEQUANTIZE reads or writes a float32 tensor. An int8 model with a float interface (a
    QUANTIZE at the input, a DEQUANTIZE at the output) is not."""
    for op in graph.ops:
        if op.kind in NOT_IN_FLOAT:
            continue
        for name in (*op.inputs, *op.outputs):
            if name is not None and graph.tensor(name).dtype is DType.FLOAT32 and not graph.tensor(name).is_const:
                return True
    return False


def load_calibration(path: str) -> Dict[str, np.ndarray]:
    """The arrays of a calibration ``.npz`` file, by name (checked against a graph by
    :func:`quantize_graph`)."""
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ImportModelError("calibration data must be a .npz file (numpy.savez), not a single .npy array",
                                   where=path, hint=CALIBRATION_HINT)
        with data:
            return {name: np.asarray(data[name]) for name in data.files}
    except ImportModelError:
        raise
    except Exception as e:   # OSError, ValueError, zipfile.BadZipFile...: one line, never a traceback
        raise ImportModelError(f"cannot read calibration data ({type(e).__name__}: {e})", where=path,
                               hint=CALIBRATION_HINT) from None


def quantize_graph(graph: Graph, calibration: Mapping[str, np.ndarray]) -> Tuple[Graph, List[str]]:
    """(int8 graph, per-layer report lines) of a float graph, from calibration data: one array per
    graph input name, shape ``[N, *input shape]`` or ``[N, *input shape without its batch of 1]``;
    for an ONNX model (``source_layout`` NCHW) a 4-D input's shape may be the model's own NCHW one
    (preferred when both match) or the IR's NHWC."""
    _check_float_graph(graph)
    samples = check_calibration(graph, calibration)
    ranges, floats = _calibrate(graph, samples)
    quants = _choose_quants(graph, ranges)
    qgraph = _build_int8_graph(graph, quants)
    return qgraph, _report(graph, qgraph, samples, floats, ranges)


# ---- checks ---------------------------------------------------------------------------------------


def _check_float_graph(graph: Graph) -> None:
    if not is_float(graph):
        raise ImportModelError("the model is not a float model: it is imported as it is, without calibration",
                               where=graph.source, hint="give no --calibration for an int8 model")
    for op in graph.ops:
        if op.kind in NOT_IN_FLOAT:
            raise ImportModelError(f"{op.kind.value} in a float model is not supported yet (the importer quantises "
                                   "a float model as a whole)", where=graph.where(op), arg=op.outputs[0],
                                   hint="convert the model to float32 throughout, or to int8 with TFLite's converter")
        for name in (*op.inputs, *op.outputs):
            if name is None:
                continue
            t = graph.tensor(name)
            if not t.is_const and t.dtype is not DType.FLOAT32:
                raise ImportModelError(f"tensor {name!r} is {t.dtype.value} in a float model: a model that mixes "
                                       "float and integer activations is not supported yet", where=graph.where(op),
                                       arg=name, hint="convert the model to float32 throughout")


def check_calibration(graph: Graph, calibration: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """{graph input: float64 array [N, *input shape]}: every input present, of its shape, finite."""
    unknown = sorted(set(calibration) - set(graph.inputs))
    if unknown:
        raise ImportModelError(f"calibration data has an array {unknown[0]!r} that is no input of the model (inputs: "
                               f"{', '.join(graph.inputs)})", where=graph.source, arg=unknown[0],
                               hint=CALIBRATION_HINT)
    samples, count = {}, None
    for name in graph.inputs:
        if name not in calibration:
            raise ImportModelError(f"calibration data has no array for input {name!r}", where=graph.source, arg=name,
                                   hint=CALIBRATION_HINT)
        samples[name] = _calibration_array(graph, name, calibration[name])
        if count is not None and len(samples[name]) != count:
            raise ImportModelError(f"calibration data has {len(samples[name])} samples for input {name!r} and {count} "
                                   "for another input", where=graph.source, arg=name,
                                   hint="give every input the same number of samples N")
        count = len(samples[name])
    return samples


def _calibration_forms(graph: Graph, name: str) -> List[Tuple[Tuple[int, ...], bool]]:
    """The shapes (after N) a calibration array of input ``name`` may have, each with whether it is
    NCHW: an ONNX model's 4-D input in its own layout first, then the IR's NHWC; each with and
    without a batch of 1."""
    shape = tuple(graph.tensor(name).shape)
    layouts = [(shape, False)]
    if graph.source_layout == "NCHW" and len(shape) == 4:
        layouts.insert(0, ((shape[0], shape[3], shape[1], shape[2]), True))
    forms = []
    for full, nchw in layouts:
        for form in (full, full[1:]) if full and full[0] == 1 else (full,):
            if all(form != f for f, _ in forms):
                forms.append((form, nchw))
    return forms


def _calibration_array(graph: Graph, name: str, value) -> np.ndarray:
    """The calibration samples of input ``name`` as float32 ``[N, *IR input shape]``."""
    shape = tuple(graph.tensor(name).shape)
    a = np.asarray(value)
    forms = _calibration_forms(graph, name)
    match = [nchw for form, nchw in forms if a.ndim >= 1 and tuple(a.shape[1:]) == form]
    if not match or a.shape[0] == 0:
        wanted = " or ".join(f"[N, {', '.join(map(str, form))}]" + (" (NCHW)" if nchw else "") for form, nchw in forms)
        raise ImportModelError(f"calibration data for input {name!r} has shape {list(a.shape)}; expected {wanted} "
                               "with N >= 1", where=graph.source, arg=name, hint=CALIBRATION_HINT)
    if a.dtype.kind not in "fiub":
        raise ImportModelError(f"calibration data for input {name!r} is {a.dtype}, not real numbers",
                               where=graph.source, arg=name, hint=CALIBRATION_HINT)
    a = a.astype(np.float32)
    if match[0]:                      # the source's NCHW: to the IR's NHWC
        a = a.reshape((a.shape[0], shape[0], shape[3], shape[1], shape[2])).transpose(0, 1, 3, 4, 2)
    a = np.ascontiguousarray(a.reshape((a.shape[0], *shape)))
    if not np.all(np.isfinite(a)):
        raise ImportModelError(f"calibration data for input {name!r} holds NaN or infinite values",
                               where=graph.source, arg=name, hint=CALIBRATION_HINT)
    return a


# ---- calibration ------------------------------------------------------------------------------------


def _calibrate(graph: Graph, samples: Mapping[str, np.ndarray]):
    """({tensor: (min, max)} over the calibration set, [per sample {tensor: float value}])."""
    count = len(next(iter(samples.values())))
    runs = [reference.run(graph, {k: v[i].reshape(graph.tensor(k).shape) for k, v in samples.items()})
            for i in range(count)]
    ranges = {}
    for name in runs[0]:
        lo = min(float(np.min(r[name])) for r in runs)
        hi = max(float(np.max(r[name])) for r in runs)
        ranges[name] = (lo, hi)
    return _in_place_ranges(graph, ranges), runs


def _in_place_ranges(graph: Graph, ranges: Dict[str, Tuple[float, float]]) -> Dict[str, Tuple[float, float]]:
    """TF 2.21's calibrator records an ADD, SUB or MUL input that the interpreter overwrites in place
    with the output's values too: the first input of the output's shape that only this operator
    reads and that is computed (not a graph input nor output) gets the union of both ranges, unless
    the output is a graph output. Reproduced so that the quantisation is the converter's."""
    for op in graph.ops:
        if op.kind not in (OpKind.ADD, OpKind.SUB, OpKind.MUL):
            continue
        out = op.outputs[0]
        if out in graph.outputs:      # a graph output has a buffer of its own
            continue
        for name in op.inputs:
            t = graph.tensor(name)
            if (t.is_const or name in graph.inputs or name in graph.outputs or t.shape != graph.tensor(out).shape
                    or len(graph.consumers(name)) != 1):
                continue
            ranges[name] = (min(ranges[name][0], ranges[out][0]), max(ranges[name][1], ranges[out][1]))
            break
    return ranges


def asymmetric_quant(lo: float, hi: float) -> Quant:
    """``GetAsymmetricQuantizationParams`` for int8 on the float32 range, computed in double and
    the scale stored as float32 (what TF 2.21's converter gives, to the last bit)."""
    lo, hi = min(float(np.float32(lo)), 0.0), max(float(np.float32(hi)), 0.0)
    scale = (hi - lo) / (INT8_MAX - INT8_MIN)
    if not scale > 0 or not math.isfinite(scale) or np.float32(scale) == 0:
        return Quant((1.0,), (INT8_MIN,))
    zp_from_min = INT8_MIN - lo / scale
    zp = INT8_MIN if zp_from_min < INT8_MIN else INT8_MAX if zp_from_min > INT8_MAX else int(_round(zp_from_min))
    return Quant((float(np.float32(scale)),), (zp,))


def _round(x):
    """``std::round``: half away from zero."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# ---- choice of quantisations --------------------------------------------------------------------------


class _Groups:
    """Union-find over tensor names: the groups of tensors that share one quantisation."""

    def __init__(self) -> None:
        self.parent: Dict[str, str] = {}

    def find(self, name: str) -> str:
        self.parent.setdefault(name, name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def _data_inputs(op: Op) -> Tuple[str, ...]:
    """The inputs that carry values (not PAD's paddings nor RESHAPE's shape)."""
    if op.kind in (OpKind.PAD, OpKind.RESHAPE, OpKind.SQUEEZE, OpKind.MEAN):
        return tuple(n for n in op.inputs[:1] if n is not None)
    return tuple(n for n in op.inputs if n is not None)


def _choose_quants(graph: Graph, ranges: Mapping[str, Tuple[float, float]]) -> Dict[str, Quant]:
    """{float activation tensor (and constant quantised as one): Quant}."""
    groups = _Groups()
    order: List[str] = list(graph.inputs)
    fixed: Dict[str, Op] = {}
    for op in graph.ops:
        if op.kind in FIXED_OUTPUT:
            fixed[op.outputs[0]] = op
        if op.kind in SAME_SCALE:
            for name in _data_inputs(op):
                groups.join(name, op.outputs[0])
        order.extend(_const_activations(graph, op, order))
        order.extend(op.outputs)
    source: Dict[str, str] = {}       # group root: the tensor whose range the group takes
    for name in order:                # the group's first tensor, unless it holds a concatenation
        source.setdefault(groups.find(name), name)
    for op in graph.ops:              # the last concatenation's output (TF's backward propagation)
        if op.kind is OpKind.CONCATENATION:
            source[groups.find(op.outputs[0])] = op.outputs[0]
    chosen: Dict[str, Quant] = {}
    imposed: Dict[str, Op] = {}       # group root: the operator that fixed its quantisation
    for name in order:
        root = groups.find(name)
        if name in fixed:
            _fix_group(graph, chosen, imposed, root, fixed[name])
        if root not in chosen:
            chosen[root] = asymmetric_quant(*_range(graph, ranges, source[root]))
    return {name: chosen[groups.find(name)] for name in order if graph.tensor(name).dtype is DType.FLOAT32}


def _const_activations(graph: Graph, op: Op, seen: Sequence[str]) -> List[str]:
    """The constant float inputs of ``op`` quantised as activations; any other constant float input
    that is not a weight or bias is refused."""
    found = []
    for k, name in enumerate(op.inputs):
        if name is None or not graph.tensor(name).is_const or graph.tensor(name).dtype is not DType.FLOAT32:
            continue
        if op.kind in WEIGHTED and k in (1, 2):
            continue
        if op.kind not in CONST_AS_ACTIVATION and op.kind not in SAME_SCALE:
            raise ImportModelError(f"a constant float input {name!r} of {op.kind.value} is not supported yet",
                                   where=graph.where(op), arg=name)
        if name not in seen and name not in found:
            found.append(name)
    return found


def _fix_group(graph: Graph, chosen: Dict[str, Quant], imposed: Dict[str, Op], root: str, op: Op) -> None:
    quant = FIXED_OUTPUT[op.kind]
    prior = imposed.get(root)
    if prior is not None and chosen[root] != quant:
        raise ImportModelError(f"{op.kind.value}'s fixed output quantisation meets {prior.kind.value}'s through "
                               "operators that keep their input's quantisation: not supported yet",
                               where=graph.where(op), arg=op.outputs[0])
    chosen[root] = quant
    imposed[root] = op


def _range(graph: Graph, ranges: Mapping[str, Tuple[float, float]], name: str) -> Tuple[float, float]:
    t = graph.tensor(name)
    if t.is_const:
        return float(np.min(t.data)), float(np.max(t.data))
    return ranges[name]


# ---- the int8 graph ----------------------------------------------------------------------------------


def _build_int8_graph(graph: Graph, quants: Mapping[str, Quant]) -> Graph:
    tensors: Dict[str, Tensor] = dict(graph.tensors)
    for name, q in quants.items():
        t = graph.tensor(name)
        data = None if not t.is_const else _quantize_values(t.data, q)
        tensors[name] = replace(t, dtype=DType.INT8, quant=q, data=data)
    for op in graph.ops:
        if op.kind in WEIGHTED:
            _quantize_weighted(graph, op, quants, tensors)
    return Graph(graph.source, graph.source_format, graph.source_layout, tensors, graph.ops, graph.inputs,
                 graph.outputs).check()


def _quantize_values(x: np.ndarray, q: Quant) -> np.ndarray:
    """An activation-quantised constant: ``round(x / s) + zp``, clamped."""
    v = _round(np.asarray(x, np.float32) / np.float32(q.scales[0])) + q.zero_points[0]
    out = np.clip(v, INT8_MIN, INT8_MAX).astype(np.int8)
    out.setflags(write=False)
    return out


def _quantize_weighted(graph: Graph, op: Op, quants: Mapping[str, Quant], tensors: Dict[str, Tensor]) -> None:
    """The weights (per channel, symmetric) and the int32 bias of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED."""
    x, w_name = op.inputs[0], op.inputs[1]
    bias_name = op.inputs[2] if len(op.inputs) > 2 else None
    w = graph.tensor(w_name)
    if not w.is_const or w.dtype is not DType.FLOAT32:
        raise ImportModelError(f"the weights {w_name!r} of a float {op.kind.value} must be a float32 constant",
                               where=graph.where(op), arg=w_name, hint="convert the model with constant weights")
    axis = WEIGHTED[op.kind] if w.data.ndim > 1 else 0
    s_in = float(quants[x].scales[0])
    bias = None
    if bias_name is not None:
        b = graph.tensor(bias_name)
        if not b.is_const or b.dtype is not DType.FLOAT32:
            raise ImportModelError(f"the bias {bias_name!r} of a float {op.kind.value} must be a float32 constant",
                                   where=graph.where(op), arg=bias_name)
        bias = np.asarray(b.data, np.float32).reshape(-1)
    scales, qw = quantize_weights(np.asarray(w.data, np.float32), axis, s_in, bias)
    tensors[w_name] = replace(w, dtype=DType.INT8, quant=Quant(tuple(scales), (0,) * len(scales), axis), data=qw)
    if bias is not None:
        bscales, qb = quantize_bias(bias, s_in, scales)
        prior = tensors[bias_name]
        if prior.dtype is DType.INT32 and prior.quant is not None and prior.quant.scales != tuple(bscales):
            raise ImportModelError(f"the bias {bias_name!r} is shared by operators whose input and weight scales "
                                   "differ: not supported yet", where=graph.where(op), arg=bias_name,
                                   hint="give each operator a bias of its own")
        tensors[bias_name] = replace(prior, dtype=DType.INT32, quant=Quant(tuple(bscales), (0,) * len(bscales), 0),
                                     data=qb)


def quantize_weights(w: np.ndarray, axis: int, s_in: float,
                     bias: Optional[np.ndarray] = None) -> Tuple[List[float], np.ndarray]:
    """(per-channel scales, int8 weights): ``SymmetricPerChannelQuantization`` after
    ``AdjustWeightsForBiasScale``, in float32."""
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    half = np.maximum(np.abs(moved.min(axis=1)), np.abs(moved.max(axis=1))).astype(np.float32)
    if bias is not None:      # a bias that would not fit int32 at s_in * s_w widens s_w
        limit = 0.5 * s_in * (half / np.float32(WEIGHT_MAX)).astype(np.float64) * INT32_MAX
        wide = np.abs(bias.astype(np.float64)) >= limit
        half = np.where(wide & (np.abs(bias) > 0),
                        (2.0 * np.abs(bias.astype(np.float64)) / INT32_MAX * (WEIGHT_MAX / s_in)), half)
        half = half.astype(np.float32)
    half = np.where(half == 0, np.float32(1.0), half)     # all-zero channel: scale 1/127 (assumption)
    scales = (half / np.float32(WEIGHT_MAX)).astype(np.float32)
    inv = (np.float32(WEIGHT_MAX) / half).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = _round((w * inv.reshape(shape)).astype(np.float32))
    qw = np.clip(q, -WEIGHT_MAX, WEIGHT_MAX).astype(np.int8)
    qw.setflags(write=False)
    return [float(s) for s in scales], qw


def quantize_bias(bias: np.ndarray, s_in: float, w_scales: Sequence[float]) -> Tuple[List[float], np.ndarray]:
    """(scales, int32 bias): ``SymmetricPerChannelBiasQuantize``: ``round(b * (1 / (s_in * s_w[c])))``
    clamped to +-(2^31 - 1), the scale in float32."""
    scales = (float(np.float32(s_in)) * np.asarray(w_scales, np.float32).astype(np.float64)).astype(np.float32)
    inv = (1.0 / scales.astype(np.float64)).astype(np.float32)
    q = _round((np.asarray(bias, np.float32) * inv).astype(np.float32).astype(np.float64))
    qb = np.clip(q, -INT32_MAX, INT32_MAX).astype(np.int32)
    qb.setflags(write=False)
    return [float(s) for s in scales], qb


# ---- the int8 network on calibration inputs ------------------------------------------------------------


def _run_int8(qgraph: Graph, inputs: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """{tensor: dequantised value} of the int8 graph (:func:`reference.run`: TFLM's arithmetic) on
    float inputs quantised to the graph inputs' quantisation."""
    feeds = {name: _quantize_values(np.asarray(x, np.float32).reshape(qgraph.tensor(name).shape),
                                    qgraph.tensor(name).quant) for name, x in inputs.items()}
    return {name: _dequantize(v, qgraph.tensor(name).quant) for name, v in reference.run(qgraph, feeds).items()
            if qgraph.tensor(name).quant is not None}


def _dequantize(q: np.ndarray, quant: Quant) -> np.ndarray:
    return (np.float64(quant.scales[0]) * (q.astype(np.float64) - quant.zero_points[0])).astype(np.float32)


# ---- report -------------------------------------------------------------------------------------------


def sqnr_db(reference: np.ndarray, value: np.ndarray) -> float:
    """``10 log10(sum(ref^2) / sum((ref - value)^2))``; inf when equal, 0 dB when the reference is 0."""
    ref = np.asarray(reference, np.float64)
    noise = float(np.sum((ref - np.asarray(value, np.float64)) ** 2))
    signal = float(np.sum(ref ** 2))
    if noise == 0:
        return math.inf
    if signal == 0:
        return 0.0
    return 10.0 * math.log10(signal / noise)


def _report(graph: Graph, qgraph: Graph, samples: Mapping[str, np.ndarray], floats,
            ranges: Mapping[str, Tuple[float, float]]) -> List[str]:
    """Per operator: its output's calibrated float range, int8 scale and zero point, SQNR; then the
    graph outputs' SQNR (and top-1 agreement for a vector of scores)."""
    count = len(floats)
    quant_runs = [_run_int8(qgraph, {k: v[i] for k, v in samples.items()}) for i in range(count)]
    lines = [f"quantisation: {count} calibration input(s); SQNR of the int8 network against the float one "
             "(dB, higher is better)",
             f"  {'layer':<28} {'float range':>23} {'scale':>12} {'zero':>5} {'SQNR':>7}"]
    for op in graph.ops:
        name = op.outputs[0]
        q = qgraph.tensor(name).quant
        db = _sqnr_over(floats, quant_runs, name)
        lo, hi = ranges[name]
        lines.append(f"  {_short(op.label):<28} {f'[{lo:.4g}, {hi:.4g}]':>23} {q.scales[0]:>12.6g} "
                     f"{q.zero_points[0]:>5} {_db(db):>7}")
    for name in graph.outputs:
        line = f"output {name}: SQNR {_db(_sqnr_over(floats, quant_runs, name))} dB"
        if sum(d > 1 for d in graph.tensor(name).shape) == 1:          # a vector of scores
            agree = sum(int(np.argmax(f[name]) == np.argmax(r[name])) for f, r in zip(floats, quant_runs))
            line += f", top-1 equal to the float model's on {agree}/{count} calibration inputs"
        lines.append(line)
    return lines


def _sqnr_over(floats, quant_runs, name: str) -> float:
    return sqnr_db(np.stack([f[name] for f in floats]), np.stack([r[name] for r in quant_runs]))


def _short(text: str, width: int = 28) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _db(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.1f}"
