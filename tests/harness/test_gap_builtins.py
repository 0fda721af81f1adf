"""Gap.h / Gap8.h: the GAP SDK's builtins for basic kernels, their chip semantics, and the
compile-time core count.

(a) every name the headers define is used by the coverage C files, which compile under
    -std=c99 -Wall -Wextra -Werror, and every gap_* name of the SDK's emulation headers exists;
(b) each builtin family is compared with a Python model of the chip's instructions (GVSOC's, see
    Gap.h) on edge values and on hypothesis-drawn inputs, in process (cffi) and, for UBSan, in a
    sanitized program;
(c) ``static int ActiveCore = gap_ncore();`` at file scope builds through host_harness.build and
    yields the build's core count; a run configured for another count is refused.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from cffi import FFI
from hypothesis import given, settings
from hypothesis import strategies as st

import host_harness
from autotiler.errors import HarnessError
from host_harness.builder import RUNTIME_DIR, sanitizer_libraries

COVERAGE_DIR = Path(__file__).resolve().parent.parent / "kernels" / "gap_coverage"
STRICT = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror"]
EVAL_NCORES = 6  # the evaluator is built for a core count no platform has

# ---------------------------------------------------------------------------------------------
# (a) header coverage
# ---------------------------------------------------------------------------------------------

_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
_FUNCTION = re.compile(r"^static inline [^(;]*?\b([A-Za-z_]\w*)\s*\(", re.M)
_TYPEDEF = re.compile(r"^typedef\b[^;]*?\b([A-Za-z_]\w*)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?;", re.M)
_GUARDS = {"GAP_H", "GAP8_H", "PMSIS_H"}


def defined_names(header: Path) -> set[str]:
    """Public names a header defines: macros, static inline functions and typedefs, without the
    include guard and the private at_gap_* helpers."""
    text = header.read_text()
    names = set()
    for rx in (_DEFINE, _FUNCTION, _TYPEDEF):
        names.update(rx.findall(text))
    return {n for n in names if n not in _GUARDS and not n.startswith("at_gap_")}


# The gap_* names of the SDK's emulation headers (tools/autotiler_v3/Emulation: GapBuiltins.h,
# both branches, GapSystem.h and the timers of at_api_emul.h).
ORIGINAL_GAP_NAMES = """
gap_pack2 gap_packu2 gap_pack4 gap_packu4 gap_max gap_max2 gap_max4 gap_maxu2 gap_maxu4 gap_min
gap_min2 gap_min4 gap_minu2 gap_minu4 gap_add2 gap_add4 gap_sub2 gap_sub4 gap_clip gap_clipu
gap_clipr gap_clipur gap_abs gap_abs2 gap_abs4 gap_trunh gap_trunb gap_macs gap_macfs gap_machhs
gap_macu gap_macfu gap_machhu gap_macsN gap_macfsN gap_macuN gap_macfuN gap_macsRN gap_macfsRN
gap_macuRN gap_macfuRN gap_machhsN gap_machhuN gap_machhsRN gap_machhuRN gap_muls gap_mulfs
gap_mulu gap_mulfu gap_mulhhs gap_mulhhu gap_mulsN gap_mulfsN gap_mulsRN gap_mulfsRN gap_muluN
gap_mulfuN gap_muluRN gap_mulfuRN gap_mulhhsN gap_mulhhsRN gap_mulhhuN gap_mulhhuRN gap_mul64h
gap_mul64uh gap_mul64ush gap_dotp2 gap_dotpu2 gap_dotpus2 gap_sumdotp2 gap_sumdotpu2
gap_sumdotpus2 gap_dotp4 gap_dotpu4 gap_dotpus4 gap_sumdotp4 gap_sumdotpu4 gap_sumdotpus4
gap_cplxmuls gap_cplxmulsdiv2 gap_cplxmulsdiv4 gap_cplxmulsdiv8 gap_cplxconj gap_cplxmj
gap_sub2rotmj gap_add2div2 gap_add2div4 gap_sub2div2 gap_sub2div4 gap_vitmax gap_vitsel gap_fl1
gap_clb gap_bitextract gap_bitextractu gap_bitextract_r gap_bitextractu_r gap_bitextract_r_safe
gap_bitextractu_r_safe gap_bitinsert gap_bitinsert_r gap_bitinsert_r_safe gap_rotr gap_addnormu
gap_addnormu_reg gap_addnorm gap_addnorm_reg gap_addroundnormu gap_addroundnormu_reg
gap_addroundnorm gap_addroundnorm_reg gap_subnormu gap_subnormu_reg gap_subnorm gap_subnorm_reg
gap_subroundnormu gap_subroundnormu_reg gap_subroundnorm gap_subroundnorm_reg gap_roundnormu
gap_roundnormu_reg gap_roundnorm gap_roundnorm_reg gap_normu gap_normu_reg gap_norm gap_norm_reg
gap_allocL1 gap_allocL2 gap_freeL1 gap_freeL2 gap_coreid gap_clusterid gap_ncore gap_ncorem1
gap_coreidm1 gap_setupbarrier gap_waitbarrier gap_waitbarrier_cc gap_fc_starttimer
gap_fc_resethwtimer gap_fc_readhwtimer gap_cl_starttimer gap_cl_resethwtimer gap_cl_readhwtimer
""".split()
ORIGINAL_OTHER_NAMES = ("v2s v2u v4s v4u f16 f16a v2h v2ah V2S rt_pointerT PI_L2 FIX2FP FP2FIXR FP2FIX "
                        "rt_nb_pe rt_team_barrier rt_team_fork").split()


def mentions(path: Path, names) -> list[str]:
    text = path.read_text()
    return sorted(n for n in names if not re.search(rf"\b{re.escape(n)}\b", text))


@pytest.mark.parametrize("header, coverage, at_least", [("Gap.h", "gap_coverage.c", 100),
                                                        ("Gap8.h", "gap8_coverage.c", 100),
                                                        ("pmsis.h", "pmsis_coverage.c", 9)])
def test_coverage_file_uses_every_defined_name(header, coverage, at_least):
    names = defined_names(RUNTIME_DIR / header)
    assert len(names) >= at_least
    assert mentions(COVERAGE_DIR / coverage, names) == []


def test_gap_h_defines_every_name_of_the_original_emulation():
    names = defined_names(RUNTIME_DIR / "Gap.h")
    assert sorted(set(ORIGINAL_GAP_NAMES + ORIGINAL_OTHER_NAMES) - names) == []


@pytest.mark.parametrize("defines", [[], ["-DAT_SIM_NCORES=4"]])
@pytest.mark.parametrize("coverage", ["gap_coverage.c", "gap8_coverage.c", "pmsis_coverage.c"])
def test_coverage_files_compile_strict(tmp_path, coverage, defines):
    subprocess.run([*STRICT, *defines, f"-I{RUNTIME_DIR}", "-c", str(COVERAGE_DIR / coverage),
                    "-o", str(tmp_path / "c.o")], check=True)


# Headers of the SDK's emulation and runtime that its basic kernels include by name, with a use of
# what each brings (through Gap.h, Gap8.h, at_api.h or pmsis.h).
SDK_HEADER_USES = [
    ("GapBuiltins.h", "int Use(v4s a) { return gap_sumdotp4(a, a, 0); }"),
    ("GapSystem.h", "void Use(void) { rt_team_barrier(); }"),
    ("at_api_emul.h", "int Use(void) { AT_L2_EVENT e; (void)e; return gap_cl_readhwtimer(); }"),
    ("at_api_pmsis.h", "int Use(void) { AT_L2_EVENT e; (void)e; return pi_core_id(); }"),
    ("rt/rt_api.h", "int Use(v2s a) { return rt_core_id() + gap8_dotp2(a, a); }"),
    ("pmsis.h", "int Use(void) { return gap_fl1(8) + pi_cl_team_nb_cores(); }"),
]


@pytest.mark.parametrize("header, use", SDK_HEADER_USES)
def test_sdk_header_names_find_the_harness_headers(tmp_path, header, use):
    """`#include "GapBuiltins.h"`, `"rt/rt_api.h"`... at the top of an SDK kernel file finds the
    harness's header, which brings the names the SDK's did."""
    src = tmp_path / "h.c"
    src.write_text(f'#include "{header}"\n{use}\n')
    subprocess.run([*STRICT, f"-I{RUNTIME_DIR}", "-c", str(src), "-o", str(tmp_path / "h.o")], check=True)


# The GAP9 branch of the SDK's CNN_Defines_fp16.h (a kernel built with -D__gap9__), typed here
# from its shape: it defines AbsF... again, with the replacement lists Gap.h gives them, and its
# LEAK_CONSTANT names the GAP9 compiler's float16 / float16alt.
GAP9_FP16_DEFINES = """
#ifdef STD_FLOAT
#define AbsF(a)\t\tAbsf16((a))
#define MaxF(a, b)\tMaxf16((a), (b))
#define MinF(a, b)\tMinf16((a), (b))
#define AbsF2(a)\tAbsv2h((a))
#define MaxF2(a, b)\tMaxv2h((a), (b))
#define MinF2(a, b)\tMinv2h((a), (b))
#define MIN_FLT16\tMIN_f16
#define MAX_FLT16\tMAX_f16
#define\tLEAK_CONSTANT\t((float16)0.1)
#else
#define AbsF(a)\t\tAbsf16a((a))
#define MaxF(a, b)\tMaxf16a((a), (b))
#define MinF(a, b)\tMinf16a((a), (b))
#define AbsF2(a)\t((F16V) Absv2ah((a)))
#define MaxF2(a, b)\t((F16V) Maxv2ah((a), (b)))
#define MinF2(a, b)\t((F16V) Minv2ah((a), (b)))
#define MIN_FLT16\tMIN_f16a
#define MAX_FLT16\tMAX_f16a
#define\tLEAK_CONSTANT\t((float16alt)0.1)
#endif
"""


@pytest.mark.parametrize("std_float", [False, True])
def test_gap9_fp16_defines_redefine_nothing_and_find_float16(tmp_path, std_float):
    """float16 / float16alt are f16 / f16a (binary16 and, for want of bfloat16 in gcc 12, float):
    LEAK_CONSTANT rounds 0.1 as the chip's type does, and the GAP9 redefinitions of AbsF... are
    identical to Gap.h's (no warning under -Werror)."""
    (tmp_path / "defs.h").write_text(GAP9_FP16_DEFINES)
    src = tmp_path / "g9.c"
    src.write_text('#include "Gap.h"\n#include "defs.h"\n#include <string.h>\n'
                   "int main(void) {\n"
                   "    F16 k = LEAK_CONSTANT; float16 h = (float16)0.1; float16alt a = (float16alt)0.1;\n"
                   "    F16 x = (F16)-2.0f, r = MaxF(x * k, MinF(AbsF(x), MAX_FLT16));\n"
                   "    F16V xk = {x, k}, xx = {x, x}, kk = {k, k}, v = MaxF2(xk, MinF2(AbsF2(xx), kk));\n"
                   "    unsigned short hb; memcpy(&hb, &h, 2);\n"
                   '    printf("%d %d %u %.17g %.17g %.17g %.17g %.17g\\n", (int)sizeof(float16), (int)sizeof(float16alt),\n'
                   "           (unsigned)hb, (double)a, (double)k, (double)r, (double)v[0], (double)v[1]);\n"
                   "    return 0;\n}\n")
    exe = tmp_path / "g9"
    flags = ["-D__gap9__"] + (["-DSTD_FLOAT"] if std_float else [])
    subprocess.run([*STRICT, *flags, f"-I{RUNTIME_DIR}", f"-I{tmp_path}", str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    half_bits = int(np.array([0.1], np.float16).view(np.uint16)[0])
    assert out[:3] == ["2", "4", str(half_bits)]
    assert float(out[3]) == float(np.float32(0.1))
    k = float(np.float16(0.1)) if std_float else float(np.float32(0.1))
    assert float(out[4]) == k
    # MaxF(-2 * k, Min(|-2|, MAX)) = 2; lanes: Max(-2, Min(2, k)) = k, Max(k, Min(2, k)) = k
    assert [float(o) for o in out[5:]] == [2.0, k, k]


def test_clipf32_saturates_as_fmin_then_fmax(tmp_path):
    """Clipf32 (later FloatDefines.h; CNN_Copy.c's float to integer kernels): Minf32 then Maxf32,
    RISC-V fmin / fmax, against Python's model of them."""
    def fmin(x, y):
        return y if math.isnan(x) else x if math.isnan(y) or x < y else y

    def fmax(x, y):
        return y if math.isnan(x) else x if math.isnan(y) or x > y else y

    cases = [(5.0, 3.0, -1.0), (-7.5, 3.0, -1.0), (0.25, 3.0, -1.0), (math.nan, 127.0, -128.0),
             (40000.0, 32767.0, -32768.0), (-40000.0, 32767.0, -32768.0), (255.5, 255.0, 0.0)]
    src = tmp_path / "clip.c"
    src.write_text('#include "Gap.h"\n#include <math.h>\nint main(void) {\n'
                   "    float a, u, l;\n"
                   '    while (scanf("%f %f %f", &a, &u, &l) == 3) printf("%.9g\\n", (double)Clipf32(a, u, l));\n'
                   "    return 0;\n}\n")
    exe = tmp_path / "clip"
    subprocess.run([*STRICT, f"-I{RUNTIME_DIR}", str(src), "-o", str(exe)], check=True)
    stdin = "".join(f"{a} {u} {l}\n" for a, u, l in cases)
    out = subprocess.run([str(exe)], input=stdin, check=True, capture_output=True, text=True).stdout
    assert [float(v) for v in out.split()] == [fmax(fmin(a, u), l) for a, u, l in cases]


def test_vector_builtins_reinterpret_any_4_byte_vector(tmp_path):
    """As the chip's builtins: a v4u handed to gap_dotp4 is read as signed bytes, and no
    implicit vector conversion (an error without -flax-vector-conversions) is needed."""
    src = tmp_path / "mix.c"
    src.write_text('#include "Gap.h"\n#include <stdio.h>\nint main(void) {\n'
                   "    v4u a = gap_packu4(200, 1, 2, 3); v2u h = gap_packu2(65535, 2);\n"
                   "    v4s b = gap_pack4(1, 1, 1, 1);\n"
                   '    printf("%d %d %u\\n", gap_dotp4(a, b), gap_dotp2(h, b), gap_dotpu4(a, b));\n'
                   "    return 0;\n}\n")
    exe = tmp_path / "mix"
    subprocess.run([*STRICT, f"-I{RUNTIME_DIR}", str(src), "-o", str(exe)], check=True)
    # signed bytes: -56 + 1 + 2 + 3; v2u {65535, 2} as v2s is {-1, 2}, v4s {1, 1, 1, 1} as v2s
    # {257, 257}: -257 + 514; unsigned bytes: 200 + 1 + 2 + 3
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["-50", "257", "206"]


def test_gap_ncore_without_the_harness_define_is_8(tmp_path):
    src = tmp_path / "n.c"
    src.write_text('#include "Gap.h"\n#include <stdio.h>\nstatic int ActiveCore = gap_ncore();\n'
                   'int main(void) { printf("%d %d\\n", ActiveCore, gap_ncorem1()); return 0; }\n')
    for defines, expect in (([], "8 7"), (["-DAT_SIM_NCORES=3"], "3 2")):
        subprocess.run([*STRICT, *defines, f"-I{RUNTIME_DIR}", str(src), "-o", str(tmp_path / "n")], check=True)
        out = subprocess.run([str(tmp_path / "n")], check=True, capture_output=True, text=True).stdout
        assert out.strip() == expect


# ---------------------------------------------------------------------------------------------
# (b) semantics: a Python model of the chip's instructions
# ---------------------------------------------------------------------------------------------

def s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def u32(x: int) -> int:
    return x & 0xFFFFFFFF


def sbits(x: int, bits: int) -> int:
    """The low `bits` bits of x as a signed number."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def lanes(x: int, n: int, signed: bool) -> list[int]:
    width = 32 // n
    return [sbits(x >> (width * i), width) if signed else (x >> (width * i)) & ((1 << width) - 1)
            for i in range(n)]


def pack(values, n: int) -> int:
    width = 32 // n
    return sum((v & ((1 << width) - 1)) << (width * i) for i, v in enumerate(values))


def rnd(s: int, n: int, signed: bool) -> int:
    """(s + 2^(n-1)) >> n on a wrapping 32-bit sum; no rounding term when n == 0."""
    n &= 31
    s = u32(s + ((1 << (n - 1)) if n else 0))
    return s32(s) >> n if signed else s >> n


def shr(s: int, n: int, signed: bool) -> int:
    return s32(s) >> (n & 31) if signed else u32(s) >> (n & 31)


def sl(x):
    return sbits(x, 16)


def sh(x):
    return sbits(x >> 16, 16)


def zl(x):
    return x & 0xFFFF


def zh(x):
    return (x >> 16) & 0xFFFF


def field(size: int, off: int, fast: bool) -> tuple[int, int]:
    """(bits, offset) of a bit-field operand: 5 bits each for size - 1 and offset, cut at bit 31."""
    if fast:
        mask = u32(((size - 1) << 5) | off)
        bits, off = ((mask >> 5) & 31) + 1, mask & 31
    else:
        bits, off = ((size - 1) & 31) + 1, off & 31
    return min(bits, 32 - off), off


def extract(x, size, off, signed, fast=False):
    bits, off = field(size, off, fast)
    v = (u32(x) >> off) & ((1 << bits) - 1)
    return sbits(v, bits) if signed else v


def insert(dst, src, size, off, fast=False):
    bits, off = field(size, off, fast)
    mask = u32(((1 << bits) - 1) << off)
    return s32((u32(dst) & ~mask) | (u32(src << off) & mask))


def clb(x):
    return 0 if x == 0 else 31 - (~x if x < 0 else x).bit_length()


def cplxmul(x, y, extra):
    (xr, xi), (yr, yi) = lanes(x, 2, True), lanes(y, 2, True)
    return pack([(xr * yr - xi * yi) >> (15 + extra), (xr * yi + xi * yr) >> (15 + extra)], 2)


def lanewise(n, signed, op):
    return lambda x, y: pack([op(a, b) for a, b in zip(lanes(x, n, signed), lanes(y, n, signed))], n)


def dot(n, sx, sy):
    return lambda x, y: sum(a * b for a, b in zip(lanes(x, n, sx), lanes(y, n, sy)))


def addsub_div(sign, shift):
    return lambda x, y: pack([sbits(a + sign * b, 16) >> shift
                              for a, b in zip(lanes(x, 2, True), lanes(y, 2, True))], 2)


def vit(x, y, p, q):
    xs, ys, ps, qs = (lanes(v, 2, True) for v in (x, y, p, q))
    flags = [int(a <= b) for a, b in zip(xs, ys)]
    return (pack([max(a, b) for a, b in zip(xs, ys)], 2),
            pack([((b if f else a) << 1) | f for a, b, f in zip(ps, qs, flags)], 2))


# Argument kinds: i any int32, a int32 but INT_MIN (gap_abs is C's unary minus), n shift amount,
# p clip precision, b clipr bound, s bit-field size, o bit-field offset.
KIND_RANGES = {"i": (-(1 << 31), (1 << 31) - 1), "a": (-(1 << 31) + 1, (1 << 31) - 1), "n": (0, 31),
               "p": (0, 31), "b": (0, (1 << 31) - 1), "s": (1, 32), "o": (0, 31)}
EDGES = {"i": [0, 1, -1, 2, -2, 0x7F, -0x80, 0xFF, 0x7FFF, -0x8000, 0x8000, 0xFFFF, -0x10000, 0x12345678,
               -0x12345678, 0x7FFFFFFF, -0x80000000, s32(0x80008000), 0x7FFF7FFF, s32(0x807F80FF)],
         "n": [0, 1, 2, 15, 16, 30, 31], "p": [0, 1, 7, 8, 15, 16, 30, 31],
         "b": [0, 1, 127, 255, 0x7FFF, 0x7FFFFFFF], "s": [1, 2, 8, 16, 31, 32], "o": [0, 1, 8, 16, 31]}
EDGES["a"] = [v for v in EDGES["i"] if v != -0x80000000]
# fewer values when an operation takes three or four arguments
SMALL_EDGES = {"i": [0, -1, 0x7FFF, -0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000, s32(0x80008000)],
               "n": [0, 1, 16, 31], "s": [1, 8, 31, 32], "o": [0, 8, 31]}

MODEL: dict[str, tuple[str, object]] = {
    "gap_min": ("ii", min), "gap_max": ("ii", max), "gap_abs": ("a", abs),
    "gap_clip": ("ip", lambda x, p: max(-(1 << p), min((1 << p) - 1, x))),
    "gap_clipu": ("ip", lambda x, p: max(0, min((1 << p) - 1, x))),
    "gap_clipr": ("ib", lambda x, b: b if x > b else max(x, -(b + 1))),
    "gap_clipur": ("ib", lambda x, b: b if x > b else max(x, 0)),
    "gap_trunh": ("i", lambda x: sbits(x, 16)), "gap_trunb": ("i", lambda x: sbits(x, 8)),
    "gap_norm": ("in", lambda x, n: shr(x, n, True)), "gap_normu": ("in", lambda x, n: shr(x, n, False)),
    "gap_roundnorm": ("in", lambda x, n: rnd(x, n, True)),
    "gap_roundnormu": ("in", lambda x, n: rnd(x, n, False)),
    "gap_muls": ("ii", lambda x, y: sl(x) * sl(y)), "gap_mulu": ("ii", lambda x, y: zl(x) * zl(y)),
    "gap_mulhhs": ("ii", lambda x, y: sh(x) * sh(y)), "gap_mulhhu": ("ii", lambda x, y: zh(x) * zh(y)),
    "gap_mul64h": ("ii", lambda x, y: s32((x * y) >> 32)),
    "gap_mul64uh": ("ii", lambda x, y: (u32(x) * u32(y)) >> 32),
    "gap_mul64ush": ("ii", lambda x, y: s32((u32(x) * y) >> 32)),
    "gap_dotp2": ("ii", lambda x, y: s32(dot(2, True, True)(x, y))),
    "gap_dotpu2": ("ii", lambda x, y: u32(dot(2, False, False)(x, y))),
    "gap_dotpus2": ("ii", lambda x, y: s32(dot(2, False, True)(x, y))),
    "gap_dotp4": ("ii", lambda x, y: s32(dot(4, True, True)(x, y))),
    "gap_dotpu4": ("ii", lambda x, y: u32(dot(4, False, False)(x, y))),
    "gap_dotpus4": ("ii", lambda x, y: s32(dot(4, False, True)(x, y))),
    "gap_fl1": ("i", lambda x: u32(x).bit_length() - 1 if x else 32),
    "gap_ff1": ("i", lambda x: (u32(x) & -u32(x)).bit_length() - 1 if x else 32),
    "gap_cnt": ("i", lambda x: bin(u32(x)).count("1")), "gap_clb": ("i", clb),
    "gap_rotr": ("i", lambda x: s32((u32(x) >> 1) | ((x & 1) << 31))),
    "ExtInsMaskFast": ("so", lambda s, o: u32(((s - 1) << 5) | o)),
    "ExtInsMaskSafe": ("so", lambda s, o: (((s - 1) & 31) << 5) | (o & 31)),
    "gap_pack2": ("ii", lambda x, y: pack([x, y], 2)), "gap_packu2": ("ii", lambda x, y: pack([x, y], 2)),
    "gap_pack4": ("iiii", lambda *v: pack(v, 4)), "gap_packu4": ("iiii", lambda *v: pack(v, 4)),
    "gap_abs2": ("i", lambda x: pack([abs(a) for a in lanes(x, 2, True)], 2)),
    "gap_abs4": ("i", lambda x: pack([abs(a) for a in lanes(x, 4, True)], 4)),
    "gap_cplxconj": ("i", lambda x: pack([sl(x), -sh(x)], 2)),
    "gap_cplxmj": ("i", lambda x: pack([sh(x), -sl(x)], 2)),
    "gap_sub2rotmj": ("ii", lambda x, y: pack([sh(x) - sh(y), sl(y) - sl(x)], 2)),
    "vit": ("iiii", vit),
}
for _op, _sign in (("add", 1), ("sub", -1)):
    for _u, _signed in (("", True), ("u", False)):
        for _reg in ("", "_reg"):
            MODEL[f"gap_{_op}norm{_u}{_reg}"] = (
                "iin", lambda x, y, n, g=_sign, s=_signed: shr(x + g * y, n, s))
            MODEL[f"gap_{_op}roundnorm{_u}{_reg}"] = (
                "iin", lambda x, y, n, g=_sign, s=_signed: rnd(x + g * y, n, s))
for _reg in ("", "_reg"):
    for _name in ("norm", "normu", "roundnorm", "roundnormu"):
        MODEL[f"gap_{_name}{_reg}"] = MODEL[f"gap_{_name}"]
_PRODUCTS = {"s": (lambda x, y: sl(x) * sl(y), True), "u": (lambda x, y: zl(x) * zl(y), False),
             "hhs": (lambda x, y: sh(x) * sh(y), True), "hhu": (lambda x, y: zh(x) * zh(y), False)}
for _base, (_prod, _signed) in _PRODUCTS.items():
    for _f in ("", "f") if _base in ("s", "u") else ("",):  # f: the same values as the plain forms
        MODEL[f"gap_mul{_f}{_base}N"] = ("iin", lambda x, y, n, p=_prod, s=_signed: shr(p(x, y), n, s))
        MODEL[f"gap_mul{_f}{_base}RN"] = ("iin", lambda x, y, n, p=_prod, s=_signed: rnd(p(x, y), n, s))
        MODEL[f"gap_mac{_f}{_base}"] = ("iii", lambda a, x, y, p=_prod, s=_signed: (s32 if s else u32)(a + p(x, y)))
        MODEL[f"gap_mac{_f}{_base}N"] = ("iiin", lambda a, x, y, n, p=_prod, s=_signed: shr(a + p(x, y), n, s))
        MODEL[f"gap_mac{_f}{_base}RN"] = ("iiin", lambda a, x, y, n, p=_prod, s=_signed: rnd(a + p(x, y), n, s))
MODEL["gap_mulfs"], MODEL["gap_mulfu"] = MODEL["gap_muls"], MODEL["gap_mulu"]
for _n, _signed in ((2, True), (2, False), (4, True), (4, False)):
    _t = "" if _signed else "u"
    MODEL[f"gap_max{_t}{_n}"] = ("ii", lanewise(_n, _signed, max))
    MODEL[f"gap_min{_t}{_n}"] = ("ii", lanewise(_n, _signed, min))
for _n in (2, 4):
    MODEL[f"gap_add{_n}"] = ("ii", lanewise(_n, True, lambda a, b: a + b))
    MODEL[f"gap_sub{_n}"] = ("ii", lanewise(_n, True, lambda a, b: a - b))
    for _t in ("", "u", "us"):
        _d = MODEL[f"gap_dotp{_t}{_n}"][1]
        _wrap = u32 if _t == "u" else s32
        MODEL[f"gap_sumdotp{_t}{_n}"] = ("iii", lambda x, y, a, d=_d, w=_wrap: w(a + d(x, y)))
for _k, _div in ((0, ""), (1, "div2"), (2, "div4"), (3, "div8")):
    MODEL[f"gap_cplxmuls{_div}"] = ("ii", lambda x, y, k=_k: cplxmul(x, y, k))
for _sign, _op in ((1, "add"), (-1, "sub")):
    for _shift in (1, 2):
        MODEL[f"gap_{_op}2div{1 << _shift}"] = ("ii", addsub_div(_sign, _shift))
for _r, _fast in (("", False), ("_r", True), ("_r_safe", False)):
    MODEL[f"gap_bitextract{_r}"] = ("iso", lambda x, s, o, f=_fast: extract(x, s, o, True, f))
    MODEL[f"gap_bitextractu{_r}"] = ("iso", lambda x, s, o, f=_fast: extract(x, s, o, False, f))
    MODEL[f"gap_bitinsert{_r}"] = ("iiso", lambda d, x, s, o, f=_fast: insert(d, x, s, o, f))

# Gap8.h: every gap8_* builtin computes what its gap_* namesake does.
GAP8_BUILTINS = sorted(n for n in defined_names(RUNTIME_DIR / "Gap8.h")
                       if n.startswith("gap8_") and "gap_" + n[5:] in MODEL)
for _name in GAP8_BUILTINS:
    MODEL[_name] = MODEL["gap_" + _name[5:]]
MODEL["vit8"] = MODEL["vit"]

FAMILIES = {
    "min_max_abs_clip": r"gap8?_(min|max|abs|clip|trun)",
    "norm": r"gap8?_(add|sub)?(round)?normu?(_reg)?$",
    "mul": r"gap8?_mul", "mac": r"gap8?_mac",
    "dot": r"gap8?_(sum)?dotp",
    "vector": r"gap8?_(pack|max|min|add|sub|abs)[u]?[24]$",
    "complex": r"gap8?_(cplx|sub2rotmj|add2div|sub2div)|vit",
    "bits": r"gap8?_(fl1|ff1|cnt|clb|rotr|bit)|ExtInsMask",
}


def family_ops(pattern: str) -> list[str]:
    return sorted(n for n in MODEL if re.match(pattern, n))


def test_every_modelled_operation_belongs_to_a_family():
    assert {n for p in FAMILIES.values() for n in family_ops(p)} == set(MODEL)


def expected(name: str, args) -> tuple[int, int]:
    result = MODEL[name][1](*args)
    return result if isinstance(result, tuple) else (result, 0)


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    """gap_eval.c + the simulator as a shared library, loaded with cffi."""
    out = tmp_path_factory.mktemp("gap_eval")
    lib = out / "libgapeval.so"
    subprocess.run(["gcc", "-std=gnu99", "-O1", "-fPIC", "-shared", f"-DAT_SIM_NCORES={EVAL_NCORES}",
                    f"-I{RUNTIME_DIR}", str(COVERAGE_DIR / "gap_eval.c"), str(RUNTIME_DIR / "at_sim.c"),
                    "-o", str(lib)], check=True)
    ffi = FFI()
    ffi.cdef("int gap_eval(const char *, const int *, long long *);"
             "double gap_eval_float(const char *, double, int);")
    handle = ffi.dlopen(str(lib))
    buf_in, buf_out = ffi.new("int[4]"), ffi.new("long long[2]")

    def call(name: str, args) -> tuple[int, int]:
        for i in range(4):
            buf_in[i] = s32(args[i]) if i < len(args) else 0  # register patterns
        buf_out[0] = buf_out[1] = 0
        assert handle.gap_eval(name.encode(), buf_in, buf_out) == 0, f"{name} is not in gap_eval.c"
        return int(buf_out[0]), int(buf_out[1])

    call.float = lambda name, v, p: handle.gap_eval_float(name.encode(), v, p)
    return call


def edge_cases(name: str):
    kinds = MODEL[name][0]
    pools = [(SMALL_EDGES if len(kinds) >= 3 else EDGES).get(k, EDGES[k]) for k in kinds]
    return itertools.product(*pools)


def test_every_modelled_operation_is_evaluated(evaluator):
    for name in MODEL:
        evaluator(name, [1, 2, 3, 4][:len(MODEL[name][0])])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_builtins_on_edge_values(evaluator, family):
    for name in family_ops(FAMILIES[family]):
        for args in edge_cases(name):
            assert evaluator(name, args) == expected(name, args), (name, args)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_builtins_on_drawn_values(evaluator, family, data):
    name = data.draw(st.sampled_from(family_ops(FAMILIES[family])), label="builtin")
    args = [data.draw(st.integers(*KIND_RANGES[k]), label=k) for k in MODEL[name][0]]
    assert evaluator(name, args) == expected(name, args)


@pytest.mark.parametrize("name, args, result", [
    ("gap_clip", (128, 7), 127), ("gap_clip", (-129, 7), -128), ("gap_clip", (-128, 7), -128),
    ("gap_clip", (0x7FFFFFFF, 31), 0x7FFFFFFF), ("gap_clip", (5, 0), 0), ("gap_clip", (-5, 0), -1),
    ("gap_clipu", (-1, 8), 0), ("gap_clipu", (256, 8), 255), ("gap_clipr", (-300, 255), -256),
    ("gap_clipr", (300, 255), 255), ("gap_clipur", (-3, 255), 0), ("gap_clipur", (300, 255), 255),
    ("gap_roundnorm", (7, 0), 7), ("gap_roundnorm", (-7, 0), -7), ("gap_roundnorm", (5, 1), 3),
    ("gap_roundnorm", (-5, 1), -2), ("gap_roundnorm", (-6, 2), -1), ("gap_roundnormu", (-1, 1), 0),
    ("gap_roundnorm_reg", (0x7FFFFFFF, 1), -0x40000000),  # the rounding add wraps on 32 bits
    ("gap_norm_reg", (-5, 33), -3), ("gap_normu", (-1, 31), 1), ("gap_addroundnorm", (3, 4, 1), 4),
    ("gap_subnorm", (-0x80000000, 1, 0), 0x7FFFFFFF), ("gap_mulsN", (-0x8000, -0x8000, 15), 0x8000),
    ("gap_mulsRN", (3, 3, 1), 5), ("gap_mulsRN", (-3, 3, 1), -4), ("gap_muluRN", (0xFFFF, 0xFFFF, 16), 0xFFFE),
    ("gap_mulhhs", (0x00020000, -0x00030000), -6), ("gap_macs", (0x7FFFFFFF, 1, 1), -0x80000000),
    ("gap_machhuRN", (1, 0x00030000, 0x00050000, 2), 4), ("gap_mul64h", (-0x80000000, -0x80000000), 0x40000000),
    ("gap_mul64uh", (-1, -1), 0xFFFFFFFE), ("gap_dotp2", (s32(0x80008000), s32(0x80008000)), -0x80000000),
    ("gap_dotpus4", (0x000000FF, 0x000000FF), -255), ("gap_sumdotp4", (0x01010101, 0x02020202, 100), 108),
    ("gap_fl1", (0,), 32), ("gap_fl1", (1,), 0), ("gap_fl1", (-1,), 31), ("gap_ff1", (0,), 32),
    ("gap_clb", (0,), 0), ("gap_clb", (-1,), 31), ("gap_clb", (1,), 30), ("gap_clb", (0x40000000,), 0),
    ("gap_cnt", (-1,), 32), ("gap_rotr", (1,), -0x80000000),
    ("gap_bitextract", (0xF0, 4, 4), -1), ("gap_bitextractu", (0xF0, 4, 4), 15),
    ("gap_bitextract", (-0x80000000, 8, 28), -8), ("gap_bitextract", (-1, 32, 0), -1),
    ("gap_bitinsert", (0, 0xFF, 4, 8), 0xF00), ("gap_bitinsert", (-1, 0, 8, 28), 0x0FFFFFFF),
    ("gap_abs2", (0x80007FFF,), 0x80007FFF), ("gap_add2", (0x7FFF7FFF, 0x00010001), 0x80008000),
    ("gap_max4", (0x80FF7F01, 0x01020304), 0x01027F04), ("gap_maxu4", (0x80FF7F01, 0x01020304), 0x80FF7F04),
    ("gap_cplxmuls", (0x00004000, 0x00004000), 0x00002000),  # 0.5 * 0.5 = 0.25
    ("gap_cplxmuls", (0x7FFF7FFF, 0x7FFF7FFF), 0xFFFC0000),  # im = 2 * 32767^2 >> 15 wraps
    ("gap_cplxmulsdiv2", (0x7FFF7FFF, 0x7FFF7FFF), 0x7FFE0000),  # exact >> 16: no wrap
    ("gap_cplxconj", (0x80000001,), 0x80000001), ("gap_sub2rotmj", (0x00030001, 0x00010002), 0x00010002),
    ("gap_add2div2", (0x7FFF7FFF, 0x00010001), 0xC000C000), ("gap_pack2", (-1, 0x12345), 0x2345FFFF),
    ("vit", (0x00010005, 0x00020003, 0x00100020, 0x00300040), (0x00020005, 0x00610040)),
])
def test_builtin_examples(evaluator, name, args, result):
    """Hand-computed values, independent of the Python model."""
    args = [s32(a) for a in args]
    got = evaluator(name, args)
    assert got == (result if isinstance(result, tuple) else (result, 0))
    assert expected(name, args) == got


def test_core_count_names_are_the_compiled_constant(evaluator):
    assert [evaluator(n, [])[0] for n in ("gap_ncore", "gap_ncorem1", "gap8_ncore", "rt_nb_pe")] == \
        [EVAL_NCORES, EVAL_NCORES - 1, EVAL_NCORES, EVAL_NCORES]


@settings(max_examples=200, deadline=None)
@given(v=st.integers(-(1 << 20), 1 << 20), p=st.integers(0, 15),
       f=st.floats(-1000, 1000, allow_nan=False, allow_infinity=False))
def test_fixed_point_conversion_macros(evaluator, v, p, f):
    assert evaluator.float("FIX2FP", v, p) == float(np.float32(v) / np.float32(1 << p))
    assert evaluator.float("FP2FIX", f, p) == int(f * ((1 << p) - 1))
    assert evaluator.float("FP2FIXR", f, p) == int(f * ((1 << p) - 1) + 0.5)


# ---------------------------------------------------------------------------------------------
# UBSan: every builtin on edge values and random inputs in a sanitized program
# ---------------------------------------------------------------------------------------------

@cache
def _ubsan_cases() -> list[tuple[str, tuple[int, ...]]]:
    rng = random.Random(20240601)
    cases = []
    for name in sorted(MODEL):
        kinds = MODEL[name][0]
        cases += [(name, args) for args in edge_cases(name)]
        cases += [(name, tuple(rng.randint(*KIND_RANGES[k]) for k in kinds)) for _ in range(100)]
    return cases


def test_builtins_are_ubsan_clean(tmp_path):
    try:
        sanitizer_libraries()
    except HarnessError as exc:
        pytest.skip(str(exc))
    exe = tmp_path / "gap_eval"
    subprocess.run(["gcc", "-std=gnu99", "-O1", "-g", "-fsanitize=undefined", "-fno-sanitize-recover=all",
                    "-DGAP_EVAL_MAIN", f"-I{RUNTIME_DIR}", str(COVERAGE_DIR / "gap_eval.c"),
                    str(RUNTIME_DIR / "at_sim.c"), "-o", str(exe)], check=True)
    cases = _ubsan_cases()
    stdin = "".join(f"{name} {' '.join(map(str, (list(args) + [0] * 4)[:4]))}\n" for name, args in cases)
    proc = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=False)
    assert "runtime error" not in proc.stderr, proc.stderr[:2000]
    assert proc.returncode == 0, proc.stderr[:2000]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(cases)
    for (name, args), line in zip(cases, lines):
        got = tuple(int(v) for v in line.split())
        assert got == expected(name, args), (name, args)


# ---------------------------------------------------------------------------------------------
# (c) file-scope `static int ActiveCore = gap_ncore();` through host_harness.build
# ---------------------------------------------------------------------------------------------

GENERATED_C = """\
#include "CoreGen.h"

void ActiveCoreInfo(Word32 * __restrict__ Out)
{
    AT_SIM_COMPUTE(10);
    KerActiveCore(Out);
    AT_FORK(gap_ncore(), (void *) KerParActiveCore, (void *) Out);
}
"""


@pytest.fixture(scope="module", autouse=True)
def harness_cache(tmp_path_factory):
    """Builds go to a private cache so tests neither depend on nor pollute ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOTILER_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def core_gen(tmp_path_factory) -> Path:
    """A generated-like directory (C, header, manifest) calling the ActiveCore basic kernels."""
    gen = tmp_path_factory.mktemp("core_gen")
    (gen / "CoreGen.h").write_text('#include "KernelLibStdTypes.h"\n#include "ActiveCore.h"\n'
                                   "void ActiveCoreInfo(Word32 * __restrict__ Out);\n")
    (gen / "CoreGen.c").write_text(GENERATED_C)
    arg = {"name": "Out", "ctype": "Word32 * __restrict__", "pointer": True, "float": False}
    manifest = {"format": "autotiler-manifest/1", "c_files": ["CoreGen.c"], "header": "CoreGen.h",
                "l1": {"symbol": "L1_Memory", "size": 0, "dynamic": True},
                "l2": {"symbol": "L2_Memory", "size": 0, "dynamic": True},
                "kernels": [{"name": "ActiveCoreInfo", "args": [arg]}]}
    (gen / "CoreGen.json").write_text(json.dumps(manifest))
    return gen


def build_core_gen(gen: Path, **kw):
    return host_harness.build(gen, sources=[COVERAGE_DIR / "ActiveCore.c"], include_dirs=[COVERAGE_DIR], **kw)


def active_core_info(prog) -> list[int]:
    out = np.full(4 + 64, -7, dtype=np.int32)
    prog.call("ActiveCoreInfo", Out=out)
    return out.tolist()


@pytest.mark.parametrize("platform, cores", [("gap8", None), ("gap9", None), ("gap8", 4), ("gap9", 1)])
def test_file_scope_active_core_is_the_platform_core_count(core_gen, platform, cores):
    prog = build_core_gen(core_gen, platform=platform, cores=cores)
    n = prog.platform.cores
    assert n == (cores or 8)
    info = active_core_info(prog)
    assert info[:4] == [n, n, n - 1, n]
    assert info[4:4 + n] == [n] * n  # every forked core saw the same constant
    assert info[4 + n:] == [-7] * (64 - n)


def test_core_count_is_part_of_the_build(core_gen):
    eight, four, nine = (build_core_gen(core_gen, platform=p, cores=c)
                         for p, c in (("gap8", None), ("gap8", 4), ("gap9", None)))
    assert four.library != eight.library
    assert nine.library == eight.library  # gap8 and gap9 both have 8 cores


def test_run_with_another_core_count_is_refused(core_gen):
    prog = build_core_gen(core_gen)
    other = host_harness.Program(prog.library, {k: prog.kernel(k) for k in prog.kernels},
                                 prog.platform.with_overrides(cores=3))
    with pytest.raises(HarnessError, match=r"configured for 3 cores but this library was built for 8 "
                                           r"\(AT_SIM_NCORES.*cores=3"):
        other.call("ActiveCoreInfo", Out=np.zeros(68, dtype=np.int32))
    assert active_core_info(prog)[:4] == [8, 8, 7, 8]  # the refused call left nothing behind


@pytest.mark.parametrize("kw, message", [
    ({"cores": 0}, r"0 cores: the simulator runs 1 to 64"),
    ({"cores": 65}, r"65 cores: the simulator runs 1 to 64"),
    ({"cflags": ["-DAT_SIM_NCORES=2"]}, r"cflags must not set AT_SIM_NCORES"),
])
def test_bad_core_counts_are_rejected(core_gen, kw, message):
    with pytest.raises(HarnessError, match=message):
        build_core_gen(core_gen, **kw)


# ---------------------------------------------------------------------------------------------
# (d) a basic kernel in PMSIS style (pmsis.h) through host_harness.build
# ---------------------------------------------------------------------------------------------

PMSIS_C = """\
#include "PmsisGen.h"

void PmsisInfo(Word32 * __restrict__ Out)
{
    AT_SIM_COMPUTE(10);
    pi_cl_team_fork(0, (void *) KerPmsisCore, (void *) Out);
}
"""


def write_pmsis_gen(gen: Path) -> Path:
    """A hand-written generation in ``gen``: the user kernel PmsisInfo(Out) forking the
    PMSIS-style basic kernel KerPmsisCore (PmsisCore.c) on every core."""
    gen.mkdir()
    (gen / "PmsisGen.h").write_text('#include "KernelLibStdTypes.h"\n#include "PmsisCore.h"\n'
                                    "void PmsisInfo(Word32 * __restrict__ Out);\n")
    (gen / "PmsisGen.c").write_text(PMSIS_C)
    arg = {"name": "Out", "ctype": "Word32 * __restrict__", "pointer": True, "float": False}
    manifest = {"format": "autotiler-manifest/1", "c_files": ["PmsisGen.c"], "header": "PmsisGen.h",
                "l1": {"symbol": "L1_Memory", "size": 0, "dynamic": True},
                "l2": {"symbol": "L2_Memory", "size": 0, "dynamic": True},
                "kernels": [{"name": "PmsisInfo", "args": [arg]}]}
    (gen / "PmsisGen.json").write_text(json.dumps(manifest))
    return gen


@pytest.mark.parametrize("platform, cores", [("gap8", None), ("gap8", 3)])
def test_pmsis_names_on_the_simulated_cluster(tmp_path, platform, cores):
    """pi_cl_team_fork(0, ...) runs every core; each sees its pi_core_id(), the cluster's
    pi_cl_team_nb_cores(), pi_cluster_id() 0 and pi_is_fc() 0; pi_cl_team_barrier() orders the
    writes of every core before core 0 sums them."""
    gen = write_pmsis_gen(tmp_path / "gen")
    prog = host_harness.build(gen, sources=[COVERAGE_DIR / "PmsisCore.c"], include_dirs=[COVERAGE_DIR],
                              platform=platform, cores=cores)
    n = prog.platform.cores
    out = np.full(1 + 64, -7, dtype=np.int32)
    prog.call("PmsisInfo", Out=out)
    per_core = [100 * n + i for i in range(n)]
    assert out[1:1 + n].tolist() == per_core
    assert out[0] == sum(per_core)
    assert out[1 + n:].tolist() == [-7] * (64 - n)
