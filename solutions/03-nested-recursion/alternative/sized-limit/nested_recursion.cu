/* An alternative correct solution: the chain stays in the NULL stream, and the host sizes the
 * pending-launch limit from the depth before the first launch. */
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
    /* Every level stays pending until its child completes: max_depth pending at once, plus a margin.
     * Raised, never lowered: the limit holds for the whole device, and Part A runs under it too. */
    size_t limit = 0, needed = (size_t)max_depth + 64;
    KIT_CHECK(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
    if (needed > limit)
        KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, needed));
}

/* WHY: a level launched into the NULL stream is pending until its own child completes, so at the
 * bottom of the chain every ancestor holds a slot of the pending-launch pool: max_depth of them.
 * prepare_deep_recursion raises the limit to that plus a margin before the first launch, which is
 * when the runtime sizes the pool, and never lowers it: Part A's tree runs under the same limit. The
 * cost is device memory reserved for every slot. */
