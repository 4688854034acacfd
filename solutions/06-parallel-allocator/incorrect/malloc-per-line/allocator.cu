/* Known wrong: Part C still allocates every line's vertices with device malloc, one call per line,
 * instead of taking them from the pool. */
#include "allocator.h"

/* Part B, step 1. One index per calling thread, warp-aggregated:
 *   the active threads of the warp elect a leader; the leader checks the bound, then takes as many
 *   indices as the warp has active threads with ONE atomicAdd; it hands the first of them to the
 *   others with a shuffle; each thread adds its rank among the active threads. */
__device__ unsigned int counter_take(bounded_counter_t *counter)
{
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
}

/* Part C, step 4. n consecutive indices, all or nothing. */
__device__ unsigned int counter_take_many(bounded_counter_t *counter, unsigned int n)
{
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
}

/* Part B, step 2. A slot of the pool, or NULL. */
__device__ void *pool_alloc(typed_pool_t *pool)
{
    unsigned int index = counter_take(&pool->counter);
    if (index == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)index * pool->slot_bytes;
}

/* Part C, step 4. n consecutive slots, or NULL. */
__device__ void *pool_alloc_many(typed_pool_t *pool, unsigned int n)
{
    unsigned int first = counter_take_many(&pool->counter, n);
    if (first == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)first * pool->slot_bytes;
}

/* Part C, step 5. The child: one thread per vertex of one line. */
__global__ void fill_vertices(bezier_line_t *line, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) /* the last block is partly past the end of the line */
        line->vertices[i] = bezier_point(line, i, n);
}

/* Part C, step 5. The parent: one thread per line; vertices from the pool, not from malloc. */
__global__ void collect_vertices(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                                 typed_pool_t *pool)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    (void)pool;
    line->vertices = (float2 *)malloc(sizeof(float2) * (size_t)n); /* one allocation per line */
    if (line->vertices == NULL)
        return;
    fill_vertices<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(line, n);
    KIT_CHECK_LAUNCH();
}
