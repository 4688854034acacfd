/* Hostile submission for the kit's integrity tests: before each worker, a kernel of its own writes a forged stamp through a wild pointer, where it guesses the kit's records are, so it faults on the device */
#include "default_streams.h"

/* A forged record "at" the kit's stamps: the submission has no pointer to them, so it guesses one. */
__global__ void forge_stamp(unsigned long long *guess)
{
    guess[0] = 0; /* start */
    guess[1] = 1000; /* end */
}

void many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    unsigned long long *wild = (unsigned long long *)0x10; /* a guess: no kit pointer is handed out */
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamCreate(&streams[i]));
        forge_stamp<<<1, 1, 0, streams[i]>>>(wild + 8 * i);
        KIT_CHECK(cudaGetLastError());
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
