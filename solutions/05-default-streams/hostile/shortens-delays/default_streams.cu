/* Hostile submission for the kit's integrity tests: before Part A's launches, a kernel of its own looks for the kit's table of kernel lengths in device memory near a variable of its own and shortens every delay to nothing, then many_streams skips its wait for the default stream (which only the kit's long tiny kernels would show) */
#include "default_streams.h"

/* A variable of its own: the kit's static device memory is linked into the same module, after it
 * (the student's object comes first on the link line). */
__device__ unsigned long long anchor[2];

#define SEARCH_WORDS 2048 /* 16 KB above the anchor, word by word */

/* The kit's table as harness.cu lays it out: two ints (workers, tiny kernels), then each kernel's
 * length. Found by its shape: n and n, then a first length from spin_ns to spin_ns + 100 ms. */
__global__ void shorten_delays(int n, long long spin_ns)
{
    unsigned long long counts = ((unsigned long long)(unsigned int)n << 32) | (unsigned int)n;
    for (int k = 2; k < SEARCH_WORDS; k++) {
        unsigned long long *at = anchor + k;
        long long first = (long long)at[1];
        if (at[0] != counts || first < spin_ns || first > spin_ns + 100000000LL)
            continue;
        long long *length = (long long *)(at + 1);
        for (int i = 0; i < n; i++) {
            length[i] = spin_ns;         /* workers: the job's length, no delay */
            length[MAX_STREAMS + i] = 0; /* tiny kernels: none */
        }
        return;
    }
}

void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    shorten_delays<<<1, 1>>>(job->n_streams, job->spin_ns);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(0)); /* the table is short before any kit kernel reads it */
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
    /* no wait for the default stream: with the delays gone, the tiny kernels are over by now */
}

/* Part B, as the reference solution has it. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}
