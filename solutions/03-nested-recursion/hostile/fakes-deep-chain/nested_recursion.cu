/* Hostile submission for the kit's integrity tests: Part B launches nothing; the first level reports every level of the chain itself, in a loop */
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

/* No launch, so no pending-launch limit to fix: levels 0 .. max_depth are reported from here. */
__global__ void deep_chain(int depth, int max_depth)
{
    for (int d = depth; d <= max_depth; d++)
        report_level(d);
}

void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: the chain is reported level by level from one thread instead of being launched, so no launch is
 * ever pending and the pending-launch limit of 2,048 cannot be reached, whatever the depth. */
