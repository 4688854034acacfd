/* Lab 08: scheduling work from the GPU without a launch per item.
 *
 * Part A tessellates Lab 04's lines with a flat, load-balanced kernel: one thread per vertex, which
 * finds its line in a scan of the vertex counts. Parts B and C run an iterative refinement whose
 * rounds are decided on the GPU: a WHILE conditional node, then a device graph that relaunches
 * itself by tail launch. Read handouts/08-device-graphs.md first; the contract is in
 * common/harness/08-device-graphs/scheduling.h. You edit this file only.
 */
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
    /* TODO (step 1): one thread per entry of counts[0 .. n_lines]. */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices; (void)counts;
}

/* One thread per vertex. Each warp takes a tile of WARP_TILE consecutive vertices (a grid-stride loop
 * over tiles: the total is read on the GPU, the host never learns it); lane k takes vertices
 * k, k + 32, k + 64, ... of the tile, so each store of the warp is 32 consecutive vertices. A lane
 * finds the line of its first vertex by a binary search over the offsets, then walks forward from
 * it: its next vertex is 32 further, in the same line or a few lines on. */
#define WARP_TILE (32 * 16)
__global__ void write_vertices(const bezier_line_t *lines, int n_lines, const long long *offsets, float2 *out)
{
    /* TODO (step 3): for each vertex v < offsets[n_lines], find its line l (offsets[l] <= v <
     * offsets[l + 1]) and write out[v] = bezier_point(&lines[l], v - offsets[l], its count). */
    (void)lines; (void)n_lines; (void)offsets; (void)out;
}

size_t balanced_scratch_bytes(int n_lines)
{
    /* TODO (step 2): the bytes your counts and your scan need (cub::DeviceScan::ExclusiveSum with a
     * NULL temporary storage pointer says how much it needs). */
    (void)n_lines;
    return 0;
}

void tessellate_balanced(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                         long long *offsets, float2 *out, void *scratch, cudaStream_t stream)
{
    /* TODO (steps 1-3): count, scan the counts into offsets, write the vertices; all in `stream`,
     * with no synchronization and no copy to the host (the harness captures this call into a graph). */
    (void)lines; (void)n_lines; (void)factor; (void)max_vertices; (void)offsets; (void)out; (void)scratch;
    (void)stream;
}

/* ---------------- Parts B and C: rounds decided on the GPU ---------------- */

/* One round: every line that may still need it, once. */
__global__ void refine_round(refine_t *r, int n_lines)
{
    /* TODO (step 4): refine_line(r, l) for each line l < n_lines, once. */
    (void)r; (void)n_lines;
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
    /* TODO (step 5): one thread: set the loop's condition to what end_round says. */
    (void)r; (void)loop;
}

cudaGraph_t build_while_graph(refine_t *r, int n_lines)
{
    /* TODO (step 5): a graph with a WHILE conditional node whose handle starts at 1 at every launch
     * (cudaGraphCondAssignDefault), and whose body runs refine_round, then decide_while. */
    (void)r; (void)n_lines;
    return NULL;
}
#endif /* KIT_HAS_CONDITIONAL_NODES */

/* Part C: the graph's last node relaunches the graph it belongs to, by tail launch, while end_round
 * says another round is needed. A tail launch starts once the running graph has finished, so the
 * next round never overlaps this one. */
__global__ void decide_relaunch(refine_t *r)
{
    /* TODO (step 6): one thread: if end_round says so, relaunch this graph (cudaGetCurrentGraphExec)
     * into cudaStreamGraphTailLaunch, checked with KIT_CHECK_DEVICE. */
    (void)r;
}

cudaGraphExec_t build_device_graph(refine_t *r, int n_lines)
{
    /* TODO (step 6): a graph of one round (refine_round, then decide_relaunch), instantiated with
     * cudaGraphInstantiateFlagDeviceLaunch. */
    (void)r; (void)n_lines;
    return NULL;
}
