/*
 * Evaluates Gap.h / Gap8.h builtins by name for tests/harness/test_gap_builtins.py.
 *
 * gap_eval(name, args, out) calls the builtin `name` on the int arguments args[0..3] (vectors
 * are passed and returned as their 32-bit pattern, lane 0 in the low bits, as in a register)
 * and writes its result to out[0]: signed results sign-extended, unsigned ones zero-extended.
 * It returns 0, or -1 for an unknown name. gap_eval_float does the same for the fixed <-> float
 * macros. Built with GAP_EVAL_MAIN, a program reads "name a0 a1 a2 a3" lines and prints one
 * result per line (the test runs it under UBSan).
 */
#include <stdio.h>
#include <string.h>

#include "Gap8.h"

#define CALL1(f) f(a[0])
#define CALL2(f) f(a[0], a[1])
#define CALL3(f) f(a[0], a[1], a[2])
#define CALL4(f) f(a[0], a[1], a[2], a[3])

/* name, arity: builtins returning an integer */
#define SCALAR_OPS(X) \
    X(gap_min, 2) X(gap_max, 2) X(gap_abs, 1) \
    X(gap_clip, 2) X(gap_clipu, 2) X(gap_clipr, 2) X(gap_clipur, 2) X(gap_trunh, 1) X(gap_trunb, 1) \
    X(gap_addnorm, 3) X(gap_addnorm_reg, 3) X(gap_addnormu, 3) X(gap_addnormu_reg, 3) \
    X(gap_addroundnorm, 3) X(gap_addroundnorm_reg, 3) X(gap_addroundnormu, 3) \
    X(gap_addroundnormu_reg, 3) X(gap_subnorm, 3) X(gap_subnorm_reg, 3) X(gap_subnormu, 3) \
    X(gap_subnormu_reg, 3) X(gap_subroundnorm, 3) X(gap_subroundnorm_reg, 3) \
    X(gap_subroundnormu, 3) X(gap_subroundnormu_reg, 3) X(gap_norm, 2) X(gap_norm_reg, 2) \
    X(gap_normu, 2) X(gap_normu_reg, 2) X(gap_roundnorm, 2) X(gap_roundnorm_reg, 2) \
    X(gap_roundnormu, 2) X(gap_roundnormu_reg, 2) \
    X(gap_muls, 2) X(gap_mulu, 2) X(gap_mulhhs, 2) X(gap_mulhhu, 2) X(gap_mulfs, 2) X(gap_mulfu, 2) \
    X(gap_mulsN, 3) X(gap_mulsRN, 3) X(gap_muluN, 3) X(gap_muluRN, 3) X(gap_mulhhsN, 3) \
    X(gap_mulhhsRN, 3) X(gap_mulhhuN, 3) X(gap_mulhhuRN, 3) X(gap_mulfsN, 3) X(gap_mulfsRN, 3) \
    X(gap_mulfuN, 3) X(gap_mulfuRN, 3) X(gap_mul64h, 2) X(gap_mul64uh, 2) X(gap_mul64ush, 2) \
    X(gap_macs, 3) X(gap_machhs, 3) X(gap_macu, 3) X(gap_machhu, 3) X(gap_macfs, 3) X(gap_macfu, 3) \
    X(gap_macsN, 4) X(gap_macsRN, 4) X(gap_macuN, 4) X(gap_macuRN, 4) X(gap_machhsN, 4) \
    X(gap_machhsRN, 4) X(gap_machhuN, 4) X(gap_machhuRN, 4) X(gap_macfsN, 4) X(gap_macfsRN, 4) \
    X(gap_macfuN, 4) X(gap_macfuRN, 4) \
    X(gap_dotp2, 2) X(gap_dotpu2, 2) X(gap_dotpus2, 2) X(gap_dotp4, 2) X(gap_dotpu4, 2) \
    X(gap_dotpus4, 2) X(gap_sumdotp2, 3) X(gap_sumdotpu2, 3) X(gap_sumdotpus2, 3) \
    X(gap_sumdotp4, 3) X(gap_sumdotpu4, 3) X(gap_sumdotpus4, 3) \
    X(gap_fl1, 1) X(gap_ff1, 1) X(gap_cnt, 1) X(gap_clb, 1) X(gap_rotr, 1) \
    X(gap_bitextract, 3) X(gap_bitextractu, 3) X(gap_bitextract_r, 3) X(gap_bitextractu_r, 3) \
    X(gap_bitextract_r_safe, 3) X(gap_bitextractu_r_safe, 3) X(gap_bitinsert, 4) \
    X(gap_bitinsert_r, 4) X(gap_bitinsert_r_safe, 4) X(ExtInsMaskFast, 2) X(ExtInsMaskSafe, 2) \
    X(gap_ncore, 0) X(gap_ncorem1, 0) X(gap8_ncore, 0) X(rt_nb_pe, 0) \
    X(gap8_clip, 2) X(gap8_clipu, 2) X(gap8_macs, 3) X(gap8_machhs, 3) X(gap8_macu, 3) \
    X(gap8_machhu, 3) X(gap8_macsN, 4) X(gap8_macuN, 4) X(gap8_macsRN, 4) X(gap8_macuRN, 4) \
    X(gap8_machhsN, 4) X(gap8_machhuN, 4) X(gap8_machhsRN, 4) X(gap8_machhuRN, 4) \
    X(gap8_muls, 2) X(gap8_mulu, 2) X(gap8_mulhhs, 2) X(gap8_mulhhu, 2) X(gap8_mulsN, 3) \
    X(gap8_mulsRN, 3) X(gap8_muluN, 3) X(gap8_muluRN, 3) X(gap8_mulhhsN, 3) X(gap8_mulhhsRN, 3) \
    X(gap8_mulhhuN, 3) X(gap8_mulhhuRN, 3) X(gap8_dotp2, 2) X(gap8_dotpu2, 2) X(gap8_dotpus2, 2) \
    X(gap8_sumdotp2, 3) X(gap8_sumdotpu2, 3) X(gap8_sumdotpus2, 3) X(gap8_dotp4, 2) \
    X(gap8_dotpu4, 2) X(gap8_dotpus4, 2) X(gap8_sumdotp4, 3) X(gap8_sumdotpu4, 3) \
    X(gap8_sumdotpus4, 3) X(gap8_fl1, 1) X(gap8_clb, 1) X(gap8_bitextract, 3) \
    X(gap8_bitextractu, 3) X(gap8_bitextract_r, 3) X(gap8_bitextractu_r, 3) \
    X(gap8_bitextract_r_safe, 3) X(gap8_bitextractu_r_safe, 3) X(gap8_bitinsert, 4) \
    X(gap8_bitinsert_r, 4) X(gap8_bitinsert_r_safe, 4) X(gap8_rotr, 1) X(gap8_addroundnormu, 3) \
    X(gap8_addroundnormu_reg, 3) X(gap8_addroundnorm, 3) X(gap8_addroundnorm_reg, 3) \
    X(gap8_roundnormu, 2) X(gap8_roundnormu_reg, 2) X(gap8_roundnorm, 2) X(gap8_roundnorm_reg, 2)

