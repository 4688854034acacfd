/* Known wrong: x is kept per warp on the device heap, and thread 0 asks malloc for m bytes where m ints
 * are needed (malloc(m), not malloc(m * sizeof(int))): filling x writes past the end of the block it
 * got. Every block writes the same value, so the counter comes out right; memcheck, which checks the
 * device heap, sees the writes. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int *x; /* one value per warp, on the device heap */
    int warp = threadIdx.x / 32;
    int leader = threadIdx.x % 32 == 0;

    if (threadIdx.x == 0) {
        int m = blockDim.x / 32;
        x = (int *)malloc(m); /* wrong: m bytes, for m ints */
        if (x != NULL)
            for (int w = 0; w < m; w++)
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
