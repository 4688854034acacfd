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
    /* TODO (Part A): this write races with the child, which may run before or after it.
     * Keep the second write, but make it happen after the child has read the slot: launch
     * store_value_kernel into the stream cudaStreamTailLaunch (handout section 2.4), and check
     * that launch too. */
    slots[i] = SECOND_VALUE;
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
    /* TODO (Part B): this is the textbook's form, less its device-side cudaDeviceSynchronize(),
     * which no longer compiles (try `make legacy LAB=02`). As it stands the child may start before
     * the other threads have written their elements, and the parent uses data before the child
     * has added 1. Fix both:
     *  - make every thread's write visible to the child: a __syncthreads() before the launch;
     *  - use the result after the child has finished: instead of the use_result() call below,
     *    thread 0 launches use_result_kernel(data + base, base, count) into cudaStreamTailLaunch
     *    (handout sections 3 and 4). Check every launch. */
    if (threadIdx.x == 0) {
        add_one_kernel<<<child_blocks, 32>>>(data + base, count);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (i < n)
        use_result(i, data[i]);
}