/* name, arity: builtins returning a 4-byte vector */
#define VECTOR_OPS(X) \
    X(gap_pack2, 2) X(gap_packu2, 2) X(gap_pack4, 4) X(gap_packu4, 4) \
    X(gap_max2, 2) X(gap_max4, 2) X(gap_maxu2, 2) X(gap_maxu4, 2) X(gap_min2, 2) X(gap_min4, 2) \
    X(gap_minu2, 2) X(gap_minu4, 2) X(gap_add2, 2) X(gap_add4, 2) X(gap_sub2, 2) X(gap_sub4, 2) \
    X(gap_abs2, 1) X(gap_abs4, 1) X(gap_cplxmuls, 2) X(gap_cplxmulsdiv2, 2) \
    X(gap_cplxmulsdiv4, 2) X(gap_cplxmulsdiv8, 2) X(gap_cplxconj, 1) X(gap_cplxmj, 1) \
    X(gap_sub2rotmj, 2) X(gap_add2div2, 2) X(gap_add2div4, 2) X(gap_sub2div2, 2) \
    X(gap_sub2div4, 2) \
    X(gap8_pack2, 2) X(gap8_packu2, 2) X(gap8_pack4, 4) X(gap8_packu4, 4) X(gap8_max2, 2) \
    X(gap8_max4, 2) X(gap8_maxu2, 2) X(gap8_maxu4, 2) X(gap8_min2, 2) X(gap8_min4, 2) \
    X(gap8_minu2, 2) X(gap8_minu4, 2) X(gap8_abs2, 1) X(gap8_abs4, 1) X(gap8_cplxmuls, 2) \
    X(gap8_cplxmulsdiv2, 2) X(gap8_cplxmulsdiv4, 2) X(gap8_cplxconj, 1) X(gap8_cplxmj, 1) \
    X(gap8_sub2rotmj, 2) X(gap8_add2div2, 2) X(gap8_add2div4, 2) X(gap8_sub2div2, 2) \
    X(gap8_sub2div4, 2)

