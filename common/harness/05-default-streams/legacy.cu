/* Lab 05 (kit-owned): the legacy versions of both parts, the seed's programs as they behave when
 * built with no options. The harness runs them in the same process as the student's versions, so
 * every run shows the two timelines side by side.
 *
 * This file must keep the legacy default stream: the kit's build never passes
 * --default-stream per-thread to it, and the check below stops the build if anything does. The
 * launches also name cudaStreamLegacy outright, so they mean the legacy stream whatever happens.
 */
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "legacy.cu must be compiled without --default-stream per-thread: it is the kit's legacy baseline"
#endif

#include "default_streams.h"

/* Part A as the seed wrote it: created (blocking) streams, each made just before its worker, and a
 * tiny kernel on the legacy default stream after each worker. The legacy stream waits for all
 * blocking streams and they wait for it, so every kernel waits for the one before. */
void legacy_many_streams(const streams_job_t *job)
{
    cudaStream_t streams[MAX_STREAMS];
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamCreate(&streams[i]));
        kit_worker_kernel<<<1, WORKER_THREADS, 0, streams[i]>>>(i);
        KIT_CHECK(cudaGetLastError());
        kit_tiny_kernel<<<1, 1, 0, cudaStreamLegacy>>>(i);
        KIT_CHECK(cudaGetLastError());
    }
    for (int i = 0; i < job->n_streams; i++) {
        KIT_CHECK(cudaStreamSynchronize(streams[i]));
        KIT_CHECK(cudaStreamDestroy(streams[i]));
    }
    KIT_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

/* Part B as the seed wrote it: every host thread launches on the one legacy default stream and
 * waits for it, so the threads' kernels queue behind each other. */
void legacy_thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS, 0, cudaStreamLegacy>>>(job->thread_index);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}
