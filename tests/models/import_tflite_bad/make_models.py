"""Build the small multi-operator TFLite models tests/test_import_tflite.py reads and runs.

Run by hand, never by the tests (TensorFlow is not a dependency of autotiler)::

    /tmp/tfvenv/bin/python tests/models/import_tflite_bad/make_models.py

Each network is a tf.function whose flattening reshape takes its shape from ``tf.shape``:

* ``conv_pool_fc_int8``: int8 in and out (full-integer quantisation): CONV_2D + RELU, MAX_POOL_2D,
  RESHAPE, FULLY_CONNECTED, SOFTMAX.
* ``mixed_float_io``: float in and out around an int8 body (QUANTIZE / DEQUANTIZE at the edges): PAD,
  DEPTHWISE_CONV_2D (multiplier 2), HARD_SWISH, LEAKY_RELU, AVERAGE_POOL_2D, MUL by a constant, ADD +
  RELU6, SUB, MEAN (keep_dims off), FULLY_CONNECTED + RELU, LOGISTIC, TANH, requantising QUANTIZE,
  CONCATENATION, RESHAPE, SQUEEZE.
* ``mixed_float32``: the same network not quantised (float32 throughout), for the float reference.
* ``mixed_float16``: the same with float16 weights (``DEQUANTIZE`` of constants, to fold).

Converted with batch 1 they are static (the converter folds ``tf.shape``), and TFLM runs them. The
``*_dynamic`` twins are the same networks (same constants, same representative data) with a
dynamic batch (``None``): the converter keeps the shape-computing subgraph (SHAPE -> STRIDED_SLICE ->
PACK -> RESHAPE, as Keras models emit it) and records placeholder shapes (``[1, 1]``) after it, so
TFLM cannot run them; the importer must fold the subgraph and infer the shapes, and then give the
static twin's graph.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

OUT = Path(__file__).resolve().parent
RNG = np.random.default_rng(24)


def const(*shape, scale=0.4):
    return tf.constant(RNG.normal(0, scale, size=shape).astype(np.float32))


W1, B1 = const(3, 3, 2, 6), const(6, scale=0.1)
W2, B2 = const(96, 5), const(5, scale=0.1)


def conv_pool_fc(x):
    y = tf.nn.relu(tf.nn.conv2d(x, W1, 1, "SAME") + B1)
    y = tf.nn.max_pool2d(y, 2, 2, "VALID")
    y = tf.reshape(y, tf.stack([tf.shape(y)[0], -1]))
    return tf.nn.softmax(tf.matmul(y, W2) + B2)


DW, DB = const(3, 3, 3, 2), const(6, scale=0.1)
F1, FB = const(6, 4), const(4, scale=0.1)
K = const(1, 1, 1, 6, scale=1.0)


def mixed(x):
    y = tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]])
    y = tf.nn.depthwise_conv2d(y, DW, [1, 1, 1, 1], "VALID") + DB
    h = y * tf.nn.relu6(y + 3.0) / 6.0
    a = tf.nn.leaky_relu(y, 0.15)
    p = tf.nn.avg_pool2d(h, 2, 2, "SAME")
    q = tf.nn.avg_pool2d(a, 2, 2, "SAME")
    s = tf.nn.relu6(p + q) - q * K
    m = tf.reduce_mean(s, axis=[1, 2])
    f = tf.nn.relu(tf.matmul(m, F1) + FB)
    c = tf.concat([tf.sigmoid(f), tf.tanh(f)], axis=-1)
    return tf.squeeze(tf.reshape(c, tf.stack([tf.shape(c)[0], 1, -1])), axis=1)


def convert(fn, shape, lo, hi, quantise=True, int8_io=True, batch=1, float16=False) -> bytes:
    rng = np.random.default_rng(7)
    module = tf.Module()
    module.f = tf.function(fn, input_signature=[tf.TensorSpec((batch,) + shape, tf.float32)])
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.f.get_concrete_function()], module)
    if float16:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf.float16]
    elif quantise:
        def gen():
            for _ in range(64):
                yield [rng.uniform(lo, hi, size=(1,) + shape).astype(np.float32)]
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = gen
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if int8_io:
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
    return conv.convert()


def main() -> None:
    models = {
        "conv_pool_fc_int8": convert(conv_pool_fc, (8, 8, 2), -1.0, 2.0),
        "conv_pool_fc_int8_dynamic": convert(conv_pool_fc, (8, 8, 2), -1.0, 2.0, batch=None),
        "mixed_float_io": convert(mixed, (7, 6, 3), -2.0, 3.0, int8_io=False),
        "mixed_float_io_dynamic": convert(mixed, (7, 6, 3), -2.0, 3.0, int8_io=False, batch=None),
        "mixed_float32": convert(mixed, (7, 6, 3), -2.0, 3.0, quantise=False),
        "mixed_float16": convert(mixed, (7, 6, 3), -2.0, 3.0, float16=True),
    }
    for name, data in models.items():
        (OUT / f"{name}.tflite").write_bytes(data)
        print(name, len(data), "bytes")


if __name__ == "__main__":
    main()
