"""The SQ8 pooling basic kernels with TensorFlow Lite Micro's arithmetic
(autotiler/generators/cnn_kernels/CNN_SQ8_Pooling.c) against their numpy reference
(autotiler/generators/sq8_tflm.py, itself proven bit-exact against tflite-micro), bit for bit, on
the simulated cluster, through the generator that calls them, CNN_PoolAct_SQ8 (Scale_DataSize 4):
the kernels read a tile's padding (a v4s, which the probe harness cannot pass) and Infos' clamp,
so the layers run whole and tiled, on 8 cores and on 3 (chunks that do not divide evenly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autotiler import KOP_AVGPOOL, KOP_MAXPOOL, KOP_NONE, KOP_RELU
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_gen_tflm_conv import pool_infos
from autotiler.generators.sq8_infos import tflm_infos

from .test_sq8_gen_tflm_conv import ACT_KOPS, SWEEP, Layer, run_batch

pytestmark = pytest.mark.usefixtures("private_harness_cache")


@dataclass(frozen=True)
class Pool:
    """A TFLite MAX_POOL_2D / AVERAGE_POOL_2D layer on one int8 image; act "range" is an arbitrary
    clamp of the unclamped result."""

    kop: int
    h: int
    w: int
    c: int
    f: tuple        # (fy, fx)
    s: tuple
    padding: str
    zp: int
    scale: float
    act: str
    act_kop: int
    seed: int

    def args(self) -> tuple:
        return (self.c, self.w, self.h, self.kop, self.f[1], self.f[0], 1, 1, self.s[1], self.s[0],
                int(self.padding == "SAME"), self.act_kop)

    def conv_args(self) -> tuple:
        """The same layer through CNN_ConvolutionPoolAct_SQ8 with ConvOper KOP_NONE."""
        return (4, 4, self.c, self.c, self.w, self.h, KOP_NONE, 1, 1, 1, 1, 1, 1, 0, *self.args()[3:])

    def reference(self):
        rng = np.random.default_rng(self.seed)
        x = rng.integers(-128, 128, (1, self.h, self.w, self.c)).astype(np.int8)
        q = T.QParams(self.scale, self.zp)
        fn = T.max_pool2d if self.kop == KOP_MAXPOOL else T.average_pool2d
        act = "NONE" if self.act == "range" else self.act
        y = fn(x, q, q, self.f, self.s, self.padding, act)
        infos = pool_infos(q, act)
        if self.act == "range":
            lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
            y = np.clip(y, lo, hi).astype(np.int8)
            infos = tflm_infos(act_min=lo, act_max=hi)
        return dict(In=x, Infos=infos), y[0]


def valid(p: Pool) -> bool:
    """TFLM refuses a VALID window larger than the image (no output)."""
    return all(T.compute_out_size(p.padding, n, f, s) > 0 for n, f, s in ((p.h, p.f[0], p.s[0]), (p.w, p.f[1], p.s[1])))


@st.composite
def pools(draw, index: int):
    p = Pool(kop=draw(st.sampled_from([KOP_MAXPOOL, KOP_AVGPOOL])), h=draw(st.integers(1, 16)),
             w=draw(st.integers(1, 16)), c=draw(st.integers(1, 12)),
             f=(draw(st.integers(1, 4)), draw(st.integers(1, 4))), s=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
             padding=draw(st.sampled_from(T.PADDINGS)), zp=draw(st.integers(-128, 127)),
             scale=draw(st.floats(1e-3, 1.0)), act=draw(st.sampled_from([*T.ACTIVATIONS, "range"])),
             act_kop=draw(st.sampled_from(ACT_KOPS)), seed=index)
    assume(valid(p))
    return p


@settings(max_examples=2, **SWEEP)
@given(batch=st.lists(st.tuples(st.integers(0, 2**16), st.sampled_from(["min", 1024, 64 * 1024])), min_size=10,
                      max_size=10), data=st.data())
def test_pool_layers(tmp_path_factory, batch, data):
    """CNN_PoolAct_SQ8 (and CNN_ConvolutionPoolAct_SQ8 with KOP_NONE) = sq8_tflm's pooling, at L1
    budgets from the smallest that tiles to whole."""
    layers = []
    for i, (seed, budget) in enumerate(batch):
        p = data.draw(pools(seed))
        if i % 3 == 2:
            layers.append(Layer(f"P{i}", "conv", p.conv_args(), p.reference, budget))
        else:
            layers.append(Layer(f"P{i}", "pool", p.args(), p.reference, budget))
    run_batch(tmp_path_factory.mktemp("pool"), layers)


@pytest.mark.parametrize("cores", [8, 3])
def test_pool_fixed(tmp_path, cores):
    """Border windows (SAME, 3x3/2 on odd sizes, 2x2/2 on even), the clamp, tiny tiles, on 8 cores
    and on 3."""
    cases = [Pool(KOP_AVGPOOL, 9, 7, 5, (3, 3), (2, 2), "SAME", 3, 0.02, "RELU", KOP_RELU, 1),
             Pool(KOP_MAXPOOL, 8, 8, 3, (2, 2), (2, 2), "VALID", -128, 0.1, "RELU6", KOP_NONE, 2),
             Pool(KOP_AVGPOOL, 15, 13, 1, (5, 3), (1, 2), "SAME", 127, 0.5, "NONE", KOP_NONE, 3)]
    layers = [Layer(f"F{i}{b}", "pool", p.args(), p.reference, budget) for i, p in enumerate(cases)
              for b, budget in (("w", 64 * 1024), ("m", "min"))]
    run_batch(tmp_path, layers, cores)

