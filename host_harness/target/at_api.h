/*
 * at_api.h (target) - the runtime macro layer of generated user kernels mapped onto a real
 * PULP cluster through pulp-runtime: GVSoC's pulp-open target, compiled for rv32imc.
 *
 * The host harness's at_api.h maps the same names onto its simulator (at_sim.h); this one is
 * what a chip runs: AT_L2_COPY/COPY2D program the cluster DMA (MCHAN) and AT_L2_WAIT waits on
 * its transfer counter, AT_FORK runs the entry on every cluster core (the master included) and
 * returns after a closing barrier, AT_SIM_COMPUTE costs nothing (the cores take the real time)
 * and the node markers of graph runners read the cycle counter (per-node cycles). The few at_sim_* names Gap.h reads (core id, barrier, clock, L1/L2
 * allocation, core count) are given here too, so the harness's Gap.h serves both builds.
 *
 * L3 RAM and flash devices (AT_<DEV>RAM_*, AT_<DEV>FLASH_*, AT_<DEV>FLASH_FS_*) are an
 * emulation, not a driver: pulp-open has no HyperBus the runtime drives, so the L3 RAM lives in
 * L2 and a copy from it is a memcpy by the calling core, and a flash file is read from the host
 * through GVSoC's semihosting (see the last sections). Their timings on GVSoC are not a real
 * HyperBus's.
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
/* A graph application's L2 heap (main.c sizes it; see at_target.c). */
void at_target_l2_init(char *heap, int size);
void at_target_free(int level, void *ptr, long long size);
void at_target_fork(int ncores, void (*entry)(void *), void *arg);
extern int at_target_profile_forks;
extern unsigned int at_target_fork_total;
void at_target_reset_forks(void);
void at_target_print_forks(void);

#define at_sim_core_id() at_target_core_id()
#define at_sim_num_cores() (AT_SIM_NCORES)
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

#define AT_L1_ALLOC(dev, size) \
    ((void)(dev), (AT_L1_POINTER)at_target_alloc(AT_SIM_L1, (long long)(size)))
#define AT_L1_FREE(dev, ptr, size) \
    ((void)(dev), at_target_free(AT_SIM_L1, (void *)(ptr), (long long)(size)))
#define AT_L2_ALLOC(dev, size) \
    ((void)(dev), (AT_L2_POINTER)at_target_alloc(AT_SIM_L2, (long long)(size)))
#define AT_L2_FREE(dev, ptr, size) \
    ((void)(dev), at_target_free(AT_SIM_L2, (void *)(ptr), (long long)(size)))

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
/* Graph runners: per-node cycles (mcycle between a node's markers, summed per node), printed
 * for the back-end by at_target_print_nodes after the run (at_target.c). */
void at_target_node_begin(int node);
void at_target_node_end(int node);
void at_target_reset_nodes(void);
void at_target_print_nodes(int count);
#define AT_SIM_NODE_BEGIN(node) at_target_node_begin(node)
#define AT_SIM_NODE_END(node) at_target_node_end(node)
#define AT_YIELD() 0

/* ---- L3 devices: an emulation in L2 (not a HyperBus) ----------------------------------- */
/*
 * pulp-open has no L3 RAM or flash the runtime drives. So that generated code using them runs
 * unchanged, both are emulated (at_target.c): the L3 RAM is an arena in L2 (the back-end sizes
 * it: what the graph allocates with AT_<DEV>_ALLOC; L3-homed user-kernel arguments are plain L2
 * arrays); a flash file system is the table of image files the back-end lists (at_flash.c: the
 * name the generated code opens, the file's path on the host, its size), found by file name at
 * AT_<DEV>FLASH_FS_OPEN and read from the host through GVSoC's semihosting (open, seek, read:
 * the image takes no L2, as a flash image takes none on a chip). A copy, RAM or flash, FC or CL,
 * is done at once by the calling core (a memcpy or a semihosting read, line by line for a 2D
 * copy) and its wait only checks that something was issued on the event: no transfer overlaps
 * the cores, an L3 RAM copy costs what a memcpy in L2 costs and a flash read next to nothing
 * (the simulator writes the bytes), not what a HyperBus transfer would. The families, macro names and
 * signatures are the host at_api.h's (the host simulator's section has the details); the values
 * of EXT2LOC/LOC2EXT are ours (0/1, as on the host).
 *
 * Faults (the application prints "@ATF <macro>: <why>" and stops; the back-end raises a
 * HarnessError with it): a copy or an allocation on a device that is not open, a flash read past
 * the end of its image, a write into flash (LOC2EXT, OPEN_WRITE), a wait on an event nothing was
 * issued on, the raw flash copies (empty macros in the original), an L3 arena too small.
 */
