/* Lab 04 harness (kit-owned): generates lines from a seed, runs the student's flat and dynamic
 * tessellations, checks every vertex against a double-precision reference, measures memory, times
 * the student's version against the kit's flat and NULL-stream versions, and writes the result.
 *
 *   ./bezier [--lines 1000] [--workload chained|heavy] [--factor 16] [--max 32] [--seed 1]
 *            [--repeats 0] [--svg curves.svg] [--bench 0] [--json result.json]
 *
 * --bench 1 prints a timing table (flat, CDP in the NULL stream, your named streams,
 * fire-and-forget) over several line counts and both workloads instead of one run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bezier.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_result.h"
#include "kit_timing.h"

#define MAX_LINES 100000
#define MAX_MAX_VERTICES (1 << 22)
#define HEAVY_EVERY 256          /* heavy workload: one line in 256 needs max_vertices */
#define SHORT_MAX 30             /* heavy workload: the other lines need at most this many */
#define FLAT_THREADS 128
#define FENCE_WORD 0x7fbadf00u   /* a NaN: no vertex computation produces it */
#define ALLOC_MAGIC 0x6b69746d616c6c6fULL
#define SVG_MAX_LINES 400
#define FLAT_MAX_BYTES (1LL << 30)

/* ---------------- kit-owned device code ---------------- */

__device__ int vertex_count(const bezier_line_t *line, float factor, int max_vertices)
{
    float2 p0 = line->cp[0], p1 = line->cp[1], p2 = line->cp[2];
    float bend = hypotf(p1.x - 0.5f * (p0.x + p2.x), p1.y - 0.5f * (p0.y + p2.y));
    float span = hypotf(p2.x - p0.x, p2.y - p0.y);
    float scaled = span > 0.0f ? bend / span * factor : INFINITY; /* P0 == P2: as curved as it gets */
    if (!(scaled < (float)max_vertices))
        return max_vertices;
    int n = (int)scaled;
    return n < MIN_VERTICES ? MIN_VERTICES : n;
}

__device__ float2 bezier_point(const bezier_line_t *line, int i, int n)
{
    float u = (float)i / (float)(n - 1);
    float a = (1.0f - u) * (1.0f - u), b = 2.0f * u * (1.0f - u), c = u * u;
    float2 p;
    p.x = a * line->cp[0].x + b * line->cp[1].x + c * line->cp[2].x;
    p.y = a * line->cp[0].y + b * line->cp[1].y + c * line->cp[2].y;
    return p;
}

/* The kit's heap blocks: a header, the vertices, a fence. */
typedef struct {
    unsigned long long bytes;
    unsigned long long magic;
} alloc_header_t;
#define FENCE_WORDS ((KIT_ALLOC_OVERHEAD - (int)sizeof(alloc_header_t)) / 4)

typedef struct {
    unsigned long long bytes_requested;
    unsigned int allocations, alloc_failures, frees, bad_frees, free_failures;
} heap_stats_t;
__device__ heap_stats_t kit_heap;

/* Timing runs measure the launches, not the allocator: while kit_pool is set, blocks are carved
 * from one buffer the kit allocated beforehand instead of the device heap. */
typedef struct {
    char *base;
    unsigned long long size, next;
} pool_t;
__device__ pool_t kit_pool;

__device__ float2 *kit_malloc_vertices(int count)
{
    size_t bytes = (size_t)(count > 0 ? count : 0) * sizeof(float2);
    char *raw = NULL;
    if (kit_pool.base != NULL) {
        unsigned long long need = (bytes + KIT_ALLOC_OVERHEAD + 15) & ~15ULL;
        unsigned long long at = atomicAdd(&kit_pool.next, need);
        if (at + need <= kit_pool.size)
            raw = kit_pool.base + at;
    } else if (cudaMalloc((void **)&raw, bytes + KIT_ALLOC_OVERHEAD) != cudaSuccess) {
        raw = NULL;
    }
    if (raw == NULL) {
        atomicAdd(&kit_heap.alloc_failures, 1u);
        return NULL;
    }
    alloc_header_t *h = (alloc_header_t *)raw;
    h->bytes = bytes;
    h->magic = ALLOC_MAGIC;
    unsigned int *fence = (unsigned int *)(raw + sizeof(alloc_header_t) + bytes);
    for (int k = 0; k < FENCE_WORDS; k++)
        fence[k] = FENCE_WORD;
    atomicAdd(&kit_heap.allocations, 1u);
    atomicAdd(&kit_heap.bytes_requested, (unsigned long long)bytes);
    return (float2 *)(raw + sizeof(alloc_header_t));
}

