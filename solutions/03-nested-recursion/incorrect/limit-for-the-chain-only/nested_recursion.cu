/* Known wrong: the chain stays in the NULL stream and prepare_deep_recursion sets the pending-launch
 * limit to max_depth plus a margin, sized for the chain alone: for a short chain that is below the
 * default, and Part A, which runs under the same limit, has up to 160 launches pending at once. */
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
    /* WRONG: set, not raised: a chain of depth 1 gets a limit of 65, too few for Part A's tree */
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)max_depth + 64));
}

/* WHY: a level launched into the NULL stream is pending until its own child completes, so at the
 * bottom of the chain every ancestor holds a slot of the pending-launch pool: max_depth of them.
 * prepare_deep_recursion sets the limit to that plus a margin before the first launch. */
