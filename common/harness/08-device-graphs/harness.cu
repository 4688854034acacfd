/* Lab 08 harness (kit-owned): runs the student's load-balanced tessellation (captured into a graph)
 * and checks every offset and vertex against the kit's; times it against the kit's one-block-per-line
 * flat and CDP versions and against a device-to-device copy of the bytes it must write; runs the
 * student's refinement loops (a WHILE conditional node, a device graph that relaunches itself) on two
 * workloads each, against the kit's own host-driven loop; and writes the result.
 *
 *   ./scheduling [--name value ...] [--json result.json]      (options[] below; ./scheduling --help)
 *
 * Part A's call is captured in the stream capture mode --capture-mode names. The refinement runs on
 * the case's lines twice: with the longest segment allowed --tolerance (in millionths) and at most
 * --max vertices a line, then with --tolerance2 and --max2; then on other lines (as many, in another
 * array, with another counts array) with --tolerance2 and --max2. --repeats N times Part A (medians of
 * N), each timed run's output poisoned before it and checked after it. A case whose vertices this
 * GPU's free memory cannot hold is left out ("not_run").
 * --bench 1 prints three tables instead of one run (make bench LAB=08): Part A against the kit's
 * versions over several workloads, the cost of one round or launch each way the GPU can be given
 * work, and the refinement three ways; with --json, the tables are the document.
 *
 * The lines, the vertex check and the kit's flat and CDP versions are Lab 04's, from
 * common/src/bezier_lines.cu; the refinement's functions (refine_line, end_round) are here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bezier_lines.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"
#include "scheduling.h"

#define FLAT_THREADS 128
#define PARENT_THREADS 64
#define ROUND_THREADS 256
#define GUARD_VERTICES 64     /* past the total, which no correct submission writes */
#define MAX_TOLERANCE 10000000 /* millionths: 10 units */
#define LATENCY_ROUNDS 1000    /* the bench's chains */
#define LATENCY_SAMPLES 200    /* the bench's launch-to-start samples */

/* ---------------- the refinement: kit-owned device functions ---------------- */

/* Segment k of n vertices, from u = k h to (k + 1) h with h = 1 / (n - 1), is the chord
 * h (b + a h (2k + 1)) for B(u) = P0 + b u + a u^2 (b = 2 (P1 - P0), a = P0 - 2 P1 + P2). Its length
 * is a convex function of k, so the longest is the first (k = 0) or the last (k = n - 2). */
static __device__ float longest_segment(const bezier_line_t *line, int n)
{
    float2 p0 = line->cp[0], p1 = line->cp[1], p2 = line->cp[2];
    float ax = p0.x - 2.0f * p1.x + p2.x, ay = p0.y - 2.0f * p1.y + p2.y;
    float bx = 2.0f * (p1.x - p0.x), by = 2.0f * (p1.y - p0.y);
    float h = 1.0f / (float)(n - 1);
    float first = hypotf(bx + ax * h, by + ay * h) * h;
    float k_last = (float)(2 * n - 3);
    float last = hypotf(bx + ax * h * k_last, by + ay * h * k_last) * h;
    return fmaxf(first, last);
}

__device__ int refine_line(refine_t *r, int l)
{
    if (r->ended)
        atomicAdd(&r->late_calls, 1u);
    if (l < 0 || l >= r->n_lines) {
        atomicAdd(&r->bad_lines, 1u);
        return 0;
    }
    int n = r->counts[l];
    if (n >= r->max_vertices || !(longest_segment(&r->lines[l], n) > r->tolerance))
        return 0;
    r->counts[l] = 2 * n - 1 < r->max_vertices ? 2 * n - 1 : r->max_vertices;
    atomicExch(&r->refined, 1u);
    return 1;
}

/* end_round's calls in this launch: counted in the state (r->rounds), which the student's code can
 * reach, and here, in kit memory it cannot. (Not by the calling grid's %gridid: a graph's kernel node
 * keeps one %gridid at every launch of the graph, measured on an H100, so the rounds of a WHILE node or
 * of a relaunched device graph all show one grid.) */
static __device__ unsigned int kit_end_round_calls;

__device__ int end_round(refine_t *r)
{
    atomicAdd(&kit_end_round_calls, 1u);
    unsigned int round = atomicAdd(&r->rounds, 1u) + 1;
    int more = atomicExch(&r->refined, 0u) != 0 && round < KIT_MAX_ROUNDS;
    if (!more)
        r->ended = 1;
    return more;
}

/* The kit's own loop, driven from the host: a round (a grid-stride loop over the lines), then
 * end_round, then the answer copied back. */
__global__ void kit_refine_round(refine_t *r, int n_lines)
{
    for (int l = blockIdx.x * blockDim.x + threadIdx.x; l < n_lines; l += gridDim.x * blockDim.x)
        refine_line(r, l);
}

__global__ void kit_end_round(refine_t *r, int *more)
{
    *more = end_round(r);
}

/* ---------------- the refinement: host side ---------------- */

/* The refinement's workloads (scheduling.h): the case's lines with the case's first tolerance and cap,
 * the same lines with its second, then other lines (as many, in another array, with their own counts
 * array) with the second again: a graph must read the lines and counts from the state at every launch,
 * not keep what the state held when it was built. */
#define N_REFINE_WORKLOADS 3
#define OTHER_LINES 2

/* The refinement workloads on the case's lines: the state the student's graphs see (d_state, whose
 * address never changes), and what the kit's loop found on each. */
typedef struct {
    workload_t *w;
    refine_t *d_state;
    const bezier_line_t *lines[N_REFINE_WORKLOADS];
    int *counts[N_REFINE_WORKLOADS];
    bezier_line_t *d_other_lines; /* workload OTHER_LINES: line l is the case's line n - 1 - l, twice as large */
    int *d_counts, *d_other_counts;
    int *h_expected[N_REFINE_WORKLOADS];
    unsigned int expected_rounds[N_REFINE_WORKLOADS];
    unsigned int kit_host_launches[N_REFINE_WORKLOADS]; /* the launches the kit's loop made from the host */
    float tolerance[N_REFINE_WORKLOADS];
    int max_vertices[N_REFINE_WORKLOADS];
    int *d_more, *h_more; /* the kit's loop: end_round's answer, pinned */
} refinement_t;

/* What one launch of a student's graph did on workload k. */
typedef struct {
    unsigned int host_launches; /* the harness's, for the whole loop */
    unsigned int rounds, late_calls, bad_lines;
    unsigned int end_round_calls; /* end_round's calls, in the kit's own count */
    int counts_wrong, first_bad_line, first_got, first_want;
    kit_launch_log_t log;
    double ms;
} refine_run_t;

static void refine_reset(refinement_t *f, int k)
{
    refine_t s;
    memset(&s, 0, sizeof s);
    s.lines = f->lines[k];
    s.n_lines = f->w->n_lines;
    s.max_vertices = f->max_vertices[k];
    s.tolerance = f->tolerance[k];
    s.counts = f->counts[k];
    int *start = (int *)kit_host_alloc(sizeof(int) * (size_t)s.n_lines);
    for (int l = 0; l < s.n_lines; l++)
        start[l] = MIN_VERTICES;
    KIT_CHECK(cudaMemcpy(f->counts[k], start, sizeof(int) * (size_t)s.n_lines, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMemcpy(f->d_state, &s, sizeof s, cudaMemcpyHostToDevice));
    free(start);
}

/* One loop on workload k, timed once (kit_time_kernel): a student's executable graph launched once from
 * the host, or, with exec NULL, the kit's own loop, one host round trip per round. */
typedef struct {
    refinement_t *f;
    int k;
    cudaGraphExec_t exec;
    unsigned int host_launches;
} loop_run_t;

static void loop_reset(void *p)
{
    loop_run_t *run = (loop_run_t *)p;
    refine_reset(run->f, run->k);
    kit_launch_log_reset();
    unsigned int zero = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_end_round_calls, &zero, sizeof zero));
    run->host_launches = 0;
}

