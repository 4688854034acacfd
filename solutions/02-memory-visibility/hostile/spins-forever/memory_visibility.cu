/* Hostile submission for the kit's integrity tests: thread 0 of each Part B block waits for its child on a flag that nothing ever sets */
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

/* A home-made device-side cudaDeviceSynchronize(): the kit's child never sets this flag. */
__device__ int child_finished;

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
        while (*(volatile int *)&child_finished == 0)
            ; /* never true: the parent spins forever */
    }
    __syncthreads();
    if (i < n)
        use_result(i, data[i]);
}
