/* Hostile submission for the kit's integrity tests: every level below the first writes through a wild pointer on the device */
#include "nested_recursion.h"

__global__ void nested_hello(int size, int depth)
{
    report_hello(depth);
    if (depth > 0 && threadIdx.x == 0)
        *((int *)0x10 + depth) = size; /* an illegal address: the child grid faults */
    int half = size / 2;
    if (threadIdx.x == 0 && half > 0) {
        nested_hello<<<1, half>>>(half, depth + 1);
        KIT_CHECK_LAUNCH();
    }
}

/* Part B: the chain, tail-launched (a correct fix). */
__global__ void deep_chain(int depth, int max_depth)
{
    report_level(depth);
    if (depth < max_depth) {
        deep_chain<<<1, 1, 0, cudaStreamTailLaunch>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    }
}

void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: each level tail-launches the next instead of launching it into the NULL stream. A tail launch
 * starts only after the launching grid has finished, so at most one launch of the chain is pending at
 * a time, whatever its depth, and the default pending-launch limit of 2,048 is never approached. */
