/* Known wrong: every leader launches its own one-thread child grid: M grids of 1 thread per block
 * instead of 1 grid of M threads. With K*M above 2048 the pending-launch pool overflows: on CUDA 12+
 * those launches fail (cudaErrorLaunchPendingCountExceeded), the children never run, and the
 * counter comes out short. Only the launch check in the launching thread sees it. */
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
