/* Hostile submission for the kit's integrity tests: Part A launches nothing; the threads of block 0 report every level of the expected tree themselves */
#include "nested_recursion.h"

/* Records the grader expects: (depth, 0, t) for t < size >> depth, once per top-level block. Block 0's
 * threads have the right blockIdx.x and threadIdx.x, so they report the whole tree at depth 0. */
__global__ void nested_hello(int size, int depth)
{
    report_hello(depth);
    if (blockIdx.x != 0)
        return;
    int level = depth + 1;
    for (int half = size / 2; half > 0; half /= 2, level++)
        for (unsigned int b = 0; b < gridDim.x; b++)
            if ((int)threadIdx.x < half)
                report_hello(level);
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
