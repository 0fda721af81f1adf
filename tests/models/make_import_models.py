"""Build the whole-network TFLite models the importer (issue 24) is tested on, with the real converter.

Run by hand, never by the tests (TensorFlow is not a dependency of autotiler)::

    /tmp/tfvenv/bin/python tests/models/make_import_models.py     # writes tests/models/import/
    /tmp/tfvenv/bin/python tests/models/make_import_models.py --only mobilenet_v2_035_96   # just that one

(``--only``, repeatable, rebuilds the named models and leaves the other committed files as they are.)

Every int8 model is a Keras network converted by TensorFlow's converter with full-integer
quantisation from a representative dataset and int8 input and output (``float_interface`` keeps a
float32 interface on purpose: QUANTIZE at the input, DEQUANTIZE at the output). Weights are random
(He-normal, batch norms with random statistics, fixed seeds): the tests check arithmetic, not
accuracy. For each model ``<name>.tflite`` a ``<name>.json`` sidecar says what it is, its operators
in order and its interface (name, shape, dtype, scale, zero point). Small networks also come as
float32 models ``<name>_float.tflite`` with ``<name>_float.npz``: the representative dataset the int8
conversion used, one array per graph input name, shape [N, *input shape without batch] (the
calibration file of ``autotiler import --calibration``), so that a quantiser can be compared with the
converter's own parameters. README.md lists the models.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import flatbuffers
import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

OUT = Path(__file__).resolve().parent / "import"
OPS = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
TYPES = {v: k.lower() for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
L = tf.keras.layers
CALIBRATION_COUNT = 48


# ---- conversion -----------------------------------------------------------------------------------


def concrete(model, shapes: Sequence[Tuple[int, ...]], batch: Optional[int]):
    """``model`` as a concrete function of inputs (batch, *shape); batch None keeps the batch dynamic
    (Keras then computes Flatten/Reshape shapes at run time: SHAPE, STRIDED_SLICE, PACK)."""
    sig = [tf.TensorSpec((batch,) + tuple(s), tf.float32, name=f"input_{i}") for i, s in enumerate(shapes)]
    module = tf.Module()
    if len(shapes) == 1:
        module.f = tf.function(lambda x: model(x, training=False), input_signature=sig)
    else:
        module.f = tf.function(lambda *xs: model(list(xs), training=False), input_signature=sig)
    return module, module.f.get_concrete_function()


def convert(model, shapes, calib: List[np.ndarray], *, int8: bool = True, float_io: bool = False,
            batch: Optional[int] = 1, int16: bool = False, rewrite: Optional[Callable] = None) -> bytes:
    """Convert with TensorFlow's converter: int8 full-integer (int8 or float interface), 16x8, or float32."""
    module, cf = concrete(model, shapes, batch)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], module)
    if int8 or int16:
        def gen():
            for i in range(calib[0].shape[0]):
                yield [c[i:i + 1] for c in calib]
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = gen
        if int16:
            conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
            conv.inference_input_type = tf.int16
            conv.inference_output_type = tf.int16
        else:
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            if not float_io:
                conv.inference_input_type = tf.int8
                conv.inference_output_type = tf.int8
    buf = conv.convert()
    return rewrite(buf) if rewrite else buf


def ops_of(buf: bytes) -> List[str]:
    m = load(buf)
    return [ops_name(m, op) for op in m.subgraphs[0].operators]


def interface(buf: bytes) -> Tuple[List[dict], List[dict]]:
    """The graph's inputs and outputs: name, shape, dtype, scale, zero point (None when float)."""
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))
    sg = m.subgraphs[0]

    def info(i: int) -> dict:
        t = sg.tensors[i]
        q = t.quantization
        quant = q is not None and q.scale is not None and len(q.scale) > 0
        return {"name": t.name.decode() if isinstance(t.name, bytes) else t.name,
                "shape": [int(v) for v in t.shape], "dtype": TYPES[int(t.type)],
                "scale": float(q.scale[0]) if quant else None,
                "zero_point": int(q.zeroPoint[0]) if quant else None}
    return [info(int(i)) for i in sg.inputs], [info(int(i)) for i in sg.outputs]


def write(name: str, buf: bytes, note: str, *, expect: Sequence[str] = (), extra: Optional[dict] = None) -> dict:
    ops = ops_of(buf)
    missing = [k for k in expect if k not in ops]
    if missing:
        raise SystemExit(f"{name}: expected operators {missing} not in {ops}")
    inputs, outputs = interface(buf)
    side = {"name": name, "note": note, "operators": ops, "inputs": inputs, "outputs": outputs,
            "random_weights": True, "converter": f"tensorflow {tf.__version__}", **(extra or {})}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.tflite").write_bytes(buf)
    (OUT / f"{name}.json").write_text(json.dumps(side, indent=1) + "\n")
    print(f"{name:28s} {len(buf):7d} B  {len(ops):3d} ops  {note}")
    return side


