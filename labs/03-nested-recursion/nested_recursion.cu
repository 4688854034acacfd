/* Lab 03: nested recursion and the pending-launch pool (CUDA 12/13).
 * Read handouts/03-nested-recursion.md first. You edit this file only.
 */
#include "nested_recursion.h"

/* Part A: the recursive hello world. Each level halves the thread count; thread 0 of each block
 * launches the next level; a level of one thread launches nothing. */
__global__ void nested_hello(int size, int depth)
{
    report_hello(depth);
    /* TODO (Part A): thread 0 of the block launches nested_hello with 1 block of size / 2 threads
     * at depth + 1, unless size / 2 is 0, and checks the launch (KIT_CHECK_LAUNCH()). */
    (void)size;
}

/* Part B: a chain thousands of levels deep. */
__global__ void deep_chain(int depth, int max_depth)
{
    report_level(depth);
    if (depth < max_depth) {
        /* TODO (Part B): with the default pending-launch limit this chain fails near level 2,048:
         * every level is launched into the NULL stream and stays pending until its child
         * completes. Make it reach max_depth, either here or in prepare_deep_recursion below
         * (handout section 2.5), and explain your choice in the WHY comment at the end of the file. */
        deep_chain<<<1, 1>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    }
}

/* Called by the harness before any kernel runs. */
void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: TODO - which fix did you choose for Part B, and why does it work? */
