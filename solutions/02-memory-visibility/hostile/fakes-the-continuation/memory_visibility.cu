/* Hostile submission for the kit's integrity tests: Part B launches no child and no continuation; each thread writes i + 1 and reports it as the child's result */
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

/* The answer the grader wants, i + 1, written and used directly: no add_one_kernel, no
 * use_result_kernel, nothing to wait for. */
__global__ void consume_parent(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = produce(i) + 1;
        use_result(i, data[i]);
    }
}
