"""Gap.h's GAP9 half floats (issue 22 item 8): f16 is IEEE binary16 (gcc's _Float16) and v2h two
such lanes in 4 bytes, as on the chip, so that the SDK's fp16 basic kernels, which shuffle v2h with
(v2s) masks, compile unchanged and compute what the chip computes.

(a) sizes, lane layout and shuffles, V2S; the SDK's float headers' names (F16, F16V, F16SV,
    F16_DSP...) are Gap.h's, and an SDK float header included before Gap.h is a named error;
(b) every operation rounds to binary16 as numpy's float16 does (one rounding per operation, also
    inside an expression: no float excess precision), on hypothesis-drawn bit patterns: add, mul,
    a*b+c, conversions from float and int, C's truncating casts, the FloatDefines.h builtins
    (max / min / abs / sqrt, Cvt_* rounding to nearest even and saturating);
(c) a basic kernel written the SDK's way (F16V loads, __builtin_shuffle with (v2s) masks, MaxF2,
    Cvt_*) compiles under the builder's flags and runs through host_harness.build from a tiled
    model whose arguments are f16: results equal numpy float16's bit for bit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from cffi import FFI
from hypothesis import given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *  # noqa: F401,F403  (the model API)
from autotiler.codegen import generate, write_files
from autotiler.model.ctype import parse_ctype
from autotiler.platforms import get_platform
from host_harness.builder import RUNTIME_DIR, USER_FLAGS

STRICT = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME_DIR}", "-D__EMUL__"]

pytestmark = pytest.mark.usefixtures("private_harness_cache")


def run_c(tmp_path, body: str, flags=()) -> str:
    """Compile `body` (after #include "Gap.h") as a program under strict C99 and run it."""
    src = tmp_path / "p.c"
    src.write_text('#include "Gap.h"\n' + textwrap.dedent(body))
    exe = tmp_path / "p"
    subprocess.run([*STRICT, *flags, str(src), "-o", str(exe), "-lm"], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------------------------------------
# (a) types
# ---------------------------------------------------------------------------------------------

def test_sizes_and_lanes_are_the_chips(tmp_path):
    out = run_c(tmp_path, """
        int main(void) {
            v2h x = {1.5f, -2.0f}, y = {3.0f, -4.0f};
            v2h lo = __builtin_shuffle(x, y, (v2s){0, 2}), hi = __builtin_shuffle(x, y, (v2s){1, 3});
            v2s mask = (v2s){1, 2};
            v2h rot = __builtin_shuffle(x, y, mask);
            V2S lt = x < y;
            F16SV u;
            u.V = lo;
            printf("%d %d %d %d %d %d\\n", (int)sizeof(f16), (int)sizeof(v2h), (int)sizeof(V2S),
                   (int)sizeof(F16), (int)sizeof(F16V), (int)sizeof(F16SV));
            printf("%g %g %g %g %g %g %d %d %g\\n", (double)lo[0], (double)lo[1], (double)hi[0], (double)hi[1],
                   (double)rot[0], (double)rot[1], lt[0], lt[1], (double)u.S);
            return 0;
        }
    """, flags=["-DSTD_FLOAT"])
    sizes, lanes = out.splitlines()
    assert sizes.split() == ["2", "4", "4", "2", "4", "4"]
    # lane i of a shuffle is lane mask[i] of the concatenation {x0, x1, y0, y1}
    assert lanes.split() == ["1.5", "3", "-2", "-4", "-2", "3", "-1", "0", "1.5"]


def test_sdk_float_names_follow_the_chips_switches(tmp_path):
    """CNN_FloatType.h's F16 is binary16 with STD_FLOAT, f16a (bfloat16 on the chip) otherwise;
    DSP_FloatType.h's F16_DSP is binary16 unless F16_DSP_BFLOAT."""
    body = """
        int main(void) {
            printf("%d %d %d %d\\n", (int)sizeof(F16), (int)sizeof(F16V), (int)sizeof(F16_DSP), (int)sizeof(F16V_DSP));
            return 0;
        }
    """
    assert run_c(tmp_path, body).split() == ["4", "8", "2", "4"]
    assert run_c(tmp_path, body, ["-DSTD_FLOAT", "-DF16_DSP_BFLOAT"]).split() == ["2", "4", "4", "8"]


@pytest.mark.parametrize("header", ["CNN_FloatType.h", "DSP_FloatType.h", "FloatDefines.h"])
def test_sdk_float_header_before_gap_h_is_a_named_error(tmp_path, header):
    guard = {"CNN_FloatType.h": "__CNN_FLOAT_TYPE_H__", "DSP_FloatType.h": "__DSP_FLOAT_TYPE_H__",
             "FloatDefines.h": "__FLOAT_DEFINES_H__"}[header]
    (tmp_path / header).write_text(f"#ifndef {guard}\n#define {guard}\n#endif\n")
    src = tmp_path / "k.c"
    src.write_text(f'#include "{header}"\n#include "Gap.h"\n')
    proc = subprocess.run([*STRICT, f"-I{tmp_path}", "-c", str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "was included before Gap.h: include Gap.h first" in proc.stderr


def test_ctype_sizes_follow_gap_h():
    """autotiler/model/ctype.py knows f16 and v2h as the host compiles them (numpy float16)."""
    f16, v2h, f16a, v2ah, cmp = (parse_ctype(t) for t in ("f16 *", "v2h *", "f16a *", "v2ah *", "V2S *"))
    assert (f16.element, f16.dtype, f16.item_size) == ("_Float16", "<f2", 2)
    assert (v2h.dtype, v2h.item_size) == ("<f2", 4)
    assert (f16a.dtype, f16a.item_size) == ("<f4", None)      # a float here, 2 bytes on the chip
    assert (v2ah.dtype, v2ah.item_size) == ("<f4", None)
    assert (cmp.dtype, cmp.item_size) == ("<i2", 4)
    assert parse_ctype("f16").is_float and parse_ctype("_Float16").is_float


# ---------------------------------------------------------------------------------------------
# (b) rounding, against numpy float16
# ---------------------------------------------------------------------------------------------

EVAL_C = r"""
#include "Gap.h"
#include <string.h>

static f16 h(unsigned short b) { f16 x; memcpy(&x, &b, 2); return x; }
static unsigned short bits(f16 x) { unsigned short r; memcpy(&r, &x, 2); return r; }

int f16_sizes(void) { return (int)(sizeof(f16) * 10 + sizeof(v2h)); }
unsigned short f16_add(unsigned short x, unsigned short y) { return bits(h(x) + h(y)); }
unsigned short f16_sub(unsigned short x, unsigned short y) { return bits(h(x) - h(y)); }
unsigned short f16_mul(unsigned short x, unsigned short y) { return bits(h(x) * h(y)); }
unsigned short f16_div(unsigned short x, unsigned short y) { return bits(h(x) / h(y)); }
/* one expression, two roundings on the chip */
unsigned short f16_muladd(unsigned short x, unsigned short y, unsigned short z) { return bits(h(x) * h(y) + h(z)); }
unsigned short v2h_muladd(unsigned short x, unsigned short y, unsigned short z, int lane)
{
    v2h a = {h(x), h(z)}, b = {h(y), h(x)}, c = {h(z), h(y)};
    v2h r = a * b + c;
    return bits(r[lane]);
}
unsigned short f16_from_float(float f) { return bits((f16)f); }
unsigned short f16_from_int(int i) { return bits((f16)i); }
int f16_to_int(unsigned short x) { return (int)h(x); }
float f16_to_float(unsigned short x) { return (float)h(x); }
unsigned short f16_max(unsigned short x, unsigned short y) { return bits(Maxf16(h(x), h(y))); }
unsigned short f16_min(unsigned short x, unsigned short y) { return bits(Minf16(h(x), h(y))); }
unsigned short f16_abs(unsigned short x) { return bits(Absf16(h(x))); }
unsigned short f16_sqrt(unsigned short x) { return bits(Sqrtf16(h(x))); }
unsigned short v2h_max(unsigned short x, unsigned short y, int lane)
{
    v2h a = {h(x), h(y)}, b = {h(y), h(x)};
    return bits(Maxv2h(a, b)[lane]);
}
int v2h_cvt_s(unsigned short x) { v2h a = {h(x), h(x)}; return Cvt_v2h_v2s(a)[1]; }
int v2h_cvt_u(unsigned short x) { v2h a = {h(x), h(x)}; return Cvt_v2h_v2u(a)[0]; }
unsigned short v2s_cvt_h(int i) { v2s a = {(short)i, 0}; return bits(Cvt_v2s_v2h(a)[0]); }
"""

EVAL_CDEF = """
int f16_sizes(void);
unsigned short f16_add(unsigned short, unsigned short); unsigned short f16_sub(unsigned short, unsigned short);
unsigned short f16_mul(unsigned short, unsigned short); unsigned short f16_div(unsigned short, unsigned short);
unsigned short f16_muladd(unsigned short, unsigned short, unsigned short);
unsigned short v2h_muladd(unsigned short, unsigned short, unsigned short, int);
unsigned short f16_from_float(float); unsigned short f16_from_int(int); int f16_to_int(unsigned short);
float f16_to_float(unsigned short);
unsigned short f16_max(unsigned short, unsigned short); unsigned short f16_min(unsigned short, unsigned short);
unsigned short f16_abs(unsigned short); unsigned short f16_sqrt(unsigned short);
unsigned short v2h_max(unsigned short, unsigned short, int);
int v2h_cvt_s(unsigned short); int v2h_cvt_u(unsigned short); unsigned short v2s_cvt_h(int);
"""


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    """EVAL_C compiled as the builder compiles user basic kernels (USER_FLAGS), loaded with cffi."""
    out = tmp_path_factory.mktemp("fp16_eval")
    (out / "eval.c").write_text(EVAL_C)
    lib = out / "libfp16eval.so"
    subprocess.run(["gcc", *USER_FLAGS, "-Werror", "-shared", "-D__EMUL__", "-DAT_SIM_NCORES=8",
                    f"-I{RUNTIME_DIR}", str(out / "eval.c"), str(RUNTIME_DIR / "at_sim.c"), "-o", str(lib), "-lm"],
                   check=True)
    ffi = FFI()
    ffi.cdef(EVAL_CDEF)
    return ffi.dlopen(str(lib))


def half(b: int) -> np.float16:
    return np.array([b], np.uint16).view(np.float16)[0]


def hbits(x) -> int:
    return int(np.array([x], np.float16).view(np.uint16)[0])


def same(got_bits: int, want) -> bool:
    """Equal bit patterns, any NaN matching any NaN."""
    want = np.float16(want)
    return np.isnan(want) and np.isnan(half(got_bits)) or got_bits == hbits(want)


HALF = st.integers(0, 0xFFFF)
FINITE = HALF.filter(lambda b: np.isfinite(half(b)))


def test_evaluator_sizes(ev):
    assert ev.f16_sizes() == 24


@settings(max_examples=400, deadline=None)
@given(x=HALF, y=HALF, z=HALF)
def test_arithmetic_rounds_once_per_operation(ev, x, y, z):
    a, b, c = half(x), half(y), half(z)
    with np.errstate(all="ignore"):
        assert same(ev.f16_add(x, y), a + b)
        assert same(ev.f16_sub(x, y), a - b)
        assert same(ev.f16_mul(x, y), a * b)
        assert same(ev.f16_div(x, y), a / b)
        ab = np.float16(a * b)
        assert same(ev.f16_muladd(x, y, z), ab + c)
        assert same(ev.v2h_muladd(x, y, z, 0), ab + c)
        assert same(ev.v2h_muladd(x, y, z, 1), np.float16(c * a) + b)


def test_expression_is_not_evaluated_in_float(ev):
    """(1 + 2^-10)^2 + 2^-11: rounded after the product, a tie going to even (1 + 2^-9); in float
    the sum would round up, to 1 + 3 * 2^-10."""
    x, y = hbits(1 + 2 ** -10), hbits(2 ** -11)
    assert half(ev.f16_muladd(x, x, y)) == np.float16(1 + 2 ** -9)
    assert half(ev.v2h_muladd(x, x, y, 0)) == np.float16(1 + 2 ** -9)


@settings(max_examples=400, deadline=None)
@given(f=st.floats(width=32, allow_nan=False), i=st.integers(-(2 ** 31), 2 ** 31 - 1), x=FINITE)
def test_conversions(ev, f, i, x):
    with np.errstate(all="ignore"):
        assert same(ev.f16_from_float(f), np.float32(f).astype(np.float16))
        assert same(ev.f16_from_int(i), np.float64(i).astype(np.float16))
    assert ev.f16_to_float(x) == np.float32(half(x))
    assert ev.f16_to_int(x) == int(np.trunc(np.float64(half(x))))          # C's cast truncates


def rint_sat(v: float, lo: int, hi: int) -> int:
    return hi if np.isnan(v) else int(min(max(np.rint(v), lo), hi))


@settings(max_examples=400, deadline=None)
@given(x=HALF, y=HALF, i=st.integers(-32768, 32767))
def test_float_builtins_have_the_chips_semantics(ev, x, y, i):
    a, b = half(x), half(y)
    if np.isnan(a) or np.isnan(b):
        mx = mn = b if np.isnan(a) else a                 # RISC-V fmax / fmin: the other operand
    elif a == b == 0:
        mx, mn = (a, b) if np.signbit(b) else (b, a)      # -0 < +0
    else:
        mx, mn = max(a, b), min(a, b)
    assert same(ev.f16_max(x, y), mx) and same(ev.f16_min(x, y), mn)
    assert same(ev.v2h_max(x, y, 0), mx) and same(ev.v2h_max(x, y, 1), mx)
    assert ev.f16_abs(x) == x & 0x7FFF or np.isnan(a)
    with np.errstate(all="ignore"):
        assert same(ev.f16_sqrt(x), np.sqrt(a))
    v = float(a)
    assert ev.v2h_cvt_s(x) == rint_sat(v, -32768, 32767)   # to nearest even, saturated
    assert ev.v2h_cvt_u(x) == rint_sat(v, 0, 65535)
    assert same(ev.v2s_cvt_h(i), np.float16(i))


@pytest.mark.parametrize("v, s", [(0.5, 0), (1.5, 2), (2.5, 2), (-2.5, -2), (40000.0, 32767), (-65504.0, -32768),
                                  (float("inf"), 32767), (float("-inf"), -32768), (float("nan"), 32767)])
def test_cvt_rounds_to_nearest_even_and_saturates(ev, v, s):
    assert ev.v2h_cvt_s(hbits(v)) == s


# ---------------------------------------------------------------------------------------------
# (c) an fp16 basic kernel written the SDK's way, through a tiled model and host_harness.build
# ---------------------------------------------------------------------------------------------

PAIRMIX_H = """
#ifndef PAIR_MIX_F16_H
#define PAIR_MIX_F16_H
#include "Gap.h"

typedef struct {
    F16 * __restrict__ In1;
    F16 * __restrict__ In2;
    F16 * __restrict__ Out;
    unsigned int W;
    unsigned int H;
    F16 Alpha;
} KerPairMix_fp16_T;

void KerPairMix_fp16(KerPairMix_fp16_T *Arg);
#endif
"""

# On the pairs {a0, a1} of In1 and {b0, b1} of In2 (W even): S = {a0, b0}, T = {a1, b1} (two
# shuffles), P = S*T*Alpha + S, Out = {MaxF(P0, 0), P1 rounded to an integer (Cvt_ there and back)}.
PAIRMIX_C = """
#include "Gap.h"
#include "PairMixF16.h"

static int CoreCountDynamic = 1;
static int ActiveCore = gap_ncore();

static inline unsigned int __attribute__((always_inline)) ChunkSize(unsigned int X)
{
    unsigned int NCore = CoreCountDynamic ? (unsigned int)ActiveCore : (unsigned int)gap_ncore();
    unsigned int Log2Core = gap_fl1(NCore);
    return (X >> Log2Core) + ((X & (NCore - 1)) != 0);
}

void KerPairMix_fp16(KerPairMix_fp16_T *Arg)
{
    unsigned int N = (Arg->W * Arg->H) / 2;
    unsigned int CoreId = gap_coreid(), Chunk = ChunkSize(N);
    unsigned int First = Chunk * CoreId, Last = gap_min(First + Chunk, N);
    F16V *In1 = (F16V *)Arg->In1, *In2 = (F16V *)Arg->In2, *Out = (F16V *)Arg->Out;
    F16V Alpha = (F16V){Arg->Alpha, Arg->Alpha}, Zero = (F16V){0.0, 0.0};
    for (unsigned int i = First; i < Last; i++) {
        F16V A = In1[i], B = In2[i];
        F16V S = __builtin_shuffle(A, B, (v2s){0, 2});
        F16V T = __builtin_shuffle(A, B, (v2s){1, 3});
        F16V P = S * T * Alpha + S;
        F16V R = Cvt_v2s_v2h(Cvt_v2h_v2s(P));
        Out[i] = __builtin_shuffle(MaxF2(P, Zero), R, (v2s){0, 3});
    }
    gap_waitbarrier(0);
}
"""

W, H = 40, 24


def declare_pair_mix():
    SetUsedFilesNames(0, 1, "PairMixF16.h")
    SetGeneratedFilesNames("PairMixKernels.c", "PairMixKernels.h")
    SetL1MemorySize(2000)
    SetSymbolDynamics()
    LibKernel("KerPairMix_fp16", CALL_PARALLEL,
              CArgs(6, TCArg("F16 * __restrict__", "In1"), TCArg("F16 * __restrict__", "In2"),
                    TCArg("F16 * __restrict__", "Out"), TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                    TCArg("F16", "Alpha")),
              "KerPairMix_fp16_T")
    UserKernel("PairMix", KernelDimensions(1, W, H, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
               CArgs(4, TCArg("f16 * __restrict__", "In1"), TCArg("f16 * __restrict__", "In2"),
                     TCArg("f16 * __restrict__", "Out"), TCArg("f16", "Alpha")),
               Calls(1, Call("KerPairMix_fp16", LOC_INNER_LOOP,
                             Bindings(6, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE),
                                      K_Arg("Out", KER_ARG_TILE), K_Arg("In1", KER_ARG_TILE_W),
                                      K_Arg("In1", KER_ARG_TILE_H), C_Arg("Alpha")))),
               KerArgs(3, KerArg("In1", OBJ_IN_DB, W, H, sizeof("f16"), 0, 0, 0, "In1", 0),
                       KerArg("In2", OBJ_IN_DB, W, H, sizeof("f16"), 0, 0, 0, "In2", 0),
                       KerArg("Out", OBJ_OUT_DB, W, H, sizeof("f16"), 0, 0, 0, "Out", 0)))


def pair_mix_reference(in1, in2, alpha):
    """numpy float16, one rounding per operation, as the chip's vfmul.h / vfadd.h."""
    a0, a1, b0, b1 = in1[..., 0::2], in1[..., 1::2], in2[..., 0::2], in2[..., 1::2]
    alpha = np.float16(alpha)
    p0 = (a0 * a1) * alpha + a0
    p1 = (b0 * b1) * alpha + b0
    out = np.empty_like(in1)
    out[..., 0::2] = np.where(p0 > 0, p0, np.float16(0))
    out[..., 1::2] = np.clip(np.rint(p1.astype(np.float64)), -32768, 32767).astype(np.int16).astype(np.float16)
    return out


@pytest.fixture(scope="module")
def pair_mix(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairmix")
    bk = root / "bk"
    bk.mkdir()
    (bk / "PairMixF16.h").write_text(PAIRMIX_H)
    (bk / "PairMixF16.c").write_text(PAIRMIX_C)
    with Model(get_platform("gap9")) as m:
        declare_pair_mix()
        write_files(generate(m), str(root / "gen"))
    return host_harness.build(root / "gen", sources=[bk / "PairMixF16.c"], include_dirs=[bk],
                              platform="gap9", cflags=["-DSTD_FLOAT"])


def test_generated_manifest_types_f16_as_float16(pair_mix):
    args = {a.name: a for a in pair_mix.kernel("PairMix").args}
    assert (args["In1"].elem, args["In1"].dtype, args["Out"].dtype) == ("_Float16", "<f2", "<f2")
    assert args["Alpha"].is_float


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), alpha=st.floats(-4, 4, width=16))
def test_sdk_style_fp16_kernel_is_exact(pair_mix, seed, alpha):
    rng = np.random.default_rng(seed)
    # binary16 values in [-6, 6] (every exponent: products round, some cancel to 0 or tie)
    in1, in2 = ((rng.uniform(-6, 6, (1, H, W)) * 2.0 ** rng.integers(-8, 1, (1, H, W))).astype(np.float16)
                for _ in range(2))
    out = np.zeros_like(in1)
    pair_mix.call("PairMix", In1=in1, In2=in2, Out=out, Alpha=alpha)
    want = pair_mix_reference(in1, in2, alpha)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
