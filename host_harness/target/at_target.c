/*
 * at_target.c - the target side of at_api.h (target): cluster fork and barrier, cycle clock,
 * L1/L2 allocation and cluster-DMA transfers on pulp-runtime, for generated user kernels and
 * graphs run on GVSoC's pulp-open cluster.
 *
 * Fork: every cluster core enters at_target_cluster_main (cluster_start runs one entry on all
 * of them). Core 0 runs the application (at_target_master, the back-end's main), the others wait
 * in at_target_worker_loop: AT_FORK publishes entry and argument, releases them with a barrier,
 * runs the entry itself and joins with a second barrier, as pi_cl_team_fork does. Basic kernels'
 * own gap_waitbarrier() calls are the same hardware barrier across the 8 cores.
 *
 * L3 devices: an emulation, the L3 RAM in L2 and the flash read from the host through GVSoC's
 * semihosting (at_api.h says what it is and is not), at the end.
 */
#include <pulp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at_api.h"

#if PLP_DMA_EXT2LOC != AT_TARGET_DMA_EXT2LOC || PLP_DMA_LOC2EXT != AT_TARGET_DMA_LOC2EXT
#error "at_api.h (target): the DMA directions differ from pulp-runtime's"
#endif
#if ARCHI_CLUSTER_NB_PE != AT_SIM_NCORES
#error "AT_SIM_NCORES differs from the cluster's core count (ARCHI_CLUSTER_NB_PE)"
#endif

/* The fork's mailbox, in L1 where every core reads it at one cycle. */
static L1_DATA void (*volatile fork_entry)(void *);
static L1_DATA void *volatile fork_arg;
static L1_DATA volatile int fork_quit;

int at_target_core_id(void) { return get_core_id(); }

void at_target_barrier(void) { synch_barrier(); }

unsigned int at_target_clock(void)
{
    unsigned int value;
    /* mcycle: counts while a core sleeps on a DMA or barrier event (PCCR 0x780 does not). */
    __asm__ volatile("csrr %0, 0xB00" : "=r"(value));
    return value;
}

/* An allocator over an L2 array the application hands over (pulp-runtime's pos_alloc, the one
 * behind pi_l2_malloc): the graph's L2 heap and the emulated L3 RAM. */
typedef struct {
    pos_alloc_t alloc;
    int ready;
} at_target_heap_t;

static at_target_heap_t l2_heap, l3_arena;

static void heap_init(at_target_heap_t *heap, char *area, int size)
{
    pos_alloc_init(&heap->alloc, area, size);
    heap->ready = 1;
}

/* A graph's L2 areas come from a heap main.c sizes for them: pulp-runtime's pi_l2_malloc serves
 * private bank 0 only (32 KiB less the FC's data, nothing once the application's static data,
 * flash images included, overflow it), and its shared-banks allocator starts at a linker symbol
 * that pulp-open's link.ld computes in L1. Without one (user-kernel calls), pi_l2_malloc. */
void at_target_l2_init(char *heap, int size) { heap_init(&l2_heap, heap, size); }

void *at_target_alloc(int level, long long size)
{
    if (size <= 0 || size > 0x7fffffff)
        return 0;
    if (level == AT_SIM_L1)
        return pi_l1_malloc(0, (int)size);
    return l2_heap.ready ? pos_alloc(&l2_heap.alloc, (int)size) : pi_l2_malloc((int)size);
}

void at_target_free(int level, void *ptr, long long size)
{
    if (!ptr)
        return;
    if (level == AT_SIM_L1)
        pi_l1_free(0, ptr, (int)size);
    else if (l2_heap.ready)
        pos_free(&l2_heap.alloc, ptr, (int)size);
    else
        pi_l2_free(ptr, (int)size);
}

/* MCHAN has 16 transfer counters (MCHAN_NB_COUNTERS), each freed by its wait only: a 17th
 * transfer issued before any wait blocks the core in plp_dma_counter_alloc for ever. A fused
 * kernel issues more up front (its input and every layer's constants), so the counters in use
 * are tracked: a mask of them and the last one issued in L1 (read at every issue and wait), each
 * counter's event in L2 (read only then). An issue that would be the 17th first waits for the
 * counter after the last one issued (MCHAN hands them out in turn: the oldest; all are pending,
 * so any would be correct), whose own wait
 * then finds it done (id -1). Only core 0 issues and waits. */
