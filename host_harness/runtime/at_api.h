/*
 * at_api.h - the runtime macro layer that generated user kernels are written against, mapped
 * onto the host harness's simulated chip (at_sim.h).
 *
 * On a real GAP these names map onto PMSIS drivers; here DMA is asynchronous (the destination
 * reads as 0xCD until AT_L2_WAIT), AT_FORK runs the entry on every core id, and AT_SIM_COMPUTE
 * advances the simulated clock (it would be empty on a real chip). `dev` arguments of the L1/L2
 * macros are evaluated and ignored: there is one cluster DMA engine. The L3 RAM and flash
 * device macros do use theirs (a device must be open), see the last two sections.
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
/* Emitted by a graph runner around node i (its constant waits, calls and prefetch issues): the
 * per-node figures of Graph.run (counters["nodes"]); empty on a real chip. */
#define AT_SIM_NODE_BEGIN(node) at_sim_node_begin(node)
#define AT_SIM_NODE_END(node) at_sim_node_end(node)
/* After each layer of a reentrant graph runner (-R): non-zero makes the runner return, its
 * progress kept in its context; the host asks for it with at_sim_yield_after(n). */
#define AT_YIELD() at_sim_yield()

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
 * compile. The flash devices are in the next section.
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

/* ---- flash devices, flash -> L2 on the uDMA ----------------------------------------------- */
/*
 * The original's graph code keeps constants in a flash image, <base>_L3_Flash_Const.dat, opened
 * at Construct as a file of the flash's file system (AT_<DEV>FLASH_FS_OPEN(&Flash, &Conf,
 * "<base>_L3_Flash_Const.dat", &Error); if (Error) return 1;) and copied into L2 with
 * AT_<DEV>FLASH_FS_FC_COPY(&Flash, (AT_<DEV>FLASH_FS_EXT_ADDR_TYPE) <base>_L3_Flash + Offset,
 * (AT_<DEV>FLASH_FS_INT_ADDR_TYPE) L2 + Offset, Size, 0, &Evt) + _FC_WAIT; constants homed in
 * L3 RAM go through an L2 buffer (flash -> L2, then AT_<RAM>_FC_COPY L2 -> L3), chunk by chunk.
 * Names and signatures follow gap_sdk's tools/autotiler_v3/Emulation/at_api_pmsis.h and
 * at_api_emul.h; the code is ours.
 *
 * Here the open reads the whole file (a relative name is resolved against the directory the
 * runner sets, the build's generated directory) into a read-only image; a file that cannot be
 * read sets the error to 1 (the reason is in at_sim_last_error()). An EXT address is a byte
 * offset into that file (<base>_L3_Flash, defined by the application, is 0). A copy is a uDMA
 * transfer, asynchronous like the RAM ones (the L2 destination reads as 0xCD until the wait),
 * costed with platform.udma["flash"] (["mram"] for EMRAMFLASH) and queued on the same uDMA
 * FIFO as the RAM transfers; counters flash_to_l2 and flash_busy_cycles. Faults: a copy on a
 * device that is not open, a read past the end of the image, a write into flash (LOC2EXT,
 * OPEN_WRITE), a loc side outside one live L2 allocation, a wait with nothing pending, a close
 * (or re-open) while a transfer is pending. FC and CL variants behave the same.
 *
 * Types: INT/LOC_ADDR_TYPE is char * (the original's void *: the same byte arithmetic in
 * `(AT_<DEV>FLASH_FS_INT_ADDR_TYPE) L2 + Offset`, but standard C), EXT_ADDR_TYPE an unsigned
 * integer (at_sim.h), the events the uDMA's at_sim_udma_event_t.
 *
 * COPY2D: at_api_pmsis.h gives HYPERFLASH_FS and DEFAULTFLASH_FS (fs, ext, loc, size, stride,
 * len, dir, event) but QSPIFLASH_FS, OSPIFLASH_FS and EMRAMFLASH_FS (file, dev, ext, loc, size,
 * stride, len, dir, event), with an unused `dev` (older at_api_emul.h: HYPERFLASH_FS too). Every
 * family here takes both forms, told apart by their argument count.
 *
 * The raw flash families (AT_<DEV>FLASH_*, no _FS) have their types, CONF_INIT, OPEN and CLOSE;
 * their COPY, COPY2D and WAIT are empty macros in the original ("TODO not yet supported"), so
 * here they fault rather than copy nothing.
 */