#define AT_TARGET_EXT2LOC 0
#define AT_TARGET_LOC2EXT 1

/* A uDMA event: a type distinct from AT_L2_EVENT, so that mixing them up does not compile. */
typedef struct {
    int pending;
} at_target_udma_event_t;

typedef struct {
    int open;
} at_target_ram_t;

typedef struct {
    int type;         /* AT_MEM_L3_* given to AT_<DEV>_CONF_INIT */
    const char *name;
} at_target_ram_conf_t;

/* A flash device: the host file it opened through semihosting (a file-system open; fd < 0: a
 * raw device, no file) and that file's size. */
typedef struct {
    int fd;
    int size;
    int open;
} at_target_flash_t;

typedef at_target_ram_conf_t at_target_flash_conf_t;
/* A flash address (AT_<DEV>FLASH_FS_EXT_ADDR_TYPE): a byte offset into the opened image. */
typedef unsigned long at_target_flash_addr_t;

/* The application's side (written by the back-end): the L3 RAM arena (main.c hands it over
 * before the call) and the flash images (at_flash.c: the name the generated code opens, the
 * file's path on the host GVSoC runs on, its size in bytes). */
typedef struct {
    const char *name;
    const char *path;
    int size;
} at_target_image_t;
extern const at_target_image_t at_target_images[];
extern const int at_target_image_count;
void at_target_l3_init(char *arena, int size);

void at_target_ram_open(const char *family, at_target_ram_t *dev, int *err);
void at_target_ram_close(const char *family, at_target_ram_t *dev);
char *at_target_l3_alloc(const char *api, at_target_ram_t *dev, long long size);
void at_target_l3_free(const char *api, at_target_ram_t *dev, void *ptr, long long size);
void at_target_ram_copy(const char *api, at_target_ram_t *dev, char *ext, char *loc, int size, int stride,
                        int length, int dir, at_target_udma_event_t *event);
void at_target_flash_open(const char *family, at_target_flash_t *dev, const char *filename, int *err);
void at_target_flash_close(const char *family, at_target_flash_t *dev);
void at_target_flash_copy(const char *api, at_target_flash_t *dev, at_target_flash_addr_t ext, char *loc,
                          int size, int stride, int length, int dir, at_target_udma_event_t *event);
void at_target_udma_wait(const char *api, at_target_udma_event_t *event);
void at_target_fault(const char *api, const char *why);

#define AT_TARGET_CONF_INIT(conf, mem_type, mem_name) \
    ((void)((conf)->type = (int)(mem_type)), (void)((conf)->name = (mem_name)))
#define AT_TARGET_RAM_OPEN(family, dev, conf, err) \
    ((void)(conf), at_target_ram_open(family, (dev), (err)))
#define AT_TARGET_RAM_CLOSE(family, dev) at_target_ram_close(family, (dev))
#define AT_TARGET_RAM_ALLOC(family, dev, size) \
    at_target_l3_alloc("AT_" family "_ALLOC", (dev), (long long)(size))
#define AT_TARGET_RAM_FREE(family, dev, ptr, size) \
    at_target_l3_free("AT_" family "_FREE", (dev), (void *)(ptr), (long long)(size))
/* A 1D copy is one line: stride = length = size. */
#define AT_TARGET_RAM_COPY(api, dev, ext, loc, size, dir, event) \
    at_target_ram_copy(api "_COPY", (dev), (char *)(ext), (char *)(loc), (int)(size), (int)(size), \
                       (int)(size), (int)(dir), (event))
/* size bytes in lines of `length` bytes; the ext (L3) side advances by `stride` per line, loc (L2)
 * is contiguous. */
#define AT_TARGET_RAM_COPY2D(api, dev, ext, loc, size, stride, length, dir, event) \
    at_target_ram_copy(api "_COPY2D", (dev), (char *)(ext), (char *)(loc), (int)(size), (int)(stride), \
                       (int)(length), (int)(dir), (event))
#define AT_TARGET_WAIT(api, dev, event) ((void)(dev), at_target_udma_wait(api "_WAIT", (event)))

#define AT_TARGET_FLASH_OPEN(family, dev, conf, filename, err) \
    ((void)(conf), at_target_flash_open(family, (dev), (filename), (err)))
