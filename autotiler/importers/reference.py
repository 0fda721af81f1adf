"""The numpy reference of an :mod:`.ir` graph (issue 24): every operator by
:mod:`autotiler.generators.sq8_tflm`, so an int8 graph's outputs are TensorFlow Lite Micro's. Not
written yet."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import ImportModelError
from .ir import Graph


def run(graph: Graph, inputs: Mapping[str, np.ndarray]) -> dict:
    """{tensor name: value} of every tensor the graph computes on ``inputs`` (by graph input name)."""
    raise ImportModelError("the IR reference is not written yet", where=graph.source)
