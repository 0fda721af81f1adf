/*
 * at_sim.c - simulated GAP chip for the host harness (see at_sim.h).
 *
 * Four parts: arenas (L1/L2/L3 accounting, one malloc per allocation so AddressSanitizer sees
 * overruns), asynchronous DMA (poison at issue, land at wait) on two engines - the cluster DMA
 * (L2 <-> L1) and the uDMA (L3 <-> L2 on opened RAM devices, flash -> L2 on opened flash
 * devices, whose read-only images are files read at open) - cores (AT_FORK runs every core
 * id on its own ucontext stack, cooperatively, with barriers) and a deterministic clock.
 *
 * Faults: at_sim_fault() records a message and longjmps to the trampoline armed by
 * at_sim_arm(). A longjmp must never leave a core's stack, so a fault raised on a core switches
 * back to the main context first; at_sim_fork() then longjmps once the cores are stopped.
 */
#define _GNU_SOURCE
#include "at_sim.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define AT_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AT_SIM_ASAN 1
#endif
#endif
#ifdef AT_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define AT_SIM_EVENT_MAGIC 0xA75DE7E1u
#define AT_SIM_UDMA_MAGIC 0xA75D0D3Au /* differs: a cluster event is never a uDMA one */
#define AT_SIM_MAX_DEVICES 16
#define AT_SIM_MAX_CORES 64
#define AT_SIM_STACK_SIZE (256 * 1024)
#define AT_SIM_MSG_SIZE 2048
#define AT_SIM_LABEL_SIZE 64
/* Bytes of unowned memory before and after every allocation, at least: a small overrun of one
 * allocation never lands in another, so the access checks (below) name it. In the arena the gap
 * is as large as the allocation itself (see "The arena"). AddressSanitizer builds leave this to
 * ASan's own redzones, which report a heap-buffer-overflow in the basic kernel. */
#ifdef AT_SIM_ASAN
#define AT_SIM_GUARD 0
#else
#define AT_SIM_GUARD 1024
#endif

/* ------------------------------------------------------------------------------------------ */
/* Configuration and per-call state                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Defaults are gap8's; the runner configures every call. */
static struct {
    int cores;
    long long capacity[4]; /* indexed by level */
    long long dma_setup, dma_line, dma_issue, wait, fork;
    long long kernel_call; /* entering a user kernel (Platform.kernel_call_cycles) */
    int dma_duplex;        /* cluster DMA: reads and writes on two FIFOs (MCHAN) */
    double dma_bpc;
    long long udma_setup, udma_line;
    double udma_bpc;
    long long flash_size, flash_setup, flash_line, mram_setup, mram_line;
    double flash_bpc, mram_bpc;
} cfg = {.cores = AT_SIM_NCORES, .capacity = {0, 64 * 1024, 512 * 1024, 8 * 1024 * 1024},
         .dma_setup = 30, .dma_line = 4, .dma_issue = 10, .wait = 4, .fork = 60, .dma_bpc = 8.0, .dma_duplex = 1,
         .udma_setup = 200, .udma_line = 20, .udma_bpc = 1.0,
         .flash_size = 64 * 1024 * 1024, .flash_setup = 300, .flash_line = 20, .flash_bpc = 1.0,
         .mram_setup = 300, .mram_line = 20, .mram_bpc = 1.0};

static at_sim_counters_t counters;
/* The clock, and the cycle at which each DMA FIFO is next free: the cluster DMA's per direction
 * (one shared FIFO, index 0, unless cfg.dma_duplex) and the uDMA's. */
static long long now, engine_free[2], udma_free;
/* Per-node figures of a graph run (AT_SIM_NODE_BEGIN / AT_SIM_NODE_END). */
static at_sim_counters_t *node_figures, node_start;
static int node_capacity, n_node_figures, node_open = -1;
static long long live[4];
static char last_error[AT_SIM_MSG_SIZE];
static jmp_buf *armed_env;

/* ------------------------------------------------------------------------------------------ */
/* Faults                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static void fault_from_core(void); /* defined with the cores */
static int on_core_stack(void);
/* Access checks of the basic kernels (defined last). */
static void checks_arm(int on);
static void checks_context(int core);
static void checks_fork_begin(const char *file, int line);
static void checks_fork_end(void);
static int checks_epoch_end(void);
static void checks_dma_changed(void);
static const char *function_name(const void *pc); /* its symbol (dladdr), NULL if none */

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : (path ? path : "?");
}

static void set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

/* Record the message and abort the user kernel: only the main context may longjmp. */
static void fault_jump(void) __attribute__((noreturn));
static void fault_jump(void)
{
    if (on_core_stack())
        fault_from_core();
    if (armed_env)
        longjmp(*armed_env, 1);
    fprintf(stderr, "at_sim fault outside a kernel call: %s\n", last_error);
    abort();
}

#define AT_SIM_FAULT(...) do { set_error(__VA_ARGS__); fault_jump(); } while (0)

const char *at_sim_last_error(void) { return last_error; }

/* gap_ncore() was compiled in as AT_SIM_NCORES: running the library with another core count
 * would split work for one count and fork another, so the call fails before the kernel runs. */
void at_sim_arm(void *jmp_env)
{
    armed_env = (jmp_buf *)jmp_env;
    checks_arm(jmp_env != NULL);
    if (jmp_env && cfg.cores != AT_SIM_NCORES)
        AT_SIM_FAULT("the simulator is configured for %d cores but this library was built for "
                     "%d (AT_SIM_NCORES, the value of gap_ncore()): build it with cores=%d",
                     cfg.cores, AT_SIM_NCORES, cfg.cores);
}

/* ------------------------------------------------------------------------------------------ */
/* Arenas                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Race shadow of one byte (see "Access checks"): the tag (epoch << 8 | core) of its last
 * writer and of its last reader; epoch 0 never happens. */
typedef struct {
    uint32_t w, r;
} at_shadow_t;

typedef struct {
    int level;
    int region; /* registered static array: not ours to free */
    int kept;   /* made while at_sim_persist(1): survives at_sim_end_call (a graph's areas) */
    char *base;
    char *raw;  /* what malloc returned (base - AT_SIM_GUARD), or the start of its arena extent */
    size_t extent; /* in the arena: bytes from raw on that it owns (gaps included); 0: malloc */
    long long size;
    at_shadow_t *shadow; /* allocated on the first checked access inside AT_FORK */
    char label[AT_SIM_LABEL_SIZE];
} at_alloc_t;

static at_alloc_t *allocs;
static int n_allocs, cap_allocs;
/* at_sim_persist: allocations and flash opens made now are kept across calls (a session). */
static int persist_mode;

static const char *level_name(int level)
{
    return level == AT_SIM_L1 ? "L1" : level == AT_SIM_L2 ? "L2" : level == AT_SIM_L3 ? "L3"
         : level == AT_SIM_FLASH ? "flash" : "L?";
}

static int valid_level(int level) { return level >= AT_SIM_L1 && level <= AT_SIM_L3; }

long long at_sim_level_used(int level) { return valid_level(level) ? live[level] : 0; }

long long at_sim_level_capacity(int level) { return valid_level(level) ? cfg.capacity[level] : 0; }

static void account(int level, long long delta)
{
    live[level] += delta;
    if (level == AT_SIM_L1 && live[level] > counters.peak_l1)
        counters.peak_l1 = live[level];
    if (level == AT_SIM_L2 && live[level] > counters.peak_l2)
        counters.peak_l2 = live[level];
    if (level == AT_SIM_L3 && live[level] > counters.peak_l3)
        counters.peak_l3 = live[level];
}

/* The access checks' view of the allocations (defined with them). */
static void forget_alloc(at_alloc_t *a);
static void track_alloc(const at_alloc_t *a);

static at_alloc_t *push_alloc(int level, int region, char *base, long long size, const char *label)
{
    at_alloc_t *a;
    if (n_allocs == cap_allocs) {
        int cap = cap_allocs ? 2 * cap_allocs : 32;
        at_alloc_t *grown = realloc(allocs, (size_t)cap * sizeof *allocs);
        if (!grown)
            return NULL;
        allocs = grown;
        cap_allocs = cap;
    }
    a = &allocs[n_allocs++];
    a->level = level;
    a->region = region;
    a->kept = persist_mode;
    a->base = base;
    a->raw = NULL;
    a->extent = 0;
    a->size = size;
    a->shadow = NULL;
    snprintf(a->label, sizeof a->label, "%s", label ? label : "?");
    account(level, size);
    track_alloc(a);
    return a;
}

static int fits(int level, long long size)
{
    return valid_level(level) && size >= 0 && live[level] + size <= cfg.capacity[level];
}

/* ---- the arena ----
 *
 * The chip's addresses are 32 bits wide: an unsigned int index that goes "negative", as in the
 * SDK's FIR kernels (In[i - NCoeffs + j + 1] with i unsigned), wraps around and addresses the
 * bytes just below the array. On the 64-bit host the same index is zero-extended and lands
 * 2^32 items (4, 8, 16 or 32 GiB for items of 1, 2, 4 or 8 bytes) above. So the simulator's
 * allocations live in one memfd-backed region (the arena) that is mapped again, the same bytes,
 * at +4, +8, +16 and +32 GiB inside one PROT_NONE reservation: a wrapped access reads and
 * writes what the chip would. The access checks fold such an alias back to the arena address
 * (fold_alias) before checking it. Each allocation also gets gaps as large as itself before and
 * after it: an address computed from one allocation's pointer, up to one allocation size
 * outside it, is never inside another allocation (the DMA checks then say so). The cores' stacks
 * are in it too. Without the arena (it could not be mapped, or is full) allocations are
 * malloc'ed as before; the static arrays of the generated code (registered regions) and the
 * host thread's stack are never in it. */
#ifndef AT_SIM_ASAN
#define AT_SIM_ARENA_SIZE ((size_t)2 << 30)
#define AT_SIM_WRAP ((uintptr_t)1 << 32)
#define AT_SIM_PAGE ((size_t)4096)
/* largest first: fold_alias takes the first window that holds the address */
static const uintptr_t alias_offsets[] = {8 * AT_SIM_WRAP, 4 * AT_SIM_WRAP, 2 * AT_SIM_WRAP, AT_SIM_WRAP};
#define AT_SIM_N_ALIASES ((int)(sizeof alias_offsets / sizeof alias_offsets[0]))
static char *arena;          /* NULL: not mapped (yet) */
static int arena_failed;
static uintptr_t arena_lo, arena_top; /* [arena_lo, arena_top): the reservation, aliases included */

