/*
 * Gap8.h - the 2019 GAP SDK's gap8_* builtins and runtime names, for basic kernels of that era
 * compiled by the host harness.
 *
 * Every builtin is the gap_* builtin of Gap.h under its gap8_ name (same chip semantics, see
 * Gap.h); gap8_coreid(), gap8_ncore(), rt_nb_pe(), rt_team_barrier() and rt_team_fork() are in
 * Gap.h itself. The system part
 * maps core identity, barriers and forks onto the simulator and, like the SDK's emulation, turns
 * the hardware-only names (special registers, memory-mapped peripherals, interrupts, hardware
 * timers and counters, fetch enable) into no-ops that read as 0; their arguments are dropped, as
 * there, so HwCount.h constants need not exist. The era's cluster DMA calls a basic kernel may
 * make itself (gap8_dma_memcpy / gap8_dma_wait, e.g. the v2 FFT installing its twiddles in L1)
 * are the simulator's cluster DMA, asynchronous and checked like the AT_L2_* macros; the
 * runtime's rt_dma_memcpy and gap8_cluster_udma_memcpy are not provided (generated code moves
 * data with the AT_* macros of at_api.h).
 */
#ifndef GAP8_H
#define GAP8_H

#include "Gap.h"

/* ---- packing ----------------------------------------------------------------------------- */
#define gap8_pack2(x, y) gap_pack2(x, y)
#define gap8_packu2(x, y) gap_packu2(x, y)
#define gap8_pack4(x, y, z, t) gap_pack4(x, y, z, t)
#define gap8_packu4(x, y, z, t) gap_packu4(x, y, z, t)

/* ---- lane-wise max / min / abs ----------------------------------------------------------- */
#define gap8_max2(x, y) gap_max2(x, y)
#define gap8_max4(x, y) gap_max4(x, y)
#define gap8_maxu2(x, y) gap_maxu2(x, y)
#define gap8_maxu4(x, y) gap_maxu4(x, y)
#define gap8_min2(x, y) gap_min2(x, y)
#define gap8_min4(x, y) gap_min4(x, y)
#define gap8_minu2(x, y) gap_minu2(x, y)
#define gap8_minu4(x, y) gap_minu4(x, y)
#define gap8_abs2(x) gap_abs2(x)
#define gap8_abs4(x) gap_abs4(x)

/* ---- clipping ---------------------------------------------------------------------------- */
#define gap8_clip(x, precision) gap_clip(x, precision)
#define gap8_clipu(x, precision) gap_clipu(x, precision)

/* ---- multiply-accumulate ----------------------------------------------------------------- */
#define gap8_macs(Acc, x, y) gap_macs(Acc, x, y)
#define gap8_machhs(Acc, x, y) gap_machhs(Acc, x, y)
#define gap8_macu(Acc, x, y) gap_macu(Acc, x, y)
#define gap8_machhu(Acc, x, y) gap_machhu(Acc, x, y)
#define gap8_macsN(Acc, x, y, n) gap_macsN(Acc, x, y, n)
#define gap8_macuN(Acc, x, y, n) gap_macuN(Acc, x, y, n)
#define gap8_macsRN(Acc, x, y, n) gap_macsRN(Acc, x, y, n)
#define gap8_macuRN(Acc, x, y, n) gap_macuRN(Acc, x, y, n)
#define gap8_machhsN(Acc, x, y, n) gap_machhsN(Acc, x, y, n)
#define gap8_machhuN(Acc, x, y, n) gap_machhuN(Acc, x, y, n)
#define gap8_machhsRN(Acc, x, y, n) gap_machhsRN(Acc, x, y, n)
#define gap8_machhuRN(Acc, x, y, n) gap_machhuRN(Acc, x, y, n)

/* ---- multiplications --------------------------------------------------------------------- */
#define gap8_muls(x, y) gap_muls(x, y)
#define gap8_mulu(x, y) gap_mulu(x, y)
#define gap8_mulhhs(x, y) gap_mulhhs(x, y)
#define gap8_mulhhu(x, y) gap_mulhhu(x, y)
#define gap8_mulsN(x, y, n) gap_mulsN(x, y, n)
#define gap8_mulsRN(x, y, n) gap_mulsRN(x, y, n)
#define gap8_muluN(x, y, n) gap_muluN(x, y, n)
#define gap8_muluRN(x, y, n) gap_muluRN(x, y, n)
#define gap8_mulhhsN(x, y, n) gap_mulhhsN(x, y, n)
#define gap8_mulhhsRN(x, y, n) gap_mulhhsRN(x, y, n)
#define gap8_mulhhuN(x, y, n) gap_mulhhuN(x, y, n)
#define gap8_mulhhuRN(x, y, n) gap_mulhhuRN(x, y, n)

