/* Cluster DMA (MCHAN) micro-benchmarks: 1D and 2D transfers on one core, channel structure,
 * and eight cores issuing at once. */
#include "micro.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define BYTES_2D 4096
#define PER_CORE_BYTES 2048
#define CHANNEL_SLOT 8192   /* second transfer of a pair: L2 offset, and l1_b instead of l1_a */
#define NONE (-1)           /* no second transfer */

static const int sizes_1d[] = {4, 16, 64, 256, 1024, 4096, 16384};
static const int lines_2d[] = {16, 32, 64, 128, 256, 512, 1024, 4096};
static const int sizes_channel[] = {1024, 8192};

#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

static const char *path_name(int path) { return path == PATH_EXT ? "ext" : "core"; }
static const char *dir_name(int ext2loc) { return ext2loc ? "in" : "out"; }

/* Reads come from the L2 pattern; writes go to the other L2 buffer so the pattern survives for
 * the data checks. */
static unsigned int l2_end(int ext2loc) { return (unsigned int)(ext2loc ? l2_a : l2_b); }

/* --- timing primitives; always inlined so that a constant path leaves no branch in the timed
 * region --- */

ALWAYS_INLINE int dma_issue(int path, int ext2loc, unsigned int ext, unsigned int loc, int size)
{
    if (path == PATH_EXT)
        return plp_dma_memcpy(ext, loc, size, ext2loc);
    return core_dma_memcpy(ext, loc, size, ext2loc);
}

ALWAYS_INLINE void dma_wait(int path, int id)
{
    if (path == PATH_EXT)
        plp_dma_wait(id);
    else
        core_dma_wait(id);
}

ALWAYS_INLINE unsigned int dma_status(int path)
{
    return path == PATH_EXT ? plp_dma_status() : core_dma_status();
}

/* Makes `value` look modified after the counter read, so that the command word built from it
 * cannot be computed before t0 (the "memory" clobber of cycles() orders memory accesses only).
 * Volatile asm statements keep their order. */
ALWAYS_INLINE int opaque(int value)
{
    __asm__ volatile("" : "+r"(value));
    return value;
}

/* Issue to completed wait. */
ALWAYS_INLINE unsigned int time_total(int path, int ext2loc, int size)
{
    unsigned int t0 = cycles();
    size = opaque(size);
    dma_wait(path, dma_issue(path, ext2loc, l2_end(ext2loc), (unsigned int)l1_a, size));
    return cycles() - t0;
}

/* Only the programming of the command: counter allocation and the command words. */
ALWAYS_INLINE unsigned int time_issue(int path, int ext2loc, int size)
{
    unsigned int t0 = cycles();
    size = opaque(size);
    int id = dma_issue(path, ext2loc, l2_end(ext2loc), (unsigned int)l1_a, size);
    unsigned int t1 = cycles();
    dma_wait(path, id);
    return t1 - t0;
}

/* A wait that does not stall: the status is polled until the transfer is over, then the wait
 * (status read, counter release) is timed. */
ALWAYS_INLINE unsigned int time_wait(int path, int ext2loc, int size)
{
    int id = dma_issue(path, ext2loc, l2_end(ext2loc), (unsigned int)l1_a, size);
    while (dma_status(path) & (1u << id))
        ;
    unsigned int t0 = cycles();
    dma_wait(path, id);
    return cycles() - t0;
}

/* One function per (figure, path, direction), so that path and direction are constants in the
 * timed code as they are in generated code. */
typedef unsigned int (*probe_fn)(int size);

#define PROBE(what, path, dir) \
    static unsigned int what##_##path##_##dir(int size) { return time_##what(path, dir, size); }

PROBE(total, PATH_EXT, PLP_DMA_EXT2LOC)
PROBE(total, PATH_EXT, PLP_DMA_LOC2EXT)
PROBE(total, PATH_CORE, PLP_DMA_EXT2LOC)
PROBE(total, PATH_CORE, PLP_DMA_LOC2EXT)
PROBE(issue, PATH_EXT, PLP_DMA_EXT2LOC)
PROBE(issue, PATH_EXT, PLP_DMA_LOC2EXT)
PROBE(issue, PATH_CORE, PLP_DMA_EXT2LOC)
PROBE(issue, PATH_CORE, PLP_DMA_LOC2EXT)
PROBE(wait, PATH_EXT, PLP_DMA_EXT2LOC)
PROBE(wait, PATH_EXT, PLP_DMA_LOC2EXT)
PROBE(wait, PATH_CORE, PLP_DMA_EXT2LOC)
PROBE(wait, PATH_CORE, PLP_DMA_LOC2EXT)

struct probe {
    const char *what;
    int path, dir;
    probe_fn fn;
};

#define PROBE_ENTRY(what, path, dir) {#what, path, dir, what##_##path##_##dir}

