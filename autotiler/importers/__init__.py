"""Importers (issue 24): a trained TFLite or ONNX network in, a model script of the guide's API out.

Front ends give an :mod:`.ir` graph (TFLite's int8 semantics, NHWC); the lowering maps it onto the
SQ8 generators with TensorFlow Lite Micro's requantisation; the script writer prints the model
script, its constant files and its descriptor. They are plain users of the public API.
"""