#define AT_SIM_FLASH_CONF_INIT(conf, mem_type, mem_name) \
    ((void)((conf)->type = (int)(mem_type)), (void)((conf)->name = (mem_name)))
#define AT_SIM_FLASH_FS_OPEN(family, file, conf, filename, err) \
    ((void)(conf), at_sim_flash_open(family, (void *)(file), (filename), (err), __FILE__, __LINE__))
#define AT_SIM_FLASH_FS_OPEN_WRITE(family, file, conf, filename, err) \
    ((void)(conf), (void)(filename), (void)(err), \
     at_sim_flash_open_write(family, (void *)(file), __FILE__, __LINE__))
#define AT_SIM_FLASH_OPEN(family, dev, conf, err) \
    ((void)(conf), at_sim_flash_open(family, (void *)(dev), 0, (err), __FILE__, __LINE__))
#define AT_SIM_FLASH_CLOSE(family, dev) \
    at_sim_flash_close(family, (void *)(dev), __FILE__, __LINE__)
/* api is "AT_<DEV>FLASH_FS_FC" or "..._CL". A 1D copy is one line: stride = length = size. */
#define AT_SIM_FLASH_COPY(api, fs, ext, loc, size, dir, event) \
    at_sim_flash_copy(api, (void *)(fs), (at_sim_flash_addr_t)(ext), (void *)(loc), \
                      (long long)(size), (long long)(size), (long long)(size), (int)(dir), \
                      (event), __FILE__, __LINE__)
#define AT_SIM_FLASH_COPY2D_7(api, fs, ext, loc, size, stride, length, dir, event) \
    at_sim_flash_copy(api, (void *)(fs), (at_sim_flash_addr_t)(ext), (void *)(loc), \
                      (long long)(size), (long long)(stride), (long long)(length), (int)(dir), \
                      (event), __FILE__, __LINE__)
#define AT_SIM_FLASH_COPY2D_8(api, fs, dev, ext, loc, size, stride, length, dir, event) \
    ((void)(dev), AT_SIM_FLASH_COPY2D_7(api, fs, ext, loc, size, stride, length, dir, event))
/* The number of arguments after `fs`: 7, or 8 with the extra `dev`. */
#define AT_SIM_ARGS_7_OR_8(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define AT_SIM_CAT_(a, b) a##b
#define AT_SIM_CAT(a, b) AT_SIM_CAT_(a, b)
#define AT_SIM_FLASH_COPY2D(api, fs, ...) \
    AT_SIM_CAT(AT_SIM_FLASH_COPY2D_, AT_SIM_ARGS_7_OR_8(__VA_ARGS__, 8, 7, 0, 0, 0, 0, 0, 0, 0)) \
        (api, fs, __VA_ARGS__)
#define AT_SIM_FLASH_WAIT(api, fs, event) \
    at_sim_udma_wait_as(api, (void *)(fs), (event), __FILE__, __LINE__)
#define AT_SIM_FLASH_UNSUPPORTED(macro) at_sim_flash_unsupported(macro, __FILE__, __LINE__)

/* HYPERFLASH: the HyperBus flash (GAP8, GAP9) */
#define AT_HYPERFLASH_TYPE 1
#define AT_HYPERFLASH_T at_sim_flash_t
#define AT_HYPERFLASH_CONF_T at_sim_flash_conf_t
#define AT_HYPERFLASH_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_HYPERFLASH_LOC_ADDR_TYPE char *
#define AT_HYPERFLASH_EVENT at_sim_udma_event_t
#define AT_HYPERFLASH_EXT2LOC 0
#define AT_HYPERFLASH_LOC2EXT 1
#define AT_HYPERFLASH_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_HYPERFLASH_OPEN(dev, conf, err) AT_SIM_FLASH_OPEN("HYPERFLASH", dev, conf, err)
#define AT_HYPERFLASH_CLOSE(dev) AT_SIM_FLASH_CLOSE("HYPERFLASH", dev)
#define AT_HYPERFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_SIM_FLASH_UNSUPPORTED("AT_HYPERFLASH_COPY"))
#define AT_HYPERFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_HYPERFLASH_COPY2D"))
#define AT_HYPERFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_HYPERFLASH_WAIT"))

