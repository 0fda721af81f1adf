"""Float inference of the guide's MNIST network in numpy (the float reference the demo prints).

It reproduces ``train.py``'s PyTorch model: conv 5x5 (1->32, valid) -> max pool 2x2/2 -> ReLU
-> conv 5x5 (32->64, valid) -> max pool 2x2/2 -> ReLU -> linear 1024->10 (input flattened in CHW
order) [-> softmax]. ``model/float_weights.npz`` holds the weights: ``conv1_w`` [32, 1, 5, 5],
``conv1_b`` [32], ``conv2_w`` [64, 32, 5, 5], ``conv2_b`` [64], ``fc_w`` [10, 1024], ``fc_b`` [10].
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
FLOAT_WEIGHTS = HERE / "model" / "float_weights.npz"
NAMES = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc_w", "fc_b")


def load_float_weights(path: Optional[Path] = None) -> dict:
    with np.load(FLOAT_WEIGHTS if path is None else path) as f:
        return {k: f[k] for k in NAMES}


def conv2d_valid(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x [N, C, H, W], w [F, C, K, K], b [F] -> [N, F, H-K+1, W-K+1] (cross-correlation, stride 1)."""
    k = w.shape[-1]
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))  # [N, C, Ho, Wo, K, K]
    out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # [N, Ho, Wo, F]
    return out.transpose(0, 3, 1, 2) + b[None, :, None, None]


def maxpool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def float_forward(weights: Mapping[str, np.ndarray], images: np.ndarray) -> np.ndarray:
    """Logits [N, 10] (float64) of float images [N, 28, 28] or [N, 1, 28, 28] in [0, 1]."""
    x = np.asarray(images, dtype=np.float64)
    if x.ndim == 3:
        x = x[:, None]
    w = {k: np.asarray(weights[k], dtype=np.float64) for k in NAMES}
    x = np.maximum(maxpool2(conv2d_valid(x, w["conv1_w"], w["conv1_b"])), 0.0)
    x = np.maximum(maxpool2(conv2d_valid(x, w["conv2_w"], w["conv2_b"])), 0.0)
    return x.reshape(x.shape[0], -1) @ w["fc_w"].T + w["fc_b"]


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