static const struct probe probes_1d[] = {
    PROBE_ENTRY(total, PATH_EXT, PLP_DMA_EXT2LOC),  PROBE_ENTRY(total, PATH_EXT, PLP_DMA_LOC2EXT),
    PROBE_ENTRY(total, PATH_CORE, PLP_DMA_EXT2LOC), PROBE_ENTRY(total, PATH_CORE, PLP_DMA_LOC2EXT),
    PROBE_ENTRY(issue, PATH_EXT, PLP_DMA_EXT2LOC),  PROBE_ENTRY(issue, PATH_EXT, PLP_DMA_LOC2EXT),
    PROBE_ENTRY(issue, PATH_CORE, PLP_DMA_EXT2LOC), PROBE_ENTRY(issue, PATH_CORE, PLP_DMA_LOC2EXT),
    PROBE_ENTRY(wait, PATH_EXT, PLP_DMA_EXT2LOC),   PROBE_ENTRY(wait, PATH_EXT, PLP_DMA_LOC2EXT),
    PROBE_ENTRY(wait, PATH_CORE, PLP_DMA_EXT2LOC),  PROBE_ENTRY(wait, PATH_CORE, PLP_DMA_LOC2EXT),
};

/* One untimed call first so that the instruction cache is warm for every repetition. */
static void series_1d(const struct probe *probe, int size)
{
    unsigned int values[REPS];
    probe->fn(size);
    for (int r = 0; r < REPS; r++)
        values[r] = probe->fn(size);
    printf("@ dma1d what=%s path=%s dir=%s bytes=%d", probe->what, path_name(probe->path),
           dir_name(probe->dir), size);
    print_list("v", values, REPS);
    printf("\n");
}

void run_dma_1d(void)
{
    for (int p = 0; p < COUNT(probes_1d); p++)
        for (int s = 0; s < COUNT(sizes_1d); s++)
            series_1d(&probes_1d[p], sizes_1d[s]);
}

/* --- 2D: BYTES_2D in lines of `line` bytes, L2 side strided by two lines, L1 side contiguous --- */

ALWAYS_INLINE unsigned int time_2d(int ext2loc, int line)
{
    unsigned int t0 = cycles();
    line = opaque(line);
    plp_dma_wait(plp_dma_memcpy_2d(l2_end(ext2loc), (unsigned int)l1_a, BYTES_2D, 2 * line, line,
                                   ext2loc));
    return cycles() - t0;
}

static unsigned int time_2d_in(int line) { return time_2d(PLP_DMA_EXT2LOC, line); }
static unsigned int time_2d_out(int line) { return time_2d(PLP_DMA_LOC2EXT, line); }

/* Checks the last 2D transfer moved the right bytes: the stride/length argument order of
 * plp_dma_memcpy_2d is easy to get wrong, and a wrong one still takes plausible time. */
static int check_2d(int ext2loc, int line)
{
    const unsigned char *l2 = ext2loc ? l2_a : l2_b;
    int bad = 0;
    for (int i = 0; i < BYTES_2D; i++)
        bad += l1_a[i] != l2[(i / line) * 2 * line + i % line];
    return bad;
}

void run_dma_2d(void)
{
    unsigned int values[REPS];
    for (int d = PLP_DMA_EXT2LOC; d >= PLP_DMA_LOC2EXT; d--) {
        probe_fn time = d == PLP_DMA_EXT2LOC ? time_2d_in : time_2d_out;
        for (int l = 0; l < COUNT(lines_2d); l++) {
            int line = lines_2d[l];
            time(line);
            for (int r = 0; r < REPS; r++)
                values[r] = time(line);
            printf("@ dma2d path=ext dir=%s bytes=%d line=%d lines=%d bad=%d", dir_name(d),
                   BYTES_2D, line, BYTES_2D / line, check_2d(d, line));
            print_list("v", values, REPS);
            printf("\n");
        }
    }
}

/* --- channel structure: two transfers issued back to back on the shared channel --- */

static int issue_slot(int ext2loc, int slot, int size)
{
    unsigned int ext = l2_end(ext2loc) + slot * CHANNEL_SLOT;
    unsigned int loc = (unsigned int)(slot ? l1_b : l1_a);
    return plp_dma_memcpy(ext, loc, size, ext2loc);
}

/* `first`: cycles until the first transfer's wait returns; result: until both are done. */
static unsigned int time_pair(int dir0, int dir1, int size, unsigned int *first)
{
    unsigned int t0 = cycles();
    size = opaque(size);
    int a = issue_slot(dir0, 0, size);
    int b = dir1 == NONE ? NONE : issue_slot(dir1, 1, size);
    plp_dma_wait(a);
    unsigned int t1 = cycles();
    if (b != NONE)
        plp_dma_wait(b);
    unsigned int t2 = cycles();
    *first = t1 - t0;
    return t2 - t0;
}

struct pair {
    const char *name;
    int dir0, dir1;
};

static const struct pair pairs[] = {
    {"r", PLP_DMA_EXT2LOC, NONE}, {"w", PLP_DMA_LOC2EXT, NONE},
    {"rw", PLP_DMA_EXT2LOC, PLP_DMA_LOC2EXT}, {"wr", PLP_DMA_LOC2EXT, PLP_DMA_EXT2LOC},
    {"rr", PLP_DMA_EXT2LOC, PLP_DMA_EXT2LOC}, {"ww", PLP_DMA_LOC2EXT, PLP_DMA_LOC2EXT},
};