def write_float(name: str, model, shapes, calib: List[np.ndarray], note: str, **kw) -> None:
    """``<name>_float.tflite`` (float32 throughout) and its calibration ``<name>_float.npz``."""
    buf = convert(model, shapes, calib, int8=False, **kw)
    inputs, _ = interface(buf)
    np.savez(OUT / f"{name}_float.npz", **{i["name"]: c.astype(np.float32) for i, c in zip(inputs, calib)})
    write(f"{name}_float", buf, f"float32 form of {name}: {note}",
          extra={"calibration": f"{name}_float.npz", "int8_model": f"{name}.tflite"})


def both(name: str, model, shapes, calib, note: str, *, expect: Sequence[str] = (), float_too: bool = True,
         **kw) -> None:
    write(name, convert(model, shapes, calib, **kw), note, expect=expect,
          extra={"float_model": f"{name}_float.tflite"} if float_too else None)
    if float_too:
        write_float(name, model, shapes, calib, note, batch=kw.get("batch", 1), rewrite=kw.get("rewrite"))


# ---- random weights -------------------------------------------------------------------------------


def randomise(model, seed: int, last_gain: float = 0.3) -> None:
    """He-normal kernels (activations keep their size through deep ReLU stacks), small random biases,
    batch norms with random statistics (folded by the converter into per-channel scales). The last
    weighted layer is scaled by ``last_gain`` so that a softmax does not saturate to one-hot."""
    rng = np.random.default_rng(seed)
    weighted = [ly for ly in model.layers if ly.get_weights()]
    for layer in weighted:
        ws = layer.get_weights()
        if isinstance(layer, L.BatchNormalization):
            n = ws[0].shape[0]
            layer.set_weights([rng.uniform(0.7, 1.3, n), rng.uniform(-0.2, 0.2, n),
                               rng.uniform(-0.2, 0.2, n), rng.uniform(0.6, 1.4, n)])
            continue
        kernel = ws[0]
        if isinstance(layer, L.DepthwiseConv2D):
            fan_in = kernel.shape[0] * kernel.shape[1]
        else:
            fan_in = int(np.prod(kernel.shape[:-1]))
        gain = last_gain if layer is weighted[-1] else 1.0
        new = [gain * rng.normal(0.0, np.sqrt(2.0 / fan_in), kernel.shape)]
        new += [rng.uniform(-0.1, 0.1, w.shape) for w in ws[1:]]
        layer.set_weights([w.astype(np.float32) for w in new])


def calibration(shapes, seed: int, lo: float = -1.0, hi: float = 1.0, count: int = CALIBRATION_COUNT):
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, (count,) + tuple(s)).astype(np.float32) for s in shapes]


# ---- networks -------------------------------------------------------------------------------------


def ds_cnn(channels: int = 64):
    """MLPerf Tiny's keyword-spotting DS-CNN (49x10 MFCC input, 12 classes)."""
    x = inp = tf.keras.Input((49, 10, 1))
    x = L.Conv2D(channels, (10, 4), strides=2, padding="same", use_bias=False)(x)
    x = L.ReLU()(L.BatchNormalization()(x))
    for _ in range(4):
        x = L.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
        x = L.ReLU()(L.BatchNormalization()(x))
        x = L.Conv2D(channels, 1, use_bias=False)(x)
        x = L.ReLU()(L.BatchNormalization()(x))
    x = L.AveragePooling2D(pool_size=(25, 5))(x)
    x = L.Flatten()(x)
    x = L.Dense(12)(x)
    return tf.keras.Model(inp, L.Softmax()(x))


def resnet8():
    """MLPerf Tiny's image-classification ResNet-8 (32x32x3, 10 classes) with its residual ADDs."""
    def block(x, filters, strides):
        y = L.Conv2D(filters, 3, strides=strides, padding="same")(x)
        y = L.Activation("relu")(L.BatchNormalization()(y))
        y = L.BatchNormalization()(L.Conv2D(filters, 3, padding="same")(y))
        if strides != 1 or x.shape[-1] != filters:
            x = L.Conv2D(filters, 1, strides=strides)(x)
        return L.Activation("relu")(L.Add()([x, y]))
    x = inp = tf.keras.Input((32, 32, 3))
    x = L.Activation("relu")(L.BatchNormalization()(L.Conv2D(16, 3, padding="same")(x)))
    x = block(x, 16, 1)
    x = block(x, 32, 2)
    x = block(x, 64, 2)
    x = L.AveragePooling2D(pool_size=8)(x)
    x = L.Flatten()(x)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(10)(x)))


