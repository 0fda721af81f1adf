/* The runtime statements of generated code, timed on the target runtime (host_harness/target)
 * as the GVSoC back-end builds it: the figures the cost model charges per statement.
 *
 * The statements are written as the generated code writes them (printer.py): addresses computed
 * from a loop index, the macros of the target's at_api.h, a fork preceded by its argument
 * struct's stores and AT_SIM_COMPUTE. One untimed call precedes each series (warm instruction
 * cache); every figure is printed as REPS raw mcycle differences, as bench/gvsoc/micro prints
 * them:  @ <experiment> key=value ... v=r0,r1,...  */
#include "at_api.h"
#include "bench_common.h"   /* cycles(), print_list(), REPS, run_overhead() */

#define BYTES 16384
#define BYTES_2D 4096
#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

static const int sizes_1d[] = {4, 16, 64, 256, 1024, 4096, 16384};
static const int lines_2d[] = {16, 64, 256, 1024};

PI_L2 static char l2_a[2 * BYTES] __attribute__((aligned(8)));
L1_DATA static char l1_a[BYTES] __attribute__((aligned(8)));

/* The at_target.c side of an application the back-end writes (host_harness/gvsoc.py): no flash
 * images. */
const at_target_image_t at_target_images[1] = {{0, 0, 0}};
const int at_target_image_count = 0;

/* A value the compiler cannot know before the counter read (as a loop index in generated code). */
static inline int opaque(int value)
{
    __asm__ volatile("" : "+r"(value));
    return value;
}

static void spin(unsigned int n)
{
    unsigned int t0 = cycles();
    while (cycles() - t0 < n)
        ;
}

/* --- cluster DMA: AT_L2_COPY / AT_L2_COPY2D / AT_L2_WAIT ----------------------------------- */

#define ALWAYS_INLINE static inline __attribute__((always_inline))

enum what { ISSUE, WAIT, TOTAL };
static const char *what_name[] = {"issue", "wait", "total"};

/* A statement as generated code writes it in a loop: ext and loc are a base plus an offset the
 * compiler has strength-reduced to a register (here one it cannot know), the size a value. */
ALWAYS_INLINE unsigned int time_d1(int what, int dir, int size)
{
    AT_L2_EVENT evt;
    unsigned int t0 = cycles(), t1;
    AT_L2_COPY(0, (AT_L2_EXT_ADDR_TYPE) (l2_a + opaque(BYTES)), (AT_L2_INT_ADDR_TYPE) (l1_a + opaque(0)),
               opaque(size), dir, &evt);
    if (what == ISSUE) {
        t1 = cycles();
        AT_L2_WAIT(0, &evt);
        return t1 - t0;
    }
    if (what == WAIT) {
        spin(3000); /* the transfer is over: the wait does not stall */
        t0 = cycles();
    }
    AT_L2_WAIT(0, &evt);
    return cycles() - t0;
}

/* BYTES_2D in lines of `line` bytes, the L2 side strided by two lines. */
ALWAYS_INLINE unsigned int time_d2(int what, int dir, int line)
{
    AT_L2_EVENT evt;
    unsigned int t0 = cycles(), t1;
    AT_L2_COPY2D(0, (AT_L2_EXT_ADDR_TYPE) (l2_a + opaque(0)), (AT_L2_INT_ADDR_TYPE) (l1_a + opaque(0)),
                 opaque(BYTES_2D), 2 * opaque(line), line, dir, &evt);
    if (what == ISSUE) {
        t1 = cycles();
        AT_L2_WAIT(0, &evt);
        return t1 - t0;
    }
    AT_L2_WAIT(0, &evt);
    return cycles() - t0;
}

/* One function per (shape, figure, direction): constants in the timed code, as in generated code. */
typedef unsigned int (*probe_fn)(int size);
#define PROBE(shape, what, dir) \
    static unsigned int shape##_##what##_##dir(int size) { return time_##shape(what, AT_L2_##dir, size); }