static void arena_map(void)
{
    size_t span = 8 * AT_SIM_WRAP + AT_SIM_ARENA_SIZE;
    char *r;
    int i, ok, fd;
    arena_failed = 1; /* until everything is mapped */
    r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return;
    fd = memfd_create("at_sim_arena", MFD_CLOEXEC);
    ok = fd >= 0 && ftruncate(fd, (off_t)AT_SIM_ARENA_SIZE) == 0;
    ok = ok && mmap(r, AT_SIM_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == r;
    for (i = 0; ok && i < AT_SIM_N_ALIASES; i++)
        ok = mmap(r + alias_offsets[i], AT_SIM_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                  fd, 0) == r + alias_offsets[i];
    if (fd >= 0)
        close(fd); /* the mappings keep the memory: a process loading many libraries keeps no fd each */
    if (!ok) {
        munmap(r, span);
        return;
    }
    arena = r;
    arena_lo = (uintptr_t)r;
    arena_top = arena_lo + span;
    arena_failed = 0;
}

/* An address in one of the arena's alias windows -> the arena address of the same byte. */
static inline uintptr_t fold_alias(uintptr_t p)
{
    int i;
    if (p - arena_lo >= arena_top - arena_lo || p - arena_lo < AT_SIM_ARENA_SIZE)
        return p;
    for (i = 0; i < AT_SIM_N_ALIASES; i++)
        if (p - arena_lo - alias_offsets[i] < AT_SIM_ARENA_SIZE)
            return p - alias_offsets[i];
    return p;
}

static size_t arena_gap(long long size)
{
    size_t s = ((size_t)size + AT_SIM_PAGE - 1) & ~(AT_SIM_PAGE - 1);
    return s > AT_SIM_PAGE ? s : AT_SIM_PAGE;
}

/* The cores' stacks are at the arena's top (a stack array indexed by a wrapped index too), each
 * above a page that faults (in the arena mapping only: a stack overflow is a host fault, never a
 * write into the next core's stack). */
#define AT_SIM_STACK_GUARD ((size_t)64 * 1024) /* a frame's arrays may skip a smaller one */
#define AT_SIM_STACK_SLOT (AT_SIM_STACK_SIZE + AT_SIM_STACK_GUARD)
#define AT_SIM_ARENA_STACKS ((size_t)AT_SIM_MAX_CORES * AT_SIM_STACK_SLOT)

static char *arena_stack(int core)
{
    char *stack;
    if (!arena && !arena_failed)
        arena_map();
    if (!arena)
        return NULL;
    stack = arena + AT_SIM_ARENA_SIZE - (size_t)(core + 1) * AT_SIM_STACK_SLOT + AT_SIM_STACK_GUARD;
    mprotect(stack - AT_SIM_STACK_GUARD, AT_SIM_STACK_GUARD, PROT_NONE);
    return stack;
}

/* The lowest arena address where `need` bytes overlap no live allocation's extent (first fit;
 * a call has tens of allocations), or NULL. */
static char *arena_place(size_t need)
{
    uintptr_t c = arena_lo, end = arena_lo + AT_SIM_ARENA_SIZE - AT_SIM_ARENA_STACKS;
    int i, moved = 1;
    while (moved) {
        moved = 0;
        for (i = 0; i < n_allocs; i++) {
            uintptr_t lo = (uintptr_t)allocs[i].raw, hi = lo + allocs[i].extent;
            if (allocs[i].extent && c < hi && c + need > lo) {
                c = hi;
                moved = 1;
            }
        }
    }
    return c + need <= end ? (char *)c : NULL;
}

/* Freed arena pages go back to the system (the next allocation there is poisoned anyway). */
static void arena_release(const at_alloc_t *a)
{
    madvise(a->base, arena_gap(a->size), MADV_REMOVE);
}

/* An arena block for `size` bytes: *raw = start of its extent (gap, data, gap). */
static char *arena_alloc(long long size, char **raw, size_t *extent)
{
    size_t gap = arena_gap(size);
    if (!arena && !arena_failed)
        arena_map();
    if (!arena)
        return NULL;
    *extent = 3 * gap;
    *raw = arena_place(*extent);
    return *raw ? *raw + gap : NULL;
}
#else
static char *arena_stack(int core)
{
    (void)core;
    return NULL;
}
static inline uintptr_t fold_alias(uintptr_t p) { return p; }
static char *arena_alloc(long long size, char **raw, size_t *extent)
{
    (void)size;
    (void)raw;
    (void)extent;
    return NULL;
}
static void arena_release(const at_alloc_t *a) { (void)a; }
#endif

/* Past capacity -> NULL, as pmsis_l1_malloc would on the chip. Fresh memory is poisoned. */
void *at_sim_alloc(int level, long long size, const char *label)
{
    char *raw = NULL, *p;
    size_t extent = 0;
    at_alloc_t *a;
    if (!fits(level, size))
        return NULL;
    p = arena_alloc(size, &raw, &extent);
    if (!p) {
        extent = 0;
        raw = malloc((size > 0 ? (size_t)size : 1) + 2 * AT_SIM_GUARD);
        if (!raw)
            return NULL;
        p = raw + AT_SIM_GUARD;
    }
    memset(p, AT_SIM_POISON, (size_t)size);
    a = push_alloc(level, 0, p, size, label);
    if (!a) {
        if (!extent)
            free(raw);
        return NULL;
    }
    a->raw = raw;
    a->extent = extent;
    return p;
}

void *at_sim_alloc_at(int level, long long size, const char *what, const char *file, int line)
{
    char label[AT_SIM_LABEL_SIZE];
    snprintf(label, sizeof label, "%s@%s:%d", what, base_name(file), line);
    return at_sim_alloc(level, size, label);
}

static void drop_alloc(int index)
{
    at_alloc_t *a = &allocs[index];
    account(a->level, -a->size);
    forget_alloc(a);
    if (a->extent)
        arena_release(a);
    else if (!a->region)
        free(a->raw);
    allocs[index] = allocs[--n_allocs];
}

static int find_alloc_base(int level, const void *ptr)
{
    int i;
    for (i = 0; i < n_allocs; i++)
        if (allocs[i].level == level && allocs[i].base == ptr && !allocs[i].region)
            return i;
    return -1;
}

static void check_no_pending_inside(const at_alloc_t *a, const char *macro, const char *file,
                                    int line);

void at_sim_free_as(const char *macro, int level, void *ptr, long long size,
                    const char *file, int line)
{
    char name[48];
    int i = valid_level(level) ? find_alloc_base(level, ptr) : -1;
    if (macro)
        snprintf(name, sizeof name, "%s", macro);
    else
        snprintf(name, sizeof name, "AT_%s_FREE", level_name(level));
    if (i < 0)
        AT_SIM_FAULT("%s at %s:%d: %p is not a live %s allocation",
                     name, base_name(file), line, ptr, level_name(level));
    if (size != allocs[i].size)
        AT_SIM_FAULT("%s at %s:%d: '%s' was allocated with %lld bytes, freed with %lld",
                     name, base_name(file), line, allocs[i].label, allocs[i].size, size);
    check_no_pending_inside(&allocs[i], name, file, line);
    drop_alloc(i);
}

void at_sim_free(int level, void *ptr, long long size, const char *file, int line)
{
    at_sim_free_as(NULL, level, ptr, size, file, line);
}

void *at_sim_alloc_symbol(int level, long long size, const char *label)
{
    void *p = at_sim_alloc(level, size, label);
    if (!p)
        set_error("%s symbol '%s' needs %lld bytes but %s capacity is %lld bytes (%lld in use)",
                  level_name(level), label, size, level_name(level),
                  at_sim_level_capacity(level), at_sim_level_used(level));
    return p;
}

/* Static arrays (array symbol mode) occupy the level too, so they count towards capacity. */
int at_sim_register_region(int level, void *base, long long size, const char *label)
{
    if (!fits(level, size)) {
        set_error("%s array '%s' has %lld bytes but %s capacity is %lld bytes (%lld in use)",
                  level_name(level), label, size, level_name(level),
                  at_sim_level_capacity(level), at_sim_level_used(level));
        return -1;
    }
    memset(base, AT_SIM_POISON, (size_t)size);
    return push_alloc(level, 1, base, size, label) ? 0 : -1;
}

/* The allocation of `level` holding [lo, hi), or NULL. */
static const at_alloc_t *containing(int level, uintptr_t lo, uintptr_t hi)
{
    int i;
    for (i = 0; i < n_allocs; i++) {
        uintptr_t b = (uintptr_t)allocs[i].base;
        if (allocs[i].level == level && lo >= b && hi <= b + (uintptr_t)allocs[i].size && lo <= hi)
            return &allocs[i];
    }
    return NULL;
}

static long long distance(const at_alloc_t *a, uintptr_t p)
{
    uintptr_t b = (uintptr_t)a->base, e = b + (uintptr_t)a->size, d = p < b ? b - p : p > e ? p - e : 0;
    return d > (uintptr_t)LLONG_MAX ? LLONG_MAX : (long long)d;
}

/* The allocation an address is best described against: the one containing it (any level,
 * `level` first), else the nearest one of `level` within 1 MiB. */
static const at_alloc_t *anchor(int level, uintptr_t p)
{
    const at_alloc_t *best = containing(level, p, p);
    int i;
    for (i = AT_SIM_L1; !best && i <= AT_SIM_L3; i++)
        if (i != level)
            best = containing(i, p, p);
    if (best)
        return best;
    for (i = 0; i < n_allocs; i++)
        if (allocs[i].level == level && distance(&allocs[i], p) < (1 << 20)
            && (!best || distance(&allocs[i], p) < distance(best, p)))
            best = &allocs[i];
    return best;
}

/* "In+800" (offset against `a`), or a raw address when there is nothing to anchor to. */
static void describe_at(char *buf, size_t n, const at_alloc_t *a, uintptr_t p)
{
    if (a)
        snprintf(buf, n, "%s%+lld", a->label, (long long)(p - (uintptr_t)a->base));
    else
        snprintf(buf, n, "%p", (void *)p);
}

static void describe(char *buf, size_t n, int level, uintptr_t p)
{
    describe_at(buf, n, anchor(level, p), p);
}

/* Every allocation but the kept ones (all of them with `all`); drop_alloc moves the last entry
 * into the freed slot, so walking down never skips one. */
static void free_allocs(int all)
{
    int i;
    for (i = n_allocs - 1; i >= 0; i--)
        if (all || !allocs[i].kept)
            drop_alloc(i);
}

/* ------------------------------------------------------------------------------------------ */
/* DMA: the cluster engine (L2 <-> L1) and the uDMA engine (L3 <-> L2)                         */
/* ------------------------------------------------------------------------------------------ */

/* Both engines share the bookkeeping and the checks; what differs is in the transfer: which
 * levels its ext and loc sides live in, which engine clock it queues on, and which macros the
 * messages name (api: "AT_L2" or e.g. "AT_HYPERRAM_CL"; family: "AT_L2" or "AT_HYPERRAM"). */
typedef struct {
    int udma;                  /* 0: cluster DMA, 1: uDMA */
    int flash;                 /* uDMA from a flash device: ext is image + offset */
    int mram;                  /* flash transfer costed with the MRAM numbers */
    long long offset;          /* flash: the ext side's byte offset into the image */
    long long number;          /* 1-based, per call and engine: "transfer #N" / "uDMA transfer #N" */
    unsigned long long id;     /* unique for the process lifetime, stored in the event */
    void *evt;                 /* at_sim_event_t * or at_sim_udma_event_t * (per `udma`) */
    void *dev;                 /* uDMA: the device it was issued on */
    int dir;
    char *ext, *loc;
    long long size, stride, length, lines;
    unsigned char *snapshot;   /* source bytes at issue time, gathered contiguously */
    long long end;             /* cycle at which the data has landed */
    char api[40], family[40];
    char desc[640];            /* "transfer #N (L2->L1, ...) at file:line" */
} at_xfer_t;

static at_xfer_t *pending;
static int n_pending, cap_pending;
static long long transfer_number, udma_number;
static unsigned long long next_id = 1;

static int ext_level(const at_xfer_t *x) { return x->flash ? AT_SIM_FLASH : x->udma ? AT_SIM_L3 : AT_SIM_L2; }
static int loc_level(const at_xfer_t *x) { return x->udma ? AT_SIM_L2 : AT_SIM_L1; }

static const char *dir_name(const at_xfer_t *x)
{
    if (x->flash)
        return x->dir == 0 ? "flash->L2" : "L2->flash";
    if (x->udma)
        return x->dir == 0 ? "L3->L2" : "L2->L3";
    return x->dir == 0 ? "L2->L1" : "L1->L2";
}

static long long ceil_div(long long n, double d)
{
    double q = (double)n / d;
    long long c = (long long)q;
    return (double)c < q ? c + 1 : c;
}

/* Same formula as platforms.DmaEngine.transfer_cycles. */
static long long engine_cycles(long long setup, double bpc, long long per_line, long long size,
                               long long lines)
{
    if (size <= 0)
        return 0;
    return setup + ceil_div(size, bpc) + (lines > 1 ? per_line * lines : 0);
}

/* A transfer's duration with its engine's (or its flash device's) numbers. */
static long long xfer_cycles(const at_xfer_t *x)
{
    if (x->flash && x->mram)
        return engine_cycles(cfg.mram_setup, cfg.mram_bpc, cfg.mram_line, x->size, x->lines);
    if (x->flash)
        return engine_cycles(cfg.flash_setup, cfg.flash_bpc, cfg.flash_line, x->size, x->lines);
    if (x->udma)
        return engine_cycles(cfg.udma_setup, cfg.udma_bpc, cfg.udma_line, x->size, x->lines);
    return engine_cycles(cfg.dma_setup, cfg.dma_bpc, cfg.dma_line, x->size, x->lines);
}

/* Visit the ext-side lines of a transfer; loc side is contiguous. */
static void gather(unsigned char *dst, const at_xfer_t *x, int from_ext)
{
    long long i;
    if (!from_ext) {
        memcpy(dst, x->loc, (size_t)x->size);
        return;
    }
    for (i = 0; i < x->lines; i++)
        memcpy(dst + i * x->length, x->ext + i * x->stride, (size_t)x->length);
}

static void scatter(at_xfer_t *x, const unsigned char *src, int to_ext)
{
    long long i;
    if (!to_ext) {
        memcpy(x->loc, src, (size_t)x->size);
        return;
    }
    for (i = 0; i < x->lines; i++)
        memcpy(x->ext + i * x->stride, src + i * x->length, (size_t)x->length);
}

static void poison_destination(at_xfer_t *x)
{
    long long i;
    if (x->dir == 0) {
        memset(x->loc, AT_SIM_POISON, (size_t)x->size);
        return;
    }
    for (i = 0; i < x->lines; i++)
        memset(x->ext + i * x->stride, AT_SIM_POISON, (size_t)x->length);
}

/* First byte of `buf` that differs from `ref` (or from the poison when ref is NULL), or -1. */
static long long first_change(const unsigned char *buf, const unsigned char *ref, long long n)
{
    long long i;
    for (i = 0; i < n; i++)
        if (buf[i] != (ref ? ref[i] : AT_SIM_POISON))
            return i;
    return -1;
}

/* Address (ext or loc side) of byte k of the transfer in gathered order. */
static uintptr_t byte_address(const at_xfer_t *x, int ext_side, long long k)
{
    if (!ext_side)
        return (uintptr_t)(x->loc + k);
    return (uintptr_t)(x->ext + (k / x->length) * x->stride + k % x->length);
}

static const char *flash_name(const void *dev); /* with the flash devices */

static void describe_transfer(at_xfer_t *x, int is2d, const char *file, int line)
{
    char e[320], l[128], shape[96] = "";
    if (x->flash)
        snprintf(e, sizeof e, "'%s'+%lld", flash_name(x->dev), x->offset);
    else
        describe(e, sizeof e, ext_level(x), (uintptr_t)x->ext);
    describe(l, sizeof l, loc_level(x), (uintptr_t)x->loc);
    if (is2d)
        snprintf(shape, sizeof shape, ", 2D: %lld lines of %lld bytes every %lld",
                 x->lines, x->length, x->stride);
    snprintf(x->desc, sizeof x->desc, "%stransfer #%lld (%s, %lld bytes%s, ext %.200s, loc %s) at %s:%d",
             x->udma ? "uDMA " : "", x->number, dir_name(x), x->size, shape, e, l,
             base_name(file), line);
}

/* The ext-side byte range [lo, hi) touched by the transfer's lines. */
static void ext_span(const at_xfer_t *x, uintptr_t *lo, uintptr_t *hi)
{
    long long last = x->lines > 0 ? (x->lines - 1) * x->stride : 0;
    long long first = last < 0 ? last : 0;
    long long end = x->lines > 0 ? (last > 0 ? last : 0) + x->length : 0;
    *lo = (uintptr_t)x->ext + (uintptr_t)first;
    *hi = (uintptr_t)x->ext + (uintptr_t)end;
}

/* Why a range is where it is, when the level is the usual mistake. */
static const char *range_hint(const at_xfer_t *x, int level, const at_alloc_t *a)
{
    if (x->flash && a && level == loc_level(x) && a->level == AT_SIM_L3)
        return "; a flash copy lands in L2: to fill L3 RAM, stage through an L2 buffer (flash -> L2, "
               "then L2 -> L3 with AT_<RAM>_FC_COPY), as the original's Construct does";
    if (x->flash && a && level == loc_level(x) && a->level == AT_SIM_L1)
        return "; the uDMA reaches L2 only: copy flash -> L2, then L2 -> L1 with AT_L2_COPY";
    if (!a || level != ext_level(x) || a->level == level)
        return "";
    if (!x->udma && a->level == AT_SIM_L3)
        return "; L3 data must be staged through L2 with the uDMA";
    if (x->udma)
        return "; the uDMA's ext side must be in L3: AT_<DEV>_ALLOC memory or an argument homed in L3";
    return "";
}

/* Where a range that is not inside one allocation went: into another array (the address was
 * computed from one array's pointer, the transfer runs into the next), or past the end of the
 * array it starts from, where the arena leaves a gap as large as the array. */
static void range_provenance(char *buf, size_t n, const at_alloc_t *a, uintptr_t lo, uintptr_t hi)
{
    const at_alloc_t *last = containing(a->level, hi - 1, hi - 1);
    uintptr_t b = (uintptr_t)a->base, e = b + (uintptr_t)a->size;
    char at[128];
    buf[0] = '\0';
    if (hi <= lo)
        return;
    if (last && last != a) {
        describe_at(at, sizeof at, last, hi - 1);
        snprintf(buf, n, ": it starts %s '%s' and ends in '%s' (its last byte at %s): a transfer may not "
                 "cross from one array into another", lo >= b && lo < e ? "in" : "next to", a->label,
                 last->label, at);
    } else if (lo >= e) {
        snprintf(buf, n, ": it starts %lld bytes past the end of '%s': an address computed from '%s' must "
                 "stay inside it (a tile past the last one?)", (long long)(lo - e), a->label, a->label);
    }
}

static void range_fault(const at_xfer_t *x, int level, uintptr_t lo, uintptr_t hi)
{
    const at_alloc_t *a = anchor(level, lo);
    char l[128], h[128], what[320] = "", whence[400] = "";
    describe_at(l, sizeof l, a, lo);
    describe_at(h, sizeof h, a, hi);
    if (a) {
        snprintf(what, sizeof what, " ('%s' is a %lld-byte %s %s%s)", a->label, a->size,
                 level_name(a->level), a->region ? "array" : "allocation", range_hint(x, level, a));
        if (a->level == level)
            range_provenance(whence, sizeof whence, a, lo, hi);
    }
    AT_SIM_FAULT("%s: %s (%s) side [%s, %s) is not inside one live %s allocation%s%s",
                 x->desc, level_name(level), level == ext_level(x) ? "ext" : "loc", l, h,
                 level_name(level), what, whence);
}

static void check_ranges(const at_xfer_t *x)
{
    uintptr_t lo, hi;
    ext_span(x, &lo, &hi);
    if (!x->flash && !containing(ext_level(x), lo, hi)) /* a flash ext side is checked on its image */
        range_fault(x, ext_level(x), lo, hi);
    lo = (uintptr_t)x->loc;
    hi = lo + (uintptr_t)x->size;
    if (!containing(loc_level(x), lo, hi))
        range_fault(x, loc_level(x), lo, hi);
}

/* The pending transfer of engine `udma` issued on `evt` (whose id/magic are passed in). */
static at_xfer_t *find_pending(int udma, const void *evt, unsigned long long id, unsigned int magic)
{
    int i;
    if (!evt || magic != (udma ? AT_SIM_UDMA_MAGIC : AT_SIM_EVENT_MAGIC))
        return NULL;
    for (i = 0; i < n_pending; i++)
        if (pending[i].udma == udma && pending[i].id == id && pending[i].evt == evt)
            return &pending[i];
    return NULL;
}

static at_xfer_t *find_cluster(const at_sim_event_t *evt)
{
    return evt ? find_pending(0, evt, evt->id, evt->magic) : NULL;
}

static at_xfer_t *find_udma(const at_sim_udma_event_t *evt)
{
    return evt ? find_pending(1, evt, evt->id, evt->magic) : NULL;
}

static at_xfer_t *new_pending(void)
{
    if (n_pending == cap_pending) {
        int cap = cap_pending ? 2 * cap_pending : 16;
        at_xfer_t *grown = realloc(pending, (size_t)cap * sizeof *pending);
        if (!grown)
            AT_SIM_FAULT("out of host memory for DMA bookkeeping");
        pending = grown;
        cap_pending = cap;
    }
    memset(&pending[n_pending], 0, sizeof *pending);
    return &pending[n_pending++];
}

static void drop_pending(at_xfer_t *x)
{
    free(x->snapshot);
    *x = pending[--n_pending];
}

static void clear_pending(void)
{
    while (n_pending > 0)
        drop_pending(&pending[n_pending - 1]);
    checks_dma_changed();
}

/* Clock: program the command, then queue it on its channel (a FIFO: the uDMA's, or the cluster
 * DMA's for its direction on a duplex engine, else its one; all run concurrently with each other
 * and with the cores). Same rules as autotiler/schedule/cost.py's Clock. */
static long long schedule(const at_xfer_t *x)
{
    long long duration = xfer_cycles(x), start;
    long long *engine = x->udma ? &udma_free : &engine_free[cfg.dma_duplex ? x->dir : 0];
    now += cfg.dma_issue;
    start = now > *engine ? now : *engine;
    *engine = start + duration;
    if (x->udma)
        counters.dma_busy_udma += duration;
    else
        counters.dma_busy_cluster += duration;
    if (x->flash)
        counters.dma_busy_flash += duration;
    return *engine;
}

/* ---- opened L3 RAM devices ---- */

static struct {
    void *dev;
    char family[24];
    int kept;   /* opened while at_sim_persist(1) (a graph's L3 RAM): stays open across calls */
} devices[AT_SIM_MAX_DEVICES];
static int n_devices;

static int find_device(const void *dev)
{
    int i;
    for (i = 0; i < n_devices; i++)
        if (devices[i].dev == dev)
            return i;
    return -1;
}

void at_sim_device_open(void *dev, const char *family, const char *file, int line)
{
    int i = find_device(dev);
    if (!dev)
        AT_SIM_FAULT("AT_%s_OPEN at %s:%d: NULL device", family, base_name(file), line);
    if (i < 0) {
        if (n_devices == AT_SIM_MAX_DEVICES)
            AT_SIM_FAULT("AT_%s_OPEN at %s:%d: more than %d devices open", family,
                         base_name(file), line, AT_SIM_MAX_DEVICES);
        i = n_devices++;
        devices[i].dev = dev;
        devices[i].kept = 0;
    }
    devices[i].kept |= persist_mode;
    snprintf(devices[i].family, sizeof devices[i].family, "%s", family);
}

void at_sim_device_close(void *dev)
{
    int i = find_device(dev);
    if (i >= 0)
        devices[i] = devices[--n_devices];
}

/* Close the RAM devices opened during the call (all of them too when `all`: a session's end). */
static void close_devices(int all)
{
    int i = 0;
    while (i < n_devices) {
        if (all || !devices[i].kept)
            devices[i] = devices[--n_devices];
        else
            i++;
    }
}

/* ---- opened flash devices ---- */

typedef struct {
    void *dev;
    char family[24];       /* "HYPERFLASH_FS", or "HYPERFLASH" for a raw device (no file) */
    char name[256];        /* the file name as the code gave it */
    unsigned char *image;  /* the file's bytes (read-only), NULL for a raw device */
    long long size;
    int kept;              /* opened while at_sim_persist(1): stays open across calls */
    int mram;              /* EMRAMFLASH: costed with the MRAM numbers */
} at_flash_t;

static at_flash_t flashes[AT_SIM_MAX_DEVICES];
static int n_flashes;
static char flash_dir[4096];

static int find_flash(const void *dev)
{
    int i;
    for (i = 0; i < n_flashes; i++)
        if (flashes[i].dev == dev)
            return i;
    return -1;
}

static const char *flash_name(const void *dev)
{
    int i = find_flash(dev);
    return i < 0 ? "(flash device not open)" : flashes[i].image ? flashes[i].name : flashes[i].family;
}

static void drop_flash(int i)
{
    free(flashes[i].image);
    flashes[i] = flashes[--n_flashes];
}

static void close_flashes(int all)
{
    int i;
    for (i = n_flashes - 1; i >= 0; i--)
        if (all || !flashes[i].kept)
            drop_flash(i);
}

static const at_xfer_t *pending_on_flash(const void *dev)
{
    int i;
    for (i = 0; i < n_pending; i++)
        if (pending[i].flash && pending[i].dev == dev)
            return &pending[i];
    return NULL;
}

void at_sim_set_flash_dir(const char *dir)
{
    snprintf(flash_dir, sizeof flash_dir, "%s", dir ? dir : "");
}

/* The whole file into a fresh buffer; NULL with errno set (0 when the file is too large). */
static unsigned char *read_file(const char *path, long long *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        errno = e;
        return NULL;
    }
    buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
        int e = buf ? EIO : ENOMEM;
        free(buf);
        fclose(f);
        errno = e;
        return NULL;
    }
    fclose(f);
    *size = len;
    return buf;
}