/* ---- dot products ------------------------------------------------------------------------ */
#define gap8_dotp2(x, y) gap_dotp2(x, y)
#define gap8_dotpu2(x, y) gap_dotpu2(x, y)
#define gap8_dotpus2(x, y) gap_dotpus2(x, y)
#define gap8_sumdotp2(x, y, z) gap_sumdotp2(x, y, z)
#define gap8_sumdotpu2(x, y, z) gap_sumdotpu2(x, y, z)
#define gap8_sumdotpus2(x, y, z) gap_sumdotpus2(x, y, z)
#define gap8_dotp4(x, y) gap_dotp4(x, y)
#define gap8_dotpu4(x, y) gap_dotpu4(x, y)
#define gap8_dotpus4(x, y) gap_dotpus4(x, y)
#define gap8_sumdotp4(x, y, z) gap_sumdotp4(x, y, z)
#define gap8_sumdotpu4(x, y, z) gap_sumdotpu4(x, y, z)
#define gap8_sumdotpus4(x, y, z) gap_sumdotpus4(x, y, z)

/* ---- complex arithmetic ------------------------------------------------------------------ */
#define gap8_cplxmuls(x, y) gap_cplxmuls(x, y)
#define gap8_cplxmulsdiv2(x, y) gap_cplxmulsdiv2(x, y)
#define gap8_cplxmulsdiv4(x, y) gap_cplxmulsdiv4(x, y)
#define gap8_cplxconj(x) gap_cplxconj(x)
#define gap8_cplxmj(x) gap_cplxmj(x)
#define gap8_sub2rotmj(x, y) gap_sub2rotmj(x, y)
#define gap8_add2div2(x, y) gap_add2div2(x, y)
#define gap8_add2div4(x, y) gap_add2div4(x, y)
#define gap8_sub2div2(x, y) gap_sub2div2(x, y)
#define gap8_sub2div4(x, y) gap_sub2div4(x, y)

/* ---- Viterbi ----------------------------------------------------------------------------- */
#define gap8_vitmax(x, y) gap_vitmax(x, y)
#define gap8_vitsel(x, y) gap_vitsel(x, y)

/* ---- bit manipulation -------------------------------------------------------------------- */
#define gap8_fl1(x) gap_fl1(x)
#define gap8_clb(x) gap_clb(x)
#define gap8_bitextract(x, size, off) gap_bitextract(x, size, off)
#define gap8_bitextractu(x, size, off) gap_bitextractu(x, size, off)
#define gap8_bitextract_r(x, size, off) gap_bitextract_r(x, size, off)
#define gap8_bitextractu_r(x, size, off) gap_bitextractu_r(x, size, off)
#define gap8_bitextract_r_safe(x, size, off) gap_bitextract_r_safe(x, size, off)
#define gap8_bitextractu_r_safe(x, size, off) gap_bitextractu_r_safe(x, size, off)
#define gap8_bitinsert(dst, src, size, off) gap_bitinsert(dst, src, size, off)
#define gap8_bitinsert_r(dst, src, size, off) gap_bitinsert_r(dst, src, size, off)
#define gap8_bitinsert_r_safe(dst, src, size, off) gap_bitinsert_r_safe(dst, src, size, off)
#define gap8_rotr(x) gap_rotr(x)

/* ---- normalisation and rounding ---------------------------------------------------------- */
#define gap8_addroundnormu(x, y, scale) gap_addroundnormu(x, y, scale)
#define gap8_addroundnormu_reg(x, y, scale) gap_addroundnormu_reg(x, y, scale)
#define gap8_addroundnorm(x, y, scale) gap_addroundnorm(x, y, scale)
#define gap8_addroundnorm_reg(x, y, scale) gap_addroundnorm_reg(x, y, scale)
#define gap8_roundnormu(x, scale) gap_roundnormu(x, scale)
#define gap8_roundnormu_reg(x, scale) gap_roundnormu_reg(x, scale)
#define gap8_roundnorm(x, scale) gap_roundnorm(x, scale)
#define gap8_roundnorm_reg(x, scale) gap_roundnorm_reg(x, scale)

