/* What both GVSoC benchmark applications share (bench/gvsoc/micro: the hardware; bench/gvsoc/
 * runtime: the target runtime's statements): the counter, the result lines' value lists, the
 * counter-read overhead and the body of a declaration pulp-runtime leaves open. Every result is
 * printed as one line
 *     @ <experiment> key=value ... v=r0,r1,...
 * each comma list holding one raw mcycle difference per repetition (bench/gvsoc_micro.py
 * subtracts the overhead and takes medians). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pulp.h>
#include <stdio.h>

#define REPS 5

/* mchan_v7.h declares plp_dma_getStrides() but never defines it, and gcc warns about that at the
 * end of every translation unit, system header or not (a diagnostic pragma around the #include
 * does not reach it). MCHAN v7 takes the 2D length and stride as two separate command words
 * (plp_dma_cmd_push_2d), so nothing calls this; the body, the one-word packing of earlier MCHAN
 * versions, only completes the declaration. */
static inline unsigned int plp_dma_getStrides(unsigned short stride, unsigned short len)
{
    return ((unsigned int)len << 16) | stride;
}

/* mcycle (CSR 0xB00) keeps counting while the core sleeps on an event, unlike PCCR 0x780. The
 * memory clobber keeps the compiler from moving DMA register accesses across the read. */
static inline unsigned int cycles(void)
{
    unsigned int value;
    __asm__ volatile("csrr %0, 0xB00" : "=r"(value) : : "memory");
    return value;
}

/* Prints " name=v0,v1,..." (no newline). */
static inline void print_list(const char *name, const unsigned int *values, int count)
{
    printf(" %s=", name);
    for (int i = 0; i < count; i++)
        printf(i ? ",%u" : "%u", values[i]);
}

/* Two back-to-back counter reads: the driver subtracts this from every figure. */
static inline void run_overhead(void)
{
    unsigned int values[REPS];
    for (int r = 0; r < REPS; r++) {
        unsigned int t0 = cycles();
        values[r] = cycles() - t0;
    }
    printf("@ overhead");
    print_list("v", values, REPS);
    printf("\n");
}

#endif /* BENCH_COMMON_H */