#define AT_TARGET_FLASH_OPEN_WRITE(family, dev, conf, filename, err) \
    ((void)(dev), (void)(conf), (void)(filename), (void)(err), \
     at_target_fault("AT_" family "_OPEN_WRITE", "writing a file into flash is not supported on GVSoC " \
                     "(the flash images are read-only host files)"))
#define AT_TARGET_FLASH_CLOSE(family, dev) at_target_flash_close(family, (dev))
#define AT_TARGET_FLASH_COPY(api, fs, ext, loc, size, dir, event) \
    at_target_flash_copy(api "_COPY", (fs), (at_target_flash_addr_t)(ext), (char *)(loc), (int)(size), \
                         (int)(size), (int)(size), (int)(dir), (event))
#define AT_TARGET_FLASH_COPY2D_7(api, fs, ext, loc, size, stride, length, dir, event) \
    at_target_flash_copy(api "_COPY2D", (fs), (at_target_flash_addr_t)(ext), (char *)(loc), (int)(size), \
                         (int)(stride), (int)(length), (int)(dir), (event))
#define AT_TARGET_FLASH_COPY2D_8(api, fs, dev, ext, loc, size, stride, length, dir, event) \
    ((void)(dev), AT_TARGET_FLASH_COPY2D_7(api, fs, ext, loc, size, stride, length, dir, event))
/* COPY2D takes (fs, ext, loc, size, stride, len, dir, event) or, in some families of the
 * original, an extra unused `dev` after fs: told apart by the argument count, as on the host. */
#define AT_TARGET_ARGS_7_OR_8(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define AT_TARGET_CAT_(a, b) a##b
#define AT_TARGET_CAT(a, b) AT_TARGET_CAT_(a, b)
#define AT_TARGET_FLASH_COPY2D(api, fs, ...) \
    AT_TARGET_CAT(AT_TARGET_FLASH_COPY2D_, AT_TARGET_ARGS_7_OR_8(__VA_ARGS__, 8, 7, 0, 0, 0, 0, 0, 0, 0)) \
        (api, fs, __VA_ARGS__)
/* The original's raw flash copies are empty macros ("TODO not yet supported"): a fault, as on the
 * host, rather than copying nothing. */
#define AT_TARGET_RAW_FLASH(macro) \
    at_target_fault(macro, "the original's runtime does not implement it (an empty macro); read flash " \
                    "through the file-system macros (AT_<DEV>FLASH_FS_*)")

/* ---- L3 RAM families ---- */
#define AT_HYPERRAM_T at_target_ram_t
#define AT_HYPERRAM_CONF_T at_target_ram_conf_t
#define AT_HYPERRAM_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_HYPERRAM_OPEN(dev, conf, err) AT_TARGET_RAM_OPEN("HYPERRAM", dev, conf, err)
#define AT_HYPERRAM_CLOSE(dev) AT_TARGET_RAM_CLOSE("HYPERRAM", dev)
#define AT_HYPERRAM_POINTER char *
#define AT_HYPERRAM_EXT_ADDR_TYPE char *
#define AT_HYPERRAM_LOC_ADDR_TYPE char *
#define AT_HYPERRAM_INT_ADDR_TYPE char *
#define AT_HYPERRAM_ALLOC(dev, size) AT_TARGET_RAM_ALLOC("HYPERRAM", dev, size)
#define AT_HYPERRAM_FREE(dev, ptr, size) AT_TARGET_RAM_FREE("HYPERRAM", dev, ptr, size)
#define AT_HYPERRAM_EXT2LOC AT_TARGET_EXT2LOC
#define AT_HYPERRAM_LOC2EXT AT_TARGET_LOC2EXT
#define AT_HYPERRAM_CL_EVENT at_target_udma_event_t
#define AT_HYPERRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_HYPERRAM_CL", dev, ext, loc, size, dir, event)
#define AT_HYPERRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_HYPERRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_HYPERRAM_CL_WAIT(dev, event) AT_TARGET_WAIT("AT_HYPERRAM_CL", dev, event)
#define AT_HYPERRAM_FC_EVENT at_target_udma_event_t
#define AT_HYPERRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_HYPERRAM_FC", dev, ext, loc, size, dir, event)
#define AT_HYPERRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_HYPERRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_HYPERRAM_FC_WAIT(dev, event) AT_TARGET_WAIT("AT_HYPERRAM_FC", dev, event)

