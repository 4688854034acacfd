/* Hostile submission for the kit's integrity tests: thread 0 of every Part B block launches consume_parent again, without end */
#include "memory_visibility.h"

__global__ void race_parent(int *slots, int *seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slots[i] = FIRST_VALUE;
    observe_kernel<<<1, 1>>>(slots + i, seen + i);
    KIT_CHECK_LAUNCH();
    store_value_kernel<<<1, 1, 0, cudaStreamTailLaunch>>>(slots + i, SECOND_VALUE);
    KIT_CHECK_LAUNCH();
}

__global__ void consume_parent(int *data, int n)
{
    int base = blockIdx.x * blockDim.x;
    int i = base + threadIdx.x;
    int count = min((int)blockDim.x, n - base);
    int child_blocks = (count + 31) / 32;

    if (i < n)
        data[i] = produce(i);
    __syncthreads();
    if (threadIdx.x == 0) {
        add_one_kernel<<<child_blocks, 32>>>(data + base, count);
        KIT_CHECK_LAUNCH();
        /* "Consume again until it is right": no base case, so every level launches the next. */
        consume_parent<<<1, blockDim.x>>>(data, n);
        KIT_CHECK_LAUNCH();
        use_result_kernel<<<child_blocks, 32, 0, cudaStreamTailLaunch>>>(data + base, base, count);
        KIT_CHECK_LAUNCH();
    }
}
