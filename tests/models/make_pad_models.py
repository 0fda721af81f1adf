"""Build the single-operator int8 PAD models (TFLite's PAD on an int8 tensor) that
tests/test_sq8_gen_tflm_pad.py runs through tflite-micro and ``CNN_Pad_SQ8``.

Run by hand, never by the tests (TensorFlow is not a dependency of autotiler)::

    /tmp/tfvenv/bin/python tests/models/make_pad_models.py        # writes tests/models/sq8/pad_models/

Same conversion and ``.json`` sidecars as make_sq8_models.py (whose helpers this reuses): full-integer
quantisation from a representative dataset with asymmetric ranges (so the zero point, the padded value,
is not 0), one operator per model (checked). The pads are asymmetric, on H and W, one model also on C.
They live in their own folder, out of the ``sq8/*.json`` globs of the tests whose operator tables have no PAD.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tensorflow as tf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_sq8_models  # noqa: E402  (a sibling script, not a package)
from make_sq8_models import convert_fn, write  # noqa: E402

make_sq8_models.OUT = make_sq8_models.OUT / "pad_models"     # write()'s folder

# name, input H x W x C, paddings [[top, bottom], [left, right], [front, back]], input range, note
MODELS = (
    ("pad_5x7x3_hw_asym", (5, 7, 3), [[1, 2], [0, 3]], (-0.5, 3.0), "asymmetric pads on H and W"),
    ("pad_4x3x6_top_only", (4, 3, 6), [[3, 0], [0, 0]], (-3.0, 0.4), "pads on top only, negative zero point"),
    ("pad_3x4x5_hwc", (3, 4, 5), [[2, 1], [1, 2], [1, 3]], (-1.0, 2.0), "pads on H, W and channels"),
    ("pad_6x5x2_w_only", (6, 5, 2), [[0, 0], [5, 4]], (0.1, 6.0), "pads on W only, zero point near -128"),
)


def main() -> int:
    for name, shape, pads, (lo, hi), note in MODELS:
        paddings = [[0, 0]] + [list(p) for p in pads] + [[0, 0]] * (3 - len(pads))
        write(name, convert_fn(lambda x, p=paddings: tf.pad(x, p), [shape], [(lo, hi)]), note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
