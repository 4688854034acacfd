/* Hostile submission for the kit's integrity tests: Part A launches none of the kit's kernels; one kernel of its own writes every stamp as if the workers had all run at once, then many_streams returns */
#include "default_streams.h"

/* Every worker "ran" from now for spin_ns, all at once, and every tiny kernel right after: the
 * stamps the kit reads, in the shape it checks, with no kernel of the kit's run at all. */
__global__ void fake_stamps(kit_stamp_t *workers, kit_stamp_t *tiny, int n, long long spin_ns)
{
    int i = threadIdx.x;
    unsigned long long now = kit_globaltimer_ns();
    if (i >= n)
        return;
    workers[i].start_ns = now;
    workers[i].end_ns = now + (unsigned long long)spin_ns;
    workers[i].threads = WORKER_THREADS;
    workers[i].blocks = 1;
    workers[i].runs = 1;
    tiny[i].start_ns = now + (unsigned long long)spin_ns;
    tiny[i].end_ns = now + (unsigned long long)spin_ns + 1000;
    tiny[i].threads = 1;
    tiny[i].blocks = 1;
    tiny[i].runs = 1;
}

void many_streams(const streams_job_t *job)
{
    /* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels below
     * go to this host thread's own default stream, an ordinary stream that does not synchronize
     * with the others, and the workers in their own streams run concurrently. */
    fake_stamps<<<1, MAX_STREAMS>>>(job->worker_stamps, job->default_stamps, job->n_streams, job->spin_ns);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(0));
}

/* Part B, as the reference solution has it. */
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->stamp, job->spin_ns);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}
