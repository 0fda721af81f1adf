"""ONNX front end (issue 24): an ``.onnx`` file to an :mod:`.ir` graph, parsed with the ``onnx``
package (never by hand).

Two kinds of model are read:

* **QDQ models** (onnxruntime's ``quantize_static`` with ``QuantFormat.QDQ``): every
  ``DequantizeLinear -> float op -> QuantizeLinear`` pattern becomes one int8 :class:`~.ir.Op`
  with TFLite's semantics. Weights are the int8 constants of their ``DequantizeLinear`` (per
  channel), biases the int32 ones (scale ``s_in * s_w``); activations take the quantisation of
  the ``QuantizeLinear`` after the op. The interface is the source's, float32 under the ONNX
  names, as a TFLite model with a float interface has it: the input's ``QuantizeLinear`` is a
  QUANTIZE op, the output's ``DequantizeLinear`` a DEQUANTIZE op (the lowering gives the
  generated graph the int8 tensors between, and says what the source took).
* **float models** (no QuantizeLinear/DequantizeLinear): a float32 IR graph of the same
  operators, for the quantiser (:mod:`.quantize`).

Layouts: ONNX feature maps are NCHW, the IR's NHWC (``source_layout`` "NCHW"). Conv weights
become OHWI, depth wise ones ``1 x KH x KW x (C*M)``, Gemm/MatMul weights ``N x K``. Explicit pads
become SAME or VALID when they equal TFLite's, else a PAD op before a VALID convolution. A
Flatten/Reshape of a feature map with both channels and pixels flattens in a different order
in NHWC: it is taken when its only readers are Gemm/MatMul with constant weights (their columns
are permuted to NHWC order, as TFLite's converters do), else refused. Nodes that only compute a
Reshape's target shape (``Shape -> Gather -> Unsqueeze -> Concat``) are left out: the Reshape takes
the shape that shape inference gives.

Where TFLite's int8 kernels fix an output quantisation that onnxruntime's quantiser did not
choose (SOFTMAX and LOGISTIC ``1/256, -128``, TANH ``1/128, 0``), or take the input's (pools,
PAD, RESHAPE, RELU6, the inputs of CONCATENATION), the op writes that quantisation and a
QUANTIZE (int8 -> int8 requantisation) brings it to the model's. In onnxruntime's arithmetic (a QDQ
model's default, :attr:`~.ir.Graph.arithmetic`; issue 24 §7) SOFTMAX, LOGISTIC and TANH write the
model's quantisation directly (onnxruntime's QLinearSoftmax and tables take any).

Errors are :class:`~autotiler.errors.ImportModelError` naming the file, the node (``operator
NAME (OpType)``) and the tensor.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper, shape_inference

from ..errors import ImportModelError
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

#: The ONNX operators read (issue 24 §3), besides Identity and Constant.
SUPPORTED = ("Conv", "Relu", "Clip", "LeakyRelu", "HardSwish", "Sigmoid", "Tanh", "MaxPool", "AveragePool",
             "GlobalAveragePool", "Gemm", "MatMul", "Add", "Mul", "Concat", "Reshape", "Flatten", "Pad", "Softmax",
             "QuantizeLinear", "DequantizeLinear")
#: The oldest ai.onnx opset read: Pad's and Clip's bounds are inputs from 11 on.
MIN_OPSET = 11

_NCHW_TO_NHWC_AXIS = {0: 0, 1: 3, 2: 1, 3: 2}
_SOFTMAX_Q = Quant((1.0 / 256,), (-128,))
_LOGISTIC_Q = Quant((1.0 / 256,), (-128,))
_TANH_Q = Quant((1.0 / 128,), (0,))
_DTYPES = {onnx.TensorProto.INT8: DType.INT8, onnx.TensorProto.UINT8: DType.UINT8,
           onnx.TensorProto.INT16: DType.INT16, onnx.TensorProto.INT32: DType.INT32,
           onnx.TensorProto.INT64: DType.INT64, onnx.TensorProto.FLOAT: DType.FLOAT32,
           onnx.TensorProto.BOOL: DType.BOOL}


def read_onnx(path: str, data: bytes, arithmetic: str = "onnxruntime") -> Graph:
    """The checked IR graph of the ONNX model ``data`` (read from ``path``, named in errors).
    ``arithmetic`` (:attr:`Graph.arithmetic`) of a QDQ model: "onnxruntime" (the default, issue 24 §7)
    computes its int8 operators as onnxruntime does, its Sigmoid, Tanh and Softmax writing the model's own
    output quantisation (no QUANTIZE after them); "tflm" TFLite Micro's arithmetic (fixed output
    quantisations, a QUANTIZE after them). A float model is "tflm" (the quantiser's arithmetic)."""
    model = _parse(path, data)
    return _Reader(path, model, arithmetic).graph()


# ---- parsing and whole-model checks ---------------------------------------------------------------


def _parse(path: str, data: bytes) -> onnx.ModelProto:
    """The shape-inferred model; refuses what is not a whole ONNX model of a recent enough opset."""
    if not data:
        raise ImportModelError("the file is empty, not an ONNX model", where=path)
    if data[4:8] == b"TFL3":
        raise ImportModelError("this is a TFLite model, not an ONNX one", where=path,
                               hint="name it .tflite")
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, RuntimeError, ValueError):
        raise ImportModelError("not an ONNX model: its bytes do not parse as an ONNX protobuf (another format, "
                               "or a truncated file)", where=path) from None
    if not model.HasField("graph") or not model.graph.node or model.ir_version == 0:
        raise ImportModelError("not an ONNX model (no graph, no nodes or no IR version); the file may be "
                               "truncated", where=path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < MIN_OPSET:
        raise ImportModelError(f"ONNX opset {opset} is too old: the importer reads ai.onnx opset "
                               f"{MIN_OPSET} and later", where=path,
                               hint="convert it with onnx.version_converter.convert_version(model, 13)")
    try:
        model = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        onnx.checker.check_model(model)
        return model
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, DecodeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ImportModelError(f"not a valid ONNX model ({first}); the file may be truncated",
                               where=path) from None


def _label(index: int, node: onnx.NodeProto) -> str:
    return f"{node.name or '#' + str(index)} ({node.op_type})"


def _attrs(node: onnx.NodeProto) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _nhwc(shape: Sequence[int]) -> Tuple[int, ...]:
    return (shape[0], shape[2], shape[3], shape[1]) if len(shape) == 4 else tuple(shape)


def _same_quant(a: Optional[Quant], b: Optional[Quant]) -> bool:
    if a is None or b is None:
        return a is b
    return (np.array_equal(np.float32(a.scales), np.float32(b.scales)) and tuple(a.zero_points) == tuple(b.zero_points))


# ---- the reader ----------------------------------------------------------------------------------------


class _Reader:
    """One pass over the (topologically sorted) ONNX nodes, emitting IR tensors and ops."""

    def __init__(self, path: str, model: onnx.ModelProto, arithmetic: str = "onnxruntime") -> None:
        self.path = path
        self.arithmetic = arithmetic
        self.model = model
        g = model.graph
        self.nodes = list(g.node)
        self.consts: Dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in g.initializer}
        for node in self.nodes:
            if node.op_type == "Constant":
                self.consts[node.output[0]] = numpy_helper.to_array(_attrs(node)["value"])
        self.shapes: Dict[str, Tuple[int, ...]] = {}
        self.elem: Dict[str, int] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            self._record_shape(vi)
        self.producer: Dict[str, Tuple[int, onnx.NodeProto]] = {}
        self.consumers: Dict[str, List[Tuple[int, onnx.NodeProto]]] = {}
        for i, node in enumerate(self.nodes):
            for o in node.output:
                self.producer[o] = (i, node)
            for x in node.input:
                if x:
                    self.consumers.setdefault(x, []).append((i, node))
        self.inputs = [i.name for i in g.input if i.name not in self.consts]
        self.outputs = [o.name for o in g.output]
        self.qdq = any(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in self.nodes)
        self.tensors: Dict[str, Tensor] = {}
        self.ops: List[Op] = []
        self.ir_of: Dict[str, str] = {}          # ONNX value -> IR tensor carrying it
        self.skip: set = set()                    # node indices folded into an earlier op
        self.flat_chw: Dict[str, Tuple[int, int, int]] = {}   # IR tensor -> (C, H, W) of an NCHW flatten
        self.rename = self._interface_names()
        self.index = 0
        self.node: Optional[onnx.NodeProto] = None

    # -- shapes, names, errors --

    def _record_shape(self, vi: onnx.ValueInfoProto) -> None:
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            return
        self.elem[vi.name] = t.elem_type
        self.shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim)

    def where(self) -> str:
        return f"{self.path}: operator {_label(self.index, self.node)}"

    def fail(self, message: str, arg: Optional[str] = None, hint: Optional[str] = None) -> ImportModelError:
        return ImportModelError(message, where=self.where() if self.node is not None else self.path, arg=arg,
                                hint=hint)

    def shape(self, name: str) -> Tuple[int, ...]:
        if name in self.consts:
            return tuple(self.consts[name].shape)
        s = self.shapes.get(name)
        if s is None or any(d <= 0 for d in s):
            raise self.fail(f"tensor {name!r} has no static shape ({s if s else 'unknown'}); the importer "
                            "needs every shape fixed", arg=name,
                            hint="export the model with fixed input sizes (batch 1)")
        return s

    def _interface_names(self) -> Dict[str, str]:
        """A float model's outputs: the ONNX output names, given to the tensor that carries them
        (through Identity). A QDQ model's interface is the QUANTIZE and DEQUANTIZE ops at its edge,
        which write and read under the ONNX names."""
        if self.qdq:
            return {}
        return {self._through_identity(name): name for name in self.outputs}

    def _through_identity(self, name: str) -> str:
        while name in self.producer and self.producer[name][1].op_type == "Identity":
            name = self.producer[name][1].input[0]
        return name

    # -- IR tensors --

    def add_tensor(self, name: str, shape: Sequence[int], dtype: DType, quant: Optional[Quant] = None,
                   data: Optional[np.ndarray] = None) -> str:
        if name in self.tensors:
            return name
        if data is not None:
            data = np.ascontiguousarray(data)
            data.setflags(write=False)
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), dtype, quant, data)
        return name

    def fresh(self, base: str) -> str:
        name, n = base, 0
        while name in self.tensors or name in self.shapes or name in self.consts:
            n += 1
            name = f"{base}_{n}"
        return name

    def emit(self, kind: OpKind, inputs: Sequence[Optional[str]], outputs: Sequence[str], options=None) -> None:
        self.ops.append(Op(kind, self.index, _label(self.index, self.node), tuple(inputs), tuple(outputs),
                           options if options is not None else NoOptions()))

    def int_const(self, base: str, value: np.ndarray, dtype: DType = DType.INT32) -> str:
        return self.add_tensor(self.fresh(base), value.shape, dtype, data=value.astype(dtype.numpy))

    # -- ONNX values to IR --

    def dq_const(self, name: str) -> Optional[Tuple[np.ndarray, Optional[Quant], int]]:
        """``(raw data, quantisation, ONNX quant axis)`` of a constant, through its DequantizeLinear;
        None when ``name`` is computed."""
        name = self._through_identity(name)
        if name in self.consts:
            return self.consts[name], None, 0
        if name in self.producer and self.producer[name][1].op_type == "DequantizeLinear":
            node = self.producer[name][1]
            src = self._through_identity(node.input[0])
            if src in self.consts:
                q, axis = self.q_params(node, self.consts[src].ndim)
                return self.consts[src], q, axis
        return None

    def q_params(self, node: onnx.NodeProto, rank: int) -> Tuple[Quant, int]:
        scale = self.consts.get(node.input[1])
        if scale is None:
            raise self.fail(f"the scale of {node.op_type} {node.name!r} is not a constant", arg=node.input[1])
        zp = self.consts.get(node.input[2]) if len(node.input) > 2 and node.input[2] else np.zeros_like(scale,
                                                                                                         np.int8)
        if zp is None:
            raise self.fail(f"the zero point of {node.op_type} {node.name!r} is not a constant", arg=node.input[2])
        axis = int(_attrs(node).get("axis", 1))
        if axis < 0:
            axis += rank
        scales = tuple(float(s) for s in np.atleast_1d(scale).ravel())
        zps = tuple(int(z) for z in np.atleast_1d(zp).ravel())
        return Quant(scales, zps, axis if len(scales) > 1 else 0), axis

    def value(self, name: str) -> str:
        """The IR tensor carrying the (computed) ONNX value ``name``."""
        name = self._through_identity(name)
        if name in self.ir_of and not (self.qdq and name in self.inputs):
            return self.ir_of[name]
        if name in self.producer and self.producer[name][1].op_type == "DequantizeLinear":
            src = self._through_identity(self.producer[name][1].input[0])
            if src in self.ir_of:
                return self.ir_of[src]
        if name in self.consts or self.dq_const(name) is not None:
            raise self.fail(f"constant {name!r} as a feature map input is not supported yet", arg=name)
        raise self.fail(f"tensor {name!r} is float in a quantised (QDQ) model: no QuantizeLinear gives it",
                        arg=name, hint="quantise the whole model (onnxruntime quantize_static, QDQ)")

    def out_quant(self, name: str) -> Optional[Quant]:
        """The quantisation of the float ONNX value ``name``: that of the QuantizeLinear reading it,
        or, when only a Flatten/Reshape reads it, that of theirs. None in a float model."""
        if not self.qdq:
            return None
        for _, node in self.consumers.get(name, []):
            if node.op_type == "QuantizeLinear":
                return self.q_params(node, len(self.shape(name)))[0]
        readers = self.consumers.get(name, [])
        if len(readers) == 1 and readers[0][1].op_type in ("Flatten", "Reshape", "Identity"):
            return self.out_quant(readers[0][1].output[0])
        raise self.fail(f"tensor {name!r} is float in a quantised (QDQ) model: no QuantizeLinear reads it",
                        arg=name, hint="quantise the whole model (onnxruntime quantize_static, QDQ)")

    def output(self, name: str, quant: Optional[Quant] = None, shape: Optional[Sequence[int]] = None) -> str:
        """The IR tensor for the float ONNX output ``name`` of the current op (NHWC shape; in a
        QDQ model the int8 tensor of its QuantizeLinear)."""
        q = quant if quant is not None else self.out_quant(name)
        ir = self.rename.get(name, name)
        if self.qdq:                                  # named as the float value
            for _, node in self.consumers.get(name, []):
                if node.op_type == "QuantizeLinear":
                    self.ir_of[node.output[0]] = ir
        self.ir_of[name] = ir
        dtype = DType.INT8 if self.qdq else DType.FLOAT32
        return self.add_tensor(ir, shape if shape is not None else _nhwc(self.shape(name)), dtype, q)

    def quant_of(self, ir: str) -> Optional[Quant]:
        return self.tensors[ir].quant

    def requant_to(self, kind: OpKind, inputs: Sequence[Optional[str]], out: str, fixed: Optional[Quant],
                   options=None) -> None:
        """Emit ``kind`` writing ``out``; when the op's output quantisation is ``fixed`` (TFLite's
        kernel requires it) and ``out``'s differs, the op writes a temporary and a QUANTIZE follows."""
        t = self.tensors[out]
        if fixed is None or not self.qdq or _same_quant(fixed, t.quant) or self.arithmetic == "onnxruntime":
            self.emit(kind, inputs, (out,), options)
            return
        tmp = self.add_tensor(self.fresh(f"{out}_{kind.value.lower()}"), t.shape, t.dtype, fixed)
        self.emit(kind, inputs, (tmp,), options)
        self.emit(OpKind.QUANTIZE, (tmp,), (out,))

    def requant_input(self, ir: str, quant: Optional[Quant]) -> str:
        """``ir`` in quantisation ``quant`` (a QUANTIZE when it differs)."""
        t = self.tensors[ir]
        if quant is None or _same_quant(t.quant, quant):
            return ir
        tmp = self.add_tensor(self.fresh(f"{ir}_requant"), t.shape, t.dtype, quant)
        self.emit(OpKind.QUANTIZE, (ir,), (tmp,))
        return tmp

    def feature_input(self, name: str) -> str:
        """``value(name)``, refusing a tensor flattened in NCHW order (only Gemm/MatMul read those)."""
        ir = self.value(name)
        if ir in self.flat_chw:
            raise self.fail(f"tensor {name!r} is a feature map flattened in NCHW order (channels, then pixels); "
                            f"the IR is NHWC and only a Gemm/MatMul with constant weights may read it",
                            arg=name, hint="flatten after a GlobalAveragePool, or read it with Gemm/MatMul")
        return ir

    # -- the pass --

    def shape_subgraphs(self) -> set:
        """Indices of the nodes that only compute a Reshape's target shape (``Shape -> Gather ->
        Unsqueeze -> Concat -> Reshape``, as PyTorch exports ``x.view(x.size(0), -1)``): the
        Reshape takes its output shape from shape inference, so they are left out, as TFLite's
        converter folds them."""
        marked: Dict[int, onnx.NodeProto] = {}
        work = [n.input[1] for n in self.nodes if n.op_type == "Reshape" and len(n.input) > 1
                and n.input[1] not in self.consts]
        while work:
            name = work.pop()
            if name not in self.producer or self.producer[name][0] in marked:
                continue
            i, node = self.producer[name]
            marked[i] = node
            if node.op_type != "Shape":
                work.extend(x for x in node.input if x and x not in self.consts)
        # a node also feeding a computation stays (and is read, or refused, as such)
        ok = {i for i, node in marked.items()
              if all(c in marked or (c_node.op_type == "Reshape" and list(c_node.input).index(o) == 1)
                     for o in node.output for c, c_node in self.consumers.get(o, []))
              and not any(o in self.outputs for o in node.output)}
        return ok if len(ok) == len(marked) else set()

    def graph(self) -> Graph:
        self.check_interface()
        self.skip |= self.shape_subgraphs()
        for index, node in enumerate(self.nodes):
            self.index, self.node = index, node
            if index not in self.skip:
                self.convert(node)
        self.node = None
        outputs = []
        for name in self.outputs:
            x = self._through_identity(name)
            ir = self.ir_of.get(x)
            if ir is None and x in self.producer and self.producer[x][1].op_type == "DequantizeLinear":
                ir = self.ir_of.get(self._through_identity(self.producer[x][1].input[0]))
            if ir is None:
                raise ImportModelError(f"graph output {name!r} is computed by no supported operator",
                                       where=self.path, arg=name)
            if self.qdq:                              # the float interface: DEQUANTIZE as in TFLite
                self.index, self.node = self.producer[x]
                t = self.tensors[ir]
                ir = self.add_tensor(name, t.shape, DType.FLOAT32)
                self.emit(OpKind.DEQUANTIZE, (t.name,), (name,))
                self.node = None
            outputs.append(ir)
        g = Graph(self.path, "onnx", "NCHW", self.tensors, tuple(self.ops), tuple(self.ir_of[i] for i in self.inputs),
                  tuple(outputs), self.arithmetic if self.qdq else "tflm")
        return g.check()

    def check_interface(self) -> None:
        for name in self.inputs:
            shape = self.shapes.get(name, ())
            if not shape or any(d <= 0 for d in shape):
                raise ImportModelError(f"graph input {name!r} has a dynamic shape "
                                       f"{tuple(d if d > 0 else '?' for d in shape)}; the importer needs "
                                       "fixed sizes", where=self.path, arg=name,
                                       hint="export the model with fixed input sizes (batch 1)")
            if shape[0] != 1:
                raise ImportModelError(f"graph input {name!r} has batch {shape[0]}: only batch 1 is supported",
                                       where=self.path, arg=name)
            if self.elem.get(name) != onnx.TensorProto.FLOAT:
                raise ImportModelError(f"graph input {name!r} is not float32; only float32 interfaces (float or "
                                       "QDQ models) are supported", where=self.path, arg=name)
            self.ir_of[name] = self.add_tensor(name, _nhwc(shape), DType.FLOAT32)

    def convert(self, node: onnx.NodeProto) -> None:
        if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED + ("Identity", "Constant"):
            op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            raise self.fail(f"ONNX operator {op} (node {node.name!r}, inputs {list(node.input)}, outputs "
                            f"{list(node.output)}) is not supported; supported: {', '.join(SUPPORTED)}",
                            arg=node.output[0] if node.output else None)
        getattr(self, f"op_{node.op_type}", lambda n: None)(node)

    # -- Q / DQ --

    def op_QuantizeLinear(self, node: onnx.NodeProto) -> None:
        x = self._through_identity(node.input[0])
        zp = self.consts.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if zp is None or zp.dtype != np.int8:
            kind = "uint8" if zp is None or zp.dtype == np.uint8 else str(zp.dtype)
            raise self.fail(f"{kind} activations are not supported: the importer reads int8 QDQ models",
                            arg=node.output[0],
                            hint="quantise with activation_type=QuantType.QInt8, weight_type=QuantType.QInt8")
        quant, _ = self.q_params(node, len(self.shape(x)))
        out = node.output[0]
        if x in self.inputs:                          # the float interface: QUANTIZE as in TFLite
            self.ir_of[out] = self.add_tensor(out, _nhwc(self.shape(x)), DType.INT8, quant)
            self.emit(OpKind.QUANTIZE, (x,), (out,))
        elif x in self.producer and self.producer[x][1].op_type == "DequantizeLinear":
            src = self.value(x)                       # a requantisation: DQ -> Q
            self.ir_of[node.output[0]] = self.add_tensor(out, self.tensors[src].shape, DType.INT8, quant)
            self.emit(OpKind.QUANTIZE, (src,), (self.ir_of[node.output[0]],))

    def op_DequantizeLinear(self, node: onnx.NodeProto) -> None:
        src = self._through_identity(node.input[0])
        if src in self.consts:
            dt = self.consts[src].dtype
            if dt not in (np.int8, np.int32):
                raise self.fail(f"{dt} constants are not supported: the importer reads int8 weights and int32 "
                                "biases", arg=src, hint="quantise with weight_type=QuantType.QInt8")

    # -- convolutions --

    def activation_after(self, name: str) -> Tuple[Activation, str]:
        """A Relu/Clip reading ``name`` alone, with no QuantizeLinear between, fused into the op:
        (activation, the ONNX value the op then writes)."""
        readers = self.consumers.get(name, [])
        if len(readers) != 1 or name in self.outputs:
            return Activation.NONE, name
        i, node = readers[0]
        act = self.clip_activation(node) if node.op_type in ("Relu", "Clip") else None
        if act is None:
            return Activation.NONE, name
        self.skip.add(i)
        return act, node.output[0]

    def clip_activation(self, node: onnx.NodeProto) -> Optional[Activation]:
        if node.op_type == "Relu":
            return Activation.RELU
        lo, hi = self.clip_bounds(node)
        if lo == 0 and hi == math.inf:
            return Activation.RELU
        if lo == 0 and hi == 6:
            return Activation.RELU6
        if lo == -1 and hi == 1:
            return Activation.RELU_N1_TO_1
        return None

    def clip_bounds(self, node: onnx.NodeProto) -> Tuple[float, float]:
        bounds = []
        for k, default in ((1, -math.inf), (2, math.inf)):
            name = node.input[k] if len(node.input) > k else ""
            if name:
                c = self.dq_const(name)
                if c is None:
                    raise self.fail("Clip bounds must be constants", arg=name)
                data, q, _ = c
                v = float(np.asarray(data).ravel()[0])
                if q is not None:
                    v = (v - q.zero_points[0]) * q.scales[0]
                bounds.append(v)
            else:
                bounds.append(default)
        return bounds[0], bounds[1]

    def padding(self, attrs: dict, in_hw: Sequence[int], out_hw: Sequence[int], k: Sequence[int],
                stride: Sequence[int], dilation: Sequence[int]) -> Tuple[Optional[Padding], Tuple[int, ...]]:
        """TFLite's SAME or VALID when the ONNX pads are theirs, else (None, (top, left, bottom, right)).
        A pool's ``ceil_mode`` clips its last windows at the image as SAME does: SAME when the output
        size and the top/left pads are SAME's."""
        auto = attrs.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto == "VALID":
            return Padding.VALID, (0, 0, 0, 0)
        if auto == "SAME_UPPER":
            return Padding.SAME, (0, 0, 0, 0)
        if auto not in ("NOTSET", "SAME_LOWER"):
            raise self.fail(f"auto_pad {auto} is not supported")
        pads = tuple(attrs.get("pads", (0, 0, 0, 0)))
        same = []
        for d in range(2):
            eff = (k[d] - 1) * dilation[d] + 1
            total = max(0, (out_hw[d] - 1) * stride[d] + eff - in_hw[d])
            same.append((total // 2, total - total // 2))
        if auto == "SAME_LOWER":
            pads = (same[0][1], same[1][1], same[0][0], same[1][0])
        same_out = out_hw[0] == -(-in_hw[0] // stride[0]) and out_hw[1] == -(-in_hw[1] // stride[1])
        if same_out and pads[:2] == (same[0][0], same[1][0]) \
                and (pads[2:] == (same[0][1], same[1][1]) or attrs.get("ceil_mode", 0)):
            return Padding.SAME, pads
        valid = all(out_hw[d] == (in_hw[d] - (k[d] - 1) * dilation[d] - 1) // stride[d] + 1 for d in range(2))
        if not any(pads) and valid:
            return Padding.VALID, pads
        return None, pads

    def op_Conv(self, node: onnx.NodeProto) -> None:
        a = _attrs(node)
        x = self.feature_input(node.input[0])
        cin = self.shape(node.input[0])[1]
        w = self.dq_const(node.input[1])
        if w is None:
            raise self.fail("Conv weights must be constants", arg=node.input[1])
        wdata, wq, waxis = w
        if wdata.ndim != 4:
            raise self.fail(f"only 2D convolutions are supported (weights of rank {wdata.ndim})", arg=node.input[1])
        if wq is not None and not wq.per_tensor and waxis != 0:
            raise self.fail(f"Conv weights quantised per channel along axis {waxis}: only the output channels "
                            "(axis 0) are supported", arg=node.input[1])
        group = int(a.get("group", 1))
        cout, _, kh, kw = wdata.shape
        stride = tuple(a.get("strides", (1, 1)))
        dilation = tuple(a.get("dilations", (1, 1)))
        out_shape = self.shape(node.output[0])
        in_shape = self.shape(node.input[0])
        pad, pads = self.padding(a, in_shape[2:], out_shape[2:], (kh, kw), stride, dilation)
        if pad is None:
            x = self.pad(x, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3]), (0, 0)))
            pad = Padding.VALID
        act, y = self.activation_after(node.output[0])
        if group == cin and wdata.shape[1] == 1 and group > 1:
            kind, mult = OpKind.DEPTHWISE_CONV_2D, cout // cin
            wt, axis = wdata.transpose(1, 2, 3, 0), 3
        else:
            kind, mult = OpKind.CONV_2D, 1
            wt, axis = wdata.transpose(0, 2, 3, 1), 0
        wname = self.weights(node.input[1], wt, wq, axis)
        bname = self.bias(node.input[2] if len(node.input) > 2 else None, cout, x, wq)
        out = self.output(y, shape=_nhwc(out_shape))
        self.emit(kind, (x, wname, bname), (out,),
                  ConvOptions(stride=stride, dilation=dilation, padding=pad, activation=act, depth_multiplier=mult))

    def weights(self, onnx_name: str, data: np.ndarray, q: Optional[Quant], axis: int) -> str:
        dtype = DType.INT8 if q is not None else DType.FLOAT32
        if q is not None:
            if any(z != 0 for z in q.zero_points):
                raise self.fail("weights with a non-zero zero point are not supported (TFLite's are symmetric)",
                                arg=onnx_name, hint="quantise with symmetric weights (the default for QInt8)")
            q = Quant(q.scales, q.zero_points, axis if not q.per_tensor else 0)
        elif self.qdq:
            raise self.fail(f"weights {onnx_name!r} are float in a quantised model", arg=onnx_name)
        return self.add_tensor(self.fresh(onnx_name), data.shape, dtype, q, data.astype(dtype.numpy))

    def bias(self, name: Optional[str], n: int, x: Optional[str] = None, wq: Optional[Quant] = None) -> Optional[str]:
        """The bias of ``n`` outputs: float in a float model; in a QDQ model int32 at scale ``s_in s_w``
        (onnxruntime's), rescaled to it, rounding, when its own scale is another."""
        if not name:
            return None
        c = self.dq_const(name)
        if c is None:
            raise self.fail("the bias must be a constant", arg=name)
        data, q, _ = c
        data = np.asarray(data).reshape(-1)
        if data.size != n:
            raise self.fail(f"bias of {data.size} items for {n} output channels", arg=name)
        if q is None:
            if self.qdq:
                raise self.fail("float bias in a quantised model", arg=name)
            return self.add_tensor(self.fresh(name), (n,), DType.FLOAT32, data=data.astype(np.float32))
        if data.dtype != np.int32 or any(q.zero_points):
            raise self.fail("biases must be int32 with zero point 0 (scale input x weight)", arg=name)
        scales = np.broadcast_to(np.float64(q.scales), (n,))
        if x is not None and wq is not None:
            want = np.float64(np.float32(self.tensors[x].quant.scales[0]) *
                              np.broadcast_to(np.float32(wq.scales), (n,)))
            if np.any(np.abs(scales / want - 1) > 1e-5):
                data = np.clip(np.round(data * scales / want), -2**31, 2**31 - 1).astype(np.int32)
                scales = want
        return self.add_tensor(self.fresh(name), (n,), DType.INT32, Quant(tuple(float(v) for v in scales),
                                                                          (0,) * n), data)

    def pad(self, x: str, pads: Sequence[Tuple[int, int]]) -> str:
        """A PAD op of NHWC ``pads`` (the input's zero point: real zero)."""
        t = self.tensors[x]
        shape = tuple(d + p[0] + p[1] for d, p in zip(t.shape, pads))
        out = self.add_tensor(self.fresh(f"{x}_padded"), shape, t.dtype, t.quant)
        self.emit(OpKind.PAD, (x, self.int_const(f"{x}_paddings", np.array(pads))), (out,))
        return out

    # -- fully connected --

    def op_Gemm(self, node: onnx.NodeProto) -> None:
        a = _attrs(node)
        if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
            raise self.fail("Gemm with transA, alpha or beta other than 0, 1, 1 is not supported")
        self.fully_connected(node, node.input[1], bool(a.get("transB", 0)), node.input[2] if len(node.input) > 2
                             else None, node.output[0])

    def op_MatMul(self, node: onnx.NodeProto) -> None:
        bias, y = None, node.output[0]
        add = self.following_add(node.output[0])
        if add is not None:
            i, add_node, bias = add
            self.skip.add(i)
            y = add_node.output[0]
        self.fully_connected(node, node.input[1], False, bias, y)

    def following_add(self, name: str):
        """An Add of a constant vector reading the MatMul's output alone, with no QuantizeLinear between:
        (index, Add node, the constant's name). Where onnxruntime's quantiser put one (it does), the
        MatMul's output is rounded before the Add: FULLY_CONNECTED then ADD of the int8 vector, as it is."""
        readers = self.consumers.get(name, [])
        if len(readers) != 1 or readers[0][1].op_type != "Add" or name in self.outputs:
            return None
        i, node = readers[0]
        others = [x for x in node.input if self.dq_const(x) is not None]
        return (i, node, others[0]) if len(others) == 1 else None

    def fully_connected(self, node: onnx.NodeProto, wname: str, trans_b: bool, bias: Optional[str], y: str) -> None:
        x = self.value(node.input[0])
        in_shape = self.tensors[x].shape
        if len(in_shape) != 2 or in_shape[0] != 1:
            raise self.fail(f"{node.op_type} input of shape {in_shape}: only [1, K] is supported (Flatten first)",
                            arg=node.input[0])
        w = self.dq_const(wname)
        if w is None or w[0].ndim != 2:
            raise self.fail(f"{node.op_type} weights must be a constant matrix", arg=wname)
        wdata, wq, waxis = w
        if not trans_b:
            wdata, waxis = wdata.T, 1 - waxis
        if wq is not None and not wq.per_tensor and waxis != 0:
            raise self.fail("weights quantised per channel along the input dimension are not supported",
                            arg=wname)
        n, k = wdata.shape
        if k != in_shape[1]:
            raise self.fail(f"weights of {k} columns for an input of {in_shape[1]}", arg=wname)
        if x in self.flat_chw:                          # NCHW flatten order -> NHWC order
            c, h, wd = self.flat_chw[x]
            wdata = wdata.reshape(n, c, h, wd).transpose(0, 2, 3, 1).reshape(n, k)
        act, y = self.activation_after(y)
        out = self.output(y)
        wir = self.weights(wname, wdata, wq, 0)
        bir = self.fc_bias(node, bias, n, x, wq) if bias is not None else None
        self.emit(OpKind.FULLY_CONNECTED, (x, wir, bir), (out,), ActivationOptions(activation=act))

    def fc_bias(self, node: onnx.NodeProto, name: str, n: int, x: str, wq: Optional[Quant]) -> str:
        """The int32 bias (scale ``s_in s_w``): the Gemm's own, or an Add's int8 vector folded into it."""
        data, q, _ = self.dq_const(name)
        if q is None or data.dtype == np.int32:
            return self.bias(name, n, x, wq)
        real = (np.asarray(data, np.float64).reshape(-1) - q.zero_points[0]) * q.scales[0]
        if real.size != n:
            raise self.fail(f"bias of {real.size} items for {n} outputs", arg=name)
        s_in = self.tensors[x].quant.scales[0]
        s_w = np.float32(np.broadcast_to(np.float32(wq.scales), (n,)))
        scales = np.float32(s_in) * s_w
        b = np.clip(np.round(real / scales), -2**31, 2**31 - 1).astype(np.int32)
        return self.add_tensor(self.fresh(f"{name}_int32"), (n,), DType.INT32,
                               Quant(tuple(float(s) for s in scales), (0,) * n), b)

    # -- element-wise --

    def binary(self, node: onnx.NodeProto, kind: OpKind) -> None:
        ins = []
        out_shape = self.shape(node.output[0])
        for name in node.input:
            c = self.dq_const(name)
            if c is None:
                ins.append(self.feature_input(name))
                continue
            data, q, _ = c
            data = np.asarray(data)
            if len(out_shape) == 4:
                data = data.reshape((1,) * (4 - data.ndim) + data.shape).transpose(0, 2, 3, 1)
            dtype = DType.INT8 if q is not None else DType.FLOAT32
            if self.qdq and q is None:
                raise self.fail(f"constant {name!r} is float in a quantised model", arg=name)
            if q is not None and not q.per_tensor:
                raise self.fail(f"constant {name!r} of {node.op_type} is quantised per channel: only per tensor is "
                                "supported", arg=name)
            ins.append(self.add_tensor(self.fresh(name), data.shape, dtype,
                                       Quant(q.scales[:1], q.zero_points[:1]) if q is not None else None,
                                       data.astype(dtype.numpy)))
        act, y = self.activation_after(node.output[0])
        out = self.output(y)
        self.emit(kind, tuple(ins), (out,), ActivationOptions(activation=act))

    def op_Add(self, node: onnx.NodeProto) -> None:
        self.binary(node, OpKind.ADD)

    def op_Mul(self, node: onnx.NodeProto) -> None:
        self.binary(node, OpKind.MUL)

    def op_Concat(self, node: onnx.NodeProto) -> None:
        rank = len(self.shape(node.output[0]))
        axis = int(_attrs(node)["axis"]) % rank
        if rank == 4:
            axis = _NCHW_TO_NHWC_AXIS[axis]
        out = self.output(node.output[0])
        ins = [self.requant_input(self.feature_input(x), self.quant_of(out)) for x in node.input]
        self.emit(OpKind.CONCATENATION, tuple(ins), (out,), ActivationOptions(axis=axis))

    # -- activations --

    def unary(self, node: onnx.NodeProto, kind: OpKind, fixed: Optional[Quant] = None, options=None) -> None:
        x = self.feature_input(node.input[0])
        out = self.output(node.output[0])
        self.requant_to(kind, (x,), out, fixed, options)

    def op_Relu(self, node: onnx.NodeProto) -> None:
        self.unary(node, OpKind.RELU)

    def op_Clip(self, node: onnx.NodeProto) -> None:
        act = self.clip_activation(node)
        if act == Activation.RELU:
            self.unary(node, OpKind.RELU)
        elif act == Activation.RELU6:
            x = self.feature_input(node.input[0])
            self.unary(node, OpKind.RELU6, self.quant_of(x))
        else:
            lo, hi = self.clip_bounds(node)
            raise self.fail(f"Clip({lo:g}, {hi:g}) is not supported on its own: only Clip(0, 6) and Clip(0, inf), "
                            "or any of (0, inf), (0, 6), (-1, 1) after a Conv/Gemm/Add/Mul", arg=node.output[0])

    def op_LeakyRelu(self, node: onnx.NodeProto) -> None:
        self.unary(node, OpKind.LEAKY_RELU, options=LeakyReluOptions(alpha=float(_attrs(node).get("alpha", 0.01))))

    def op_HardSwish(self, node: onnx.NodeProto) -> None:
        self.unary(node, OpKind.HARD_SWISH)

    def op_Sigmoid(self, node: onnx.NodeProto) -> None:
        self.unary(node, OpKind.LOGISTIC, _LOGISTIC_Q)

    def op_Tanh(self, node: onnx.NodeProto) -> None:
        self.unary(node, OpKind.TANH, _TANH_Q)

    def op_Softmax(self, node: onnx.NodeProto) -> None:
        rank = len(self.shape(node.input[0]))
        axis = int(_attrs(node).get("axis", -1)) % rank
        last = 1 if rank == 4 else rank - 1             # NCHW channels are NHWC's last axis
        opset = next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")), 0)
        if axis != last or (opset < 13 and rank == 4):
            raise self.fail(f"Softmax over axis {axis} of a rank {rank} tensor is not supported: only over the "
                            "channels", arg=node.input[0])
        self.unary(node, OpKind.SOFTMAX, _SOFTMAX_Q, SoftmaxOptions(beta=1.0))

    # -- pools --

    def pool(self, node: onnx.NodeProto, kind: OpKind) -> None:
        a = _attrs(node)
        k = tuple(a["kernel_shape"])
        stride = tuple(a.get("strides", (1, 1)))
        if len(k) != 2 or tuple(a.get("dilations", (1, 1))) != (1, 1):
            raise self.fail(f"{node.op_type} must be 2D without dilation", arg=node.input[0])
        in_shape, out_shape = self.shape(node.input[0]), self.shape(node.output[0])
        pad, pads = self.padding(a, in_shape[2:], out_shape[2:], k, stride, (1, 1))
        if pad is None:
            ceil = " with ceil_mode=1" if a.get("ceil_mode", 0) else ""
            raise self.fail(f"{node.op_type} pads {list(pads)}{ceil} are neither TFLite's SAME nor VALID",
                            arg=node.input[0], hint="pad with SAME (bottom/right get the odd pixel) or not at all")
        if kind == OpKind.AVERAGE_POOL_2D and a.get("count_include_pad", 0) and any(pads):
            raise self.fail("AveragePool with count_include_pad=1 and pads is not supported (TFLite counts the "
                            "taps inside the image only)", arg=node.input[0])
        x = self.feature_input(node.input[0])
        out = self.output(node.output[0])
        self.requant_to(kind, (x,), out, self.quant_of(x), PoolOptions(filter=k, stride=stride, padding=pad))

    def op_MaxPool(self, node: onnx.NodeProto) -> None:
        if len(node.output) > 1 and node.output[1]:
            raise self.fail("MaxPool's Indices output is not supported", arg=node.output[1])
        self.pool(node, OpKind.MAX_POOL_2D)

    def op_AveragePool(self, node: onnx.NodeProto) -> None:
        self.pool(node, OpKind.AVERAGE_POOL_2D)

    def op_GlobalAveragePool(self, node: onnx.NodeProto) -> None:
        x = self.feature_input(node.input[0])
        out = self.output(node.output[0])
        self.emit(OpKind.MEAN, (x, self.int_const(f"{out}_axes", np.array([1, 2]))), (out,),
                  ReduceOptions(axes=(1, 2), keep_dims=True))

    # -- layout --

    def op_Pad(self, node: onnx.NodeProto) -> None:
        a = _attrs(node)
        mode = a.get("mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode != "constant":
            raise self.fail(f"Pad mode {mode!r} is not supported: only constant", arg=node.input[0])
        if len(node.input) > 2 and node.input[2]:
            c = self.dq_const(node.input[2])
            v = None if c is None else float(np.asarray(c[0]).ravel()[0])
            if c is not None and c[1] is not None:
                v = (v - c[1].zero_points[0]) * c[1].scales[0]
            if v != 0:
                raise self.fail("Pad with a value other than 0 is not supported", arg=node.input[2])
        if len(node.input) > 3 and node.input[3]:
            raise self.fail("Pad with axes is not supported", arg=node.input[3])
        pads = self.consts.get(node.input[1]) if len(node.input) > 1 else None
        if pads is None:
            raise self.fail("Pad's pads must be a constant", arg=node.input[1] if len(node.input) > 1 else None)
        pads = [int(p) for p in pads]
        rank = len(pads) // 2
        if rank != 4 or any(p < 0 for p in pads):
            raise self.fail(f"Pad {pads}: only non-negative pads of a 4D feature map are supported", arg=node.input[0])
        nchw = list(zip(pads[:4], pads[4:]))
        x = self.feature_input(node.input[0])
        out = self.output(node.output[0])
        nhwc = (nchw[0], nchw[2], nchw[3], nchw[1])
        self.requant_to(OpKind.PAD, (x, self.int_const(f"{out}_paddings", np.array(nhwc))), out, self.quant_of(x))

    def op_Flatten(self, node: onnx.NodeProto) -> None:
        if int(_attrs(node).get("axis", 1)) != 1:
            raise self.fail("Flatten other than axis 1 is not supported", arg=node.input[0])
        self.reshape(node)

    def op_Reshape(self, node: onnx.NodeProto) -> None:
        self.reshape(node)

    def reshape(self, node: onnx.NodeProto) -> None:
        x = self.value(node.input[0])
        src = self.shape(node.input[0])
        dst = self.shape(node.output[0])
        chw = None
        if len(src) == 4 and src[1] > 1 and src[2] * src[3] > 1:
            if len(dst) != 2 or dst[0] != 1:
                raise self.fail(f"Reshape of an NCHW feature map {src} to {dst}: the IR is NHWC and only a "
                                "flatten to [1, C*H*W] read by Gemm/MatMul is supported", arg=node.input[0])
            readers = self.consumers.get(node.output[0], [])
            if self.qdq and len(readers) == 1 and readers[0][1].op_type == "QuantizeLinear":
                readers = [r for dq in self.consumers.get(readers[0][1].output[0], [])
                           for r in self.consumers.get(dq[1].output[0], [])]
            if not readers or any(r[1].op_type not in ("Gemm", "MatMul") for r in readers) \
                    or node.output[0] in self.outputs:
                raise self.fail(f"a flatten of the NCHW feature map {src} is read by other than Gemm/MatMul: "
                                "NHWC flattens in another order", arg=node.input[0],
                                hint="flatten after a GlobalAveragePool, or read it with Gemm/MatMul")
            chw = tuple(src[1:])
        elif x in self.flat_chw:
            raise self.fail("a Reshape of an NCHW flatten is not supported", arg=node.input[0])
        if len(dst) == 4 and dst[1] > 1 and dst[2] * dst[3] > 1:
            raise self.fail(f"Reshape to an NCHW feature map {dst} is not supported", arg=node.output[0])
        out = self.output(node.output[0])
        if chw is not None:
            self.flat_chw[out] = chw
        shape = self.int_const(f"{out}_shape", np.array(self.tensors[out].shape))
        self.requant_to(OpKind.RESHAPE, (x, shape), out, self.quant_of(x))