#define AT_QSPIRAM_T at_target_ram_t
#define AT_QSPIRAM_CONF_T at_target_ram_conf_t
#define AT_QSPIRAM_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_QSPIRAM_OPEN(dev, conf, err) AT_TARGET_RAM_OPEN("QSPIRAM", dev, conf, err)
#define AT_QSPIRAM_CLOSE(dev) AT_TARGET_RAM_CLOSE("QSPIRAM", dev)
#define AT_QSPIRAM_POINTER char *
#define AT_QSPIRAM_EXT_ADDR_TYPE char *
#define AT_QSPIRAM_LOC_ADDR_TYPE char *
#define AT_QSPIRAM_INT_ADDR_TYPE char *
#define AT_QSPIRAM_ALLOC(dev, size) AT_TARGET_RAM_ALLOC("QSPIRAM", dev, size)
#define AT_QSPIRAM_FREE(dev, ptr, size) AT_TARGET_RAM_FREE("QSPIRAM", dev, ptr, size)
#define AT_QSPIRAM_EXT2LOC AT_TARGET_EXT2LOC
#define AT_QSPIRAM_LOC2EXT AT_TARGET_LOC2EXT
#define AT_QSPIRAM_CL_EVENT at_target_udma_event_t
#define AT_QSPIRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_QSPIRAM_CL", dev, ext, loc, size, dir, event)
#define AT_QSPIRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_QSPIRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_QSPIRAM_CL_WAIT(dev, event) AT_TARGET_WAIT("AT_QSPIRAM_CL", dev, event)
#define AT_QSPIRAM_FC_EVENT at_target_udma_event_t
#define AT_QSPIRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_QSPIRAM_FC", dev, ext, loc, size, dir, event)
#define AT_QSPIRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_QSPIRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_QSPIRAM_FC_WAIT(dev, event) AT_TARGET_WAIT("AT_QSPIRAM_FC", dev, event)

#define AT_OSPIRAM_T at_target_ram_t
#define AT_OSPIRAM_CONF_T at_target_ram_conf_t
#define AT_OSPIRAM_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_OSPIRAM_OPEN(dev, conf, err) AT_TARGET_RAM_OPEN("OSPIRAM", dev, conf, err)
#define AT_OSPIRAM_CLOSE(dev) AT_TARGET_RAM_CLOSE("OSPIRAM", dev)
#define AT_OSPIRAM_POINTER char *
#define AT_OSPIRAM_EXT_ADDR_TYPE char *
#define AT_OSPIRAM_LOC_ADDR_TYPE char *
#define AT_OSPIRAM_INT_ADDR_TYPE char *
#define AT_OSPIRAM_ALLOC(dev, size) AT_TARGET_RAM_ALLOC("OSPIRAM", dev, size)
#define AT_OSPIRAM_FREE(dev, ptr, size) AT_TARGET_RAM_FREE("OSPIRAM", dev, ptr, size)
#define AT_OSPIRAM_EXT2LOC AT_TARGET_EXT2LOC
#define AT_OSPIRAM_LOC2EXT AT_TARGET_LOC2EXT
#define AT_OSPIRAM_CL_EVENT at_target_udma_event_t
#define AT_OSPIRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_OSPIRAM_CL", dev, ext, loc, size, dir, event)
#define AT_OSPIRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_OSPIRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_OSPIRAM_CL_WAIT(dev, event) AT_TARGET_WAIT("AT_OSPIRAM_CL", dev, event)
#define AT_OSPIRAM_FC_EVENT at_target_udma_event_t
#define AT_OSPIRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_OSPIRAM_FC", dev, ext, loc, size, dir, event)
#define AT_OSPIRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_OSPIRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_OSPIRAM_FC_WAIT(dev, event) AT_TARGET_WAIT("AT_OSPIRAM_FC", dev, event)

#define AT_DEFAULTRAM_T at_target_ram_t
#define AT_DEFAULTRAM_CONF_T at_target_ram_conf_t
#define AT_DEFAULTRAM_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_DEFAULTRAM_OPEN(dev, conf, err) AT_TARGET_RAM_OPEN("DEFAULTRAM", dev, conf, err)
#define AT_DEFAULTRAM_CLOSE(dev) AT_TARGET_RAM_CLOSE("DEFAULTRAM", dev)
#define AT_DEFAULTRAM_POINTER char *
#define AT_DEFAULTRAM_EXT_ADDR_TYPE char *
#define AT_DEFAULTRAM_LOC_ADDR_TYPE char *
#define AT_DEFAULTRAM_INT_ADDR_TYPE char *
#define AT_DEFAULTRAM_ALLOC(dev, size) AT_TARGET_RAM_ALLOC("DEFAULTRAM", dev, size)
#define AT_DEFAULTRAM_FREE(dev, ptr, size) AT_TARGET_RAM_FREE("DEFAULTRAM", dev, ptr, size)
#define AT_DEFAULTRAM_EXT2LOC AT_TARGET_EXT2LOC
#define AT_DEFAULTRAM_LOC2EXT AT_TARGET_LOC2EXT
#define AT_DEFAULTRAM_CL_EVENT at_target_udma_event_t
#define AT_DEFAULTRAM_CL_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_DEFAULTRAM_CL", dev, ext, loc, size, dir, event)
#define AT_DEFAULTRAM_CL_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_DEFAULTRAM_CL", dev, ext, loc, size, stride, length, dir, event)
#define AT_DEFAULTRAM_CL_WAIT(dev, event) AT_TARGET_WAIT("AT_DEFAULTRAM_CL", dev, event)
#define AT_DEFAULTRAM_FC_EVENT at_target_udma_event_t
#define AT_DEFAULTRAM_FC_COPY(dev, ext, loc, size, dir, event) \
    AT_TARGET_RAM_COPY("AT_DEFAULTRAM_FC", dev, ext, loc, size, dir, event)
