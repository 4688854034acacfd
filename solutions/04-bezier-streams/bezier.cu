/* Lab 04: adaptive Bezier tessellation, flat and with dynamic parallelism.
 *
 * Every line needs between MIN_VERTICES and max_vertices vertices, decided by its curvature at run
 * time. Read handouts/04-bezier-streams.md first. You edit this file only.
 */
#include "bezier.h"

/* 1. Flat: one block per line; the block's threads fill the line's vertices in a block-stride loop.
 *    lines[b].vertices already points at an array of max_vertices (the worst case). */
__global__ void tessellate_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices)
{
#ifdef KIT_STARTER
    /* TODO (step 1): line blockIdx.x (if < n_lines): n = vertex_count(...); thread 0 stores n in
     * n_vertices; threads fill vertices[i] = bezier_point(line, i, n) for i = threadIdx.x, +blockDim.x, ...
     * while i < n: each vertex once (the kit counts bezier_point calls). */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices;
#else
    if ((int)blockIdx.x >= n_lines)
        return; /* the whole block leaves together: no barrier follows */
    bezier_line_t *line = &lines[blockIdx.x];
    int n = vertex_count(line, factor, max_vertices);
    if (threadIdx.x == 0)
        line->n_vertices = n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        line->vertices[i] = bezier_point(line, i, n);
#endif /* KIT_STARTER */
}

/* 2. The child: one thread per vertex of one line. */
__global__ void compute_vertices(bezier_line_t *line, int n)
{
#ifdef KIT_STARTER
    /* TODO (step 2): vertex blockIdx.x * blockDim.x + threadIdx.x, if it is < n. */
    (void)line; (void)n;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) /* the last block is partly past the end of the line */
        line->vertices[i] = bezier_point(line, i, n);
#endif /* KIT_STARTER */
}

/* 2-3. The parent: one thread per line. Count, allocate exactly, launch a child grid sized to the
 *      count into a stream of this thread's own. */
__global__ void tessellate_cdp(bezier_line_t *lines, int n_lines, float factor, int max_vertices)
{
#ifdef KIT_STARTER
    /* TODO (steps 2 and 3): line i = blockIdx.x * blockDim.x + threadIdx.x (if < n_lines):
     *  - n = vertex_count(...), stored in n_vertices;
     *  - vertices = kit_malloc_vertices(n): exactly n, never max_vertices; give up on NULL (counted);
     *  - launch compute_vertices, ceil(n / 32) blocks of 32, where a block's children run side by side
     *    (a block's launches into the NULL stream run one after another, handout section 2.5): into
     *    cudaStreamFireAndForget, or a non-blocking stream this thread creates (cudaStreamCreateWithFlags,
     *    checked with KIT_CHECK_DEVICE, destroyed after the launch: its work still runs to completion);
     *  - check the launch right after it with KIT_CHECK_LAUNCH().
     * The parent computes no vertex itself: its child computes each one, once. */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    line->vertices = kit_malloc_vertices(n);
    if (line->vertices == NULL)
        return; /* the kit counted the failure */
    cudaStream_t stream;
    if (KIT_CHECK_DEVICE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess)
        return;
    compute_vertices<<<(n + 31) / 32, 32, 0, stream>>>(line, n);
    KIT_CHECK_LAUNCH();
    KIT_CHECK_DEVICE(cudaStreamDestroy(stream));
#endif /* KIT_STARTER */
}

/* 5. Free every line's vertices in parallel: device-heap memory cannot be freed by the host. */
__global__ void free_vertices(bezier_line_t *lines, int n_lines)
{
#ifdef KIT_STARTER
    /* TODO (step 5): one thread per line: kit_free_vertices(vertices) if not NULL, then NULL it. */
    (void)lines; (void)n_lines;
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines && lines[i].vertices != NULL) {
        kit_free_vertices(lines[i].vertices);
        lines[i].vertices = NULL;
    }
#endif /* KIT_STARTER */
}

/* 4. Host code, called once before any kernel runs: make room for every line's launch and memory. */
void prepare_cdp(int n_lines, long long max_total_vertices)
{
#ifdef KIT_STARTER
    /* TODO (step 4): raise cudaLimitDevRuntimePendingLaunchCount to at least n_lines (a child per line
     * may be pending at once; the default is 2,048), and cudaLimitMallocHeapSize to the worst case:
     * max_total_vertices float2 plus KIT_ALLOC_OVERHEAD per line, with a generous margin: the
     * device allocator has its own overhead (the default heap is 8 MiB). Compute sizes in size_t: the
     * worst case can pass 4 GiB. Check both with KIT_CHECK. */
    (void)n_lines; (void)max_total_vertices;
#else
    size_t pending = (size_t)n_lines + 64;
    if (pending < 2048)
        pending = 2048; /* never below the default */
    size_t worst_case = (size_t)max_total_vertices * sizeof(float2) + (size_t)n_lines * KIT_ALLOC_OVERHEAD;
    /* Twice the worst case, plus 32 MiB: the device allocator keeps its own bookkeeping and cannot
     * hand out one block that takes most of the heap (a 32 MiB block failed in a 56 MiB heap). */
    size_t heap = 2 * worst_case + ((size_t)32 << 20);
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
#endif /* KIT_STARTER */
}
