/* Hostile submission for the kit's integrity tests: exits with success before main runs */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

__attribute__((constructor)) void leave_early(void)
{
    printf("full marks\n");
    exit(0);
}

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        x = 5;
        entry_kernel<<<1, blockDim.x / 32>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
