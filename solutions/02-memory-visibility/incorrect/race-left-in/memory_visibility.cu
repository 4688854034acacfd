/* Known wrong: Part B is right, but Part A writes SECOND_VALUE right after the launch, racing with
 * the child, which on an H100/H200 usually reads the slot after that write. */
#include "memory_visibility.h"

/* Part A: each thread is a parent with its own slot. The child must see FIRST_VALUE, and the slot
 * must still end at SECOND_VALUE. */
__global__ void race_parent(int *slots, int *seen)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slots[i] = FIRST_VALUE; /* visible to the child: written by the launching thread before the launch */
    observe_kernel<<<1, 1>>>(slots + i, seen + i);
    KIT_CHECK_LAUNCH();
    slots[i] = SECOND_VALUE; /* races with the child */
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
        use_result_kernel<<<child_blocks, 32, 0, cudaStreamTailLaunch>>>(data + base, base, count);
        KIT_CHECK_LAUNCH();
    }
}
