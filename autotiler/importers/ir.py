"""The imported network, as the front ends (``tflite_reader``, ``onnx_reader``) give it and the
lowering (``lower``) reads it: an int8 graph with TensorFlow Lite's semantics.

* Tensors are named, with a shape, a :class:`DType`, an optional :class:`Quant` (affine:
  ``real = scale * (q - zero_point)``, per tensor or per channel along ``axis``) and, for
  constants, their data (a read-only numpy array).
* Ops are TFLite's builtin operators (:class:`OpKind`) with typed options; inputs and outputs are
  tensor names (``None`` for an absent optional input, e.g. a bias). RESHAPE, SQUEEZE and MEAN have
  one input: the new shape is the output tensor's shape, MEAN's axes (>= 0, sorted) are in its
  :class:`ReduceOptions`; PAD keeps its paddings as a constant second input ([rank, 2] int32);
  DEPTHWISE_CONV_2D's multiplier is in its :class:`ConvOptions`; CONCATENATION's axis is >= 0.
* Feature maps are NHWC (one image, N = 1). A front end whose model is NCHW (ONNX) converts its
  operators to this form and records the source layout in :attr:`Graph.source_layout`, so that
  the lowering can give the graph's interface the source's own shapes.

Every object is frozen and checked where it is built (:func:`Graph.check`): the lowering and the
script writer assume a checked graph. Errors are :class:`~autotiler.errors.ImportModelError`
naming the model file, the operator and the tensor.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Optional, Tuple

import numpy as np

from ..errors import ImportModelError


class DType(enum.Enum):
    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    BOOL = "bool"

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(self.value)


class Padding(enum.Enum):
    SAME = "SAME"
    VALID = "VALID"


class Activation(enum.Enum):
    """A fused activation (TFLite's ActivationFunctionType): a clamp of the output."""

    NONE = "NONE"
    RELU = "RELU"
    RELU_N1_TO_1 = "RELU_N1_TO_1"
    RELU6 = "RELU6"


class OpKind(enum.Enum):
    """The TFLite builtin operators the importer takes (issue 24 §3), by their TFLite names."""

    CONV_2D = "CONV_2D"
    DEPTHWISE_CONV_2D = "DEPTHWISE_CONV_2D"
    FULLY_CONNECTED = "FULLY_CONNECTED"
    ADD = "ADD"
    SUB = "SUB"
    MUL = "MUL"
    AVERAGE_POOL_2D = "AVERAGE_POOL_2D"
    MAX_POOL_2D = "MAX_POOL_2D"
    MEAN = "MEAN"
    PAD = "PAD"
    RESHAPE = "RESHAPE"
    SQUEEZE = "SQUEEZE"
    CONCATENATION = "CONCATENATION"
    SOFTMAX = "SOFTMAX"
    RELU = "RELU"
    RELU6 = "RELU6"
    LEAKY_RELU = "LEAKY_RELU"
    HARD_SWISH = "HARD_SWISH"
    LOGISTIC = "LOGISTIC"
    TANH = "TANH"
    QUANTIZE = "QUANTIZE"
    DEQUANTIZE = "DEQUANTIZE"


@dataclass(frozen=True)
class Quant:
    """Affine quantisation; one scale and zero point per tensor, or one per index of ``axis``.
    Scales are kept as the model stores them (float32 in TFLite)."""

    scales: Tuple[float, ...]
    zero_points: Tuple[int, ...]
    axis: int = 0

    @property
    def per_tensor(self) -> bool:
        return len(self.scales) == 1


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: Tuple[int, ...]
    dtype: DType
    quant: Optional[Quant] = None
    data: Optional[np.ndarray] = field(default=None, compare=False, repr=False)

    @property
    def is_const(self) -> bool:
        return self.data is not None


# ---- typed options, one per family --------------------------------------------------------------


@dataclass(frozen=True)
class ConvOptions:
    """CONV_2D and DEPTHWISE_CONV_2D (depth_multiplier for the latter)."""

    stride: Tuple[int, int] = (1, 1)              # (h, w)
    dilation: Tuple[int, int] = (1, 1)
    padding: Padding = Padding.VALID
    activation: Activation = Activation.NONE
    depth_multiplier: int = 1


@dataclass(frozen=True)
class PoolOptions:
    filter: Tuple[int, int] = (1, 1)              # (h, w)
    stride: Tuple[int, int] = (1, 1)
    padding: Padding = Padding.VALID
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class ActivationOptions:
    """FULLY_CONNECTED, ADD, SUB, MUL, CONCATENATION (with ``axis``): the fused activation."""

    activation: Activation = Activation.NONE
    axis: int = 0


@dataclass(frozen=True)
class SoftmaxOptions:
    beta: float = 1.0


@dataclass(frozen=True)
class LeakyReluOptions:
    alpha: float = 0.2


@dataclass(frozen=True)
class ReduceOptions:
    """MEAN: the reduced axes (from its constant input) and keep_dims."""

    axes: Tuple[int, ...] = ()
    keep_dims: bool = False


@dataclass(frozen=True)
class NoOptions:
    pass


@dataclass(frozen=True)
class Op:
    """One operator. ``index`` is its position in the source model (TFLite operator index, ONNX
    node index), ``label`` the name a user recognises (the ONNX node name, or the TFLite operator
    index and kind), used in every error about it."""

    kind: OpKind
    index: int
    label: str
    inputs: Tuple[Optional[str], ...]
    outputs: Tuple[str, ...]
    options: object = NoOptions()


#: The int8 arithmetics a graph can be computed in (:attr:`Graph.arithmetic`).
ARITHMETICS = ("tflm", "onnxruntime")


@dataclass(frozen=True)
class Graph:
    """An imported network: ``tensors`` by name, ``ops`` in an order where every op follows the ops
    producing its inputs, the graph's ``inputs`` and ``outputs`` (tensor names, the source's
    order). ``source``: the model file; ``source_format``: "tflite" or "onnx"; ``source_layout``:
    "NHWC" or "NCHW" (the interface the source takes). ``arithmetic``: whose int8 arithmetic the
    graph's operators compute, :data:`ARITHMETICS` (the reference and the lowering honour it):
    "tflm" (TensorFlow Lite Micro's, the default) or "onnxruntime" (onnxruntime's, an ONNX QDQ
    model's: single rounding in the requantisations, unary operators and requantisations by
    256-entry tables, QLinearSoftmax, averages rounded half to even; docs/cnn-sq8.md §5).
    In "onnxruntime" LOGISTIC, TANH and SOFTMAX may have any output quantisation."""

    source: str
    source_format: str
    source_layout: str
    tensors: Mapping[str, Tensor]
    ops: Tuple[Op, ...]
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]
    arithmetic: str = "tflm"

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensors", MappingProxyType(dict(self.tensors)))
        if self.arithmetic not in ARITHMETICS:
            raise ImportModelError(f"arithmetic {self.arithmetic!r} is not one of {', '.join(ARITHMETICS)}",
                                   where=self.source)

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def where(self, op: Op) -> str:
        """``file: operator <label>``: the ``where`` of an error about ``op``."""
        return f"{self.source}: operator {op.label}"

    def producer(self, name: str) -> Optional[Op]:
        for op in self.ops:
            if name in op.outputs:
                return op
        return None

    def consumers(self, name: str) -> Tuple[Op, ...]:
        return tuple(op for op in self.ops if name in op.inputs)

    def check(self) -> Graph:
        """Every name resolves, ops are in dependency order, the interface is not constant."""
        known = set(self.inputs)
        for name in self.inputs:
            if name not in self.tensors:
                raise ImportModelError(f"graph input {name!r} is not a tensor", where=self.source)
        for op in self.ops:
            for name in op.inputs:
                if name is None:
                    continue
                t = self.tensors.get(name)
                if t is None:
                    raise ImportModelError(f"input tensor {name!r} does not exist", where=self.where(op), arg=name)
                if not t.is_const and name not in known:
                    raise ImportModelError(f"input tensor {name!r} is computed after this operator (the graph has a "
                                           "cycle or is out of order)", where=self.where(op), arg=name)
            for name in op.outputs:
                if name not in self.tensors:
                    raise ImportModelError(f"output tensor {name!r} does not exist", where=self.where(op), arg=name)
                known.add(name)
        for name in self.outputs:
            if name not in known:
                raise ImportModelError(f"graph output {name!r} is computed by no operator", where=self.source,
                                       arg=name)
        return self


def op_macs(graph: Graph, op: Op) -> int:
    """Multiply-accumulates of one inference of ``op`` (convolutions and fully connected; else 0): the
    one count the lowering and the import report give."""
    if op.kind not in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D, OpKind.FULLY_CONNECTED):
        return 0
    out = int(np.prod(graph.tensor(op.outputs[0]).shape))
    w = graph.tensor(op.inputs[1]).shape
    if op.kind == OpKind.CONV_2D:           # [Cout, kh, kw, Cin / groups]
        return out * int(w[1]) * int(w[2]) * int(w[3])
    if op.kind == OpKind.DEPTHWISE_CONV_2D:  # [1, kh, kw, Cout]
        return out * int(w[1]) * int(w[2])
    return out * int(w[-1])                  # FULLY_CONNECTED: [Cout, Cin]
