/* Hostile submission for the kit's integrity tests: thread 0 of every block launches launch_parts again, without end */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
    if (threadIdx.x == 0) {
        fill_part<<<1, blockDim.x>>>(out, blockIdx.x * blockDim.x, n);
        KIT_CHECK_LAUNCH();
        launch_parts<<<gridDim.x, blockDim.x>>>(out, n); /* no base case */
        KIT_CHECK_LAUNCH();
    }
}