def autoencoder():
    """MLPerf Tiny's anomaly-detection dense autoencoder (640 inputs, 128-wide, 8-wide bottleneck)."""
    x = inp = tf.keras.Input((640,))
    for width in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = L.Activation("relu")(L.BatchNormalization()(L.Dense(width)(x)))
    return tf.keras.Model(inp, L.Dense(640)(x))


def mobilenet_v1_025_96():
    """MobileNet v1 0.25 at 96x96x3 with 2 classes (MLPerf Tiny's visual wake words shape), Keras'
    own definition: ZeroPadding2D before each stride-2 depth wise convolution, ReLU6, a 1x1
    convolution classifier, Reshape and softmax."""
    return tf.keras.applications.MobileNet(input_shape=(96, 96, 3), alpha=0.25, weights=None, classes=2,
                                           dropout=0.0)


def mobilenet_v2_035_96():
    """MobileNet v2 alpha 0.35 at 96x96x3 with 2 classes, Keras' own definition: inverted residuals
    (1x1 expand, 3x3 depth wise, 1x1 project, ADD when the shape is kept), ReLU6, ZeroPadding2D before
    each stride-2 depth wise convolution, global average pooling, Dense and softmax (issue 26's
    fused-layer target)."""
    return tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=2)


def seq(shape, layers: Sequence[Callable]) -> tf.keras.Model:
    x = inp = tf.keras.Input(shape)
    for layer in layers:
        x = layer(x)
    return tf.keras.Model(inp, x)


def pad_conv_same():
    """ZeroPadding2D ((0, 1), (0, 1)) + 3x3 stride 2 VALID, as MobileNet: equal to TFLite's SAME pads, which
    TensorFlow 2.21's converter sees: it folds the PAD into a SAME convolution (no PAD operator left)."""
    return seq((10, 12, 3), [L.ZeroPadding2D(((0, 1), (0, 1))), L.Conv2D(8, 3, strides=2, padding="valid"),
                             L.ReLU(), L.Conv2D(4, 1)])


def pad_conv_sym():
    """ZeroPadding2D 1 on every side + 3x3 stride 2 VALID (ResNet's stem style): not TFLite's SAME pads
    for this input (SAME would put (0, 1)), so PAD stays an operator of its own."""
    return seq((10, 12, 3), [L.ZeroPadding2D(1), L.Conv2D(8, 3, strides=2, padding="valid"), L.ReLU(),
                             L.Conv2D(4, 1)])


def reshape_dynamic():
    """Conv, MaxPool, Flatten, Dense converted with a dynamic batch: Keras' Flatten computes its shape
    at run time (SHAPE, STRIDED_SLICE, PACK feeding RESHAPE)."""
    return seq((8, 8, 3), [L.Conv2D(6, 3, padding="same", activation="relu"), L.MaxPooling2D(2), L.Flatten(),
                           L.Dense(10), L.Softmax()])


class Squeeze(L.Layer):
    def call(self, x):
        return tf.squeeze(x, axis=[1, 2])


def squeeze_net():
    """Conv, global average pooling keeping dims, squeeze of H and W, softmax. TensorFlow 2.21's converter
    writes the squeeze as a RESHAPE: :func:`reshape_to_squeeze` makes it the SQUEEZE other converters
    (and older TensorFlow) write."""
    return seq((7, 9, 4), [L.Conv2D(8, 3, padding="same", activation="relu"),
                           L.GlobalAveragePooling2D(keepdims=True), Squeeze(), L.Softmax()])


def load(buf: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))


def pack(model) -> bytes:
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def reshape_to_squeeze(buf: bytes, dims: Sequence[int]) -> bytes:
    """Every RESHAPE of ``buf`` rewritten as SQUEEZE of ``dims`` (schema object API): same bytes out."""
    m = load(buf)
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.SQUEEZE
    code.version = 1
    m.operatorCodes.append(code)
    for op in m.subgraphs[0].operators:
        if ops_name(m, op) == "RESHAPE":
            op.opcodeIndex = len(m.operatorCodes) - 1
            op.inputs = op.inputs[:1]
            opts = schema.SqueezeOptionsT()
            opts.squeezeDims = list(dims)
            op.builtinOptionsType = schema.BuiltinOptions.SqueezeOptions
            op.builtinOptions = opts
    return pack(m)


