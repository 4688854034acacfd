/* Hostile submission for the kit's integrity tests: every block launches the kernel again, without end */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    if (threadIdx.x == 0) {
        diverge_cta<<<gridDim.x, blockDim.x>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
}
