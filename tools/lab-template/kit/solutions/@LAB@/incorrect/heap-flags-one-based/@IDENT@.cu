/* Known-wrong: before launching, thread 0 makes sure the block's last thread has started, through one
 * flag per thread on the device heap, numbered from 1: thread t sets said[t + 1], so the last thread
 * writes said[blockDim.x], one past the blockDim.x ints malloc gave. The flags read back right, so the
 * launch and every value come out right; memcheck, which checks the device heap, sees the write. */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
    __shared__ int *said; /* a flag per thread, on the device heap */
    if (threadIdx.x == 0)
        said = (int *)malloc(blockDim.x * sizeof(int));
    __syncthreads();
    if (said != NULL)
        said[threadIdx.x + 1] = 1; /* wrong: flags numbered from 1 */
    __syncthreads();
    if (threadIdx.x == 0 && (said == NULL || said[blockDim.x])) {
        fill_part<<<1, blockDim.x>>>(out, blockIdx.x * blockDim.x, n);
        KIT_CHECK_LAUNCH();
    }
    if (threadIdx.x == 0)
        free(said);
}