__device__ void kit_free_vertices(float2 *vertices)
{
    char *raw = (char *)vertices - sizeof(alloc_header_t);
    if (vertices == NULL || ((alloc_header_t *)raw)->magic != ALLOC_MAGIC) {
        atomicAdd(&kit_heap.bad_frees, 1u);
        return;
    }
    ((alloc_header_t *)raw)->magic = 0;
    if (raw >= kit_pool.base && raw < kit_pool.base + kit_pool.size)
        atomicAdd(&kit_heap.frees, 1u); /* the pool is reset as a whole */
    else if (cudaFree(raw) == cudaSuccess)
        atomicAdd(&kit_heap.frees, 1u);
    else
        atomicAdd(&kit_heap.free_failures, 1u);
}

/* Kit versions, for the timing comparisons. */
__global__ void kit_counts(const bezier_line_t *lines, int n_lines, float factor, int max_vertices, int *counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines)
        counts[i] = vertex_count(&lines[i], factor, max_vertices);
}

/* Flat, as the textbook has it but with an exact layout (offsets from the counts), so that its
 * memory does not limit the sizes it can be timed at. */
__global__ void kit_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                         const long long *offsets, float2 *out)
{
    bezier_line_t *line = &lines[blockIdx.x];
    int n = vertex_count(line, factor, max_vertices);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[offsets[blockIdx.x] + i] = bezier_point(line, i, n);
}

__global__ void kit_child(bezier_line_t *line, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        line->vertices[i] = bezier_point(line, i, n);
}

#define KIT_STREAM_NULL 0
#define KIT_STREAM_FIRE_AND_FORGET 1
/* The dynamic version with the child in the NULL stream or fire-and-forget. */
__global__ void kit_cdp(bezier_line_t *lines, int n_lines, float factor, int max_vertices, int stream_kind)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_lines)
        return;
    bezier_line_t *line = &lines[i];
    int n = vertex_count(line, factor, max_vertices);
    line->n_vertices = n;
    line->vertices = kit_malloc_vertices(n);
    if (line->vertices == NULL)
        return;
    if (stream_kind == KIT_STREAM_FIRE_AND_FORGET)
        kit_child<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(line, n);
    else
        kit_child<<<(n + 31) / 32, 32>>>(line, n);
    KIT_CHECK_LAUNCH();
}

__global__ void kit_free_all(bezier_line_t *lines, int n_lines)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines && lines[i].vertices != NULL) {
        kit_free_vertices(lines[i].vertices);
        lines[i].vertices = NULL;
    }
}

#define STATUS_OK 0
#define STATUS_MISSING 1
#define STATUS_COUNT 2
#define STATUS_OVERRUN 3

/* Copies each line's vertices into out (host-readable: device-heap memory is not), and checks the
 * count and, for kit heap blocks, the fence. One block per line. */
__global__ void kit_gather(const bezier_line_t *lines, const int *expected, const long long *offsets,
                           float2 *out, int *status, int heap_blocks)
{
    const bezier_line_t *line = &lines[blockIdx.x];
    int n = expected[blockIdx.x];
    __shared__ int verdict;
    if (threadIdx.x == 0) {
        verdict = STATUS_OK;
        if (line->vertices == NULL)
            verdict = STATUS_MISSING;
        else if (line->n_vertices != n)
            verdict = STATUS_COUNT;
        else if (heap_blocks && ((const alloc_header_t *)((const char *)line->vertices -
                                                           sizeof(alloc_header_t)))->magic == ALLOC_MAGIC) {
            const char *raw = (const char *)line->vertices - sizeof(alloc_header_t);
            const alloc_header_t *h = (const alloc_header_t *)raw;
            const unsigned int *fence = (const unsigned int *)(raw + sizeof(alloc_header_t) + h->bytes);
            for (int k = 0; k < FENCE_WORDS; k++)
                if (fence[k] != FENCE_WORD)
                    verdict = STATUS_OVERRUN;
        }
        status[blockIdx.x] = verdict;
    }
    __syncthreads();
    if (verdict == STATUS_MISSING || verdict == STATUS_COUNT)
        return;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[offsets[blockIdx.x] + i] = line->vertices[i];
}

