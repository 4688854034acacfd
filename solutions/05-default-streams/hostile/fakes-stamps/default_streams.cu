/* Hostile submission for the kit's integrity tests: Part A launches none of the kit's kernels into streams; one grid of its own, a block per kernel, runs the kit's stamping code for every worker and every tiny kernel at once, so that the stamps say they all ran together, then many_streams returns */
#include "default_streams.h"

/* It has no pointer to the kit's stamps (the kit keeps them in its own memory), so it calls the
 * kit's device code itself: block b < n "is" worker b, the others the tiny kernels. */
__global__ void fake_all_at_once(int n)
{
    if (blockIdx.x < (unsigned)n)
        kit_lab05_worker((int)blockIdx.x);
    else
        kit_lab05_tiny((int)blockIdx.x - n);
}

void many_streams(const streams_job_t *job)
{
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    fake_all_at_once<<<2 * job->n_streams, WORKER_THREADS>>>(job->n_streams);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(0));
}

/* Part B, as the reference solution has it. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}
