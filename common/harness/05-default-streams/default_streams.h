/* default_streams.h - Lab 05's contract between the kit and the student's file.
 *
 * The kit owns the kernels: kit_worker_kernel spins for a set time measured on %globaltimer and
 * stamps its start and end; kit_tiny_kernel does no work of its own and stamps. The student owns the host side: which
 * streams the kernels go to, and what each host thread waits for. In some of the grader's cases the
 * kit makes kernels run longer than their arguments say (kit_stamp_t.extra_ns, set by the harness
 * before each call): a real wait still returns after them, a sleep of about the job's length does
 * not. The harness calls
 *
 *     many_streams(&streams_job)                        Part A, from one host thread
 *     thread_launch_and_wait(&thread_jobs[i])           Part B, from each of the kit's threads
 *
 * and reads the stamps back to see which kernels ran at the same time.
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
#include "kit_device.h"

#define WORKER_THREADS 64 /* threads per block of kit_worker_kernel (one block per launch) */
#define MAX_STREAMS 32    /* Part A: at most this many streams */
#define MAX_THREADS 32    /* Part B: at most this many host threads */

/* One kernel's record, written by the kernel itself. Times are %globaltimer nanoseconds. */
typedef struct {
    unsigned long long start_ns;
    unsigned long long end_ns;
    unsigned int runs; /* how many times a kernel wrote this record: exactly 1 when all is well */
    unsigned int sm;   /* the SM that ran it, for the curious */
    unsigned int threads, blocks; /* the launch's block and grid size: the kit checks the shapes below */
    long long extra_ns; /* set by the harness before the call, read by the kernel: how much longer
                           than asked it spins (0 unless the case asks for the kit's delays) */
} kit_stamp_t;

/* Part A: one worker kernel per stream, a tiny kernel on the default stream after each. */
typedef struct {
    int n_streams;
    long long spin_ns;           /* how long each worker spins */
    kit_stamp_t *worker_stamps;  /* device memory: worker i writes worker_stamps[i] */
    kit_stamp_t *default_stamps; /* device memory: tiny kernel i writes default_stamps[i] */
} streams_job_t;

/* Part B: what one host thread launches. */
typedef struct {
    int thread_index;
    long long spin_ns; /* (thread_index + 1) x the base length: every thread's kernel differs */
    kit_stamp_t *stamp; /* device memory: this thread's kernel writes it */
} thread_job_t;

static __device__ __forceinline__ unsigned int kit_smid(void)
{
    unsigned int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

/* Kit-owned. Launch as kit_worker_kernel<<<1, WORKER_THREADS, 0, stream>>>(stamp, spin_ns).
 * Thread 0 spins for spin_ns plus the kit's stamp->extra_ns on the global timer (not on clock
 * cycles, so the length does not depend on the GPU's clock) and stamps start and end; the other
 * threads leave at once. */
static __global__ void kit_worker_kernel(kit_stamp_t *stamp, long long spin_ns)
{
    if (threadIdx.x != 0)
        return;
    long long length = spin_ns + stamp->extra_ns; /* read before the start stamp: not part of the length */
    unsigned long long start = kit_globaltimer_ns();
    unsigned long long end = kit_spin_ns(start, length);
    stamp->start_ns = start;
    stamp->end_ns = end;
    stamp->sm = kit_smid();
    stamp->threads = blockDim.x;
    stamp->blocks = gridDim.x;
    atomicAdd(&stamp->runs, 1u);
}

/* Kit-owned. Launch as kit_tiny_kernel<<<1, 1>>>(stamp): the seed's "dummy" kernel on the default
 * stream, which does no work but stamps when it ran (and spins for the kit's stamp->extra_ns, 0
 * unless the case asks for the kit's delays). */
static __global__ void kit_tiny_kernel(kit_stamp_t *stamp)
{
    long long extra = stamp->extra_ns; /* before the start stamp: with no delay, start to end stays tiny */
    unsigned long long start = kit_globaltimer_ns();
    kit_spin_ns(start, extra);
    stamp->start_ns = start;
    stamp->end_ns = kit_globaltimer_ns();
    stamp->sm = kit_smid();
    stamp->threads = blockDim.x;
    stamp->blocks = gridDim.x;
    atomicAdd(&stamp->runs, 1u);
}

/* Written by the student (default_streams.cu). many_streams returns once every kernel it launched
 * has finished; thread_launch_and_wait returns once its own kernel has finished. */
void many_streams(const streams_job_t *job);
void thread_launch_and_wait(const thread_job_t *job);

/* The kit's legacy versions (legacy.cu, compiled without per-thread default streams). */
void legacy_many_streams(const streams_job_t *job);
void legacy_thread_launch_and_wait(const thread_job_t *job);

#endif /* DEFAULT_STREAMS_H */
