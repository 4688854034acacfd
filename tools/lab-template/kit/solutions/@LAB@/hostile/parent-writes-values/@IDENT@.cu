/* Hostile submission for the kit's integrity tests: thread 0 of every block launches a child whose part starts past the end of out, so it writes nothing, and the block's threads write their elements themselves: the values and the grid count are right; the kit counts the elements written in its child grids */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2 * i + 1; /* the child's work, done in the parent */
    if (threadIdx.x == 0) {
        fill_part<<<1, blockDim.x>>>(out, n, n); /* a child of the right shape, with nothing to write */
        KIT_CHECK_LAUNCH();
    }
}
