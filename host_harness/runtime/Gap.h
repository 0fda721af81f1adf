/*
 * Gap.h - GAP types and builtins for basic kernels compiled by the host harness.
 *
 * A basic kernel written for the GAP SDK compiles unchanged against this header: it provides
 * every gap_* builtin of the SDK's GapBuiltins.h (emulation and chip branches), the GAP9-only
 * names of its chip branch (gap_mulhhsN..., gap_cplxmulsdiv8), the core/barrier/allocation
 * names of GapSystem.h (with its rt_nb_pe/rt_team_barrier/rt_team_fork), the timer stubs of
 * at_api_emul.h, the vector and GAP9 float types of the SDK's Gap.h, and <stdio.h>/<stdlib.h>/<stdint.h>. The 2019 gap8_* names live in Gap8.h, which includes this header.
 * GAP9's half floats are the chip's (see "GAP9 half-precision floats" below): f16 is IEEE binary16
 * (gcc's _Float16, rounded after every operation), v2h two of them in 4 bytes; f16a (bfloat16 on
 * the chip) is a float and v2ah two floats, for want of a bfloat16 type in gcc 12. The SDK's float
 * headers (CNN_FloatType.h, DSP_FloatType.h, FloatDefines.h) are replaced by the same types and
 * builtins here, so its fp16 basic kernels compile unchanged (with STD_FLOAT, as NNTool builds them).
 * The SDK's other header names a kernel includes (GapBuiltins.h, GapSystem.h, at_api_emul.h,
 * pmsis.h, rt/rt_api.h...) are thin headers beside this one; docs/harness.md lists them and the
 * SDK files checked (bench/sdk_kernels.py re-runs that sweep on a copy of the SDK).
 *
 * Semantics are those of the chip, as modelled instruction by instruction by GVSOC (GreenWaves'
 * ISA simulator), not those of the SDK's x86 emulation where the two differ:
 *   - 32-bit results wrap (the emulation's signed overflows are undefined behaviour in C);
 *   - a rounding shift by 0 adds no rounding term (the emulation computes 1 << -1);
 *   - normalisation and bit-field amounts use their low 5 bits, as the instruction encodings do;
 *   - gap_fl1(0) is 32 and gap_clb(0) is 0 (the emulation calls __builtin_clz(0) / clrsb);
 *   - gap_clipr/gap_clipur clip to [-(bound+1), bound] and [0, bound] (p.clipr, p.clipur);
 *   - gap_cplxmulsdiv2/4/8 shift the exact products by 16/17/18 (the emulation shifts the
 *     16-bit result of gap_cplxmuls again), gap_machhuRN rounds and shifts (the emulation adds n);
 *   - gap_vitmax/gap_vitsel keep their selection flags per core, as the chip's registers are.
 * Every helper is a static inline function on fixed-width values (C99-clean under -Wall -Wextra,
 * UBSan-clean: wrapping arithmetic is done in unsigned or 64-bit). Macros are: gap_min/gap_max/
 * gap_abs (type-generic, as in the original), the builtins reading vectors (see "private helpers"
 * below) and the names that must be constant expressions or statements (gap_ncore(), timers,
 * barriers, allocation).
 *
 * Core identity comes from the simulator: gap_coreid() is the running core inside AT_FORK (0
 * elsewhere) and gap_waitbarrier() a real barrier across the forked cores. gap_ncore() is the
 * integer constant AT_SIM_NCORES (at_sim.h), which host_harness.build passes to every compile, so
 * `static int ActiveCore = gap_ncore();` compiles at file scope as with the original emulation.
 */
#ifndef GAP_H
#define GAP_H

/* The SDK's emulation headers bring these in, and basic kernels call printf / malloc through them. */
#include <stdio.h>
#include <stdlib.h>
/* And the fixed-width types: the SDK's generators declare arguments as int16_t, uint8_t, ... */
#include <stdint.h>

#include "at_api.h"

/* ---- scalar and vector types ----------------------------------------------------------- */

typedef signed char Word8;
typedef short Word16;
typedef int Word32;
typedef unsigned char Wordu8;
typedef unsigned short Wordu16;
typedef unsigned int Wordu32;

typedef short v2s __attribute__((vector_size(4)));
typedef signed char v4s __attribute__((vector_size(4)));
typedef unsigned short v2u __attribute__((vector_size(4)));
typedef unsigned char v4u __attribute__((vector_size(4)));

/* GAP9 half-precision floats. On the chip f16 (GAP9 gcc's float16) is IEEE binary16, f16a
 * (float16alt) bfloat16, v2h and v2ah 4-byte vectors of two such lanes, and V2S, what comparing two
 * v2h yields and the mask type of their __builtin_shuffle, is v2s.
 *   - Where gcc has _Float16 (x86-64, gcc 12 and later: __FLT16_MAX__ is defined), f16 is _Float16
 *     and v2h two _Float16 lanes: the chip's sizes, its lane layout (a (v2s){0, 2} shuffle mask
 *     works) and its rounding: every operation rounds to binary16, to nearest even, as fadd.h,
 *     fmul.h, vfadd.h... do. The pragma below makes gcc do so for scalars too (-fexcess-precision=16:
 *     by default x86 gcc evaluates a _Float16 expression in float and rounds once, at its end).
 *     Not modelled: the chip compiler contracting a*b+c into one fmadd.h / vfmac.h (one rounding).
 *   - f16a stays float and v2ah two floats (8 bytes; 4 on the chip): gcc 12 has no bfloat16 type
 *     with arithmetic (__bf16 arithmetic came with gcc 13), so f16a values and operations are those
 *     of float, not rounded to bfloat16's 8 significant bits.
 *   - A compiler without _Float16 (riscv gcc 12 without zfh: bench/rv32.py's rv32imc check) keeps the
 *     SDK's __FLOAT_EMUL__ host types: f16 float, v2h two floats, V2S two ints.
 * The SDK's float headers choose their host types with __FLOAT_EMUL__ and __EMUL__ (which
 * host_harness.build passes to every unit); their host branches would make F16 a float with an
 * 8-byte F16V, which the fp16 kernels' (v2s) shuffle masks do not fit. So Gap.h provides the
 * chip's types under their names and claims their include guards: CNN_FloatType.h's F16, F16V and
 * F16SV (binary16 with STD_FLOAT, as NNTool's fp16 builds define it, f16a otherwise, as on the
 * chip), DSP_FloatType.h's F16_DSP, F16V_DSP and F16SV_DSP (f16a with F16_DSP_BFLOAT, binary16
 * otherwise), and FloatDefines.h's builtins (see "GAP9 float builtins" below). __FLOAT_EMUL__ stays
 * set: FastFloatApprox16.h then takes its float approximations rather than bit tricks written for
 * a 2-byte f16a. */
#ifndef __FLOAT_EMUL__
#define __FLOAT_EMUL__ 1
#endif
#if defined(__FLT16_MAX__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("excess-precision=16")
#endif
typedef _Float16 f16;
typedef _Float16 v2h __attribute__((vector_size(4)));
typedef v2s V2S;
#else
typedef float f16;
typedef float v2h __attribute__((vector_size(8)));
typedef int V2S __attribute__((vector_size(8)));
#endif
typedef float f16a;
typedef float v2ah __attribute__((vector_size(8)));
/* The GAP9 compiler's own names of the two half types (its builtin float16 and float16alt, which
 * f16 and f16a name on the chip): the SDK's CNN_Defines_fp16.h writes its LEAK_CONSTANT as
 * ((float16)0.1) or ((float16alt)0.1) when __gap9__ is defined, and CNN_BasicKernels_fp16.h's
 * LeakyReLU_fp16 uses it, so every fp16 kernel built with -D__gap9__ names them. */
typedef f16 float16;
typedef f16a float16alt;

