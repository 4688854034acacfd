/* scheduling.h - Lab 08's contract between the kit and the student's file.
 *
 * Part A, a load-balanced flat tessellation of Lab 04's lines. The harness calls
 *
 *     scratch = balanced_scratch_bytes(n_lines)                     (host, once, before any capture)
 *     tessellate_balanced(lines, n_lines, factor, max_vertices, offsets, out, scratch, stream)
 *
 * while `stream` is being captured into a CUDA graph (in cudaStreamCaptureModeGlobal or
 * cudaStreamCaptureModeThreadLocal: the grader uses both), then launches that graph, once to check it
 * and, where a case is timed, again for each timed run, each of which is checked too. Everything the
 * call does must be asynchronous work in `stream` (kernel launches, cudaMemsetAsync, CUB's calls given
 * `stream`): no synchronization, no allocation, no copy to the host. Afterwards (after every launch)
 *   offsets[i] = the vertices of lines 0 .. i-1 (an exclusive scan of vertex_count), for i = 0 .. n_lines,
 *                so offsets[n_lines] is the total;
 *   out[offsets[i] + k] = bezier_point(&lines[i], k, n_i) for k < n_i = vertex_count(&lines[i], ...).
 * `lines` holds exactly n_lines lines; `out` holds at least the total; `scratch` holds
 * balanced_scratch_bytes(n_lines) bytes, yours to use. Each vertex is computed once (the kit counts
 * bezier_point calls).
 *
 * Your call must queue its work in `stream` itself: the harness clears the scratch before it launches
 * the graph, so nothing computed outside the graph survives into it.
 *
 * Parts B and C, an iterative refinement decided on the GPU. The kit's refine_line(r, l) doubles
 * the segments of line l (its count n becomes 2n - 1, at most max_vertices) when its longest segment
 * is longer than the tolerance, and says so; a round calls it once for each line that may still need
 * it; end_round(r), called by one thread after a round's refine_line calls have all finished,
 * counts the round and says whether another is needed (some line was refined). The loop runs rounds
 * until end_round says 0. The harness calls your builder once, then launches what it returns once
 * per workload, on three workloads (the same lines with another tolerance and another cap, so another
 * number of rounds; then n_lines other lines, in another array, with another counts array), with one
 * host launch each and nothing from the host in between: the rounds are decided on the GPU. r's
 * address never changes; what it holds (lines, counts, tolerance, max_vertices) does, before each
 * launch: read it on the GPU at every launch, never keep it from the time your builder ran.
 *
 *   Part B (CUDA 12.4 or newer): build_while_graph returns a graph whose top level holds a WHILE
 *   conditional node; the harness instantiates it and launches it with cudaGraphLaunch.
 *   Part C: build_device_graph returns a graph instantiated with cudaGraphInstantiateFlagDeviceLaunch
 *   that the harness launches from the host; it relaunches itself from the device by tail launch
 *   until end_round says 0. Check every device-side cudaGraphLaunch with KIT_CHECK_DEVICE.
 */
#ifndef SCHEDULING_H
#define SCHEDULING_H

#include "kit_bezier.h" /* bezier_line_t, MIN_VERTICES, vertex_count, bezier_point */

/* Conditional graph nodes need CUDA 12.4 or newer here: older toolkits build and grade Parts A and C
 * only, and Part B reports "not available on this toolkit". */
#if CUDART_VERSION >= 12040
#define KIT_HAS_CONDITIONAL_NODES 1
#else
#define KIT_HAS_CONDITIONAL_NODES 0
#endif

/* The refinement's state, in device memory; the kit sets it before each launch. */
typedef struct {
    const bezier_line_t *lines; /* control points */
    int n_lines;
    int max_vertices;
    float tolerance;            /* the longest segment allowed */
    int *counts;                /* each line's vertex count: MIN_VERTICES at the start, refine_line's after */
    /* the kit's own, for its instrumentation: do not touch */
    unsigned int refined;       /* set by refine_line, read and cleared by end_round */
    unsigned int rounds;        /* end_round calls */
    unsigned int ended;         /* end_round has returned 0 */
    unsigned int late_calls;    /* refine_line calls after that */
    unsigned int bad_lines;     /* refine_line calls for a line outside 0 .. n_lines - 1 */
} refine_t;

/* No workload needs more than 24 rounds; past KIT_MAX_ROUNDS end_round returns 0, so that a loop
 * that would not end still does. */
#define KIT_MAX_ROUNDS 64

/* Kit-owned. Refines line l if it needs it; returns 1 if it did (its count changed), else 0. */
__device__ int refine_line(refine_t *r, int l);
/* Kit-owned. Ends a round (one thread, after the round's refine_line calls): counts it, returns 1
 * if a line was refined since the previous end_round (another round is needed), else 0. */
__device__ int end_round(refine_t *r);

/* Written by the student (scheduling.cu). */
size_t balanced_scratch_bytes(int n_lines);
void tessellate_balanced(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                         long long *offsets, float2 *out, void *scratch, cudaStream_t stream);
#if KIT_HAS_CONDITIONAL_NODES
cudaGraph_t build_while_graph(refine_t *r, int n_lines);
#endif
cudaGraphExec_t build_device_graph(refine_t *r, int n_lines);

#endif /* SCHEDULING_H */
