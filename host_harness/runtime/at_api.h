/*
 * at_api.h - the runtime macro layer that generated user kernels are written against, mapped
 * onto the host harness's simulated chip (at_sim.h).
 *
 * On a real GAP these names map onto PMSIS drivers; here DMA is asynchronous (the destination
 * reads as 0xCD until AT_L2_WAIT), AT_FORK runs the entry on every core id, and AT_SIM_COMPUTE
 * advances the simulated clock (it would be empty on a real chip). `dev` arguments of the L1/L2
 * macros are evaluated and ignored: there is one cluster DMA engine. The L3 device macros do
 * use theirs (a device must be open), see the last section.
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
#define AT_SIM_COMPUTE(cycles) at_sim_compute_at((long long)(cycles), __FILE__, __LINE__)

/* ---- L3 RAM devices, L3 <-> L2 on the uDMA ----------------------------------------------- */
/*
 * Every RAM family maps onto the same simulated L3 arena and uDMA engine (one FIFO, concurrent
 * with the cores and the cluster DMA; counters l3_to_l2 / l2_to_l3, dma_busy_cycles["udma"]).
 * The AT_SIM_RAM_* helpers below hold the semantics, each family is a list of one-liners on
 * them: the family name is passed as a string so that fault messages name the macro the code
 * used ("missing AT_HYPERRAM_CL_WAIT", "missing AT_QSPIRAM_OPEN").
 *
 * As on the chip, transfers need an opened device: AT_<DEV>_OPEN records `dev` in the
 * simulator (the harness trampoline opens the devices a manifest lists before each call and
 * closes them after). AT_<DEV>_ALLOC returns NULL past the L3 capacity and labels the
 * allocation "AT_<DEV>_ALLOC@file:line". The ext side of a copy must lie in one live L3
 * allocation, the loc side in one live L2 allocation. FC and CL variants behave the same here
 * (the fabric controller and the cluster share the one simulated clock); the events are
 * at_sim_udma_event_t, a type distinct from AT_L2_EVENT so that mixing them up does not
 * compile. The flash file-system families (AT_*FLASH_FS_*) are not provided.
 */

/* CONF_INIT's first argument is the configuration (named `dev` in the original). */
#define AT_SIM_RAM_CONF_INIT(conf, mem_type, mem_name) \
    ((void)((conf)->type = (int)(mem_type)), (void)((conf)->name = (mem_name)))
#define AT_SIM_RAM_OPEN(family, dev, conf, err) \
    do { \
        (void)(conf); \
        at_sim_device_open((void *)(dev), family, __FILE__, __LINE__); \
        *(err) = 0; \
    } while (0)
#define AT_SIM_RAM_CLOSE(dev) at_sim_device_close((void *)(dev))
#define AT_SIM_RAM_ALLOC(family, dev, size) \
    ((void)(dev), (char *)at_sim_alloc_at(AT_SIM_L3, (long long)(size), "AT_" family "_ALLOC", \
                                          __FILE__, __LINE__))
#define AT_SIM_RAM_FREE(family, dev, ptr, size) \
    ((void)(dev), at_sim_free_as("AT_" family "_FREE", AT_SIM_L3, (void *)(ptr), \
                                 (long long)(size), __FILE__, __LINE__))
/* api is "AT_<DEV>_CL" or "AT_<DEV>_FC". A 1D copy is one line: stride = length = size. */
#define AT_SIM_RAM_COPY(api, dev, ext, loc, size, dir, event) \
    at_sim_udma_copy_as(api, (void *)(dev), (void *)(ext), (void *)(loc), (long long)(size), \
                        (long long)(size), (long long)(size), (int)(dir), (event), \
                        __FILE__, __LINE__)
/* size bytes in lines of `length` bytes; the ext (L3) side advances by `stride` per line, loc
 * (L2) is contiguous. */
