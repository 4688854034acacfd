/* Known wrong: before launching the next level, thread 0 makes sure the block's last thread has said
 * hello, through one flag per thread on the device heap, numbered from 1: thread t sets said[t + 1],
 * so the last thread writes said[blockDim.x], one past the blockDim.x ints malloc gave. The flags read
 * back right, so the records and launches come out right; memcheck, which checks the device heap,
 * sees the write. */
#include "nested_recursion.h"

__global__ void nested_hello(int size, int depth)
{
    __shared__ int *said; /* a flag per thread, on the device heap */
    report_hello(depth);
    if (threadIdx.x == 0)
        said = (int *)malloc(blockDim.x * sizeof(int));
    __syncthreads();
    if (said != NULL)
        said[threadIdx.x + 1] = 1; /* wrong: flags numbered from 1 */
    __syncthreads();
    int half = size / 2;
    if (threadIdx.x == 0 && half > 0 && (said == NULL || said[blockDim.x])) {
        nested_hello<<<1, half>>>(half, depth + 1);
        KIT_CHECK_LAUNCH();
    }
    if (threadIdx.x == 0)
        free(said);
}

__global__ void deep_chain(int depth, int max_depth)
{
    report_level(depth);
    if (depth < max_depth) {
        deep_chain<<<1, 1, 0, cudaStreamTailLaunch>>>(depth + 1, max_depth);
        KIT_CHECK_LAUNCH();
    }
}

void prepare_deep_recursion(int max_depth)
{
    (void)max_depth;
}

/* WHY: each level tail-launches the next instead of launching it into the NULL stream. A tail launch
 * starts only after the launching grid has finished, so a level is complete, and its slot in the
 * pending-launch pool is free, before the next one runs: at most one launch of the chain is pending
 * at a time, whatever its depth, and the default limit of 2,048 is never approached. */
