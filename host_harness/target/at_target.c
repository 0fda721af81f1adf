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
 */
#include <pulp.h>
#include <stdio.h>

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

void *at_target_alloc(int level, long long size)
{
    if (size <= 0 || size > 0x7fffffff)
        return 0;
    return level == AT_SIM_L1 ? pi_l1_malloc(0, (int)size) : pi_l2_malloc((int)size);
}

void at_target_free(int level, void *ptr, long long size)
{
    if (!ptr)
        return;
    if (level == AT_SIM_L1)
        pi_l1_free(0, ptr, (int)size);
    else
        pi_l2_free(ptr, (int)size);
}

/* MCHAN takes at most 16 bits of length per command: longer 1D copies go in chunks, all but
 * the last waited for here (they are rare: an L1 of 64 KiB holds few such tiles). */
#define AT_TARGET_CHUNK 32768

void at_target_copy(char *ext, char *loc, int size, int dir, at_target_event_t *event)
{
    while (size > AT_TARGET_CHUNK) {
        plp_dma_wait(plp_dma_memcpy((unsigned int)ext, (unsigned int)loc, AT_TARGET_CHUNK, dir));
        ext += AT_TARGET_CHUNK;
        loc += AT_TARGET_CHUNK;
        size -= AT_TARGET_CHUNK;
    }
    event->id = plp_dma_memcpy((unsigned int)ext, (unsigned int)loc, (unsigned short)size, dir);
}

void at_target_copy2d(char *ext, char *loc, int size, int stride, int length, int dir, at_target_event_t *event)
{
    /* whole lines per command so that no line is split across two commands */
    int lines_per = AT_TARGET_CHUNK / length;
    int chunk = lines_per * length;
    while (size > chunk) {
        plp_dma_wait(plp_dma_memcpy_2d((unsigned int)ext, (unsigned int)loc, (unsigned short)chunk,
                                       (unsigned short)stride, (unsigned short)length, dir));
        ext += lines_per * stride;
        loc += chunk;
        size -= chunk;
    }
    event->id = plp_dma_memcpy_2d((unsigned int)ext, (unsigned int)loc, (unsigned short)size,
                                  (unsigned short)stride, (unsigned short)length, dir);
}

void at_target_wait(at_target_event_t *event) { plp_dma_wait((unsigned int)event->id); }

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

/* ---- cluster entry ---------------------------------------------------------------------- */

void at_target_master(void); /* the back-end's application (main.c) */

int at_target_cluster_main(void)
{
    if (get_core_id() == 0) {
        fork_quit = 0;
        at_target_master();
        fork_quit = 1;
        synch_barrier(); /* release the workers for good */
    } else {
        at_target_worker_loop();
    }
    return 0;
}
