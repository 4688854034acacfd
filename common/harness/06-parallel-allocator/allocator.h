/* allocator.h - Lab 06's contract between the kit and the student's file.
 *
 * A bounded counter hands out indices 0, 1, ..., capacity - 1, each exactly once, to any number of
 * threads asking at the same time, and answers COUNTER_FULL once they are gone. A typed pool puts
 * a bulk array of equal slots behind a counter: a slot is an index into the array, so taking one
 * costs one atomic (one per warp, aggregated) instead of a device malloc. The harness runs
 *
 *   Part A (kit-owned, measured and reported): per-object device malloc against one bulk
 *          allocation carved into slots, and against your pool_alloc;
 *   Part B: counter_take / pool_alloc from a full grid, with 4x more requests than slots, and
 *          from 2^32 + more requests in all (a 32-bit counter must not wrap); also from warps whose
 *          asking lanes have gaps (odd lanes, one lane, random masks), from 2-D blocks whose
 *          blockDim.x is not a multiple of 32 and whose last warp is partial, from pools whose slot
 *          array passes 4 GiB, and pool_alloc_many for 1 .. M slots per request; every answer is
 *          checked on the host with a bitmap; counter_take timed against the kit's
 *          one-atomic-per-thread counter;
 *   Part C: collect_vertices<<<ceil(n_lines / 64), 64>>>(lines, n_lines, factor, max_vertices, pool)
 *          with Lab 04's lines: every line's vertices in one vertex pool, filled by a child grid;
 *          the kit counts the calls of bezier_point (each vertex exactly once), the launches
 *          checked with KIT_CHECK_LAUNCH() (one per line that got vertices) and the child grids that
 *          ran (by their grid identity: one per checked launch that did not fail).
 * Every run of your code in a timing loop is checked too, outside the timed region.
 */
#ifndef ALLOCATOR_H
#define ALLOCATOR_H

#include "kit_check.h"
/* Lab 04's lines: bezier_line_t, vertex_count(), bezier_point(), MIN_VERTICES. */
#include "kit_bezier.h"

/* counter_take's and counter_take_many's answer when no index is left. Not an error. */
#define COUNTER_FULL 0xffffffffu
/* The kit never asks for a larger capacity. With a bound check before the atomic, `next` passes
 * capacity by at most the requests in flight at once (a few hundred thousand on the largest GPUs),
 * so it never comes near 2^32. */
#define KIT_MAX_CAPACITY (1u << 30)
#define COLLECT_THREADS 64 /* threads per block of collect_vertices: one per line */

typedef struct {
    unsigned int next;     /* the first index not yet handed out; the kit sets it to 0 */
    unsigned int capacity; /* indices are 0 .. capacity - 1 */
} bounded_counter_t;

/* A pool of capacity equal slots of slot_bytes bytes each, for one type:
 * slot_bytes = sizeof(the type). The kit allocates slots (one bulk allocation) and sets
 * counter = {0, capacity}. Slot i is at slots + i * slot_bytes. After the kernels have finished,
 * the allocated slots are 0 .. min(counter.next, capacity) - 1: the host walks them from there. */
typedef struct {
    bounded_counter_t counter;
    unsigned int slot_bytes;
    char *slots;
} typed_pool_t;

/* One slot for a pointer of the pool's type: float2 *v = POOL_ALLOC(&pool, float2); */
#define POOL_ALLOC(pool, type) ((type *)pool_alloc(pool))
#define POOL_ALLOC_MANY(pool, type, n) ((type *)pool_alloc_many((pool), (n)))

/* Kit-owned. This thread's lane in its warp (0..31), from its index in the block: warps are made
 * of consecutive threads, x fastest, then y, then z. */
static __device__ __forceinline__ unsigned int kit_lane_id(void)
{
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
}

/* Kit-owned. Device malloc, counted (the harness reports how many calls, and how many failed).
 * Part A uses it. Your file needs no device malloc at all. */
__device__ void *kit_device_malloc(size_t bytes);

/* ---- Written by the student (allocator.cu) ---- */

/* Part B. One index in [0, capacity) for the calling thread, never handed out before, or
 * COUNTER_FULL. Any number of threads of any grid may call it at once, from any branch; the
 * active threads of a warp must share one atomic operation. */
__device__ unsigned int counter_take(bounded_counter_t *counter);
/* Part C. n consecutive indices for the calling thread: the first of them, or COUNTER_FULL when
 * fewer than n are left (all or nothing: never full while n are left). n >= 1. Called by a few
 * thousand threads at once, from any branch. */
__device__ unsigned int counter_take_many(bounded_counter_t *counter, unsigned int n);
/* Part B. A slot of the pool (counter_take), or NULL when the pool is full. The slot array may pass
 * 4 GiB: compute offsets in size_t. */
__device__ void *pool_alloc(typed_pool_t *pool);
/* Part C. n consecutive slots (counter_take_many), or NULL when they do not fit. */
__device__ void *pool_alloc_many(typed_pool_t *pool, unsigned int n);

/* Part C. One thread per line: n = vertex_count(...) into n_vertices, n vertices from the pool
 * (NULL when the pool is full: that line then has no vertices and no child), and a child grid
 * fill_vertices of ceil(n / 32) blocks of 32 that computes them (each vertex once, by the child),
 * launched into cudaStreamFireAndForget or a stream of the thread's own and checked with
 * KIT_CHECK_LAUNCH() right after it. No device malloc. */
__global__ void collect_vertices(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                                 typed_pool_t *pool);
__global__ void fill_vertices(bezier_line_t *line, int n);

#endif /* ALLOCATOR_H */