#define AT_SIM_RAM_COPY2D(api, dev, ext, loc, size, stride, length, dir, event) \
    at_sim_udma_copy_as(api, (void *)(dev), (void *)(ext), (void *)(loc), (long long)(size), \
                        (long long)(stride), (long long)(length), (int)(dir), (event), \
                        __FILE__, __LINE__)
#define AT_SIM_RAM_WAIT(api, dev, event) \
    at_sim_udma_wait_as(api, (void *)(dev), (event), __FILE__, __LINE__)

#define AT_HYPERRAM_T at_sim_ram_t
#define AT_HYPERRAM_CONF_T at_sim_ram_conf_t
#define AT_HYPERRAM_CONF_INIT(dev, type, name) AT_SIM_RAM_CONF_INIT(dev, type, name)
#define AT_HYPERRAM_OPEN(dev, conf, err) AT_SIM_RAM_OPEN("HYPERRAM", dev, conf, err)
#define AT_HYPERRAM_CLOSE(dev) AT_SIM_RAM_CLOSE(dev)
#define AT_HYPERRAM_POINTER char *
#define AT_HYPERRAM_EXT_ADDR_TYPE char *
#define AT_HYPERRAM_LOC_ADDR_TYPE char *
#define AT_HYPERRAM_INT_ADDR_TYPE char *
#define AT_HYPERRAM_ALLOC(dev, size) AT_SIM_RAM_ALLOC("HYPERRAM", dev, size)
#define AT_HYPERRAM_FREE(dev, ptr, size) AT_SIM_RAM_FREE("HYPERRAM", dev, ptr, size)
#define AT_HYPERRAM_EXT2LOC 0
#define AT_HYPERRAM_LOC2EXT 1
#define AT_HYPERRAM_CL_EVENT at_sim_udma_event_t
#define AT_HYPERRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_HYPERRAM_CL", dev, ext, loc, size, dir, event)
#define AT_HYPERRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_HYPERRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_HYPERRAM_CL_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_HYPERRAM_CL", dev, event)
#define AT_HYPERRAM_FC_EVENT at_sim_udma_event_t
#define AT_HYPERRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_HYPERRAM_FC", dev, ext, loc, size, dir, event)
#define AT_HYPERRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_HYPERRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_HYPERRAM_FC_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_HYPERRAM_FC", dev, event)

#define AT_QSPIRAM_T at_sim_ram_t
#define AT_QSPIRAM_CONF_T at_sim_ram_conf_t
#define AT_QSPIRAM_CONF_INIT(dev, type, name) AT_SIM_RAM_CONF_INIT(dev, type, name)
#define AT_QSPIRAM_OPEN(dev, conf, err) AT_SIM_RAM_OPEN("QSPIRAM", dev, conf, err)
#define AT_QSPIRAM_CLOSE(dev) AT_SIM_RAM_CLOSE(dev)
#define AT_QSPIRAM_POINTER char *
#define AT_QSPIRAM_EXT_ADDR_TYPE char *
#define AT_QSPIRAM_LOC_ADDR_TYPE char *
#define AT_QSPIRAM_INT_ADDR_TYPE char *
#define AT_QSPIRAM_ALLOC(dev, size) AT_SIM_RAM_ALLOC("QSPIRAM", dev, size)
#define AT_QSPIRAM_FREE(dev, ptr, size) AT_SIM_RAM_FREE("QSPIRAM", dev, ptr, size)
#define AT_QSPIRAM_EXT2LOC 0
#define AT_QSPIRAM_LOC2EXT 1
#define AT_QSPIRAM_CL_EVENT at_sim_udma_event_t
#define AT_QSPIRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_QSPIRAM_CL", dev, ext, loc, size, dir, event)
#define AT_QSPIRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_QSPIRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_QSPIRAM_CL_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_QSPIRAM_CL", dev, event)
#define AT_QSPIRAM_FC_EVENT at_sim_udma_event_t
#define AT_QSPIRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_QSPIRAM_FC", dev, ext, loc, size, dir, event)
#define AT_QSPIRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_QSPIRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_QSPIRAM_FC_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_QSPIRAM_FC", dev, event)

