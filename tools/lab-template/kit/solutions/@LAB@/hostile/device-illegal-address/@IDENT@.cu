/* Hostile submission for the kit's integrity tests: thread 0 of every block hands its child a wild pointer for out, so every child faults on the device */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
    (void)out;
    if (threadIdx.x == 0) {
        int *wild = (int *)0x10; /* an illegal address: the child faults */
        fill_part<<<1, blockDim.x>>>(wild, blockIdx.x * blockDim.x, n);
        KIT_CHECK_LAUNCH();
    }
}
