/* bezier_lines.cu - the kit's Bezier lines: the seeded line generator, the expected vertex counts,
 * the kit's device heap for vertex arrays, the kit's own versions for the timing comparisons, and
 * the check of every vertex against a double-precision reference. Lab 04's harness grades and
 * times with them; Lab 06's harness uses this very object for its Part C, so that both labs check
 * vertices the same way. Holds no call to a student function: every program links it, whatever lab
 * it belongs to.
 *
 * The kit's versions are here too, beside vertex_count and bezier_point, so that the compiler
 * inlines those into them (it does not inline a call into another object). They are not Lab 04's
 * answer: none of them allocates a line's vertices, stores them in the line or frees them (see
 * "Kit versions" below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bezier_lines.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_result.h"

#define HEAVY_EVERY 256          /* heavy workload: one line in 256 needs max_vertices */
#define SHORT_MAX 30             /* heavy workload: the other lines need at most this many */
#define FENCE_WORD 0x7fbadf00u   /* a NaN: no vertex computation produces it */
#define ALLOC_MAGIC 0x6b69746d616c6c6fULL

/* ---------------- kit-owned device code ---------------- */

/* The grid probe (grid_probe_start .. grid_probe_stop): per line of one workload, the identity
 * (PTX %gridid) of the grid that first asked vertex_count for it and of the grid that first
 * computed its vertex 0. A line is known by its address in the workload's d_lines; a line elsewhere
 * (a copy) is not recorded. */
#define NO_GRID 0xffffffffffffffffULL
typedef struct {
    const bezier_line_t *lines; /* NULL: off */
    int n_lines;
    unsigned long long *count_grid, *point_grid;
} grid_probe_t;
static __device__ grid_probe_t kit_grid_probe;

static __device__ void probe_line(unsigned long long *grids, const bezier_line_t *line)
{
    const bezier_line_t *base = kit_grid_probe.lines;
    if (line >= base && line < base + kit_grid_probe.n_lines)
        atomicCAS(&grids[line - base], NO_GRID, kit_grid_id());
}

__device__ int vertex_count(const bezier_line_t *line, float factor, int max_vertices)
{
    if (kit_grid_probe.lines != NULL)
        probe_line(kit_grid_probe.count_grid, line);
    float2 p0 = line->cp[0], p1 = line->cp[1], p2 = line->cp[2];
    float bend = hypotf(p1.x - 0.5f * (p0.x + p2.x), p1.y - 0.5f * (p0.y + p2.y));
    float span = hypotf(p2.x - p0.x, p2.y - p0.y);
    float scaled = span > 0.0f ? bend / span * factor : INFINITY; /* P0 == P2: as curved as it gets */
    if (!(scaled < (float)max_vertices))
        return max_vertices;
    int n = (int)scaled;
    return n < MIN_VERTICES ? MIN_VERTICES : n;
}

/* While counting (point_calls_start .. point_calls_stop), every call of bezier_point is counted, and
 * so is every call for a vertex outside the line (i < 0 or i >= n): a vertex computed twice, or by
 * both a parent and its child, shows as more calls than vertices. Off while timing. */
static __device__ int kit_counting_points;
static __device__ point_calls_t kit_point_calls;

__device__ float2 bezier_point(const bezier_line_t *line, int i, int n)
{
    if (kit_counting_points) {
        atomicAdd(&kit_point_calls.calls, 1ULL);
        if (i < 0 || i >= n)
            atomicAdd(&kit_point_calls.out_of_range, 1ULL);
    }
    if (i == 0 && kit_grid_probe.lines != NULL)
        probe_line(kit_grid_probe.point_grid, line);
    float u = (float)i / (float)(n - 1);
    float a = (1.0f - u) * (1.0f - u), b = 2.0f * u * (1.0f - u), c = u * u;
    float2 p;
    p.x = a * line->cp[0].x + b * line->cp[1].x + c * line->cp[2].x;
    p.y = a * line->cp[0].y + b * line->cp[1].y + c * line->cp[2].y;
    return p;
}

/* The kit's heap blocks: a header, the vertices, a fence. slot: the block's entry in the list of live
 * blocks (kit_blocks), NO_SLOT when it is not listed. 32 bytes keep the vertices 16-byte aligned. */
typedef struct {
    unsigned long long bytes;
    unsigned long long magic;
    unsigned long long slot;
    unsigned long long unused;
} alloc_header_t;
#define NO_SLOT (~0ULL)
#define FENCE_WORDS ((KIT_ALLOC_OVERHEAD - (int)sizeof(alloc_header_t)) / 4)

static __device__ heap_stats_t kit_heap;

/* Timing runs measure the launches, not the allocator: while kit_pool is set, blocks are carved
 * from one buffer the kit allocated beforehand instead of the device heap. */