/* A graph's tail launches belong to it, so the stop event that follows its launch completes after
 * its last round (the bench's per-round times agree). */
static void loop_launch(void *p)
{
    loop_run_t *run = (loop_run_t *)p;
    refinement_t *f = run->f;
    int n = f->w->n_lines;
    if (run->exec != NULL) {
        KIT_CHECK(cudaGraphLaunch(run->exec, 0));
        run->host_launches++;
        return;
    }
    do {
        kit_refine_round<<<(n + ROUND_THREADS - 1) / ROUND_THREADS, ROUND_THREADS>>>(f->d_state, n);
        kit_end_round<<<1, 1>>>(f->d_state, f->d_more);
        run->host_launches += 2;
        KIT_CHECK(cudaMemcpyAsync(f->h_more, f->d_more, sizeof(int), cudaMemcpyDeviceToHost, 0));
        KIT_CHECK(cudaStreamSynchronize(0));
    } while (*f->h_more);
}

/* The kit's loop on workload k, its host launches counted. Returns its time in ms. */
static double kit_loop(refinement_t *f, int k)
{
    loop_run_t run = {f, k, NULL, 0};
    double ms = kit_time_kernel(loop_reset, loop_launch, &run, 0, 1).median_ms;
    f->kit_host_launches[k] = run.host_launches;
    return ms;
}

/* Workloads 0 and 1: the lines of w, with tolerance[k] and max_vertices[k]; workload OTHER_LINES: other
 * lines, with tolerance[1] and max_vertices[1]. The state is left as workload 0 sets it: what a builder
 * called next finds there. */