def ops_name(m, op) -> str:
    code = m.operatorCodes[op.opcodeIndex]
    return OPS[max(code.builtinCode, code.deprecatedBuiltinCode)]


def concat_branches():
    """An inception-like block: 1x1, 3x3 and 3x3-dw+1x1 branches concatenated on channels, then a 1x1."""
    x = inp = tf.keras.Input((9, 11, 4))
    a = L.Conv2D(4, 1, activation="relu")(x)
    b = L.Conv2D(6, 3, padding="same", activation="relu")(x)
    c = L.Conv2D(3, 1)(L.DepthwiseConv2D(3, padding="same", activation="relu")(x))
    y = L.Concatenate(axis=-1)([a, b, c])
    return tf.keras.Model(inp, L.Conv2D(5, 1)(y))


def mean_net():
    """Conv, GlobalAveragePooling2D (MEAN over H and W), Dense, softmax."""
    return seq((11, 7, 3), [L.Conv2D(12, 3, padding="same", activation="relu"), L.GlobalAveragePooling2D(),
                            L.Dense(6), L.Softmax()])


def fused_activations():
    """Fused activations of every kind the converter fuses: conv ReLU, depth wise ReLU6, conv clipped to
    [-1, 1] (RELU_N1_TO_1), ADD + ReLU, Dense + ReLU."""
    x = inp = tf.keras.Input((8, 10, 4))
    a = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    b = L.DepthwiseConv2D(3, padding="same", activation=tf.nn.relu6)(a)
    c = L.Lambda(lambda t: tf.clip_by_value(t, -1.0, 1.0))(L.Conv2D(8, 1)(b))
    d = L.Activation("relu")(L.Add()([a, c]))
    e = L.MaxPooling2D(2)(d)
    f = L.Flatten()(e)
    return tf.keras.Model(inp, L.Dense(7, activation="relu")(f))


def activations_mix():
    """LEAKY_RELU, HARD_SWISH, LOGISTIC (squeeze-excite gate: MUL broadcast over channels), SUB, TANH
    inside one network."""
    x = inp = tf.keras.Input((7, 9, 6))
    a = L.LeakyReLU(negative_slope=0.1)(L.Conv2D(8, 3, padding="same")(x))
    b = L.Activation("hard_swish")(L.Conv2D(8, 1)(a))
    g = L.Activation("sigmoid")(L.Dense(8)(L.GlobalAveragePooling2D(keepdims=True)(b)))
    c = L.Multiply()([b, g])
    d = L.Subtract()([c, a])
    return tf.keras.Model(inp, L.Activation("tanh")(L.Conv2D(4, 1)(d)))


def float_interface():
    """A small conv net converted with a float32 interface: QUANTIZE at the input, DEQUANTIZE at the output."""
    return seq((8, 8, 2), [L.Conv2D(6, 3, padding="same", activation="relu"), L.AveragePooling2D(2),
                           L.Flatten(), L.Dense(4)])


def int16_activations():
    """The 16x8 scheme (int16 activations, int8 weights): the importer imports or refuses it by name."""
    return seq((6, 6, 2), [L.Conv2D(4, 3, padding="same", activation="relu"), L.Flatten(), L.Dense(3)])


def patch_stage_128():
    """A MobileNet v1-like stage at 128x128x3 with narrow channels (issue 26's "fits L2 only fused"):
    the activations (64x64x24 = 96 KB at the widest) dominate its L2 need, every weight tensor is at
    most 1.5 KB. Conv 3x3 s2 to 64x64x16, dw 3x3, 1x1 to 24, dw s2, 1x1 to 32, dw s2, 1x1 to 48 (each
    with a batch norm and ReLU6), global average pooling, Dense 2, softmax. The 16x16x48 features are a
    second output: on random inputs the pooled softmax hardly moves (about [17, -17] whatever the
    input), so a check of it alone would say little about the convolutions."""
    def unit(x, layer):
        return L.ReLU(6.0)(L.BatchNormalization()(layer(x)))
    x = inp = tf.keras.Input((128, 128, 3))
    x = unit(x, L.Conv2D(16, 3, strides=2, padding="same", use_bias=False))
    for filters, strides in ((24, 1), (32, 2), (48, 2)):
        x = unit(x, L.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False))
        x = unit(x, L.Conv2D(filters, 1, use_bias=False))
    return tf.keras.Model(inp, [L.Softmax()(L.Dense(2)(L.GlobalAveragePooling2D()(x))), x])