#define AT_OSPIRAM_T at_sim_ram_t
#define AT_OSPIRAM_CONF_T at_sim_ram_conf_t
#define AT_OSPIRAM_CONF_INIT(dev, type, name) AT_SIM_RAM_CONF_INIT(dev, type, name)
#define AT_OSPIRAM_OPEN(dev, conf, err) AT_SIM_RAM_OPEN("OSPIRAM", dev, conf, err)
#define AT_OSPIRAM_CLOSE(dev) AT_SIM_RAM_CLOSE(dev)
#define AT_OSPIRAM_POINTER char *
#define AT_OSPIRAM_EXT_ADDR_TYPE char *
#define AT_OSPIRAM_LOC_ADDR_TYPE char *
#define AT_OSPIRAM_INT_ADDR_TYPE char *
#define AT_OSPIRAM_ALLOC(dev, size) AT_SIM_RAM_ALLOC("OSPIRAM", dev, size)
#define AT_OSPIRAM_FREE(dev, ptr, size) AT_SIM_RAM_FREE("OSPIRAM", dev, ptr, size)
#define AT_OSPIRAM_EXT2LOC 0
#define AT_OSPIRAM_LOC2EXT 1
#define AT_OSPIRAM_CL_EVENT at_sim_udma_event_t
#define AT_OSPIRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_OSPIRAM_CL", dev, ext, loc, size, dir, event)
#define AT_OSPIRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_OSPIRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_OSPIRAM_CL_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_OSPIRAM_CL", dev, event)
#define AT_OSPIRAM_FC_EVENT at_sim_udma_event_t
#define AT_OSPIRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_OSPIRAM_FC", dev, ext, loc, size, dir, event)
#define AT_OSPIRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_OSPIRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_OSPIRAM_FC_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_OSPIRAM_FC", dev, event)

#define AT_DEFAULTRAM_T at_sim_ram_t
#define AT_DEFAULTRAM_CONF_T at_sim_ram_conf_t
#define AT_DEFAULTRAM_CONF_INIT(dev, type, name) AT_SIM_RAM_CONF_INIT(dev, type, name)
#define AT_DEFAULTRAM_OPEN(dev, conf, err) AT_SIM_RAM_OPEN("DEFAULTRAM", dev, conf, err)
#define AT_DEFAULTRAM_CLOSE(dev) AT_SIM_RAM_CLOSE(dev)
#define AT_DEFAULTRAM_POINTER char *
#define AT_DEFAULTRAM_EXT_ADDR_TYPE char *
#define AT_DEFAULTRAM_LOC_ADDR_TYPE char *
#define AT_DEFAULTRAM_INT_ADDR_TYPE char *
#define AT_DEFAULTRAM_ALLOC(dev, size) AT_SIM_RAM_ALLOC("DEFAULTRAM", dev, size)
#define AT_DEFAULTRAM_FREE(dev, ptr, size) AT_SIM_RAM_FREE("DEFAULTRAM", dev, ptr, size)
#define AT_DEFAULTRAM_EXT2LOC 0
#define AT_DEFAULTRAM_LOC2EXT 1
#define AT_DEFAULTRAM_CL_EVENT at_sim_udma_event_t
#define AT_DEFAULTRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_DEFAULTRAM_CL", dev, ext, loc, size, dir, event)
#define AT_DEFAULTRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_DEFAULTRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_DEFAULTRAM_CL_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_DEFAULTRAM_CL", dev, event)
#define AT_DEFAULTRAM_FC_EVENT at_sim_udma_event_t
#define AT_DEFAULTRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_SIM_RAM_COPY("AT_DEFAULTRAM_FC", dev, ext, loc, size, dir, event)
#define AT_DEFAULTRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_SIM_RAM_COPY2D("AT_DEFAULTRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_DEFAULTRAM_FC_WAIT(dev, event) AT_SIM_RAM_WAIT("AT_DEFAULTRAM_FC", dev, event)

#endif /* AT_API_H */
