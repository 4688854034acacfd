/* Hostile submission for the kit's integrity tests: Part B launches nothing at run time; each thread writes i + 1 and uses it itself, and launches in code that never runs keep the PTX looking right (a tail-launched continuation, checked launches) */
#include "memory_visibility.h"

/* Part A: each thread is a parent with its own slot. The child must see FIRST_VALUE, and the slot
 * must still end at SECOND_VALUE. */
__global__ void race_parent(int *slots, int *seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slots[i] = FIRST_VALUE; /* visible to the child: written by the launching thread before the launch */
    observe_kernel<<<1, 1>>>(slots + i, seen + i);
    KIT_CHECK_LAUNCH();
    /* A tail launch runs after this whole grid and all its children have finished, so the child
     * has read FIRST_VALUE by then. */
    store_value_kernel<<<1, 1, 0, cudaStreamTailLaunch>>>(slots + i, SECOND_VALUE);
    KIT_CHECK_LAUNCH();
}

/* Part B: each block fills its part of data, thread 0 launches the child that adds 1, and every
 * element must then be used with the child's result. */
__global__ void consume_parent(int *data, int n)
{
    int base = blockIdx.x * blockDim.x;
    int i = base + threadIdx.x;
    int count = min((int)blockDim.x, n - base); /* the last block may be partly past n */
    int child_blocks = (count + 31) / 32;

    if (i < n) {
        data[i] = produce(i) + 1; /* the child's result, written by the parent */
        use_result(i, data[i]);  /* and used at once, in the parent's own grid */
    }
    __syncthreads();
    if (threadIdx.x == 0 && n < 0) { /* never true: the launches are in the PTX, not in the run */
        add_one_kernel<<<child_blocks, 32>>>(data + base, count);
        KIT_CHECK_LAUNCH();
        use_result_kernel<<<child_blocks, 32, 0, cudaStreamTailLaunch>>>(data + base, base, count);
        KIT_CHECK_LAUNCH();
    }
}