static void refinement_init(refinement_t *f, workload_t *w, const float *tolerance, const int *max_vertices)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    int n = w->n_lines;
    for (int k = 0; k < N_REFINE_WORKLOADS; k++) {
        f->tolerance[k] = tolerance[k < 2 ? k : 1];
        f->max_vertices[k] = max_vertices[k < 2 ? k : 1];
    }
    KIT_CHECK(cudaMalloc((void **)&f->d_state, sizeof(refine_t)));
    KIT_CHECK(cudaMalloc((void **)&f->d_counts, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&f->d_other_counts, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&f->d_other_lines, sizeof(bezier_line_t) * (size_t)n));
    bezier_line_t *other = (bezier_line_t *)kit_host_alloc(sizeof(bezier_line_t) * (size_t)n); /* zeroed */
    for (int l = 0; l < n; l++)
        for (int c = 0; c < 3; c++) {
            other[l].cp[c].x = 2.0f * w->h_lines[n - 1 - l].cp[c].x;
            other[l].cp[c].y = 2.0f * w->h_lines[n - 1 - l].cp[c].y;
        }
    KIT_CHECK(cudaMemcpy(f->d_other_lines, other, sizeof(bezier_line_t) * (size_t)n, cudaMemcpyHostToDevice));
    free(other);
    for (int k = 0; k < N_REFINE_WORKLOADS; k++) {
        f->lines[k] = k == OTHER_LINES ? f->d_other_lines : w->d_lines;
        f->counts[k] = k == OTHER_LINES ? f->d_other_counts : f->d_counts;
    }
    KIT_CHECK(cudaMalloc((void **)&f->d_more, sizeof(int)));
    KIT_CHECK(cudaMallocHost((void **)&f->h_more, sizeof(int)));
    for (int k = 0; k < N_REFINE_WORKLOADS; k++) {
        kit_loop(f, k);
        refine_t s;
        KIT_CHECK(cudaMemcpy(&s, f->d_state, sizeof s, cudaMemcpyDeviceToHost));
        f->expected_rounds[k] = s.rounds;
        f->h_expected[k] = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
        KIT_CHECK(cudaMemcpy(f->h_expected[k], f->counts[k], sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    }
    refine_reset(f, 0);
}

static void refinement_free(refinement_t *f)
{
    KIT_CHECK(cudaFree(f->d_state));
    KIT_CHECK(cudaFree(f->d_counts));
    KIT_CHECK(cudaFree(f->d_other_counts));
    KIT_CHECK(cudaFree(f->d_other_lines));
    KIT_CHECK(cudaFree(f->d_more));
    KIT_CHECK(cudaFreeHost(f->h_more));
    for (int k = 0; k < N_REFINE_WORKLOADS; k++)
        free(f->h_expected[k]);
}

/* One host launch of a student's executable graph on workload k, then what it left. The device is
 * synchronized, not just the stream: work a graph hands to the GPU is waited for wherever it runs. */
static refine_run_t refine_launch(refinement_t *f, cudaGraphExec_t exec, int k)
{
    refine_run_t run;
    memset(&run, 0, sizeof run);
    run.first_bad_line = -1;
    loop_run_t timed = {f, k, exec, 0};
    run.ms = kit_time_kernel(loop_reset, loop_launch, &timed, 0, 1).median_ms;
    KIT_CHECK(cudaDeviceSynchronize());
    run.host_launches = timed.host_launches;
    run.log = kit_launch_log_read();
    refine_t s;
    KIT_CHECK(cudaMemcpy(&s, f->d_state, sizeof s, cudaMemcpyDeviceToHost));
    run.rounds = s.rounds;
    run.late_calls = s.late_calls;
    run.bad_lines = s.bad_lines;
    KIT_CHECK(cudaMemcpyFromSymbol(&run.end_round_calls, kit_end_round_calls, sizeof run.end_round_calls));
    int n = f->w->n_lines;
    int *got = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    KIT_CHECK(cudaMemcpy(got, f->counts[k], sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    for (int l = 0; l < n; l++)
        if (got[l] != f->h_expected[k][l]) {
            if (run.counts_wrong++ == 0) {
                run.first_bad_line = l;
                run.first_got = got[l];
                run.first_want = f->h_expected[k][l];
            }
        }
    free(got);
    return run;
}

/* A student's loop, built and launched on every workload: "key": {"built", ..., "runs": [...]}. */
typedef struct {
    int available, built, conditional_nodes;
    unsigned long long exec_flags;
    refine_run_t runs[N_REFINE_WORKLOADS];
} loop_result_t;

static void json_loop(kit_json_t *j, const char *key, const loop_result_t *r, const refinement_t *f)
{
    kit_json_begin_object(j, key);
    kit_json_bool(j, "available", r->available);
    kit_json_bool(j, "built", r->built);
    kit_json_int(j, "conditional_nodes", r->conditional_nodes);
    kit_json_bool(j, "device_launch", (r->exec_flags & cudaGraphInstantiateFlagDeviceLaunch) != 0);
    kit_json_begin_array(j, "runs");
    for (int k = 0; k < N_REFINE_WORKLOADS && r->built; k++) {
        const refine_run_t *run = &r->runs[k];
        kit_json_begin_object(j, NULL);
        kit_json_bool(j, "other_lines", k == OTHER_LINES);
        kit_json_double(j, "tolerance", f->tolerance[k]);
        kit_json_int(j, "max_vertices", f->max_vertices[k]);
        kit_json_uint(j, "host_launches", run->host_launches);
        kit_json_uint(j, "rounds", run->rounds);
        kit_json_uint(j, "expected_rounds", f->expected_rounds[k]);
        kit_json_uint(j, "kit_host_launches", f->kit_host_launches[k]);
        kit_json_uint(j, "end_round_calls", run->end_round_calls); /* counted in kit memory */
        kit_json_uint(j, "late_calls", run->late_calls);
        kit_json_uint(j, "bad_lines", run->bad_lines);
        kit_json_int(j, "counts_wrong", run->counts_wrong);
        kit_json_int(j, "first_bad_line", run->first_bad_line);
        kit_json_int(j, "first_got", run->first_got);
        kit_json_int(j, "first_want", run->first_want);
        kit_json_launch_log(j, "launch_log", run->log);
        kit_json_double(j, "ms", run->ms);
        kit_json_end_object(j);
    }
    kit_json_end_array(j);
    kit_json_end_object(j);
}

static void print_loop(const char *what, const loop_result_t *r, const refinement_t *f)
{
    if (!r->available) {
        printf("  %s: not available on this toolkit (conditional nodes need CUDA 12.4 or newer)\n", what);
        return;
    }
    if (!r->built) {
        printf("  %s: the builder returned NULL\n", what);
        return;
    }
    for (int k = 0; k < N_REFINE_WORKLOADS; k++) {
        const refine_run_t *run = &r->runs[k];
        printf("  %s, workload %d (%s, tolerance %g, max %d): %u host launch(es), %u rounds (the kit's loop: "
               "%u rounds, %u host launches), %d of %d counts wrong, %u refine_line calls after the loop ended, "
               "%.3f ms\n",
               what, k + 1, k == OTHER_LINES ? "other lines" : "the case's lines", f->tolerance[k],
               f->max_vertices[k], run->host_launches, run->rounds,
               f->expected_rounds[k], f->kit_host_launches[k], run->counts_wrong, f->w->n_lines, run->late_calls,
               run->ms);
        if (run->counts_wrong)
            printf("    first: line %d has %d vertices, expected %d\n", run->first_bad_line, run->first_got,
                   run->first_want);
    }
}

/* Conditional nodes in a graph, its child graphs included. */
static int count_conditional_nodes(cudaGraph_t graph)
{
    size_t n = 0;
    KIT_CHECK(cudaGraphGetNodes(graph, NULL, &n));
    if (n == 0)
        return 0;
    cudaGraphNode_t *nodes = (cudaGraphNode_t *)kit_host_alloc(sizeof(cudaGraphNode_t) * n);
    KIT_CHECK(cudaGraphGetNodes(graph, nodes, &n));
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        enum cudaGraphNodeType type;
        KIT_CHECK(cudaGraphNodeGetType(nodes[i], &type));
#if KIT_HAS_CONDITIONAL_NODES
        if (type == cudaGraphNodeTypeConditional)
            found++;
#endif
        if (type == cudaGraphNodeTypeGraph) {
            cudaGraph_t child;
            KIT_CHECK(cudaGraphChildGraphNodeGetGraph(nodes[i], &child));
            found += count_conditional_nodes(child);
        }
    }
    free(nodes);
    return found;
}

static loop_result_t run_while_graph(refinement_t *f)
{
    loop_result_t r;
    memset(&r, 0, sizeof r);
#if KIT_HAS_CONDITIONAL_NODES
    r.available = 1;
    refine_reset(f, 0); /* the builder finds the state as the first workload sets it */
    cudaGraph_t graph = build_while_graph(f->d_state, f->w->n_lines);
    KIT_CHECK(cudaGetLastError());
    if (graph == NULL)
        return r;
    r.built = 1;
    r.conditional_nodes = count_conditional_nodes(graph);
    cudaGraphExec_t exec;
    KIT_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    KIT_CHECK(cudaGraphExecGetFlags(exec, &r.exec_flags));
    for (int k = 0; k < N_REFINE_WORKLOADS; k++)
        r.runs[k] = refine_launch(f, exec, k);
    KIT_CHECK(cudaGraphExecDestroy(exec));
    KIT_CHECK(cudaGraphDestroy(graph));
#else
    (void)f;
#endif
    return r;
}

static loop_result_t run_device_graph(refinement_t *f)
{
    loop_result_t r;
    memset(&r, 0, sizeof r);
    r.available = 1;
    refine_reset(f, 0); /* the builder finds the state as the first workload sets it */
    cudaGraphExec_t exec = build_device_graph(f->d_state, f->w->n_lines);
    KIT_CHECK(cudaGetLastError());
    if (exec == NULL)
        return r;
    r.built = 1;
    KIT_CHECK(cudaGraphExecGetFlags(exec, &r.exec_flags));
    for (int k = 0; k < N_REFINE_WORKLOADS; k++)
        r.runs[k] = refine_launch(f, exec, k);
    KIT_CHECK(cudaGraphExecDestroy(exec));
    return r;
}

/* ---------------- Part A: the load-balanced tessellation ---------------- */

typedef struct {
    int captured;
    char capture_error[96];
    long long graph_nodes; /* the nodes the capture recorded: 0 when the call queued nothing */
    long long scratch_bytes;
    long long offsets_wrong, first_bad_offset, offset_got, offset_want;
    check_t check;
    point_calls_t calls;
    int past_total; /* guard vertices past the total that changed */
} balanced_result_t;

/* The student's call captured into a graph (stream capture), and that graph instantiated: the
 * contract's "asynchronous work in stream, nothing else" is what capture accepts. */
typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    bezier_line_t *lines; /* the case's lines, exactly n_lines of them: memcheck sees a read past the last */
    void *scratch;
    long long *offsets;
    float2 *out;
    long long scratch_bytes;
    int *line_wrong;        /* the kit's check (check_part_a): wrong vertices per line */
    double *line_max_error; /* and the largest error within the tolerance, per line */
} balanced_t;

/* The capture modes the contract allows the harness (scheduling.h): the grader's cases use both.
 * --capture-mode's words, in the order of capture_modes. */
static const char *const capture_mode_names[] = {"thread-local", "global", NULL};
static const cudaStreamCaptureMode capture_modes[] = {cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal};

static const char *balanced_capture(balanced_t *b, workload_t *w, long long scratch_bytes,
                                    cudaStreamCaptureMode mode)
{
    memset(b, 0, sizeof *b);
    b->scratch_bytes = scratch_bytes;
    KIT_CHECK(cudaMalloc((void **)&b->line_wrong, sizeof(int) * (size_t)w->n_lines));
    KIT_CHECK(cudaMalloc((void **)&b->line_max_error, sizeof(double) * (size_t)w->n_lines));
    KIT_CHECK(cudaMalloc((void **)&b->lines, sizeof(bezier_line_t) * (size_t)w->n_lines));
    KIT_CHECK(cudaMemcpy(b->lines, w->d_lines, sizeof(bezier_line_t) * (size_t)w->n_lines, cudaMemcpyDeviceToDevice));
    /* Exactly what the student asked for, so that memcheck sees a write past it. */
    KIT_CHECK(cudaMalloc(&b->scratch, scratch_bytes > 0 ? (size_t)scratch_bytes : 1));
    KIT_CHECK(cudaMalloc((void **)&b->offsets, sizeof(long long) * ((size_t)w->n_lines + 1)));
    KIT_CHECK(cudaMalloc((void **)&b->out, sizeof(float2) * ((size_t)w->total + GUARD_VERTICES)));
    cudaStream_t stream;
    KIT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    KIT_CHECK(cudaStreamBeginCapture(stream, mode));
    tessellate_balanced(b->lines, w->n_lines, w->factor, w->max_vertices, b->offsets, b->out, b->scratch, stream);
    cudaError_t err = cudaStreamEndCapture(stream, &b->graph);
    if (err == cudaSuccess)
        err = cudaGraphInstantiate(&b->exec, b->graph, 0);
    (void)cudaGetLastError(); /* a failed capture is the submission's, reported below, not a fault */
    KIT_CHECK(cudaStreamDestroy(stream));
    return err == cudaSuccess ? NULL : cudaGetErrorName(err);
}

static void balanced_free(balanced_t *b)
{
    if (b->exec)
        KIT_CHECK(cudaGraphExecDestroy(b->exec));
    if (b->graph)
        KIT_CHECK(cudaGraphDestroy(b->graph));
    KIT_CHECK(cudaFree(b->lines));
    KIT_CHECK(cudaFree(b->scratch));
    KIT_CHECK(cudaFree(b->offsets));
    KIT_CHECK(cudaFree(b->out));
    KIT_CHECK(cudaFree(b->line_wrong));
    KIT_CHECK(cudaFree(b->line_max_error));
}

/* ---- Part A's check, on the device ---- */

/* How far vertex i of n of line is from the curve, in double precision: check_lines's arithmetic
 * (common/src/bezier_lines.cu), each operation rounded as the host rounds it (no fused multiply-add),
 * and NaN when either coordinate is not a number. */
static __device__ double vertex_error(const bezier_line_t *line, int i, int n, float2 got)
{
    double u = __ddiv_rn((double)i, (double)(n - 1));
    double rest = __dsub_rn(1.0, u);
    double a = __dmul_rn(rest, rest), b = __dmul_rn(__dmul_rn(2.0, u), rest), c = __dmul_rn(u, u);
    double wx = __dadd_rn(__dadd_rn(__dmul_rn(a, (double)line->cp[0].x), __dmul_rn(b, (double)line->cp[1].x)),
                          __dmul_rn(c, (double)line->cp[2].x));
    double wy = __dadd_rn(__dadd_rn(__dmul_rn(a, (double)line->cp[0].y), __dmul_rn(b, (double)line->cp[1].y)),
                          __dmul_rn(c, (double)line->cp[2].y));
    if (isnan(got.x) || isnan(got.y))
        return nan("");
    return fmax(fabs(__dsub_rn((double)got.x, wx)), fabs(__dsub_rn((double)got.y, wy)));
}

/* One block per line: line l's counts[l] vertices at out + offsets[l] (the kit's layout) against the
 * curve, with check_lines's tolerance (1e-5 of the line's largest coordinate, at least 1e-5). */
__global__ void kit_check_vertices(const bezier_line_t *lines, const int *counts, const long long *offsets,
                                   const float2 *out, int *line_wrong, double *line_max_error)
{
    const bezier_line_t *line = &lines[blockIdx.x];
    int n = counts[blockIdx.x];
    const float2 *v = out + offsets[blockIdx.x];
    double scale = 1.0;
    for (int k = 0; k < 3; k++)
        scale = fmax(scale, fmax(fabs((double)line->cp[k].x), fabs((double)line->cp[k].y)));
    __shared__ int wrong;
    __shared__ unsigned long long worst; /* a non-negative double's bits order as the doubles do */
    if (threadIdx.x == 0) {
        wrong = 0;
        worst = 0;
    }
    __syncthreads();
    int mine = 0;
    double largest = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        double err = vertex_error(line, i, n, v[i]);
        if (!(err <= 1e-5 * scale))
            mine++;
        else if (err > largest)
            largest = err;
    }
    if (mine)
        atomicAdd(&wrong, mine);
    atomicMax(&worst, (unsigned long long)__double_as_longlong(largest));
    __syncthreads();
    if (threadIdx.x == 0) {
        line_wrong[blockIdx.x] = wrong;
        line_max_error[blockIdx.x] = __longlong_as_double((long long)worst);
    }
}