/* ---------------- host side ---------------- */

typedef struct {
    unsigned long long s;
} rng_t;

static double rng_uniform(rng_t *r) /* xorshift64*, [0, 1) */
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static float2 make_point(double x, double y)
{
    float2 p;
    p.x = (float)x;
    p.y = (float)y;
    return p;
}

/* chained: the textbook's generator (each curve starts where the last ended, random points in the
 * unit square), with a coincident-endpoint line, a straight line and an extremely curved line first.
 * heavy: one line in HEAVY_EVERY needs max_vertices, the others at most SHORT_MAX. */
static void generate(bezier_line_t *lines, int n, int heavy, float factor, unsigned long long seed)
{
    rng_t r = {seed * 0x9E3779B97F4A7C15ULL + 1};
    double lx = rng_uniform(&r), ly = rng_uniform(&r);
    for (int i = 0; i < n; i++) {
        bezier_line_t *l = &lines[i];
        memset(l, 0, sizeof *l);
        if (heavy) {
            double x0 = rng_uniform(&r), y0 = rng_uniform(&r), angle = 6.283185307179586 * rng_uniform(&r);
            double span = 0.25 + 0.25 * rng_uniform(&r);
            double x2 = x0 + span * cos(angle), y2 = y0 + span * sin(angle);
            double curvature = i % HEAVY_EVERY == 0 ? 1e9 / factor
                                                    : (MIN_VERTICES + (SHORT_MAX - MIN_VERTICES) * rng_uniform(&r)) / factor;
            double bend = curvature * span;
            if (bend > 1e6)
                bend = 1e6;
            l->cp[0] = make_point(x0, y0);
            l->cp[1] = make_point(0.5 * (x0 + x2) - bend * sin(angle), 0.5 * (y0 + y2) + bend * cos(angle));
            l->cp[2] = make_point(x2, y2);
        } else if (i == 0) { /* coincident endpoints */
            l->cp[0] = make_point(lx, ly);
            l->cp[1] = make_point(rng_uniform(&r), rng_uniform(&r));
            l->cp[2] = make_point(lx, ly);
        } else if (i == 1) { /* straight: P1 at the midpoint */
            double x2 = rng_uniform(&r), y2 = rng_uniform(&r);
            l->cp[0] = make_point(lx, ly);
            l->cp[1] = make_point(0.5 * (lx + x2), 0.5 * (ly + y2));
            l->cp[2] = make_point(x2, y2);
            lx = x2;
            ly = y2;
        } else if (i == 2) { /* extreme curvature */
            double x2 = lx + 1e-4, y2 = ly;
            l->cp[0] = make_point(lx, ly);
            l->cp[1] = make_point(lx, ly + 100.0);
            l->cp[2] = make_point(x2, y2);
            lx = x2;
        } else {
            double x1 = rng_uniform(&r), y1 = rng_uniform(&r), x2 = rng_uniform(&r), y2 = rng_uniform(&r);
            l->cp[0] = make_point(lx, ly);
            l->cp[1] = make_point(x1, y1);
            l->cp[2] = make_point(x2, y2);
            lx = x2;
            ly = y2;
        }
    }
}

/* The most vertices the workload can need, all lines together. */
static long long max_total_vertices(int n, int heavy, int max_vertices)
{
    if (!heavy)
        return (long long)n * max_vertices;
    long long long_lines = (n + HEAVY_EVERY - 1) / HEAVY_EVERY;
    int short_max = SHORT_MAX + 1 < max_vertices ? SHORT_MAX + 1 : max_vertices;
    return long_lines * max_vertices + ((long long)n - long_lines) * short_max;
}

typedef struct {
    int n_lines, heavy, max_vertices;
    float factor;
    bezier_line_t *h_lines; /* control points */
    bezier_line_t *d_lines;
    int *h_counts, *d_counts; /* expected counts, from the kit's vertex_count */
    long long *h_offsets, *d_offsets, total;
    float2 *d_out, *h_out;
    int *d_status, *h_status;
    float2 *d_worst; /* flat: n_lines * max_vertices */
} workload_t;

