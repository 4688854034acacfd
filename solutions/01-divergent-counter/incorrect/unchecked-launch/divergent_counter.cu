/* Known wrong: correct in every result, but the device-side launch is never checked, so a failed
 * launch (a full pending-launch pool, a bad configuration) would go unnoticed. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        x = 5;
        entry_kernel<<<1, blockDim.x / 32>>>(foo, n);
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
