"""Train the guide's MNIST network (``MnistModel``) on scikit-learn's 8x8 digits, made MNIST-like.

Run from the repository root (needs PyTorch and scikit-learn in the venv, see TRAINING.md)::

    .venv/bin/python examples/mnist/train.py

Writes, next to this file:

* ``data/heldout.npz``: the held-out 8x8 digits (uint8 0..16) and labels (uint8);
* ``model/Step{1,2,3}{Weights,Biases}.tensor``: the fixed-point weights as the guide's
  ``ConstInfo("model/StepNWeights.tensor", 1, 1, 16, 0)`` reads them: int16 little-endian, raw,
  in the layer's Q format (conv: weights Q14, biases Q14; linear: weights Q12, biases Q8);
* ``model/float_weights.npz``: the float weights (``float_model.float_forward``).

The network (16-bit fixed point in the guide): input 1x28x28 Q12 -> conv 5x5 1->32 -> max pool
2x2/2 -> ReLU -> conv 5x5 32->64 -> max pool 2x2/2 -> ReLU -> linear 1024->10 (out Q11) ->
softmax. Training is in float, with the weights kept inside their Q formats' ranges and a penalty
on activations beyond the ranges of their Q formats; a few last epochs fine-tune with
fake quantisation (weights, biases, input and every layer output rounded to their Q formats,
straight-through gradients) so the fixed-point network keeps the float accuracy. A numpy
simulation of the fixed-point network then checks that, and counts saturations.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import digits_to_images, images_to_q12, to_fixed  # noqa: E402
from float_model import float_forward  # noqa: E402

SEED = 2026
EPOCHS = 30  # float training
QAT_EPOCHS = 6  # fake-quantisation fine-tuning
BATCH = 64
LR = 2e-3
MAX_SHIFT = 2  # augmentation: random shifts of up to 2 pixels each way
ACT_LIMIT = 6.0  # activations are pushed below this (Q12 saturates at 8)
LOGIT_LIMIT = 12.0  # logits are pushed below this (Q11 saturates at 16)
PENALTY = 100.0  # weight of the range penalty in the loss

# Q formats of the guide's CNN_ConvolutionPoolReLU(..., 12,14,14,12, ...) and
# CNN_LinearReLU(..., 12,12,8,11, ...): (In, Weights, Bias, Out).
CONV_Q = (12, 14, 14, 12)
LINEAR_Q = (12, 12, 8, 11)
TENSORS = (  # file stem, float weight name, Q format
    ("Step1Weights", "conv1_w", CONV_Q[1]),
    ("Step1Biases", "conv1_b", CONV_Q[2]),
    ("Step2Weights", "conv2_w", CONV_Q[1]),
    ("Step2Biases", "conv2_b", CONV_Q[2]),
    ("Step3Weights", "fc_w", LINEAR_Q[1]),
    ("Step3Biases", "fc_b", LINEAR_Q[2]),
)
INT16_MIN, INT16_MAX = -32768, 32767
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def q_range(q: int) -> tuple:
    """The real range [lo, hi] of an int16 Qq value."""
    return INT16_MIN / (1 << q), INT16_MAX / (1 << q)


# ----------------------------------------------------------------------------------------------
# The float network (with optional fake quantisation)


def fake_quant(x: torch.Tensor, q: int) -> torch.Tensor:
    """Round to int16 Qq and saturate in the forward pass; identity gradient (straight-through)."""
    lo, hi = q_range(q)
    y = torch.clamp(torch.round(x * (1 << q)) / (1 << q), lo, hi)
    return x + (y - x).detach()


class MnistNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5)
        self.conv2 = nn.Conv2d(32, 64, 5)
        self.fc = nn.Linear(64 * 4 * 4, 10)
        self.quant = False

    def _w(self, t: torch.Tensor, q: int) -> torch.Tensor:
        return fake_quant(t, q) if self.quant else t

    def forward(self, x: torch.Tensor):
        """Logits, and the pre-pool conv outputs (for the range penalty)."""
        if self.quant:
            x = fake_quant(x, CONV_Q[0])
        c1 = F.conv2d(x, self._w(self.conv1.weight, CONV_Q[1]), self._w(self.conv1.bias, CONV_Q[2]))
        if self.quant:
            c1 = fake_quant(c1, CONV_Q[3])
        a1 = F.relu(F.max_pool2d(c1, 2))
        c2 = F.conv2d(a1, self._w(self.conv2.weight, CONV_Q[1]), self._w(self.conv2.bias, CONV_Q[2]))
        if self.quant:
            c2 = fake_quant(c2, CONV_Q[3])
        a2 = F.relu(F.max_pool2d(c2, 2))
        logits = F.linear(a2.flatten(1), self._w(self.fc.weight, LINEAR_Q[1]), self._w(self.fc.bias, LINEAR_Q[2]))
        if self.quant:
            logits = fake_quant(logits, LINEAR_Q[3])
        return logits, (c1, c2)

    @torch.no_grad()
    def clamp_to_formats(self) -> None:
        """Keep every weight inside the range of its int16 Q format."""
        for name, p in self.named_parameters():
            layer = name.split(".")[0]
            q = (CONV_Q if layer.startswith("conv") else LINEAR_Q)[1 if name.endswith("weight") else 2]
            p.clamp_(*q_range(q))

    def float_weights(self) -> dict:
        return {"conv1_w": self.conv1.weight, "conv1_b": self.conv1.bias, "conv2_w": self.conv2.weight,
                "conv2_b": self.conv2.bias, "fc_w": self.fc.weight, "fc_b": self.fc.bias}


def range_penalty(acts, logits) -> torch.Tensor:
    over = sum(F.relu(a.abs() - ACT_LIMIT).pow(2).mean() for a in acts)
    return PENALTY * (over + F.relu(logits.abs() - LOGIT_LIMIT).pow(2).mean())


def shift_batch(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Shift each image by a random integer offset in [-MAX_SHIFT, MAX_SHIFT] (zero fill): the
    digit box has a 4-pixel margin, so nothing is cut off."""
    n, _, h, w = x.shape
    pad = F.pad(x, (MAX_SHIFT,) * 4)
    d = torch.randint(0, 2 * MAX_SHIFT + 1, (n, 2), generator=gen)
    return torch.stack([pad[i, :, d[i, 0]:d[i, 0] + h, d[i, 1]:d[i, 1] + w] for i in range(n)])


