"""TFLite front end (issue 24): a ``.tflite`` file to an :mod:`.ir` graph. Not written yet."""

from __future__ import annotations

from ..errors import ImportModelError
from .ir import Graph


def read_tflite(path: str, data: bytes) -> Graph:
    """The checked IR graph of the TFLite model ``data`` (read from ``path``, named in errors)."""
    raise ImportModelError("TFLite import is not supported yet", where=path)