typedef struct {
    char *base;
    unsigned long long size, next;
} pool_t;
static __device__ pool_t kit_pool;

/* While raw is set, every block taken from the device heap is listed here (heap_blocks_track) and its
 * entry cleared when kit_free_vertices frees it, so that the kit can free what a case's free step left
 * (heap_blocks_free_left) before the next case of the process needs the heap, without touching a block
 * already freed. */
typedef struct {
    char **raw;
    unsigned int capacity, count;
} block_list_t;
static __device__ block_list_t kit_blocks;

__device__ float2 *kit_malloc_vertices(int count)
{
    size_t bytes = (size_t)(count > 0 ? count : 0) * sizeof(float2);
    char *raw = NULL;
    unsigned long long slot = NO_SLOT;
    if (kit_pool.base != NULL) {
        unsigned long long need = (bytes + KIT_ALLOC_OVERHEAD + 15) & ~15ULL;
        unsigned long long at = atomicAdd(&kit_pool.next, need);
        if (at + need <= kit_pool.size)
            raw = kit_pool.base + at;
    } else if (cudaMalloc((void **)&raw, bytes + KIT_ALLOC_OVERHEAD) != cudaSuccess) {
        raw = NULL;
    } else if (kit_blocks.raw != NULL) {
        unsigned int at = atomicAdd(&kit_blocks.count, 1u);
        if (at < kit_blocks.capacity) {
            kit_blocks.raw[at] = raw;
            slot = at;
        }
    }
    if (raw == NULL) {
        atomicAdd(&kit_heap.alloc_failures, 1u);
        return NULL;
    }
    alloc_header_t *h = (alloc_header_t *)raw;
    h->bytes = bytes;
    h->magic = ALLOC_MAGIC;
    h->slot = slot;
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
    unsigned long long slot = ((alloc_header_t *)raw)->slot;
    if (kit_blocks.raw != NULL && slot < kit_blocks.capacity)
        kit_blocks.raw[slot] = NULL;
    if (raw >= kit_pool.base && raw < kit_pool.base + kit_pool.size)
        atomicAdd(&kit_heap.frees, 1u); /* the pool is reset as a whole */
    else if (cudaFree(raw) == cudaSuccess)
        atomicAdd(&kit_heap.frees, 1u);
    else
        atomicAdd(&kit_heap.free_failures, 1u);
}

/* Frees every block still listed: those kit_free_vertices did not free. */
__global__ void kit_free_listed(unsigned int *freed)
{
    unsigned int count = kit_blocks.count < kit_blocks.capacity ? kit_blocks.count : kit_blocks.capacity;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        char *raw = kit_blocks.raw[i];
        if (raw == NULL)
            continue;
        ((alloc_header_t *)raw)->magic = 0;
        if (cudaFree(raw) == cudaSuccess)
            atomicAdd(freed, 1u);
    }
}

/* The vertex count of every line, once, for the expected counts and the exact layout (workload_init). */
__global__ void kit_counts(const bezier_line_t *lines, int n_lines, float factor, int max_vertices, int *counts)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_lines)
        counts[i] = vertex_count(&lines[i], factor, max_vertices);
}

/* Kit versions, for the timing comparisons. They are not the exercise: they write every line's
 * vertices into the kit's exact-layout buffer (out + offsets[line], laid out from the counts
 * kit_counts computed), never into the lines, so they take nothing from the device heap, store
 * nothing in a line and leave nothing to free. */

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

/* The kit's child: vertex k of one line, written to dest[k] (the line's place in the kit's buffer). */
__global__ void kit_child(const bezier_line_t *line, int n, float2 *dest)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        dest[k] = bezier_point(line, k, n);
}

/* Dynamic, one thread per line: a child grid of ceil(n / 32) blocks of 32 per line, into the NULL
 * stream or fire-and-forget, writing into the kit's exact-layout buffer. */
__global__ void kit_cdp(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                        const long long *offsets, float2 *out, int stream_kind)
{
    int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= n_lines)
        return;
    int n = vertex_count(&lines[l], factor, max_vertices);
    float2 *dest = out + offsets[l];
    if (stream_kind == KIT_STREAM_FIRE_AND_FORGET)
        kit_child<<<(n + 31) / 32, 32, 0, cudaStreamFireAndForget>>>(&lines[l], n, dest);
    else
        kit_child<<<(n + 31) / 32, 32>>>(&lines[l], n, dest);
    KIT_CHECK_LAUNCH();
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
long long max_total_vertices(int n, int heavy, int max_vertices)
{
    if (!heavy)
        return (long long)n * max_vertices;
    long long long_lines = (n + HEAVY_EVERY - 1) / HEAVY_EVERY;
    int short_max = SHORT_MAX + 1 < max_vertices ? SHORT_MAX + 1 : max_vertices;
    return long_lines * max_vertices + ((long long)n - long_lines) * short_max;
}

