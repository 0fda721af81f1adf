"""The importer's fused layers (issue 26 §2): :mod:`autotiler.generators.sq8_fusion` on the lowered graph, its
errors :class:`~autotiler.errors.ImportModelError` naming the command's options."""

from __future__ import annotations

from functools import partial
from typing import Optional, Sequence

from ..errors import ImportModelError
from ..generators import sq8_fusion as S
from ..generators.sq8_fusion import Fusion, peak_l2, replay

MODES = S.MODES


def _fail(message: str, hint: str):
    raise ImportModelError(message, hint=hint)


CONTROLS = S.Controls("--fusion", "--fuse", "--no-fuse", "--L1", _fail)
choose = partial(S.choose, ctl=CONTROLS)


def fuse(lowered, platform: str, l1: int, l2: int, mode: str = "fit", force: Sequence[str] = (),
         forbid: Sequence[str] = (), target: Optional[int] = None) -> tuple:
    """The lowered graph with the fusions chosen (see :mod:`autotiler.generators.sq8_fusion`), and them."""
    return S.fuse(lowered, platform, l1, l2, mode, force, forbid, target, CONTROLS)


__all__ = ["CONTROLS", "Fusion", "MODES", "choose", "fuse", "peak_l2", "replay"]
