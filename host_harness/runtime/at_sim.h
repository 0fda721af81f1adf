/*
 * at_sim.h - the simulated GAP chip that generated user kernels run on in the host harness.
 *
 * Generated code never calls these functions directly: it uses the AT_* macros of at_api.h and
 * the gap_* builtins of Gap.h, which expand to the calls below. The Python runner (cffi, ABI
 * mode) drives a call with at_sim_configure / at_sim_configure_l3 / at_sim_configure_flash /
 * at_sim_set_flash_dir / at_sim_begin_call / at_sim_alloc / the generated trampoline /
 * at_sim_get_counters / at_sim_end_call.
 *
 * Unlike the original x86 emulation, DMA here is asynchronous (data lands at the wait, the
 * destination reads as 0xCD until then) and AT_FORK really runs every core id, each on its own
 * stack with working barriers, so pipelining and work-splitting bugs show up. There are two
 * DMA engines, each a FIFO running concurrently with the cores and with the other: the cluster
 * DMA (L2 <-> L1) and the uDMA (L3 <-> L2, behind the AT_<DEV>_* RAM devices, and flash -> L2,
 * behind the AT_<DEV>FLASH_FS_* flash file devices).
 */
#ifndef AT_SIM_H
#define AT_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* The simulated cluster's core count as a compile-time constant: gap_ncore() (Gap.h) expands
 * to it, so a basic kernel may use it in a file-scope initializer. host_harness.build passes
 * -DAT_SIM_NCORES=<cores of the build's platform> to every compile, this file included, and a
 * call whose run-time configuration (at_sim_configure) has another core count faults before the
 * kernel runs. A source compiled outside the harness gets the cluster size of GAP8 and GAP9. */
#ifndef AT_SIM_NCORES
#define AT_SIM_NCORES 8
#endif

/* Memory levels (indices of the arenas). */
#define AT_SIM_L1 1
#define AT_SIM_L2 2
#define AT_SIM_L3 3
/* The ext side of a flash transfer: an offset into an opened flash image, not a host address.
 * No allocation lives there (not an arena level: at_sim_alloc refuses it). */
#define AT_SIM_FLASH 4

/* Byte written over every fresh allocation and over a DMA destination until its wait. */
#define AT_SIM_POISON 0xCD

/* A cluster-DMA event. Generated code declares it uninitialised; the id + magic are written
 * when a transfer is issued on it and cleared when it is waited. */
typedef struct at_sim_event {
    unsigned long long id;
    unsigned int magic;
    unsigned int reserved;
} at_sim_event_t;

/* A uDMA event (AT_<DEV>_CL_EVENT / AT_<DEV>_FC_EVENT). Same layout as at_sim_event_t but a
 * distinct type, so handing a cluster-DMA event to a uDMA macro (or the reverse) does not
 * compile under -Werror. */
typedef struct at_sim_udma_event {
    unsigned long long id;
    unsigned int magic;
    unsigned int reserved;
} at_sim_udma_event_t;

/* An L3 RAM device (AT_<DEV>_T) and its configuration (AT_<DEV>_CONF_T). The simulator keeps
 * its own table of opened device addresses; the contents are never read. */
typedef struct at_sim_ram {
    int reserved;
} at_sim_ram_t;

typedef struct at_sim_ram_conf {
    int type;         /* AT_MEM_L3_* of the original, recorded by AT_<DEV>_CONF_INIT */
    const char *name;
} at_sim_ram_conf_t;

/* A flash device (AT_<DEV>FLASH_FS_T, AT_<DEV>FLASH_T) and its configuration. As for the RAM
 * devices, the simulator keeps its own table of opened device addresses (with the image read
 * from the file at open); the contents are never read. */
typedef struct at_sim_flash {
    int reserved;
} at_sim_flash_t;

typedef struct at_sim_flash_conf {
    int type;         /* AT_MEM_L3_* of the original, recorded by AT_<DEV>FLASH_FS_CONF_INIT */
    const char *name;
} at_sim_flash_conf_t;

/* A flash address (AT_<DEV>FLASH_FS_EXT_ADDR_TYPE): a byte offset into the opened file. The
 * original's is a 32-bit unsigned int; here it is pointer-sized, so that a pointer cast to it
 * (CNN_AT_Misc.c does) is neither truncated nor warned about on the 64-bit host. */
typedef unsigned long at_sim_flash_addr_t;