#define AT_TARGET_DMA_COUNTERS 16
static at_target_event_t *dma_event[AT_TARGET_DMA_COUNTERS];
static L1_DATA unsigned int dma_mask;
static L1_DATA int dma_last;

static void at_target_dma_room(void)
{
    int c;
    if (dma_mask != (1u << AT_TARGET_DMA_COUNTERS) - 1)
        return;
    c = (dma_last + 1) % AT_TARGET_DMA_COUNTERS;
    plp_dma_wait((unsigned int)c);
    dma_event[c]->id = -1;
    dma_mask &= ~(1u << c);
}

static void at_target_dma_track(at_target_event_t *event, int counter)
{
    event->id = counter;
    dma_event[counter] = event;
    dma_mask |= 1u << counter;
    dma_last = counter;
}

/* MCHAN takes at most 16 bits of length per command: longer 1D copies go in chunks, all but
 * the last waited for here (they are rare: an L1 of 64 KiB holds few such tiles). */
#define AT_TARGET_CHUNK 32768

void at_target_copy(char *ext, char *loc, int size, int dir, at_target_event_t *event)
{
    at_target_dma_room();
    while (size > AT_TARGET_CHUNK) {
        plp_dma_wait(plp_dma_memcpy((unsigned int)ext, (unsigned int)loc, AT_TARGET_CHUNK, dir));
        ext += AT_TARGET_CHUNK;
        loc += AT_TARGET_CHUNK;
        size -= AT_TARGET_CHUNK;
    }
    at_target_dma_track(event, plp_dma_memcpy((unsigned int)ext, (unsigned int)loc, (unsigned short)size, dir));
}

void at_target_copy2d(char *ext, char *loc, int size, int stride, int length, int dir, at_target_event_t *event)
{
    at_target_dma_room();
    /* whole lines per command so that no line is split across two commands; the division (tens
     * of cycles on rv32imc) only for the rare copy over one command's length */
    if (size > AT_TARGET_CHUNK) {
        int lines_per = AT_TARGET_CHUNK / length;
        int chunk = lines_per * length;
        while (size > chunk) {
            plp_dma_wait(plp_dma_memcpy_2d((unsigned int)ext, (unsigned int)loc, (unsigned short)chunk,
                                           (unsigned short)stride, (unsigned short)length, dir));
            ext += lines_per * stride;
            loc += chunk;
            size -= chunk;
        }
    }
    at_target_dma_track(event, plp_dma_memcpy_2d((unsigned int)ext, (unsigned int)loc, (unsigned short)size,
                                                 (unsigned short)stride, (unsigned short)length, dir));
}

void at_target_wait(at_target_event_t *event)
{
    if (event->id < 0)
        return; /* waited already to free its counter (at_target_dma_room) */
    plp_dma_wait((unsigned int)event->id);
    dma_mask &= ~(1u << event->id);
}

/* Per entry (basic kernel): calls, master cycles from the release to the join and the sum of
 * the Cost= values the generated code computed for those calls (AT_SIM_COMPUTE just before each
 * fork), what the calibration fits the compute model on (at_target_print_forks). The tables
 * live in L2 (only profiling touches them) to leave the TCDM to the kernels' L1 area and the
 * cores' stacks: pulp_open's l1_size counts on that. */
#define AT_TARGET_MAX_ENTRIES 64
static void (*fork_entries[AT_TARGET_MAX_ENTRIES])(void *);
static unsigned int fork_calls[AT_TARGET_MAX_ENTRIES];
static unsigned int fork_cycles[AT_TARGET_MAX_ENTRIES];
static long long fork_costs[AT_TARGET_MAX_ENTRIES];
static int fork_count;
/* Off by default: the accounting costs the master ~100 cycles per fork (GvsocProgram.profile). */
L1_DATA int at_target_profile_forks;
/* Every profiled fork's cycles so far: a sequence of calls reads it around each call. */
unsigned int at_target_fork_total;
/* The last AT_SIM_COMPUTE value (recorded only while profiling). */
long long at_target_cost;

