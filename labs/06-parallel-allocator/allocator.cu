/* Lab 06: a parallel allocator - a bounded counter, a typed pool, and output collected from
 * dynamic kernels into one pool.
 *
 * Read handouts/06-parallel-allocator.md first. You edit this file only. The types, POOL_ALLOC,
 * kit_lane_id and Lab 04's vertex_count and bezier_point come from allocator.h (kit-owned).
 */
#include "allocator.h"

/* Part B, step 1. One index per calling thread, warp-aggregated:
 *   the active threads of the warp elect a leader; the leader checks the bound, then takes as many
 *   indices as the warp has active threads with ONE atomicAdd; it hands the first of them to the
 *   others with a shuffle; each thread adds its rank among the active threads. */
__device__ unsigned int counter_take(bounded_counter_t *counter)
{
    /* TODO (step 1):
     *  - active = __activemask(); leader = the lowest set bit (__ffs(active) - 1);
     *    lane = kit_lane_id() (not threadIdx.x % 32: the kit's blocks may be 2-D);
     *    rank = __popc(active & ((1u << lane) - 1)) (active lanes below mine: the active lanes may
     *    have gaps, so lane - leader is not the rank);
     *  - the leader: if counter->next (read it through a volatile pointer) is already >= capacity,
     *    the answer is COUNTER_FULL with no atomic at all (so `next` can never wrap, however many
     *    requests come); otherwise first = atomicAdd(&counter->next, __popc(active));
     *  - first = __shfl_sync(active, first, leader);
     *  - the answer: first + rank if first is not COUNTER_FULL and first + rank < capacity,
     *    else COUNTER_FULL (the range of the warp at the boundary is partly past the end). */
    (void)counter;
    return COUNTER_FULL;
}

/* Part C, step 4. n consecutive indices, all or nothing. */
__device__ unsigned int counter_take_many(bounded_counter_t *counter, unsigned int n)
{
    /* TODO (step 4): read next (volatile); while next <= capacity and n <= capacity - next, try
     * atomicCAS(&counter->next, next, next + n): it returns the value it found; if that is the value
     * you read, the n indices from it are yours; otherwise retry with the value it returned.
     * When they do not fit, COUNTER_FULL, without touching the counter. */
    (void)counter; (void)n;
    return COUNTER_FULL;
}

/* Part B, step 2. A slot of the pool, or NULL. */
__device__ void *pool_alloc(typed_pool_t *pool)
{
    /* TODO (step 2): index = counter_take(&pool->counter); NULL when COUNTER_FULL, otherwise the
     * address of slot index: pool->slots + index * slot_bytes (compute it in size_t: the kit's
     * pools pass 4 GiB, where 32 bits overflow). */
    (void)pool;
    return NULL;
}

/* Part C, step 4. n consecutive slots, or NULL. */
__device__ void *pool_alloc_many(typed_pool_t *pool, unsigned int n)
{
    /* TODO (step 4): as pool_alloc, with counter_take_many (the offset in size_t here too). */
    (void)pool; (void)n;
    return NULL;
}

/* Part C, step 5. The child: one thread per vertex of one line. */
__global__ void fill_vertices(bezier_line_t *line, int n)
{
    /* TODO (step 5): vertex i = blockIdx.x * blockDim.x + threadIdx.x, if i < n:
     * line->vertices[i] = bezier_point(line, i, n). Each vertex exactly once: the kit counts the
     * calls of bezier_point. */
    (void)line; (void)n;
}

/* Part C, step 5. The parent: one thread per line; vertices from the pool, not from malloc. */
__global__ void collect_vertices(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                                 typed_pool_t *pool)
{
    /* TODO (step 5): line i = blockIdx.x * blockDim.x + threadIdx.x (if < n_lines):
     *  - n = vertex_count(...), stored in n_vertices;
     *  - vertices = POOL_ALLOC_MANY(pool, float2, n); when NULL the pool is full: leave the line
     *    without vertices (NULL) and launch nothing - that is the answer, not an error;
     *  - launch fill_vertices with ceil(n / 32) blocks of 32 (fire-and-forget, or a stream of your
     *    own, as in Lab 04; not the NULL stream) and check the launch with KIT_CHECK_LAUNCH() right
     *    after it. The child computes the vertices; the parent computes none itself. */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices; (void)pool;
}
