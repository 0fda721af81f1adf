"""Build the single-operator int8 TFLite models tests/test_sq8_tflm.py checks the SQ8 reference against.

Run by hand, never by the tests (TensorFlow is not a dependency of autotiler)::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow numpy
    /tmp/tfvenv/bin/python tests/models/make_sq8_models.py          # writes tests/models/sq8/
    /tmp/tfvenv/bin/python tests/models/make_sq8_models.py --new    # only the models not there yet

Every model is converted with TensorFlow's converter, full-integer quantisation from a representative
dataset, int8 input and output, and holds exactly one operator (checked). QUANTIZE int8 -> int8 cannot
come out of the converter alone: its models are the converted LOGISTIC model with the operator
rewritten to QUANTIZE and new output quantisation (schema object API). For each model ``<name>.tflite``
a ``<name>.json`` sidecar gives what the tests need to call ``autotiler.generators.sq8_tflm`` without
parsing the flatbuffer: the operator, its options, tensor shapes, scales, zero points, and the
constant tensors (weights, bias) as lists. Sizes are odd on purpose (7x9x5 ...), the representative
ranges asymmetric, tiny or large, so that zero points and multipliers cover extreme cases.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema

OUT = Path(__file__).resolve().parent / "sq8"
OPS = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
ACT = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6"}
PAD = {0: "SAME", 1: "VALID"}


def convert_fn(fn, shapes, ranges, seed=0, count=64, per_tensor_dense=False) -> bytes:
    """Convert ``fn`` (tf ops or Keras layers called on tensors) with int8 in/out, full-integer quantisation,
    a representative dataset uniform in ``ranges[i]`` for input ``i``."""
    rng = np.random.default_rng(seed)
    sig = [tf.TensorSpec((1,) + tuple(s), tf.float32) for s in shapes]
    module = tf.Module()
    module.f = tf.function(fn, input_signature=sig)
    cf = module.f.get_concrete_function()

    def gen():
        for _ in range(count):
            yield [rng.uniform(lo, hi, size=(1,) + tuple(s)).astype(np.float32) for s, (lo, hi) in zip(shapes, ranges)]
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], module)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = gen
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    conv._experimental_disable_per_channel_quantization_for_dense_layers = per_tensor_dense
    return conv.convert()


def convert(layer, shape, lo, hi) -> bytes:
    return convert_fn(lambda x: layer(x), [shape], [(lo, hi)])


def load(buf: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(buf, 0))


def pack(model) -> bytes:
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def opname(model, op) -> str:
    code = model.operatorCodes[op.opcodeIndex]
    return OPS[max(code.builtinCode, code.deprecatedBuiltinCode)]


def tensor_info(model, idx: int) -> dict:
    t = model.subgraphs[0].tensors[idx]
    q = t.quantization
    info = {"shape": [int(v) for v in t.shape], "type": int(t.type)}
    if q is not None and q.scale is not None:
        info["scales"] = [float(v) for v in q.scale]
        info["zero_points"] = [int(v) for v in q.zeroPoint]
        info["quantized_dimension"] = int(q.quantizedDimension)
    buf = model.buffers[t.buffer].data
    if buf is not None and len(buf):
        dtype = {9: np.int8, 2: np.int32}.get(int(t.type))
        if dtype is not None:
            info["data"] = np.frombuffer(bytes(np.asarray(buf, dtype=np.uint8)), dtype=dtype).tolist()
    return info


def options(model, op) -> dict:
    o = op.builtinOptions
    if o is None:
        return {}
    out = {}
    for key, val in vars(o).items():
        if isinstance(val, (int, float, bool)):
            out[key] = val
    if "padding" in out:
        out["padding"] = PAD[out["padding"]]
    if "fusedActivationFunction" in out:
        out["fusedActivationFunction"] = ACT[out["fusedActivationFunction"]]
    return out


def requantized(buf: bytes, params) -> bytes:
    """The single-operator model ``buf`` with the (scale, zero point) of its inputs then outputs replaced."""
    m = load(buf)
    sg = m.subgraphs[0]
    op = sg.operators[0]
    for t, (scale, zp) in zip(list(op.inputs) + list(op.outputs), params):
        sg.tensors[t].quantization.scale = [scale]
        sg.tensors[t].quantization.zeroPoint = [zp]
    return pack(m)


NEW_ONLY = "--new" in sys.argv[1:]


def write(name: str, buf: bytes, note: str) -> None:
    if NEW_ONLY and (OUT / f"{name}.tflite").exists():
        return
    model = load(buf)
    sg = model.subgraphs[0]
    if len(sg.operators) != 1:
        names = [opname(model, op) for op in sg.operators]
        raise SystemExit(f"{name}: expected one operator, got {names}")
    op = sg.operators[0]
    side = {
        "name": name, "note": note, "op": opname(model, op), "options": options(model, op),
        "inputs": [tensor_info(model, int(i)) if i >= 0 else None for i in op.inputs],
        "outputs": [tensor_info(model, int(i)) for i in op.outputs],
        "graph_inputs": [int(i) for i in sg.inputs], "op_inputs": [int(i) for i in op.inputs],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.tflite").write_bytes(buf)
    (OUT / f"{name}.json").write_text(json.dumps(side, indent=1) + "\n")
    print(f"{name:28s} {side['op']:20s} {len(buf):6d} B  {note}")


def main() -> int:
    tf.random.set_seed(1)
    L = tf.keras.layers
    init = tf.keras.initializers.RandomUniform(-1.0, 1.0, seed=3)
    binit = tf.keras.initializers.RandomUniform(-0.5, 0.5, seed=4)

    def conv(name, shape, lo, hi, note, **kw):
        write(name, convert(L.Conv2D(kernel_initializer=init, bias_initializer=binit, **kw), shape, lo, hi), note)

    conv("conv_3x3_same", (7, 9, 5), -1.0, 1.0, "3x3 s1 SAME 5->6", filters=6, kernel_size=3, padding="same")
    conv("conv_3x3_s2_same_asym", (7, 9, 5), -0.3, 2.0, "3x3 s2 SAME, asymmetric input",
         filters=4, kernel_size=3, strides=2, padding="same")
    conv("conv_5x3_s2_valid_relu", (9, 7, 3), -2.0, 1.0, "5x3 s2 VALID ReLU", filters=5,
         kernel_size=(5, 3), strides=2, padding="valid", activation="relu")
    conv("conv_3x3_dil2_same_relu6", (9, 11, 4), -4.0, 4.0, "3x3 dilation 2 SAME ReLU6", filters=3,
         kernel_size=3, dilation_rate=2, padding="same", activation=tf.nn.relu6)
    conv("conv_1x1_tiny", (5, 7, 8), -0.01, 0.012, "1x1, tiny input range", filters=7, kernel_size=1)
    conv("conv_2x2_s2_same_large", (8, 9, 3), -900.0, 1100.0, "2x2 s2 SAME, large input range",
         filters=3, kernel_size=2, strides=2, padding="same")

    conv("conv_3x3_groups2_s2_same", (7, 9, 6), -1.0, 2.0, "3x3 s2 SAME, 2 groups of 3 channels", filters=4,
         kernel_size=3, strides=2, padding="same", groups=2)
    conv("conv_3x3_32ch_valid", (6, 5, 32), -3.0, 3.0, "3x3 VALID, 32 -> 8 (288-term sums)", filters=8,
         kernel_size=3, padding="valid")
    c5 = L.Conv2D(5, 3, padding="same", kernel_initializer=init, bias_initializer=binit)
    write("conv_3x3_relu_n1_to_1", convert_fn(lambda x: tf.clip_by_value(c5(x), -1.0, 1.0), [(7, 9, 5)],
                                              [(-1.0, 1.0)]), "3x3 SAME, fused RELU_N1_TO_1")

    # An output scale for which 6 / s rounds differently in float32 (162.5 -> 163) and double (162.49999 -> 162):
    # the fused-activation range of CalculateActivationRangeQuantized is computed in float32.
    m = load(convert(L.Conv2D(3, 3, padding="same", activation=tf.nn.relu6, kernel_initializer=init,
                              bias_initializer=binit), (9, 11, 4), -4.0, 4.0))
    out_t = m.subgraphs[0].tensors[m.subgraphs[0].operators[0].outputs[0]]
    out_t.quantization.scale = [0.03692307695746422]
    out_t.quantization.zeroPoint = [-128]
    write("conv_relu6_range_prepare", pack(m), "ReLU6 bound q(6) = -128 + round(6 / s) in float32 (35, not 34)")

    def dw(name, shape, lo, hi, note, **kw):
        write(name, convert(L.DepthwiseConv2D(depthwise_initializer=init, bias_initializer=binit, **kw), shape, lo, hi), note)

    dw("dw_3x3_same", (7, 9, 5), -1.0, 1.0, "3x3 s1 SAME", kernel_size=3, padding="same")
    dw("dw_3x3_s2_same_m2_asym", (7, 9, 3), -0.5, 3.0, "3x3 s2 SAME depth multiplier 2, asymmetric",
       kernel_size=3, strides=2, padding="same", depth_multiplier=2)
    dw("dw_3x3_dil2_valid_relu", (9, 11, 4), -1.0, 1.0, "3x3 dilation 2 VALID ReLU", kernel_size=3,
       dilation_rate=2, padding="valid", activation="relu")
    dw("dw_5x5_s2_same_relu6", (11, 9, 6), -6.0, 6.0, "5x5 s2 SAME ReLU6", kernel_size=5, strides=2,
       padding="same", activation=tf.nn.relu6)

    def fc(name, n_in, n_out, lo, hi, note, **kw):
        write(name, convert(L.Dense(n_out, kernel_initializer=init, bias_initializer=binit, **kw), (n_in,), lo, hi), note)

    fc("fc_45_10", 45, 10, -1.0, 1.0, "45 -> 10")
    fc("fc_63_7_relu_asym", 63, 7, -0.2, 3.0, "63 -> 7 ReLU, asymmetric", activation="relu")
    d10 = L.Dense(10, kernel_initializer=init, bias_initializer=binit)
    write("fc_45_10_per_tensor", convert_fn(lambda x: d10(x), [(45,)], [(-1.5, 1.0)], per_tensor_dense=True),
          "45 -> 10, per-tensor weights")
    fc("fc_20_9_tiny", 20, 9, -0.001, 0.002, "20 -> 9, tiny input range")

    def pool(name, kind, shape, lo, hi, note, **kw):
        layer = L.AveragePooling2D(**kw) if kind == "avg" else L.MaxPooling2D(**kw)
        write(name, convert(layer, shape, lo, hi), note)

    pool("avgpool_3x3_s2_same", "avg", (7, 9, 5), -1.0, 1.0, "3x3 s2 SAME (border windows)", pool_size=3,
         strides=2, padding="same")
    pool("avgpool_2x2_s2_valid_asym", "avg", (8, 9, 3), -0.2, 5.0, "2x2 s2 VALID, asymmetric", pool_size=2,
         strides=2, padding="valid")
    pool("avgpool_5x3_s1_same", "avg", (7, 9, 2), -3.0, 1.0, "5x3 s1 SAME", pool_size=(5, 3), strides=1,
         padding="same")
    pool("maxpool_3x3_s2_same", "max", (7, 9, 5), -1.0, 1.0, "3x3 s2 SAME", pool_size=3, strides=2,
         padding="same")
    pool("maxpool_2x2_s2_valid_asym", "max", (8, 9, 3), -0.2, 5.0, "2x2 s2 VALID, asymmetric", pool_size=2,
         strides=2, padding="valid")

    def binary2(name, fn, s1, s2, r1, r2, note):
        write(name, convert_fn(fn, [s1, s2], [r1, r2], seed=5), note)

    binary2("add_7x9x5", lambda a, b: a + b, (7, 9, 5), (7, 9, 5), (-1, 1), (-3, 2), "different input scales")
    binary2("add_relu_asym", lambda a, b: tf.nn.relu(a + b), (5, 3, 4), (5, 3, 4), (-0.1, 2.0), (-4.0, 0.5),
            "asymmetric, fused ReLU")
    binary2("add_large_tiny", lambda a, b: a + b, (3, 5, 7), (3, 5, 7), (-500, 700), (-0.01, 0.02),
            "one large, one tiny input range")
    binary2("add_broadcast_c", lambda a, b: a + b, (5, 7, 6), (1, 1, 6), (-1, 1), (-2, 0.5),
            "broadcast of a per-channel vector")
    binary2("sub_7x9x5", lambda a, b: a - b, (7, 9, 5), (7, 9, 5), (-1, 1), (-0.2, 3), "different scales")
    binary2("mul_7x9x5", lambda a, b: a * b, (7, 9, 5), (7, 9, 5), (-1, 1), (-0.2, 3), "different scales")
    binary2("mul_broadcast_c_relu", lambda a, b: tf.nn.relu(a * b), (5, 7, 6), (1, 1, 6), (-1, 2), (0, 1),
            "per-channel scaling (squeeze-excitation), fused ReLU")
    binary2("mul_large", lambda a, b: a * b, (3, 5, 7), (3, 5, 7), (-50, 70), (-20, 10), "large ranges")

    # Every int8 pair once, with scales for which ADD/SUB's Prepare in float32 and in double give different
    # multipliers (and 2 of the 65536 outputs differ): pins down which precision TFLM uses.
    for name, fn, note in (("add_all_pairs_prepare", lambda a, b: a + b, "all 65536 int8 pairs, Prepare-sensitive"),
                           ("sub_all_pairs_prepare", lambda a, b: a - b, "all 65536 int8 pairs, Prepare-sensitive")):
        buf = convert_fn(fn, [(65536,), (65536,)], [(-1, 1), (-1, 1)], seed=5)
        write(name, requantized(buf, ((0.029278486967086792, 3), (0.8499374389648438, -7), (0.2123604118824005, 1))),
              note)

    buf = convert_fn(lambda a, b: a * b, [(65536,), (65536,)], [(-1, 1), (-1, 1)], seed=5)
    write("mul_all_pairs_prepare", requantized(buf, ((0.06579256802797318, 0), (0.008816743269562721, 0),
                                                     (0.09196952730417252, 0))),
          "all 65536 int8 pairs; s1 * s2 in float32 would change 8 outputs")

    def unary(name, fn, shape, lo, hi, note):
        write(name, convert_fn(fn, [shape], [(lo, hi)]), note)

    unary("softmax_10", tf.nn.softmax, (10,), -4.0, 4.0, "10 classes")
    unary("softmax_3x37_wide", tf.nn.softmax, (3, 37), -30.0, 20.0, "3 rows of 37, wide input range")
    unary("softmax_16_tiny", tf.nn.softmax, (16,), -0.05, 0.05, "tiny input range")
    m = load(convert_fn(tf.nn.softmax, [(3, 37)], [(-8.0, 5.0)]))
    m.subgraphs[0].operators[0].builtinOptions.beta = 0.7
    write("softmax_beta_0_7", pack(m), "beta 0.7 (option rewritten)")
    unary("mean_7x9x5", lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True), (7, 9, 5), -1.0, 3.0,
          "over H, W, keep dims")
    unary("mean_5x3x4_asym", lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True), (5, 3, 4), -0.1, 6.0,
          "asymmetric")
    m = load(convert_fn(lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True), [(7, 9, 5)], [(-1.0, 3.0)]))
    sg = m.subgraphs[0]
    t_in, t_out = sg.tensors[sg.operators[0].inputs[0]], sg.tensors[sg.operators[0].outputs[0]]
    t_out.quantization.scale, t_out.quantization.zeroPoint = list(t_in.quantization.scale), [-64]
    t_in.quantization.zeroPoint = [-64]
    write("mean_equal_quantisation", pack(m), "input and output quantisation equal: reference_ops::Mean")
    unary("logistic_7x9x5", tf.sigmoid, (7, 9, 5), -8.0, 8.0, "")
    unary("logistic_asym_tiny", tf.sigmoid, (3, 5, 7), -0.02, 0.05, "tiny, asymmetric")
    unary("logistic_large", tf.sigmoid, (3, 5, 7), -200.0, 150.0, "large range")
    unary("tanh_7x9x5", tf.tanh, (7, 9, 5), -4.0, 4.0, "")
    unary("tanh_asym", tf.tanh, (3, 5, 7), -0.5, 2.5, "asymmetric")
    unary("hard_swish_7x9x5", lambda x: x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), (7, 9, 5), -5.0, 5.0, "")
    unary("hard_swish_asym", lambda x: x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), (3, 5, 7), -1.0, 8.0,
          "asymmetric")
    unary("leaky_relu_7x9x5", lambda x: tf.nn.leaky_relu(x, alpha=0.2), (7, 9, 5), -2.0, 2.0, "alpha 0.2")
    unary("leaky_relu_asym", lambda x: tf.nn.leaky_relu(x, alpha=0.01), (3, 5, 7), -0.3, 5.0,
          "alpha 0.01, asymmetric")

    # Scales for which a float32 and a double Prepare give different outputs on some of the 256 inputs
    write("leaky_relu_prepare", requantized(convert_fn(lambda x: tf.nn.leaky_relu(x, alpha=0.2), [(7, 9, 5)],
                                                       [(-2.0, 2.0)]),
                                            ((0.007265937514603138, -1), (0.012867920100688934, -86))),
          "Prepare-sensitive scales (float32 vs double)")
    write("hard_swish_prepare", requantized(convert_fn(lambda x: x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), [(7, 9, 5)],
                                                       [(-5.0, 5.0)]),
                                            ((0.004269654396921396, -1), (0.003907718230038881, -110))),
          "Prepare-sensitive scales (float32 vs double)")

    # QUANTIZE int8 -> int8: the LOGISTIC model with its operator rewritten
    base = load(convert_fn(tf.sigmoid, [(7, 9, 5)], [(-1.0, 1.0)]))
    for name, scale, zp, note in (("quantize_down", 0.02, 5, "to a coarser scale"),
                                  ("quantize_up", 0.0007, -100, "to a finer scale (saturates)"),
                                  ("quantize_zp_only", None, 77, "same scale, zero point moved")):
        m = load(pack(base))
        sg = m.subgraphs[0]
        op = sg.operators[0]
        code = schema.OperatorCodeT()
        code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.QUANTIZE
        code.version = 1
        m.operatorCodes = [code]
        op.opcodeIndex = 0
        op.builtinOptionsType = schema.BuiltinOptions.QuantizeOptions
        op.builtinOptions = schema.QuantizeOptionsT()
        t_in = sg.tensors[op.inputs[0]]
        t_out = sg.tensors[op.outputs[0]]
        t_out.quantization.scale = [scale if scale is not None else t_in.quantization.scale[0]]
        t_out.quantization.zeroPoint = [zp]
        write(name, pack(m), note)
    ops_models()
    return 0


def ops_models() -> None:
    """RELU, RELU6, REDUCE_MAX, SUM, CONCATENATION, TRANSPOSE (tests/test_sq8_gen_tflm_ops.py)."""
    def unary(name, fn, shape, lo, hi, note):
        write(name, convert_fn(fn, [shape], [(lo, hi)]), note)

    unary("relu_7x9x5", tf.nn.relu, (7, 9, 5), -2.0, 3.0, "standalone RELU (requantises)")
    unary("relu_asym", tf.nn.relu, (3, 5, 7), -0.1, 5.0, "standalone RELU, asymmetric")
    unary("relu6_7x9x5", tf.nn.relu6, (7, 9, 5), -4.0, 8.0, "standalone RELU6 (clamps only)")
    unary("relu6_asym", tf.nn.relu6, (3, 5, 7), -0.5, 3.0, "standalone RELU6, asymmetric")
    unary("reduce_max_7x9x5", lambda x: tf.reduce_max(x, axis=[1, 2], keepdims=True), (7, 9, 5), -1.0, 3.0,
          "over H, W, keep dims")
    unary("sum_5x3x4", lambda x: tf.reduce_sum(x, axis=[1, 2], keepdims=True), (5, 3, 4), -1.0, 2.0,
          "over H, W, keep dims")
    unary("sum_7x9x5_asym", lambda x: tf.reduce_sum(x, axis=[1, 2], keepdims=True), (7, 9, 5), -0.1, 3.0,
          "asymmetric")
    write("concat_3_inputs", convert_fn(lambda a, b, c: tf.concat([a, b, c], axis=3), [(5, 7, 3), (5, 7, 4), (5, 7, 2)],
                                        [(-1.0, 1.0), (-3.0, 2.0), (0.0, 0.5)], seed=5),
          "3 inputs on channels, different ranges")
    write("concat_2_inputs", convert_fn(lambda a, b: tf.concat([a, b], axis=3), [(4, 3, 6), (4, 3, 5)],
                                        [(-2.0, 2.0), (-2.0, 2.0)], seed=6), "2 inputs on channels")
    for name, perm in (("transpose_hwc2chw", [0, 3, 1, 2]), ("transpose_hwc2whc", [0, 2, 1, 3]),
                       ("transpose_hwc2hcw", [0, 1, 3, 2]), ("transpose_hwc2cwh", [0, 3, 2, 1])):
        unary(name, lambda x, p=perm: tf.transpose(x, perm=p), (5, 7, 3), -1.0, 1.0, f"perm {perm}")


if __name__ == "__main__":
    sys.exit(main())
