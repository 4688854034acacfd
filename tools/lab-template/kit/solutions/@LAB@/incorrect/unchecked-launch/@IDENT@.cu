/* Known-wrong: the device-side launch is not checked. */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
    if (threadIdx.x == 0) {
        int first = blockIdx.x * blockDim.x;
        fill_part<<<1, blockDim.x>>>(out, first, n); /* no KIT_CHECK_LAUNCH() after it */
    }
}
