/* Fabric-controller side: fills L2, starts the cluster once, and either runs every cluster
 * micro-benchmark (default build) or times cluster_start + cluster_wait (-DMICRO_START_SPIN=N).
 *
 * pulp-runtime's cluster cores end an entry in pos_wait_forever(): a second cluster_start never
 * wakes them and its cluster_wait spins for ever. So one build measures one cluster start, and
 * the driver runs that build several times for the repetitions. */
#include "micro.h"

PI_L2 unsigned char l2_a[L2_BYTES] __attribute__((aligned(8)));
PI_L2 unsigned char l2_b[L2_BYTES] __attribute__((aligned(8)));
L1_DATA unsigned char l1_a[L1A_BYTES] __attribute__((aligned(8)));
L1_DATA unsigned char l1_b[L1B_BYTES] __attribute__((aligned(8)));

#ifdef MICRO_START_SPIN

/* N > 0: core 0 stays busy for N of its own cycles, so that the growth of the fabric
 * controller's figure over the empty entry gives the FC/cluster clock ratio. */
static int start_entry(void)
{
#if MICRO_START_SPIN > 0
    if (get_core_id() == 0) {
        unsigned int start = cycles();
        while (cycles() - start < MICRO_START_SPIN)
            ;
    }
#endif
    return 0;
}

#ifndef MICRO_START_PRELOCK
#define MICRO_START_PRELOCK 0
#endif

/* cluster_start locks the cluster FLL when it finds it unconfigured, and GVSoC stops the
 * cluster clock until the lock: most of a cold start. With -DMICRO_START_PRELOCK=N the FLL is
 * configured first and given N FC cycles to lock, so the figure is the boot and the entry
 * alone. */
static void prelock_cluster_fll(void)
{
#if MICRO_START_PRELOCK > 0
    pos_fll_init(POS_FLL_CL);
    unsigned int start = cycles();
    while (cycles() - start < MICRO_START_PRELOCK)
        ;
#endif
}

int main(void)
{
    prelock_cluster_fll();
    unsigned int t0 = cycles();
    cluster_start(0, start_entry);
    unsigned int t1 = cycles();
    cluster_wait(0);
    unsigned int t2 = cycles();
    unsigned int start = t1 - t0, wait = t2 - t1, total = t2 - t0;
    printf("@ cluster_start spin=%d prelock=%d", MICRO_START_SPIN, MICRO_START_PRELOCK);
    print_list("start", &start, 1);
    print_list("wait", &wait, 1);
    print_list("v", &total, 1);
    printf("\n");
    return 0;
}

#else

static void fill_l2(void)
{
    for (int i = 0; i < L2_BYTES; i++)
        l2_a[i] = (unsigned char)(i * 7 + 3);
}

/* Single-core experiments run on core 0 while the others sleep in the barrier, so that nothing
 * else touches the DMA or the interconnect. */
static int bench_entry(void)
{
    if (get_core_id() == 0) {
        run_overhead();
        run_dma_1d();
        run_dma_2d();
        run_dma_channels();
    }
    synch_barrier();
    run_dma_per_core();
    run_barrier();
    run_fork();
    return 0;
}

int main(void)
{
    fill_l2();
    cluster_start(0, bench_entry);
    cluster_wait(0);
    printf("@ done\n");
    return 0;
}

#endif
