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
#ifdef KIT_STARTER
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
#else
    unsigned int active = __activemask();
    int leader = __ffs(active) - 1;
    unsigned int lane = kit_lane_id();
    unsigned int rank = __popc(active & ((1u << lane) - 1u)); /* active lanes below this one */
    unsigned int capacity = counter->capacity;
    unsigned int first = COUNTER_FULL;
    if ((int)lane == leader) {
        /* Once the counter has passed capacity, no atomic at all: `next` stops growing, so it
         * cannot wrap around 2^32 and start handing out small indices again. */
        if (*(volatile unsigned int *)&counter->next < capacity)
            first = atomicAdd(&counter->next, (unsigned int)__popc(active));
    }
    first = __shfl_sync(active, first, leader);
    if (first == COUNTER_FULL || first >= capacity || rank >= capacity - first)
        return COUNTER_FULL; /* the warp at the boundary gets what is left, in rank order */
    return first + rank;
#endif /* KIT_STARTER */
}

/* Part C, step 4. n consecutive indices, all or nothing. */
__device__ unsigned int counter_take_many(bounded_counter_t *counter, unsigned int n)
{
#ifdef KIT_STARTER
    /* TODO (step 4): read next (volatile); while next <= capacity and n <= capacity - next, try
     * atomicCAS(&counter->next, next, next + n): it returns the value it found; if that is the value
     * you read, the n indices from it are yours; otherwise retry with the value it returned.
     * When they do not fit, COUNTER_FULL, without touching the counter. */
    (void)counter; (void)n;
    return COUNTER_FULL;
#else
    unsigned int capacity = counter->capacity;
    unsigned int seen = *(volatile unsigned int *)&counter->next;
    /* Compare-and-swap moves `next` only when all n fit: it never passes capacity here, and a
     * line that does not fit leaves the room to lines that do. */
    while (seen <= capacity && n <= capacity - seen) {
        unsigned int found = atomicCAS(&counter->next, seen, seen + n);
        if (found == seen)
            return seen;
        seen = found; /* another thread moved it first: try again from where it is now */
    }
    return COUNTER_FULL;
#endif /* KIT_STARTER */
}

/* Part B, step 2. A slot of the pool, or NULL. */
__device__ void *pool_alloc(typed_pool_t *pool)
{
#ifdef KIT_STARTER
    /* TODO (step 2): index = counter_take(&pool->counter); NULL when COUNTER_FULL, otherwise the
     * address of slot index: pool->slots + index * slot_bytes (compute it in size_t: the kit's
     * pools pass 4 GiB, where 32 bits overflow). */
    (void)pool;
    return NULL;
#else
    unsigned int index = counter_take(&pool->counter);
    if (index == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)index * pool->slot_bytes;
#endif /* KIT_STARTER */
}

/* Part C, step 4. n consecutive slots, or NULL. */
__device__ void *pool_alloc_many(typed_pool_t *pool, unsigned int n)
{
#ifdef KIT_STARTER
    /* TODO (step 4): as pool_alloc, with counter_take_many (the offset in size_t here too). */
    (void)pool; (void)n;
    return NULL;
#else
    unsigned int first = counter_take_many(&pool->counter, n);
    if (first == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)first * pool->slot_bytes;
#endif /* KIT_STARTER */
}

/* Part C, step 5. The child: one thread per vertex of one line. */
__global__ void fill_vertices(bezier_line_t *line, int n)
{
#ifdef KIT_STARTER
    /* TODO (step 5): vertex i = blockIdx.x * blockDim.x + threadIdx.x, if i < n:
     * line->vertices[i] = bezier_point(line, i, n). Each vertex exactly once: the kit counts the
     * calls of bezier_point. */
    (void)line; (void)n;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) /* the last block is partly past the end of the line */
        line->vertices[i] = bezier_point(line, i, n);
#endif /* KIT_STARTER */
}

/* Part C, step 5. The parent: one thread per line; vertices from the pool, not from malloc. */
__global__ void collect_vertices(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                                 typed_pool_t *pool)
{
#ifdef KIT_STARTER
    /* TODO (step 5): line i = blockIdx.x * blockDim.x + threadIdx.x (if < n_lines):
     *  - n = vertex_count(...), stored in n_vertices;
     *  - vertices = POOL_ALLOC_MANY(pool, float2, n); when NULL the pool is full: leave the line
     *    without vertices (NULL) and launch nothing - that is the answer, not an error;
     *  - launch fill_vertices with ceil(n / 32) blocks of 32 (fire-and-forget, or a stream of your
     *    own, as in Lab 04; not the NULL stream) and check the launch with KIT_CHECK_LAUNCH() right
     *    after it. The child computes the vertices; the parent computes none itself. */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices; (void)pool;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    line->vertices = POOL_ALLOC_MANY(pool, float2, (unsigned int)n);
    if (line->vertices == NULL)
        return; /* the pool is full: this line gets no vertices */
    fill_vertices<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(line, n);
    KIT_CHECK_LAUNCH();
#endif /* KIT_STARTER */
}
