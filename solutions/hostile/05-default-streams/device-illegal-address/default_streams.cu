/* Hostile submission for the kit's integrity tests: launches the kit's workers with a wild stamp pointer, so they fault on the device */
#include "default_streams.h"

void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    kit_stamp_t *wild = (kit_stamp_t *)0x10; /* not job->worker_stamps: the worker reads and writes through it */
    for (int i = 0; i < job->n_streams; i++)
        KIT_CHECK(cudaStreamCreate(&streams[i]));
    for (int i = 0; i < job->n_streams; i++) {
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(wild + i, job->spin_ns);
        KIT_CHECK(cudaGetLastError());
        kit_tiny_kernel<<<1, 1>>>(&job->default_stamps[i]);
        KIT_CHECK(cudaGetLastError());
    }
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamSynchronize(streams[i]));
        KIT_CHECK(cudaStreamDestroy(streams[i]));
    }
    KIT_CHECK(cudaStreamSynchronize(0));
}

/* Part B, as the reference solution has it. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->stamp, job->spin_ns);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}