static void fork_account(void (*entry)(void *), unsigned int cycles)
{
    int i;
    for (i = 0; i < fork_count && fork_entries[i] != entry; i++)
        ;
    if (i == AT_TARGET_MAX_ENTRIES)
        return;
    if (i == fork_count) {
        fork_entries[i] = entry;
        fork_calls[i] = fork_cycles[i] = 0;
        fork_costs[i] = 0;
        fork_count++;
    }
    fork_calls[i]++;
    fork_cycles[i] += cycles;
    at_target_fork_total += cycles;
    fork_costs[i] += at_target_cost;
}

void at_target_reset_forks(void) { fork_count = 0; }

void at_target_print_forks(void)
{
    int i;
    for (i = 0; i < fork_count; i++)
        printf("@ATK %x %u %u %u\n", (unsigned int)fork_entries[i], fork_calls[i], fork_cycles[i],
               (unsigned int)fork_costs[i]);
}

void at_target_fork(int ncores, void (*entry)(void *), void *arg)
{
    unsigned int t0 = at_target_clock();
    (void)ncores; /* every core joins: basic kernels split their work by gap_ncore() */
    fork_entry = entry;
    fork_arg = arg;
    synch_barrier();
    entry(arg);
    synch_barrier();
    if (at_target_profile_forks)
        fork_account(entry, at_target_clock() - t0);
}

static void at_target_worker_loop(void)
{
    for (;;) {
        synch_barrier();
        if (fork_quit)
            return;
        fork_entry(fork_arg);
        synch_barrier();
    }
}

/* ---- per-node cycles of graph runners ------------------------------------------------- */

#define AT_TARGET_MAX_NODES 512
/* In L2, as the fork tables: touched twice per node. */
unsigned int at_target_node_cycles[AT_TARGET_MAX_NODES];
static L1_DATA unsigned int node_start;

void at_target_node_begin(int node)
{
    (void)node;
    node_start = at_target_clock();
}

void at_target_node_end(int node)
{
    if (node >= 0 && node < AT_TARGET_MAX_NODES)
        at_target_node_cycles[node] += at_target_clock() - node_start;
}

void at_target_reset_nodes(void)
{
    int i;
    for (i = 0; i < AT_TARGET_MAX_NODES; i++)
        at_target_node_cycles[i] = 0;
}

/* One line per node the back-end reads: "@ATN <node> <cycles>". */
void at_target_print_nodes(int count)
{
    int i;
    for (i = 0; i < count && i < AT_TARGET_MAX_NODES; i++)
        printf("@ATN %d %u\n", i, at_target_node_cycles[i]);
}

/* ---- cluster entry ---------------------------------------------------------------------- */

void at_target_master(void); /* the back-end's application (main.c) */

/* Core 0 runs the application (a graph's runner, its user kernels, its share of every basic
 * kernel) on pulp-runtime's stack of CLUSTER_STACK_SIZE bytes, the first of cluster_stacks, with
 * the cluster's static L1 data below it and the end of the TCDM below that. The free part is
 * filled with a pattern before the application and scanned after it, so that the back-end can
 * say how deep the stack went and refuse a run whose stack overwrote the data below: one line
 * "@ATS <bytes used> <bytes of the stack>". */
#define AT_TARGET_STACK_FILL 0x5ac3a55au

int at_target_cluster_main(void)
{
    if (get_core_id() == 0) {
        unsigned int *bottom = (unsigned int *)cluster_stacks, *w;
        char *sp;
        /* below sp nothing is live (no red zone in the RISC-V ABI); no call until the fill ends */
        __asm__ volatile("mv %0, sp" : "=r"(sp));
        for (w = bottom; (char *)w < sp; w++)
            *w = AT_TARGET_STACK_FILL;
        fork_quit = 0;
        at_target_master();
        for (w = bottom; (char *)w < sp && *w == AT_TARGET_STACK_FILL; w++)
            ;
        printf("@ATS %d %d\n", (int)((char *)bottom + CLUSTER_STACK_SIZE - (char *)w), CLUSTER_STACK_SIZE);
        fork_quit = 1;
        synch_barrier(); /* release the workers for good */
    } else {
        at_target_worker_loop();
    }
    return 0;
}

/* ---- L3 devices: the emulation (at_api.h, "L3 devices") ----------------------------------- */