static void workload_init(workload_t *w, int n, int heavy, int max_vertices, float factor, unsigned long long seed,
                          int flat_arrays)
{
    memset(w, 0, sizeof *w);
    w->n_lines = n;
    w->heavy = heavy;
    w->max_vertices = max_vertices;
    w->factor = factor;
    w->h_lines = (bezier_line_t *)calloc((size_t)n, sizeof(bezier_line_t));
    w->h_counts = (int *)malloc(sizeof(int) * (size_t)n);
    w->h_offsets = (long long *)malloc(sizeof(long long) * (size_t)n);
    w->h_status = (int *)malloc(sizeof(int) * (size_t)n);
    if (!w->h_lines || !w->h_counts || !w->h_offsets || !w->h_status) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    generate(w->h_lines, n, heavy, factor, seed);
    KIT_CHECK(cudaMalloc((void **)&w->d_lines, sizeof(bezier_line_t) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&w->d_counts, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&w->d_status, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMemcpy(w->d_lines, w->h_lines, sizeof(bezier_line_t) * (size_t)n, cudaMemcpyHostToDevice));
    kit_counts<<<(n + 127) / 128, 128>>>(w->d_lines, n, factor, max_vertices, w->d_counts);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(w->h_counts, w->d_counts, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    w->total = 0;
    for (int i = 0; i < n; i++) {
        w->h_offsets[i] = w->total;
        w->total += w->h_counts[i];
    }
    KIT_CHECK(cudaMalloc((void **)&w->d_offsets, sizeof(long long) * (size_t)n));
    KIT_CHECK(cudaMemcpy(w->d_offsets, w->h_offsets, sizeof(long long) * (size_t)n, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMalloc((void **)&w->d_out, sizeof(float2) * (size_t)w->total));
    w->h_out = (float2 *)malloc(sizeof(float2) * (size_t)w->total);
    if (w->h_out == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    if (flat_arrays)
        KIT_CHECK(cudaMalloc((void **)&w->d_worst, sizeof(float2) * (size_t)n * (size_t)max_vertices));
}

static void workload_free(workload_t *w)
{
    KIT_CHECK(cudaFree(w->d_lines));
    KIT_CHECK(cudaFree(w->d_counts));
    KIT_CHECK(cudaFree(w->d_status));
    KIT_CHECK(cudaFree(w->d_offsets));
    KIT_CHECK(cudaFree(w->d_out));
    if (w->d_worst)
        KIT_CHECK(cudaFree(w->d_worst));
    free(w->h_lines);
    free(w->h_counts);
    free(w->h_offsets);
    free(w->h_status);
    free(w->h_out);
}

/* Lines as the kit hands them over: control points, no vertices (flat: the worst-case arrays). */
static void reset_lines(workload_t *w, int flat)
{
    for (int i = 0; i < w->n_lines; i++) {
        w->h_lines[i].vertices = flat ? w->d_worst + (size_t)i * w->max_vertices : NULL;
        w->h_lines[i].n_vertices = -1;
    }
    KIT_CHECK(cudaMemcpy(w->d_lines, w->h_lines, sizeof(bezier_line_t) * (size_t)w->n_lines,
                         cudaMemcpyHostToDevice));
}

typedef struct {
    int lines_bad, missing, count_wrong, overruns;
    long long vertices_wrong;
    int first_bad_line, first_bad_index, first_bad_status;
    double first_got_x, first_got_y, first_want_x, first_want_y, max_error;
} check_t;

/* Gathers the vertices the student's code left in the lines and compares every one with a
 * double-precision evaluation of the curve. */
static check_t check_lines(workload_t *w, int heap_blocks)
{
    check_t c;
    memset(&c, 0, sizeof c);
    c.first_bad_line = -1;
    kit_gather<<<w->n_lines, 128>>>(w->d_lines, w->d_counts, w->d_offsets, w->d_out, w->d_status, heap_blocks);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(w->h_status, w->d_status, sizeof(int) * (size_t)w->n_lines, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(w->h_out, w->d_out, sizeof(float2) * (size_t)w->total, cudaMemcpyDeviceToHost));
    for (int l = 0; l < w->n_lines; l++) {
        const bezier_line_t *line = &w->h_lines[l];
        int n = w->h_counts[l], bad = 0;
        int status = w->h_status[l];
        c.missing += status == STATUS_MISSING;
        c.count_wrong += status == STATUS_COUNT;
        c.overruns += status == STATUS_OVERRUN;
        if (status == STATUS_MISSING || status == STATUS_COUNT) {
            bad = 1;
        } else {
            double scale = 1.0;
            for (int k = 0; k < 3; k++)
                scale = fmax(scale, fmax(fabs(line->cp[k].x), fabs(line->cp[k].y)));
            for (int i = 0; i < n; i++) {
                double u = (double)i / (double)(n - 1);
                double a = (1 - u) * (1 - u), b = 2 * u * (1 - u), cc = u * u;
                double wx = a * line->cp[0].x + b * line->cp[1].x + cc * line->cp[2].x;
                double wy = a * line->cp[0].y + b * line->cp[1].y + cc * line->cp[2].y;
                float2 got = w->h_out[w->h_offsets[l] + i];
                double err = fmax(fabs(got.x - wx), fabs(got.y - wy));
                if (!(err <= 1e-5 * scale)) { /* NaN fails too */
                    c.vertices_wrong++;
                    if (!bad && c.first_bad_line < 0) {
                        c.first_bad_index = i;
                        c.first_got_x = got.x;
                        c.first_got_y = got.y;
                        c.first_want_x = wx;
                        c.first_want_y = wy;
                    }
                    bad = 1;
                } else if (err > c.max_error) {
                    c.max_error = err;
                }
            }
            bad |= status == STATUS_OVERRUN;
        }
        if (bad) {
            if (c.first_bad_line < 0) {
                c.first_bad_line = l;
                c.first_bad_status = status;
            }
            c.lines_bad++;
        }
    }
    return c;
}

static void json_check(kit_json_t *j, const char *key, check_t c)
{
    static const char *const status_names[] = {"wrong vertices", "no vertices (NULL)", "wrong vertex count",
                                               "wrote past the end of its block"};
    kit_json_begin_object(j, key);
    kit_json_int(j, "lines_bad", c.lines_bad);
    kit_json_int(j, "missing", c.missing);
    kit_json_int(j, "count_wrong", c.count_wrong);
    kit_json_int(j, "overruns", c.overruns);
    kit_json_int(j, "vertices_wrong", c.vertices_wrong);
    kit_json_int(j, "first_bad_line", c.first_bad_line);
    kit_json_string(j, "first_bad_what", c.first_bad_line < 0 ? "" : status_names[c.first_bad_status]);
    kit_json_int(j, "first_bad_index", c.first_bad_index);
    kit_json_double(j, "first_got_x", c.first_got_x);
    kit_json_double(j, "first_got_y", c.first_got_y);
    kit_json_double(j, "first_want_x", c.first_want_x);
    kit_json_double(j, "first_want_y", c.first_want_y);
    kit_json_double(j, "max_error", c.max_error);
    kit_json_end_object(j);
}

static void print_check(const char *what, check_t c, int n)
{
    if (c.lines_bad == 0) {
        printf("  %s: all %d lines right (largest error %.2g)\n", what, n, c.max_error);
        return;
    }
    printf("  %s: %d of %d lines wrong (%d without vertices, %d with a wrong count, %d written past the end, "
           "%lld vertices wrong); first: line %d", what, c.lines_bad, n, c.missing, c.count_wrong, c.overruns,
           c.vertices_wrong, c.first_bad_line);
    if (c.vertices_wrong && c.first_bad_status == STATUS_OK)
        printf(", vertex %d is (%g, %g), expected (%g, %g)", c.first_bad_index, c.first_got_x, c.first_got_y,
               c.first_want_x, c.first_want_y);
    printf("\n");
}

static heap_stats_t read_heap(void)
{
    heap_stats_t h;
    KIT_CHECK(cudaMemcpyFromSymbol(&h, kit_heap, sizeof h));
    return h;
}

static void reset_heap(void)
{
    heap_stats_t zero;
    memset(&zero, 0, sizeof zero);
    KIT_CHECK(cudaMemcpyToSymbol(kit_heap, &zero, sizeof zero));
}

/* ---- timing ---- */

typedef struct {
    workload_t *w;
    int version; /* VERSION_* */
    char *pool;  /* vertex blocks come from here while timing */
    unsigned long long pool_size;
} timed_t;

#define VERSION_FLAT 0
#define VERSION_CDP_NULL 1
#define VERSION_CDP_STUDENT 2
#define VERSION_CDP_FIRE_AND_FORGET 3
#define N_VERSIONS 4
static const char *const version_names[N_VERSIONS] = {"flat (kit)", "CDP, NULL stream (kit)",
                                                      "CDP, your streams", "CDP, fire-and-forget (kit)"};

static void set_pool(char *base, unsigned long long size)
{
    pool_t p = {base, size, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_pool, &p, sizeof p));
}

static void timed_reset(void *p)
{
    timed_t *t = (timed_t *)p;
    if (t->version != VERSION_FLAT) {
        kit_free_all<<<(t->w->n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(t->w->d_lines,
                                                                                             t->w->n_lines);
        KIT_CHECK_KERNEL();
        set_pool(t->pool, t->pool_size);
    }
}

static void timed_launch(void *p)
{
    timed_t *t = (timed_t *)p;
    workload_t *w = t->w;
    int parents = (w->n_lines + PARENT_THREADS - 1) / PARENT_THREADS;
    switch (t->version) {
    case VERSION_FLAT:
        kit_flat<<<w->n_lines, FLAT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets,
                                              w->d_out);
        break;
    case VERSION_CDP_NULL:
        kit_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, KIT_STREAM_NULL);
        break;
    case VERSION_CDP_STUDENT:
        tessellate_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices);
        break;
    default:
        kit_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices,
                                             KIT_STREAM_FIRE_AND_FORGET);
    }
}

