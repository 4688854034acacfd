/* Lab 05: default streams.
 *
 * The seed's two programs, with the kit's kernels: eight streams that should run side by side
 * (Part A) and eight host threads that should each run and wait for their own kernel (Part B).
 * Built with no options, both serialize on the legacy default stream. You edit this file and
 * nvcc.flags; the harness, the kernels and the kit's legacy versions are in
 * common/harness/05-default-streams/.
 */
#include "default_streams.h"

/* Part A: one worker kernel in each of job->n_streams streams, and after each a tiny kernel on the
 * default stream (the seed's "dummy" launches). Return once every kernel has finished. */
void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others; the blocking streams created here only wait for the legacy stream, which
     * nothing uses now. The workers therefore run concurrently. (cudaStreamNonBlocking streams
     * would do the same with the legacy default stream.) */
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamCreate(&streams[i]));
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(i);
        KIT_CHECK(cudaGetLastError());
        kit_tiny_kernel<<<1, 1>>>(i); /* the default stream */
        KIT_CHECK(cudaGetLastError());
    }
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamSynchronize(streams[i]));
        KIT_CHECK(cudaStreamDestroy(streams[i]));
    }
    KIT_CHECK(cudaStreamSynchronize(0)); /* the tiny kernels */
}

/* Waits until the GPU is idle. */
static void wait_for_gpu(void)
{
    KIT_CHECK(cudaDeviceSynchronize());
}

/* Part B: called by each of the kit's host threads at the same moment. Launch this thread's kernel
 * on the default stream, then return once it has finished, without waiting for the other threads'
 * kernels. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
    wait_for_gpu();
}
