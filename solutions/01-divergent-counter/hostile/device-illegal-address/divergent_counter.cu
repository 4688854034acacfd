/* Hostile submission for the kit's integrity tests: writes through a wild pointer on the device */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    unsigned long long *wild = (unsigned long long *)0x10;
    if (threadIdx.x == 0)
        *wild = (unsigned long long)n; /* an illegal address: the kernel faults */
    atomicAdd(foo, 1ULL);
}
