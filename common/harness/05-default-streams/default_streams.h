/* default_streams.h - Lab 05's contract between the kit and the student's file.
 *
 * The kit owns the kernels: kit_worker_kernel spins for a set time measured on %globaltimer;
 * kit_tiny_kernel does no work of its own. The student owns the host side: which streams the
 * kernels go to, and what each host thread waits for. The harness calls
 *
 *     many_streams(&streams_job)                        Part A, from one host thread
 *     thread_launch_and_wait(&thread_jobs[i])           Part B, from each of the kit's threads
 *
 * and reads back when each kernel ran, to see which kernels ran at the same time.
 *
 * A kernel takes only its index: worker i of Part A is kit_worker_kernel(i), its tiny kernel
 * kit_tiny_kernel(i), and Part B's thread t launches kit_worker_kernel(t). The kit's own device code
 * (kit_lab05_worker and kit_lab05_tiny, in the harness) does the rest: it takes the kernel's length
 * from the kit's table, spins, and stamps start and end into kit memory your code is never handed.
 * In some of the grader's cases the kit makes kernels run longer than the job says: a real wait
 * still returns after them, a sleep of about the job's length does not. An index outside the job
 * (a stream or thread it does not have) runs nothing and is counted.
 *
 * The kernels are defined here, static, so that every file that includes this header compiles its
 * own copy, launch code included. That matters for this lab: a <<<>>> launch becomes a call to
 * cudaLaunchKernel inside the kernel's host stub, in the file that DEFINES the kernel, so that
 * file's default-stream setting decides what stream 0 means. With the kernels defined here, your
 * launches follow how your file is compiled (nvcc.flags), and the kit's legacy version follows its.
 */
#ifndef DEFAULT_STREAMS_H
#define DEFAULT_STREAMS_H

#include "kit_check.h"

#define WORKER_THREADS 64 /* threads per block of kit_worker_kernel (one block per launch) */
#define MAX_STREAMS 32    /* Part A: at most this many streams */
#define MAX_THREADS 32    /* Part B: at most this many host threads */

/* Part A: one worker kernel per stream, a tiny kernel on the default stream after each. */
typedef struct {
    int n_streams;
    long long spin_ns; /* how long each worker spins, as the job says */
} streams_job_t;

/* Part B: what one host thread launches. */
typedef struct {
    int thread_index;  /* launch kit_worker_kernel(thread_index) */
    long long spin_ns; /* (thread_index + 1) x the base length, as the job says: every thread's kernel differs */
} thread_job_t;

/* Kit-owned device code (harness.cu): run kernel `index` of the round as the kit set it up, and
 * stamp it. Only thread (0, 0, 0) of a launch does anything. */
__device__ void kit_lab05_worker(int index);
__device__ void kit_lab05_tiny(int index);

/* Kit-owned. Launch as kit_worker_kernel<<<1, WORKER_THREADS, 0, stream>>>(i): the worker of stream
 * i (Part A) or of thread i (Part B). Thread 0 spins for the kernel's length on the global timer
 * (not on clock cycles, so the length does not depend on the GPU's clock); the others leave at once. */
static __global__ void kit_worker_kernel(int index)
{
    kit_lab05_worker(index);
}

/* Kit-owned. Launch as kit_tiny_kernel<<<1, 1>>>(i) after worker i: the seed's "dummy" kernel on the
 * default stream, which does no work but is stamped when it ran. */
static __global__ void kit_tiny_kernel(int index)
{
    kit_lab05_tiny(index);
}

/* Written by the student (default_streams.cu). many_streams returns once every kernel it launched
 * has finished; thread_launch_and_wait returns once its own kernel has finished. */
void many_streams(const streams_job_t *job);
void thread_launch_and_wait(const thread_job_t *job);

/* The kit's legacy versions (legacy.cu, compiled without per-thread default streams). */
void legacy_many_streams(const streams_job_t *job);
void legacy_thread_launch_and_wait(const thread_job_t *job);

#endif /* DEFAULT_STREAMS_H */