/* Median time of one version. The CDP versions get their vertex blocks from a pool the kit
 * allocated beforehand (kit_pool), so that all of them are timed on their launches alone. */
static kit_timing_t time_version(workload_t *w, int version, int repeats)
{
    timed_t t = {w, version, NULL, 0};
    t.pool_size = (unsigned long long)w->total * sizeof(float2) +
                  (unsigned long long)w->n_lines * (KIT_ALLOC_OVERHEAD + 16);
    KIT_CHECK(cudaMalloc((void **)&t.pool, t.pool_size));
    reset_lines(w, 0);
    kit_timing_t result = kit_time_kernel(timed_reset, timed_launch, &t, 1, repeats);
    timed_reset(&t);
    set_pool(NULL, 0);
    KIT_CHECK(cudaFree(t.pool));
    return result;
}

static void bench(int max_heavy, float factor, unsigned long long seed, int repeats)
{
    static const int line_counts[] = {1024, 4096, 16384};
    printf("median of %d runs, ms; one child grid per line in the CDP versions, parents in blocks of %d;\n"
           "vertex blocks preallocated by the kit, so the CDP versions are timed on their launches\n",
           repeats, PARENT_THREADS);
    printf("%-9s %6s %8s", "workload", "lines", "vertices");
    for (int v = 0; v < N_VERSIONS; v++)
        printf(" | %26s", version_names[v]);
    printf("\n");
    for (int heavy = 0; heavy <= 1; heavy++) {
        for (int k = 0; k < 3; k++) {
            workload_t w;
            workload_init(&w, line_counts[k], heavy, heavy ? max_heavy : 32, factor, seed, 0);
            printf("%-9s %6d %8lld", heavy ? "heavy" : "chained", w.n_lines, w.total);
            for (int v = 0; v < N_VERSIONS; v++)
                printf(" | %26.3f", time_version(&w, v, repeats).median_ms);
            printf("\n");
            fflush(stdout);
            workload_free(&w);
        }
    }
}