def run_epochs(model, opt, sched, xs, ys, epochs, gen, log_prefix) -> None:
    n = xs.shape[0]
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=gen)
        total, correct, loss_sum = 0, 0, 0.0
        for start in range(0, n, BATCH):
            idx = perm[start:start + BATCH]
            x, y = shift_batch(xs[idx], gen), ys[idx]
            logits, acts = model(x)
            loss = F.cross_entropy(logits, y) + range_penalty(acts, logits)
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.clamp_to_formats()
            loss_sum += loss.item() * len(idx)
            correct += (logits.argmax(1) == y).sum().item()
            total += len(idx)
        if sched is not None:
            sched.step()
        print(f"{log_prefix} epoch {epoch + 1:2d}: loss {loss_sum / total:.4f}, train acc (shifted) "
              f"{100 * correct / total:.2f}%")


@torch.no_grad()
def torch_predict(model, xs) -> np.ndarray:
    model.eval()
    return model(xs)[0].argmax(1).numpy()


# ----------------------------------------------------------------------------------------------
# The 16-bit fixed-point network in numpy


def quantise(w: np.ndarray, q: int) -> tuple:
    """Float -> int16 Qq (round to nearest, ties to even; saturate) and how many saturated."""
    v = np.rint(np.asarray(w, dtype=np.float64) * (1 << q))
    return to_fixed(w, q), int(np.count_nonzero((v < INT16_MIN) | (v > INT16_MAX)))


class SatCounter:
    def __init__(self) -> None:
        self.counts = {}

    def saturate(self, name: str, v: np.ndarray) -> np.ndarray:
        c = self.counts.setdefault(name + " output saturated high", [0, 0])
        c[0] += int(np.count_nonzero(v > INT16_MAX))
        c[1] += v.size
        c = self.counts.setdefault(name + " output saturated low", [0, 0])
        c[0] += int(np.count_nonzero(v < INT16_MIN))
        c[1] += v.size
        return np.clip(v, INT16_MIN, INT16_MAX)

    def accumulator(self, name: str, acc: np.ndarray) -> None:
        c = self.counts.setdefault(name + " int32 accumulator overflows", [0, 0])
        c[0] += int(np.count_nonzero((acc < INT32_MIN) | (acc > INT32_MAX)))
        c[1] += acc.size
        peak = self.counts.setdefault(name + " accumulator peak |acc| / 2^31 (percent)", [0, 0])
        peak[0] = max(peak[0], int(100 * np.abs(acc).max() / (1 << 31) + 0.5))


def _layer_out(acc: np.ndarray, bias: np.ndarray, q: tuple, name: str, sat: SatCounter) -> np.ndarray:
    """acc: exact int sum of In*W (Q In+W); bias aligned by << (In+W-Bias); rounding shift (round
    half up) by In+W-Out; saturation to int16."""
    q_in, q_w, q_b, q_out = q
    acc = acc + (bias.astype(np.int64) << (q_in + q_w - q_b))
    sat.accumulator(name, acc)
    shift = q_in + q_w - q_out
    out = (acc + (1 << (shift - 1))) >> shift
    return sat.saturate(name, out)


def _exact_int(x: np.ndarray) -> np.ndarray:
    """float64 -> int64; the sums of int16 products computed in float64 are exact (|x| < 2^53)."""
    return np.rint(x).astype(np.int64)


def fixed_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, name: str, sat: SatCounter) -> np.ndarray:
    k = w.shape[-1]
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (k, k), axis=(2, 3))
    acc = _exact_int(np.tensordot(win, w.astype(np.float64), axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2))
    return _layer_out(acc, b[None, :, None, None], CONV_Q, name, sat)