PROBE(d1, ISSUE, EXT2LOC)
PROBE(d1, ISSUE, LOC2EXT)
PROBE(d1, WAIT, EXT2LOC)
PROBE(d1, WAIT, LOC2EXT)
PROBE(d1, TOTAL, EXT2LOC)
PROBE(d1, TOTAL, LOC2EXT)
PROBE(d2, ISSUE, EXT2LOC)
PROBE(d2, ISSUE, LOC2EXT)
PROBE(d2, TOTAL, EXT2LOC)
PROBE(d2, TOTAL, LOC2EXT)

struct probe {
    int what, in;
    probe_fn fn;
};
#define ENTRY(shape, what, dir) {what, AT_L2_##dir == AT_L2_EXT2LOC, shape##_##what##_##dir}
static const struct probe probes_1d[] = {ENTRY(d1, ISSUE, EXT2LOC), ENTRY(d1, ISSUE, LOC2EXT),
                                         ENTRY(d1, WAIT, EXT2LOC),  ENTRY(d1, WAIT, LOC2EXT),
                                         ENTRY(d1, TOTAL, EXT2LOC), ENTRY(d1, TOTAL, LOC2EXT)};
static const struct probe probes_2d[] = {ENTRY(d2, ISSUE, EXT2LOC), ENTRY(d2, ISSUE, LOC2EXT),
                                         ENTRY(d2, TOTAL, EXT2LOC), ENTRY(d2, TOTAL, LOC2EXT)};

static void series(const char *kind, const struct probe *p, int size, const char *key)
{
    unsigned int values[REPS];
    p->fn(size);
    for (int r = 0; r < REPS; r++)
        values[r] = p->fn(size);
    printf("@ %s what=%s dir=%s %s=%d", kind, what_name[p->what], p->in ? "in" : "out", key, size);
    print_list("v", values, REPS);
    printf("\n");
}

static void run_dma(void)
{
    for (int p = 0; p < COUNT(probes_1d); p++)
        for (int s = 0; s < COUNT(sizes_1d); s++)
            series("rt_dma1d", &probes_1d[p], sizes_1d[s], "bytes");
    for (int p = 0; p < COUNT(probes_2d); p++)
        for (int l = 0; l < COUNT(lines_2d); l++)
            series("rt_dma2d", &probes_2d[p], lines_2d[l], "line");
}

/* --- AT_FORK: an empty basic kernel, its struct's fields set first as generated code does ---- */

typedef struct {
    char *In;
    char *Out;
    unsigned int W;
    unsigned int H;
} arg_t;

static void __attribute__((noinline)) empty_kernel(arg_t *arg)
{
    (void)arg;
}

static unsigned int time_fork(int i)
{
    arg_t s, *arg = &s;
    unsigned int t0 = cycles();
    arg->In = l1_a + 64 * (i % 2);
    arg->Out = l1_a + 128 + 64 * (i % 2);
    arg->W = (unsigned int)i;
    arg->H = (unsigned int)(i + 1);
    AT_SIM_COMPUTE(i);
    AT_FORK(AT_SIM_NCORES, (void *) empty_kernel, (void *) arg);
    __CALL(empty_kernel, arg);
    return cycles() - t0;
}

static void run_fork(void)
{
    unsigned int values[REPS];
    at_target_profile_forks = 0;
    time_fork(opaque(0));
    for (int r = 0; r < REPS; r++)
        values[r] = time_fork(opaque(r));
    printf("@ rt_fork what=statement");
    print_list("v", values, REPS);
    printf("\n");
    /* the window GvsocProgram.profile times (release to join, inside at_target_fork): what the
     * compute fit's per-call figures are measured beyond */
    at_target_profile_forks = 1;
    time_fork(opaque(0));
    at_target_reset_forks();
    for (int r = 0; r < REPS; r++)
        time_fork(opaque(r));
    at_target_profile_forks = 0;
    printf("@ rt_fork what=window reps=%d\n", REPS);
    at_target_print_forks();
}

void at_target_master(void)
{
    run_overhead();
    for (int i = 0; i < 2 * BYTES; i++)
        l2_a[i] = (char)(i * 7 + 3);
    run_dma();
    run_fork();
    printf("@ done\n");
}

int at_target_cluster_main(void); /* at_target.c: core 0 runs at_target_master */

int main(void)
{
    cluster_start(0, at_target_cluster_main);
    return cluster_wait(0);
}