#define AT_DEFAULTRAM_FC_COPY2D(dev, ext, loc, size, stride, length, dir, event) \
    AT_TARGET_RAM_COPY2D("AT_DEFAULTRAM_FC", dev, ext, loc, size, stride, length, dir, event)
#define AT_DEFAULTRAM_FC_WAIT(dev, event) AT_TARGET_WAIT("AT_DEFAULTRAM_FC", dev, event)

/* ---- flash families ---- */
/* HYPERFLASH: the HyperBus flash (GAP8, GAP9) */
#define AT_HYPERFLASH_TYPE 1
#define AT_HYPERFLASH_T at_target_flash_t
#define AT_HYPERFLASH_CONF_T at_target_flash_conf_t
#define AT_HYPERFLASH_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_HYPERFLASH_LOC_ADDR_TYPE char *
#define AT_HYPERFLASH_EVENT at_target_udma_event_t
#define AT_HYPERFLASH_EXT2LOC AT_TARGET_EXT2LOC
#define AT_HYPERFLASH_LOC2EXT AT_TARGET_LOC2EXT
#define AT_HYPERFLASH_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_HYPERFLASH_OPEN(dev, conf, err) AT_TARGET_FLASH_OPEN("HYPERFLASH", dev, conf, 0, err)
#define AT_HYPERFLASH_CLOSE(dev) AT_TARGET_FLASH_CLOSE("HYPERFLASH", dev)
#define AT_HYPERFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_TARGET_RAW_FLASH("AT_HYPERFLASH_COPY"))
#define AT_HYPERFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_TARGET_RAW_FLASH("AT_HYPERFLASH_COPY2D"))
#define AT_HYPERFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_TARGET_RAW_FLASH("AT_HYPERFLASH_WAIT"))

#define AT_HYPERFLASH_FS_TYPE 1
#define AT_HYPERFLASH_FS_T at_target_flash_t
#define AT_HYPERFLASH_FS_CONF_T at_target_flash_conf_t
#define AT_HYPERFLASH_FS_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_HYPERFLASH_FS_INT_ADDR_TYPE char *
#define AT_HYPERFLASH_FS_FC_EVENT at_target_udma_event_t
#define AT_HYPERFLASH_FS_CL_EVENT at_target_udma_event_t
#define AT_HYPERFLASH_FS_EXT2LOC AT_TARGET_EXT2LOC
#define AT_HYPERFLASH_FS_LOC2EXT AT_TARGET_LOC2EXT
#define AT_HYPERFLASH_FS_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_HYPERFLASH_FS_OPEN(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN("HYPERFLASH_FS", file, conf, filename, err)
#define AT_HYPERFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN_WRITE("HYPERFLASH_FS", file, conf, filename, err)
#define AT_HYPERFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_HYPERFLASH_FS_CLOSE(file) AT_TARGET_FLASH_CLOSE("HYPERFLASH_FS", file)
#define AT_HYPERFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_HYPERFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_HYPERFLASH_FS_FC_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_HYPERFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_HYPERFLASH_FS_FC_WAIT(file, event) AT_TARGET_WAIT("AT_HYPERFLASH_FS_FC", file, event)
#define AT_HYPERFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_HYPERFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_HYPERFLASH_FS_CL_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_HYPERFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_HYPERFLASH_FS_CL_WAIT(file, event) AT_TARGET_WAIT("AT_HYPERFLASH_FS_CL", file, event)

