"""MNIST-like digits for the guide's MNIST network (numpy only: the demo imports this at run time).

The images are scikit-learn's 8x8 handwritten digits (``load_digits``: values 0..16), each
upscaled bilinearly to 20x20, centred in 28x28 with a 4-pixel margin (as MNIST centres its
20x20 digit boxes) and scaled to [0, 1]. The network's input is int16 Q12 (1.0 == 4096).

``data/heldout.npz`` holds the held-out 8x8 digits (``digits``: uint8 [N, 8, 8], 0..16) and their
labels (``labels``: uint8 [N]), written by ``train.py``; none of them was trained on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
HELDOUT = HERE / "data" / "heldout.npz"

IMAGE = 28  # MNIST image side
BOX = 20  # side of the digit box (MNIST: digits fit a 20x20 box centred in 28x28)
MARGIN = (IMAGE - BOX) // 2  # 4 pixels all round
INPUT_Q = 12  # the network's input is Q12
DIGIT_MAX = 16  # load_digits values are 0..16


def _bilinear_matrix(src: int, dst: int) -> np.ndarray:
    """[dst, src] interpolation matrix of a 1-D bilinear resize, half-pixel centres, edge clamped
    (as PIL / OpenCV / torch ``align_corners=False`` resize without antialiasing)."""
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5
    pos = np.clip(pos, 0.0, src - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, src - 1)
    frac = pos - lo
    m = np.zeros((dst, src), dtype=np.float64)
    m[np.arange(dst), lo] += 1.0 - frac
    m[np.arange(dst), hi] += frac
    return m


def digits_to_images(digits: np.ndarray) -> np.ndarray:
    """8x8 digits (0..16, shape [..., 8, 8] or [..., 64]) -> float32 28x28 images in [0, 1],
    shape [..., 28, 28]: bilinear upscale to 20x20, centred with a 4-pixel margin. Deterministic."""
    d = np.asarray(digits, dtype=np.float64)
    if d.shape[-1] == 64 and (d.ndim == 1 or d.shape[-2:] != (8, 8)):
        d = d.reshape(d.shape[:-1] + (8, 8))
    if d.shape[-2:] != (8, 8):
        raise ValueError(f"expected 8x8 digits, got shape {d.shape}")
    m = _bilinear_matrix(8, BOX)
    box = np.einsum("ij,...jk,lk->...il", m, d, m) / DIGIT_MAX
    out = np.zeros(d.shape[:-2] + (IMAGE, IMAGE), dtype=np.float64)
    out[..., MARGIN:MARGIN + BOX, MARGIN:MARGIN + BOX] = np.clip(box, 0.0, 1.0)
    return out.astype(np.float32)


def to_fixed(x: np.ndarray, q: int = INPUT_Q) -> np.ndarray:
    """Float -> int16 Qq: round to nearest (ties to even), saturate to [-32768, 32767]."""
    v = np.rint(np.asarray(x, dtype=np.float64) * (1 << q))
    return np.clip(v, -32768, 32767).astype(np.int16)


def images_to_q12(images: np.ndarray) -> np.ndarray:
    """Float images -> the model's int16 Q12 input (same shape)."""
    return to_fixed(images, INPUT_Q)


def load_heldout(path: Optional[Path] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The held-out set: (digits uint8 [N, 8, 8] 0..16, labels uint8 [N])."""
    with np.load(HELDOUT if path is None else path) as f:
        return f["digits"], f["labels"]


def heldout_inputs(path: Optional[Path] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The held-out set as the network sees it: (int16 Q12 inputs [N, 1, 28, 28] in CHW, labels)."""
    digits, labels = load_heldout(path)
    return images_to_q12(digits_to_images(digits))[:, None], labels