#if defined(__CNN_FLOAT_TYPE_H__) || defined(__DSP_FLOAT_TYPE_H__) || defined(__FLOAT_DEFINES_H__)
#error "an SDK float header (CNN_FloatType.h, DSP_FloatType.h or FloatDefines.h) was included \
before Gap.h: include Gap.h first, its types and builtins replace the header's host branch"
#endif
#define __CNN_FLOAT_TYPE_H__
#define __DSP_FLOAT_TYPE_H__
#define __FLOAT_DEFINES_H__
#ifdef STD_FLOAT
typedef f16 F16;
typedef v2h F16V;
#else
typedef f16a F16;
typedef v2ah F16V;
#endif
union at_gap_f16sv {
    F16 S;
    F16V V;
};
typedef union at_gap_f16sv F16SV;
#ifdef F16_DSP_BFLOAT
typedef f16a F16_DSP;
typedef v2ah F16V_DSP;
#else
typedef f16 F16_DSP;
typedef v2h F16V_DSP;
#endif
union at_gap_f16sv_dsp {
    F16_DSP S;
    F16V_DSP V;
};
typedef union at_gap_f16sv_dsp F16SV_DSP;

/* M_PI as the SDK's gnu99 emulation builds see it from <math.h> (strict c99 hides it): its
 * FFT and HoG kernels use it to build their tables. */
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The runtime's pointer type on a host (an address on the chip). */
typedef void *rt_pointerT;

/* Placement attribute of L2 data in PMSIS code: nothing to place on a host. */
#ifndef PI_L2
#define PI_L2
#endif

/* ---- cores and barriers ---------------------------------------------------------------- */

static inline int gap_coreid(void) { return at_sim_core_id(); }
/* The chip branch names this gap_coreidm1 on GAP8 and it reads the core id. */
static inline int gap_coreidm1(void) { return at_sim_core_id(); }
static inline int gap_clusterid(void) { return 0; }
/* Integer constant expressions (see the file comment). */
#define gap_ncore() (AT_SIM_NCORES)
#define gap_ncorem1() (AT_SIM_NCORES - 1)

static inline void gap_waitbarrier(int barrier_id) { (void)barrier_id; at_sim_barrier(); }
/* The cluster-controller barrier: gap_waitbarrier_cc() in PMSIS, gap_waitbarrier_cc(BarN) in
 * the emulation; both spellings work. */
#define gap_waitbarrier_cc(...) at_sim_barrier()
/* Barriers need no setup in the simulator: the arguments are evaluated and ignored. */
#define gap_setupbarrier(BarN, CoreM) ((void)(BarN), (void)(CoreM))

/* Runtime names of the SDK's GapSystem.h: the team size (a constant, as gap_ncore()), its
 * barrier, and a team fork that runs fn(arg) on `cores` simulated cores as AT_FORK does (the
 * emulation called it once). */
#define rt_nb_pe() (AT_SIM_NCORES)
static inline void rt_team_barrier(void) { at_sim_barrier(); }
#define rt_team_fork(cores, fn, arg) AT_FORK(cores, fn, arg)

/* Legacy names kept here for kernels that include only Gap.h; Gap8.h has the rest of that era. */
static inline int gap8_coreid(void) { return at_sim_core_id(); }
#define gap8_ncore() (AT_SIM_NCORES)

/* ---- timers: reads give the simulated clock (cycles since the call began; the SDK's emulation
 * read 0), start/reset do nothing (the clock starts at 0 with every call) -------------------- */

#define gap_fc_starttimer() ((void)0)
#define gap_fc_resethwtimer() ((void)0)
#define gap_fc_readhwtimer() ((int)at_sim_clock())
#define gap_cl_starttimer() ((void)0)
#define gap_cl_resethwtimer() ((void)0)
#define gap_cl_readhwtimer() ((int)at_sim_clock())

/* ---- allocation: simulated L1/L2 arenas (NULL past capacity, as on the chip) ------------- */

#define gap_allocL1(size) \
    at_sim_alloc_at(AT_SIM_L1, (long long)(size), "gap_allocL1", __FILE__, __LINE__)
#define gap_allocL2(size) \
    at_sim_alloc_at(AT_SIM_L2, (long long)(size), "gap_allocL2", __FILE__, __LINE__)
#define gap_freeL1(ptr, size) \
    at_sim_free(AT_SIM_L1, (void *)(ptr), (long long)(size), __FILE__, __LINE__)
#define gap_freeL2(ptr, size) \
    at_sim_free(AT_SIM_L2, (void *)(ptr), (long long)(size), __FILE__, __LINE__)

/* ---- min / max / abs (type-generic, as in the original macros) ------------------------- */

#define gap_min(a, b) (((a) < (b)) ? (a) : (b))
#define gap_max(a, b) (((a) > (b)) ? (a) : (b))
#define gap_abs(a) (((a) < 0) ? -(a) : (a))

/* ---- private helpers (at_gap_*) -------------------------------------------------------- */
/* Builtins that read vectors are macros over typed at_gap_* functions: each argument is
 * reinterpreted as the vector type the instruction reads (gap_dotp4 reads signed bytes whether it
 * is handed a v4s or a v4u), so any 4-byte vector is accepted, as by the chip's builtins and the
 * original's macros; implicit C conversions between such vectors do not compile. */

/* Signed and unsigned low / high 16-bit halves of a register. */
static inline int at_gap_sl(int x) { return (short)(unsigned short)((unsigned int)x & 0xFFFFu); }
static inline int at_gap_sh(int x) { return (short)(unsigned short)((unsigned int)x >> 16); }
static inline unsigned int at_gap_zl(int x) { return (unsigned int)x & 0xFFFFu; }
static inline unsigned int at_gap_zh(int x) { return (unsigned int)x >> 16; }

/* A 32-bit sum s, plus 2^(n-1) when n > 0 (wrapping), shifted right by n (n taken mod 32),
 * arithmetically (rns) or logically (rnu). */
static inline int at_gap_rns(unsigned int s, int n)
{
    n &= 31;
    if (n)
        s += 1u << (n - 1);
    return (int)s >> n;
}

static inline unsigned int at_gap_rnu(unsigned int s, int n)
{
    n &= 31;
    if (n)
        s += 1u << (n - 1);
    return s >> n;
}

/* ---- packing ----------------------------------------------------------------------------- */

static inline v2s gap_pack2(int x, int y)
{
    v2s r = {(short)x, (short)y};
    return r;
}

static inline v2u gap_packu2(int x, int y)
{
    v2u r = {(unsigned short)x, (unsigned short)y};
    return r;
}

static inline v4s gap_pack4(int x, int y, int z, int t)
{
    v4s r = {(signed char)x, (signed char)y, (signed char)z, (signed char)t};
    return r;
}

static inline v4u gap_packu4(int x, int y, int z, int t)
{
    v4u r = {(unsigned char)x, (unsigned char)y, (unsigned char)z, (unsigned char)t};
    return r;
}

/* ---- lane-wise max / min / add / sub / abs (add, sub and abs wrap in each lane) ---------- */

static inline v2s at_gap_max2(v2s x, v2s y)
{
    v2s r = {gap_max(x[0], y[0]), gap_max(x[1], y[1])};
    return r;
}
#define gap_max2(x, y) at_gap_max2((v2s)(x), (v2s)(y))

static inline v4s at_gap_max4(v4s x, v4s y)
{
    v4s r = {gap_max(x[0], y[0]), gap_max(x[1], y[1]), gap_max(x[2], y[2]), gap_max(x[3], y[3])};
    return r;
}
#define gap_max4(x, y) at_gap_max4((v4s)(x), (v4s)(y))

static inline v2u at_gap_maxu2(v2u x, v2u y)
{
    v2u r = {gap_max(x[0], y[0]), gap_max(x[1], y[1])};
    return r;
}
#define gap_maxu2(x, y) at_gap_maxu2((v2u)(x), (v2u)(y))

static inline v4u at_gap_maxu4(v4u x, v4u y)
{
    v4u r = {gap_max(x[0], y[0]), gap_max(x[1], y[1]), gap_max(x[2], y[2]), gap_max(x[3], y[3])};
    return r;
}
#define gap_maxu4(x, y) at_gap_maxu4((v4u)(x), (v4u)(y))

static inline v2s at_gap_min2(v2s x, v2s y)
{
    v2s r = {gap_min(x[0], y[0]), gap_min(x[1], y[1])};
    return r;
}
#define gap_min2(x, y) at_gap_min2((v2s)(x), (v2s)(y))