# ---- main -----------------------------------------------------------------------------------------


def build(fn, seed: int, last_gain: float = 0.3):
    tf.keras.utils.set_random_seed(seed)
    model = fn()
    randomise(model, seed, last_gain)
    return model


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="build only this model (repeatable); default: every model")
    only = parser.parse_args(argv).only
    nets: Dict[str, Tuple] = {}

    def shapes_of(model) -> List[Tuple[int, ...]]:
        return [tuple(int(d) for d in t.shape[1:]) for t in model.inputs]

    def add(name, fn, seed, note, *, expect=(), float_too=True, lo=-1.0, hi=1.0, **kw):
        if only and name not in only:
            return
        model = build(fn, seed)
        shapes = shapes_of(model)
        both(name, model, shapes, calibration(shapes, seed, lo, hi), note, expect=expect, float_too=float_too,
             **kw)
        nets[name] = model

    add("ds_cnn_kws", ds_cnn, 11, "MLPerf Tiny keyword spotting DS-CNN, 49x10x1 -> 12, 64 channels",
        expect=["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"], lo=-2.0, hi=2.0)
    add("mobilenet_v1_025_96", mobilenet_v1_025_96, 12,
        "Keras MobileNet v1 alpha 0.25, 96x96x3 -> 2 (MLPerf Tiny VWW shape), random weights",
        expect=["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "RESHAPE", "SOFTMAX"], float_too=False)
    add("resnet8", resnet8, 13, "MLPerf Tiny image classification ResNet-8, 32x32x3 -> 10, residual ADDs",
        expect=["CONV_2D", "ADD", "AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"], float_too=False)
    add("autoencoder", autoencoder, 14, "MLPerf Tiny anomaly detection dense autoencoder, 640 -> 640",
        expect=["FULLY_CONNECTED"], float_too=False, lo=-3.0, hi=3.0)
    add("pad_conv_same", pad_conv_same, 21, "ZeroPadding2D (0,1) + 3x3 s2 VALID conv (= SAME pads): the "
        "converter folds the PAD into a SAME convolution", expect=["CONV_2D"])
    add("pad_conv_sym", pad_conv_sym, 22, "ZeroPadding2D 1 + 3x3 s2 VALID conv (not SAME pads)",
        expect=["PAD", "CONV_2D"])
    add("reshape_dynamic", reshape_dynamic, 23, "Flatten with a dynamic batch: SHAPE/STRIDED_SLICE/PACK -> RESHAPE",
        expect=["SHAPE", "STRIDED_SLICE", "PACK", "RESHAPE"], batch=None)
    add("squeeze", squeeze_net, 24, "global average pooling keeping dims, SQUEEZE, softmax", expect=["SQUEEZE"],
        rewrite=lambda buf: reshape_to_squeeze(buf, [1, 2]))
    add("concat_branches", concat_branches, 25, "three conv branches concatenated on channels",
        expect=["CONCATENATION"])
    add("mean", mean_net, 26, "GlobalAveragePooling2D as MEAN, Dense, softmax", expect=["MEAN", "SOFTMAX"])
    add("fused_activations", fused_activations, 27, "fused ReLU, ReLU6, RELU_N1_TO_1, ADD+ReLU, Dense+ReLU",
        expect=["ADD", "MAX_POOL_2D"])
    add("activations_mix", activations_mix, 28, "LEAKY_RELU, HARD_SWISH, LOGISTIC, MUL (SE gate), SUB, TANH",
        expect=["LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "MUL", "SUB", "TANH"])
    add("float_interface", float_interface, 29, "int8 inside, float32 interface: QUANTIZE in, DEQUANTIZE out",
        expect=["QUANTIZE", "DEQUANTIZE"], float_io=True)
    add("int16_activations", int16_activations, 30, "16x8 quantisation (int16 activations, int8 weights)",
        float_too=False, int16=True)
    add("mobilenet_v2_035_96", mobilenet_v2_035_96, 31,
        "Keras MobileNet v2 alpha 0.35, 96x96x3 -> 2 (inverted residuals), random weights",
        expect=["CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED", "SOFTMAX"], float_too=False)
    add("patch_stage_128", patch_stage_128, 32,
        "activation-heavy MobileNet-like stage, 128x128x3 -> 2 and its 16x16x48 features, weights <= 1.5 KB each "
        "(fits L2 only fused)",
        expect=["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"], float_too=False)
    unknown = sorted(set(only or ()) - set(nets))
    if unknown:
        raise SystemExit(f"--only: no model named {unknown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
