/*
 * Gap.h - GAP scalar/vector types and builtins for basic kernels compiled by the host harness.
 *
 * Semantics follow the GAP8 builtins (and the original x86 emulation of GapBuiltins.h). Core
 * identity comes from the simulator: gap_coreid() is the running core inside AT_FORK (0
 * elsewhere), gap_ncore() the configured core count everywhere, and gap_waitbarrier() a real
 * barrier across the forked cores. Fixed-width helpers are static inline functions on int
 * (C99-clean, no -Wextra noise); min/max/abs stay type-generic macros as in the original.
 * Arithmetic that wraps on the chip is done in unsigned or 64-bit arithmetic so that UBSan
 * does not flag it as signed overflow.
 */
#ifndef GAP_H
#define GAP_H

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

/* ---- cores ----------------------------------------------------------------------------- */

static inline int gap_coreid(void) { return at_sim_core_id(); }
static inline int gap_ncore(void) { return at_sim_num_cores(); }
static inline int gap_clusterid(void) { return 0; }
static inline void gap_waitbarrier(int barrier_id) { (void)barrier_id; at_sim_barrier(); }
static inline void rt_team_barrier(void) { at_sim_barrier(); }
static inline int gap8_coreid(void) { return at_sim_core_id(); }
static inline int gap8_ncore(void) { return at_sim_num_cores(); }

/* ---- min / max / abs (type-generic, as in the original macros) ------------------------- */

#define gap_min(a, b) (((a) < (b)) ? (a) : (b))
#define gap_max(a, b) (((a) > (b)) ? (a) : (b))
#define gap_abs(a) (((a) < 0) ? -(a) : (a))

/* ---- clipping and normalisation -------------------------------------------------------- */

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

/* Arithmetic shift right (gcc shifts signed values arithmetically). */
static inline int gap_norm_reg(int x, int n) { return x >> n; }
static inline int gap_norm(int x, int n) { return x >> n; }

/* (x + 2^(n-1)) >> n, i.e. round half up; no rounding term when n == 0. */
static inline int gap_roundnorm_reg(int x, int n)
{
    return (int)(((long long)x + (n ? (1LL << (n - 1)) : 0)) >> n);
}
static inline int gap_roundnorm(int x, int n) { return gap_roundnorm_reg(x, n); }

/* ---- multiplications on the low 16 bits ------------------------------------------------ */

static inline int gap_muls(int x, int y) { return (int)(short)x * (int)(short)y; }
static inline int gap_mulsN(int x, int y, int n) { return gap_muls(x, y) >> n; }
static inline int gap_mulsRN(int x, int y, int n) { return gap_roundnorm_reg(gap_muls(x, y), n); }
static inline int gap_macs(int acc, int x, int y)
{
    return (int)((unsigned int)acc + (unsigned int)gap_muls(x, y));
}

/* ---- packing and dot products ---------------------------------------------------------- */

static inline v2s gap_pack2(int x, int y)
{
    v2s r = {(short)x, (short)y};
    return r;
}

static inline v4s gap_pack4(int x, int y, int z, int t)
{
    v4s r = {(signed char)x, (signed char)y, (signed char)z, (signed char)t};
    return r;
}

static inline int gap_dotp2(v2s x, v2s y)
{
    return (int)((unsigned int)(x[0] * y[0]) + (unsigned int)(x[1] * y[1]));
}

static inline int gap_sumdotp2(v2s x, v2s y, int acc)
{
    return (int)((unsigned int)acc + (unsigned int)gap_dotp2(x, y));
}

static inline int gap_dotp4(v4s x, v4s y)
{
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
}

static inline int gap_sumdotp4(v4s x, v4s y, int acc)
{
    return (int)((unsigned int)acc + (unsigned int)gap_dotp4(x, y));
}

static inline unsigned int gap_dotpu2(v2u x, v2u y)
{
    return (unsigned int)x[0] * y[0] + (unsigned int)x[1] * y[1];
}

static inline unsigned int gap_dotpu4(v4u x, v4u y)
{
    return (unsigned int)(x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3]);
}

/* ---- bit manipulation (results for 0 as on the chip: 32) ------------------------------- */

/* Index of the most significant set bit. */
static inline int gap_fl1(unsigned int x) { return x ? 31 - __builtin_clz(x) : 32; }

/* Index of the least significant set bit. */
static inline int gap_ff1(unsigned int x) { return x ? __builtin_ctz(x) : 32; }

static inline int gap_cnt(unsigned int x) { return __builtin_popcount(x); }

#endif /* GAP_H */