typedef void (*eval_fn)(const int *a, long long *out);

#define DEF_SCALAR(f, n) \
    static void e_##f(const int *a, long long *out) { (void)a; out[0] = (long long)CALL##n(f); }
#define CALL0(f) f()
#define DEF_VECTOR(f, n) \
    static void e_##f(const int *a, long long *out) \
    { \
        out[0] = (long long)(unsigned int)(int)CALL##n(f); \
    }
SCALAR_OPS(DEF_SCALAR)
VECTOR_OPS(DEF_VECTOR)

/* gap_vitmax(a0, a1) then gap_vitsel(a2, a3): out[0] the max, out[1] the selection. */
static void e_vit(const int *a, long long *out)
{
    out[0] = (long long)(unsigned int)(int)gap_vitmax(a[0], a[1]);
    out[1] = (long long)(unsigned int)(int)gap_vitsel(a[2], a[3]);
}

static void e_vit8(const int *a, long long *out)
{
    out[0] = (long long)(unsigned int)(int)gap8_vitmax(a[0], a[1]);
    out[1] = (long long)(unsigned int)(int)gap8_vitsel(a[2], a[3]);
}

#define ENTRY(f, n) {#f, e_##f},
static const struct {
    const char *name;
    eval_fn fn;
} table[] = {SCALAR_OPS(ENTRY) VECTOR_OPS(ENTRY) {"vit", e_vit}, {"vit8", e_vit8}};

int gap_eval(const char *name, const int *args, long long *out)
{
    size_t i;
    for (i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name)) {
            table[i].fn(args, out);
            return 0;
        }
    return -1;
}

/* FIX2FP(v, p) reads v as an int, FP2FIX / FP2FIXR as a double. */
double gap_eval_float(const char *name, double v, int p)
{
    if (!strcmp(name, "FIX2FP"))
        return FIX2FP((int)v, p);
    if (!strcmp(name, "FP2FIX"))
        return FP2FIX(v, p);
    if (!strcmp(name, "FP2FIXR"))
        return FP2FIXR(v, p);
    return -1.0;
}

#ifdef GAP_EVAL_MAIN
int main(void)
{
    char name[64];
    int a[4];
    long long out[2];
    while (scanf("%63s %d %d %d %d", name, &a[0], &a[1], &a[2], &a[3]) == 5) {
        out[0] = out[1] = 0;
        if (gap_eval(name, a, out)) {
            printf("unknown %s\n", name);
            return 2;
        }
        printf("%lld %lld\n", out[0], out[1]);
    }
    return 0;
}
#endif
