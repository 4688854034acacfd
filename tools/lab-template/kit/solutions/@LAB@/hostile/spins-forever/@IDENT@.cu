/* Hostile submission for the kit's integrity tests: thread 0 of every block waits for its child on a flag that nothing ever sets */
#include "@IDENT@.h"

/* A home-made wait for the child: the kit's child never sets this flag. */
__device__ int child_finished;

__global__ void launch_parts(int *out, int n)
{
    if (threadIdx.x == 0) {
        fill_part<<<1, blockDim.x>>>(out, blockIdx.x * blockDim.x, n);
        KIT_CHECK_LAUNCH();
        while (*(volatile int *)&child_finished == 0)
            ;
    }
}