/* QSPIFLASH: a quad-SPI flash */
#define AT_QSPIFLASH_TYPE 1
#define AT_QSPIFLASH_T at_target_flash_t
#define AT_QSPIFLASH_CONF_T at_target_flash_conf_t
#define AT_QSPIFLASH_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_QSPIFLASH_LOC_ADDR_TYPE char *
#define AT_QSPIFLASH_EVENT at_target_udma_event_t
#define AT_QSPIFLASH_EXT2LOC AT_TARGET_EXT2LOC
#define AT_QSPIFLASH_LOC2EXT AT_TARGET_LOC2EXT
#define AT_QSPIFLASH_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_QSPIFLASH_OPEN(dev, conf, err) AT_TARGET_FLASH_OPEN("QSPIFLASH", dev, conf, 0, err)
#define AT_QSPIFLASH_CLOSE(dev) AT_TARGET_FLASH_CLOSE("QSPIFLASH", dev)
#define AT_QSPIFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_TARGET_RAW_FLASH("AT_QSPIFLASH_COPY"))
#define AT_QSPIFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_TARGET_RAW_FLASH("AT_QSPIFLASH_COPY2D"))
#define AT_QSPIFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_TARGET_RAW_FLASH("AT_QSPIFLASH_WAIT"))

#define AT_QSPIFLASH_FS_TYPE 1
#define AT_QSPIFLASH_FS_T at_target_flash_t
#define AT_QSPIFLASH_FS_CONF_T at_target_flash_conf_t
#define AT_QSPIFLASH_FS_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_QSPIFLASH_FS_INT_ADDR_TYPE char *
#define AT_QSPIFLASH_FS_FC_EVENT at_target_udma_event_t
#define AT_QSPIFLASH_FS_CL_EVENT at_target_udma_event_t
#define AT_QSPIFLASH_FS_EXT2LOC AT_TARGET_EXT2LOC
#define AT_QSPIFLASH_FS_LOC2EXT AT_TARGET_LOC2EXT
#define AT_QSPIFLASH_FS_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_QSPIFLASH_FS_OPEN(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN("QSPIFLASH_FS", file, conf, filename, err)
#define AT_QSPIFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN_WRITE("QSPIFLASH_FS", file, conf, filename, err)
#define AT_QSPIFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_QSPIFLASH_FS_CLOSE(file) AT_TARGET_FLASH_CLOSE("QSPIFLASH_FS", file)
#define AT_QSPIFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_QSPIFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_QSPIFLASH_FS_FC_COPY2D(fs, ...) AT_TARGET_FLASH_COPY2D("AT_QSPIFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_QSPIFLASH_FS_FC_WAIT(file, event) AT_TARGET_WAIT("AT_QSPIFLASH_FS_FC", file, event)
#define AT_QSPIFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_QSPIFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_QSPIFLASH_FS_CL_COPY2D(fs, ...) AT_TARGET_FLASH_COPY2D("AT_QSPIFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_QSPIFLASH_FS_CL_WAIT(file, event) AT_TARGET_WAIT("AT_QSPIFLASH_FS_CL", file, event)

/* OSPIFLASH: an octo-SPI flash */
#define AT_OSPIFLASH_TYPE 1
#define AT_OSPIFLASH_T at_target_flash_t
#define AT_OSPIFLASH_CONF_T at_target_flash_conf_t
#define AT_OSPIFLASH_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_OSPIFLASH_LOC_ADDR_TYPE char *
#define AT_OSPIFLASH_EVENT at_target_udma_event_t
#define AT_OSPIFLASH_EXT2LOC AT_TARGET_EXT2LOC
#define AT_OSPIFLASH_LOC2EXT AT_TARGET_LOC2EXT
#define AT_OSPIFLASH_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_OSPIFLASH_OPEN(dev, conf, err) AT_TARGET_FLASH_OPEN("OSPIFLASH", dev, conf, 0, err)
#define AT_OSPIFLASH_CLOSE(dev) AT_TARGET_FLASH_CLOSE("OSPIFLASH", dev)
#define AT_OSPIFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_TARGET_RAW_FLASH("AT_OSPIFLASH_COPY"))
#define AT_OSPIFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_TARGET_RAW_FLASH("AT_OSPIFLASH_COPY2D"))
#define AT_OSPIFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_TARGET_RAW_FLASH("AT_OSPIFLASH_WAIT"))

