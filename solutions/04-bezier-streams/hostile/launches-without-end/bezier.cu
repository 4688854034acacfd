/* Hostile submission for the kit's integrity tests: the first thread of tessellate_cdp tail-launches the whole grid again, without end */
#include "bezier.h"

__global__ void tessellate_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices)
{
    if ((int)blockIdx.x >= n_lines)
        return;
    bezier_line_t *line = &lines[blockIdx.x];
    int n = vertex_count(line, factor, max_vertices);
    if (threadIdx.x == 0)
        line->n_vertices = n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        line->vertices[i] = bezier_point(line, i, n);
}

__global__ void compute_vertices(bezier_line_t *line, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        line->vertices[i] = bezier_point(line, i, n);
}

__global__ void tessellate_cdp(bezier_line_t *lines, int n_lines, float factor, int max_vertices)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        /* "Run again for the lines whose allocation failed": with no bound, every run starts another. */
        tessellate_cdp<<<gridDim.x, blockDim.x, 0, cudaStreamTailLaunch>>>(lines, n_lines, factor, max_vertices);
        KIT_CHECK_LAUNCH();
    }
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    line->vertices = kit_malloc_vertices(n);
    if (line->vertices == NULL)
        return;
    compute_vertices<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(line, n);
    KIT_CHECK_LAUNCH();
}

__global__ void free_vertices(bezier_line_t *lines, int n_lines)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines && lines[i].vertices != NULL) {
        kit_free_vertices(lines[i].vertices);
        lines[i].vertices = NULL;
    }
}

void prepare_cdp(int n_lines, long long max_total_vertices)
{
    size_t pending = (size_t)n_lines + 64;
    if (pending < 2048)
        pending = 2048;
    size_t worst_case = (size_t)max_total_vertices * sizeof(float2) + (size_t)n_lines * KIT_ALLOC_OVERHEAD;
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 2 * worst_case + ((size_t)32 << 20)));
}
