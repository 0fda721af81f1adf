"""ONNX front end (issue 24): an ``.onnx`` file to an :mod:`.ir` graph. Not written yet."""

from __future__ import annotations

from ..errors import ImportModelError
from .ir import Graph


def read_onnx(path: str, data: bytes) -> Graph:
    """The checked IR graph of the ONNX model ``data`` (read from ``path``, named in errors)."""
    raise ImportModelError("ONNX import is not supported yet", where=path)