#define AT_HYPERFLASH_FS_TYPE 1
#define AT_HYPERFLASH_FS_T at_sim_flash_t
#define AT_HYPERFLASH_FS_CONF_T at_sim_flash_conf_t
#define AT_HYPERFLASH_FS_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_HYPERFLASH_FS_INT_ADDR_TYPE char *
#define AT_HYPERFLASH_FS_FC_EVENT at_sim_udma_event_t
#define AT_HYPERFLASH_FS_CL_EVENT at_sim_udma_event_t
#define AT_HYPERFLASH_FS_EXT2LOC 0
#define AT_HYPERFLASH_FS_LOC2EXT 1
#define AT_HYPERFLASH_FS_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_HYPERFLASH_FS_OPEN(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN("HYPERFLASH_FS", file, conf, filename, err)
#define AT_HYPERFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN_WRITE("HYPERFLASH_FS", file, conf, filename, err)
#define AT_HYPERFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_HYPERFLASH_FS_CLOSE(file) AT_SIM_FLASH_CLOSE("HYPERFLASH_FS", file)
#define AT_HYPERFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_HYPERFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_HYPERFLASH_FS_FC_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_HYPERFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_HYPERFLASH_FS_FC_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_HYPERFLASH_FS_FC", file, event)
#define AT_HYPERFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_HYPERFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_HYPERFLASH_FS_CL_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_HYPERFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_HYPERFLASH_FS_CL_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_HYPERFLASH_FS_CL", file, event)

/* QSPIFLASH: a quad-SPI flash */
#define AT_QSPIFLASH_TYPE 1
#define AT_QSPIFLASH_T at_sim_flash_t
#define AT_QSPIFLASH_CONF_T at_sim_flash_conf_t
#define AT_QSPIFLASH_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_QSPIFLASH_LOC_ADDR_TYPE char *
#define AT_QSPIFLASH_EVENT at_sim_udma_event_t
#define AT_QSPIFLASH_EXT2LOC 0
#define AT_QSPIFLASH_LOC2EXT 1
#define AT_QSPIFLASH_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_QSPIFLASH_OPEN(dev, conf, err) AT_SIM_FLASH_OPEN("QSPIFLASH", dev, conf, err)
#define AT_QSPIFLASH_CLOSE(dev) AT_SIM_FLASH_CLOSE("QSPIFLASH", dev)
#define AT_QSPIFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_SIM_FLASH_UNSUPPORTED("AT_QSPIFLASH_COPY"))
#define AT_QSPIFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_QSPIFLASH_COPY2D"))
#define AT_QSPIFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_QSPIFLASH_WAIT"))

#define AT_QSPIFLASH_FS_TYPE 1
#define AT_QSPIFLASH_FS_T at_sim_flash_t
#define AT_QSPIFLASH_FS_CONF_T at_sim_flash_conf_t
#define AT_QSPIFLASH_FS_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_QSPIFLASH_FS_INT_ADDR_TYPE char *
#define AT_QSPIFLASH_FS_FC_EVENT at_sim_udma_event_t
#define AT_QSPIFLASH_FS_CL_EVENT at_sim_udma_event_t
#define AT_QSPIFLASH_FS_EXT2LOC 0
#define AT_QSPIFLASH_FS_LOC2EXT 1
#define AT_QSPIFLASH_FS_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_QSPIFLASH_FS_OPEN(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN("QSPIFLASH_FS", file, conf, filename, err)
#define AT_QSPIFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN_WRITE("QSPIFLASH_FS", file, conf, filename, err)
#define AT_QSPIFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_QSPIFLASH_FS_CLOSE(file) AT_SIM_FLASH_CLOSE("QSPIFLASH_FS", file)
#define AT_QSPIFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_QSPIFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_QSPIFLASH_FS_FC_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_QSPIFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_QSPIFLASH_FS_FC_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_QSPIFLASH_FS_FC", file, event)
#define AT_QSPIFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_QSPIFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_QSPIFLASH_FS_CL_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_QSPIFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_QSPIFLASH_FS_CL_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_QSPIFLASH_FS_CL", file, event)

