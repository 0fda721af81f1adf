/* Micro-benchmarks of the pulp-open cluster on GVSoC: cluster DMA, barrier, fork, cluster start.
 *
 * Every result is printed as one line
 *     @ <experiment> key=value ... v=r0,r1,...
 * where each comma list holds one value per repetition (cycles, raw mcycle differences; the
 * driver bench/gvsoc_micro.py subtracts the counter-read overhead and takes medians). */
#ifndef MICRO_H
#define MICRO_H

#include "bench_common.h"   /* cycles(), print_list(), REPS, run_overhead() */

#define NB_CORES ARCHI_CLUSTER_NB_PE

/* Buffers (micro_main.c). l2_a holds a known pattern written by the fabric controller. */
#define L2_BYTES 16384
#define L1A_BYTES 16384
#define L1B_BYTES 8192
extern unsigned char l2_a[L2_BYTES];
extern unsigned char l2_b[L2_BYTES];
extern unsigned char l1_a[L1A_BYTES];
extern unsigned char l1_b[L1B_BYTES];

/* Two ways for a cluster core to reach the MCHAN:
 * PATH_EXT: pulp-runtime's plp_dma_memcpy/plp_dma_wait, through the cluster peripheral
 *   interconnect to the single "external" command channel that every core shares;
 * PATH_CORE: the core's private channel behind its demux port (what pulp-runtime's
 *   plp_cl_dma_* would use if its DMA_READ_DEMUX macro compiled on plain rv32). */
enum dma_path { PATH_EXT = 0, PATH_CORE = 1 };


#define CORE_DMA_REG(offset) (ARCHI_MCHAN_DEMUX_ADDR + (offset))

/* Same command words as plp_dma_memcpy, pushed to the private channel. PRIV: the end-of-transfer
 * event goes to this core only, so the other cores are not woken. */
static inline int core_dma_memcpy(unsigned int ext, unsigned int loc, unsigned int size, int ext2loc)
{
    int id = pulp_read32(CORE_DMA_REG(MCHAN_CMD_OFFSET));
    unsigned int cmd = plp_dma_getCmd(ext2loc, size, PLP_DMA_1D, PLP_DMA_TRIG_EVT,
                                      PLP_DMA_NO_TRIG_IRQ, PLP_DMA_PRIV);
    pulp_write32(CORE_DMA_REG(MCHAN_CMD_OFFSET), cmd);
    pulp_write32(CORE_DMA_REG(MCHAN_CMD_OFFSET), loc);
    pulp_write32(CORE_DMA_REG(MCHAN_CMD_OFFSET), ext);
    return id;
}

static inline unsigned int core_dma_status(void)
{
    return pulp_read32(CORE_DMA_REG(MCHAN_STATUS_OFFSET));
}

static inline void core_dma_wait(int id)
{
    while (core_dma_status() & (1u << id))
        eu_evt_maskWaitAndClr(1 << ARCHI_CL_EVT_DMA0);
    pulp_write32(CORE_DMA_REG(MCHAN_STATUS_OFFSET), 1u << id);
}

void run_dma_1d(void);
void run_dma_2d(void);
void run_dma_channels(void);
void run_dma_per_core(void);
void run_barrier(void);
void run_fork(void);

#endif