/* Per-call counters (bytes, cycles). */
typedef struct at_sim_counters {
    long long l3_to_l2, l2_to_l1, l1_to_l2, l2_to_l3;
    long long transfers;
    long long peak_l1, peak_l2;
    long long cycles, compute_cycles, stall_cycles, fork_cycles;
    long long dma_busy_cluster, dma_busy_udma;
    long long peak_l3; /* after the older fields; runner.CDEF mirrors this struct */
    /* flash -> L2 bytes, and the uDMA cycles spent on them (also counted in dma_busy_udma) */
    long long flash_to_l2, dma_busy_flash;
} at_sim_counters_t;

/* ---- driven by the Python runner ---- */
void at_sim_configure(int cores, long long l1_size, long long l2_size,
                      long long dma_setup_cycles, double dma_bytes_per_cycle,
                      long long dma_line_cycles, long long dma_issue_cycles,
                      long long wait_cycles, long long fork_cycles, int dma_duplex,
                      long long kernel_call_cycles);
/* L3 RAM capacity and the uDMA engine's cost (platforms.DmaEngine of platform.udma["ram"]). */
void at_sim_configure_l3(long long l3_size, long long udma_setup_cycles,
                         double udma_bytes_per_cycle, long long udma_line_cycles);
/* Flash capacity (the platform's l3_flash_size) and the uDMA cost of flash reads:
 * platform.udma["flash"] for every flash family, platform.udma["mram"] for EMRAMFLASH (GAP9's
 * on-chip MRAM; the runner passes the flash numbers when the platform has no MRAM). */
void at_sim_configure_flash(long long flash_size, long long flash_setup_cycles,
                            double flash_bytes_per_cycle, long long flash_line_cycles,
                            long long mram_setup_cycles, double mram_bytes_per_cycle,
                            long long mram_line_cycles);
/* The directory a relative flash file name (AT_<DEV>FLASH_FS_OPEN) is resolved against: the
 * runner passes the build's generated directory before every call. NULL or "" = the current
 * directory. The string is copied. */
void at_sim_set_flash_dir(const char *dir);
void at_sim_begin_call(void);
/* Frees every allocation, closes every device and drops pending transfers of the call; a
 * session's kept allocations and flash devices (at_sim_persist) stay. */
void at_sim_end_call(void);
/* Sessions (a graph between its Construct and Destruct): with on = 1, the allocations and the
 * flash opens made from now on are kept across calls (at_sim_end_call leaves them, and the next
 * calls see them in use) until at_sim_end_session; at_sim_end_call turns it off. */
void at_sim_persist(int on);
/* Ends the session: returns how many kept allocations and flash devices are still live (a
 * Destruct that forgot to free or close them), described in at_sim_last_error(), and frees and
 * closes them all. */
int at_sim_end_session(void);
long long at_sim_level_used(int level);
long long at_sim_level_capacity(int level);
const char *at_sim_last_error(void);
void at_sim_get_counters(at_sim_counters_t *out);
/* Per-node figures of a graph run: AT_SIM_NODE_BEGIN(i) / AT_SIM_NODE_END(i), which the
 * generated runner puts around node i, add what the counters did in between to node i's
 * figures (cycles = clock advance; peaks are not kept per node). at_sim_begin_call clears them;
 * at_sim_node_count() is one past the highest node ended. */
void at_sim_node_begin(int node);
void at_sim_node_end(int node);
/* AT_YIELD of a reentrant runner: 1 at the n-th yield point after at_sim_yield_after(n) (n > 0;
 * 0: never), then 0 again. Reset by at_sim_end_call. */
int at_sim_yield(void);
void at_sim_yield_after(int n);
int at_sim_node_count(void);
void at_sim_get_node_counters(int node, at_sim_counters_t *out);
/* The simulated clock (cycles since the call began): gap_{fc,cl}_readhwtimer(). */
long long at_sim_clock(void);

/* ---- used by the generated trampoline ---- */
void *at_sim_alloc_symbol(int level, long long size, const char *label);
int at_sim_register_region(int level, void *base, long long size, const char *label);
/* Arms the fault handler for one kernel call; with a non-NULL env it also faults (longjmp to
 * env, message in at_sim_last_error) when the configured cores differ from AT_SIM_NCORES. */
void at_sim_arm(void *jmp_env);
int at_sim_finish(void);

/* ---- used through at_api.h / Gap.h ---- */
void *at_sim_alloc(int level, long long size, const char *label);
void *at_sim_alloc_at(int level, long long size, const char *what, const char *file, int line);
void at_sim_free(int level, void *ptr, long long size, const char *file, int line);
/* at_sim_free naming the caller's macro (e.g. "AT_HYPERRAM_FREE") in fault messages. */
void at_sim_free_as(const char *macro, int level, void *ptr, long long size,
                    const char *file, int line);
