/* Hostile submission for the kit's integrity tests: a device-side waiter on the default stream tail-launches itself until a flag says the tiny kernels queued behind it have run; nothing sets it, so without end */
#include "default_streams.h"

/* Set "when the tiny kernels have run": they are queued after the waiter on the same stream, and
 * nothing sets it. */
__device__ unsigned int tiny_done;

/* Polls the flag and, while it is not set, tail-launches itself to poll again: it never stops. */
__global__ void wait_for_tiny(void)
{
    if (*(volatile unsigned int *)&tiny_done == 0) {
        wait_for_tiny<<<1, 1, 0, cudaStreamTailLaunch>>>();
        KIT_CHECK_LAUNCH();
    }
}

void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    wait_for_tiny<<<1, 1>>>(); /* the default stream, first */
    KIT_CHECK(cudaGetLastError());
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamCreate(&streams[i]));
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(i);
        KIT_CHECK(cudaGetLastError());
        kit_tiny_kernel<<<1, 1>>>(i);
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
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}