/* A fault of the generated code's use of a device: said on one line the back-end reads, then
 * the application stops (exit sets the SoC's end-of-computation status, GVSoC ends). */
void at_target_fault(const char *api, const char *why)
{
    printf("@ATF %s: %s\n", api, why);
    exit(3);
}

/* The emulated L3 RAM: an arena main.c hands over when the application allocates L3 (a graph
 * spilling activations); L3-homed user-kernel arguments are plain L2 arrays of main.c. */
void at_target_l3_init(char *arena, int size) { heap_init(&l3_arena, arena, size); }

void at_target_ram_open(const char *family, at_target_ram_t *dev, int *err)
{
    (void)family;
    dev->open = 1;
    *err = 0;
}

void at_target_ram_close(const char *family, at_target_ram_t *dev)
{
    (void)family;
    dev->open = 0;
}

static void need_open(const char *api, int open)
{
    if (!open)
        at_target_fault(api, "the device is not open (missing AT_<DEV>_OPEN, or closed already)");
}

char *at_target_l3_alloc(const char *api, at_target_ram_t *dev, long long size)
{
    need_open(api, dev->open);
    if (size <= 0 || size > 0x7fffffff)
        return 0;
    if (!l3_arena.ready)
        at_target_fault(api, "no L3 arena: the back-end sized it from the manifest, which says this "
                             "application allocates no L3");
    /* NULL when full, as on the chip: the generated constructor returns 2 */
    return (char *)pos_alloc(&l3_arena.alloc, (int)size);
}

void at_target_l3_free(const char *api, at_target_ram_t *dev, void *ptr, long long size)
{
    (void)api;
    (void)dev;
    if (ptr && l3_arena.ready)
        pos_free(&l3_arena.alloc, ptr, (int)size);
}

/* size bytes in lines of `length`: the ext (L3 or flash) side steps by `stride` per line, the
 * loc (L2) side is contiguous; a 1D copy is one line. Done now by this core: the emulation has no
 * engine running beside the cores. */
static void copy_lines(char *ext, char *loc, int size, int stride, int length, int dir)
{
    while (size > 0) {
        int n = size < length ? size : length;
        if (dir == AT_TARGET_EXT2LOC)
            memcpy(loc, ext, (size_t)n);
        else
            memcpy(ext, loc, (size_t)n);
        ext += stride;
        loc += n;
        size -= n;
    }
}

static void issue(const char *api, int dir, int size, int length, at_target_udma_event_t *event)
{
    if (dir != AT_TARGET_EXT2LOC && dir != AT_TARGET_LOC2EXT)
        at_target_fault(api, "the direction is neither EXT2LOC (0) nor LOC2EXT (1)");
    if (size > 0 && length <= 0)
        at_target_fault(api, "a 2D copy with a line length <= 0");
    event->pending = 1;
}

void at_target_ram_copy(const char *api, at_target_ram_t *dev, char *ext, char *loc, int size, int stride,
                        int length, int dir, at_target_udma_event_t *event)
{
    need_open(api, dev->open);
    issue(api, dir, size, length, event);
    copy_lines(ext, loc, size, stride, length, dir);
}

/* GVSoC's semihosting (the RISC-V convention its ISS implements, core/models/cpu/iss/src/
 * syscalls.cpp): operation in a0, the address of its argument block in a1, the result in a0; the
 * simulator recognises an ebreak between these two exact uncompressed no-op shifts. */
#define AT_SEMIHOST_OPEN 0x01
#define AT_SEMIHOST_CLOSE 0x02
#define AT_SEMIHOST_READ 0x06
#define AT_SEMIHOST_SEEK 0x0A
#define AT_SEMIHOST_FLEN 0x0C
#define AT_SEMIHOST_MODE_RB 1

static long semihost(long op, long arg)
{
    register long a0 __asm__("a0") = op;
    register long a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n\t.option norvc\n\tslli zero, zero, 0x1f\n\tebreak\n\tsrai zero, zero, 0x7\n\t"
                     ".option pop"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return a0;
}

/* The image named `filename` (compared by base name: the generated code opens it by the name it
 * was written under, next to the generated C). */
