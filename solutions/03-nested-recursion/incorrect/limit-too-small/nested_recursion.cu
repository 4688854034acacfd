/* Known wrong: raises the pending-launch limit, but only to half the depth: every pending ancestor
 * holds a slot, so the chain still runs out of slots half-way. */
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

/* Part B: a chain thousands of levels deep. */
__global__ void deep_chain(int depth, int max_depth)
{
    report_level(depth);
    if (depth < max_depth) {
        deep_chain<<<1, 1>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    }
}

/* Called by the harness before any kernel runs. */
void prepare_deep_recursion(int max_depth)
{
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)max_depth / 2));
}

/* WHY: the pending-launch limit is raised so that the deep chain has room for its launches. */