void at_sim_flash_open(const char *family, void *dev, const char *filename, int *err,
                       const char *file, int line)
{
    char path[sizeof flash_dir + 512];
    unsigned char *image = NULL;
    long long size = 0;
    int i, raw = strstr(family, "_FS") == NULL;
    const at_xfer_t *busy;
    if (!dev)
        AT_SIM_FAULT("AT_%s_OPEN at %s:%d: NULL device", family, base_name(file), line);
    if (!err)
        AT_SIM_FAULT("AT_%s_OPEN at %s:%d: NULL error pointer", family, base_name(file), line);
    busy = pending_on_flash(dev);
    if (busy)
        AT_SIM_FAULT("AT_%s_OPEN at %s:%d re-opens the device while %s is still pending "
                     "(missing %s_WAIT)", family, base_name(file), line, busy->desc, busy->api);
    *err = 1;
    if (!raw) {
        if (!filename || !filename[0]) {
            set_error("AT_%s_OPEN at %s:%d: no file name (the flash image to open)",
                      family, base_name(file), line);
            return;
        }
        if (filename[0] == '/' || !flash_dir[0])
            snprintf(path, sizeof path, "%s", filename);
        else
            snprintf(path, sizeof path, "%s/%s", flash_dir, filename);
        image = read_file(path, &size);
        if (!image) {
            set_error("AT_%s_OPEN at %s:%d: cannot read the flash image '%s' (%s): %s",
                      family, base_name(file), line, filename, path, strerror(errno));
            return;
        }
        if (size > cfg.flash_size) {
            free(image);
            AT_SIM_FAULT("AT_%s_OPEN at %s:%d: the flash image '%s' has %lld bytes but the "
                         "platform's flash holds %lld (l3_flash_size)", family, base_name(file),
                         line, filename, size, cfg.flash_size);
        }
    }
    i = find_flash(dev);
    if (i >= 0) {
        free(flashes[i].image);
    } else {
        if (n_flashes == AT_SIM_MAX_DEVICES) {
            free(image);
            AT_SIM_FAULT("AT_%s_OPEN at %s:%d: more than %d flash devices open", family,
                         base_name(file), line, AT_SIM_MAX_DEVICES);
        }
        i = n_flashes++;
    }
    flashes[i].dev = dev;
    snprintf(flashes[i].family, sizeof flashes[i].family, "%s", family);
    snprintf(flashes[i].name, sizeof flashes[i].name, "%s", raw ? family : filename);
    flashes[i].image = image;
    flashes[i].size = size;
    flashes[i].mram = strncmp(family, "EMRAM", 5) == 0;
    flashes[i].kept = persist_mode;
    *err = 0;
}

void at_sim_flash_open_write(const char *family, void *dev, const char *file, int line)
{
    (void)dev;
    AT_SIM_FAULT("AT_%s_OPEN_WRITE at %s:%d: the simulated flash is read-only (writing a file "
                 "into flash, e.g. to dump tensors, is not supported)", family, base_name(file), line);
}

void at_sim_flash_close(const char *family, void *dev, const char *file, int line)
{
    int i = find_flash(dev);
    const at_xfer_t *busy = pending_on_flash(dev);
    if (busy)
        AT_SIM_FAULT("AT_%s_CLOSE at %s:%d closes the device while %s is still pending "
                     "(missing %s_WAIT)", family, base_name(file), line, busy->desc, busy->api);
    if (i >= 0)
        drop_flash(i);
}

