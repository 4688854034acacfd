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
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0; /* one leader per warp: M leaders per block */

    if (threadIdx.x == 0)
        x = 5;
    /* WRONG: the last thread was meant to launch, but no thread has index blockDim.x: the launch is in
     * the PTX and never runs */
    if (threadIdx.x == blockDim.x) {
        int m = blockDim.x / 32;
        entry_kernel<<<1, m>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }

    /* Every thread reaches the barrier: none may return before it. */
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
