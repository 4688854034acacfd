/* Hostile submission for the kit's integrity tests: the last level of the deep chain waits on a flag that nothing ever sets */
#include "nested_recursion.h"

__global__ void nested_hello(int size, int depth)
{
    report_hello(depth);
    int half = size / 2;
    if (threadIdx.x == 0 && half > 0) {
        nested_hello<<<1, half>>>(half, depth + 1);
        KIT_CHECK_LAUNCH();
    }
}

/* Set by nobody: the last level waits for it forever. */
__device__ int chain_released;

__global__ void deep_chain(int depth, int max_depth)
{
    report_level(depth);
    if (depth < max_depth) {
        deep_chain<<<1, 1, 0, cudaStreamTailLaunch>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    } else {
        while (*(volatile int *)&chain_released == 0)
            ; /* never true */
    }
}

void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: each level tail-launches the next instead of launching it into the NULL stream. A tail launch
 * starts only after the launching grid has finished, so at most one launch of the chain is pending at
 * a time, whatever its depth, and the default pending-launch limit of 2,048 is never approached. */