void workload_init(workload_t *w, int n, int heavy, int max_vertices, float factor, unsigned long long seed,
                   int flat_arrays)
{
    memset(w, 0, sizeof *w);
    w->n_lines = n;
    w->heavy = heavy;
    w->max_vertices = max_vertices;
    w->factor = factor;
    w->h_lines = (bezier_line_t *)kit_host_alloc(sizeof(bezier_line_t) * (size_t)n);
    w->h_counts = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    w->h_offsets = (long long *)kit_host_alloc(sizeof(long long) * (size_t)n);
    w->h_status = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    generate(w->h_lines, n, heavy, factor, seed);
    /* The guard line past the end: straight (MIN_VERTICES vertices), its vertices in a zeroed kit
     * buffer whose header lacks ALLOC_MAGIC, so kit_free_vertices counts freeing it as a bad free. */
    bezier_line_t guard;
    memset(&guard, 0, sizeof guard);
    guard.cp[1] = make_point(0.5, 0.5);
    guard.cp[2] = make_point(1.0, 1.0);
    guard.n_vertices = -1;
    size_t guard_bytes = sizeof(alloc_header_t) + MIN_VERTICES * sizeof(float2);
    char *guard_raw = NULL;
    KIT_CHECK(cudaMalloc((void **)&guard_raw, guard_bytes));
    KIT_CHECK(cudaMemset(guard_raw, 0, guard_bytes));
    w->d_guard_block = (float2 *)(guard_raw + sizeof(alloc_header_t));
    guard.vertices = w->d_guard_block;
    KIT_CHECK(cudaMalloc((void **)&w->d_lines, sizeof(bezier_line_t) * ((size_t)n + 1)));
    KIT_CHECK(cudaMemcpy(w->d_lines + n, &guard, sizeof guard, cudaMemcpyHostToDevice));
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
    w->h_out = (float2 *)kit_host_alloc(sizeof(float2) * (size_t)w->total);
    if (flat_arrays)
        KIT_CHECK(cudaMalloc((void **)&w->d_worst, sizeof(float2) * (size_t)n * (size_t)max_vertices));
}

void workload_free(workload_t *w)
{
    KIT_CHECK(cudaFree(w->d_lines));
    KIT_CHECK(cudaFree((char *)w->d_guard_block - sizeof(alloc_header_t)));
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
void reset_lines(workload_t *w, int flat)
{
    for (int i = 0; i < w->n_lines; i++) {
        w->h_lines[i].vertices = flat ? w->d_worst + (size_t)i * w->max_vertices : NULL;
        w->h_lines[i].n_vertices = -1;
    }
    KIT_CHECK(cudaMemcpy(w->d_lines, w->h_lines, sizeof(bezier_line_t) * (size_t)w->n_lines,
                         cudaMemcpyHostToDevice));
}

/* Gathers the vertices the student's code left in the lines and compares every one with a
 * double-precision evaluation of the curve. */
check_t check_lines(workload_t *w, int heap_blocks)
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

int line_gathered(const workload_t *w, int l)
{
    return w->h_status[l] != STATUS_MISSING && w->h_status[l] != STATUS_COUNT;
}

void json_check(kit_json_t *j, const char *key, check_t c)
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

void print_check(const char *what, check_t c, int n)
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

heap_stats_t read_heap(void)
{
    heap_stats_t h;
    KIT_CHECK(cudaMemcpyFromSymbol(&h, kit_heap, sizeof h));
    return h;
}

void reset_heap(void)
{
    heap_stats_t zero;
    memset(&zero, 0, sizeof zero);
    KIT_CHECK(cudaMemcpyToSymbol(kit_heap, &zero, sizeof zero));
}

void heap_blocks_track(unsigned int capacity)
{
    block_list_t list = {NULL, capacity, 0};
    KIT_CHECK(cudaMalloc((void **)&list.raw, sizeof(char *) * (size_t)capacity));
    KIT_CHECK(cudaMemcpyToSymbol(kit_blocks, &list, sizeof list));
}

unsigned int heap_blocks_free_left(void)
{
    block_list_t list;
    unsigned int *d_freed = NULL, freed = 0;
    KIT_CHECK(cudaMalloc((void **)&d_freed, sizeof freed));
    KIT_CHECK(cudaMemset(d_freed, 0, sizeof freed));
    kit_free_listed<<<64, 256>>>(d_freed);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(&freed, d_freed, sizeof freed, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaFree(d_freed));
    KIT_CHECK(cudaMemcpyFromSymbol(&list, kit_blocks, sizeof list));
    KIT_CHECK(cudaFree(list.raw));
    memset(&list, 0, sizeof list);
    KIT_CHECK(cudaMemcpyToSymbol(kit_blocks, &list, sizeof list));
    return freed;
}

void set_pool(char *base, unsigned long long size)
{
    pool_t p = {base, size, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_pool, &p, sizeof p));
}