static inline v4s at_gap_min4(v4s x, v4s y)
{
    v4s r = {gap_min(x[0], y[0]), gap_min(x[1], y[1]), gap_min(x[2], y[2]), gap_min(x[3], y[3])};
    return r;
}
#define gap_min4(x, y) at_gap_min4((v4s)(x), (v4s)(y))

static inline v2u at_gap_minu2(v2u x, v2u y)
{
    v2u r = {gap_min(x[0], y[0]), gap_min(x[1], y[1])};
    return r;
}
#define gap_minu2(x, y) at_gap_minu2((v2u)(x), (v2u)(y))

static inline v4u at_gap_minu4(v4u x, v4u y)
{
    v4u r = {gap_min(x[0], y[0]), gap_min(x[1], y[1]), gap_min(x[2], y[2]), gap_min(x[3], y[3])};
    return r;
}
#define gap_minu4(x, y) at_gap_minu4((v4u)(x), (v4u)(y))

static inline v2s at_gap_add2(v2s x, v2s y)
{
    v2s r = {(short)(x[0] + y[0]), (short)(x[1] + y[1])};
    return r;
}
#define gap_add2(x, y) at_gap_add2((v2s)(x), (v2s)(y))

static inline v4s at_gap_add4(v4s x, v4s y)
{
    v4s r = {(signed char)(x[0] + y[0]), (signed char)(x[1] + y[1]),
             (signed char)(x[2] + y[2]), (signed char)(x[3] + y[3])};
    return r;
}
#define gap_add4(x, y) at_gap_add4((v4s)(x), (v4s)(y))

static inline v2s at_gap_sub2(v2s x, v2s y)
{
    v2s r = {(short)(x[0] - y[0]), (short)(x[1] - y[1])};
    return r;
}
#define gap_sub2(x, y) at_gap_sub2((v2s)(x), (v2s)(y))

static inline v4s at_gap_sub4(v4s x, v4s y)
{
    v4s r = {(signed char)(x[0] - y[0]), (signed char)(x[1] - y[1]),
             (signed char)(x[2] - y[2]), (signed char)(x[3] - y[3])};
    return r;
}
#define gap_sub4(x, y) at_gap_sub4((v4s)(x), (v4s)(y))

static inline v2s at_gap_abs2(v2s x)
{
    v2s r = {(short)gap_abs(x[0]), (short)gap_abs(x[1])};
    return r;
}
#define gap_abs2(x) at_gap_abs2((v2s)(x))

static inline v4s at_gap_abs4(v4s x)
{
    v4s r = {(signed char)gap_abs(x[0]), (signed char)gap_abs(x[1]),
             (signed char)gap_abs(x[2]), (signed char)gap_abs(x[3])};
    return r;
}
#define gap_abs4(x) at_gap_abs4((v4s)(x))

/* ---- clipping and truncation --------------------------------------------------------------- */

/* Clip to [-2^prec, 2^prec - 1]. */
static inline int gap_clip(int x, int prec)
{
    long long hi = (1LL << prec) - 1, lo = -(1LL << prec);
    return x < lo ? (int)lo : (x > hi ? (int)hi : x);
}

/* Clip to [0, 2^prec - 1]. */
static inline int gap_clipu(int x, int prec)
{
    long long hi = (1LL << prec) - 1;
    return x < 0 ? 0 : (x > hi ? (int)hi : x);
}

/* p.clipr: clip to [-(bound + 1), bound]. */
static inline int gap_clipr(int x, int bound)
{
    long long lo = -(long long)bound - 1;
    return x > bound ? bound : (x < lo ? (int)lo : x);
}

/* p.clipur: clip to [0, bound]. */
static inline int gap_clipur(int x, int bound) { return x > bound ? bound : (x < 0 ? 0 : x); }

static inline short gap_trunh(int x) { return (short)x; }
static inline signed char gap_trunb(int x) { return (signed char)x; }

/* ---- normalisation: (x [+|-] y [+ 2^(n-1)]) >> n on the 32-bit (wrapping) sum --------------- */
/* The _reg forms take n in a register, the others as an immediate: same result. */

static inline int gap_addnorm_reg(int x, int y, int n)
{
    return at_gap_rns((unsigned int)x + (unsigned int)y, 0) >> (n & 31);
}
static inline int gap_addnorm(int x, int y, int n) { return gap_addnorm_reg(x, y, n); }
static inline unsigned int gap_addnormu_reg(int x, int y, int n)
{
    return ((unsigned int)x + (unsigned int)y) >> (n & 31);
}
static inline unsigned int gap_addnormu(int x, int y, int n) { return gap_addnormu_reg(x, y, n); }

static inline int gap_addroundnorm_reg(int x, int y, int n)
{
    return at_gap_rns((unsigned int)x + (unsigned int)y, n);
}
static inline int gap_addroundnorm(int x, int y, int n) { return gap_addroundnorm_reg(x, y, n); }
static inline unsigned int gap_addroundnormu_reg(int x, int y, int n)
{
    return at_gap_rnu((unsigned int)x + (unsigned int)y, n);
}
static inline unsigned int gap_addroundnormu(int x, int y, int n)
{
    return gap_addroundnormu_reg(x, y, n);
}

static inline int gap_subnorm_reg(int x, int y, int n)
{
    return at_gap_rns((unsigned int)x - (unsigned int)y, 0) >> (n & 31);
}
static inline int gap_subnorm(int x, int y, int n) { return gap_subnorm_reg(x, y, n); }
static inline unsigned int gap_subnormu_reg(int x, int y, int n)
{
    return ((unsigned int)x - (unsigned int)y) >> (n & 31);
}
static inline unsigned int gap_subnormu(int x, int y, int n) { return gap_subnormu_reg(x, y, n); }

static inline int gap_subroundnorm_reg(int x, int y, int n)
{
    return at_gap_rns((unsigned int)x - (unsigned int)y, n);
}
static inline int gap_subroundnorm(int x, int y, int n) { return gap_subroundnorm_reg(x, y, n); }
static inline unsigned int gap_subroundnormu_reg(int x, int y, int n)
{
    return at_gap_rnu((unsigned int)x - (unsigned int)y, n);
}
static inline unsigned int gap_subroundnormu(int x, int y, int n)
{
    return gap_subroundnormu_reg(x, y, n);
}

/* Arithmetic (norm) or logical (normu) shift right, without and with rounding. */
static inline int gap_norm_reg(int x, int n) { return x >> (n & 31); }
static inline int gap_norm(int x, int n) { return gap_norm_reg(x, n); }
static inline unsigned int gap_normu_reg(int x, int n) { return (unsigned int)x >> (n & 31); }
static inline unsigned int gap_normu(int x, int n) { return gap_normu_reg(x, n); }
static inline int gap_roundnorm_reg(int x, int n) { return at_gap_rns((unsigned int)x, n); }
static inline int gap_roundnorm(int x, int n) { return gap_roundnorm_reg(x, n); }
static inline unsigned int gap_roundnormu_reg(int x, int n)
{
    return at_gap_rnu((unsigned int)x, n);
}
static inline unsigned int gap_roundnormu(int x, int n) { return gap_roundnormu_reg(x, n); }

/* ---- 16x16 multiplications: s = signed, u = unsigned halves; hh = high halves ------------ */
/* N: product >> n; RN: rounded, as gap_roundnorm. The f (fractional) forms compute the same
 * values as the plain ones, as in the SDK's emulation. */

static inline int gap_muls(int x, int y) { return at_gap_sl(x) * at_gap_sl(y); }
static inline unsigned int gap_mulu(int x, int y) { return at_gap_zl(x) * at_gap_zl(y); }
static inline int gap_mulhhs(int x, int y) { return at_gap_sh(x) * at_gap_sh(y); }
static inline unsigned int gap_mulhhu(int x, int y) { return at_gap_zh(x) * at_gap_zh(y); }
static inline int gap_mulfs(int x, int y) { return gap_muls(x, y); }
static inline unsigned int gap_mulfu(int x, int y) { return gap_mulu(x, y); }

