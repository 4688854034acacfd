/* Known wrong: x is kept per warp on the device heap, and thread 0 fills it with a loop that runs one
 * past the end (<= where < belongs): it writes x[m], past the m ints malloc gave. The leaders read the
 * right values, so the counter comes out right; memcheck, which checks the device heap, sees the write. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int *x; /* one value per warp, on the device heap */
    int warp = threadIdx.x / 32;
    int leader = threadIdx.x % 32 == 0;

    if (threadIdx.x == 0) {
        int m = blockDim.x / 32;
        x = (int *)malloc(m * sizeof(int));
        if (x != NULL)
            for (int w = 0; w <= m; w++) /* wrong: one past the end */
                x[w] = 5;
        entry_kernel<<<1, m>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0 && x != NULL)
        atomicAdd(foo, (unsigned long long)x[warp]);
    __syncthreads(); /* every leader has read x */
    if (threadIdx.x == 0)
        free(x);
}