static void write_svg(const char *path, workload_t *w)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    int n = w->n_lines < SVG_MAX_LINES ? w->n_lines : SVG_MAX_LINES;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"-0.05 -0.05 1.1 1.2\" width=\"720\" "
               "height=\"785\">\n<rect x=\"-0.05\" y=\"-0.05\" width=\"1.1\" height=\"1.2\" fill=\"white\"/>\n");
    /* Text in units of 1/1000: some renderers mishandle fonts smaller than one unit. */
    fprintf(f, "<text x=\"0\" y=\"1120\" transform=\"scale(0.001)\" font-family=\"sans-serif\" font-size=\"30\">"
               "%d curves; vertex colour: blue = %d vertices ... red = %d</text>\n", n, MIN_VERTICES, w->max_vertices);
    for (int l = 0; l < n; l++) {
        int count = w->h_counts[l];
        double t = w->max_vertices > MIN_VERTICES
                       ? (double)(count - MIN_VERTICES) / (double)(w->max_vertices - MIN_VERTICES) : 1.0;
        int red = (int)(255 * t), blue = 255 - red;
        fprintf(f, "<polyline fill=\"none\" stroke=\"#bbb\" stroke-width=\"0.002\" points=\"");
        for (int i = 0; i < count; i++) {
            float2 p = w->h_out[w->h_offsets[l] + i];
            if (fabsf(p.x) < 10 && fabsf(p.y) < 10)
                fprintf(f, "%.4f,%.4f ", p.x, 1.0 - p.y);
        }
        fprintf(f, "\"/>\n");
        for (int i = 0; i < count; i++) {
            float2 p = w->h_out[w->h_offsets[l] + i];
            if (p.x >= -0.05f && p.x <= 1.05f && p.y >= -0.05f && p.y <= 1.05f)
                fprintf(f, "<circle cx=\"%.4f\" cy=\"%.4f\" r=\"0.003\" fill=\"rgb(%d,0,%d)\"/>\n", p.x, 1.0 - p.y,
                        red, blue);
        }
    }
    fprintf(f, "</svg>\n");
    fclose(f);
    printf("wrote %s (%d curves)\n", path, n);
}