void at_sim_copy(void *ext, void *loc, long long size, int dir, at_sim_event_t *evt,
                 const char *file, int line);
void at_sim_copy2d(void *ext, void *loc, long long size, long long stride, long long length,
                   int dir, at_sim_event_t *evt, const char *file, int line);
void at_sim_wait(at_sim_event_t *evt, const char *file, int line);

/* L3 RAM devices: a uDMA transfer faults unless its device was opened in this call. family is
 * the macro family without "AT_" ("HYPERRAM"); opening an open device again is harmless,
 * closing one that is not open does nothing. */
void at_sim_device_open(void *dev, const char *family, const char *file, int line);
void at_sim_device_close(void *dev);
/* uDMA, L3 <-> L2: ext advances by `stride` per line of `length` bytes in one live L3
 * allocation, loc is contiguous in one live L2 allocation; dir 0 = L3->L2 (EXT2LOC), 1 =
 * L2->L3 (LOC2EXT); a 1D copy is stride = length = size. */
void at_sim_udma_copy(void *dev, void *ext, void *loc, long long size, long long stride,
                      long long length, int dir, at_sim_udma_event_t *evt,
                      const char *file, int line);
void at_sim_udma_wait(void *dev, at_sim_udma_event_t *evt, const char *file, int line);
/* The same, naming the caller's macros in fault messages: api is the macro prefix
 * ("AT_HYPERRAM_CL", "AT_QSPIRAM_FC"), so a message can say "missing AT_HYPERRAM_CL_WAIT". */
void at_sim_udma_copy_as(const char *api, void *dev, void *ext, void *loc, long long size,
                         long long stride, long long length, int dir, at_sim_udma_event_t *evt,
                         const char *file, int line);
void at_sim_udma_wait_as(const char *api, void *dev, at_sim_udma_event_t *evt,
                         const char *file, int line);

/* Flash devices. family is the macro family without "AT_": "HYPERFLASH_FS" (a file opened on
 * the flash's file system) or "HYPERFLASH" (the raw device, no file). A file system open reads
 * the whole file (filename resolved against at_sim_set_flash_dir's directory unless absolute)
 * into the device's read-only image and sets *err to 0; a file that cannot be read sets *err to
 * 1 and leaves the reason in at_sim_last_error() (no fault: the generated Construct returns 1).
 * An image larger than the platform's flash faults. Opening an open device again re-reads it
 * (it faults while a transfer on it is pending). */
void at_sim_flash_open(const char *family, void *dev, const char *filename, int *err,
                       const char *file, int line);
/* AT_<DEV>FLASH_FS_OPEN_WRITE: faults (the simulated flash is read-only). */
void at_sim_flash_open_write(const char *family, void *dev, const char *file, int line);
/* Faults while a transfer on the device is pending; closing a device that is not open does
 * nothing. */
void at_sim_flash_close(const char *family, void *dev, const char *file, int line);
/* uDMA, flash -> L2: ext is a byte offset into the device's image and advances by `stride` per
 * line of `length` bytes, all inside the image; loc is contiguous in one live L2 allocation;
 * dir must be 0 (EXT2LOC): 1 (LOC2EXT) writes into flash and faults. api is the macro prefix
 * ("AT_HYPERFLASH_FS_FC"); the transfer is waited with at_sim_udma_wait_as. */
void at_sim_flash_copy(const char *api, void *dev, at_sim_flash_addr_t ext, void *loc,
                       long long size, long long stride, long long length, int dir,
                       at_sim_udma_event_t *evt, const char *file, int line);
/* The original's raw flash copies (AT_HYPERFLASH_COPY ...) are empty macros ("TODO not yet
 * supported"): on the chip they copy nothing, so here they fault, naming the macro. */
void at_sim_flash_unsupported(const char *macro, const char *file, int line);

void at_sim_fork(int ncores, void (*fn)(void *), void *arg, const char *file, int line);
void at_sim_barrier(void);
int at_sim_core_id(void);
int at_sim_num_cores(void);
void at_sim_compute(long long cycles);
void at_sim_compute_at(long long cycles, const char *file, int line); /* AT_SIM_COMPUTE: faults on a negative Cost */

#ifdef __cplusplus
}
#endif

#endif /* AT_SIM_H */