/* ---- cores, barriers, forks -------------------------------------------------------------- */

static inline int gap8_clusterid(void) { return 0; }
#define rt_core_id() gap_coreid()
#define gap8_setupbarrier(BarN, CoreM) gap_setupbarrier(BarN, CoreM)
#define gap8_waitbarrier(BarN) gap_waitbarrier(BarN)
#define eu_bar_addr(BarN) (BarN)
#define eu_bar_setup(Bar, CoreMask) ((void)(Bar), (void)(CoreMask))
#define eu_bar_trig_wait_clr(Bar) gap_waitbarrier(Bar)
#define gap8_cluster_wait(x) ((void)0)
#define plp_cluster_wait(x) ((void)0)
#define gap8_task_dispatch(CoreMask, Handler, Arg) ((int)0)
#define plp_setSlaveEntry(CoreMask, Handler, Arg) ((void)0)
#define gap8_fetchenable(CoreMask) ((void)0)
#define eoc_fetch_enable(CoreMask) ((void)0)

/* ---- interrupts, timers, hardware counters (no-ops reading 0; gap8_readhwtimer: the clock) -- */

#define gap8_enable_its() ((void)0)
#define gap8_disable_its() ((void)0)
#define plp_irq_enable() ((void)0)
#define plp_irq_disable() ((void)0)
#define gap8_resethwtimer() ((void)0)
#define gap8_readhwtimer() ((int)at_sim_clock())
#define plp_timer_conf_low(a, b, c, d, e, f, g, h, i) ((void)0)
#define plp_timer_get_count_low() ((int)0)
#define plp_fc_timer_conf_low(a, b, c, d, e, f, g, h, i) ((void)0)
#define plp_fc_timer_get_count_low() ((int)0)
#define START_TIMER() ((void)0)
#define STOP_TIMER() ((void)0)
#define gap8_setmodehwcounters(Val) ((void)0)
#define gap8_setallhwcounters(Val) ((void)0)
#define gap8_enablehwcounters(Val) ((void)0)
#define gap8_readhwcounter(Which) ((int)0)

/* ---- special registers and memory-mapped peripherals (no-ops reading 0) ------------------ */

#define gap8_sprwrite(x, y) ((void)0)
#define gap8_sprread(x) ((int)0)
#define gap8_sprread_vol(x) ((int)0)
#define gap8_read_base_off(base, off) ((int)0)
#define gap8_read_base_off_vol(base, off) ((int)0)
#define gap8_read_base_off_half_vol(base, off) ((int)0)
#define gap8_read_base_off_byte_vol(base, off) ((int)0)
#define gap8_write_base_off(base, off, val) ((void)0)
#define gap8_write_base_off_vol(base, off, val) ((void)0)
#define gap8_write_base_off_half_vol(x, base, off) ((void)0)
#define gap8_write_base_off_byte_vol(x, base, off) ((void)0)

/* ---- memory placement and DMA directions of that era ------------------------------------- */

#define L1_FC_MEM
#define RT_L1_DATA
#define RT_L1_GLOBAL_DATA
#define RT_L1_BSS
#define RT_L1_ALIAS_DATA
#define RT_L1_TINY_DATA
#define RT_FC_TINY_DATA
#define RT_FC_GLOBAL_DATA
#define RT_FC_SHARED_DATA
#define RT_FC_DATA
#define RT_L2_DATA
#define RT_L2_RET_DATA
#define DMA_COPY_IN 1
#define DMA_COPY_OUT 0

/* ---- the era's cluster DMA, on the simulator's ------------------------------------------- */

/* gap8_dma_memcpy(Ext, Loc, Size, Dir, Merge, &Req) starts a copy between L2 (Ext) and L1 (Loc),
 * Ext to Loc when Dir is DMA_COPY_IN; request merging (Merge) has no effect here. The transfer
 * is asynchronous: gap8_dma_wait(Req) waits for it, as on the chip. */
typedef at_sim_event_t gap8_dma_type;
#define gap8_dma_memcpy(ext, loc, size, dir, merge, req) \
    ((void)(merge), AT_L2_COPY(0, (ext), (loc), (size), (dir) == DMA_COPY_IN ? AT_L2_EXT2LOC : AT_L2_LOC2EXT, (req)))
#define gap8_dma_wait(req) AT_L2_WAIT(0, &(req))

#endif /* GAP8_H */