static inline int gap_mulsN(int x, int y, int n) { return gap_muls(x, y) >> (n & 31); }
static inline int gap_mulsRN(int x, int y, int n)
{
    return at_gap_rns((unsigned int)gap_muls(x, y), n);
}
static inline unsigned int gap_muluN(int x, int y, int n) { return gap_mulu(x, y) >> (n & 31); }
static inline unsigned int gap_muluRN(int x, int y, int n) { return at_gap_rnu(gap_mulu(x, y), n); }
static inline int gap_mulhhsN(int x, int y, int n) { return gap_mulhhs(x, y) >> (n & 31); }
static inline int gap_mulhhsRN(int x, int y, int n)
{
    return at_gap_rns((unsigned int)gap_mulhhs(x, y), n);
}
static inline unsigned int gap_mulhhuN(int x, int y, int n) { return gap_mulhhu(x, y) >> (n & 31); }
static inline unsigned int gap_mulhhuRN(int x, int y, int n)
{
    return at_gap_rnu(gap_mulhhu(x, y), n);
}
static inline int gap_mulfsN(int x, int y, int n) { return gap_mulsN(x, y, n); }
static inline int gap_mulfsRN(int x, int y, int n) { return gap_mulsRN(x, y, n); }
static inline unsigned int gap_mulfuN(int x, int y, int n) { return gap_muluN(x, y, n); }
static inline unsigned int gap_mulfuRN(int x, int y, int n) { return gap_muluRN(x, y, n); }

/* High 32 bits of the 64-bit product: signed x signed, unsigned x unsigned, unsigned x signed. */
static inline int gap_mul64h(int x, int y) { return (int)(((long long)x * y) >> 32); }
static inline unsigned int gap_mul64uh(unsigned int x, unsigned int y)
{
    return (unsigned int)(((unsigned long long)x * y) >> 32);
}
static inline int gap_mul64ush(unsigned int x, int y) { return (int)(((long long)x * y) >> 32); }

/* ---- multiply-accumulate: Acc + product on 32 bits (wrapping), then N / RN as above ------- */

static inline int gap_macs(int acc, int x, int y)
{
    return (int)((unsigned int)acc + (unsigned int)gap_muls(x, y));
}
static inline int gap_machhs(int acc, int x, int y)
{
    return (int)((unsigned int)acc + (unsigned int)gap_mulhhs(x, y));
}
static inline unsigned int gap_macu(int acc, int x, int y)
{
    return (unsigned int)acc + gap_mulu(x, y);
}
static inline unsigned int gap_machhu(int acc, int x, int y)
{
    return (unsigned int)acc + gap_mulhhu(x, y);
}
static inline int gap_macfs(int acc, int x, int y) { return gap_macs(acc, x, y); }
static inline unsigned int gap_macfu(int acc, int x, int y) { return gap_macu(acc, x, y); }

static inline int gap_macsN(int acc, int x, int y, int n)
{
    return gap_macs(acc, x, y) >> (n & 31);
}
static inline int gap_macsRN(int acc, int x, int y, int n)
{
    return at_gap_rns((unsigned int)gap_macs(acc, x, y), n);
}
static inline unsigned int gap_macuN(int acc, int x, int y, int n)
{
    return gap_macu(acc, x, y) >> (n & 31);
}
static inline unsigned int gap_macuRN(int acc, int x, int y, int n)
{
    return at_gap_rnu(gap_macu(acc, x, y), n);
}
static inline int gap_machhsN(int acc, int x, int y, int n)
{
    return gap_machhs(acc, x, y) >> (n & 31);
}
static inline int gap_machhsRN(int acc, int x, int y, int n)
{
    return at_gap_rns((unsigned int)gap_machhs(acc, x, y), n);
}
static inline unsigned int gap_machhuN(int acc, int x, int y, int n)
{
    return gap_machhu(acc, x, y) >> (n & 31);
}
static inline unsigned int gap_machhuRN(int acc, int x, int y, int n)
{
    return at_gap_rnu(gap_machhu(acc, x, y), n);
}
static inline int gap_macfsN(int acc, int x, int y, int n) { return gap_macsN(acc, x, y, n); }
static inline int gap_macfsRN(int acc, int x, int y, int n) { return gap_macsRN(acc, x, y, n); }
static inline unsigned int gap_macfuN(int acc, int x, int y, int n)
{
    return gap_macuN(acc, x, y, n);
}
static inline unsigned int gap_macfuRN(int acc, int x, int y, int n)
{
    return gap_macuRN(acc, x, y, n);
}

/* ---- dot products (u = unsigned x unsigned, us = unsigned x signed), sums wrap on 32 bits -- */

/* In the GVSoC target build (RV_ISA_RV32, from ~/.cache/gvsoc/env.sh's RV_CFLAGS) the dot products
 * are the cluster core's Xpulpv2 SIMD instructions, as the SDK's builtins compile to on GAP; Debian's
 * riscv64-unknown-elf-gcc (rv32imc) has no PULP extension, so they are written as `.insn r`
 * encodings. Each is an R-type on opcode 0x57 (OP-V's major opcode, PULP's SIMD space), funct3 0 for
 * the 2 x int16 form (.h) and 1 for the 4 x int8 form (.b), funct7 from GVSoC's isa_pulpv2.py (its
 * low bit, '-' there, is the sci immediate's top bit and 0 for the register forms):
 *   pv.dotsp  0x4c   pv.dotup  0x40   pv.dotusp  0x44     rd = x . y          (rs1 = x, rs2 = y)
 *   pv.sdotsp 0x5c   pv.sdotup 0x50   pv.sdotusp 0x54     rd = rd + x . y     (rd read and written)
 * "us" takes rs1 unsigned and rs2 signed. Results are those of the plain C below, bit for bit
 * (tests/test_gvsoc_simd.py compares both on GVSoC). -DAT_GAP_PLAIN_C keeps the plain C on the
 * target too (to measure what the instructions save). */
#if defined(RV_ISA_RV32) && !defined(AT_GAP_PLAIN_C)
/* (lower case: Gap.h's private names are at_gap_*, the public ones the SDK's) */
#define at_gap_xpulpv2 1

/* The vector's 4 bytes as the 32-bit register the instruction reads (same size: GCC's cast). */
#define at_gap_pv_reg(v) ((int)(v))