def fixed_forward(qw: dict, x: np.ndarray, sat: SatCounter) -> np.ndarray:
    """int16 Q12 inputs [N, 1, 28, 28] -> int16 Q11 logits [N, 10] (before the softmax)."""
    for layer in ("Step1", "Step2"):
        c = fixed_conv(x, qw[layer + "Weights"], qw[layer + "Biases"], layer, sat)
        n, f, h, w = c.shape
        x = np.maximum(c.reshape(n, f, h // 2, 2, w // 2, 2).max(axis=(3, 5)), 0)
    flat = x.reshape(x.shape[0], -1).astype(np.float64)
    acc = _exact_int(flat @ qw["Step3Weights"].astype(np.float64).T)
    return _layer_out(acc, qw["Step3Biases"][None], LINEAR_Q, "Step3", sat).astype(np.int16)


# ----------------------------------------------------------------------------------------------


def main() -> None:
    start = time.perf_counter()
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(SEED)

    digits = load_digits()
    d8 = digits.images.astype(np.uint8)  # [1797, 8, 8], 0..16
    labels = digits.target.astype(np.uint8)
    d_train, d_held, y_train, y_held = train_test_split(d8, labels, test_size=0.2, stratify=labels,
                                                        random_state=SEED)
    print(f"load_digits: {len(d8)} digits; train {len(d_train)}, held out {len(d_held)} (stratified, seed {SEED})")
    (HERE / "data").mkdir(exist_ok=True)
    np.savez_compressed(HERE / "data" / "heldout.npz", digits=d_held, labels=y_held)

    x_train = torch.from_numpy(digits_to_images(d_train))[:, None]
    x_held_f = digits_to_images(d_held)
    x_held = torch.from_numpy(x_held_f)[:, None]
    t_train = torch.from_numpy(y_train.astype(np.int64))

    model = MnistNet()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    run_epochs(model, opt, sched, x_train, t_train, EPOCHS, gen, "float")
    acc = 100 * np.mean(torch_predict(model, x_held) == y_held)
    print(f"held-out accuracy after float training: {acc:.2f}%")

    model.quant = True
    opt = torch.optim.Adam(model.parameters(), lr=LR / 20)
    run_epochs(model, opt, None, x_train, t_train, QAT_EPOCHS, gen, "fake-quant")
    model.quant = False
    train_seconds = time.perf_counter() - start

    # Float accuracy (torch, then numpy's float_forward, which must agree).
    pred_torch = torch_predict(model, x_held)
    fw = {k: v.detach().numpy().astype(np.float32) for k, v in model.float_weights().items()}
    pred_np = float_forward(fw, x_held_f).argmax(1)
    float_acc = 100 * np.mean(pred_torch == y_held)
    print(f"float held-out accuracy: torch {float_acc:.2f}%, numpy float_forward "
          f"{100 * np.mean(pred_np == y_held):.2f}% ({int(np.sum(pred_np != pred_torch))} predictions differ)")
    (HERE / "model").mkdir(exist_ok=True)
    np.savez_compressed(HERE / "model" / "float_weights.npz", **fw)

    # Fixed point: quantise and write the tensors, then simulate.
    qw = {}
    for stem, name, q in TENSORS:
        qw[stem], nsat = quantise(fw[name], q)
        path = HERE / "model" / f"{stem}.tensor"
        path.write_bytes(qw[stem].astype("<i2").tobytes())
        lo, hi = q_range(q)
        print(f"{path.relative_to(HERE)}: {qw[stem].size} int16 Q{q}, float range [{fw[name].min():.4f}, "
              f"{fw[name].max():.4f}] (Q{q} holds [{lo:g}, {hi:.5f}]), {nsat} saturated")

    for what, d, y in (("held-out", d_held, y_held), ("train", d_train, y_train)):
        sat = SatCounter()
        logits = fixed_forward(qw, images_to_q12(digits_to_images(d))[:, None], sat)
        fixed_acc = 100 * np.mean(logits.argmax(1) == y)
        print(f"fixed-point simulation, {what} ({len(y)}): accuracy {fixed_acc:.2f}%")
        for name, (n, total) in sat.counts.items():
            print(f"  {name}: {n}" + (f" of {total}" if total else ""))
        if what == "train":
            continue
        held_fixed_acc = fixed_acc
        agree = np.mean(logits.argmax(1) == pred_torch)
        print(f"  fixed-point vs float predictions agree on {100 * agree:.2f}%; max |logit| "
              f"{np.abs(logits).max() / (1 << LINEAR_Q[3]):.3f} (Q11 limit 16)")
    print(f"\nSUMMARY: float {float_acc:.2f}%, fixed point {held_fixed_acc:.2f}% on {len(y_held)} held-out digits; "
          f"training took {train_seconds:.0f} s")


if __name__ == "__main__":
    main()
