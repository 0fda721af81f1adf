"""Float models (issue 24 §4): quantise an :mod:`.ir` graph with float32 tensors the way TFLite's
converter does, from calibration data. Not written yet."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import ImportModelError
from .ir import Graph


def is_float(graph: Graph) -> bool:
    """The graph computes in float (needs calibration to import)."""
    return any(t.dtype.value == "float32" and not t.is_const for t in graph.tensors.values())


def quantize_graph(graph: Graph, calibration: Mapping[str, np.ndarray]) -> tuple:
    """(int8 graph, per-layer report lines): not written yet."""
    raise ImportModelError("float models are not supported yet", where=graph.source)