/* OSPIFLASH: an octo-SPI flash (GAP9 in the original) */
#define AT_OSPIFLASH_TYPE 1
#define AT_OSPIFLASH_T at_sim_flash_t
#define AT_OSPIFLASH_CONF_T at_sim_flash_conf_t
#define AT_OSPIFLASH_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_OSPIFLASH_LOC_ADDR_TYPE char *
#define AT_OSPIFLASH_EVENT at_sim_udma_event_t
#define AT_OSPIFLASH_EXT2LOC 0
#define AT_OSPIFLASH_LOC2EXT 1
#define AT_OSPIFLASH_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_OSPIFLASH_OPEN(dev, conf, err) AT_SIM_FLASH_OPEN("OSPIFLASH", dev, conf, err)
#define AT_OSPIFLASH_CLOSE(dev) AT_SIM_FLASH_CLOSE("OSPIFLASH", dev)
#define AT_OSPIFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_SIM_FLASH_UNSUPPORTED("AT_OSPIFLASH_COPY"))
#define AT_OSPIFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_OSPIFLASH_COPY2D"))
#define AT_OSPIFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_OSPIFLASH_WAIT"))

#define AT_OSPIFLASH_FS_TYPE 1
#define AT_OSPIFLASH_FS_T at_sim_flash_t
#define AT_OSPIFLASH_FS_CONF_T at_sim_flash_conf_t
#define AT_OSPIFLASH_FS_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_OSPIFLASH_FS_INT_ADDR_TYPE char *
#define AT_OSPIFLASH_FS_FC_EVENT at_sim_udma_event_t
#define AT_OSPIFLASH_FS_CL_EVENT at_sim_udma_event_t
#define AT_OSPIFLASH_FS_EXT2LOC 0
#define AT_OSPIFLASH_FS_LOC2EXT 1
#define AT_OSPIFLASH_FS_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_OSPIFLASH_FS_OPEN(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN("OSPIFLASH_FS", file, conf, filename, err)
#define AT_OSPIFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN_WRITE("OSPIFLASH_FS", file, conf, filename, err)
#define AT_OSPIFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_OSPIFLASH_FS_CLOSE(file) AT_SIM_FLASH_CLOSE("OSPIFLASH_FS", file)
#define AT_OSPIFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_OSPIFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_OSPIFLASH_FS_FC_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_OSPIFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_OSPIFLASH_FS_FC_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_OSPIFLASH_FS_FC", file, event)
#define AT_OSPIFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_OSPIFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_OSPIFLASH_FS_CL_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_OSPIFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_OSPIFLASH_FS_CL_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_OSPIFLASH_FS_CL", file, event)

/* EMRAMFLASH: GAP9's on-chip MRAM; costed with platform.udma["mram"] */
#define AT_EMRAMFLASH_TYPE 1
#define AT_EMRAMFLASH_T at_sim_flash_t
#define AT_EMRAMFLASH_CONF_T at_sim_flash_conf_t
#define AT_EMRAMFLASH_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_EMRAMFLASH_LOC_ADDR_TYPE char *
#define AT_EMRAMFLASH_EVENT at_sim_udma_event_t
#define AT_EMRAMFLASH_EXT2LOC 0
#define AT_EMRAMFLASH_LOC2EXT 1
#define AT_EMRAMFLASH_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_EMRAMFLASH_OPEN(dev, conf, err) AT_SIM_FLASH_OPEN("EMRAMFLASH", dev, conf, err)
#define AT_EMRAMFLASH_CLOSE(dev) AT_SIM_FLASH_CLOSE("EMRAMFLASH", dev)
#define AT_EMRAMFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_SIM_FLASH_UNSUPPORTED("AT_EMRAMFLASH_COPY"))
#define AT_EMRAMFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_EMRAMFLASH_COPY2D"))
#define AT_EMRAMFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_EMRAMFLASH_WAIT"))