void at_sim_flash_unsupported(const char *macro, const char *file, int line)
{
    AT_SIM_FAULT("%s at %s:%d: the original's runtime does not implement it (an empty macro, "
                 "'TODO not yet supported', in at_api_pmsis.h): on the chip it copies nothing. "
                 "Read flash through the file-system macros (AT_<DEV>FLASH_FS_*)",
                 macro, base_name(file), line);
}

/* The flash side of a transfer: an open file-system device, a read, inside the image. Sets the
 * ext pointer into the image. */
static void validate_flash(at_xfer_t *x)
{
    int i = find_flash(x->dev);
    long long last, lo, hi;
    if (x->dir == 1)
        AT_SIM_FAULT("%s: writes into flash (%s_LOC2EXT): the flash image is read-only", x->desc,
                     x->family);
    if (i < 0)
        AT_SIM_FAULT("%s: issued on a flash device that is not open (missing %s_OPEN)", x->desc,
                     x->family);
    if (!flashes[i].image)
        AT_SIM_FAULT("%s: AT_%s is a raw flash device, opened without a file: flash is read "
                     "through the file-system macros (AT_%s_FS_*)", x->desc, flashes[i].family,
                     flashes[i].family);
    last = x->lines > 0 ? (x->lines - 1) * x->stride : 0;
    lo = x->offset + (last < 0 ? last : 0);
    hi = x->offset + (last > 0 ? last : 0) + (x->lines > 0 ? x->length : 0);
    if (lo < 0 || hi > flashes[i].size)
        AT_SIM_FAULT("%s: reads flash bytes [%lld, %lld) but the flash image '%s' has %lld bytes",
                     x->desc, lo, hi, flashes[i].name, flashes[i].size);
    x->mram = flashes[i].mram;
    x->ext = (char *)flashes[i].image + x->offset;
}

/* ---- issue ---- */

static void validate_issue(at_xfer_t *x, int is2d, void *evt, const char *file, int line)
{
    at_xfer_t *old;
    describe_transfer(x, is2d, file, line);
    if (x->dir != 0 && x->dir != 1)
        AT_SIM_FAULT("%s: direction %d is neither %s_EXT2LOC (0) nor %s_LOC2EXT (1)",
                     x->desc, x->dir, x->family, x->family);
    if (!evt)
        AT_SIM_FAULT("%s: NULL event", x->desc);
    if (x->size < 0 || x->length <= 0)
        AT_SIM_FAULT("%s: invalid size %lld / line length %lld", x->desc, x->size, x->length);
    if (x->size % x->length != 0)
        AT_SIM_FAULT("%s: size %lld is not a multiple of the line length %lld",
                     x->desc, x->size, x->length);
    if (x->udma && !x->flash && find_device(x->dev) < 0)
        AT_SIM_FAULT("%s: issued on a device that is not open (missing %s_OPEN)", x->desc, x->family);
    if (x->flash)
        validate_flash(x);
    old = x->udma ? find_udma(evt) : find_cluster(evt);
    if (old)
        AT_SIM_FAULT("%s: issued on an event that still holds pending %s (missing %s_WAIT)",
                     x->desc, old->desc, x->api);
    check_ranges(x);
}

static void issue(at_xfer_t proto, int is2d, void *evt, const char *file, int line)
{
    at_xfer_t *x;
    proto.number = proto.udma ? ++udma_number : ++transfer_number;
    proto.lines = proto.length > 0 ? proto.size / proto.length : 0;
    validate_issue(&proto, is2d, evt, file, line);
    proto.snapshot = malloc(proto.size > 0 ? (size_t)proto.size : 1);
    if (!proto.snapshot)
        AT_SIM_FAULT("%s: out of host memory", proto.desc);
    gather(proto.snapshot, &proto, proto.dir == 0);
    poison_destination(&proto);
    proto.id = next_id++;
    proto.evt = evt;
    proto.end = schedule(&proto);
    x = new_pending();
    *x = proto;
    checks_dma_changed(); /* its destination is in flight: reads of it fault */
    if (x->udma) {
        ((at_sim_udma_event_t *)evt)->id = x->id;
        ((at_sim_udma_event_t *)evt)->magic = AT_SIM_UDMA_MAGIC;
    } else {
        ((at_sim_event_t *)evt)->id = x->id;
        ((at_sim_event_t *)evt)->magic = AT_SIM_EVENT_MAGIC;
    }
    counters.transfers += 1;
    if (x->flash)
        counters.flash_to_l2 += x->size;
    else if (x->udma)
        *(x->dir == 0 ? &counters.l3_to_l2 : &counters.l2_to_l3) += x->size;
    else
        *(x->dir == 0 ? &counters.l2_to_l1 : &counters.l1_to_l2) += x->size;
}

static at_xfer_t cluster_proto(void *ext, void *loc, long long size, long long stride,
                               long long length, int dir)
{
    at_xfer_t x;
    memset(&x, 0, sizeof x);
    x.ext = ext;
    x.loc = loc;
    x.size = size;
    x.dir = dir;
    x.stride = stride;
    x.length = length;
    snprintf(x.api, sizeof x.api, "AT_L2");
    snprintf(x.family, sizeof x.family, "AT_L2");
    return x;
}

void at_sim_copy(void *ext, void *loc, long long size, int dir, at_sim_event_t *evt,
                 const char *file, int line)
{
    /* a 1D transfer is one line */
    issue(cluster_proto(ext, loc, size, size, size > 0 ? size : 1, dir), 0, evt, file, line);
}

void at_sim_copy2d(void *ext, void *loc, long long size, long long stride, long long length,
                   int dir, at_sim_event_t *evt, const char *file, int line)
{
    issue(cluster_proto(ext, loc, size, stride, length, dir), 1, evt, file, line);
}

/* "AT_HYPERRAM_CL" -> api as given, family "AT_HYPERRAM". Without api, the names come from the
 * device's family when it is open, else stay generic ("AT_<DEV>_CL"). */
static void udma_names(at_xfer_t *x, const char *api, const void *dev)
{
    const char *cut;
    int i = find_device(dev);
    if (api)
        snprintf(x->api, sizeof x->api, "%s", api);
    else
        snprintf(x->api, sizeof x->api, "AT_%s_CL", i >= 0 ? devices[i].family : "<DEV>");
    snprintf(x->family, sizeof x->family, "%s", x->api);
    cut = strrchr(x->api, '_');
    if (cut && cut != x->api)
        x->family[cut - x->api] = '\0';
}

void at_sim_udma_copy_as(const char *api, void *dev, void *ext, void *loc, long long size,
                         long long stride, long long length, int dir, at_sim_udma_event_t *evt,
                         const char *file, int line)
{
    at_xfer_t x;
    /* stride = length = size is how the 1D macros call; like the cluster's 1D copy, it is one
     * line (also when empty) and is not described as 2D */
    int is1d = stride == size && length == size;
    memset(&x, 0, sizeof x);
    x.udma = 1;
    x.dev = dev;
    x.ext = ext;
    x.loc = loc;
    x.size = size;
    x.dir = dir;
    x.stride = stride;
    x.length = is1d && size <= 0 ? 1 : length;
    udma_names(&x, api, dev);
    issue(x, !is1d, evt, file, line);
}

void at_sim_udma_copy(void *dev, void *ext, void *loc, long long size, long long stride,
                      long long length, int dir, at_sim_udma_event_t *evt,
                      const char *file, int line)
{
    at_sim_udma_copy_as(NULL, dev, ext, loc, size, stride, length, dir, evt, file, line);
}

void at_sim_flash_copy(const char *api, void *dev, at_sim_flash_addr_t ext, void *loc,
                       long long size, long long stride, long long length, int dir,
                       at_sim_udma_event_t *evt, const char *file, int line)
{
    at_xfer_t x;
    int is1d = stride == size && length == size;
    memset(&x, 0, sizeof x);
    x.udma = 1;
    x.flash = 1;
    x.dev = dev;
    x.offset = (long long)ext;
    x.loc = loc;
    x.size = size;
    x.dir = dir;
    x.stride = stride;
    x.length = is1d && size <= 0 ? 1 : length;
    udma_names(&x, api, dev);
    issue(x, !is1d, evt, file, line);
}

/* ---- wait ---- */

/* Source unchanged since issue, destination untouched (still poison) since issue.
 * Returns nonzero with the message set. */
static int check_in_flight(at_xfer_t *x, unsigned char *scratch)
{
    long long k;
    char where[128];
    int src_level = x->dir == 0 ? ext_level(x) : loc_level(x);
    int dst_level = x->dir == 0 ? loc_level(x) : ext_level(x);
    gather(scratch, x, x->dir == 0);
    k = first_change(scratch, x->snapshot, x->size);
    if (k >= 0) {
        describe(where, sizeof where, src_level, byte_address(x, x->dir == 0, k));
        set_error("source of %s was modified while in flight (first changed byte at %s)",
                  x->desc, where);
        return 1;
    }
    gather(scratch, x, x->dir == 1);
    k = first_change(scratch, NULL, x->size);
    if (k >= 0) {
        describe(where, sizeof where, dst_level, byte_address(x, x->dir == 1, k));
        set_error("destination of %s was written while in flight (first written byte at %s)",
                  x->desc, where);
        return 1;
    }
    return 0;
}

/* Advance the clock to the transfer's end, check it and land its data. */
static void complete(at_xfer_t *x)
{
    unsigned char *scratch;
    int bad;
    now += cfg.wait;
    if (x->end > now) {
        counters.stall_cycles += x->end - now;
        now = x->end;
    }
    scratch = malloc(x->size > 0 ? (size_t)x->size : 1);
    if (!scratch)
        AT_SIM_FAULT("%s: out of host memory", x->desc);
    bad = check_in_flight(x, scratch);
    free(scratch);
    if (bad)
        fault_jump();
    scatter(x, x->snapshot, x->dir == 1);
    drop_pending(x);
    checks_dma_changed();
}

void at_sim_wait(at_sim_event_t *evt, const char *file, int line)
{
    at_xfer_t *x = find_cluster(evt);
    if (!x)
        AT_SIM_FAULT("AT_L2_WAIT at %s:%d on an event with no pending transfer "
                     "(never issued, already waited, or not an event)", base_name(file), line);
    complete(x);
    evt->magic = 0;
}

void at_sim_udma_wait_as(const char *api, void *dev, at_sim_udma_event_t *evt,
                         const char *file, int line)
{
    at_xfer_t *x = find_udma(evt), names;
    memset(&names, 0, sizeof names);
    udma_names(&names, api, dev);
    if (!x)
        AT_SIM_FAULT("%s_WAIT at %s:%d on an event with no pending uDMA transfer "
                     "(never issued, already waited, or not an event)", names.api, base_name(file), line);
    if (x->dev != dev)
        AT_SIM_FAULT("%s_WAIT at %s:%d waits on another device than the one %s was issued on",
                     names.api, base_name(file), line, x->desc);
    complete(x);
    evt->magic = 0;
}

void at_sim_udma_wait(void *dev, at_sim_udma_event_t *evt, const char *file, int line)
{
    at_sim_udma_wait_as(NULL, dev, evt, file, line);
}

/* A transfer into or out of memory being freed would hit freed memory when it lands. */
static void check_no_pending_inside(const at_alloc_t *a, const char *macro, const char *file,
                                    int line)
{
    int i;
    for (i = 0; i < n_pending; i++) {
        at_xfer_t *x = &pending[i];
        uintptr_t lo, hi, b = (uintptr_t)a->base, e = b + (uintptr_t)a->size;
        if (a->level == ext_level(x)) {
            ext_span(x, &lo, &hi);
        } else if (a->level == loc_level(x)) {
            lo = (uintptr_t)x->loc;
            hi = lo + (uintptr_t)x->size;
        } else {
            continue;
        }
        if (lo < e && hi > b)
            AT_SIM_FAULT("%s at %s:%d frees '%s' while %s is still pending",
                         macro, base_name(file), line, a->label, x->desc);
    }
}

