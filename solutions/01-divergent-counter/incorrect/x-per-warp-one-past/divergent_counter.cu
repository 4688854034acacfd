/* Known wrong: x is kept per warp in shared memory, and thread 0 fills it with a loop that runs one
 * past the end (<= where < belongs): in a block of 32 warps it writes x[32], outside the array. The
 * leaders read the right values; the write past the block's shared memory is what fails (on an H100, the
 * GPU stops the kernel with an illegal address). */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x[32]; /* one per warp: a block has at most 32 */
    int warp = threadIdx.x / 32;
    int leader = threadIdx.x % 32 == 0;

    if (threadIdx.x == 0) {
        int m = blockDim.x / 32;
        for (int w = 0; w <= m; w++)
            x[w] = 5;
        entry_kernel<<<1, m>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x[warp]);
}