/* What one run of the captured graph left: offsets against the kit's scan, vertices against the curve
 * (on the device: a case of billions of vertices is checked in milliseconds), the guard past the total. */
typedef struct {
    long long offsets_wrong, first_bad_offset, offset_got, offset_want;
    check_t check;
    int past_total;
} part_a_verdict_t;

static part_a_verdict_t examine_part_a(balanced_t *b, workload_t *w)
{
    part_a_verdict_t r;
    memset(&r, 0, sizeof r);
    r.first_bad_offset = -1;
    r.check.first_bad_line = -1;
    int n = w->n_lines;
    long long *got = (long long *)kit_host_alloc(sizeof(long long) * ((size_t)n + 1));
    KIT_CHECK(cudaMemcpy(got, b->offsets, sizeof(long long) * ((size_t)n + 1), cudaMemcpyDeviceToHost));
    for (int i = 0; i <= n; i++) {
        long long want = i < n ? w->h_offsets[i] : w->total;
        if (got[i] != want && r.offsets_wrong++ == 0) {
            r.first_bad_offset = i;
            r.offset_got = got[i];
            r.offset_want = want;
        }
    }
    free(got);
    kit_check_vertices<<<n, 256>>>(w->d_lines, w->d_counts, w->d_offsets, b->out, b->line_wrong, b->line_max_error);
    KIT_CHECK_KERNEL();
    int *wrong = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    double *max_error = (double *)kit_host_alloc(sizeof(double) * (size_t)n);
    KIT_CHECK(cudaMemcpy(wrong, b->line_wrong, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(max_error, b->line_max_error, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost));
    for (int l = 0; l < n; l++) {
        if (wrong[l]) {
            r.check.lines_bad++;
            r.check.vertices_wrong += wrong[l];
            if (r.check.first_bad_line < 0)
                r.check.first_bad_line = l;
        }
        if (max_error[l] > r.check.max_error)
            r.check.max_error = max_error[l];
    }
    free(wrong);
    free(max_error);
    if (r.check.first_bad_line >= 0) { /* the first wrong vertex of the first bad line, as check_lines says it */
        int l = r.check.first_bad_line, count = w->h_counts[l];
        const bezier_line_t *line = &w->h_lines[l];
        float2 *v = (float2 *)kit_host_alloc(sizeof(float2) * (size_t)count);
        KIT_CHECK(cudaMemcpy(v, b->out + w->h_offsets[l], sizeof(float2) * (size_t)count, cudaMemcpyDeviceToHost));
        double scale = 1.0;
        for (int k = 0; k < 3; k++)
            scale = fmax(scale, fmax(fabs(line->cp[k].x), fabs(line->cp[k].y)));
        for (int i = 0; i < count; i++) {
            double u = (double)i / (double)(count - 1);
            double a = (1 - u) * (1 - u), bb = 2 * u * (1 - u), cc = u * u;
            double wx = a * line->cp[0].x + bb * line->cp[1].x + cc * line->cp[2].x;
            double wy = a * line->cp[0].y + bb * line->cp[1].y + cc * line->cp[2].y;
            double err = fmax(fabs(v[i].x - wx), fabs(v[i].y - wy));
            if (!(err <= 1e-5 * scale) || isnan(v[i].x) || isnan(v[i].y)) {
                r.check.first_bad_index = i;
                r.check.first_got_x = v[i].x;
                r.check.first_got_y = v[i].y;
                r.check.first_want_x = wx;
                r.check.first_want_y = wy;
                break;
            }
        }
        free(v);
    }
    unsigned int guard[2 * GUARD_VERTICES];
    KIT_CHECK(cudaMemcpy(guard, b->out + w->total, sizeof guard, cudaMemcpyDeviceToHost));
    for (int k = 0; k < 2 * GUARD_VERTICES; k += 2)
        r.past_total += guard[k] != 0xffffffffu || guard[k + 1] != 0xffffffffu;
    return r;
}

/* Before each run of the captured graph, the checked one and every timed one: all bits set, so offsets
 * of -1 and NaN vertices until the submission writes them, and a scratch that holds nothing from an
 * earlier run or from the capture (work queued outside the stream ran then, not in the graph). */
static void poison_part_a(balanced_t *b, workload_t *w)
{
    KIT_CHECK(cudaMemset(b->offsets, 0xff, sizeof(long long) * ((size_t)w->n_lines + 1)));
    KIT_CHECK(cudaMemset(b->scratch, 0xff, b->scratch_bytes > 0 ? (size_t)b->scratch_bytes : 1));
    KIT_CHECK(cudaMemset(b->out, 0xff, sizeof(float2) * ((size_t)w->total + GUARD_VERTICES)));
}

/* One launch of the captured graph, then every offset and vertex against the kit's. */
static balanced_result_t balanced_check(balanced_t *b, workload_t *w)
{
    balanced_result_t r;
    memset(&r, 0, sizeof r);
    size_t nodes = 0;
    KIT_CHECK(cudaGraphGetNodes(b->graph, NULL, &nodes));
    r.graph_nodes = (long long)nodes;
    poison_part_a(b, w);
    point_calls_start();
    KIT_CHECK(cudaGraphLaunch(b->exec, 0));
    KIT_CHECK(cudaDeviceSynchronize());
    r.calls = point_calls_stop();
    part_a_verdict_t v = examine_part_a(b, w);
    r.offsets_wrong = v.offsets_wrong;
    r.first_bad_offset = v.first_bad_offset;
    r.offset_got = v.offset_got;
    r.offset_want = v.offset_want;
    r.check = v.check;
    r.past_total = v.past_total;
    return r;
}

/* ---- timing ---- */

#define VERSION_BALANCED 0
#define VERSION_FLAT 1
#define VERSION_CDP 2
#define VERSION_COPY 3
#define N_VERSIONS 4
static const char *const version_keys[N_VERSIONS] = {"balanced", "flat", "cdp", "copy"};
static const char *const version_names[N_VERSIONS] = {"balanced, yours", "flat, a block per line (kit)",
                                                      "CDP, fire-and-forget (kit)", "copy of the bytes (bound)"};

typedef struct {
    workload_t *w;
    balanced_t *b;
    int version;
    void *copy_from, *copy_to;
    size_t copy_bytes;
} timed_t;

static void timed_launch(void *p)
{
    timed_t *t = (timed_t *)p;
    workload_t *w = t->w;
    switch (t->version) {
    case VERSION_BALANCED:
        KIT_CHECK(cudaGraphLaunch(t->b->exec, 0));
        break;
    case VERSION_FLAT:
        kit_flat<<<w->n_lines, FLAT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets,
                                              w->d_out);
        break;
    case VERSION_CDP:
        kit_cdp<<<(w->n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(
            w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets, w->d_out, KIT_STREAM_FIRE_AND_FORGET);
        break;
    default:
        KIT_CHECK(cudaMemcpyAsync(t->copy_to, t->copy_from, t->copy_bytes, cudaMemcpyDeviceToDevice, 0));
    }
}

/* The bytes Part A must write: every vertex and every offset. */
static long long bytes_required(const workload_t *w)
{
    return w->total * (long long)sizeof(float2) + ((long long)w->n_lines + 1) * (long long)sizeof(long long);
}

/* The student's timed runs (the warm-up's too): how many, how many left Part A's output wrong, and the
 * wrong offsets, vertices and guard vertices of the first such run. */
typedef struct {
    int runs, wrong_runs;
    long long first_wrong;
} part_a_runs_t;

static void poison_timed(void *p)
{
    timed_t *t = (timed_t *)p;
    poison_part_a(t->b, t->w);
}

/* The student's graph, one timed run at a time: its output poisoned before each run and checked after it
 * (examine_part_a), both outside the timed region, so that a graph that keeps state from one launch to
 * the next (a flag set once) and skips its work in a later run is seen, not timed as fast. */
static double time_balanced_checked(timed_t *t, int warmup, int repeats, part_a_runs_t *checked)
{
    double *ms = (double *)kit_host_alloc(sizeof(double) * (size_t)repeats);
    for (int i = 0; i < warmup + repeats; i++) {
        kit_timing_t one = kit_time_kernel(poison_timed, timed_launch, t, 0, 1);
        part_a_verdict_t v = examine_part_a(t->b, t->w);
        long long wrong = v.offsets_wrong + v.check.vertices_wrong + v.past_total;
        checked->runs++;
        if (wrong && checked->wrong_runs++ == 0)
            checked->first_wrong = wrong;
        if (i >= warmup)
            ms[i - warmup] = one.median_ms;
    }
    double median = kit_median(ms, repeats);
    free(ms);
    return median;
}

/* Medians of every version, in this order, in one process; the kit's CDP launches counted apart; the
 * student's runs each checked. */
static void time_versions(workload_t *w, balanced_t *b, int repeats, double *ms, kit_launch_log_t *cdp_log,
                          part_a_runs_t *checked)
{
    timed_t t = {w, b, 0, NULL, NULL, (size_t)bytes_required(w)};
    KIT_CHECK(cudaMalloc(&t.copy_from, t.copy_bytes));
    KIT_CHECK(cudaMalloc(&t.copy_to, t.copy_bytes));
    KIT_CHECK(cudaMemset(t.copy_from, 0, t.copy_bytes));
    memset(checked, 0, sizeof *checked);
    for (int v = 0; v < N_VERSIONS; v++) {
        t.version = v;
        if (v == VERSION_BALANCED) {
            ms[v] = time_balanced_checked(&t, 2, repeats, checked);
            continue;
        }
        if (v == VERSION_CDP)
            kit_launch_log_reset();
        ms[v] = kit_time_kernel(NULL, timed_launch, &t, 2, repeats).median_ms;
        if (v == VERSION_CDP)
            *cdp_log = kit_launch_log_read();
    }
    KIT_CHECK(cudaFree(t.copy_from));
    KIT_CHECK(cudaFree(t.copy_to));
}

/* ---------------- the bench ---------------- */

static __device__ unsigned int bench_left; /* rounds left in a chain */
static __device__ unsigned long long bench_stamp[2];

static __device__ unsigned long long globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void bench_tick(void)
{
    atomicSub(&bench_left, 1u);
}

__global__ void bench_cdp_chain(void)
{
    if (atomicSub(&bench_left, 1u) > 1) {
        bench_cdp_chain<<<1, 1, 0, cudaStreamTailLaunch>>>();
        KIT_CHECK_LAUNCH();
    }
}

__global__ void bench_graph_chain(void)
{
    if (atomicSub(&bench_left, 1u) > 1)
        KIT_CHECK_DEVICE(cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));
}