#define at_gap_pv_dot(name, funct3, funct7)                                                             \
    static inline int name(int x, int y)                                                                \
    {                                                                                                   \
        int r;                                                                                          \
        __asm__(".insn r 0x57, " #funct3 ", " #funct7 ", %0, %1, %2" : "=r"(r) : "r"(x), "r"(y));       \
        return r;                                                                                       \
    }
#define at_gap_pv_sdot(name, funct3, funct7)                                                            \
    static inline int name(int x, int y, int acc)                                                       \
    {                                                                                                   \
        __asm__(".insn r 0x57, " #funct3 ", " #funct7 ", %0, %1, %2" : "+r"(acc) : "r"(x), "r"(y));     \
        return acc;                                                                                     \
    }

at_gap_pv_dot(at_gap_pv_dotsp_h, 0, 0x4c)
at_gap_pv_dot(at_gap_pv_dotup_h, 0, 0x40)
at_gap_pv_dot(at_gap_pv_dotusp_h, 0, 0x44)
at_gap_pv_dot(at_gap_pv_dotsp_b, 1, 0x4c)
at_gap_pv_dot(at_gap_pv_dotup_b, 1, 0x40)
at_gap_pv_dot(at_gap_pv_dotusp_b, 1, 0x44)
at_gap_pv_sdot(at_gap_pv_sdotsp_h, 0, 0x5c)
at_gap_pv_sdot(at_gap_pv_sdotup_h, 0, 0x50)
at_gap_pv_sdot(at_gap_pv_sdotusp_h, 0, 0x54)
at_gap_pv_sdot(at_gap_pv_sdotsp_b, 1, 0x5c)
at_gap_pv_sdot(at_gap_pv_sdotup_b, 1, 0x50)
at_gap_pv_sdot(at_gap_pv_sdotusp_b, 1, 0x54)
#endif

static inline int at_gap_dotp2(v2s x, v2s y)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_dotsp_h(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return (int)((unsigned int)(x[0] * y[0]) + (unsigned int)(x[1] * y[1]));
#endif
}
#define gap_dotp2(x, y) at_gap_dotp2((v2s)(x), (v2s)(y))

static inline unsigned int at_gap_dotpu2(v2u x, v2u y)
{
#if defined(at_gap_xpulpv2)
    return (unsigned int)at_gap_pv_dotup_h(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return (unsigned int)x[0] * y[0] + (unsigned int)x[1] * y[1];
#endif
}
#define gap_dotpu2(x, y) at_gap_dotpu2((v2u)(x), (v2u)(y))

static inline int at_gap_dotpus2(v2u x, v2s y)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_dotusp_h(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return (int)((unsigned int)(x[0] * y[0]) + (unsigned int)(x[1] * y[1]));
#endif
}
#define gap_dotpus2(x, y) at_gap_dotpus2((v2u)(x), (v2s)(y))

static inline int at_gap_dotp4(v4s x, v4s y)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_dotsp_b(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
#endif
}
#define gap_dotp4(x, y) at_gap_dotp4((v4s)(x), (v4s)(y))

static inline unsigned int at_gap_dotpu4(v4u x, v4u y)
{
#if defined(at_gap_xpulpv2)
    return (unsigned int)at_gap_pv_dotup_b(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return (unsigned int)(x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3]);
#endif
}
#define gap_dotpu4(x, y) at_gap_dotpu4((v4u)(x), (v4u)(y))

static inline int at_gap_dotpus4(v4u x, v4s y)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_dotusp_b(at_gap_pv_reg(x), at_gap_pv_reg(y));
#else
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
#endif
}
#define gap_dotpus4(x, y) at_gap_dotpus4((v4u)(x), (v4s)(y))

static inline int at_gap_sumdotp2(v2s x, v2s y, int acc)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_sdotsp_h(at_gap_pv_reg(x), at_gap_pv_reg(y), acc);
#else
    return (int)((unsigned int)acc + (unsigned int)at_gap_dotp2(x, y));
#endif
}
#define gap_sumdotp2(x, y, acc) at_gap_sumdotp2((v2s)(x), (v2s)(y), (acc))

static inline unsigned int at_gap_sumdotpu2(v2u x, v2u y, unsigned int acc)
{
#if defined(at_gap_xpulpv2)
    return (unsigned int)at_gap_pv_sdotup_h(at_gap_pv_reg(x), at_gap_pv_reg(y), (int)acc);
#else
    return acc + at_gap_dotpu2(x, y);
#endif
}
#define gap_sumdotpu2(x, y, acc) at_gap_sumdotpu2((v2u)(x), (v2u)(y), (acc))

static inline int at_gap_sumdotpus2(v2u x, v2s y, int acc)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_sdotusp_h(at_gap_pv_reg(x), at_gap_pv_reg(y), acc);
#else
    return (int)((unsigned int)acc + (unsigned int)at_gap_dotpus2(x, y));
#endif
}
#define gap_sumdotpus2(x, y, acc) at_gap_sumdotpus2((v2u)(x), (v2s)(y), (acc))

static inline int at_gap_sumdotp4(v4s x, v4s y, int acc)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_sdotsp_b(at_gap_pv_reg(x), at_gap_pv_reg(y), acc);
#else
    return (int)((unsigned int)acc + (unsigned int)at_gap_dotp4(x, y));
#endif
}
#define gap_sumdotp4(x, y, acc) at_gap_sumdotp4((v4s)(x), (v4s)(y), (acc))

static inline unsigned int at_gap_sumdotpu4(v4u x, v4u y, unsigned int acc)
{
#if defined(at_gap_xpulpv2)
    return (unsigned int)at_gap_pv_sdotup_b(at_gap_pv_reg(x), at_gap_pv_reg(y), (int)acc);
#else
    return acc + at_gap_dotpu4(x, y);
#endif
}
#define gap_sumdotpu4(x, y, acc) at_gap_sumdotpu4((v4u)(x), (v4u)(y), (acc))

static inline int at_gap_sumdotpus4(v4u x, v4s y, int acc)
{
#if defined(at_gap_xpulpv2)
    return at_gap_pv_sdotusp_b(at_gap_pv_reg(x), at_gap_pv_reg(y), acc);
#else
    return (int)((unsigned int)acc + (unsigned int)at_gap_dotpus4(x, y));
#endif
}
#define gap_sumdotpus4(x, y, acc) at_gap_sumdotpus4((v4u)(x), (v4s)(y), (acc))

/* ---- word loads from any address, post-incremented loads, hardware loops (Xpulpv2) ---------
 * Int8 kernels read 4 bytes of an HWC pixel or a filter row at any byte address. In C that is a
 * memcpy, which rv32imc (strict alignment) compiles to 4 lbu and shifts; the cluster cores
 * (RI5CY, GVSoC's model of them) load misaligned words in hardware, so the target build uses one
 * load. Encodings from GVSoC's core/models/cpu/iss/isa_gen/isa_pulpv2.py:
 *   p.lw rd, imm(rs1!)   LW_POSTINC, I-type on opcode 0x0b, funct3 2: rd = word at rs1, then
 *                        rs1 += imm (sign-extended 12 bits).
 *   p.lw rd, rs2(rs1)    LW_RR, R-type on opcode 0x03, funct3 7, funct7 0x10: rd = word at
 *                        rs1 + rs2 (no increment).
 *   lp.setup L, rs1, uimm  I-type on opcode 0x7b, funct3 4, rd = L (loop 0 or 1): the loop runs
 *                        rs1 times (rs1 > 0) from the next instruction to pc + 2 uimm, its LAST
 *                        instruction (GVSoC's pulp_v2.hpp lp_setup_exec). Loop 0 has priority
 *                        at a shared end, so it is the inner one of two nested loops, and the outer
 *                        loop must end after it.
 * A hardware loop is only safe when its whole body is one asm statement (the compiler knows
 * nothing of it), so it is given as strings to build such statements (CNN_SQ8_Conv.c). The
 * bodies must not be compressed (the end offset counts 4-byte words): wrap them in
 * AT_GAP_ASM_NORVC_BEGIN / _END. */
#if defined(at_gap_xpulpv2)
#define AT_GAP_ASM_NORVC_BEGIN ".option push\n\t.option norvc\n\t"
#define AT_GAP_ASM_NORVC_END ".option pop\n\t"
#define AT_GAP_ASM_PLW_PI(rd, rs1) ".insn i 0x0b, 2, " rd ", 4(" rs1 ")\n\t"
#define AT_GAP_ASM_LP_SETUP0(count, words) ".insn i 0x7b, 4, x0, " count ", " #words " * 2\n\t"
#define AT_GAP_ASM_LP_SETUP1(count, words) ".insn i 0x7b, 4, x1, " count ", " #words " * 2\n\t"
#define AT_GAP_ASM_PLW_RR(rd, rs1, rs2) ".insn r 0x03, 7, 0x10, " rd ", " rs1 ", " rs2 "\n\t"
#define AT_GAP_ASM_SDOTSP_B(rd, rs1, rs2) ".insn r 0x57, 1, 0x5c, " rd ", " rs1 ", " rs2 "\n\t"
#endif

/* The little-endian int32 of the 4 bytes at p, any alignment. */
static inline int gap_lw_any(const void *p)
{
#if defined(at_gap_xpulpv2)
    int v;
    __asm__ volatile("lw %0, 0(%1)" : "=r"(v) : "r"(p) : "memory");
    return v;
#else
    const unsigned char *b = (const unsigned char *)p;
    return (int)((unsigned int)b[0] | (unsigned int)b[1] << 8 | (unsigned int)b[2] << 16 | (unsigned int)b[3] << 24);
#endif
}

/* gap_lw_any(*p), then *p += 4 (target: one p.lw with post-increment). */
static inline int at_gap_lw_postinc(const signed char **p)
{
#if defined(at_gap_xpulpv2)
    int v;
    __asm__ volatile(".insn i 0x0b, 2, %0, 4(%1)" : "=r"(v), "+r"(*p) : : "memory");
    return v;
#else
    int v = gap_lw_any(*p);
    *p += 4;
    return v;
#endif
}
#define gap_lw_postinc(p) at_gap_lw_postinc(&(p))

