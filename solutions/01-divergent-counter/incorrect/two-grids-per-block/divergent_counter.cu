/* Known wrong: thread 0 splits the work over two child grids of M threads (n/2 and the rest).
 * The counter is right and each grid has the right shape, but every block launches 2 grids. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        int m = blockDim.x / 32;
        x = 5;
        entry_kernel<<<1, m>>>(foo, n / 2);
        KIT_CHECK_LAUNCH();
        entry_kernel<<<1, m>>>(foo, n - n / 2);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
