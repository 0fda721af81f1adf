/*
 * Uses every name Gap.h defines (tests/harness/test_gap_builtins.py checks that the list below
 * keeps up with the header), so that compiling this file with -std=c99 -Wall -Wextra -Werror
 * proves each one is usable the way SDK basic kernels use it.
 */
#include "Gap.h"

/* Must be a constant expression at file scope, as in the original's emulation. */
static int ActiveCore = gap_ncore();
static int ActiveCoreM1 = gap_ncorem1();
static int ActiveCore8 = gap8_ncore();
static int TeamSize = rt_nb_pe();

static void Entry(void *Arg) { (void)Arg; }

PI_L2 static const short Table[2] = {1, 2};

typedef struct {
    Word8 b;
    Word16 h;
    Word32 w;
    Wordu8 ub;
    Wordu16 uh;
    Wordu32 uw;
    rt_pointerT p;
} Words_T;

int CoverCores(void)
{
    int s = ActiveCore + ActiveCoreM1 + ActiveCore8 + TeamSize;
    char *msg = (char *)malloc(4);
    free(msg);
    printf("%s", "");
    rt_team_fork(gap_ncore(), Entry, 0);
    s += gap_coreid() + gap_coreidm1() + gap_clusterid() + gap8_coreid();
    gap_setupbarrier(0, 0xFF);
    gap_waitbarrier(0);
    gap_waitbarrier_cc();
    gap_waitbarrier_cc(0);
    rt_team_barrier();
    gap_fc_starttimer();
    gap_fc_resethwtimer();
    s += gap_fc_readhwtimer();
    gap_cl_starttimer();
    gap_cl_resethwtimer();
    s += gap_cl_readhwtimer();
    return s + Table[1];
}

int CoverAlloc(void)
{
    char *l1 = (char *)gap_allocL1(16);
    char *l2 = (char *)gap_allocL2(32);
    int ok = l1 != 0 && l2 != 0;
    if (l1)
        gap_freeL1(l1, 16);
    if (l2)
        gap_freeL2(l2, 32);
    return ok;
}

int CoverScalar(int x, int y, int n, Words_T *w)
{
    unsigned int u = 0;
    int s = gap_min(x, y) + gap_max(x, y) + gap_abs(x);
    s += gap_clip(x, 7) + gap_clipu(x, 8) + gap_clipr(x, 255) + gap_clipur(x, 255);
    s += gap_trunh(x) + gap_trunb(x);
    s += gap_addnorm(x, y, 2) + gap_addnorm_reg(x, y, n) + gap_addroundnorm(x, y, 2)
         + gap_addroundnorm_reg(x, y, n);
    u += gap_addnormu(x, y, 2) + gap_addnormu_reg(x, y, n) + gap_addroundnormu(x, y, 2)
         + gap_addroundnormu_reg(x, y, n);
    s += gap_subnorm(x, y, 2) + gap_subnorm_reg(x, y, n) + gap_subroundnorm(x, y, 2)
         + gap_subroundnorm_reg(x, y, n);
    u += gap_subnormu(x, y, 2) + gap_subnormu_reg(x, y, n) + gap_subroundnormu(x, y, 2)
         + gap_subroundnormu_reg(x, y, n);
    s += gap_norm(x, 3) + gap_norm_reg(x, n) + gap_roundnorm(x, 3) + gap_roundnorm_reg(x, n);
    u += gap_normu(x, 3) + gap_normu_reg(x, n) + gap_roundnormu(x, 3) + gap_roundnormu_reg(x, n);
    s += gap_fl1((unsigned int)x) + gap_ff1((unsigned int)x) + gap_cnt((unsigned int)x)
         + gap_clb(x) + gap_rotr(x);
    s += gap_bitextract(x, 5, 3) + gap_bitextract_r(x, 5, 3) + gap_bitextract_r_safe(x, 5, 3);
    u += gap_bitextractu(x, 5, 3) + gap_bitextractu_r(x, 5, 3) + gap_bitextractu_r_safe(x, 5, 3);
    s += gap_bitinsert(x, y, 4, 8) + gap_bitinsert_r(x, y, 4, 8) + gap_bitinsert_r_safe(x, y, 4, 8);
    u += ExtInsMaskFast(5, 3) + ExtInsMaskSafe(5, 3);
    w->b = (Word8)s;
    w->ub = (Wordu8)u;
    return s + (int)u;
}