/* Checked when the user kernel returns. */
int at_sim_finish(void)
{
    armed_env = NULL;
    checks_arm(0);
    if (n_pending > 0) {
        set_error("%s is still pending when the user kernel returned (missing %s_WAIT)",
                  pending[0].desc, pending[0].api);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Cores                                                                                       */
/* ------------------------------------------------------------------------------------------ */

enum { CORE_READY, CORE_BARRIER, CORE_DONE, CORE_FAULTED };

static ucontext_t main_ctx, core_ctx[AT_SIM_MAX_CORES];
static char *stacks[AT_SIM_MAX_CORES];
static int core_state[AT_SIM_MAX_CORES];
static int fork_n, in_fork, running_core = -1, current_core;
static void (*fork_fn)(void *);
static void *fork_arg;
#ifdef AT_SIM_ASAN
static const void *main_stack_bottom;
static size_t main_stack_size;
#endif

static int on_core_stack(void) { return running_core >= 0; }

int at_sim_core_id(void) { return in_fork ? current_core : 0; }

int at_sim_num_cores(void) { return cfg.cores; }

/* Main -> core i; returns when the core returns, waits at a barrier or faults. */
static void switch_to_core(int i)
{
#ifdef AT_SIM_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, stacks[i], AT_SIM_STACK_SIZE);
#endif
    running_core = current_core = i;
    checks_context(i);
    swapcontext(&main_ctx, &core_ctx[i]);
    running_core = -1;
    checks_context(-1);
#ifdef AT_SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

/* Core -> main. A finished core never resumes, so ASan is told its fiber is gone. */
static void switch_to_main(int i, int finished)
{
#ifdef AT_SIM_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(finished ? NULL : &fake, main_stack_bottom, main_stack_size);
#else
    (void)finished;
#endif
    swapcontext(&core_ctx[i], &main_ctx);
#ifdef AT_SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, &main_stack_bottom, &main_stack_size);
#endif
}

static void core_entry(int i)
{
#ifdef AT_SIM_ASAN
    __sanitizer_finish_switch_fiber(NULL, &main_stack_bottom, &main_stack_size);
#endif
    fork_fn(fork_arg);
    core_state[i] = CORE_DONE;
    switch_to_main(i, 1);
    abort(); /* never resumed */
}

static void fault_from_core(void)
{
    int i = running_core;
    core_state[i] = CORE_FAULTED;
    switch_to_main(i, 1);
    abort(); /* never resumed */
}

void at_sim_barrier(void)
{
    int i = running_core;
    if (!in_fork || i < 0)
        return; /* outside a fork a barrier has nobody to wait for */
    core_state[i] = CORE_BARRIER;
    switch_to_main(i, 0);
}

static void prepare_core(int i)
{
    if (!stacks[i])
        stacks[i] = arena_stack(i);
    if (!stacks[i]) {
        stacks[i] = malloc(AT_SIM_STACK_SIZE);
        if (!stacks[i])
            AT_SIM_FAULT("AT_FORK: out of host memory for core %d's stack", i);
    }
#ifdef AT_SIM_ASAN
    /* an abandoned core (fault, barrier mismatch) may have left poisoned redzones behind */
    __asan_unpoison_memory_region(stacks[i], AT_SIM_STACK_SIZE);
#endif
    getcontext(&core_ctx[i]);
    core_ctx[i].uc_stack.ss_sp = stacks[i];
    core_ctx[i].uc_stack.ss_size = AT_SIM_STACK_SIZE;
    core_ctx[i].uc_link = NULL;
    makecontext(&core_ctx[i], (void (*)(void))core_entry, 1, i);
    core_state[i] = CORE_READY;
}

static int count_state(int state)
{
    int i, n = 0;
    for (i = 0; i < fork_n; i++)
        n += core_state[i] == state;
    return n;
}

static void barrier_mismatch(int round, const char *file, int line)
{
    char waiting[256] = "", done[256] = "";
    int i;
    for (i = 0; i < fork_n; i++) {
        char *list = core_state[i] == CORE_BARRIER ? waiting : done;
        size_t len = strlen(list);
        snprintf(list + len, 256 - len, "%s%d", len ? "," : "", i);
    }
    set_error("barrier mismatch in AT_FORK at %s:%d: core(s) %s wait at barrier #%d while "
              "core(s) %s returned", base_name(file), line, waiting, round + 1, done);
}

/* Run every READY core in id order until each returns or reaches the barrier; release the
 * barrier when all reached it. Returns nonzero on a fault (message already set). */
static int run_cores(const char *file, int line)
{
    int round = 0, i;
    for (;;) {
        for (i = 0; i < fork_n; i++) {
            if (core_state[i] == CORE_READY)
                switch_to_core(i);
            if (core_state[i] == CORE_FAULTED)
                return 1;
        }
        if (count_state(CORE_DONE) == fork_n)
            return checks_epoch_end();
        if (count_state(CORE_BARRIER) != fork_n) {
            barrier_mismatch(round, file, line);
            return 1;
        }
        if (checks_epoch_end())
            return 1; /* a race between the cores since the last barrier */
        for (i = 0; i < fork_n; i++)
            core_state[i] = CORE_READY;
        round++;
    }
}

void at_sim_fork(int ncores, void (*fn)(void *), void *arg, const char *file, int line)
{
    int i, failed;
    if (in_fork)
        AT_SIM_FAULT("AT_FORK at %s:%d: nested fork inside a parallel kernel", base_name(file), line);
    if (ncores <= 0 || ncores > AT_SIM_MAX_CORES)
        AT_SIM_FAULT("AT_FORK at %s:%d: %d cores (1..%d supported)", base_name(file), line,
                     ncores, AT_SIM_MAX_CORES);
    now += cfg.fork;
    counters.fork_cycles += cfg.fork;
    for (i = 0; i < ncores; i++)
        prepare_core(i);
    fork_n = ncores;
    fork_fn = fn;
    fork_arg = arg;
    in_fork = 1;
    checks_fork_begin(file, line);
    failed = run_cores(file, line);
    in_fork = 0;
    current_core = 0;
    checks_fork_end();
    if (failed)
        fault_jump(); /* back on the main stack: safe to longjmp */
}

/* ------------------------------------------------------------------------------------------ */
/* Clock, configuration, call lifecycle                                                        */
/* ------------------------------------------------------------------------------------------ */

void at_sim_compute_at(long long cycles, const char *file, int line)
{
    /* a Cost= over run-time values can go negative where generation could not see it */
    if (cycles < 0)
        AT_SIM_FAULT("AT_SIM_COMPUTE at %s:%d: the basic kernel's Cost evaluates to %lld cycles (a Cost counts "
                     "the cycles of one call: make it 0 or more for every value the call is given)",
                     base_name(file), line, cycles);
    now += cycles;
    counters.compute_cycles += cycles;
}

void at_sim_compute(long long cycles) { at_sim_compute_at(cycles, "(unknown)", 0); }

/* Entering a user kernel costs the core cfg.kernel_call cycles (its code and the runtime's
 * fetched cold: Platform.kernel_call_cycles). The harness compiles the generated C with
 * -finstrument-functions, so gcc calls __cyg_profile_func_enter on entry of each of its functions;
 * the user kernels among them are the names the trampoline registers (the manifest's tilings:
 * not groups, graph functions or helpers), told apart by dladdr once per function. */
#define AT_SIM_MAX_ENTERED 256
static const char *const *user_kernels;
static int n_user_kernels;
static struct {
    void *fn;
    const char *kernel; /* its name if a user kernel, else NULL */
} entered[AT_SIM_MAX_ENTERED];
static int n_entered;

/* The user kernels (their C names) whose entry costs cfg.kernel_call: the trampoline's constructor
 * registers the manifest's (declared there, not in at_sim.h: no name of generated code's). */
void at_sim_set_user_kernels(const char *const *names, int count);
void at_sim_set_user_kernels(const char *const *names, int count)
{
    user_kernels = names;
    n_user_kernels = count;
    n_entered = 0;
}

/* The user kernel's name if fn is one, else NULL. */
static const char *user_kernel(void *fn)
{
    const char *name, *kernel = NULL;
    int i;
    for (i = 0; i < n_entered; i++)
        if (entered[i].fn == fn)
            return entered[i].kernel;
    name = function_name(fn);
    for (i = 0; name && i < n_user_kernels && !kernel; i++)
        kernel = strcmp(name, user_kernels[i]) == 0 ? user_kernels[i] : NULL;
    if (n_entered < AT_SIM_MAX_ENTERED) {
        entered[n_entered].fn = fn;
        entered[n_entered++].kernel = kernel;
    }
    return kernel;
}

static const char *user_now; /* the user kernel entered last (named by the host faults) */

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    const char *kernel = user_kernel(fn);
    (void)site;
    if (!kernel)
        return;
    user_now = kernel;
    now += cfg.kernel_call;
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

void at_sim_configure(int cores, long long l1_size, long long l2_size,
                      long long dma_setup_cycles, double dma_bytes_per_cycle,
                      long long dma_line_cycles, long long dma_issue_cycles,
                      long long wait_cycles, long long fork_cycles, int dma_duplex,
                      long long kernel_call_cycles)
{
    cfg.cores = cores;
    cfg.capacity[AT_SIM_L1] = l1_size;
    cfg.capacity[AT_SIM_L2] = l2_size;
    cfg.dma_setup = dma_setup_cycles;
    cfg.dma_bpc = dma_bytes_per_cycle > 0 ? dma_bytes_per_cycle : 1.0;
    cfg.dma_line = dma_line_cycles;
    cfg.dma_issue = dma_issue_cycles;
    cfg.wait = wait_cycles;
    cfg.fork = fork_cycles;
    cfg.dma_duplex = dma_duplex != 0;
    cfg.kernel_call = kernel_call_cycles;
}

void at_sim_configure_l3(long long l3_size, long long udma_setup_cycles,
                         double udma_bytes_per_cycle, long long udma_line_cycles)
{
    cfg.capacity[AT_SIM_L3] = l3_size;
    cfg.udma_setup = udma_setup_cycles;
    cfg.udma_bpc = udma_bytes_per_cycle > 0 ? udma_bytes_per_cycle : 1.0;
    cfg.udma_line = udma_line_cycles;
}

/* Also cleans up after a faulted call (allocations, transfers, devices, cores left behind). */
void at_sim_configure_flash(long long flash_size, long long flash_setup_cycles,
                            double flash_bytes_per_cycle, long long flash_line_cycles,
                            long long mram_setup_cycles, double mram_bytes_per_cycle,
                            long long mram_line_cycles)
{
    cfg.flash_size = flash_size;
    cfg.flash_setup = flash_setup_cycles;
    cfg.flash_bpc = flash_bytes_per_cycle > 0 ? flash_bytes_per_cycle : 1.0;
    cfg.flash_line = flash_line_cycles;
    cfg.mram_setup = mram_setup_cycles;
    cfg.mram_bpc = mram_bytes_per_cycle > 0 ? mram_bytes_per_cycle : 1.0;
    cfg.mram_line = mram_line_cycles;
}

void at_sim_begin_call(void)
{
    at_sim_end_call();
    memset(&counters, 0, sizeof counters);
    counters.peak_l1 = live[AT_SIM_L1]; /* a session's kept areas are in use from the start */
    counters.peak_l2 = live[AT_SIM_L2];
    counters.peak_l3 = live[AT_SIM_L3];
    now = engine_free[0] = engine_free[1] = udma_free = 0;
    transfer_number = udma_number = 0;
    n_node_figures = 0;
    node_open = -1;
    last_error[0] = '\0';
}

/* AT_YIELD: yield points left before the runner returns (0: it never does). */
static int yield_left;

void at_sim_yield_after(int n)
{
    yield_left = n > 0 ? n : 0;
}

int at_sim_yield(void)
{
    if (yield_left > 0 && --yield_left == 0)
        return 1;
    return 0;
}

void at_sim_end_call(void)
{
    yield_left = 0;
    clear_pending();
    free_allocs(0); /* drop_alloc keeps live[] exact: what remains is the session's */
    close_devices(0); /* a faulted call never reached the trampoline's closes */
    close_flashes(0);
    persist_mode = 0;
    armed_env = NULL;
    in_fork = 0;
    running_core = -1;
    current_core = 0;
    checks_arm(0);
}

void at_sim_persist(int on)
{
    persist_mode = on != 0;
}

/* What a session left behind, described into last_error; then everything is freed and closed. */
int at_sim_end_session(void)
{
    char *end = last_error, *stop = last_error + sizeof last_error;
    int i, left = 0;
    last_error[0] = '\0';
    for (i = 0; i < n_allocs; i++) {
        if (!allocs[i].kept)
            continue;
        if (end < stop)
            end += snprintf(end, (size_t)(stop - end), "%s%s allocation '%s' (%lld bytes) is still live",
                            left ? "; " : "", level_name(allocs[i].level), allocs[i].label,
                            allocs[i].size);
        left++;
    }
    for (i = 0; i < n_flashes; i++) {
        if (!flashes[i].kept)
            continue;
        if (end < stop)
            end += snprintf(end, (size_t)(stop - end), "%sflash device AT_%s ('%s') is still open",
                            left ? "; " : "", flashes[i].family, flashes[i].name);
        left++;
    }
    for (i = 0; i < n_devices; i++) {
        if (!devices[i].kept)
            continue;
        if (end < stop)
            end += snprintf(end, (size_t)(stop - end), "%sL3 RAM device AT_%s is still open",
                            left ? "; " : "", devices[i].family);
        left++;
    }
    clear_pending();
    persist_mode = 0;
    free_allocs(1);
    close_flashes(1);
    close_devices(1);
    live[AT_SIM_L1] = live[AT_SIM_L2] = live[AT_SIM_L3] = 0;
    return left;
}

void at_sim_get_counters(at_sim_counters_t *out)
{
    *out = counters;
    out->cycles = now;
}

long long at_sim_clock(void) { return now; }

/* Per-node figures: the counters at AT_SIM_NODE_BEGIN, and what each node added. */
static void node_diff(at_sim_counters_t *acc, const at_sim_counters_t *a, const at_sim_counters_t *b)
{
#define AT_SIM_NODE_ADD(f) acc->f += a->f - b->f
    AT_SIM_NODE_ADD(l3_to_l2); AT_SIM_NODE_ADD(l2_to_l1); AT_SIM_NODE_ADD(l1_to_l2);
    AT_SIM_NODE_ADD(l2_to_l3); AT_SIM_NODE_ADD(transfers); AT_SIM_NODE_ADD(cycles);
    AT_SIM_NODE_ADD(compute_cycles); AT_SIM_NODE_ADD(stall_cycles); AT_SIM_NODE_ADD(fork_cycles);
    AT_SIM_NODE_ADD(dma_busy_cluster); AT_SIM_NODE_ADD(dma_busy_udma); AT_SIM_NODE_ADD(flash_to_l2);
    AT_SIM_NODE_ADD(dma_busy_flash);
#undef AT_SIM_NODE_ADD
}

void at_sim_node_begin(int node)
{
    if (node < 0)
        AT_SIM_FAULT("AT_SIM_NODE_BEGIN(%d): a node index is never negative", node);
    if (node_open >= 0)
        AT_SIM_FAULT("AT_SIM_NODE_BEGIN(%d) while node %d has not ended (AT_SIM_NODE_END missing)", node,
                     node_open);
    at_sim_get_counters(&node_start);
    node_open = node;
}

void at_sim_node_end(int node)
{
    at_sim_counters_t end;
    if (node != node_open)
        AT_SIM_FAULT("AT_SIM_NODE_END(%d) without its AT_SIM_NODE_BEGIN (open node: %d)", node, node_open);
    if (node >= node_capacity) {
        int cap = node_capacity ? node_capacity : 16;
        at_sim_counters_t *grown;
        while (cap <= node)
            cap *= 2;
        grown = (at_sim_counters_t *)realloc(node_figures, (size_t)cap * sizeof *grown);
        if (!grown)
            AT_SIM_FAULT("AT_SIM_NODE_END(%d): out of host memory for the per-node figures", node);
        memset(grown + node_capacity, 0, (size_t)(cap - node_capacity) * sizeof *grown);
        node_figures = grown;
        node_capacity = cap;
    }
    if (node >= n_node_figures) {
        memset(node_figures + n_node_figures, 0, (size_t)(node + 1 - n_node_figures) * sizeof *node_figures);
        n_node_figures = node + 1;
    }
    at_sim_get_counters(&end);
    node_diff(&node_figures[node], &end, &node_start);
    node_open = -1;
}

int at_sim_node_count(void) { return n_node_figures; }

void at_sim_get_node_counters(int node, at_sim_counters_t *out)
{
    if (node < 0 || node >= n_node_figures)
        memset(out, 0, sizeof *out);
    else
        *out = node_figures[node];
}

/* ------------------------------------------------------------------------------------------ */
/* Access checks: races, writes outside memory, reads before a wait, in the basic kernels      */
/* ------------------------------------------------------------------------------------------ */

/* host_harness.build compiles the user's basic kernels (only those) with -fsanitize=thread but
 * links no ThreadSanitizer runtime: the calls the instrumentation inserts before every load and
 * store (__tsan_read4, __tsan_write2, ...) and at every function entry and exit land here.
 *
 * Writes: from the kernel call's start (at_sim_arm) to its end, a write by a basic kernel must
 * fall in a live L1/L2 allocation (registered static arrays included), on a stack (a core's or
 * the host thread's) or in the library's writable data (static variables); anything else, e.g.
 * the gap around every allocation, faults at the access, naming the kernel, the core and the
 * offset against the nearest allocation. An address in one of the arena's alias windows (a
 * wrapped 32-bit index, see "The arena") is checked as the arena byte it maps.
 *
 * Reads before a wait: while a DMA transfer is in flight, a read of its destination gets poison
 * here and stale data on the chip; it faults at the access.
 *
 * Races: inside AT_FORK the cores run one after another, so a missing barrier or overlapping
 * chunks give the right answer by luck. Time inside a fork is cut into epochs at the fork's
 * start, at every barrier release and at its end; every byte of an L1/L2 allocation, and of the
 * library's writable data (static variables), touched by a core has a shadow (allocated on the
 * first access) holding the epoch and core of its last writer and of its first reader. Two
 * accesses to one byte by two cores in one epoch, at least one a write, are a race: the first is
 * remembered (later ones of the same kind and cores in the same allocation widen its byte range)
 * and reported when the epoch ends. Since each core runs its whole segment of an epoch before
 * the next core starts, "last writer" and "first reader" are enough to see every conflicting
 * pair. Code outside a fork (core 0) never races.
 *
 * Host faults: a wild access the checks let through (a read, or memory the arena does not
 * alias) or a division by zero raises a signal; during a kernel call a handler turns it into a
 * fault of the call naming the basic kernel and the address (see "Host faults"). */

enum { CHECK_OFF, CHECK_WRITES, CHECK_RACES };
enum { RACE_WW, RACE_WR, RACE_RW };

#define AT_SIM_MAX_DEPTH 32
#define AT_SIM_MAX_SEGMENTS 8
#define AT_SIM_REGION_GUARD 1024

static int check_mode;
/* Reads are checked inside a fork (races) and while a DMA transfer is in flight. */
static int reads_checked;
static uint32_t epoch = 1, tag = 1u << 8; /* tag: epoch << 8 | accessing core */
/* Two byte ranges the last checked accesses fell in: each inside one L1/L2 allocation and clear
 * of in-flight DMA destinations (when racing, with its shadow), so most accesses cost a compare. */
static struct {
    uintptr_t lo, len;
    at_shadow_t *shadow;
} hot[2];
static uintptr_t stack_lo, stack_hi; /* the running context's stack */
static uintptr_t span_lo = UINTPTR_MAX, span_hi; /* every allocation made so far lies inside */
static uintptr_t host_lo, host_hi;
static pthread_t host_thread;
static int host_known;
static struct {
    uintptr_t lo, hi;
    at_shadow_t *shadow; /* race shadow of the static variables, allocated on the first access */
} data_seg[AT_SIM_MAX_SEGMENTS];
static int n_data_seg = -1;
static uintptr_t own_base; /* where this library is loaded (its ELF symbols are relative to it) */
static const char *fork_file;
static int fork_line;
/* Per core (and one for the host context): return addresses into the instrumented functions
 * entered and not yet left, innermost last. */
static void *fn_pc[AT_SIM_MAX_CORES + 1][AT_SIM_MAX_DEPTH];
static int fn_depth[AT_SIM_MAX_CORES + 1];
static int fn_slot = AT_SIM_MAX_CORES;

static struct {
    int active, kind, first, second, level; /* level -1: a static variable */
    char label[AT_SIM_LABEL_SIZE];
    uintptr_t base, lo, hi;
    long long size, more;
    void *pcs[AT_SIM_MAX_DEPTH + 1];
    int n_pcs;
} race;

static void forget_hot(void) { hot[0].len = hot[1].len = 0; }

static void track_alloc(const at_alloc_t *a)
{
    uintptr_t b = (uintptr_t)a->base, e = b + (uintptr_t)a->size;
    span_lo = b < span_lo ? b : span_lo;
    span_hi = e > span_hi ? e : span_hi;
}

static void forget_alloc(at_alloc_t *a)
{
    free(a->shadow);
    a->shadow = NULL;
    forget_hot();
}

static void update_reads(void)
{
    reads_checked = check_mode == CHECK_RACES || (check_mode != CHECK_OFF && n_pending > 0);
}

/* A transfer was issued or landed: the hot ranges may now hold (or may now leave out) an
 * in-flight destination. */
static void checks_dma_changed(void)
{
    forget_hot();
    update_reads();
}

static void clear_shadows(void)
{
    int i;
    for (i = 0; i < n_allocs; i++)
        if (allocs[i].shadow)
            memset(allocs[i].shadow, 0, (size_t)allocs[i].size * sizeof *allocs[i].shadow);
    for (i = 0; i < n_data_seg; i++)
        if (data_seg[i].shadow)
            memset(data_seg[i].shadow, 0, (data_seg[i].hi - data_seg[i].lo) * sizeof *data_seg[i].shadow);
}

static void next_epoch(void)
{
    if (++epoch >= (1u << 24)) { /* tags hold 24 bits of epoch */
        clear_shadows();
        epoch = 1;
    }
    tag = epoch << 8 | (uint32_t)(in_fork ? current_core : 0);
}

/* The running context: core i, or the host's (-1). */
static void checks_context(int i)
{
    if (i >= 0) {
        stack_lo = (uintptr_t)stacks[i];
        stack_hi = stack_lo + AT_SIM_STACK_SIZE;
        fn_slot = i;
    } else {
        stack_lo = host_lo;
        stack_hi = host_hi;
        fn_slot = AT_SIM_MAX_CORES;
    }
    tag = epoch << 8 | (uint32_t)(i >= 0 ? i : 0);
}

static int data_segments_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t me = (uintptr_t)&cfg;
    int i, mine = 0;
    (void)size;
    (void)arg;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
            mine = 1;
    }
    if (!mine)
        return 0;
    own_base = info->dlpi_addr;
    for (i = 0; i < info->dlpi_phnum && n_data_seg < AT_SIM_MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            data_seg[n_data_seg].lo = info->dlpi_addr + ph->p_vaddr;
            data_seg[n_data_seg].hi = data_seg[n_data_seg].lo + ph->p_memsz;
            data_seg[n_data_seg].shadow = NULL;
            n_data_seg++;
        }
    }
    return 1;
}

