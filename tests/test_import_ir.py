"""The importers' IR (autotiler/importers/ir.py): a graph is checked where it is built, and its
errors name the model file, the operator and the tensor."""

from __future__ import annotations

import numpy as np
import pytest

from autotiler.errors import ImportModelError
from autotiler.importers.ir import DType, Graph, Op, OpKind, Quant, Tensor

Q = Quant((0.5,), (-3,))


def _graph(ops, inputs=("x",), outputs=("y",), extra=()):
    tensors = {t.name: t for t in (Tensor("x", (1, 4), DType.INT8, Q), Tensor("y", (1, 4), DType.INT8, Q), *extra)}
    return Graph("net.tflite", "tflite", "NHWC", tensors, tuple(ops), inputs, outputs)


def test_a_valid_graph_checks_and_answers_queries():
    op = Op(OpKind.RELU, 0, "0 (RELU)", ("x",), ("y",))
    g = _graph([op]).check()
    assert g.producer("y") == op and g.consumers("x") == (op,) and g.producer("x") is None
    assert g.where(op) == "net.tflite: operator 0 (RELU)"
    assert Q.per_tensor and DType.INT8.numpy == np.int8
    with pytest.raises(TypeError):
        g.tensors["z"] = g.tensors["x"]          # frozen


@pytest.mark.parametrize("ops, inputs, outputs, message", [
    ([Op(OpKind.RELU, 0, "0 (RELU)", ("w",), ("y",))], ("x",), ("y",),
     "net.tflite: operator 0 (RELU): argument 'w': input tensor 'w' does not exist"),
    ([Op(OpKind.RELU, 0, "0 (RELU)", ("x",), ("z",))], ("x",), ("y",),
     "net.tflite: operator 0 (RELU): argument 'z': output tensor 'z' does not exist"),
    ([Op(OpKind.RELU, 0, "0 (RELU)", ("y",), ("x",))], ("q",), ("x",), "net.tflite: graph input 'q' is not a tensor"),
    ([Op(OpKind.RELU, 0, "0 (RELU)", ("y",), ("x",)), Op(OpKind.RELU, 1, "1 (RELU)", ("x",), ("y",))], ("x",), ("y",),
     "net.tflite: operator 0 (RELU): argument 'y': input tensor 'y' is computed after this operator"),
    ([], ("x",), ("y",), "net.tflite: argument 'y': graph output 'y' is computed by no operator"),
])
def test_a_broken_graph_is_refused_by_name(ops, inputs, outputs, message):
    with pytest.raises(ImportModelError) as e:
        _graph(ops, inputs, outputs).check()
    assert str(e.value).startswith(message)
