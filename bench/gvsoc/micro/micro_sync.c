/* Counter overhead, hardware barrier and fork micro-benchmarks. */
#include "micro.h"

/* --- barrier: all cores leave the previous barrier together, so they arrive together --- */

L1_DATA static volatile unsigned int barrier_cycles[NB_CORES][REPS];

static void report_barrier(void)
{
    unsigned int core0[REPS], worst[REPS];
    for (int r = 0; r < REPS; r++) {
        core0[r] = worst[r] = barrier_cycles[0][r];
        for (int c = 1; c < NB_CORES; c++)
            worst[r] = barrier_cycles[c][r] > worst[r] ? barrier_cycles[c][r] : worst[r];
    }
    printf("@ barrier cores=%d", NB_CORES);
    print_list("v", core0, REPS);
    print_list("max", worst, REPS);
    printf("\n");
}

void run_barrier(void)
{
    int core = get_core_id();
    synch_barrier();
    for (int r = -1; r < REPS; r++) {
        unsigned int t0 = cycles();
        synch_barrier();
        unsigned int t1 = cycles();
        if (r >= 0)
            barrier_cycles[core][r] = t1 - t0;
    }
    synch_barrier();
    if (core == 0)
        report_barrier();
    synch_barrier();
}

/* --- fork: how a runtime can map AT_FORK onto cores that all entered one cluster_start entry.
 * The master publishes the task in shared L1, a barrier releases the workers, everybody runs
 * the task, a second barrier joins. A NULL task sends the workers home. --- */

typedef void (*task_fn)(void *arg);

L1_DATA static task_fn volatile fork_task;
L1_DATA static void *volatile fork_arg;

static void __attribute__((noinline)) empty_task(void *arg)
{
    (void)arg;
}

/* Master side. The stores precede the releasing barrier in program order and the core is in
 * order, so a worker leaving that barrier reads the new task. */
static void fork_all(task_fn task, void *arg)
{
    fork_arg = arg;
    fork_task = task;
    synch_barrier();
    task(arg);
    synch_barrier();
}

/* Worker side: the join barrier keeps the master from publishing the next task before every
 * worker has read the current one. */
static void worker_loop(void)
{
    for (;;) {
        synch_barrier();
        task_fn task = fork_task;
        if (task == 0)
            return;
        task(fork_arg);
        synch_barrier();
    }
}

static void master_loop(void)
{
    unsigned int values[REPS];
    for (int r = -1; r < REPS; r++) {
        unsigned int t0 = cycles();
        fork_all(empty_task, 0);
        unsigned int t1 = cycles();
        if (r >= 0)
            values[r] = t1 - t0;
    }
    fork_task = 0;
    synch_barrier();
    printf("@ fork cores=%d", NB_CORES);
    print_list("v", values, REPS);
    printf("\n");
}

void run_fork(void)
{
    if (get_core_id() == 0)
        master_loop();
    else
        worker_loop();
    synch_barrier();
}