static void signals_arm(int on); /* "Host faults" */

/* Armed for a kernel call (or disarmed with NULL): find the host thread's stack and the
 * library's writable data once. */
static void checks_arm(int on)
{
    check_mode = on ? CHECK_WRITES : CHECK_OFF;
    if (on && (!host_known || !pthread_equal(host_thread, pthread_self()))) {
        pthread_attr_t attr;
        void *addr = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &addr, &size);
            pthread_attr_destroy(&attr);
        }
        host_lo = (uintptr_t)addr;
        host_hi = host_lo + size;
        host_thread = pthread_self();
        host_known = 1;
    }
    if (on && n_data_seg < 0) {
        n_data_seg = 0;
        dl_iterate_phdr(data_segments_cb, NULL);
    }
    fn_depth[AT_SIM_MAX_CORES] = 0;
    race.active = 0;
    user_now = NULL;
    forget_hot();
    update_reads();
    checks_context(-1);
    signals_arm(on);
}

static void checks_fork_begin(const char *file, int line)
{
    int i;
    fork_file = file;
    fork_line = line;
    for (i = 0; i < fork_n; i++)
        fn_depth[i] = 0;
    race.active = 0;
    forget_hot(); /* racing needs the shadow, which the cached ranges may lack */
    if (check_mode != CHECK_OFF)
        check_mode = CHECK_RACES;
    update_reads();
    next_epoch();
}

static void checks_fork_end(void)
{
    if (check_mode != CHECK_OFF)
        check_mode = CHECK_WRITES;
    update_reads();
    next_epoch();
    checks_context(-1);
}

static const char *function_name(const void *pc)
{
    Dl_info info;
    if (pc && dladdr(pc, &info) && info.dli_sname)
        return info.dli_sname;
    return NULL;
}

/* The innermost function of this library (not libc's memcpy, say) among `pcs`: the faulting
 * instruction, then the running context's instrumented frames. */
static const char *kernel_name(void *const *pcs, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        Dl_info info;
        if (pcs[i] && dladdr(pcs[i], &info) && info.dli_sname && (uintptr_t)info.dli_fbase == own_base)
            return info.dli_sname;
    }
    return NULL;
}

static int stack_pcs(void **out, void *pc)
{
    int n = 0, d = fn_depth[fn_slot];
    out[n++] = pc;
    if (d > AT_SIM_MAX_DEPTH)
        d = AT_SIM_MAX_DEPTH;
    while (d > 0)
        out[n++] = fn_pc[fn_slot][--d];
    return n;
}

static const char *running_kernel(void *pc)
{
    void *pcs[AT_SIM_MAX_DEPTH + 1];
    return kernel_name(pcs, stack_pcs(pcs, pc));
}

static at_alloc_t *alloc_holding(uintptr_t p)
{
    int i;
    if (p < span_lo || p >= span_hi)
        return NULL;
    for (i = 0; i < n_allocs; i++) {
        uintptr_t b = (uintptr_t)allocs[i].base;
        if (p >= b && p - b < (uintptr_t)allocs[i].size)
            return &allocs[i];
    }
    return NULL;
}

static int data_segment(uintptr_t p)
{
    int i;
    for (i = 0; i < n_data_seg; i++)
        if (p >= data_seg[i].lo && p < data_seg[i].hi)
            return i;
    return -1;
}

static int in_data(uintptr_t p) { return data_segment(p) >= 0; }

/* The static variable holding p, from the library's own symbol table (.symtab: file-scope
 * statics are not in the dynamic symbols dladdr reads). Read from the file at report time only.
 * Returns 0 when the library has no such symbol (stripped, or padding between variables). */
static int static_symbol(uintptr_t p, char *name, size_t n, uintptr_t *start, uintptr_t *size)
{
    Dl_info info;
    long long len = 0;
    unsigned char *buf;
    const ElfW(Ehdr) *eh;
    int found = 0, i;
    if (!dladdr((void *)&cfg, &info) || !info.dli_fname || !(buf = read_file(info.dli_fname, &len)))
        return 0;
    eh = (const ElfW(Ehdr) *)buf;
    if (len < (long long)sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
        || eh->e_shoff + (unsigned long long)eh->e_shnum * sizeof(ElfW(Shdr)) > (unsigned long long)len) {
        free(buf);
        return 0;
    }
    for (i = 0; i < eh->e_shnum && !found; i++) {
        const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(buf + eh->e_shoff) + i, *str;
        unsigned long long k, count;
        if (sh->sh_type != SHT_SYMTAB || sh->sh_link >= eh->e_shnum || sh->sh_offset + sh->sh_size > (unsigned long long)len)
            continue;
        str = (const ElfW(Shdr) *)(buf + eh->e_shoff) + sh->sh_link;
        count = sh->sh_size / sizeof(ElfW(Sym));
        for (k = 0; k < count && !found; k++) {
            const ElfW(Sym) *sym = (const ElfW(Sym) *)(buf + sh->sh_offset) + k;
            uintptr_t at = own_base + sym->st_value;
            if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT || p < at || p - at >= sym->st_size
                || str->sh_offset + sym->st_name >= (unsigned long long)len)
                continue;
            snprintf(name, n, "%.*s", (int)(n - 1), (const char *)buf + str->sh_offset + sym->st_name);
            *start = at;
            *size = sym->st_size;
            found = 1;
        }
    }
    free(buf);
    return found;
}

