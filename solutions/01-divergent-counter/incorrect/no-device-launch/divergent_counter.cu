/* Known wrong: the leaders' loops are rewritten by hand, still inside the parent. The counter is
 * right, but no child grid is ever launched: the divergence is still there. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0)
        x = 5;
    if (leader)
        atomicAdd(foo, (unsigned long long)n); /* same total as n single increments */
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess && threadIdx.x == 0)
        x = 0;
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
