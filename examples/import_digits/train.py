"""Train a small CNN on scikit-learn's 8x8 digits with Keras, convert it to an int8 TFLite model, and
keep the held-out digits with TensorFlow Lite's own answers on them.

Run by hand (TensorFlow and scikit-learn are not dependencies of autotiler)::

    /tmp/tfvenv/bin/pip install tensorflow scikit-learn
    /tmp/tfvenv/bin/python examples/import_digits/train.py

Writes next to this file:

* ``digits.tflite``: the network, full-integer int8 (int8 input and output), converted by
  TensorFlow's converter from a representative set of 200 training digits;
* ``test_digits.npz``: the held-out digits (25 %, fixed split) as ``x`` (float32 N x 8 x 8 x 1 in
  [0, 1]), ``x_int8`` (the same quantised with the model's input scale and zero point: what the
  model takes, N x 8 x 8 x 1), ``y`` (labels), ``tflite_scores`` (TensorFlow Lite's int8 outputs, reference kernels,
  N x 10) and ``tflite_pred`` (their argmax);
* ``tflite_accuracy.json``: the float Keras model's and the int8 TFLite model's accuracy on them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
SEED = 7
L = tf.keras.layers


def network() -> tf.keras.Model:
    """Two 3x3 convolutions, a max pool, a third convolution, Flatten, Dense 10, softmax."""
    return tf.keras.Sequential([
        tf.keras.Input((8, 8, 1)),
        L.Conv2D(12, 3, padding="same", activation="relu"),
        L.Conv2D(16, 3, padding="same", activation="relu"),
        L.MaxPooling2D(2),
        L.Conv2D(24, 3, padding="same", activation="relu"),
        L.Flatten(),
        L.Dense(10),
        L.Softmax(),
    ])


def convert(model: tf.keras.Model, representative: np.ndarray) -> bytes:
    """int8 full-integer quantisation with a batch of one (the shape the importer takes)."""
    module = tf.Module()
    module.f = tf.function(lambda x: model(x, training=False),
                           input_signature=[tf.TensorSpec((1, 8, 8, 1), tf.float32, name="digit")])
    conv = tf.lite.TFLiteConverter.from_concrete_functions([module.f.get_concrete_function()], module)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([representative[i:i + 1]] for i in range(len(representative)))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    return conv.convert()


def quantise(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """TFLite's QUANTIZE: round half away from zero, then clamp to int8."""
    v = x / scale
    q = np.sign(v) * np.floor(np.abs(v) + 0.5) + zero_point
    return np.clip(q, -128, 127).astype(np.int8)


def main() -> int:
    tf.keras.utils.set_random_seed(SEED)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[..., None]
    x_train, x_test, y_train, y_test = train_test_split(x, digits.target, test_size=0.25, random_state=SEED,
                                                        stratify=digits.target)
    model = network()
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=40, batch_size=32, verbose=0)
    float_acc = float(np.mean(np.argmax(model.predict(x_test, verbose=0), axis=1) == y_test))

    buf = convert(model, x_train[:200])
    (HERE / "digits.tflite").write_bytes(buf)
    # TFLite's reference kernels (no XNNPACK delegate): the arithmetic TFLite Micro shares.
    interp = tf.lite.Interpreter(model_content=buf,
                                 experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    scale, zp = inp["quantization"]
    x_int8 = quantise(x_test, scale, zp)
    scores = []
    for xi in x_int8:
        interp.set_tensor(inp["index"], xi[None])
        interp.invoke()
        scores.append(interp.get_tensor(out["index"])[0].copy())
    scores = np.stack(scores)
    pred = np.argmax(scores, axis=1)
    acc = float(np.mean(pred == y_test))
    np.savez_compressed(HERE / "test_digits.npz", x=x_test, x_int8=x_int8, y=y_test.astype(np.int64),
                        tflite_scores=scores, tflite_pred=pred.astype(np.int64))
    summary = {"test_digits": int(len(y_test)), "keras_float_accuracy": round(float_acc, 4),
               "tflite_int8_accuracy": round(acc, 4), "tflite_int8_correct": int(np.sum(pred == y_test)),
               "input": {"scale": float(scale), "zero_point": int(zp)},
               "output": {"scale": float(out["quantization"][0]), "zero_point": int(out["quantization"][1])},
               "converter": f"tensorflow {tf.__version__}"}
    (HERE / "tflite_accuracy.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
