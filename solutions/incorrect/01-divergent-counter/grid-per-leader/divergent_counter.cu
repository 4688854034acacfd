/* Known wrong: every leader launches its own one-thread child grid. The counter is right, but the
 * block launches M grids of 1 thread instead of 1 grid of M threads. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0)
        x = 5;
    if (leader) {
        entry_kernel<<<1, 1>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
