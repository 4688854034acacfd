/* Hostile submission for the kit's integrity tests: dereferences a null pointer on the host before main */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

__attribute__((constructor)) void crash_on_host(void)
{
    /* The address comes from run time, so the compiler cannot see that it is null. */
    volatile int *nowhere = (volatile int *)strtoul("0", NULL, 10);
    *nowhere = 1;
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
