/* Known wrong: thread 0 launches the child, then spins until the counter reaches a value no thread
 * ever writes (a stand-in for "wait for the child by polling its result"). The grid never ends;
 * the grader must stop it at its time limit and report a hang, without hanging itself. */
#include "divergent_counter.h"

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        x = 5;
        entry_kernel<<<1, blockDim.x / 32>>>(foo, n);
        KIT_CHECK_LAUNCH();
        while (*(volatile unsigned long long *)foo != ~0ULL) {
        }
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
