/*
 * at_api.h (target) - the runtime macro layer of generated user kernels mapped onto a real
 * PULP cluster through pulp-runtime: GVSoC's pulp-open target, compiled for rv32imc.
 *
 * The host harness's at_api.h maps the same names onto its simulator (at_sim.h); this one is
 * what a chip runs: AT_L2_COPY/COPY2D program the cluster DMA (MCHAN) and AT_L2_WAIT waits on
 * its transfer counter, AT_FORK runs the entry on every cluster core (the master included) and
 * returns after a closing barrier, AT_SIM_COMPUTE and the node markers cost nothing (the cores
 * take the real time). The few at_sim_* names Gap.h reads (core id, barrier, clock, L1/L2
 * allocation, core count) are given here too, so the harness's Gap.h serves both builds.
 *
 * Not supported on this target yet (a compile error names them): L3 RAM and flash devices
 * (AT_<DEV>RAM_*, AT_<DEV>FLASH_*) - the back-end refuses kernels and graphs that use them
 * before compiling.
 */
#ifndef AT_API_H
#define AT_API_H

/* Generated code and basic kernels see only this header, not pulp.h (which needs GNU C): they
 * build with -std=c99 -Wall -Wextra -Werror as on the host. The values below are pulp-runtime's
 * (data/data.h, hal/dma/mchan_v7.h); at_target.c, which includes pulp.h, checks them. */
#define AT_TARGET_L1_SECTION __attribute__((section(".data_l1")))
#define AT_TARGET_DMA_LOC2EXT 0
#define AT_TARGET_DMA_EXT2LOC 1

/* gap_ncore(): the cluster's core count, a constant expression as on the host (the back-end
 * passes -DAT_SIM_NCORES=8 for pulp-open). */
#ifndef AT_SIM_NCORES
#error "AT_SIM_NCORES (the cluster's core count) must be defined by the build"
#endif
#define AT_SIM_L1 1
#define AT_SIM_L2 2

/* ---- cores, clock, allocation (at_target.c) ------------------------------------------- */

int at_target_core_id(void);
void at_target_barrier(void);
unsigned int at_target_clock(void);
void *at_target_alloc(int level, long long size);
void at_target_free(int level, void *ptr, long long size);
void at_target_fork(int ncores, void (*entry)(void *), void *arg);
extern int at_target_profile_forks;
void at_target_reset_forks(void);
void at_target_print_forks(void);

#define at_sim_core_id() at_target_core_id()
#define at_sim_barrier() at_target_barrier()
#define at_sim_clock() at_target_clock()
#define at_sim_alloc_at(level, size, label, file, line) \
    ((void)(label), (void)(file), (void)(line), at_target_alloc((level), (size)))
#define at_sim_free(level, ptr, size, file, line) \
    ((void)(file), (void)(line), at_target_free((level), (ptr), (size)))

/* ---- memory areas ---------------------------------------------------------------------- */

#define AT_L1_POINTER char *
#define AT_L2_POINTER char *
/* The L1 pointer symbol lives in L1 as on GAP (PI_CL_L1); L2 data is the default section. */
#define L1_CL_MEM AT_TARGET_L1_SECTION
#define L2_MEM

#define AT_L1_ALLOC(dev, size) ((void)(dev), (AT_L1_POINTER)at_target_alloc(AT_SIM_L1, (long long)(size)))
#define AT_L1_FREE(dev, ptr, size) ((void)(dev), at_target_free(AT_SIM_L1, (void *)(ptr), (long long)(size)))
#define AT_L2_ALLOC(dev, size) ((void)(dev), (AT_L2_POINTER)at_target_alloc(AT_SIM_L2, (long long)(size)))
#define AT_L2_FREE(dev, ptr, size) ((void)(dev), at_target_free(AT_SIM_L2, (void *)(ptr), (long long)(size)))

/* ---- cluster DMA, L2 <-> L1 (MCHAN) ---------------------------------------------------- */

/* One transfer counter per event, as pi_cl_dma_cmd_t keeps its id. */
typedef struct {
    int id;
} at_target_event_t;
typedef at_target_event_t at_sim_event_t;

void at_target_copy(char *ext, char *loc, int size, int dir, at_target_event_t *event);
void at_target_copy2d(char *ext, char *loc, int size, int stride, int length, int dir, at_target_event_t *event);
void at_target_wait(at_target_event_t *event);

#define AT_L2_EVENT at_target_event_t
#define AT_L2_EXT_ADDR_TYPE char *
#define AT_L2_INT_ADDR_TYPE char *
#define AT_L2_LOC_ADDR_TYPE char *
#define AT_L2_EXT2LOC AT_TARGET_DMA_EXT2LOC
#define AT_L2_LOC2EXT AT_TARGET_DMA_LOC2EXT

#define AT_L2_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), at_target_copy((char *)(ext), (char *)(loc), (int)(size), (int)(dir), (event)))
/* size bytes in lines of `length` bytes; the ext side advances by `stride` per line. */
#define AT_L2_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    ((void)(dev), at_target_copy2d((char *)(ext), (char *)(loc), (int)(size), (int)(stride), \
                                   (int)(length), (int)(dir), (event)))
#define AT_L2_WAIT(dev, event) ((void)(dev), at_target_wait(event))

/* ---- cores ----------------------------------------------------------------------------- */

/* The fork runs the entry on every core, master included, and returns after the join. */
#define AT_FORK(ncores, entry, arg) \
    at_target_fork((int)(ncores), (void (*)(void *))(void (*)(void))(entry), (void *)(arg))
#define __CALL(entry, arg) ((void)0)
#define AT_FORK_WAIT() ((void)0)
#define AT_COREID() at_target_core_id()
#define AT_NCORE() (AT_SIM_NCORES)
#define AT_CLUSTERID() 0

/* ---- host-simulator hooks: nothing to do on a chip ------------------------------------- */

/* AT_SIM_COMPUTE: the call's Cost=, kept only while GvsocProgram.profile runs (a flag test
 * otherwise, a few cycles per call) so the fork accounting can pair it with measured cycles. */
extern long long at_target_cost;
#define AT_SIM_COMPUTE(cycles) \
    do { if (at_target_profile_forks) at_target_cost = (long long)(cycles); } while (0)
/* Graph runners: per-node cycles, read back by the back-end (at_target.c). */
void at_target_node_begin(int node);
void at_target_node_end(int node);
#define AT_SIM_NODE_BEGIN(node) at_target_node_begin(node)
#define AT_SIM_NODE_END(node) at_target_node_end(node)
#define AT_YIELD() 0

#endif /* AT_API_H */
