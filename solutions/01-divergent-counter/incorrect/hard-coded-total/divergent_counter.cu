/* Known wrong: launches the right child grids, but with no work, and adds the total for the
 * default parameters (K=2, M=32, N=128: 8502) instead of computing it. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    (void)n;
    if (threadIdx.x == 0) {
        entry_kernel<<<1, blockDim.x / 32>>>(foo, 0);
        KIT_CHECK_LAUNCH();
        if (blockIdx.x == 0)
            atomicAdd(foo, 8502ULL);
    }
}
