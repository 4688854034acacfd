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
#ifdef KIT_STARTER
    /* TODO (Part A): with the legacy default stream every tiny kernel waits for the workers before
     * it and every later worker waits for it, so the workers run one after another. Make them run
     * at the same time: either with nvcc.flags, or by creating streams that do not synchronize
     * with the legacy stream (handout sections 2.3 and 2.4). Then replace this comment with one
     * that starts "WHY:" and says which you chose and why it works. */
#else
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others; the blocking streams created here only wait for the legacy stream, which
     * nothing uses now. The workers therefore run concurrently. (cudaStreamNonBlocking streams
     * would do the same with the legacy default stream.) */
#endif /* KIT_STARTER */
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamCreate(&streams[i]));
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(i); /* stream i's worker */
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

/* Part B: called by each of the kit's host threads at the same moment. Launch this thread's kernel
 * on the default stream, then return once it has finished, without waiting for the other threads'
 * kernels. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
#ifdef KIT_STARTER
    /* TODO (Part B): this waits for all work on the device, every other thread's kernel included.
     * Wait for this thread's own stream only (handout section 2.5). */
    KIT_CHECK(cudaDeviceSynchronize());
#else
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread)); /* this thread's default stream only */
#endif /* KIT_STARTER */
}
