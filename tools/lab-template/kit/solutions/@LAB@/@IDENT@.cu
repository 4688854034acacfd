/* Lab @NN@: @WORDS@.
 *
 * A placeholder exercise, from the kit's lab template: the lab's own replaces it. The harness's array
 * out has n elements; each block of launch_parts owns blockDim.x of them, from blockIdx.x * blockDim.x.
 * Thread 0 of each block launches the kit's child kernel fill_part as one grid of one block of
 * blockDim.x threads, which writes the block's part. The handout walks through it:
 * handouts/@LAB@.md.
 *
 * You edit this file only. The harness launches launch_parts<<<blocks, threads>>>(out, n).
 */
#include "@IDENT@.h"

__global__ void launch_parts(int *out, int n)
{
#ifdef KIT_STARTER
    /* TODO: thread 0 of the block launches fill_part with 1 block of blockDim.x threads for the
     * block's part of out (it starts at blockIdx.x * blockDim.x), passing out and n, and checks the
     * launch right after it with KIT_CHECK_LAUNCH() (handout section 2.2). */
    (void)out;
    (void)n;
#else
    if (threadIdx.x == 0) {
        int first = blockIdx.x * blockDim.x;
        fill_part<<<1, blockDim.x>>>(out, first, n);
        KIT_CHECK_LAUNCH();
    }
#endif /* KIT_STARTER */
}