/* v clamped to [lo, hi] (lo <= hi), int32: on the cluster p.max then p.min (isa_pulpv2.py:
 * R-type on opcode 0x33, funct7 0x02, funct3 6 p.max, 4 p.min), no branch. Not an SDK name. */
static inline int32_t gap_clamp_i32(int32_t v, int32_t lo, int32_t hi)
{
#if defined(at_gap_xpulpv2)
    __asm__(".insn r 0x33, 6, 0x02, %0, %0, %1" : "+r"(v) : "r"(lo));
    __asm__(".insn r 0x33, 4, 0x02, %0, %0, %1" : "+r"(v) : "r"(hi));
    return v;
#else
    v = (v < lo) ? lo : v;
    return (v > hi) ? hi : v;
#endif
}

/* The high word of the 64-bit product a b (signed), not an SDK name. On the cluster an asm volatile
 * mulh: its result is ready 5 cycles later (GVSoC's RI5CY), and the volatile statements keep the
 * order a kernel writes them in (several products before their first use); GCC would otherwise
 * put each next to its use. */
static inline int32_t gap_mulh_i32(int32_t a, int32_t b)
{
#if defined(RV_ISA_RV32)
    int32_t r;
    __asm__ volatile("mulh %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (int32_t)(((int64_t)a * (int64_t)b) >> 32);
#endif
}

/* (x + y) >> n on the wrapped 32-bit sum, arithmetic (sra) or logical (srl), not SDK names (the
 * SDK's gap_addnorm_reg / gap_addnormu are the same arithmetic). On the cluster one instruction
 * each (isa_pulpv2.py, R-type on opcode 0x5b, funct3 2): p.addN rD, rs1, rs2 (funct7 0x20:
 * rD = (rD + rs1) >>> rs2, rD read and written) for a shift in a register; p.addNi / p.adduNi
 * (funct7 = n, 0x40 | n: rd = (rs1 + rs2) >> n) for the fixed shifts the requantisations use,
 * gap_add_sra1_i32 (n = 1) and gap_add_srl30_u32 (n = 30). */
static inline int32_t gap_add_sra_i32(int32_t x, int32_t y, int32_t n)
{
#if defined(at_gap_xpulpv2)
    __asm__(".insn r 0x5b, 2, 0x20, %0, %1, %2" : "+r"(x) : "r"(y), "r"(n));
    return x;
#else
    return (int32_t)((uint32_t)x + (uint32_t)y) >> (n & 31);
#endif
}

static inline int32_t gap_add_sra1_i32(int32_t x, int32_t y)
{
#if defined(at_gap_xpulpv2)
    int32_t r;
    __asm__(".insn r 0x5b, 2, 1, %0, %1, %2" : "=r"(r) : "r"(x), "r"(y));
    return r;
#else
    return (int32_t)((uint32_t)x + (uint32_t)y) >> 1;
#endif
}

static inline uint32_t gap_add_srl30_u32(uint32_t x, uint32_t y)
{
#if defined(at_gap_xpulpv2)
    uint32_t r;
    __asm__(".insn r 0x5b, 2, 0x5e, %0, %1, %2" : "=r"(r) : "r"(x), "r"(y));
    return r;
#else
    return (x + y) >> 30;
#endif
}

/* ---- complex arithmetic on v2s {re, im} (Q15) -------------------------------------------- */

/* Exact products, (x * y) >> (15 + extra), each part truncated to 16 bits. */
static inline v2s at_gap_cplxmul(v2s x, v2s y, int extra)
{
    long long re = (long long)x[0] * y[0] - (long long)x[1] * y[1];
    long long im = (long long)x[0] * y[1] + (long long)x[1] * y[0];
    v2s r = {(short)(re >> (15 + extra)), (short)(im >> (15 + extra))};
    return r;
}

static inline v2s at_gap_cplxmuls(v2s x, v2s y) { return at_gap_cplxmul(x, y, 0); }
#define gap_cplxmuls(x, y) at_gap_cplxmuls((v2s)(x), (v2s)(y))
static inline v2s at_gap_cplxmulsdiv2(v2s x, v2s y) { return at_gap_cplxmul(x, y, 1); }
#define gap_cplxmulsdiv2(x, y) at_gap_cplxmulsdiv2((v2s)(x), (v2s)(y))
static inline v2s at_gap_cplxmulsdiv4(v2s x, v2s y) { return at_gap_cplxmul(x, y, 2); }
#define gap_cplxmulsdiv4(x, y) at_gap_cplxmulsdiv4((v2s)(x), (v2s)(y))
static inline v2s at_gap_cplxmulsdiv8(v2s x, v2s y) { return at_gap_cplxmul(x, y, 3); }
#define gap_cplxmulsdiv8(x, y) at_gap_cplxmulsdiv8((v2s)(x), (v2s)(y))

/* Conjugate {re, -im}. */
static inline v2s at_gap_cplxconj(v2s x)
{
    v2s r = {x[0], (short)-x[1]};
    return r;
}
#define gap_cplxconj(x) at_gap_cplxconj((v2s)(x))

/* Multiplication by -j: {im, -re}. */
static inline v2s at_gap_cplxmj(v2s x)
{
    v2s r = {x[1], (short)-x[0]};
    return r;
}
#define gap_cplxmj(x) at_gap_cplxmj((v2s)(x))

/* (x - y) * -j: {x.im - y.im, y.re - x.re}. */
static inline v2s at_gap_sub2rotmj(v2s x, v2s y)
{
    v2s r = {(short)(x[1] - y[1]), (short)(y[0] - x[0])};
    return r;
}
#define gap_sub2rotmj(x, y) at_gap_sub2rotmj((v2s)(x), (v2s)(y))

/* Lane-wise sum / difference wrapped to 16 bits, then shifted right arithmetically. */
static inline v2s at_gap_addsub2_shift(v2s x, v2s y, int sub, int shift)
{
    v2s r = {(short)((short)(sub ? x[0] - y[0] : x[0] + y[0]) >> shift),
             (short)((short)(sub ? x[1] - y[1] : x[1] + y[1]) >> shift)};
    return r;
}

static inline v2s at_gap_add2div2(v2s x, v2s y) { return at_gap_addsub2_shift(x, y, 0, 1); }
#define gap_add2div2(x, y) at_gap_add2div2((v2s)(x), (v2s)(y))
static inline v2s at_gap_add2div4(v2s x, v2s y) { return at_gap_addsub2_shift(x, y, 0, 2); }
#define gap_add2div4(x, y) at_gap_add2div4((v2s)(x), (v2s)(y))
static inline v2s at_gap_sub2div2(v2s x, v2s y) { return at_gap_addsub2_shift(x, y, 1, 1); }
#define gap_sub2div2(x, y) at_gap_sub2div2((v2s)(x), (v2s)(y))
static inline v2s at_gap_sub2div4(v2s x, v2s y) { return at_gap_addsub2_shift(x, y, 1, 2); }
#define gap_sub2div4(x, y) at_gap_sub2div4((v2s)(x), (v2s)(y))

/* ---- Viterbi (GAP8): gap_vitmax records per lane whether y was chosen (x <= y), gap_vitsel
 * returns (chosen << 1) | flag per lane. The flags are per core, as on the chip. ------------ */

static inline int *at_gap_vit_flags(void)
{
    static int flags[64][2];
    return flags[at_sim_core_id() & 63];
}

static inline v2s at_gap_vitmax(v2s x, v2s y)
{
    int *flag = at_gap_vit_flags();
    v2s r = {gap_max(x[0], y[0]), gap_max(x[1], y[1])};
    flag[0] = x[0] <= y[0];
    flag[1] = x[1] <= y[1];
    return r;
}
#define gap_vitmax(x, y) at_gap_vitmax((v2s)(x), (v2s)(y))

static inline v2s at_gap_vitsel(v2s x, v2s y)
{
    const int *flag = at_gap_vit_flags();
    v2s r = {(short)(((unsigned int)(flag[0] ? y[0] : x[0]) << 1) | (unsigned int)flag[0]),
             (short)(((unsigned int)(flag[1] ? y[1] : x[1]) << 1) | (unsigned int)flag[1])};
    return r;
}
#define gap_vitsel(x, y) at_gap_vitsel((v2s)(x), (v2s)(y))

/* ---- bit manipulation -------------------------------------------------------------------- */

/* Index of the most significant set bit; 32 for 0 (as on the chip). */
static inline int gap_fl1(unsigned int x) { return x ? 31 - __builtin_clz(x) : 32; }

/* Index of the least significant set bit; 32 for 0. */
static inline int gap_ff1(unsigned int x) { return x ? __builtin_ctz(x) : 32; }

static inline int gap_cnt(unsigned int x) { return __builtin_popcount(x); }

/* Number of redundant sign bits (leading bits equal to the sign bit, minus one); 0 for 0. */
static inline int gap_clb(int x) { return x ? __builtin_clrsb(x) : 0; }

/* 1-bit rotation to the right. */
static inline int gap_rotr(int x)
{
    unsigned int u = (unsigned int)x;
    return (int)((u >> 1) | (u << 31));
}

/* The register operand of the _r bit-field forms: (size - 1) << 5 | offset. Fast assumes
 * 1 <= size <= 32 and 0 <= offset <= 31; Safe keeps 5 bits of each. */
static inline unsigned int ExtInsMaskFast(unsigned int Size, unsigned int Offset)
{
    return ((Size - 1) << 5) | Offset;
}

static inline unsigned int ExtInsMaskSafe(unsigned int Size, unsigned int Offset)
{
    return (((Size - 1) & 0x1F) << 5) | (Offset & 0x1F);
}

/* Width of a field given the encoded operand: 5 bits each for size - 1 and offset; a field
 * that runs past bit 31 is cut there. */
static inline unsigned int at_gap_field_bits(unsigned int mask)
{
    unsigned int bits = ((mask >> 5) & 31u) + 1u, off = mask & 31u;
    return bits > 32u - off ? 32u - off : bits;
}

static inline unsigned int at_gap_ones(unsigned int bits)
{
    return bits >= 32u ? 0xFFFFFFFFu : (1u << bits) - 1u;
}

static inline unsigned int at_gap_extractu(unsigned int x, unsigned int mask)
{
    return (x >> (mask & 31u)) & at_gap_ones(at_gap_field_bits(mask));
}

static inline int at_gap_extract(unsigned int x, unsigned int mask)
{
    unsigned int bits = at_gap_field_bits(mask), v = at_gap_extractu(x, mask);
    if (bits < 32u && ((v >> (bits - 1u)) & 1u))
        v |= ~at_gap_ones(bits);
    return (int)v;
}

static inline int at_gap_insert(unsigned int dst, unsigned int src, unsigned int mask)
{
    unsigned int off = mask & 31u, field = at_gap_ones(at_gap_field_bits(mask)) << off;
    return (int)((dst & ~field) | ((src << off) & field));
}

/* Sign-extended (bitextract) or zero-extended (bitextractu) `size` bits of x from bit `off`. */
static inline int gap_bitextract(unsigned int x, int size, int off)
{
    return at_gap_extract(x, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}
static inline unsigned int gap_bitextractu(unsigned int x, int size, int off)
{
    return at_gap_extractu(x, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}
static inline int gap_bitextract_r(unsigned int x, int size, int off)
{
    return at_gap_extract(x, ExtInsMaskFast((unsigned int)size, (unsigned int)off));
}
static inline unsigned int gap_bitextractu_r(unsigned int x, int size, int off)
{
    return at_gap_extractu(x, ExtInsMaskFast((unsigned int)size, (unsigned int)off));
}
static inline int gap_bitextract_r_safe(unsigned int x, int size, int off)
{
    return at_gap_extract(x, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}
static inline unsigned int gap_bitextractu_r_safe(unsigned int x, int size, int off)
{
    return at_gap_extractu(x, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}

/* dst with its `size` bits from bit `off` replaced by the low bits of src. */
static inline int gap_bitinsert(unsigned int dst, unsigned int src, int size, int off)
{
    return at_gap_insert(dst, src, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}
static inline int gap_bitinsert_r(unsigned int dst, unsigned int src, int size, int off)
{
    return at_gap_insert(dst, src, ExtInsMaskFast((unsigned int)size, (unsigned int)off));
}
static inline int gap_bitinsert_r_safe(unsigned int dst, unsigned int src, int size, int off)
{
    return at_gap_insert(dst, src, ExtInsMaskSafe((unsigned int)size, (unsigned int)off));
}

/* ---- fixed point <-> float utilities (the original's definitions: FP2FIX scales by
 * 2^Precision - 1, FIX2FP divides by 2^Precision) ------------------------------------------ */

#define FIX2FP(Val, Precision) ((float)(Val) / (float)(1 << (Precision)))
#define FP2FIX(Val, Precision) ((int)((Val) * ((1 << (Precision)) - 1)))
#define FP2FIXR(Val, Precision) ((int)((Val) * ((1 << (Precision)) - 1) + 0.5))

/* ---- GAP9 float builtins: the names of the SDK's FloatDefines.h, with the chip's semantics ---
 * (its GAP9 branch: __builtin_pulp_f16max, vfmax.h, vfcvt.x.h...; its host branch swaps max and min
 * of the vectors and converts vectors by reinterpreting their bits). Max / Min follow RISC-V fmax /
 * fmin: a NaN operand yields the other one, -0 < +0. Sqrt rounds the exact root once (to binary16 for
 * f16). Cvt_<from>_<to> converts each lane: float to integer rounds to nearest even (the default
 * rounding mode; C's (int) casts truncate) and saturates to the lane's range, a NaN giving the
 * largest value; integer or f16 to f16 rounds to nearest even. A vector argument is reinterpreted as
 * the type the instruction reads, as for the integer builtins. The f16a / v2ah forms compute in
 * float (see the types above). AbsF, MaxF, MinF, AbsF2, MaxF2, MinF2, MIN_FLT16 and MAX_FLT16 pick the
 * f16 forms with STD_FLOAT and the f16a ones otherwise, as CNN_Defines_fp16.h does on GAP9; their
 * replacement lists are token for token those of that header's GAP9 branch (parenthesised
 * arguments, F16V casts of the f16a vector forms), so that a kernel built with -D__gap9__, which
 * gets them defined again by CNN_Defines_fp16.h, sees an identical redefinition, not a warning. */

static inline float at_gap_fmax(float x, float y)
{
    if (x != x)
        return y;
    if (y != y || x > y)
        return x;
    if (x == y && x == 0.0f) /* +0 > -0 */
        return __builtin_signbit(x) ? y : x;
    return y;
}
static inline float at_gap_fmin(float x, float y)
{
    if (x != x)
        return y;
    if (y != y || x < y)
        return x;
    if (x == y && x == 0.0f)
        return __builtin_signbit(x) ? x : y;
    return y;
}
static inline float at_gap_fabs(float x) { return __builtin_fabsf(x); }
static inline float at_gap_fsqrt(float x) { return __builtin_sqrtf(x); }

/* x rounded to an integer, to nearest even (|x| < 2^23: adding and removing 2^23 rounds the
 * fraction away; larger floats are integers), then clamped to [lo, hi]; NaN gives hi. */
static inline int at_gap_f2i(float x, int lo, int hi)
{
    if (x != x)
        return hi;
    if (__builtin_fabsf(x) < 8388608.0f)
        x = x < 0.0f ? (x - 8388608.0f) + 8388608.0f : (x + 8388608.0f) - 8388608.0f;
    return x <= (float)lo ? lo : x >= (float)hi ? hi : (int)x;
}

static inline f16 at_gap_absf16(f16 x) { return (f16)at_gap_fabs(x); }
static inline f16 at_gap_maxf16(f16 x, f16 y) { return (f16)at_gap_fmax(x, y); }
static inline f16 at_gap_minf16(f16 x, f16 y) { return (f16)at_gap_fmin(x, y); }
static inline f16 at_gap_sqrtf16(f16 x) { return (f16)at_gap_fsqrt(x); }
static inline f16a at_gap_absf16a(f16a x) { return at_gap_fabs(x); }
static inline f16a at_gap_maxf16a(f16a x, f16a y) { return at_gap_fmax(x, y); }
static inline f16a at_gap_minf16a(f16a x, f16a y) { return at_gap_fmin(x, y); }
static inline f16a at_gap_sqrtf16a(f16a x) { return at_gap_fsqrt(x); }

static inline v2h at_gap_absv2h(v2h x)
{
    v2h r = {at_gap_absf16(x[0]), at_gap_absf16(x[1])};
    return r;
}
static inline v2h at_gap_maxv2h(v2h x, v2h y)
{
    v2h r = {at_gap_maxf16(x[0], y[0]), at_gap_maxf16(x[1], y[1])};
    return r;
}
static inline v2h at_gap_minv2h(v2h x, v2h y)
{
    v2h r = {at_gap_minf16(x[0], y[0]), at_gap_minf16(x[1], y[1])};
    return r;
}
static inline v2ah at_gap_absv2ah(v2ah x)
{
    v2ah r = {at_gap_fabs(x[0]), at_gap_fabs(x[1])};
    return r;
}
static inline v2ah at_gap_maxv2ah(v2ah x, v2ah y)
{
    v2ah r = {at_gap_fmax(x[0], y[0]), at_gap_fmax(x[1], y[1])};
    return r;
}
static inline v2ah at_gap_minv2ah(v2ah x, v2ah y)
{
    v2ah r = {at_gap_fmin(x[0], y[0]), at_gap_fmin(x[1], y[1])};
    return r;
}

static inline v2s at_gap_cvt_v2h_v2s(v2h x)
{
    v2s r = {(short)at_gap_f2i(x[0], -32768, 32767), (short)at_gap_f2i(x[1], -32768, 32767)};
    return r;
}
static inline v2u at_gap_cvt_v2h_v2u(v2h x)
{
    v2u r = {(unsigned short)at_gap_f2i(x[0], 0, 65535), (unsigned short)at_gap_f2i(x[1], 0, 65535)};
    return r;
}
static inline v2s at_gap_cvt_v2ah_v2s(v2ah x)
{
    v2s r = {(short)at_gap_f2i(x[0], -32768, 32767), (short)at_gap_f2i(x[1], -32768, 32767)};
    return r;
}
static inline v2u at_gap_cvt_v2ah_v2u(v2ah x)
{
    v2u r = {(unsigned short)at_gap_f2i(x[0], 0, 65535), (unsigned short)at_gap_f2i(x[1], 0, 65535)};
    return r;
}
static inline v2h at_gap_cvt_v2s_v2h(v2s x)
{
    v2h r = {(f16)(float)x[0], (f16)(float)x[1]};
    return r;
}
static inline v2h at_gap_cvt_v2u_v2h(v2u x)
{
    v2h r = {(f16)(float)x[0], (f16)(float)x[1]};
    return r;
}
static inline v2ah at_gap_cvt_v2s_v2ah(v2s x)
{
    v2ah r = {(f16a)x[0], (f16a)x[1]};
    return r;
}
static inline v2ah at_gap_cvt_v2u_v2ah(v2u x)
{
    v2ah r = {(f16a)x[0], (f16a)x[1]};
    return r;
}
static inline v2ah at_gap_cvt_v2h_v2ah(v2h x)
{
    v2ah r = {(f16a)x[0], (f16a)x[1]};
    return r;
}
static inline v2h at_gap_cvt_v2ah_v2h(v2ah x)
{
    v2h r = {(f16)x[0], (f16)x[1]};
    return r;
}

#define Absf16(a) at_gap_absf16((f16)(a))
#define Maxf16(a, b) at_gap_maxf16((f16)(a), (f16)(b))
#define Minf16(a, b) at_gap_minf16((f16)(a), (f16)(b))
#define Sqrtf16(a) at_gap_sqrtf16((f16)(a))
#define Absf16a(a) at_gap_absf16a((f16a)(a))
#define Maxf16a(a, b) at_gap_maxf16a((f16a)(a), (f16a)(b))
#define Minf16a(a, b) at_gap_minf16a((f16a)(a), (f16a)(b))
#define Sqrtf16a(a) at_gap_sqrtf16a((f16a)(a))
#define Absf32(a) at_gap_fabs((float)(a))
#define Maxf32(a, b) at_gap_fmax((float)(a), (float)(b))
#define Minf32(a, b) at_gap_fmin((float)(a), (float)(b))
#define Sqrtf32(a) at_gap_fsqrt((float)(a))
/* Later FloatDefines.h add Clipf32 (after both branches): lower <= Clipf32(a, upper, lower) <= upper,
 * Minf32 then Maxf32 (fmin / fmax: a NaN a gives upper), a float; CNN_Copy.c's CNN_Float32* kernels
 * use it to saturate to the integer ranges. */
#define Clipf32(a, upper, lower) ((float)Maxf32(Minf32((a), (upper)), (lower)))
#define Absv2h(a) at_gap_absv2h((v2h)(a))
#define Maxv2h(a, b) at_gap_maxv2h((v2h)(a), (v2h)(b))
#define Minv2h(a, b) at_gap_minv2h((v2h)(a), (v2h)(b))
#define Absv2ah(a) at_gap_absv2ah((v2ah)(a))
#define Maxv2ah(a, b) at_gap_maxv2ah((v2ah)(a), (v2ah)(b))
#define Minv2ah(a, b) at_gap_minv2ah((v2ah)(a), (v2ah)(b))
#define Cvt_v2h_v2s(a) at_gap_cvt_v2h_v2s((v2h)(a))
#define Cvt_v2h_v2u(a) at_gap_cvt_v2h_v2u((v2h)(a))
#define Cvt_v2ah_v2s(a) at_gap_cvt_v2ah_v2s((v2ah)(a))
#define Cvt_v2ah_v2u(a) at_gap_cvt_v2ah_v2u((v2ah)(a))
#define Cvt_v2s_v2h(a) at_gap_cvt_v2s_v2h((v2s)(a))
#define Cvt_v2u_v2h(a) at_gap_cvt_v2u_v2h((v2u)(a))
#define Cvt_v2s_v2ah(a) at_gap_cvt_v2s_v2ah((v2s)(a))
#define Cvt_v2u_v2ah(a) at_gap_cvt_v2u_v2ah((v2u)(a))
#define Cvt_v2h_v2ah(a) at_gap_cvt_v2h_v2ah((v2h)(a))
#define Cvt_v2ah_v2h(a) at_gap_cvt_v2ah_v2h((v2ah)(a))

/* The chip's limits: the smallest normal values (6.10e-5 rounds to binary16's largest subnormal,
 * as on the chip) and the largest finite ones (f16a: float's, see the types above). */
#define MIN_f16 ((f16)6.10e-5f)
#define MAX_f16 ((f16)65504.0f)
#define MIN_f16a ((f16a)1.1754943508e-38f)
#define MAX_f16a ((f16a)3.4028234664e38f)

#ifdef STD_FLOAT
#define AbsF(a) Absf16((a))
#define MaxF(a, b) Maxf16((a), (b))
#define MinF(a, b) Minf16((a), (b))
#define AbsF2(a) Absv2h((a))
#define MaxF2(a, b) Maxv2h((a), (b))
#define MinF2(a, b) Minv2h((a), (b))
#define MIN_FLT16 MIN_f16
#define MAX_FLT16 MAX_f16
#else
#define AbsF(a) Absf16a((a))
#define MaxF(a, b) Maxf16a((a), (b))
#define MinF(a, b) Minf16a((a), (b))
#define AbsF2(a) ((F16V) Absv2ah((a)))
#define MaxF2(a, b) ((F16V) Maxv2ah((a), (b)))
#define MinF2(a, b) ((F16V) Minv2ah((a), (b)))
#define MIN_FLT16 MIN_f16a
#define MAX_FLT16 MAX_f16a
#endif

#endif /* GAP_H */