/* The race's byte range is described against the allocation holding p, or the static variable. */
static void race_place(uintptr_t p)
{
    at_alloc_t *a = alloc_holding(p);
    uintptr_t start = p, size = 1;
    char name[AT_SIM_LABEL_SIZE - 16];
    if (a) {
        race.level = a->level;
        snprintf(race.label, sizeof race.label, "%s", a->label);
        race.base = (uintptr_t)a->base;
        race.size = a->size;
        return;
    }
    race.level = -1;
    if (static_symbol(p, name, sizeof name, &start, &size))
        snprintf(race.label, sizeof race.label, "static '%s'", name);
    else
        snprintf(race.label, sizeof race.label, "static data at %p", (void *)p);
    race.base = start;
    race.size = (long long)size;
}

static void race_conflict(int kind, int other, uintptr_t p, void *pc)
{
    int core = (int)(tag & 255);
    if (race.active) {
        if (race.kind == kind && race.first == other && race.second == core && p >= race.base
            && p - race.base < (uintptr_t)race.size) {
            race.lo = p < race.lo ? p : race.lo;
            race.hi = p + 1 > race.hi ? p + 1 : race.hi;
        } else {
            race.more++;
        }
        return;
    }
    race.active = 1;
    race.kind = kind;
    race.first = other;
    race.second = core;
    race_place(p);
    race.lo = p;
    race.hi = p + 1;
    race.more = 0;
    race.n_pcs = stack_pcs(race.pcs, pc);
}

static void race_access(at_shadow_t *s, uintptr_t p, uintptr_t n, int write, void *pc)
{
    uint32_t me = tag;
    uintptr_t k;
    for (k = 0; k < n; k++) {
        at_shadow_t *b = &s[k];
        /* (x ^ me) < 256: same epoch; != me: another core */
        if ((b->w ^ me) < 256 && b->w != me)
            race_conflict(write ? RACE_WW : RACE_WR, (int)(b->w & 255), p + k, pc);
        else if (write && (b->r ^ me) < 256 && b->r != me)
            race_conflict(RACE_RW, (int)(b->r & 255), p + k, pc);
        if (write)
            b->w = me;
        else if ((b->r ^ me) >= 256)
            b->r = me;
    }
}

/* Reported when the epoch of the race ends (barrier release or end of the fork). */
static int checks_epoch_end(void)
{
    char range[160], entry_part[160] = "", more[96] = "", level[16] = "";
    const char *name, *entry;
    if (!race.active) {
        next_epoch();
        return 0;
    }
    name = kernel_name(race.pcs, race.n_pcs);
    entry = function_name((const void *)fork_fn);
    if (race.level >= 0)
        snprintf(level, sizeof level, " (%s)", level_name(race.level));
    snprintf(range, sizeof range, "%s+[%lld, %lld)%s", race.label,
             (long long)(race.lo - race.base), (long long)(race.hi - race.base), level);
    if (entry && (!name || strcmp(entry, name) != 0))
        snprintf(entry_part, sizeof entry_part, " of '%s'", entry);
    if (race.more)
        snprintf(more, sizeof more, "; and %lld more conflicting byte access(es) (other cores, "
                 "kinds or allocations)", race.more);
    if (race.kind == RACE_WW)
        set_error("data race in basic kernel '%s' (AT_FORK%s at %s:%d): cores %d and %d both write %s "
                  "with no barrier in between (write/write: which value remains depends on timing)%s",
                  name ? name : "?", entry_part, base_name(fork_file), fork_line, race.first,
                  race.second, range, more);
    else
        set_error("data race in basic kernel '%s' (AT_FORK%s at %s:%d): core %d %s %s and core %d %s "
                  "it with no barrier in between (%s: on the chip the %s may come first)%s",
                  name ? name : "?", entry_part, base_name(fork_file), fork_line, race.first,
                  race.kind == RACE_WR ? "writes" : "reads", range, race.second,
                  race.kind == RACE_WR ? "reads" : "writes",
                  race.kind == RACE_WR ? "write-then-read" : "read-then-write",
                  race.kind == RACE_WR ? "read" : "write", more);
    race.active = 0;
    return 1;
}

static int on_any_stack(uintptr_t p)
{
    int i;
    if (p >= host_lo && p < host_hi)
        return 1;
    for (i = 0; i < AT_SIM_MAX_CORES; i++)
        if (stacks[i] && p >= (uintptr_t)stacks[i] && p - (uintptr_t)stacks[i] < AT_SIM_STACK_SIZE)
            return 1;
    return 0;
}

/* The allocation within 1 MiB of [p, p + n) nearest to it, or NULL. */
static const at_alloc_t *nearest_alloc(uintptr_t p, uintptr_t n, int regions_only)
{
    const at_alloc_t *best = NULL;
    long long best_d = 1 << 20;
    int i;
    for (i = 0; i < n_allocs; i++) {
        long long d1 = distance(&allocs[i], p), d2 = distance(&allocs[i], p + n - 1);
        long long d = d1 < d2 ? d1 : d2;
        if ((!regions_only || allocs[i].region) && d < best_d) {
            best = &allocs[i];
            best_d = d;
        }
    }
    return best;
}

static void describe_wild(char *buf, size_t n, uintptr_t addr); /* "Host faults" */

static void write_fault(uintptr_t p, uintptr_t n, const at_alloc_t *a, void *pc)
{
    const char *name = running_kernel(pc);
    char at[128], what[900];
    int core = in_fork ? current_core : 0;
    uintptr_t b = a ? (uintptr_t)a->base : 0, e = b + (a ? (uintptr_t)a->size : 0);
    describe_at(at, sizeof at, a, p);
    if (!a)
        describe_wild(what, sizeof what, p);
    else if (a->level == AT_SIM_L3 && p >= b && p + n <= e)
        snprintf(what, sizeof what, "inside '%s' (%lld bytes in L3): the cores cannot address L3, "
                 "stage it through L2 with the uDMA", a->label, a->size);
    else if (p >= e)
        snprintf(what, sizeof what, "%lld bytes past the end of %s (%lld bytes in %s)",
                 (long long)(p - e), a->label, a->size, level_name(a->level));
    else if (p + n > e)
        snprintf(what, sizeof what, "%lld of them past the end of %s (%lld bytes in %s)",
                 (long long)(p + n - e), a->label, a->size, level_name(a->level));
    else
        snprintf(what, sizeof what, "%lld bytes before the start of %s (%lld bytes in %s)",
                 (long long)(b - p), a->label, a->size, level_name(a->level));
    AT_SIM_FAULT("basic kernel '%s' on core %d writes %lld bytes at %s, %s", name ? name : "?", core,
                 (long long)n, at, what);
}

/* ---- reads before a wait ---- */

/* The destination of a transfer: its byte span, and 2D (lines of `length` every `stride`). */
static void destination(const at_xfer_t *x, uintptr_t *lo, uintptr_t *hi, int *lined)
{
    *lined = 0;
    if (x->dir == 0) {
        *lo = (uintptr_t)x->loc;
        *hi = *lo + (uintptr_t)x->size;
        return;
    }
    ext_span(x, lo, hi);
    *lined = x->lines > 1 && x->stride > x->length;
}

/* Whether [p, p + n) touches a line of a 2D destination (stride > length > 0). */
static int hits_line(const at_xfer_t *x, uintptr_t p, uintptr_t n)
{
    uintptr_t ext = (uintptr_t)x->ext, s = (uintptr_t)x->stride;
    uintptr_t first = p > ext + (uintptr_t)x->length ? (p - ext - (uintptr_t)x->length) / s : 0;
    uintptr_t k;
    for (k = first; k < (uintptr_t)x->lines && ext + k * s < p + n; k++)
        if (ext + k * s + (uintptr_t)x->length > p)
            return 1;
    return 0;
}

static void read_before_wait(const at_alloc_t *a, const at_xfer_t *x, uintptr_t lo, uintptr_t hi, void *pc)
{
    const char *name = running_kernel(pc);
    uintptr_t b = (uintptr_t)a->base;
    AT_SIM_FAULT("basic kernel '%s' on core %d reads %s+[%lld, %lld) before the wait of %s (missing "
                 "%s_WAIT before the basic kernel runs): it reads 0x%02X poison on the simulator, stale data "
                 "on the chip", name ? name : "?", in_fork ? current_core : 0, a->label, (long long)(lo - b),
                 (long long)(hi - b), x->desc, x->api, AT_SIM_POISON);
}

/* Narrow [*lo, *hi) (around [p, p + n), inside `a`) to leave out every in-flight destination;
 * a read of one faults. Returns 0 when the access touches one (a write: the wait checks it) or
 * falls between the lines of a 2D one: no range to cache then. */
static int clear_of_transfers(const at_alloc_t *a, uintptr_t p, uintptr_t n, int write, void *pc,
                              uintptr_t *lo, uintptr_t *hi)
{
    int i, lined;
    for (i = 0; i < n_pending; i++) {
        const at_xfer_t *x = &pending[i];
        uintptr_t dlo, dhi;
        if (x->flash && x->dir == 1)
            continue;
        destination(x, &dlo, &dhi, &lined);
        if (dhi <= *lo || dlo >= *hi)
            continue; /* another allocation, or outside the range already */
        if (dhi <= p) {
            *lo = dhi;
        } else if (dlo >= p + n) {
            *hi = dlo;
        } else {
            if (!write && (!lined || hits_line(x, p, n)))
                read_before_wait(a, x, p > dlo ? p : dlo, p + n < dhi ? p + n : dhi, pc);
            return 0;
        }
    }
    return 1;
}

/* ---- races on static variables ---- */

static void static_access(uintptr_t p, uintptr_t n, int write, void *pc)
{
    int i = data_segment(p);
    uintptr_t size;
    if (i < 0)
        return;
    size = data_seg[i].hi - data_seg[i].lo;
    if (!data_seg[i].shadow) {
        data_seg[i].shadow = calloc((size_t)size, sizeof *data_seg[i].shadow);
        if (!data_seg[i].shadow)
            AT_SIM_FAULT("out of host memory for the race shadow of the static variables (%lld bytes)",
                         (long long)size);
    }
    if (n > data_seg[i].hi - p)
        n = data_seg[i].hi - p;
    race_access(data_seg[i].shadow + (p - data_seg[i].lo), p, n, write, pc);
}

/* ---- the checks ---- */

static void check_in_alloc(at_alloc_t *a, uintptr_t p, uintptr_t n, int write, void *pc)
{
    uintptr_t b = (uintptr_t)a->base, lo = b, hi = b + (uintptr_t)a->size;
    int cache = 1;
    if (check_mode == CHECK_RACES && !a->shadow && a->size > 0) {
        a->shadow = calloc((size_t)a->size, sizeof *a->shadow);
        if (!a->shadow)
            AT_SIM_FAULT("out of host memory for the race shadow of '%s' (%lld bytes)", a->label, a->size);
    }
    if (n_pending > 0)
        cache = clear_of_transfers(a, p, n, write, pc, &lo, &hi);
    if (cache) {
        hot[1] = hot[0];
        hot[0].lo = lo;
        hot[0].len = hi - lo;
        hot[0].shadow = a->shadow ? a->shadow + (lo - b) : NULL;
    }
    if (check_mode == CHECK_RACES)
        race_access(a->shadow + (p - b), p, n, write, pc);
}

static void check_slow(uintptr_t p, uintptr_t n, int write, void *pc)
{
    at_alloc_t *a;
    p = fold_alias(p); /* a wrapped 32-bit index: the arena byte it maps */
    a = alloc_holding(p);
    if (a && a->level != AT_SIM_L3 && n <= (uintptr_t)a->size - (p - (uintptr_t)a->base)) {
        check_in_alloc(a, p, n, write, pc);
        return;
    }
    if (!write) {
        if (check_mode == CHECK_RACES && !a)
            static_access(p, n, 0, pc); /* other reads outside the allocations are not checked */
        return;
    }
    if (a || (a = alloc_holding(p + n - 1)) != NULL)
        write_fault(p, n, a, pc); /* straddles an end, or inside L3 */
    if (on_any_stack(p))
        return;
    if (in_data(p)) {
        /* A static array registered as L1/L2 has no guard zone of its own, but the builder links
         * the simulator right after the generated code, so what follows it is the simulator's
         * own state (or generated code's): a write just past it that lands in no exported
         * variable is taken for an overrun. */
        const at_alloc_t *r = nearest_alloc(p, n, 1);
        Dl_info info;
        if (r && p >= (uintptr_t)r->base + (uintptr_t)r->size && distance(r, p) < AT_SIM_REGION_GUARD
            && !(dladdr((void *)p, &info) && info.dli_sname))
            write_fault(p, n, r, pc);
        if (check_mode == CHECK_RACES)
            static_access(p, n, 1, pc);
        return;
    }
    write_fault(p, n, nearest_alloc(p, n, 0), pc);
}

static inline __attribute__((always_inline)) void check_access(const void *addr, uintptr_t n,
                                                                 int write, void *pc)
{
    uintptr_t p = (uintptr_t)addr, off;
    if (write ? check_mode == CHECK_OFF : !reads_checked)
        return;
    off = p - hot[0].lo;
    if (off < hot[0].len && n <= hot[0].len - off) {
        if (check_mode == CHECK_RACES)
            race_access(hot[0].shadow + off, p, n, write, pc);
        return;
    }
    off = p - hot[1].lo;
    if (off < hot[1].len && n <= hot[1].len - off) {
        if (check_mode == CHECK_RACES)
            race_access(hot[1].shadow + off, p, n, write, pc);
        return;
    }
    if (p - stack_lo < stack_hi - stack_lo)
        return;
    check_slow(p, n, write, pc);
}