#if KIT_HAS_CONDITIONAL_NODES
__global__ void bench_while_round(cudaGraphConditionalHandle loop)
{
    cudaGraphSetConditional(loop, atomicSub(&bench_left, 1u) > 1);
}
#endif

/* Launch-to-start: the parent stamps the time just before its launch (or, for a tail launch, as
 * it ends), the child as it starts. */
__global__ void bench_stamp_child(void)
{
    bench_stamp[1] = globaltimer();
}

#define HOW_CDP_FIRE_AND_FORGET 0
#define HOW_CDP_TAIL 1
#define HOW_GRAPH_FIRE_AND_FORGET 2
#define HOW_GRAPH_TAIL 3
/* A kernel that launches a device graph can only run as a node of a graph: one parent per kind. */
__global__ void bench_stamp_cdp(int tail)
{
    bench_stamp[0] = globaltimer();
    bench_stamp_child<<<1, 1, 0, tail ? cudaStreamTailLaunch : cudaStreamFireAndForget>>>();
    KIT_CHECK_LAUNCH();
    if (tail)
        bench_stamp[0] = globaltimer(); /* a tail launch starts only once this grid ends */
}

__global__ void bench_stamp_graph(int tail, cudaGraphExec_t child)
{
    bench_stamp[0] = globaltimer();
    KIT_CHECK_DEVICE(cudaGraphLaunch(child, tail ? cudaStreamGraphTailLaunch : cudaStreamGraphFireAndForget));
    if (tail)
        bench_stamp[0] = globaltimer();
}