#define AT_OSPIFLASH_FS_TYPE 1
#define AT_OSPIFLASH_FS_T at_target_flash_t
#define AT_OSPIFLASH_FS_CONF_T at_target_flash_conf_t
#define AT_OSPIFLASH_FS_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_OSPIFLASH_FS_INT_ADDR_TYPE char *
#define AT_OSPIFLASH_FS_FC_EVENT at_target_udma_event_t
#define AT_OSPIFLASH_FS_CL_EVENT at_target_udma_event_t
#define AT_OSPIFLASH_FS_EXT2LOC AT_TARGET_EXT2LOC
#define AT_OSPIFLASH_FS_LOC2EXT AT_TARGET_LOC2EXT
#define AT_OSPIFLASH_FS_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_OSPIFLASH_FS_OPEN(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN("OSPIFLASH_FS", file, conf, filename, err)
#define AT_OSPIFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN_WRITE("OSPIFLASH_FS", file, conf, filename, err)
#define AT_OSPIFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_OSPIFLASH_FS_CLOSE(file) AT_TARGET_FLASH_CLOSE("OSPIFLASH_FS", file)
#define AT_OSPIFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_OSPIFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_OSPIFLASH_FS_FC_COPY2D(fs, ...) AT_TARGET_FLASH_COPY2D("AT_OSPIFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_OSPIFLASH_FS_FC_WAIT(file, event) AT_TARGET_WAIT("AT_OSPIFLASH_FS_FC", file, event)
#define AT_OSPIFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_OSPIFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_OSPIFLASH_FS_CL_COPY2D(fs, ...) AT_TARGET_FLASH_COPY2D("AT_OSPIFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_OSPIFLASH_FS_CL_WAIT(file, event) AT_TARGET_WAIT("AT_OSPIFLASH_FS_CL", file, event)

/* EMRAMFLASH: GAP9's on-chip MRAM */
#define AT_EMRAMFLASH_TYPE 1
#define AT_EMRAMFLASH_T at_target_flash_t
#define AT_EMRAMFLASH_CONF_T at_target_flash_conf_t
#define AT_EMRAMFLASH_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_EMRAMFLASH_LOC_ADDR_TYPE char *
#define AT_EMRAMFLASH_EVENT at_target_udma_event_t
#define AT_EMRAMFLASH_EXT2LOC AT_TARGET_EXT2LOC
#define AT_EMRAMFLASH_LOC2EXT AT_TARGET_LOC2EXT
#define AT_EMRAMFLASH_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_EMRAMFLASH_OPEN(dev, conf, err) AT_TARGET_FLASH_OPEN("EMRAMFLASH", dev, conf, 0, err)
#define AT_EMRAMFLASH_CLOSE(dev) AT_TARGET_FLASH_CLOSE("EMRAMFLASH", dev)
#define AT_EMRAMFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_TARGET_RAW_FLASH("AT_EMRAMFLASH_COPY"))
#define AT_EMRAMFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_TARGET_RAW_FLASH("AT_EMRAMFLASH_COPY2D"))
#define AT_EMRAMFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_TARGET_RAW_FLASH("AT_EMRAMFLASH_WAIT"))

#define AT_EMRAMFLASH_FS_TYPE 1
#define AT_EMRAMFLASH_FS_T at_target_flash_t
#define AT_EMRAMFLASH_FS_CONF_T at_target_flash_conf_t
#define AT_EMRAMFLASH_FS_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_EMRAMFLASH_FS_INT_ADDR_TYPE char *
#define AT_EMRAMFLASH_FS_FC_EVENT at_target_udma_event_t
#define AT_EMRAMFLASH_FS_CL_EVENT at_target_udma_event_t
#define AT_EMRAMFLASH_FS_EXT2LOC AT_TARGET_EXT2LOC
#define AT_EMRAMFLASH_FS_LOC2EXT AT_TARGET_LOC2EXT
#define AT_EMRAMFLASH_FS_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_EMRAMFLASH_FS_OPEN(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN("EMRAMFLASH_FS", file, conf, filename, err)
#define AT_EMRAMFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN_WRITE("EMRAMFLASH_FS", file, conf, filename, err)
#define AT_EMRAMFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_EMRAMFLASH_FS_CLOSE(file) AT_TARGET_FLASH_CLOSE("EMRAMFLASH_FS", file)
#define AT_EMRAMFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_EMRAMFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_EMRAMFLASH_FS_FC_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_EMRAMFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_EMRAMFLASH_FS_FC_WAIT(file, event) AT_TARGET_WAIT("AT_EMRAMFLASH_FS_FC", file, event)
#define AT_EMRAMFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_EMRAMFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_EMRAMFLASH_FS_CL_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_EMRAMFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_EMRAMFLASH_FS_CL_WAIT(file, event) AT_TARGET_WAIT("AT_EMRAMFLASH_FS_CL", file, event)