/* The AutoTiler way on one core: the master issues all eight tiles on the shared channel and
 * waits for them. `issue` shows when the two-deep command queue of a channel stalls the core. */
static unsigned int time_master8(unsigned int *issue)
{
    int ids[NB_CORES];
    unsigned int t0 = cycles();
    for (int c = 0; c < NB_CORES; c++)
        ids[c] = plp_dma_memcpy((unsigned int)(l2_a + c * PER_CORE_BYTES),
                                (unsigned int)(l1_a + c * PER_CORE_BYTES), PER_CORE_BYTES,
                                PLP_DMA_EXT2LOC);
    unsigned int t1 = cycles();
    for (int c = 0; c < NB_CORES; c++)
        plp_dma_wait(ids[c]);
    *issue = t1 - t0;
    return cycles() - t0;
}

static void run_master8(void)
{
    unsigned int values[REPS], issue[REPS], ignored;
    time_master8(&ignored);
    for (int r = 0; r < REPS; r++)
        values[r] = time_master8(&issue[r]);
    printf("@ master8 path=ext dir=in bytes=%d count=%d", PER_CORE_BYTES, NB_CORES);
    print_list("v", values, REPS);
    print_list("issue", issue, REPS);
    printf("\n");
}

void run_dma_channels(void)
{
    unsigned int both[REPS], first[REPS], ignored;
    for (int s = 0; s < COUNT(sizes_channel); s++) {
        for (int p = 0; p < COUNT(pairs); p++) {
            const struct pair *pair = &pairs[p];
            time_pair(pair->dir0, pair->dir1, sizes_channel[s], &ignored);
            for (int r = 0; r < REPS; r++)
                both[r] = time_pair(pair->dir0, pair->dir1, sizes_channel[s], &first[r]);
            printf("@ channel path=ext pair=%s bytes=%d", pair->name, sizes_channel[s]);
            print_list("v", both, REPS);
            print_list("first", first, REPS);
            printf("\n");
        }
    }
    run_master8();
}

/* --- eight cores, each its own PER_CORE_BYTES transfer, released by one barrier --- */

L1_DATA static volatile unsigned int pc_start[NB_CORES][REPS];
L1_DATA static volatile unsigned int pc_end[NB_CORES][REPS];

static int check_per_core(void)
{
    int bad = 0;
    for (int i = 0; i < NB_CORES * PER_CORE_BYTES; i++)
        bad += l1_a[i] != l2_a[i];
    return bad;
}

static void report_per_core(void)
{
    unsigned int values[REPS];
    for (int c = 0; c < NB_CORES; c++) {
        for (int r = 0; r < REPS; r++)
            values[r] = pc_end[c][r] - pc_start[c][r];
        printf("@ per_core path=core dir=in bytes=%d core=%d", PER_CORE_BYTES, c);
        print_list("v", values, REPS);
        printf("\n");
    }
    /* mcycle is one time base for all cluster cores (equal start stamps after a barrier), so
     * the span is the last end minus the first start. */
    unsigned int span[REPS], skew[REPS];
    for (int r = 0; r < REPS; r++) {
        unsigned int first = pc_start[0][r], last_start = first, last = pc_end[0][r];
        for (int c = 1; c < NB_CORES; c++) {
            first = pc_start[c][r] < first ? pc_start[c][r] : first;
            last_start = pc_start[c][r] > last_start ? pc_start[c][r] : last_start;
            last = pc_end[c][r] > last ? pc_end[c][r] : last;
        }
        span[r] = last - first;
        skew[r] = last_start - first;
    }
    printf("@ per_core_span path=core dir=in bytes=%d cores=%d bad=%d", PER_CORE_BYTES, NB_CORES,
           check_per_core());
    print_list("v", span, REPS);
    print_list("skew", skew, REPS);
    printf("\n");
}

/* The per-core channel, not the shared one: cores writing their command words to the shared
 * channel at the same moment interleave them into garbage commands (see the calibration doc). */
void run_dma_per_core(void)
{
    int core = get_core_id();
    unsigned int ext = (unsigned int)(l2_a + core * PER_CORE_BYTES);
    unsigned int loc = (unsigned int)(l1_a + core * PER_CORE_BYTES);
    if (core == 0)
        for (int i = 0; i < NB_CORES * PER_CORE_BYTES; i++)
            l1_a[i] = 0;
    for (int r = -1; r < REPS; r++) {
        synch_barrier();
        unsigned int t0 = cycles();
        core_dma_wait(core_dma_memcpy(ext, loc, PER_CORE_BYTES, PLP_DMA_EXT2LOC));
        unsigned int t1 = cycles();
        if (r >= 0) {
            pc_start[core][r] = t0;
            pc_end[core][r] = t1;
        }
    }
    synch_barrier();
    if (core == 0)
        report_per_core();
    synch_barrier();
}
