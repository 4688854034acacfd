/* Hostile submission for the kit's integrity tests: a device-side waiter on the default stream spins until the tiny kernels queued behind it have run, that is forever */
#include "default_streams.h"

/* Spins until every tiny kernel has stamped; they are queued after it on the same stream. */
__global__ void wait_for_tiny(const kit_stamp_t *stamps, int n)
{
    for (int i = 0; i < n; i++)
        while (*(volatile const unsigned int *)&stamps[i].runs == 0)
            ; /* never true */
}

void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    for (int i = 0; i < job->n_streams; i++)
        KIT_CHECK(cudaStreamCreate(&streams[i]));
    wait_for_tiny<<<1, 1>>>(job->default_stamps, job->n_streams); /* the default stream, first */
    KIT_CHECK(cudaGetLastError());
    for (int i = 0; i < job->n_streams; i++) {
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(&job->worker_stamps[i], job->spin_ns);
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