/* A kernel of one thread, with its parameters, added to graph. */
static void add_one_thread_kernel(cudaGraph_t graph, void *func, void **args)
{
    cudaGraphNode_t node;
    struct cudaKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    KIT_CHECK(cudaGraphAddKernelNode(&node, graph, NULL, 0, &p));
}

/* A graph of one kernel of one thread. */
static cudaGraph_t one_kernel_graph(void *func, void **args)
{
    cudaGraph_t graph;
    KIT_CHECK(cudaGraphCreate(&graph, 0));
    add_one_thread_kernel(graph, func, args);
    return graph;
}

static cudaGraphExec_t instantiate(cudaGraph_t graph, unsigned long long flags)
{
    cudaGraphExec_t exec;
    KIT_CHECK(cudaGraphInstantiate(&exec, graph, flags));
    KIT_CHECK(cudaGraphDestroy(graph));
    return exec;
}

static void set_left(unsigned int n)
{
    KIT_CHECK(cudaMemcpyToSymbol(bench_left, &n, sizeof n));
}

#define CHAIN_HOST_LAUNCH 0
#define CHAIN_HOST_ROUND_TRIP 1
#define CHAIN_HOST_GRAPH 2
#define CHAIN_CDP_TAIL 3
#define CHAIN_GRAPH_TAIL 4
#define CHAIN_WHILE 5
#define N_CHAINS 6
static const char *const chain_names[N_CHAINS] = {
    "host launch, back to back", "host launch and wait (a host round trip)", "host graph launch",
    "device launch (CDP), tail", "device graph launch, tail", "conditional WHILE node"};

/* One chain, timed once (kit_time_kernel). */
typedef struct {
    int way;
    cudaGraphExec_t exec; /* the graph the way launches, or NULL */
    unsigned int *h_left; /* pinned: the rounds left, read back by the host round trip */
} chain_t;

static void chain_reset(void *p)
{
    (void)p;
    set_left(LATENCY_ROUNDS);
}

static void chain_launch(void *p)
{
    chain_t *c = (chain_t *)p;
    switch (c->way) {
    case CHAIN_HOST_LAUNCH:
        for (int i = 0; i < LATENCY_ROUNDS; i++)
            bench_tick<<<1, 1>>>();
        break;
    case CHAIN_HOST_ROUND_TRIP:
        do {
            bench_tick<<<1, 1>>>();
            KIT_CHECK(cudaMemcpyFromSymbolAsync(c->h_left, bench_left, sizeof *c->h_left, 0, cudaMemcpyDeviceToHost,
                                                0));
            KIT_CHECK(cudaStreamSynchronize(0));
        } while (*c->h_left > 0);
        break;
    case CHAIN_HOST_GRAPH:
        for (int i = 0; i < LATENCY_ROUNDS; i++)
            KIT_CHECK(cudaGraphLaunch(c->exec, 0));
        break;
    case CHAIN_CDP_TAIL:
        bench_cdp_chain<<<1, 1>>>();
        break;
    default:
        KIT_CHECK(cudaGraphLaunch(c->exec, 0));
    }
}

/* Microseconds per step of a chain of LATENCY_ROUNDS steps, each a kernel of one thread; -1 where
 * the toolkit lacks the way. The device chains are one host launch each. */
static double chain_us(int way)
{
    cudaGraphExec_t exec = NULL;
    if (way == CHAIN_HOST_GRAPH)
        exec = instantiate(one_kernel_graph((void *)bench_tick, NULL), 0);
    if (way == CHAIN_GRAPH_TAIL)
        exec = instantiate(one_kernel_graph((void *)bench_graph_chain, NULL), cudaGraphInstantiateFlagDeviceLaunch);
#if KIT_HAS_CONDITIONAL_NODES
    if (way == CHAIN_WHILE) {
        cudaGraph_t graph;
        cudaGraphConditionalHandle loop;
        KIT_CHECK(cudaGraphCreate(&graph, 0));
        KIT_CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
        struct cudaGraphNodeParams params = {}; /* every field zero, then set */
        params.type = cudaGraphNodeTypeConditional;
        params.conditional.handle = loop;
        params.conditional.type = cudaGraphCondTypeWhile;
        params.conditional.size = 1;
        cudaGraphNode_t node;
#if CUDART_VERSION >= 13000
        KIT_CHECK(cudaGraphAddNode(&node, graph, NULL, NULL, 0, &params));
#else
        KIT_CHECK(cudaGraphAddNode(&node, graph, NULL, 0, &params));
#endif
        void *args[] = {&loop};
        add_one_thread_kernel(params.conditional.phGraph_out[0], (void *)bench_while_round, args);
        exec = instantiate(graph, 0);
    }
#else
    if (way == CHAIN_WHILE)
        return -1;
#endif
    chain_t chain = {way, exec, NULL};
    KIT_CHECK(cudaMallocHost((void **)&chain.h_left, sizeof *chain.h_left));
    double ms = kit_time_kernel(chain_reset, chain_launch, &chain, 0, 1).median_ms;
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpyFromSymbol(chain.h_left, bench_left, sizeof *chain.h_left));
    if (*chain.h_left != 0) /* the chain did not run its rounds: a figure of it would be wrong */
        printf("  (%s: %u of %d rounds not run)\n", chain_names[way], *chain.h_left, LATENCY_ROUNDS);
    KIT_CHECK(cudaFreeHost(chain.h_left));
    if (exec)
        KIT_CHECK(cudaGraphExecDestroy(exec));
    return ms * 1000.0 / LATENCY_ROUNDS;
}

static const char *const how_names[4] = {"device launch (CDP), fire-and-forget", "device launch (CDP), tail",
                                         "device graph launch, fire-and-forget", "device graph launch, tail"};

/* Median microseconds from a launch on the device to the child's first instruction. */
static double launch_to_start_us(int how)
{
    cudaGraphExec_t child = instantiate(one_kernel_graph((void *)bench_stamp_child, NULL),
                                        cudaGraphInstantiateFlagDeviceLaunch);
    KIT_CHECK(cudaGraphUpload(child, 0));
    cudaGraphExec_t parent = NULL;
    int tail = how == HOW_CDP_TAIL || how == HOW_GRAPH_TAIL;
    void *args[] = {&tail, &child};
    if (how == HOW_GRAPH_FIRE_AND_FORGET || how == HOW_GRAPH_TAIL)
        parent = instantiate(one_kernel_graph((void *)bench_stamp_graph, args), 0);
    double us[LATENCY_SAMPLES];
    for (int i = 0; i < LATENCY_SAMPLES; i++) {
        if (parent)
            KIT_CHECK(cudaGraphLaunch(parent, 0));
        else
            bench_stamp_cdp<<<1, 1>>>(tail);
        KIT_CHECK(cudaGetLastError());
        KIT_CHECK(cudaDeviceSynchronize());
        unsigned long long stamp[2];
        KIT_CHECK(cudaMemcpyFromSymbol(stamp, bench_stamp, sizeof stamp));
        us[i] = ((double)stamp[1] - (double)stamp[0]) / 1000.0;
    }
    if (parent)
        KIT_CHECK(cudaGraphExecDestroy(parent));
    KIT_CHECK(cudaGraphExecDestroy(child));
    return kit_median(us, LATENCY_SAMPLES);
}

