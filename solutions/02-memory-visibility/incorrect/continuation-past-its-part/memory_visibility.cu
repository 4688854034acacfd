/* Lab 02: memory visibility between a parent and its child grids (CUDA 12/13, "CDP2").
 *
 * Two consistency points connect a parent thread and its child grid:
 *  1. at the launch: everything the launching thread wrote before the launch is visible to the child
 *     (writes by other threads of the block only if a __syncthreads() orders them before it);
 *  2. at the child's completion: the child's writes are visible to whatever runs after it is known
 *     to be complete - a grid tail-launched by the parent, the next kernel, or the host.
 * A running parent thread never gets point 2 on CUDA 12+: device-side cudaDeviceSynchronize() is
 * gone. Read handouts/02-memory-visibility.md first.
 *
 * You edit this file only.
 */
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

    if (i < n)
        data[i] = produce(i);
    __syncthreads(); /* the other threads' writes now precede thread 0's launch */
    if (threadIdx.x == 0) {
        add_one_kernel<<<child_blocks, 32>>>(data + base, count);
        KIT_CHECK_LAUNCH();
        /* The continuation runs after this grid and all its children: it sees every child write. */
        use_result_kernel<<<child_blocks, 32, 0, cudaStreamTailLaunch>>>(data + base, base, (int)blockDim.x); /* WRONG: the last block's part is shorter */
        KIT_CHECK_LAUNCH();
    }
}