static const at_target_image_t *find_image(const char *filename)
{
    const char *base = filename, *p;
    int i;
    for (p = filename; *p; p++)
        if (*p == '/')
            base = p + 1;
    for (i = 0; i < at_target_image_count; i++)
        if (strcmp(at_target_images[i].name, base) == 0)
            return &at_target_images[i];
    return 0;
}

/* The host file of `image` opened read-only: its descriptor, or -1 (said on an @ATW line) when it
 * does not open or its size is no longer the one the back-end listed (regenerated meanwhile). */
static int open_image(const at_target_image_t *image)
{
    long args[3];
    long fd, size;
    args[0] = (long)image->path;
    args[1] = AT_SEMIHOST_MODE_RB;
    args[2] = (long)strlen(image->path);
    fd = semihost(AT_SEMIHOST_OPEN, (long)args);
    if (fd < 0) {
        printf("@ATW flash image '%s': its host file %s does not open (semihosting)\n", image->name, image->path);
        return -1;
    }
    /* GVSoC's FLEN takes the descriptor itself in a1, not an argument block */
    size = semihost(AT_SEMIHOST_FLEN, fd);
    if (size != image->size) {
        printf("@ATW flash image '%s': its host file %s has %ld bytes, not the %d listed\n", image->name,
               image->path, size, image->size);
        semihost(AT_SEMIHOST_CLOSE, fd);
        return -1;
    }
    return (int)fd;
}

void at_target_flash_open(const char *family, at_target_flash_t *dev, const char *filename, int *err)
{
    const at_target_image_t *image = filename ? find_image(filename) : 0;
    (void)family;
    dev->fd = -1;
    dev->size = 0;
    dev->open = 0;
    *err = 1;
    if (filename && !image) {
        /* not a fault: the generated constructor returns 1, which the back-end reports */
        printf("@ATW flash image '%s' is not listed in the application\n", filename);
        return;
    }
    if (image) {
        dev->fd = open_image(image);
        if (dev->fd < 0)
            return;
        dev->size = image->size;
    }
    dev->open = 1;
    *err = 0;
}

void at_target_flash_close(const char *family, at_target_flash_t *dev)
{
    (void)family;
    /* GVSoC's CLOSE, as FLEN, takes the descriptor itself in a1 */
    if (dev->open && dev->fd >= 0)
        semihost(AT_SEMIHOST_CLOSE, dev->fd);
    dev->fd = -1;
    dev->open = 0;
}

/* `size` bytes of the image from byte `offset` into `loc` (L2 or L1), through semihosting. */
static void read_image(const char *api, int fd, unsigned long offset, char *loc, int size)
{
    long args[3];
    args[0] = fd;
    args[1] = (long)offset;
    if (semihost(AT_SEMIHOST_SEEK, (long)args) != 0)
        at_target_fault(api, "the semihosting seek in the flash image's host file failed");
    args[1] = (long)loc;
    args[2] = size;
    /* the result is the count of bytes not read */
    if (semihost(AT_SEMIHOST_READ, (long)args) != 0)
        at_target_fault(api, "the semihosting read of the flash image's host file came short");
}

void at_target_flash_copy(const char *api, at_target_flash_t *dev, at_target_flash_addr_t ext, char *loc,
                          int size, int stride, int length, int dir, at_target_udma_event_t *event)
{
    long long last;
    need_open(api, dev->open);
    issue(api, dir, size, length, event);
    if (dir != AT_TARGET_EXT2LOC)
        at_target_fault(api, "a write into flash (LOC2EXT): the flash images are read-only on GVSoC");
    /* the last byte read: the start of the last line plus its length */
    last = size <= 0 ? 0 : (long long)ext + (long long)((size - 1) / length) * stride
                           + (size - (long long)((size - 1) / length) * length);
    if (last > dev->size)
        at_target_fault(api, "the copy reads past the end of the flash image");
    /* line by line, as copy_lines: the image side steps by `stride`, loc is contiguous */
    while (size > 0) {
        int n = size < length ? size : length;
        read_image(api, dev->fd, ext, loc, n);
        ext += (unsigned long)stride;
        loc += n;
        size -= n;
    }
}

void at_target_udma_wait(const char *api, at_target_udma_event_t *event)
{
    if (!event->pending)
        at_target_fault(api, "a wait on an event no copy was issued on (or waited already)");
    event->pending = 0;
}
