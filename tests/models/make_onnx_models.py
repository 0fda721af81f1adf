"""Build the ONNX test models of the importer (issue 24): small float networks written with
``onnx.helper`` and their QDQ versions quantised by onnxruntime's own quantiser
(``quantize_static``, QuantFormat.QDQ, per-channel int8 weights, int8 activations, MinMax
calibration on a fixed-seed random reader).

Run by hand from the repository root (onnx and onnxruntime are in the ``import``/``test`` extras):

    .venv/bin/python tests/models/make_onnx_models.py

It writes ``tests/models/onnx/NAME.onnx`` (float) and ``NAME_qdq.onnx`` (quantised) for each model
below; the tests never build models, they read these files.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable, Dict, List, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")
OPSET = 17
CALIBRATION_SAMPLES = 32


class _Builder:
    """Accumulates nodes and initialisers of one graph; names every tensor."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: List[onnx.NodeProto] = []
        self.inits: List[onnx.TensorProto] = []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, prefix: str, value: np.ndarray) -> str:
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def node(self, op: str, inputs: List[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{self.count}", **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: Tuple[int, int], stride=(1, 1), pads=(0, 0, 0, 0),
             group: int = 1) -> str:
        fan_in = (cin // group) * k[0] * k[1]
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k[0], k[1])).astype(np.float32)
        b = self.rng.normal(0, 0.1, cout).astype(np.float32)
        return self.node("Conv", [x, self.const("w", w), self.const("b", b)], kernel_shape=list(k),
                         strides=list(stride), pads=list(pads), group=group)

    def gemm(self, x: str, k: int, n: int) -> str:
        w = self.rng.normal(0, np.sqrt(2.0 / k), (n, k)).astype(np.float32)
        b = self.rng.normal(0, 0.1, n).astype(np.float32)
        return self.node("Gemm", [x, self.const("w", w), self.const("b", b)], transB=1)

    def matmul_add(self, x: str, k: int, n: int) -> str:
        w = self.rng.normal(0, np.sqrt(2.0 / k), (k, n)).astype(np.float32)
        b = self.rng.normal(0, 0.1, n).astype(np.float32)
        return self.node("Add", [self.node("MatMul", [x, self.const("w", w)]), self.const("b", b)])

    def clip(self, x: str, lo: float, hi: float) -> str:
        return self.node("Clip", [x, self.const("lo", np.float32(lo)), self.const("hi", np.float32(hi))])

    def model(self, name: str, in_shape: List[int], out: str) -> onnx.ModelProto:
        self.nodes.append(helper.make_node("Identity", [out], ["output"], name="output_identity"))
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model)
        onnx.checker.check_model(model, full_check=True)
        return model


def convnet() -> Tuple[onnx.ModelProto, List[int]]:
    """Conv with groups, depth wise (multiplier 1 and 2), SAME/explicit pads, Relu, Clip(0, 6), a residual
    Add, MaxPool, AveragePool (SAME, count_include_pad 0), Concat, HardSwish, GlobalAveragePool, Flatten,
    Gemm, Softmax."""
    b = _Builder(1)
    shape = [1, 3, 16, 16]
    x = b.node("Relu", [b.conv("input", 3, 8, (3, 3), pads=(1, 1, 1, 1))])              # 8 x 16 x 16
    x = b.clip(b.conv(x, 8, 8, (3, 3), stride=(2, 2), pads=(0, 0, 1, 1), group=8), 0, 6)  # 8 x 8 x 8 (SAME)
    p = b.conv(x, 8, 16, (1, 1))                                                        # 16 x 8 x 8
    g = b.node("Relu", [b.conv(p, 16, 16, (3, 3), pads=(1, 1, 1, 1), group=2)])
    x = b.node("Add", [p, g])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])                     # 16 x 4 x 4
    av = b.node("AveragePool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    d = b.node("Relu", [b.conv(x, 16, 32, (3, 3), pads=(1, 1, 1, 1), group=16)])        # multiplier 2
    x = b.node("HardSwish", [b.node("Concat", [d, av], axis=1)])                        # 48 x 4 x 4
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])])
    x = b.node("Softmax", [b.gemm(x, 48, 10)], axis=-1)
    return b.model("convnet", shape, x), shape


def actnet() -> Tuple[onnx.ModelProto, List[int]]:
    """LeakyRelu, a Pad before a VALID Conv (TFLite's SAME padding as Keras exports it), Sigmoid and Mul
    (swish), Tanh, a Flatten of a 4 x 4 feature map into MatMul + Add, a Relu after an Add."""
    b = _Builder(2)
    shape = [1, 4, 12, 12]
    x = b.node("LeakyRelu", [b.conv("input", 4, 8, (3, 3))], alpha=0.1)               # 8 x 10 x 10
    x = b.node("Pad", [x, b.const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], mode="constant")
    x = b.conv(x, 8, 8, (3, 3))                                                         # 8 x 10 x 10
    x = b.node("Mul", [x, b.node("Sigmoid", [x])])
    x = b.node("Tanh", [b.conv(x, 8, 8, (3, 3), stride=(2, 2))])                        # 8 x 4 x 4
    x = b.node("Flatten", [x])
    x = b.node("Relu", [b.matmul_add(x, 128, 16)])
    return b.model("actnet", shape, b.matmul_add(x, 16, 6)), shape


def kws() -> Tuple[onnx.ModelProto, List[int]]:
    """A keyword-spotting DS-CNN shape: 49 x 10 MFCC in, a strided 10 x 4 conv, two depth wise separable
    blocks, a global AveragePool, Reshape, Gemm, Softmax."""
    b = _Builder(3)
    shape = [1, 1, 49, 10]
    x = b.node("Relu", [b.conv("input", 1, 16, (10, 4), stride=(2, 2), pads=(4, 1, 5, 1))])  # SAME
    for _ in range(2):
        x = b.node("Relu", [b.conv(x, 16, 16, (3, 3), pads=(1, 1, 1, 1), group=16)])
        x = b.node("Relu", [b.conv(x, 16, 16, (1, 1))])
    x = b.node("AveragePool", [x], kernel_shape=[25, 5])
    x = b.node("Reshape", [x, b.const("shape", np.array([1, -1], np.int64))])
    return b.model("kws", shape, b.node("Softmax", [b.gemm(x, 16, 12)])), shape


class _Reader(CalibrationDataReader):
    def __init__(self, shape: List[int], seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.data = iter([{"input": rng.normal(0, 1, shape).astype(np.float32)} for _ in range(CALIBRATION_SAMPLES)])

    def get_next(self):
        return next(self.data, None)


MODELS: Dict[str, Callable[[], Tuple[onnx.ModelProto, List[int]]]] = {
    "convnet": convnet, "actnet": actnet, "kws": kws}


def main() -> None:
    os.makedirs(OUT_DIR, exist_ok=True)
    for seed, (name, build) in enumerate(MODELS.items()):
        model, shape = build()
        float_path = os.path.join(OUT_DIR, f"{name}.onnx")
        onnx.save(model, float_path)
        with tempfile.TemporaryDirectory() as tmp:
            quantize_static(float_path, os.path.join(tmp, "q.onnx"), _Reader(shape, seed),
                            quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                            weight_type=QuantType.QInt8)
            q = onnx.load(os.path.join(tmp, "q.onnx"))
        onnx.save(q, os.path.join(OUT_DIR, f"{name}_qdq.onnx"))
        print(name, os.path.getsize(float_path), os.path.getsize(os.path.join(OUT_DIR, f"{name}_qdq.onnx")))


if __name__ == "__main__":
    main()
