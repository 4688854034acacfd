/* Hostile submission for the kit's integrity tests: Part B launches nothing at run time; the first level reports every level of the chain itself and calls KIT_CHECK_LAUNCH() once for each level it did not launch, and a launch that never runs keeps the PTX looking right */
#include "nested_recursion.h"

/* Part A: the recursive hello world. Each level halves the thread count; thread 0 of each block
 * launches the next level; a level of one thread launches nothing. */
__global__ void nested_hello(int size, int depth)
{
    report_hello(depth);
    int half = size / 2;
    if (threadIdx.x == 0 && half > 0) {
        nested_hello<<<1, half>>>(half, depth + 1);
        KIT_CHECK_LAUNCH();
    }
}

/* Levels depth .. max_depth are reported from here, with one launch check per level after the first,
 * as many as a real chain would make; the launch below is never reached (max_depth >= 1). */
__global__ void deep_chain(int depth, int max_depth)
{
    for (int d = depth; d <= max_depth; d++)
        report_level(d);
    for (int d = depth; d < max_depth; d++)
        KIT_CHECK_LAUNCH();
    if (max_depth < 0) {
        deep_chain<<<1, 1, 0, cudaStreamTailLaunch>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    }
}

/* Called by the harness before any kernel runs. */
void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: each level tail-launches the next instead of launching it into the NULL stream. A tail launch
 * starts only after the launching grid has finished, so a level is complete, and its slot in the
 * pending-launch pool is free, before the next one runs: at most one launch of the chain is pending
 * at a time, whatever its depth, and the default limit of 2,048 is never approached. (Raising the
 * limit to max_depth plus a margin in prepare_deep_recursion would also work, but it reserves device
 * memory for every level and every ancestor would stay pending.) */
