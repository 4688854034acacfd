/* Known wrong: the device graph relaunches itself into cudaStreamGraphFireAndForget: the graph is still
 * running, and one executable graph runs one instance at a time. */
#include <cub/device/device_scan.cuh>

#include "scheduling.h"

#define COUNT_THREADS 256
#define VERTEX_THREADS 256
#define VERTEX_BLOCKS_MAX 2048 /* a grid-stride loop covers the rest */
#define ROUND_THREADS 256

/* ---------------- Part A: counts, a scan, one thread per vertex ---------------- */

/* counts[i] = vertex_count of line i for i < n_lines, and counts[n_lines] = 0, so that an exclusive
 * scan over n_lines + 1 entries ends with the total. */
__global__ void count_vertices(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                               long long *counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines)
        counts[i] = vertex_count(&lines[i], factor, max_vertices);
    else if (i == n_lines)
        counts[i] = 0;
}

/* One thread per vertex. Each warp takes a tile of WARP_TILE consecutive vertices (a grid-stride loop
 * over tiles: the total is read on the GPU, the host never learns it); lane k takes vertices
 * k, k + 32, k + 64, ... of the tile, so each store of the warp is 32 consecutive vertices. A lane
 * finds the line of its first vertex by a binary search over the offsets, then walks forward from
 * it: its next vertex is 32 further, in the same line or a few lines on. */
#define WARP_TILE (32 * 16)
__global__ void write_vertices(const bezier_line_t *lines, int n_lines, const long long *offsets, float2 *out)
{
    long long total = offsets[n_lines];
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    long long warps = (long long)gridDim.x * blockDim.x / 32;
    int lane = threadIdx.x % 32;
    for (long long tile = warp * WARP_TILE; tile < total; tile += warps * WARP_TILE) {
        long long v = tile + lane;
        if (v >= total)
            break;
        int lo = 0, hi = n_lines - 1; /* the last line whose offset is <= v */
        while (lo < hi) {
            int mid = lo + (hi - lo + 1) / 2;
            if (offsets[mid] <= v)
                lo = mid;
            else
                hi = mid - 1;
        }
        long long end = tile + WARP_TILE < total ? tile + WARP_TILE : total;
        for (; v < end; v += 32) {
            while (offsets[lo + 1] <= v)
                lo++;
            out[v] = bezier_point(&lines[lo], (int)(v - offsets[lo]), (int)(offsets[lo + 1] - offsets[lo]));
        }
    }
}

size_t balanced_scratch_bytes(int n_lines)
{
    size_t scan_bytes = 0;
    KIT_CHECK(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const long long *)NULL, (long long *)NULL,
                                            n_lines + 1));
    return ((size_t)n_lines + 1) * sizeof(long long) + scan_bytes; /* the counts, then the scan's storage */
}

void tessellate_balanced(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                         long long *offsets, float2 *out, void *scratch, cudaStream_t stream)
{
    size_t counts_bytes = ((size_t)n_lines + 1) * sizeof(long long);
    long long *counts = (long long *)scratch;
    void *scan_storage = (char *)scratch + counts_bytes;
    size_t scan_bytes = balanced_scratch_bytes(n_lines) - counts_bytes;
    count_vertices<<<(n_lines + 1 + COUNT_THREADS - 1) / COUNT_THREADS, COUNT_THREADS, 0, stream>>>(
        lines, n_lines, factor, max_vertices, counts);
    KIT_CHECK(cudaGetLastError());
    KIT_CHECK(cub::DeviceScan::ExclusiveSum(scan_storage, scan_bytes, counts, offsets, n_lines + 1, stream));
    /* A tile per warp for the most vertices there can be, up to a grid that fills the GPU. */
    long long most = (long long)n_lines * max_vertices;
    long long per_block = (long long)WARP_TILE * (VERTEX_THREADS / 32);
    long long blocks = (most + per_block - 1) / per_block;
    if (blocks > VERTEX_BLOCKS_MAX)
        blocks = VERTEX_BLOCKS_MAX;
    write_vertices<<<(int)blocks, VERTEX_THREADS, 0, stream>>>(lines, n_lines, offsets, out);
    KIT_CHECK(cudaGetLastError());
}