#define AT_EMRAMFLASH_FS_TYPE 1
#define AT_EMRAMFLASH_FS_T at_sim_flash_t
#define AT_EMRAMFLASH_FS_CONF_T at_sim_flash_conf_t
#define AT_EMRAMFLASH_FS_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_EMRAMFLASH_FS_INT_ADDR_TYPE char *
#define AT_EMRAMFLASH_FS_FC_EVENT at_sim_udma_event_t
#define AT_EMRAMFLASH_FS_CL_EVENT at_sim_udma_event_t
#define AT_EMRAMFLASH_FS_EXT2LOC 0
#define AT_EMRAMFLASH_FS_LOC2EXT 1
#define AT_EMRAMFLASH_FS_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_EMRAMFLASH_FS_OPEN(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN("EMRAMFLASH_FS", file, conf, filename, err)
#define AT_EMRAMFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN_WRITE("EMRAMFLASH_FS", file, conf, filename, err)
#define AT_EMRAMFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_EMRAMFLASH_FS_CLOSE(file) AT_SIM_FLASH_CLOSE("EMRAMFLASH_FS", file)
#define AT_EMRAMFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_EMRAMFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_EMRAMFLASH_FS_FC_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_EMRAMFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_EMRAMFLASH_FS_FC_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_EMRAMFLASH_FS_FC", file, event)
#define AT_EMRAMFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_EMRAMFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_EMRAMFLASH_FS_CL_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_EMRAMFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_EMRAMFLASH_FS_CL_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_EMRAMFLASH_FS_CL", file, event)

/* DEFAULTFLASH: the board's default flash (the BSP's choice) */
#define AT_DEFAULTFLASH_TYPE 1
#define AT_DEFAULTFLASH_T at_sim_flash_t
#define AT_DEFAULTFLASH_CONF_T at_sim_flash_conf_t
#define AT_DEFAULTFLASH_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_DEFAULTFLASH_LOC_ADDR_TYPE char *
#define AT_DEFAULTFLASH_EVENT at_sim_udma_event_t
#define AT_DEFAULTFLASH_EXT2LOC 0
#define AT_DEFAULTFLASH_LOC2EXT 1
#define AT_DEFAULTFLASH_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_DEFAULTFLASH_OPEN(dev, conf, err) AT_SIM_FLASH_OPEN("DEFAULTFLASH", dev, conf, err)
#define AT_DEFAULTFLASH_CLOSE(dev) AT_SIM_FLASH_CLOSE("DEFAULTFLASH", dev)
#define AT_DEFAULTFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_SIM_FLASH_UNSUPPORTED("AT_DEFAULTFLASH_COPY"))
#define AT_DEFAULTFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_DEFAULTFLASH_COPY2D"))
#define AT_DEFAULTFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_SIM_FLASH_UNSUPPORTED("AT_DEFAULTFLASH_WAIT"))

#define AT_DEFAULTFLASH_FS_TYPE 1
#define AT_DEFAULTFLASH_FS_T at_sim_flash_t
#define AT_DEFAULTFLASH_FS_CONF_T at_sim_flash_conf_t
#define AT_DEFAULTFLASH_FS_EXT_ADDR_TYPE at_sim_flash_addr_t
#define AT_DEFAULTFLASH_FS_INT_ADDR_TYPE char *
#define AT_DEFAULTFLASH_FS_FC_EVENT at_sim_udma_event_t
#define AT_DEFAULTFLASH_FS_CL_EVENT at_sim_udma_event_t
#define AT_DEFAULTFLASH_FS_EXT2LOC 0
#define AT_DEFAULTFLASH_FS_LOC2EXT 1
#define AT_DEFAULTFLASH_FS_CONF_INIT(dev, type, name) AT_SIM_FLASH_CONF_INIT(dev, type, name)
#define AT_DEFAULTFLASH_FS_OPEN(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN("DEFAULTFLASH_FS", file, conf, filename, err)
#define AT_DEFAULTFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_SIM_FLASH_FS_OPEN_WRITE("DEFAULTFLASH_FS", file, conf, filename, err)
#define AT_DEFAULTFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_DEFAULTFLASH_FS_CLOSE(file) AT_SIM_FLASH_CLOSE("DEFAULTFLASH_FS", file)
#define AT_DEFAULTFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_DEFAULTFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_DEFAULTFLASH_FS_FC_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_DEFAULTFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_DEFAULTFLASH_FS_FC_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_DEFAULTFLASH_FS_FC", file, event)
#define AT_DEFAULTFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_SIM_FLASH_COPY("AT_DEFAULTFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_DEFAULTFLASH_FS_CL_COPY2D(fs, ...) AT_SIM_FLASH_COPY2D("AT_DEFAULTFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_DEFAULTFLASH_FS_CL_WAIT(file, event) AT_SIM_FLASH_WAIT("AT_DEFAULTFLASH_FS_CL", file, event)

#endif /* AT_API_H */