static void bench(int repeats, unsigned long long seed, const char *json_path)
{
    /* Part A: lines, max vertices, workload (1: heavy). */
    static const int rows[][3] = {{16384, 32, 0}, {4096, 4096, 1}, {16384, 65536, 1}, {16384, 1 << 20, 1}};
    const int n_rows = (int)(sizeof rows / sizeof rows[0]);
    kit_json_t j;
    if (json_path != NULL) {
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "08-device-graphs");
        kit_json_device(&j);
        kit_json_begin_object(&j, "bench");
        kit_json_int(&j, "repeats", repeats);
        kit_json_uint(&j, "seed", seed);
        kit_json_begin_array(&j, "versions");
        for (int v = 0; v < N_VERSIONS; v++)
            kit_json_string(&j, NULL, version_names[v]);
        kit_json_end_array(&j);
        kit_json_begin_array(&j, "tessellation");
    }
    printf("Part A: median of %d runs, ms\n%-8s %6s %8s %10s", repeats, "workload", "lines", "max", "vertices");
    for (int v = 0; v < N_VERSIONS; v++)
        printf(" | %28s", version_names[v]);
    printf("\n");
    for (int k = 0; k < n_rows; k++) {
        workload_t w;
        workload_init(&w, rows[k][0], rows[k][2], rows[k][1], 16.0f, seed, 0);
        balanced_t b;
        const char *error = balanced_capture(&b, &w, (long long)balanced_scratch_bytes(w.n_lines),
                                             cudaStreamCaptureModeThreadLocal);
        printf("%-8s %6d %8d %10lld", rows[k][2] ? "heavy" : "chained", w.n_lines, w.max_vertices, w.total);
        double ms[N_VERSIONS];
        kit_launch_log_t cdp_log;
        part_a_runs_t checked;
        if (error == NULL) {
            time_versions(&w, &b, repeats, ms, &cdp_log, &checked);
            for (int v = 0; v < N_VERSIONS; v++)
                printf(" | %28.3f", ms[v]);
            if (checked.wrong_runs)
                printf(" (%d of your %d runs left wrong output: not a time of the work)", checked.wrong_runs,
                       checked.runs);
        } else {
            printf(" | your tessellate_balanced could not be captured: %s", error);
        }
        printf("\n");
        if (json_path != NULL && error == NULL) {
            kit_json_begin_object(&j, NULL);
            kit_json_string(&j, "workload", rows[k][2] ? "heavy" : "chained");
            kit_json_int(&j, "lines", w.n_lines);
            kit_json_int(&j, "max_vertices", w.max_vertices);
            kit_json_int(&j, "vertices", w.total);
            kit_json_int(&j, "bytes", bytes_required(&w));
            kit_json_begin_array(&j, "median_ms");
            for (int v = 0; v < N_VERSIONS; v++)
                kit_json_double(&j, NULL, ms[v]);
            kit_json_end_array(&j);
            kit_json_end_object(&j);
        }
        balanced_free(&b);
        workload_free(&w);
    }
    if (json_path != NULL) {
        kit_json_end_array(&j);
        kit_json_begin_array(&j, "chains");
    }
    printf("\nOne step of a chain of %d, each a kernel of one thread that decides the next (us per step)\n",
           LATENCY_ROUNDS);
    for (int way = 0; way < N_CHAINS; way++) {
        double us = chain_us(way);
        if (us < 0)
            printf("  %-44s not available on this toolkit\n", chain_names[way]);
        else
            printf("  %-44s %8.2f\n", chain_names[way], us);
        if (json_path != NULL) {
            kit_json_begin_object(&j, NULL);
            kit_json_string(&j, "way", chain_names[way]);
            if (us < 0)
                kit_json_null(&j, "us_per_step");
            else
                kit_json_double(&j, "us_per_step", us);
            kit_json_end_object(&j);
        }
    }
    if (json_path != NULL) {
        kit_json_end_array(&j);
        kit_json_begin_array(&j, "launch_to_start");
    }
    printf("\nFrom a launch on the device to the child's first instruction (median of %d, us)\n", LATENCY_SAMPLES);
    for (int how = 0; how < 4; how++) {
        double us = launch_to_start_us(how);
        printf("  %-44s %8.2f\n", how_names[how], us);
        if (json_path != NULL) {
            kit_json_begin_object(&j, NULL);
            kit_json_string(&j, "way", how_names[how]);
            kit_json_double(&j, "us", us);
            kit_json_end_object(&j);
        }
    }

    /* The refinement three ways, on the heavy workload. */
    workload_t w;
    workload_init(&w, 16384, 1, 1 << 20, 16.0f, seed, 0);
    refinement_t f;
    const float tolerance[2] = {1e-4f, 1e-4f};
    const int caps[2] = {w.max_vertices, w.max_vertices};
    refinement_init(&f, &w, tolerance, caps);
    double host_ms = kit_loop(&f, 0);
    loop_result_t while_loop = run_while_graph(&f), device_loop = run_device_graph(&f);
    printf("\nThe refinement of %d heavy lines, tolerance %g: %u rounds (ms, one run)\n", w.n_lines, f.tolerance[0],
           f.expected_rounds[0]);
    printf("  %-44s %8.3f\n", "the kit's loop, a host round trip per round", host_ms);
    const loop_result_t *loops[2] = {&while_loop, &device_loop};
    static const char *const loop_names[2] = {"your WHILE conditional node", "your device graph, tail relaunch"};
    if (json_path != NULL) {
        kit_json_end_array(&j);
        kit_json_begin_object(&j, "refinement");
        kit_json_int(&j, "lines", w.n_lines);
        kit_json_double(&j, "tolerance", f.tolerance[0]);
        kit_json_uint(&j, "rounds", f.expected_rounds[0]);
        kit_json_double(&j, "host_loop_ms", host_ms);
        kit_json_uint(&j, "host_loop_launches", f.kit_host_launches[0]);
    }
    for (int k = 0; k < 2; k++) {
        const loop_result_t *r = loops[k];
        int ok = r->built && r->runs[0].rounds == f.expected_rounds[0] && r->runs[0].counts_wrong == 0;
        if (ok)
            printf("  %-44s %8.3f\n", loop_names[k], r->runs[0].ms);
        else
            printf("  %-44s %s\n", loop_names[k], r->available ? "did not run the kit's rounds" : "not available");
        if (json_path != NULL) {
            if (ok)
                kit_json_double(&j, k == 0 ? "while_ms" : "device_graph_ms", r->runs[0].ms);
            else
                kit_json_null(&j, k == 0 ? "while_ms" : "device_graph_ms");
        }
    }
    refinement_free(&f);
    workload_free(&w);
    if (json_path != NULL) {
        kit_json_end_object(&j);
        kit_json_end_object(&j);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
}

/* ---------------- one case ---------------- */

static void json_balanced(kit_json_t *j, const balanced_result_t *r, const char *capture_mode)
{
    kit_json_begin_object(j, "balanced");
    kit_json_string(j, "capture_mode", capture_mode);
    kit_json_bool(j, "captured", r->captured);
    kit_json_string(j, "capture_error", r->capture_error);
    kit_json_int(j, "graph_nodes", r->graph_nodes);
    kit_json_int(j, "scratch_bytes", r->scratch_bytes);
    kit_json_int(j, "offsets_wrong", r->offsets_wrong);
    kit_json_int(j, "first_bad_offset", r->first_bad_offset);
    kit_json_int(j, "offset_got", r->offset_got);
    kit_json_int(j, "offset_want", r->offset_want);
    json_check(j, "vertices", r->check);
    kit_json_begin_object(j, "point_calls");
    kit_json_uint(j, "calls", r->calls.calls);
    kit_json_uint(j, "out_of_range", r->calls.out_of_range);
    kit_json_end_object(j);
    kit_json_int(j, "past_total", r->past_total);
    kit_json_end_object(j);
}

/* --workload's words: the index is workload_init's heavy. */
static const char *const workload_names[] = {"chained", "heavy", NULL};

