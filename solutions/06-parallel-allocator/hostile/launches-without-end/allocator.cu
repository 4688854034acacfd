/* Hostile submission for the kit's integrity tests: every Part C child tail-launches itself again, without end */
#include "allocator.h"

__device__ unsigned int counter_take(bounded_counter_t *counter)
{
    unsigned int active = __activemask();
    int leader = __ffs(active) - 1;
    unsigned int lane = kit_lane_id();
    unsigned int rank = __popc(active & ((1u << lane) - 1u));
    unsigned int capacity = counter->capacity;
    unsigned int first = COUNTER_FULL;
    if ((int)lane == leader) {
        if (*(volatile unsigned int *)&counter->next < capacity)
            first = atomicAdd(&counter->next, (unsigned int)__popc(active));
    }
    first = __shfl_sync(active, first, leader);
    if (first == COUNTER_FULL || first >= capacity || rank >= capacity - first)
        return COUNTER_FULL;
    return first + rank;
}

__device__ unsigned int counter_take_many(bounded_counter_t *counter, unsigned int n)
{
    unsigned int capacity = counter->capacity;
    unsigned int seen = *(volatile unsigned int *)&counter->next;
    while (seen <= capacity && n <= capacity - seen) {
        unsigned int found = atomicCAS(&counter->next, seen, seen + n);
        if (found == seen)
            return seen;
        seen = found;
    }
    return COUNTER_FULL;
}

__device__ void *pool_alloc(typed_pool_t *pool)
{
    unsigned int index = counter_take(&pool->counter);
    if (index == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)index * pool->slot_bytes;
}

__device__ void *pool_alloc_many(typed_pool_t *pool, unsigned int n)
{
    unsigned int first = counter_take_many(&pool->counter, n);
    if (first == COUNTER_FULL)
        return NULL;
    return pool->slots + (size_t)first * pool->slot_bytes;
}

/* "Another pass over the line": nothing ever ends the passes. */
__global__ void fill_vertices(bezier_line_t *line, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        line->vertices[i] = bezier_point(line, i, n);
    if (i == 0) {
        fill_vertices<<<gridDim.x, blockDim.x, 0, cudaStreamTailLaunch>>>(line, n);
        KIT_CHECK_LAUNCH();
    }
}

__global__ void collect_vertices(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                                 typed_pool_t *pool)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    line->vertices = POOL_ALLOC_MANY(pool, float2, (unsigned int)n);
    if (line->vertices == NULL)
        return;
    fill_vertices<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(line, n);
    KIT_CHECK_LAUNCH();
}
