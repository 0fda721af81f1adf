/*
 * at_api.h - the runtime macro layer that generated user kernels are written against, mapped
 * onto the host harness's simulated chip (at_sim.h).
 *
 * On a real GAP these names map onto PMSIS drivers; here DMA is asynchronous (the destination
 * reads as 0xCD until AT_L2_WAIT), AT_FORK runs the entry on every core id, and AT_SIM_COMPUTE
 * advances the simulated clock (it would be empty on a real chip). `dev` arguments are
 * evaluated and ignored: there is one cluster DMA engine.
 */
#ifndef AT_API_H
#define AT_API_H

#include "at_sim.h"

/* ---- memory areas ---------------------------------------------------------------------- */

#define AT_L1_POINTER char *
#define AT_L2_POINTER char *
#define L1_CL_MEM
#define L2_MEM

/* Past capacity these return NULL, as on the chip; the allocation is labelled "AT_L1_ALLOC@file:line". */
#define AT_L1_ALLOC(dev, size) \
    ((void)(dev), (AT_L1_POINTER)at_sim_alloc_at(AT_SIM_L1, (long long)(size), "AT_L1_ALLOC", \
                                                 __FILE__, __LINE__))
#define AT_L1_FREE(dev, ptr, size) \
    ((void)(dev), at_sim_free(AT_SIM_L1, (void *)(ptr), (long long)(size), __FILE__, __LINE__))
#define AT_L2_ALLOC(dev, size) \
    ((void)(dev), (AT_L2_POINTER)at_sim_alloc_at(AT_SIM_L2, (long long)(size), "AT_L2_ALLOC", \
                                                 __FILE__, __LINE__))
#define AT_L2_FREE(dev, ptr, size) \
    ((void)(dev), at_sim_free(AT_SIM_L2, (void *)(ptr), (long long)(size), __FILE__, __LINE__))

/* ---- cluster DMA, L2 <-> L1 ------------------------------------------------------------ */

#define AT_L2_EVENT at_sim_event_t
#define AT_L2_EXT_ADDR_TYPE char *
#define AT_L2_INT_ADDR_TYPE char *
#define AT_L2_LOC_ADDR_TYPE char *
#define AT_L2_EXT2LOC 0
#define AT_L2_LOC2EXT 1

#define AT_L2_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), at_sim_copy((void *)(ext), (void *)(loc), (long long)(size), (int)(dir), \
                              (event), __FILE__, __LINE__))
/* size bytes in lines of `length` bytes; the ext side advances by `stride` per line, loc is
 * contiguous. */
#define AT_L2_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    ((void)(dev), at_sim_copy2d((void *)(ext), (void *)(loc), (long long)(size), \
                                (long long)(stride), (long long)(length), (int)(dir), \
                                (event), __FILE__, __LINE__))
#define AT_L2_WAIT(dev, event) ((void)(dev), at_sim_wait((event), __FILE__, __LINE__))

/* ---- cores ----------------------------------------------------------------------------- */

/* Generated code passes the entry either as a function or cast to (void *); going through
 * void (*)(void) keeps gcc's -Wcast-function-type quiet in both cases. */
#define AT_FORK(ncores, entry, arg) \
    at_sim_fork((int)(ncores), (void (*)(void *))(void (*)(void))(entry), (void *)(arg), \
                __FILE__, __LINE__)
/* On the target the fork already ran the entry on every core (including the master). */
#define __CALL(entry, arg) ((void)0)
#define AT_FORK_WAIT() at_sim_barrier()
#define AT_COREID() at_sim_core_id()
#define AT_NCORE() at_sim_num_cores()
#define AT_CLUSTERID() 0

/* ---- simulated clock ------------------------------------------------------------------- */

/* Emitted right before each basic-kernel call with that call's compute cost (cycles). */
#define AT_SIM_COMPUTE(cycles) at_sim_compute((long long)(cycles))

/* ---- L3 devices ------------------------------------------------------------------------ */
/*
 * Reserved for the L3 issue: AT_HYPERRAM_* / AT_QSPIRAM_* / AT_DEFAULTRAM_* (POINTER, ALLOC,
 * FREE, CONF_*, OPEN, CLOSE, FC/CL COPY, COPY2D, WAIT, EVENT) and the flash file-system
 * family AT_*FLASH_FS_* on the simulator's uDMA engine (counters l3_to_l2 / l2_to_l3,
 * dma_busy_cycles["udma"]). Not implemented yet: generated code using them fails to compile.
 */

#endif /* AT_API_H */