static const kit_option_t options[] = {
    {"--lines", "lines of the workload", 4096, 1, MAX_LINES, NULL},
    {"--workload", "the lines: Lab 04's chain, or one line in 256 at --max and the rest short", 0, 0, 0,
     workload_names},
    {"--factor", "a line's vertex count is its curvature times this, clamped", 16, 1, 1000000, NULL},
    {"--max", "the most vertices a line may have (Part A; the refinement's first cap)", 32, MIN_VERTICES,
     MAX_MAX_VERTICES, NULL},
    {"--seed", "the seed the lines are generated from", 1, 0, 2000000000L, NULL},
    {"--tolerance", "the refinement's longest segment allowed with --max, in millionths", 2000, 1, MAX_TOLERANCE,
     NULL},
    {"--tolerance2", "the same with --max2, in millionths", 500, 1, MAX_TOLERANCE, NULL},
    {"--max2", "the refinement's second cap on a line's vertices", 13, MIN_VERTICES, MAX_MAX_VERTICES, NULL},
    {"--repeats", "timed runs of Part A (medians; 0: no timings)", 0, 0, 100, NULL},
    {"--capture-mode", "the stream capture mode Part A's call is captured in", 0, 0, 0, capture_mode_names},
    {"--bench", "1: the timing tables of make bench instead", 0, 0, 1, NULL},
    KIT_OPTIONS_END};

static int run_case(int argc, char **argv)
{
    int n_lines = (int)kit_option_long(argc, argv, options, "--lines");
    int heavy = kit_option_word(argc, argv, options, "--workload");
    const char *workload_name = workload_names[heavy];
    int max_vertices = (int)kit_option_long(argc, argv, options, "--max");
    float factor = (float)kit_option_long(argc, argv, options, "--factor");
    unsigned long long seed = (unsigned long long)kit_option_long(argc, argv, options, "--seed");
    /* The refinement's two workloads: the case's lines with a tolerance and a cap each. */
    float tolerance[2];
    int caps[2];
    long tolerance_ppm = kit_option_long(argc, argv, options, "--tolerance");
    long tolerance2_ppm = kit_option_long(argc, argv, options, "--tolerance2");
    tolerance[0] = (float)(tolerance_ppm * 1e-6);
    tolerance[1] = (float)(tolerance2_ppm * 1e-6);
    caps[1] = (int)kit_option_long(argc, argv, options, "--max2");
    int repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    int bench_mode = (int)kit_option_long(argc, argv, options, "--bench");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    int capture = kit_option_word(argc, argv, options, "--capture-mode");
    /* The kit's CDP version launches a child per line, all pending at once. */
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, (bench_mode ? 16384 : n_lines) + 2048))
        return KIT_CASE_DEFERRED;
    if (bench_mode) {
        bench(repeats > 0 ? repeats : 5, seed, json_path);
        return 0;
    }

    /* Part A's vertices twice (the kit's buffer and the student's), twice more for the copy a timing
     * run makes: a case past this GPU's free memory (billions of vertices on a small GPU) is left out,
     * with a document that says so, rather than failed. */
    long long bound = max_total_vertices(n_lines, heavy, max_vertices);
    double need = (repeats > 0 ? 4.0 : 2.0) * (double)bound * sizeof(float2) + (double)(1 << 30);
    size_t free_bytes = 0, total_bytes = 0;
    KIT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > (double)free_bytes) {
        printf("not run: up to %lld vertices need %.1f GiB; this GPU has %.1f GiB free\n", bound,
               need / 1073741824.0, free_bytes / 1073741824.0);
        if (json_path != NULL) {
            kit_json_t j;
            kit_json_open(&j, json_path);
            kit_json_begin_object(&j, NULL);
            kit_json_string(&j, "lab", "08-device-graphs");
            kit_json_string(&j, "not_run", "the GPU has too little free memory for this case's vertices");
            kit_json_end_object(&j);
            kit_json_close(&j);
        }
        return 0;
    }

    workload_t w;
    caps[0] = max_vertices;
    workload_init(&w, n_lines, heavy, max_vertices, factor, seed, 0);
    printf("%d %s lines, factor %g, max %d: %lld vertices in all\n", n_lines, workload_name, factor, max_vertices,
           w.total);

    /* Part A */
    balanced_result_t a;
    memset(&a, 0, sizeof a);
    a.check.first_bad_line = -1;
    a.first_bad_offset = -1;
    a.scratch_bytes = (long long)balanced_scratch_bytes(n_lines);
    balanced_t b;
    const char *error = balanced_capture(&b, &w, a.scratch_bytes, capture_modes[capture]);
    if (error != NULL) {
        snprintf(a.capture_error, sizeof a.capture_error, "%s", error);
        printf("  Part A: your tessellate_balanced could not be captured into a graph (%s mode): %s\n",
               capture_mode_names[capture], error);
    } else {
        long long scratch = a.scratch_bytes;
        a = balanced_check(&b, &w);
        a.captured = 1;
        a.scratch_bytes = scratch;
        print_check("Part A", a.check, n_lines);
        printf("  Part A: a graph of %lld nodes; %lld of %d offsets wrong", a.graph_nodes, a.offsets_wrong,
               n_lines + 1);
        if (a.offsets_wrong)
            printf(" (first: offsets[%lld] is %lld, expected %lld)", a.first_bad_offset, a.offset_got, a.offset_want);
        printf("; %llu bezier_point calls for %lld vertices; %d vertices written past the total\n", a.calls.calls,
               w.total, a.past_total);
    }
    double ms[N_VERSIONS];
    memset(ms, 0, sizeof ms);
    kit_launch_log_t cdp_log;
    memset(&cdp_log, 0, sizeof cdp_log);
    part_a_runs_t checked;
    memset(&checked, 0, sizeof checked);
    if (repeats > 0 && error == NULL) {
        time_versions(&w, &b, repeats, ms, &cdp_log, &checked);
        for (int v = 0; v < N_VERSIONS; v++)
            printf("  %-32s median %.3f ms\n", version_names[v], ms[v]);
        if (checked.wrong_runs)
            printf("  %d of your %d timed runs left wrong output (the first: %lld offsets and vertices): work "
                   "skipped in a later launch, so the time does not count\n", checked.wrong_runs, checked.runs,
                   checked.first_wrong);
    }
    balanced_free(&b);

    /* Parts B and C */
    refinement_t f;
    refinement_init(&f, &w, tolerance, caps);
    loop_result_t while_loop = run_while_graph(&f);
    print_loop("Part B (WHILE node)", &while_loop, &f);
    loop_result_t device_loop = run_device_graph(&f);
    print_loop("Part C (device graph)", &device_loop, &f);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "08-device-graphs");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "lines", n_lines);
        kit_json_string(&j, "workload", workload_name);
        kit_json_double(&j, "factor", factor);
        kit_json_int(&j, "max", max_vertices);
        kit_json_int(&j, "seed", (long long)seed);
        kit_json_int(&j, "repeats", repeats);
        kit_json_end_object(&j);
        kit_json_int(&j, "total_vertices", w.total);
        kit_json_int(&j, "bytes_required", bytes_required(&w));
        json_balanced(&j, &a, capture_mode_names[capture]);
        if (repeats > 0 && error == NULL) {
            kit_json_begin_object(&j, "timing_ms");
            for (int v = 0; v < N_VERSIONS; v++)
                kit_json_double(&j, version_keys[v], ms[v]);
            /* each of the student's timed runs (the warm-ups' too) checked like the graded run */
            kit_json_int(&j, "balanced_runs", checked.runs);
            kit_json_int(&j, "balanced_wrong_runs", checked.wrong_runs);
            kit_json_int(&j, "balanced_first_wrong", checked.first_wrong);
            kit_json_end_object(&j);
            kit_json_launch_log(&j, "kit_cdp_log", cdp_log);
        }
        json_loop(&j, "while_graph", &while_loop, &f);
        json_loop(&j, "device_graph", &device_loop, &f);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    refinement_free(&f);
    workload_free(&w);
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