int CoverMul(int acc, int x, int y, int n)
{
    unsigned int u = 0;
    int s = gap_muls(x, y) + gap_mulfs(x, y) + gap_mulhhs(x, y);
    u += gap_mulu(x, y) + gap_mulfu(x, y) + gap_mulhhu(x, y);
    s += gap_mulsN(x, y, n) + gap_mulsRN(x, y, n) + gap_mulfsN(x, y, n) + gap_mulfsRN(x, y, n)
         + gap_mulhhsN(x, y, n) + gap_mulhhsRN(x, y, n);
    u += gap_muluN(x, y, n) + gap_muluRN(x, y, n) + gap_mulfuN(x, y, n) + gap_mulfuRN(x, y, n)
         + gap_mulhhuN(x, y, n) + gap_mulhhuRN(x, y, n);
    s += gap_mul64h(x, y) + gap_mul64ush((unsigned int)x, y);
    u += gap_mul64uh((unsigned int)x, (unsigned int)y);
    s += gap_macs(acc, x, y) + gap_macfs(acc, x, y) + gap_machhs(acc, x, y);
    u += gap_macu(acc, x, y) + gap_macfu(acc, x, y) + gap_machhu(acc, x, y);
    s += gap_macsN(acc, x, y, n) + gap_macsRN(acc, x, y, n) + gap_macfsN(acc, x, y, n)
         + gap_macfsRN(acc, x, y, n) + gap_machhsN(acc, x, y, n) + gap_machhsRN(acc, x, y, n);
    u += gap_macuN(acc, x, y, n) + gap_macuRN(acc, x, y, n) + gap_macfuN(acc, x, y, n)
         + gap_macfuRN(acc, x, y, n) + gap_machhuN(acc, x, y, n) + gap_machhuRN(acc, x, y, n);
    return s + (int)u;
}

int CoverVectors(v2s *h, v4s *b, v2u *uh, v4u *ub, int acc)
{
    v2s a = gap_pack2(1, -2), c;
    v4s d = gap_pack4(1, -2, 3, -4), e;
    v2u f = gap_packu2(1, 2), g;
    v4u k = gap_packu4(1, 2, 3, 4), m;
    int s;
    c = gap_add2(gap_max2(a, h[0]), gap_min2(a, h[0]));
    c = gap_sub2(gap_abs2(c), a);
    e = gap_add4(gap_max4(d, b[0]), gap_min4(d, b[0]));
    e = gap_sub4(gap_abs4(e), d);
    g = gap_maxu2(f, gap_minu2(f, uh[0]));
    m = gap_maxu4(k, gap_minu4(k, ub[0]));
    s = gap_dotp2(c, a) + gap_dotpus2(g, c) + gap_dotp4(e, d) + gap_dotpus4(m, e);
    s += (int)(gap_dotpu2(g, f) + gap_dotpu4(m, k));
    s = gap_sumdotp2(c, a, s) + gap_sumdotpus2(g, c, s) + gap_sumdotp4(e, d, s)
        + gap_sumdotpus4(m, e, s);
    s += (int)(gap_sumdotpu2(g, f, (unsigned int)acc) + gap_sumdotpu4(m, k, (unsigned int)acc));
    c = gap_cplxmuls(c, a);
    c = gap_cplxmulsdiv2(c, a);
    c = gap_cplxmulsdiv4(c, a);
    c = gap_cplxmulsdiv8(c, a);
    c = gap_cplxconj(gap_cplxmj(c));
    c = gap_sub2rotmj(c, a);
    c = gap_add2div2(gap_add2div4(c, a), gap_sub2div2(gap_sub2div4(c, a), a));
    c = gap_vitsel(gap_vitmax(c, a), a);
    h[1] = c;
    b[1] = e;
    uh[1] = g;
    ub[1] = m;
    return s;
}