/* ---------------- Parts B and C: rounds decided on the GPU ---------------- */

/* One round: every line that may still need it, once. */
__global__ void refine_round(refine_t *r, int n_lines)
{
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l < n_lines)
        refine_line(r, l);
}

/* A graph of one round: refine_round, then `decide` (one thread), which runs after every block of
 * the round has finished. Given: use it for Parts B and C. */
cudaGraph_t round_graph(refine_t *r, int n_lines, void *decide, void **decide_args)
{
    cudaGraph_t graph;
    cudaGraphNode_t round_node, decide_node;
    void *round_args[] = {&r, &n_lines};
    struct cudaKernelNodeParams round_params = {}, decide_params = {};
    round_params.func = (void *)refine_round;
    round_params.gridDim = dim3((n_lines + ROUND_THREADS - 1) / ROUND_THREADS);
    round_params.blockDim = dim3(ROUND_THREADS);
    round_params.kernelParams = round_args;
    decide_params.func = decide;
    decide_params.gridDim = dim3(1);
    decide_params.blockDim = dim3(1);
    decide_params.kernelParams = decide_args;
    KIT_CHECK(cudaGraphCreate(&graph, 0));
    KIT_CHECK(cudaGraphAddKernelNode(&round_node, graph, NULL, 0, &round_params));
    KIT_CHECK(cudaGraphAddKernelNode(&decide_node, graph, &round_node, 1, &decide_params));
    return graph;
}

#if KIT_HAS_CONDITIONAL_NODES
/* Part B: the body's last node sets the loop's condition from end_round. */
__global__ void decide_while(refine_t *r, cudaGraphConditionalHandle loop)
{
    cudaGraphSetConditional(loop, end_round(r));
}

cudaGraph_t build_while_graph(refine_t *r, int n_lines)
{
    cudaGraph_t graph;
    cudaGraphConditionalHandle loop;
    KIT_CHECK(cudaGraphCreate(&graph, 0));
    /* 1 at every launch: the body runs at least once, and a second launch starts afresh. */
    KIT_CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
    struct cudaGraphNodeParams params = {}; /* every field zero, then set */
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = loop;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t loop_node;
#if CUDART_VERSION >= 13000
    KIT_CHECK(cudaGraphAddNode(&loop_node, graph, NULL, NULL, 0, &params));
#else
    KIT_CHECK(cudaGraphAddNode(&loop_node, graph, NULL, 0, &params));
#endif
    /* The body is a graph the runtime made with the node: fill it as a child graph of one round. */
    void *decide_args[] = {&r, &loop};
    cudaGraph_t round = round_graph(r, n_lines, (void *)decide_while, decide_args);
    cudaGraphNode_t round_node;
    KIT_CHECK(cudaGraphAddChildGraphNode(&round_node, params.conditional.phGraph_out[0], NULL, 0, round));
    KIT_CHECK(cudaGraphDestroy(round)); /* the child node holds its own copy */
    return graph;
}
#endif /* KIT_HAS_CONDITIONAL_NODES */

/* Part C: the graph's last node relaunches the graph it belongs to, by tail launch, while end_round
 * says another round is needed. A tail launch starts once the running graph has finished, so the
 * next round never overlaps this one. */
__global__ void decide_relaunch(refine_t *r)
{
    if (end_round(r))
        KIT_CHECK_DEVICE(cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphFireAndForget));
}

cudaGraphExec_t build_device_graph(refine_t *r, int n_lines)
{
    void *decide_args[] = {&r};
    cudaGraph_t graph = round_graph(r, n_lines, (void *)decide_relaunch, decide_args);
    cudaGraphExec_t exec;
    KIT_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
    KIT_CHECK(cudaGraphDestroy(graph)); /* the executable graph does not need it */
    return exec;
}
