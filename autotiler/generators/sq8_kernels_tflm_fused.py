"""The SQ8 basic kernels of a fused chain's line-buffer (KEEP) mode (:mod:`.sq8_gen_tflm_fused`):
``SOURCES`` (in ``cnn_kernels/``) and ``load()``, which declares their struct (``LibKernelTemplate``)
and kernels (``LibKernel`` with their ``Cost=``) in the current model. Called by
``LoadCNN_SQ8_Library()``. C declaration and semantics: ``CNN_SQ8_TFLM_Conv.h``.

* ``KerParConvKeep_TFLM_SQ8``, ``KerParConvDWKeep_TFLM_SQ8`` (``KerConvKeep_TFLM_SQ8_T``: the
  convolution's fields, then ``KeepOut``, ``KeepIn``, ``TileIndex``, ``TileLast``): the
  convolution (``KerParConv_TFLM_SQ8`` / ``KerParConvDW_TFLM_SQ8``, called on every core) of the
  output lines a tile does not hold yet (all in the first tile, all but the first ``KeepOut``
  after it), then, unless the tile is the last, the last ``KeepIn`` lines of its input moved to
  the front of the input's buffer, where the next tile expects them.

Cost: the convolution's ``Cost=`` (:mod:`.sq8_kernels_tflm_conv`) with ``Ho`` and ``H`` the lines
computed, plus the move (:data:`autotiler.platforms.KEEP_MOVE_COST`, an assumption: a word per
cycle, shared by the cores when the ranges are disjoint, 20 cycles of call and barrier). On
pulp_open the platform's entries rewrite its fitted convolution costs the same way.
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL
from ..platforms import fused_keep_cost
from .cnn_library import CNN_KERNELS_DIR
from .sq8_kernels_tflm_conv import CONV_COST, CONV_FIELDS, CONVDW_COST

SOURCES = [CNN_KERNELS_DIR / "CNN_SQ8_Fused.c"]
KEEP_FIELDS = [*CONV_FIELDS, *[("unsigned short int", n) for n in ("KeepOut", "KeepIn", "TileIndex")],
               ("unsigned char", "TileLast")]
KEEP_KERNELS = {"KerParConv_TFLM_SQ8": "KerParConvKeep_TFLM_SQ8",
                "KerParConvDW_TFLM_SQ8": "KerParConvDWKeep_TFLM_SQ8"}


def load() -> None:
    """Declare the struct and the kernels."""
    LibKernelTemplate("KerConvKeep_TFLM_SQ8_T", CArgs(len(KEEP_FIELDS), *[TCArg(t, n) for t, n in KEEP_FIELDS]))
    LibKernel("KerParConvKeep_TFLM_SQ8", CALL_PARALLEL, 0, "KerConvKeep_TFLM_SQ8_T", Cost=fused_keep_cost(CONV_COST))
    LibKernel("KerParConvDWKeep_TFLM_SQ8", CALL_PARALLEL, 0, "KerConvKeep_TFLM_SQ8_T",
              Cost=fused_keep_cost(CONVDW_COST))