void point_calls_start(void)
{
    point_calls_t zero = {0, 0};
    int on = 1;
    KIT_CHECK(cudaMemcpyToSymbol(kit_point_calls, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_counting_points, &on, sizeof on));
}

point_calls_t point_calls_stop(void)
{
    point_calls_t counted;
    int off = 0;
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpyToSymbol(kit_counting_points, &off, sizeof off));
    KIT_CHECK(cudaMemcpyFromSymbol(&counted, kit_point_calls, sizeof counted));
    return counted;
}

/* The probe's per-line records, on the host side while it is on. */
static grid_probe_t probe_host;

void grid_probe_start(const workload_t *w)
{
    grid_probe_t p;
    size_t bytes = sizeof(unsigned long long) * (size_t)(w->n_lines > 0 ? w->n_lines : 1);
    p.lines = w->d_lines;
    p.n_lines = w->n_lines;
    KIT_CHECK(cudaMalloc((void **)&p.count_grid, bytes));
    KIT_CHECK(cudaMalloc((void **)&p.point_grid, bytes));
    KIT_CHECK(cudaMemset(p.count_grid, 0xff, bytes)); /* NO_GRID */
    KIT_CHECK(cudaMemset(p.point_grid, 0xff, bytes));
    KIT_CHECK(cudaMemcpyToSymbol(kit_grid_probe, &p, sizeof p));
    probe_host = p;
}

static int compare_u64(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

/* Distinct values of v[0..n) other than NO_GRID; sorts v. */
static int distinct_grids(unsigned long long *v, int n)
{
    int count = 0;
    qsort(v, (size_t)n, sizeof v[0], compare_u64);
    for (int k = 0; k < n; k++)
        count += v[k] != NO_GRID && (k == 0 || v[k] != v[k - 1]);
    return count;
}

static int contains_grid(const unsigned long long *sorted, int n, unsigned long long id)
{
    return bsearch(&id, sorted, (size_t)n, sizeof id, compare_u64) != NULL;
}

/* The census of n lines' records (sorts and overwrites both arrays). */
static grid_census_t grid_census(unsigned long long *counted, unsigned long long *pointed, int n)
{
    grid_census_t g;
    memset(&g, 0, sizeof g);
    int in_child = 0;
    for (int l = 0; l < n; l++) {
        g.lines_counted += counted[l] != NO_GRID;
        g.lines_pointed += pointed[l] != NO_GRID;
    }
    g.counting_grids = distinct_grids(counted, n); /* counted is sorted from here on */
    /* A line computed by a grid that counted no line: by a child. Keep those grids, then count them. */
    for (int l = 0; l < n; l++)
        if (pointed[l] != NO_GRID && !contains_grid(counted, n, pointed[l]))
            pointed[in_child++] = pointed[l];
    g.lines_in_child = in_child;
    g.child_grids = distinct_grids(pointed, in_child);
    return g;
}

grid_census_t grid_probe_stop(void)
{
    grid_probe_t off;
    grid_probe_t p = probe_host;
    memset(&off, 0, sizeof off);
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpyToSymbol(kit_grid_probe, &off, sizeof off));
    int n = p.n_lines;
    unsigned long long *counted = (unsigned long long *)kit_host_alloc(sizeof(unsigned long long) * (size_t)(n + 1));
    unsigned long long *pointed = (unsigned long long *)kit_host_alloc(sizeof(unsigned long long) * (size_t)(n + 1));
    KIT_CHECK(cudaMemcpy(counted, p.count_grid, sizeof(unsigned long long) * (size_t)n, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(pointed, p.point_grid, sizeof(unsigned long long) * (size_t)n, cudaMemcpyDeviceToHost));
    grid_census_t g = grid_census(counted, pointed, n);
    free(counted);
    free(pointed);
    KIT_CHECK(cudaFree(p.count_grid));
    KIT_CHECK(cudaFree(p.point_grid));
    memset(&probe_host, 0, sizeof probe_host);
    return g;
}

void json_grid_census(kit_json_t *j, const char *key, grid_census_t g)
{
    kit_json_begin_object(j, key);
    kit_json_int(j, "lines_counted", g.lines_counted);
    kit_json_int(j, "lines_pointed", g.lines_pointed);
    kit_json_int(j, "lines_in_child", g.lines_in_child);
    kit_json_int(j, "child_grids", g.child_grids);
    kit_json_int(j, "counting_grids", g.counting_grids);
    kit_json_end_object(j);
}
