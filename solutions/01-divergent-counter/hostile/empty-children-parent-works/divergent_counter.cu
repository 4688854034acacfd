/* Hostile submission for the kit's integrity tests: thread 0 launches one child grid of the right shape per block, with no work (n = 0), and the leaders do the divergent work themselves through entry_work: foo, the grid count and the shapes all come out right.
 *
 * Lab 01: the divergent counter.
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

    if (threadIdx.x == 0) {
        x = 5;
        int m = blockDim.x / 32;
        entry_kernel<<<1, m>>>(foo, 0); /* a child of the right shape, with nothing to do */
        KIT_CHECK_LAUNCH();
    }
    if (leader)
        entry_work(foo, n); /* the divergent work stays in the parent */

    /* Every thread reaches the barrier: none may return before it. */
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