int main(int argc, char **argv)
{
    static const char *const options[] = {"--lines", "--workload", "--factor", "--max", "--seed", "--repeats",
                                          "--svg", "--bench", "--json", "--nonce-fd", NULL};
    kit_args_require_known(argc, argv, options);
    kit_result_take_nonce(argc, argv); /* before any student code runs */
    int n_lines = (int)kit_arg_long(argc, argv, "--lines", 1000, 1, MAX_LINES);
    const char *workload_name = kit_arg_string(argc, argv, "--workload", "chained");
    int max_vertices = (int)kit_arg_long(argc, argv, "--max", 32, MIN_VERTICES, MAX_MAX_VERTICES);
    float factor = (float)kit_arg_long(argc, argv, "--factor", 16, 1, 1000000);
    unsigned long long seed = (unsigned long long)kit_arg_long(argc, argv, "--seed", 1, 0, 2000000000L);
    int repeats = (int)kit_arg_long(argc, argv, "--repeats", 0, 0, 100);
    int bench_mode = (int)kit_arg_long(argc, argv, "--bench", 0, 0, 1);
    const char *svg_path = kit_arg_string(argc, argv, "--svg", NULL);
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    int heavy = strcmp(workload_name, "heavy") == 0;
    if (!heavy && strcmp(workload_name, "chained") != 0) {
        fprintf(stderr, "--workload must be chained or heavy\n");
        return KIT_EXIT_USAGE;
    }

    /* Your host-side preparation, before any launch: limits are read when the device runtime starts. */
    if (bench_mode) {
        long long heaviest = max_total_vertices(16384, 1, max_vertices);
        prepare_cdp(16384, heaviest > 16384LL * 32 ? heaviest : 16384LL * 32);
    } else
        prepare_cdp(n_lines, max_total_vertices(n_lines, heavy, max_vertices));

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t pending = 0, heap = 0;
    KIT_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    KIT_CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    printf("device: %s (compute capability %d.%d); pending-launch limit %zu, device heap %.1f MiB\n", prop.name,
           prop.major, prop.minor, pending, heap / 1048576.0);
    if (bench_mode) {
        bench(max_vertices, factor, seed, repeats > 0 ? repeats : 5);
        return 0;
    }

    long long worst_bytes = (long long)n_lines * max_vertices * (long long)sizeof(float2);
    /* The flat version needs the worst case for every line; past FLAT_MAX_BYTES it is not run. */
    int run_flat = worst_bytes <= FLAT_MAX_BYTES;
    workload_t w;
    workload_init(&w, n_lines, heavy, max_vertices, factor, seed, run_flat);
    printf("%d %s lines, factor %g, max %d: %lld vertices in all\n", n_lines, workload_name, factor, max_vertices,
           w.total);

    /* 1. flat */
    kit_launch_log_reset();
    check_t flat;
    memset(&flat, 0, sizeof flat);
    flat.first_bad_line = -1;
    if (run_flat) {
        reset_lines(&w, 1);
        tessellate_flat<<<n_lines, FLAT_THREADS>>>(w.d_lines, n_lines, factor, max_vertices);
        KIT_CHECK_KERNEL();
        flat = check_lines(&w, 0);
        print_check("flat", flat, n_lines);
    } else {
        printf("  flat: not run (its worst-case arrays would take %.1f GiB)\n", worst_bytes / 1073741824.0);
    }
    kit_launch_log_t flat_log = kit_launch_log_read();

    /* 2-4. dynamic */
    reset_lines(&w, 0);
    reset_heap();
    kit_launch_log_reset();
    tessellate_cdp<<<(n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(w.d_lines, n_lines, factor,
                                                                                      max_vertices);
    KIT_CHECK_KERNEL();
    kit_launch_log_t cdp_log = kit_launch_log_read();
    check_t cdp = check_lines(&w, 1);
    print_check("dynamic", cdp, n_lines);
    kit_print_launch_log("  ", cdp_log);
    heap_stats_t allocated = read_heap();
    printf("  device heap: %u blocks, %llu bytes asked for (exact need %lld; the flat worst case %lld); "
           "%u allocations failed\n", allocated.allocations, allocated.bytes_requested,
           w.total * (long long)sizeof(float2), worst_bytes, allocated.alloc_failures);
    if (svg_path != NULL)
        write_svg(svg_path, &w);

    /* 5. free */
    free_vertices<<<(n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(w.d_lines, n_lines);
    KIT_CHECK_KERNEL();
    heap_stats_t freed = read_heap();
    printf("  freed: %u of %u blocks", freed.frees, freed.allocations);
    if (freed.bad_frees || freed.free_failures)
        printf(" (%u frees of blocks not from kit_malloc_vertices, %u failed)", freed.bad_frees, freed.free_failures);
    printf("\n");
    kit_free_all<<<(n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(w.d_lines, n_lines);
    KIT_CHECK_KERNEL();

    kit_timing_t times[N_VERSIONS];
    memset(times, 0, sizeof times);
    if (repeats > 0) {
        for (int v = 0; v < N_VERSIONS; v++) {
            times[v] = time_version(&w, v, repeats);
            printf("  %-28s median %.3f ms (min %.3f, max %.3f)\n", version_names[v], times[v].median_ms,
                   times[v].min_ms, times[v].max_ms);
        }
    }

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "04-bezier-streams");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "lines", n_lines);
        kit_json_string(&j, "workload", workload_name);
        kit_json_double(&j, "factor", factor);
        kit_json_int(&j, "max", max_vertices);
        kit_json_int(&j, "seed", (long long)seed);
        kit_json_int(&j, "repeats", repeats);
        kit_json_end_object(&j);
        kit_json_uint(&j, "pending_launch_limit", pending);
        kit_json_uint(&j, "heap_bytes", heap);
        kit_json_int(&j, "total_vertices", w.total);
        kit_json_int(&j, "exact_bytes", w.total * (long long)sizeof(float2));
        kit_json_int(&j, "worst_case_bytes", worst_bytes);
        json_check(&j, "flat", flat);
        kit_json_bool(&j, "flat_ran", run_flat);
        kit_json_launch_log(&j, "launch_log", flat_log);
        json_check(&j, "cdp", cdp);
        kit_json_launch_log(&j, "cdp_log", cdp_log);
        kit_json_begin_object(&j, "heap");
        kit_json_uint(&j, "allocations", allocated.allocations);
        kit_json_uint(&j, "alloc_failures", allocated.alloc_failures);
        kit_json_uint(&j, "bytes_requested", allocated.bytes_requested);
        kit_json_uint(&j, "frees", freed.frees);
        kit_json_uint(&j, "bad_frees", freed.bad_frees);
        kit_json_uint(&j, "free_failures", freed.free_failures);
        kit_json_end_object(&j);
        if (repeats > 0) {
            static const char *const keys[N_VERSIONS] = {"flat", "cdp_null", "cdp_student", "cdp_fire_and_forget"};
            kit_json_begin_object(&j, "timing_ms");
            for (int v = 0; v < N_VERSIONS; v++)
                kit_json_double(&j, keys[v], times[v].median_ms);
            kit_json_end_object(&j);
        }
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    workload_free(&w);
    return 0;
}
