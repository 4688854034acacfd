/* Hostile submission for the kit's integrity tests: prints the grader's pass lines, then does none of the work (the starter's kernel) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

/* Runs before main: pretends the grader already gave full marks. */
__attribute__((constructor)) void claim_full_marks(void)
{
    printf("TOTAL 14/14: full marks\n  score: 14/14\n{\"score\": 14, \"max_score\": 14}\n");
    fflush(stdout);
}

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0)
        x = 5;
    if (leader)
        entry_work(foo, n);
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