/* What `addr` is: near an allocation, or an allocation's address plus 2^32 items of 1, 2, 4 or
 * 8 bytes (a wrapped 32-bit index) in memory the arena does not alias. */
static void describe_wild(char *buf, size_t n, uintptr_t addr)
{
    static const int items[] = {1, 2, 4, 8};
    const at_alloc_t *a = nearest_alloc(addr, 1, 0);
    char at[128];
    int i;
    if (a) {
        describe_at(at, sizeof at, a, addr);
        snprintf(buf, n, "%s, outside '%s' (%lld bytes in %s)", at, a->label, a->size, level_name(a->level));
        return;
    }
    for (i = 0; i < AT_SIM_MAX_CORES; i++)
        if (stacks[i] && addr < (uintptr_t)stacks[i] && (uintptr_t)stacks[i] - addr <= 64 * 1024) {
            snprintf(buf, n, "%lld bytes below the stack of core %d: a stack overflow (each core has %d KiB of "
                     "stack: keep large arrays out of a basic kernel's locals)",
                     (long long)((uintptr_t)stacks[i] - addr), i, AT_SIM_STACK_SIZE / 1024);
            return;
        }
    for (i = 0; i < 4; i++) {
        uintptr_t q = addr - (uintptr_t)items[i] * ((uintptr_t)1 << 32);
        const char *where = NULL;
        if (addr < (uintptr_t)items[i] * ((uintptr_t)1 << 32))
            break;
        if ((a = nearest_alloc(q, 1, 0)) != NULL) {
            describe_at(at, sizeof at, a, q);
            where = a->region ? "the static array" : "the allocation";
        } else if (on_any_stack(q) || in_data(q)) {
            snprintf(at, sizeof at, "%p", (void *)q);
            where = on_any_stack(q) ? "a stack" : "static data";
        }
        if (where) {
            snprintf(buf, n, "%s + %d GiB: an unsigned 32-bit index of %d-byte items gone negative, which on "
                     "the chip wraps to %s; the simulator reproduces that wrap only in the memory it allocates "
                     "(arguments, dynamic L1/L2 symbols, AT_L1_ALLOC/AT_L2_ALLOC), not in %s%s%s (make the "
                     "symbols dynamic with SetSymbolDynamics, or index with a signed int)", at, 4 * items[i],
                     items[i], at, where, a ? " " : "", a ? a->label : "");
            return;
        }
    }
    snprintf(buf, n, "outside every live L1/L2 allocation, stack and static variable");
}

/* ---- host faults ----
 *
 * A basic kernel's wild access (a read outside memory, which the checks let through; an address
 * the arena does not alias) or an integer division by zero would kill the Python process. During
 * a kernel call (at_sim_arm to at_sim_finish) a SIGSEGV/SIGBUS/SIGFPE handler, on its own stack,
 * makes it a fault of the call instead: the handler longjmps out like any fault (from a core, it
 * switches back to the main context first), so the call returns 1 and at_sim_end_call resets the
 * simulator. Outside a call, in another thread, or in AddressSanitizer builds (ASan reports
 * these itself, in a child process), the previous handlers stay in charge. */
#ifndef AT_SIM_ASAN
#define AT_SIM_N_SIGNALS 3
#define AT_SIM_ALT_STACK_SIZE (64 * 1024)
static const int fault_signals[AT_SIM_N_SIGNALS] = {SIGSEGV, SIGBUS, SIGFPE};
static struct sigaction saved_actions[AT_SIM_N_SIGNALS];
static stack_t saved_alt_stack;
static char *alt_stack;
static int signals_on, in_handler;

static void signals_restore(void)
{
    int i;
    if (!signals_on)
        return;
    for (i = 0; i < AT_SIM_N_SIGNALS; i++)
        sigaction(fault_signals[i], &saved_actions[i], NULL);
    sigaltstack(&saved_alt_stack, NULL);
    signals_on = 0;
}

static void *context_pc(void *ctx)
{
#if defined(__x86_64__)
    return (void *)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)((ucontext_t *)ctx)->uc_mcontext.pc;
#else
    (void)ctx;
    return NULL;
#endif
}

/* "reads" or "writes" (the page-fault error code's write bit on x86-64), else "accesses". */
static const char *context_access(void *ctx)
{
#if defined(__x86_64__)
    return (((ucontext_t *)ctx)->uc_mcontext.gregs[REG_ERR] & 2) ? "writes" : "reads";
#else
    (void)ctx;
    return "accesses";
#endif
}

static void host_fault(int sig, const siginfo_t *si, void *ctx)
{
    void *pc = context_pc(ctx);
    const char *name = running_kernel(pc);
    char what[200] = "basic kernel", user[AT_SIM_LABEL_SIZE + 32] = "", detail[900];
    int core = in_fork ? current_core : 0;
    if (fn_depth[fn_slot] == 0) /* no instrumented function entered: the generated code */
        snprintf(what, sizeof what, "the generated code");
    if (user_now && (!name || strcmp(name, user_now) != 0))
        snprintf(user, sizeof user, " (in user kernel '%s')", user_now);
    if (sig == SIGFPE)
        AT_SIM_FAULT("%s '%s'%s on core %d divides by zero (SIGFPE: an integer division by zero or "
                     "overflow; the chip's division returns a value instead)", what, name ? name : "?", user, core);
    describe_wild(detail, sizeof detail, (uintptr_t)si->si_addr);
    AT_SIM_FAULT("%s '%s'%s on core %d %s address %p and the host faults (%s): %s", what, name ? name : "?", user,
                 core, context_access(ctx), si->si_addr, sig == SIGBUS ? "SIGBUS" : "SIGSEGV", detail);
}

static void on_fault_signal(int sig, siginfo_t *si, void *ctx)
{
    if (in_handler || !armed_env || !pthread_equal(pthread_self(), host_thread)) {
        /* not the kernel call's: the previous handler takes it when the instruction runs again */
        signals_restore();
        return;
    }
    in_handler = 1;
    host_fault(sig, si, ctx);
}

static void signals_arm(int on)
{
    struct sigaction sa;
    stack_t ss;
    int i;
    in_handler = 0;
    if (!on) {
        signals_restore();
        return;
    }
    if (signals_on)
        return;
    if (!alt_stack && !(alt_stack = malloc(AT_SIM_ALT_STACK_SIZE)))
        return;
    ss.ss_sp = alt_stack;
    ss.ss_size = AT_SIM_ALT_STACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, &saved_alt_stack) != 0)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER; /* NODEFER: longjmp leaves the mask as it was */
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < AT_SIM_N_SIGNALS; i++)
        sigaction(fault_signals[i], &sa, &saved_actions[i]);
    signals_on = 1;
}
#else
static void signals_arm(int on) { (void)on; }
#endif

/* ---- the instrumentation's entry points (gcc -fsanitize=thread) ---- */

#define AT_SIM_PC __builtin_return_address(0)
#define AT_SIM_ACCESS_HOOKS(n)                                                                  \
    void __tsan_read##n(void *a) { check_access(a, n, 0, AT_SIM_PC); }                         \
    void __tsan_write##n(void *a) { check_access(a, n, 1, AT_SIM_PC); }                        \
    void __tsan_unaligned_read##n(void *a) { check_access(a, n, 0, AT_SIM_PC); }               \
    void __tsan_unaligned_write##n(void *a) { check_access(a, n, 1, AT_SIM_PC); }              \
    void __tsan_volatile_read##n(void *a) { check_access(a, n, 0, AT_SIM_PC); }                \
    void __tsan_volatile_write##n(void *a) { check_access(a, n, 1, AT_SIM_PC); }               \
    void __tsan_unaligned_volatile_read##n(void *a) { check_access(a, n, 0, AT_SIM_PC); }      \
    void __tsan_unaligned_volatile_write##n(void *a) { check_access(a, n, 1, AT_SIM_PC); }

AT_SIM_ACCESS_HOOKS(1)
AT_SIM_ACCESS_HOOKS(2)
AT_SIM_ACCESS_HOOKS(4)
AT_SIM_ACCESS_HOOKS(8)
AT_SIM_ACCESS_HOOKS(16)

void __tsan_read_range(void *a, long size)
{
    if (size > 0)
        check_access(a, (uintptr_t)size, 0, AT_SIM_PC);
}

void __tsan_write_range(void *a, long size)
{
    if (size > 0)
        check_access(a, (uintptr_t)size, 1, AT_SIM_PC);
}

void __tsan_init(void) {}

/* The basic kernels' calls of memcpy, memmove and memset (the library functions gcc leaves as
 * calls; short constant ones it expands into checked accesses itself) are renamed to these by the
 * builder (objcopy --redefine-sym on the instrumented objects): the same checks, then the copy. */
void *at_sim_memcpy(void *dst, const void *src, size_t n)
{
    if (n) {
        check_access(src, (uintptr_t)n, 0, AT_SIM_PC);
        check_access(dst, (uintptr_t)n, 1, AT_SIM_PC);
    }
    return memcpy(dst, src, n);
}

void *at_sim_memmove(void *dst, const void *src, size_t n)
{
    if (n) {
        check_access(src, (uintptr_t)n, 0, AT_SIM_PC);
        check_access(dst, (uintptr_t)n, 1, AT_SIM_PC);
    }
    return memmove(dst, src, n);
}

void *at_sim_memset(void *dst, int c, size_t n)
{
    if (n)
        check_access(dst, (uintptr_t)n, 1, AT_SIM_PC);
    return memset(dst, c, n);
}

void __tsan_func_entry(void *caller)
{
    int d = fn_depth[fn_slot]++;
    (void)caller; /* the return address into the caller; ours is inside the function entered */
    if (d < AT_SIM_MAX_DEPTH)
        fn_pc[fn_slot][d] = AT_SIM_PC;
}

void __tsan_func_exit(void *unused)
{
    (void)unused;
    if (fn_depth[fn_slot] > 0)
        fn_depth[fn_slot]--;
}

/* Atomics (the __atomic and __sync builtins): done, never checked (they do not race). The
 * signatures are gcc's own declarations of these builtins. */
#define AT_SIM_ATOMIC_RMW(bits, T, op)                                                          \
    T __tsan_atomic##bits##_fetch_##op(volatile void *a, T v, int mo)                           \
    {                                                                                           \
        (void)mo;                                                                               \
        return __atomic_fetch_##op((volatile T *)a, v, __ATOMIC_SEQ_CST);                       \
    }
#define AT_SIM_ATOMIC_CAS(bits, T, kind, weak)                                                  \
    _Bool __tsan_atomic##bits##_compare_exchange_##kind(volatile void *a, void *c, T v, int mo, \
                                                        int fmo)                                \
    {                                                                                           \
        (void)mo;                                                                               \
        (void)fmo;                                                                              \
        return __atomic_compare_exchange_n((volatile T *)a, (T *)c, v, weak, __ATOMIC_SEQ_CST,  \
                                           __ATOMIC_SEQ_CST);                                   \
    }
#define AT_SIM_ATOMICS(bits, T)                                                                 \
    T __tsan_atomic##bits##_load(const volatile void *a, int mo)                                \
    {                                                                                           \
        (void)mo;                                                                               \
        return __atomic_load_n((const volatile T *)a, __ATOMIC_SEQ_CST);                        \
    }                                                                                           \
    void __tsan_atomic##bits##_store(volatile void *a, T v, int mo)                             \
    {                                                                                           \
        (void)mo;                                                                               \
        __atomic_store_n((volatile T *)a, v, __ATOMIC_SEQ_CST);                                 \
    }                                                                                           \
    T __tsan_atomic##bits##_exchange(volatile void *a, T v, int mo)                             \
    {                                                                                           \
        (void)mo;                                                                               \
        return __atomic_exchange_n((volatile T *)a, v, __ATOMIC_SEQ_CST);                       \
    }                                                                                           \
    T __tsan_atomic##bits##_compare_exchange_val(volatile void *a, T c, T v, int mo, int fmo)   \
    {                                                                                           \
        (void)mo;                                                                               \
        (void)fmo;                                                                              \
        __atomic_compare_exchange_n((volatile T *)a, &c, v, 0, __ATOMIC_SEQ_CST,                \
                                    __ATOMIC_SEQ_CST);                                          \
        return c;                                                                               \
    }                                                                                           \
    AT_SIM_ATOMIC_RMW(bits, T, add)                                                             \
    AT_SIM_ATOMIC_RMW(bits, T, sub)                                                             \
    AT_SIM_ATOMIC_RMW(bits, T, and)                                                             \
    AT_SIM_ATOMIC_RMW(bits, T, or)                                                              \
    AT_SIM_ATOMIC_RMW(bits, T, xor)                                                             \
    AT_SIM_ATOMIC_RMW(bits, T, nand)                                                            \
    AT_SIM_ATOMIC_CAS(bits, T, strong, 0)                                                       \
    AT_SIM_ATOMIC_CAS(bits, T, weak, 1)

AT_SIM_ATOMICS(8, unsigned char)
AT_SIM_ATOMICS(16, unsigned short)
AT_SIM_ATOMICS(32, unsigned int)
AT_SIM_ATOMICS(64, unsigned long)

void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { (void)mo; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
