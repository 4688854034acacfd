/* Known wrong: the child grid has M blocks of 1 thread (the launch arguments swapped) instead of
 * 1 block of M threads. The counter is right and there is one grid per block. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        x = 5;
        entry_kernel<<<blockDim.x / 32, 1>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