#ifndef __FLOAT_EMUL__
#error "Gap.h sets the SDK's __FLOAT_EMUL__ (FastFloatApprox16.h's float approximations)"
#endif
#if !defined(__CNN_FLOAT_TYPE_H__) || !defined(__DSP_FLOAT_TYPE_H__) || !defined(__FLOAT_DEFINES_H__)
#error "Gap.h provides the SDK's float types and builtins in place of its host headers"
#endif
float CoverFloat(f16 x, f16a y, v2h *vh, v2ah *vah, V2S *cmp)
{
    int fix = FP2FIX(x, 15) + FP2FIXR(y, 15);
    F16SV sv;
    F16SV_DSP dsp;
    F16 s = (F16)AbsF(MaxF(MinF(x, y), MIN_FLT16));
    F16V v;
    F16V_DSP vd;
    F16_DSP d = Absf16(Maxf16(Minf16(x, MAX_f16), MIN_f16));
    float16 h = (float16)0.1f; /* the GAP9 compiler's names of f16 and f16a */
    float16alt ha = (float16alt)0.1f;
    v2s i = Cvt_v2h_v2s(vh[0]);
    v2u u = Cvt_v2h_v2u(vh[1]);
    *cmp = vh[0] > vh[1];
    vh[0] = __builtin_shuffle(vh[0], vh[1], *cmp);
    vh[1] = Cvt_v2s_v2h(i) + Cvt_v2u_v2h(u) + Cvt_v2ah_v2h(vah[0]);
    vh[0] = Absv2h(Maxv2h(Minv2h(vh[0], vh[1]), vh[1]));
    vah[0] = vah[1] * (v2ah){y, y} + Cvt_v2s_v2ah(Cvt_v2ah_v2s(vah[0])) + Cvt_v2u_v2ah(Cvt_v2ah_v2u(vah[1]));
    vah[1] = Absv2ah(Maxv2ah(Minv2ah(vah[0], vah[1]), Cvt_v2h_v2ah(vh[0])));
    v = (F16V)AbsF2(MaxF2(MinF2(vah[0], vah[1]), vah[1]));
    vd = vh[1];
    sv.V = v;
    dsp.V = vd;
    d = d + dsp.S + Sqrtf16(x);
    s = s + sv.S + (F16)Sqrtf16a(y) + (F16)MAX_FLT16;
    y = Absf16a(Maxf16a(Minf16a(y, MAX_f16a), MIN_f16a));
    return FIX2FP(fix, 15) + x * y + (float)M_PI + s + d + h + ha
           + Absf32(Maxf32(Minf32(y, 1.0f), Sqrtf32(2.0f))) + Clipf32(x, 127.0f, -128.0f);
}

/* The target helpers of issue 25 (not SDK names): plain C on the host, Xpulpv2 on the cluster. */
int CoverTargetHelpers(const signed char *p, int32_t a, int32_t b)
{
    int w = gap_lw_any(p);
    w += gap_lw_postinc(p);
    w += gap_clamp_i32(a, -128, 127) + gap_mulh_i32(a, b) + gap_add_sra_i32(a, b, 3) + gap_add_sra1_i32(a, b);
    return w + (int)gap_add_srl30_u32((uint32_t)a, (uint32_t)b);
}

#if defined(at_gap_xpulpv2)
/* The hardware-loop asm strings exist only for the cluster core (a loop body is one asm statement). */
const char *const CoverAsmStrings = AT_GAP_ASM_NORVC_BEGIN AT_GAP_ASM_LP_SETUP0("a0", 1) AT_GAP_ASM_LP_SETUP1("a1", 2)
    AT_GAP_ASM_PLW_PI("t0", "a2") AT_GAP_ASM_PLW_RR("t1", "a2", "a3") AT_GAP_ASM_SDOTSP_B("a4", "t0", "t1")
    AT_GAP_ASM_NORVC_END;
#endif
