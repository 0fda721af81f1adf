/*
 * Uses every name Gap8.h defines (tests/harness/test_gap_builtins.py checks that the list below
 * keeps up with the header): a 2019-era basic kernel compiles unchanged.
 */
#include "Gap8.h"

static int ActiveCore = rt_nb_pe();

L1_FC_MEM static int FcWord;
RT_L1_DATA static int L1Word;
RT_L1_GLOBAL_DATA static int L1Global;
RT_L1_BSS static int L1Bss;
RT_L1_ALIAS_DATA static int L1Alias;
RT_L1_TINY_DATA static int L1Tiny;
RT_FC_TINY_DATA static int FcTiny;
RT_FC_GLOBAL_DATA static int FcGlobal;
RT_FC_SHARED_DATA static int FcShared;
RT_FC_DATA static int FcData;
RT_L2_DATA static int L2Word;
RT_L2_RET_DATA static int L2Ret;

static void Entry(void *Arg) { (void)Arg; }

int Cover8System(void)
{
    static char Ext[8], Loc[8];
    gap8_dma_type Req;
    int s = ActiveCore + rt_core_id() + gap8_clusterid() + DMA_COPY_IN + DMA_COPY_OUT;
    gap8_dma_memcpy(Ext, Loc, 8, DMA_COPY_IN, 0, &Req);
    gap8_dma_wait(Req);
    s += FcWord + L1Word + L1Global + L1Bss + L1Alias + L1Tiny + FcTiny + FcGlobal + FcShared
         + FcData + L2Word + L2Ret;
    gap8_setupbarrier(0, 0xFF);
    gap8_waitbarrier(0);
    eu_bar_setup(eu_bar_addr(0), 0xFF);
    eu_bar_trig_wait_clr(eu_bar_addr(0));
    rt_team_fork(rt_nb_pe(), Entry, 0);
    gap8_cluster_wait(0);
    plp_cluster_wait(0);
    s += gap8_task_dispatch(0xFF, Entry, 0);
    plp_setSlaveEntry(0xFF, Entry, 0);
    gap8_fetchenable(0xFF);
    eoc_fetch_enable(0xFF);
    gap8_enable_its();
    gap8_disable_its();
    plp_irq_enable();
    plp_irq_disable();
    gap8_resethwtimer();
    s += gap8_readhwtimer();
    plp_timer_conf_low(1, 1, 0, 0, 0, 0, 0, 0, 0);
    s += plp_timer_get_count_low();
    plp_fc_timer_conf_low(1, 1, 0, 0, 0, 0, 0, 0, 0);
    s += plp_fc_timer_get_count_low();
    START_TIMER();
    STOP_TIMER();
    gap8_setmodehwcounters(HW_COUNT_MODE);
    gap8_setallhwcounters(0);
    gap8_enablehwcounters(1);
    s += gap8_readhwcounter(HW_COUNT_CYCLES);
    gap8_sprwrite(0x780, 1);
    s += gap8_sprread(0x780) + gap8_sprread_vol(0x780);
    s += gap8_read_base_off(0, 4) + gap8_read_base_off_vol(0, 4)
         + gap8_read_base_off_half_vol(0, 4) + gap8_read_base_off_byte_vol(0, 4);
    gap8_write_base_off(0, 4, 1);
    gap8_write_base_off_vol(0, 4, 1);
    gap8_write_base_off_half_vol(1, 0, 4);
    gap8_write_base_off_byte_vol(1, 0, 4);
    return s;
}

int Cover8Builtins(int acc, int x, int y, int n, v2s *h, v4s *b, v2u *uh, v4u *ub)
{
    v2s a = gap8_pack2(x, y), c;
    v4s d = gap8_pack4(x, y, 1, 2), e;
    v2u f = gap8_packu2(x, y), g;
    v4u k = gap8_packu4(x, y, 1, 2), m;
    int s = gap8_clip(x, 7) + gap8_clipu(x, 7);
    unsigned int u = 0;
    c = gap8_abs2(gap8_max2(a, gap8_min2(a, h[0])));
    e = gap8_abs4(gap8_max4(d, gap8_min4(d, b[0])));
    g = gap8_maxu2(f, gap8_minu2(f, uh[0]));
    m = gap8_maxu4(k, gap8_minu4(k, ub[0]));
    s += gap8_macs(acc, x, y) + gap8_machhs(acc, x, y) + gap8_macsN(acc, x, y, n)
         + gap8_macsRN(acc, x, y, n) + gap8_machhsN(acc, x, y, n) + gap8_machhsRN(acc, x, y, n);
    u += gap8_macu(acc, x, y) + gap8_machhu(acc, x, y) + gap8_macuN(acc, x, y, n)
         + gap8_macuRN(acc, x, y, n) + gap8_machhuN(acc, x, y, n) + gap8_machhuRN(acc, x, y, n);
    s += gap8_muls(x, y) + gap8_mulhhs(x, y) + gap8_mulsN(x, y, n) + gap8_mulsRN(x, y, n)
         + gap8_mulhhsN(x, y, n) + gap8_mulhhsRN(x, y, n);
    u += gap8_mulu(x, y) + gap8_mulhhu(x, y) + gap8_muluN(x, y, n) + gap8_muluRN(x, y, n)
         + gap8_mulhhuN(x, y, n) + gap8_mulhhuRN(x, y, n);
    s += gap8_dotp2(c, a) + gap8_dotpus2(g, c) + gap8_dotp4(e, d) + gap8_dotpus4(m, e);
    u += gap8_dotpu2(g, f) + gap8_dotpu4(m, k);
    s += gap8_sumdotp2(c, a, acc) + gap8_sumdotpus2(g, c, acc) + gap8_sumdotp4(e, d, acc)
         + gap8_sumdotpus4(m, e, acc);
    u += gap8_sumdotpu2(g, f, u) + gap8_sumdotpu4(m, k, u);
    c = gap8_cplxmuls(c, a);
    c = gap8_cplxmulsdiv2(c, a);
    c = gap8_cplxmulsdiv4(c, a);
    c = gap8_cplxconj(gap8_cplxmj(c));
    c = gap8_sub2rotmj(c, a);
    c = gap8_add2div2(gap8_add2div4(c, a), gap8_sub2div2(gap8_sub2div4(c, a), a));
    c = gap8_vitsel(gap8_vitmax(c, a), a);
    s += gap8_fl1((unsigned int)x) + gap8_clb(x) + gap8_rotr(x);
    s += gap8_bitextract(x, 5, 3) + gap8_bitextract_r(x, 5, 3) + gap8_bitextract_r_safe(x, 5, 3);
    u += gap8_bitextractu(x, 5, 3) + gap8_bitextractu_r(x, 5, 3)
         + gap8_bitextractu_r_safe(x, 5, 3);
    s += gap8_bitinsert(x, y, 4, 8) + gap8_bitinsert_r(x, y, 4, 8)
         + gap8_bitinsert_r_safe(x, y, 4, 8);
    s += gap8_addroundnorm(x, y, n) + gap8_addroundnorm_reg(x, y, n) + gap8_roundnorm(x, n)
         + gap8_roundnorm_reg(x, n);
    u += gap8_addroundnormu(x, y, n) + gap8_addroundnormu_reg(x, y, n) + gap8_roundnormu(x, n)
         + gap8_roundnormu_reg(x, n);
    h[1] = c;
    b[1] = e;
    uh[1] = g;
    ub[1] = m;
    return s + (int)u;
}