/* DEFAULTFLASH: the board's default flash */
#define AT_DEFAULTFLASH_TYPE 1
#define AT_DEFAULTFLASH_T at_target_flash_t
#define AT_DEFAULTFLASH_CONF_T at_target_flash_conf_t
#define AT_DEFAULTFLASH_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_DEFAULTFLASH_LOC_ADDR_TYPE char *
#define AT_DEFAULTFLASH_EVENT at_target_udma_event_t
#define AT_DEFAULTFLASH_EXT2LOC AT_TARGET_EXT2LOC
#define AT_DEFAULTFLASH_LOC2EXT AT_TARGET_LOC2EXT
#define AT_DEFAULTFLASH_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_DEFAULTFLASH_OPEN(dev, conf, err) AT_TARGET_FLASH_OPEN("DEFAULTFLASH", dev, conf, 0, err)
#define AT_DEFAULTFLASH_CLOSE(dev) AT_TARGET_FLASH_CLOSE("DEFAULTFLASH", dev)
#define AT_DEFAULTFLASH_COPY(dev, ext, loc, size, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(dir), (void)(event), \
     AT_TARGET_RAW_FLASH("AT_DEFAULTFLASH_COPY"))
#define AT_DEFAULTFLASH_COPY2D(dev, ext, loc, size, stride, len, dir, event) \
    ((void)(dev), (void)(ext), (void)(loc), (void)(size), (void)(stride), (void)(len), \
     (void)(dir), (void)(event), AT_TARGET_RAW_FLASH("AT_DEFAULTFLASH_COPY2D"))
#define AT_DEFAULTFLASH_WAIT(dev, event) \
    ((void)(dev), (void)(event), AT_TARGET_RAW_FLASH("AT_DEFAULTFLASH_WAIT"))

#define AT_DEFAULTFLASH_FS_TYPE 1
#define AT_DEFAULTFLASH_FS_T at_target_flash_t
#define AT_DEFAULTFLASH_FS_CONF_T at_target_flash_conf_t
#define AT_DEFAULTFLASH_FS_EXT_ADDR_TYPE at_target_flash_addr_t
#define AT_DEFAULTFLASH_FS_INT_ADDR_TYPE char *
#define AT_DEFAULTFLASH_FS_FC_EVENT at_target_udma_event_t
#define AT_DEFAULTFLASH_FS_CL_EVENT at_target_udma_event_t
#define AT_DEFAULTFLASH_FS_EXT2LOC AT_TARGET_EXT2LOC
#define AT_DEFAULTFLASH_FS_LOC2EXT AT_TARGET_LOC2EXT
#define AT_DEFAULTFLASH_FS_CONF_INIT(dev, type, name) AT_TARGET_CONF_INIT(dev, type, name)
#define AT_DEFAULTFLASH_FS_OPEN(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN("DEFAULTFLASH_FS", file, conf, filename, err)
#define AT_DEFAULTFLASH_FS_OPEN_WRITE(file, conf, filename, err) \
    AT_TARGET_FLASH_OPEN_WRITE("DEFAULTFLASH_FS", file, conf, filename, err)
#define AT_DEFAULTFLASH_FS_OPEN_SET_SIZE(file, size) ((void)(file), (void)(size))
#define AT_DEFAULTFLASH_FS_CLOSE(file) AT_TARGET_FLASH_CLOSE("DEFAULTFLASH_FS", file)
#define AT_DEFAULTFLASH_FS_FC_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_DEFAULTFLASH_FS_FC", fs, ext, loc, size, dir, event)
#define AT_DEFAULTFLASH_FS_FC_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_DEFAULTFLASH_FS_FC", fs, __VA_ARGS__)
#define AT_DEFAULTFLASH_FS_FC_WAIT(file, event) AT_TARGET_WAIT("AT_DEFAULTFLASH_FS_FC", file, event)
#define AT_DEFAULTFLASH_FS_CL_COPY(fs, ext, loc, size, dir, event) \
    AT_TARGET_FLASH_COPY("AT_DEFAULTFLASH_FS_CL", fs, ext, loc, size, dir, event)
#define AT_DEFAULTFLASH_FS_CL_COPY2D(fs, ...) \
    AT_TARGET_FLASH_COPY2D("AT_DEFAULTFLASH_FS_CL", fs, __VA_ARGS__)
#define AT_DEFAULTFLASH_FS_CL_WAIT(file, event) AT_TARGET_WAIT("AT_DEFAULTFLASH_FS_CL", file, event)

#endif /* AT_API_H */
