/* Lab 07 harness (kit-owned): the Mandelbrot set, exhaustive and by the student's Mariani-Silver
 * subdivision. It computes the kit's exhaustive image (kit_dwell for every pixel), applies the rule to
 * it on the host (the image the rule gives, the rectangles it visits, its launches per depth), runs
 * the student's mariani_silver on the whole image, compares, times both, and writes the result.
 *
 *   ./mandelbrot [--name value ...] [--json result.json]      (options[] below; ./mandelbrot --help)
 *
 * The region: a view from the kit's table (view_names[] below: a centre and a span of 3.0 at zoom 0), the
 * span halved --zoom times, the centre moved by up to a tenth of the span by --seed (0: not moved).
 * --repeats N times the kit's exhaustive kernel and the student's subdivision N times each (medians),
 * only where the counted subdivision left the rule's image and rectangles (a time counts for nothing
 * else), and stops timing the student's once it is GIVE_UP_SLOWER times slower than the kernel.
 * --figure S (default 256; 0: none) puts the student's image, one pixel in every
 * ceil(max(width, height) / S), and the rectangles it reported in the document ("figure"), from which
 * the kit draws a PNG (grader/gradelib/figures.py; make run LAB=07 writes it next to the program). The
 * grader asks for it in one case only.
 * --bench 1 prints a timing table instead (exhaustive, the kit's host-driven worklist, the student's
 * subdivision; image sizes and zooms): make bench LAB=07.
 *
 * The grader sends several cases to one process (kit_harness.h): prepare_mandelbrot may set the
 * pending-launch limit, and each case first puts it back to the default.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"
#include "mandelbrot.h"

#define MAX_SIDE 8192          /* the widest and tallest image the harness takes */
#define MAX_DWELL 65534        /* the figure holds each dwell in 4 hex digits, and ffff marks a pixel never written */
#define MAX_DEPTH 8
#define DEPTH_SLOTS 16         /* grids counted per depth; slot DEPTH_SLOTS - 1 takes any other depth */
#define FIGURE_MAX_SIDE 256
#define BENCH_MAX_DEPTH 5      /* the bench's cutoffs (the grader's timing cases: 4 at 4,096 pixels) */
/* The student's timed runs stop after the first timed one when it and the warm-up each took this many
 * times the exhaustive kernel's median: the rest could not bring the ratio near the grader's 1.0, they
 * would only hold the GPU (a subdivision that computes every pixel took seconds). */
#define GIVE_UP_SLOWER 10.0
#define BENCH_MIN_SIDE 16
#define FIGURE_MAX_RECTS 8192
#define EXHAUSTIVE_X 32
#define EXHAUSTIVE_Y 8

/* Well-known regions (--view) and their centres, in the same order; at zoom 0 each view spans 3.0 across. */
static const char *const view_names[] = {"full", "seahorse", "elephant", "spiral", "minibrot", "antenna", NULL};
static const double view_centres[][2] = {
    {-0.75, 0.0},
    {-0.743643887037151, 0.131825904205330},
    {0.2850, 0.0110},
    {-0.7746806106269039, -0.1374168856037867},
    {-1.7548776662466927, 0.0},
    {-1.9999, 0.0},
};

static const kit_option_t options[] = {
    {"--width", "the image's width in pixels", 1024, 1, MAX_SIDE, NULL},
    {"--height", "the image's height in pixels", 1024, 1, MAX_SIDE, NULL},
    {"--view", "the region's centre, from the kit's table", 0, 0, 0, view_names},
    {"--zoom", "the span (3.0 at 0) halved this many times", 0, 0, 40, NULL},
    {"--seed", "moves the centre by up to a tenth of the span (0: not moved)", 0, 0, 2000000000L, NULL},
    {"--max-dwell", "the dwell cap: iterations before a point counts as inside the set", 512, 1, MAX_DWELL, NULL},
    {"--max-depth", "the subdivision's depth cutoff (the rule of mandelbrot.h)", 5, 1, MAX_DEPTH, NULL},
    {"--min-side", "the subdivision's side cutoff, a power of two", 16, 4, 1024, NULL},
    {"--repeats", "times the exhaustive kernel and the subdivision this many times each (medians)", 0, 0, 100,
     NULL},
    {"--figure", "the picture's side in the document (0: none)", FIGURE_MAX_SIDE, 0, FIGURE_MAX_SIDE, NULL},
    {"--bench", "1: the timing table of make bench instead", 0, 0, 1, NULL},
    KIT_OPTIONS_END};

typedef struct {
    int x, y, side, depth;
} rect_t;

/* ---- kit-owned device code ---- */

static __device__ int kit_counting;                      /* 0 while timing: no counts, no records */
static __device__ unsigned long long kit_dwell_calls;
static __device__ unsigned int kit_grids[DEPTH_SLOTS];   /* grids that called report_rect, per depth */
static __device__ rect_t *kit_rect_log;                  /* one record per report_rect call that counted */
static __device__ unsigned long long *kit_rect_grid;     /* beside each record: the %gridid of the grid that made it */
static __device__ unsigned int kit_rect_log_size;
static __device__ unsigned int kit_rect_count;
static __device__ unsigned int kit_misshapen;            /* grids not of one block of MS_THREADS threads */
static __device__ unsigned int kit_misshapen_shape[2];   /* the first one's blocks and threads per block */

__device__ int kit_dwell(mandel_job_t job, int px, int py)
{
    if (kit_counting) {
        unsigned int active = __activemask(); /* one atomic per warp, for every thread that calls */
        if ((threadIdx.x & 31) == __ffs(active) - 1)
            atomicAdd(&kit_dwell_calls, (unsigned long long)__popc(active));
    }
    double cr = job.x_min + px * job.step, ci = job.y_min + py * job.step;
    double zr = 0.0, zi = 0.0;
    int dwell = 0;
    while (dwell < job.max_dwell && zr * zr + zi * zi <= 4.0) {
        double next = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = next;
        dwell++;
    }
    return dwell;
}

__device__ void report_rect(int x, int y, int side, int depth)
{
    if (!kit_counting || !kit_first_thread_of_grid())
        return;
    atomicAdd(&kit_grids[depth >= 0 && depth < DEPTH_SLOTS - 1 ? depth : DEPTH_SLOTS - 1], 1u);
    unsigned int blocks = gridDim.x * gridDim.y * gridDim.z, threads = blockDim.x * blockDim.y * blockDim.z;
    if ((blocks != 1 || threads != MS_THREADS) && atomicAdd(&kit_misshapen, 1u) == 0) {
        kit_misshapen_shape[0] = blocks;
        kit_misshapen_shape[1] = threads;
    }
    unsigned int slot = atomicAdd(&kit_rect_count, 1u);
    if (slot < kit_rect_log_size) {
        rect_t r = {x, y, side, depth};
        kit_rect_log[slot] = r;
        kit_rect_grid[slot] = kit_grid_id(); /* two records of one id: one grid that reported twice */
    }
}

/* How many of image[0..pixels) differ from expected (the rule's image): one timed run's check. */
__global__ void kit_count_unlike(const int *image, const int *expected, long long pixels, unsigned long long *unlike)
{
    unsigned long long mine = 0;
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < pixels;
         p += (long long)gridDim.x * blockDim.x)
        mine += image[p] != expected[p];
    if (mine)
        atomicAdd(unlike, mine);
}

/* The exhaustive image: one thread per pixel. */
__global__ void kit_exhaustive(mandel_job_t job)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < job.width && py < job.height)
        job.image[py * job.width + px] = kit_dwell(job, px, py);
}

/* The host-driven worklist, the way without dynamic parallelism: one host launch per level, one block
 * per rectangle of the level, the rectangles to split appended to the next level's list. The host
 * reads the list's length back between levels. */
__global__ void kit_worklist_level(mandel_job_t job, const rect_t *level, rect_t *next, unsigned int *next_count)
{
    rect_t r = level[blockIdx.x];
    int w = min(r.side, job.width - r.x), h = min(r.side, job.height - r.y);
    __shared__ int corner;
    if (threadIdx.x == 0)
        corner = kit_dwell(job, r.x, r.y);
    __syncthreads();
    int border = (w == 1 || h == 1) ? w * h : 2 * w + 2 * (h - 2), same = 1;
    for (int i = threadIdx.x; i < border; i += blockDim.x) {
        int px, py;
        if (w == 1 || h == 1) {
            px = r.x + (h == 1 ? i : 0);
            py = r.y + (h == 1 ? 0 : i);
        } else if (i < 2 * w) {
            px = r.x + i % w;
            py = i < w ? r.y : r.y + h - 1;
        } else {
            int k = i - 2 * w;
            px = k < h - 2 ? r.x : r.x + w - 1;
            py = r.y + 1 + k % (h - 2);
        }
        same &= kit_dwell(job, px, py) == corner;
    }
    if (__syncthreads_and(same)) {
        for (int k = threadIdx.x; k < w * h; k += blockDim.x)
            job.image[(r.y + k / w) * job.width + r.x + k % w] = corner;
    } else if (r.depth + 1 < job.max_depth && r.side > job.min_side) {
        int sub = r.side / SUBDIV;
        if (threadIdx.x < SUBDIV * SUBDIV) {
            rect_t child = {r.x + (int)(threadIdx.x % SUBDIV) * sub, r.y + (int)(threadIdx.x / SUBDIV) * sub, sub,
                            r.depth + 1};
            if (child.x < job.width && child.y < job.height)
                next[atomicAdd(next_count, 1u)] = child;
        }
    } else {
        for (int k = threadIdx.x; k < w * h; k += blockDim.x)
            job.image[(r.y + k / w) * job.width + r.x + k % w] = kit_dwell(job, r.x + k % w, r.y + k / w);
    }
}

/* The published design, for the bench (make bench LAB=07): the Mariani-Silver algorithm as NVIDIA's
 * introduction to dynamic parallelism builds it, A. Adinets, "Adaptive Parallel Computation with CUDA
 * Dynamic Parallelism" (NVIDIA developer blog, 2014), code at github.com/canonizer/mandelbrot-dyn (MIT
 * license). The kit's own code, after that design: the host launches a grid of PUB_INIT_SUBDIV x
 * PUB_INIT_SUBDIV blocks, each block one rectangle; the block computes its border's common dwell, and
 * its thread (0, 0) alone makes one child launch: a fill grid if the border is uniform, else a grid of
 * PUB_SUBDIV x PUB_SUBDIV blocks of the same kernel on the parts while the cutoffs allow, else a grid
 * with a thread per pixel. Not the kit's contract (mandelbrot.h: a grid of one block per rectangle, a
 * launch per part), so its rectangles differ from the rule's, and so may a few pixels of its image
 * (the bench counts them). The same kit_dwell, view and dwell cap. Sizes that are no multiple of the
 * sides are cut off at the rectangle's and the image's edges. The child goes into
 * cudaStreamFireAndForget: each block launches once, so the block's NULL stream of the original would
 * order nothing more. */
#define PUB_INIT_SUBDIV 32  /* the host's grid: PUB_INIT_SUBDIV x PUB_INIT_SUBDIV blocks over the image */
#define PUB_SUBDIV 4        /* a rectangle that splits: a grid of PUB_SUBDIV x PUB_SUBDIV blocks */
#define PUB_MAX_DEPTH 4     /* rectangles of depth PUB_MAX_DEPTH - 1 never split */
#define PUB_MIN_SIZE 32     /* a rectangle of side d splits only if d / PUB_SUBDIV > PUB_MIN_SIZE */
#define PUB_BLOCK_X 64      /* every grid's blocks: PUB_BLOCK_X x PUB_BLOCK_Y threads */
#define PUB_BLOCK_Y 4

/* While kit_counting: the child grids the published design launched, by kind, and the pixels its fill
 * grids covered. */
#define PUB_BLOCK_GRIDS 0
#define PUB_FILL_GRIDS 1
#define PUB_PIXEL_GRIDS 2
static __device__ unsigned long long kit_pub_grids[3];
static __device__ unsigned long long kit_pub_filled;

static __device__ dim3 pub_pixel_grid(int w, int h)
{
    return dim3((w + PUB_BLOCK_X - 1) / PUB_BLOCK_X, (h + PUB_BLOCK_Y - 1) / PUB_BLOCK_Y);
}

/* Every pixel of the w x h rectangle at (x, y) gets dwell: a thread per pixel. */
__global__ void kit_pub_fill(mandel_job_t job, int x, int y, int w, int h, int dwell)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < w && py < h)
        job.image[(y + py) * job.width + x + px] = dwell;
}

/* Every pixel of the w x h rectangle at (x, y) gets its own kit_dwell: a thread per pixel. */
__global__ void kit_pub_pixels(mandel_job_t job, int x, int y, int w, int h)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < w && py < h)
        job.image[(y + py) * job.width + x + px] = kit_dwell(job, x + px, y + py);
}

/* Block (bx, by) takes the rectangle of side d at (x0 + bx d, y0 + by d), cut off at x_end and y_end
 * (its parent's rectangle, or the image); the grid holds only blocks whose rectangle starts inside. */
__global__ void kit_pub_block(mandel_job_t job, int x0, int y0, int d, int x_end, int y_end, int depth)
{
    int x = x0 + blockIdx.x * d, y = y0 + blockIdx.y * d;
    int w = min(d, x_end - x), h = min(d, y_end - y);
    int t = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
    __shared__ int lowest, highest; /* the border's dwells: one common dwell when they are equal */
    if (t == 0) {
        lowest = INT_MAX;
        highest = -1;
    }
    __syncthreads();
    int low = INT_MAX, high = -1;
    /* the border as the worklist walks it: the first and the last row, then the first and the last
     * column without their corners; one pixel wide or tall, all of it */
    int border = (w == 1 || h == 1) ? w * h : 2 * w + 2 * (h - 2);
    for (int i = t; i < border; i += threads) {
        int px, py;
        if (w == 1 || h == 1) {
            px = x + (h == 1 ? i : 0);
            py = y + (h == 1 ? 0 : i);
        } else if (i < 2 * w) {
            px = x + i % w;
            py = i < w ? y : y + h - 1;
        } else {
            int k = i - 2 * w;
            px = k < h - 2 ? x : x + w - 1;
            py = y + 1 + k % (h - 2);
        }
        int dwell = kit_dwell(job, px, py);
        low = min(low, dwell);
        high = max(high, dwell);
    }
    if (high >= 0) {
        atomicMin(&lowest, low);
        atomicMax(&highest, high);
    }
    __syncthreads();
    if (t != 0)
        return;
    int kind;
    dim3 block(PUB_BLOCK_X, PUB_BLOCK_Y);
    if (lowest == highest) {
        kind = PUB_FILL_GRIDS;
        kit_pub_fill<<<pub_pixel_grid(w, h), block, 0, cudaStreamFireAndForget>>>(job, x, y, w, h, lowest);
    } else if (depth + 1 < PUB_MAX_DEPTH && d / PUB_SUBDIV > PUB_MIN_SIZE) {
        kind = PUB_BLOCK_GRIDS;
        int sub = (d + PUB_SUBDIV - 1) / PUB_SUBDIV; /* d / PUB_SUBDIV where it divides */
        dim3 parts((w + sub - 1) / sub, (h + sub - 1) / sub);
        kit_pub_block<<<parts, block, 0, cudaStreamFireAndForget>>>(job, x, y, sub, x + w, y + h, depth + 1);
    } else {
        kind = PUB_PIXEL_GRIDS;
        kit_pub_pixels<<<pub_pixel_grid(w, h), block, 0, cudaStreamFireAndForget>>>(job, x, y, w, h);
    }
    KIT_CHECK_LAUNCH(); /* the kit's launch log counts a failure */
    if (kit_counting) {
        atomicAdd(&kit_pub_grids[kind], 1ull);
        if (kind == PUB_FILL_GRIDS)
            atomicAdd(&kit_pub_filled, (unsigned long long)w * h);
    }
}

/* ---- the rule, on the host, applied to the exhaustive image ---- */

typedef struct {
    int *exhaustive;        /* the kit's image */
    int *expected;          /* the image the rule gives */
    unsigned char *computed;/* 1 where the rule computes the pixel, 0 where it fills */
    rect_t *rects;          /* every rectangle the rule visits, the top one first */
    long long n_rects, capacity;
    long long grids[DEPTH_SLOTS];
    long long filled, computed_pixels;
} rule_t;

static int uniform_border(const mandel_job_t *job, const int *img, int x, int y, int w, int h)
{
    int d = img[y * job->width + x];
    for (int px = x; px < x + w; px++)
        if (img[y * job->width + px] != d || img[(y + h - 1) * job->width + px] != d)
            return 0;
    for (int py = y; py < y + h; py++)
        if (img[py * job->width + x] != d || img[py * job->width + x + w - 1] != d)
            return 0;
    return 1;
}

static void apply_rule(const mandel_job_t *job, rule_t *rule, int x, int y, int side, int depth)
{
    if (rule->n_rects == rule->capacity) {
        rule->capacity *= 2;
        rule->rects = (rect_t *)realloc(rule->rects, sizeof(rect_t) * (size_t)rule->capacity);
        if (rule->rects == NULL) {
            fprintf(stderr, "out of host memory\n");
            exit(1);
        }
    }
    rect_t r = {x, y, side, depth};
    rule->rects[rule->n_rects++] = r;
    rule->grids[depth]++;
    int w = side < job->width - x ? side : job->width - x, h = side < job->height - y ? side : job->height - y;
    if (uniform_border(job, rule->exhaustive, x, y, w, h)) {
        int d = rule->exhaustive[y * job->width + x];
        for (int py = y; py < y + h; py++)
            for (int px = x; px < x + w; px++)
                rule->expected[py * job->width + px] = d;
        rule->filled += (long long)w * h;
        return;
    }
    if (depth + 1 < job->max_depth && side > job->min_side) {
        int sub = side / SUBDIV;
        for (int j = 0; j < SUBDIV; j++)
            for (int i = 0; i < SUBDIV; i++)
                if (x + i * sub < job->width && y + j * sub < job->height)
                    apply_rule(job, rule, x + i * sub, y + j * sub, sub, depth + 1);
        return;
    }
    for (int py = y; py < y + h; py++)
        for (int px = x; px < x + w; px++) {
            rule->expected[py * job->width + px] = rule->exhaustive[py * job->width + px];
            rule->computed[py * job->width + px] = 1;
        }
    rule->computed_pixels += (long long)w * h;
}

static int compare_rects(const void *a, const void *b)
{
    const rect_t *p = (const rect_t *)a, *q = (const rect_t *)b;
    if (p->depth != q->depth)
        return p->depth < q->depth ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->side > q->side) - (p->side < q->side);
}

/* The reported rectangles against the rule's, as multisets: how many of the rule's are missing, how
 * many reported are extra, and the first of each (sorted by depth, row, column). */
typedef struct {
    long long missing, extra;
    rect_t first_missing, first_extra;
} rect_diff_t;

static rect_diff_t diff_rects(rect_t *want, long long n_want, rect_t *got, long long n_got)
{
    rect_diff_t d;
    memset(&d, 0, sizeof d);
    d.first_missing.depth = d.first_extra.depth = -1;
    qsort(want, (size_t)n_want, sizeof(rect_t), compare_rects);
    qsort(got, (size_t)n_got, sizeof(rect_t), compare_rects);
    long long i = 0, k = 0;
    while (i < n_want || k < n_got) {
        int c = i == n_want ? 1 : k == n_got ? -1 : compare_rects(&want[i], &got[k]);
        if (c == 0) {
            i++;
            k++;
        } else if (c < 0) {
            if (d.missing++ == 0)
                d.first_missing = want[i];
            i++;
        } else {
            if (d.extra++ == 0)
                d.first_extra = got[k];
            k++;
        }
    }
    return d;
}

/* ---- views, images, runs ---- */

static mandel_job_t make_job(int width, int height, int view, int zoom, unsigned int seed, int max_dwell,
                             int max_depth, int min_side)
{
    mandel_job_t job;
    memset(&job, 0, sizeof job);
    double span = ldexp(3.0, -zoom), cx = view_centres[view][0], cy = view_centres[view][1];
    if (seed != 0) { /* a small deterministic shift, so that seeds give different regions */
        srand(seed);
        cx += span * 0.2 * ((double)rand() / RAND_MAX - 0.5);
        cy += span * 0.2 * ((double)rand() / RAND_MAX - 0.5);
    }
    int longer = width > height ? width : height;
    job.width = width;
    job.height = height;
    job.step = span / longer;
    job.x_min = cx - 0.5 * job.step * width;
    job.y_min = cy - 0.5 * job.step * height;
    job.max_dwell = max_dwell;
    job.max_depth = max_depth;
    job.min_side = min_side;
    return job;
}

static void run_exhaustive(mandel_job_t job)
{
    dim3 block(EXHAUSTIVE_X, EXHAUSTIVE_Y);
    dim3 grid((job.width + EXHAUSTIVE_X - 1) / EXHAUSTIVE_X, (job.height + EXHAUSTIVE_Y - 1) / EXHAUSTIVE_Y);
    kit_exhaustive<<<grid, block>>>(job);
}

static void run_student(mandel_job_t job)
{
    mariani_silver<<<1, MS_THREADS>>>(job, 0, 0, top_side(&job), 0);
}

/* The largest number of rectangles any level of the subdivision can hold. */
static long long widest_level(const mandel_job_t *job)
{
    long long widest = 1;
    int side = top_side(job);
    for (int depth = 1; depth < job->max_depth && side > job->min_side; depth++) {
        side /= SUBDIV;
        long long n = (long long)((job->width + side - 1) / side) * ((job->height + side - 1) / side);
        widest = n > widest ? n : widest;
    }
    return widest;
}

/* Runs the kit's host-driven worklist on job (job.image its output); returns the levels it took. */
typedef struct {
    mandel_job_t job;
    rect_t *levels[2];
    unsigned int *count;
} worklist_t;

static void worklist_init(worklist_t *w, mandel_job_t job)
{
    long long widest = widest_level(&job);
    w->job = job;
    KIT_CHECK(cudaMalloc((void **)&w->levels[0], sizeof(rect_t) * (size_t)widest));
    KIT_CHECK(cudaMalloc((void **)&w->levels[1], sizeof(rect_t) * (size_t)widest));
    KIT_CHECK(cudaMalloc((void **)&w->count, sizeof(unsigned int)));
}

static void worklist_free(worklist_t *w)
{
    KIT_CHECK(cudaFree(w->levels[0]));
    KIT_CHECK(cudaFree(w->levels[1]));
    KIT_CHECK(cudaFree(w->count));
}

static void worklist_run(void *p)
{
    worklist_t *w = (worklist_t *)p;
    rect_t top = {0, 0, top_side(&w->job), 0};
    KIT_CHECK(cudaMemcpy(w->levels[0], &top, sizeof top, cudaMemcpyHostToDevice));
    unsigned int n = 1;
    for (int level = 0; n > 0; level++) {
        KIT_CHECK(cudaMemset(w->count, 0, sizeof(unsigned int)));
        kit_worklist_level<<<n, MS_THREADS>>>(w->job, w->levels[level % 2], w->levels[(level + 1) % 2], w->count);
        KIT_CHECK(cudaGetLastError());
        KIT_CHECK(cudaMemcpy(&n, w->count, sizeof n, cudaMemcpyDeviceToHost)); /* the host round trip */
    }
}

static void exhaustive_step(void *p) { run_exhaustive(*(mandel_job_t *)p); }
static void student_step(void *p) { run_student(*(mandel_job_t *)p); }

static void set_counting(int on)
{
    KIT_CHECK(cudaMemcpyToSymbol(kit_counting, &on, sizeof on));
}

/* How many of ids[0..n) repeat an id before them (sorts ids): reports from a grid that had already
 * reported. */
static int compare_u64(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

static long long repeated_ids(unsigned long long *ids, long long n)
{
    if (n > 1)
        qsort(ids, (size_t)n, sizeof ids[0], compare_u64);
    long long repeated = 0;
    for (long long i = 1; i < n; i++)
        repeated += ids[i] == ids[i - 1];
    return repeated;
}

/* ---- the student's timed runs, each checked ---- */

/* A time counts only for a run that did the work: before each timed run (the warm-up's too) the image
 * is poisoned, after it, outside the timed region, compared with the rule's. State a submission keeps
 * from one launch to the next (a flag set once) cannot make a later run skip its work unseen. */
typedef struct {
    mandel_job_t job;
    size_t bytes;
} timed_student_t;

static void poison_image(void *p)
{
    timed_student_t *t = (timed_student_t *)p;
    KIT_CHECK(cudaMemset(t->job.image, 0xff, t->bytes)); /* -1: a pixel this run did not write */
}

static void timed_student_step(void *p) { run_student(((timed_student_t *)p)->job); }

typedef struct {
    kit_timing_t timing;    /* of the timed runs made: timing.repeats, fewer than asked when given up */
    int runs, wrong_runs;   /* every run, the warm-up's too; those whose image was not the rule's */
    long long first_unlike; /* the pixels unlike the rule's in the first such run */
} checked_timing_t;

/* Up to repeats timed runs after a warm-up, each checked; given up (GIVE_UP_SLOWER) once every run so
 * far, at least one timed, took longer than give_up_ms. */
static checked_timing_t time_student_checked(mandel_job_t job, const int *expected, int repeats, double give_up_ms)
{
    const int warmup = 1;
    checked_timing_t c;
    memset(&c, 0, sizeof c);
    timed_student_t t = {job, sizeof(int) * (size_t)job.width * job.height};
    long long pixels = (long long)job.width * job.height;
    int *d_expected = NULL;
    unsigned long long *d_unlike = NULL;
    KIT_CHECK(cudaMalloc((void **)&d_expected, t.bytes));
    KIT_CHECK(cudaMemcpy(d_expected, expected, t.bytes, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMalloc((void **)&d_unlike, sizeof *d_unlike));
    double *ms = (double *)kit_host_alloc(sizeof(double) * (size_t)repeats);
    int timed = 0, all_slow = 1;
    for (int i = 0; i < warmup + repeats && !(timed > 0 && all_slow); i++) {
        kit_timing_t one = kit_time_kernel(poison_image, timed_student_step, &t, 0, 1);
        unsigned long long unlike = 0;
        KIT_CHECK(cudaMemset(d_unlike, 0, sizeof unlike));
        kit_count_unlike<<<1024, 256>>>(job.image, d_expected, pixels, d_unlike);
        KIT_CHECK_KERNEL();
        KIT_CHECK(cudaMemcpy(&unlike, d_unlike, sizeof unlike, cudaMemcpyDeviceToHost));
        c.runs++;
        if (unlike && c.wrong_runs++ == 0)
            c.first_unlike = (long long)unlike;
        if (i >= warmup)
            ms[timed++] = one.median_ms;
        all_slow = all_slow && one.median_ms > give_up_ms;
    }
    c.timing.repeats = timed;
    c.timing.median_ms = (float)kit_median(ms, timed);
    c.timing.min_ms = (float)ms[0];
    c.timing.max_ms = (float)ms[timed - 1];
    free(ms);
    KIT_CHECK(cudaFree(d_expected));
    KIT_CHECK(cudaFree(d_unlike));
    return c;
}

/* The kit's exhaustive image of job (computed into job.image, then copied to the host) and the rule
 * applied to it; rule_free releases both. */
static rule_t rule_of_exhaustive(mandel_job_t job)
{
    size_t pixels = (size_t)job.width * job.height;
    rule_t rule;
    memset(&rule, 0, sizeof rule);
    rule.exhaustive = (int *)kit_host_alloc(sizeof(int) * pixels);
    rule.expected = (int *)kit_host_alloc(sizeof(int) * pixels);
    rule.computed = (unsigned char *)kit_host_alloc(pixels);
    rule.capacity = 1024;
    rule.rects = (rect_t *)kit_host_alloc(sizeof(rect_t) * (size_t)rule.capacity);
    set_counting(0);
    run_exhaustive(job);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(rule.exhaustive, job.image, sizeof(int) * pixels, cudaMemcpyDeviceToHost));
    apply_rule(&job, &rule, 0, 0, top_side(&job), 0);
    return rule;
}

static void rule_free(rule_t *rule)
{
    free(rule->exhaustive);
    free(rule->expected);
    free(rule->computed);
    free(rule->rects);
}

/* ---- the published design, on the host ---- */

/* The side of the published design's first rectangles: the image in PUB_INIT_SUBDIV parts along its
 * longer side. */
static int pub_top_side(const mandel_job_t *job)
{
    int longer = job->width > job->height ? job->width : job->height;
    return (longer + PUB_INIT_SUBDIV - 1) / PUB_INIT_SUBDIV;
}

static void run_published(mandel_job_t job)
{
    int d = pub_top_side(&job);
    dim3 grid((job.width + d - 1) / d, (job.height + d - 1) / d), block(PUB_BLOCK_X, PUB_BLOCK_Y);
    kit_pub_block<<<grid, block>>>(job, 0, 0, d, job.width, job.height, 0);
}

static void published_step(void *p) { run_published(*(mandel_job_t *)p); }

/* The most device launches the published design can make: every block of every grid launches one
 * child grid, and a block whose rectangle may split launches a grid of blocks that launch in turn; in
 * the worst case all of them are pending at once. pub_grid_launches counts the blocks of a grid over
 * a w x h area in squares of side d (cut off at its right and bottom edges), each shape once. */
static long long pub_rect_launches(int w, int h, int d, int depth);

static long long pub_grid_launches(int w, int h, int d, int depth)
{
    long long nx = w / d, ny = h / d;
    int rx = w % d, ry = h % d;
    long long n = nx * ny * pub_rect_launches(d, d, d, depth);
    if (rx)
        n += ny * pub_rect_launches(rx, d, d, depth);
    if (ry)
        n += nx * pub_rect_launches(d, ry, d, depth);
    if (rx && ry)
        n += pub_rect_launches(rx, ry, d, depth);
    return n;
}

static long long pub_rect_launches(int w, int h, int d, int depth)
{
    long long n = 1; /* its thread (0, 0)'s one launch */
    if (depth + 1 < PUB_MAX_DEPTH && d / PUB_SUBDIV > PUB_MIN_SIZE)
        n += pub_grid_launches(w, h, (d + PUB_SUBDIV - 1) / PUB_SUBDIV, depth + 1);
    return n;
}

/* How many of image[0..pixels) differ from exhaustive[0..pixels). */
static long long count_unlike(const int *image, const int *exhaustive, long long pixels)
{
    long long unlike = 0;
    for (long long p = 0; p < pixels; p++)
        unlike += image[p] != exhaustive[p];
    return unlike;
}

/* A version's run with the kit's counts on, untimed, then its timed runs. */
typedef struct {
    kit_timing_t timing;
    size_t pending_limit;          /* the pending-launch limit in effect for its runs */
    long long child_grids;         /* device launches of the counted run that ran */
    unsigned long long grids[3];   /* the published design's, by kind (PUB_BLOCK_GRIDS, ...) */
    double filled;                 /* the published design: the fraction of the pixels its fill grids covered */
    long long unlike_exhaustive;   /* pixels of the counted run's image unlike the exhaustive image */
    kit_launch_log_t launches;     /* the counted and the timed runs' launch log */
} version_run_t;

/* One run of step with the kit's counts on (the caller zeroes and reads its own counters; counting is
 * off again for the timed runs, which leave them as they are), its image against the exhaustive one,
 * then its timed runs; the launch log covers both (a failed launch would time a smaller tree). */
static void count_then_time(version_run_t *v, mandel_job_t job, const int *exhaustive, int repeats,
                            void (*step)(void *))
{
    long long pixels = (long long)job.width * job.height;
    KIT_CHECK(cudaMemset(job.image, 0xff, sizeof(int) * (size_t)pixels)); /* -1: a pixel it did not write */
    kit_launch_log_reset();
    set_counting(1);
    step(&job);
    KIT_CHECK_KERNEL();
    set_counting(0);
    int *image = (int *)kit_host_alloc(sizeof(int) * (size_t)pixels);
    KIT_CHECK(cudaMemcpy(image, job.image, sizeof(int) * (size_t)pixels, cudaMemcpyDeviceToHost));
    v->unlike_exhaustive = count_unlike(image, exhaustive, pixels);
    free(image);
    v->timing = kit_time_kernel(NULL, step, &job, 1, repeats);
    v->launches = kit_launch_log_read();
}

/* The published design: the kit sizes its pending-launch limit for its worst case (never below the
 * default, 2,048), between kernels, counts one run and times it. The caller puts the student's limit
 * back before the student's runs. */
static version_run_t bench_published(mandel_job_t job, const int *exhaustive, int repeats)
{
    version_run_t v;
    memset(&v, 0, sizeof v);
    long long worst = pub_grid_launches(job.width, job.height, pub_top_side(&job), 0);
    v.pending_limit = worst > 2048 ? (size_t)worst : 2048;
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, v.pending_limit));
    unsigned long long zero[3] = {0, 0, 0}, filled = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_pub_grids, zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_pub_filled, zero, sizeof zero[0]));
    count_then_time(&v, job, exhaustive, repeats, published_step);
    KIT_CHECK(cudaMemcpyFromSymbol(v.grids, kit_pub_grids, sizeof v.grids));
    KIT_CHECK(cudaMemcpyFromSymbol(&filled, kit_pub_filled, sizeof filled));
    v.child_grids = (long long)(v.grids[PUB_BLOCK_GRIDS] + v.grids[PUB_FILL_GRIDS] + v.grids[PUB_PIXEL_GRIDS]);
    v.filled = (double)filled / ((double)job.width * job.height);
    return v;
}

/* The student's subdivision, after prepare_mandelbrot: one run counted (the grids that reported, but
 * the host's one), then the timed runs. */
static version_run_t bench_student(mandel_job_t job, const int *exhaustive, int repeats)
{
    version_run_t v;
    memset(&v, 0, sizeof v);
    KIT_CHECK(cudaDeviceGetLimit(&v.pending_limit, cudaLimitDevRuntimePendingLaunchCount));
    unsigned int zero_grids[DEPTH_SLOTS], zero = 0, grids[DEPTH_SLOTS];
    memset(zero_grids, 0, sizeof zero_grids);
    KIT_CHECK(cudaMemcpyToSymbol(kit_grids, zero_grids, sizeof zero_grids));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_count, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_log_size, &zero, sizeof zero)); /* counted, no rectangle kept */
    count_then_time(&v, job, exhaustive, repeats, student_step);
    KIT_CHECK(cudaMemcpyFromSymbol(grids, kit_grids, sizeof grids));
    for (int d = 0; d < DEPTH_SLOTS; d++)
        v.child_grids += grids[d];
    v.child_grids -= v.child_grids > 0; /* the host's grid */
    return v;
}

/* ---- the bench table ---- */

static void bench(int repeats, const char *json_path)
{
    static const int sizes[] = {1024, 4096, 8192};
    static const struct { const char *view; int zoom; int max_dwell; } regions[] = {
        {"full", 0, 1024}, {"full", 2, 4096}, {"elephant", 3, 4096}, {"seahorse", 6, 8192}, {"seahorse", 14, 4096},
        {"spiral", 10, 4096}};
    kit_json_t j;
    if (json_path != NULL) {
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "07-mandelbrot");
        kit_json_device(&j);
        kit_json_int(&j, "repeats", repeats);
        kit_json_int(&j, "max_depth", BENCH_MAX_DEPTH); /* the cutoffs of the worklist and the student's version */
        kit_json_int(&j, "min_side", BENCH_MIN_SIDE);
        kit_json_begin_object(&j, "published"); /* the published design's constants */
        kit_json_int(&j, "init_subdiv", PUB_INIT_SUBDIV);
        kit_json_int(&j, "subdiv", PUB_SUBDIV);
        kit_json_int(&j, "max_depth", PUB_MAX_DEPTH);
        kit_json_int(&j, "min_size", PUB_MIN_SIZE);
        kit_json_int(&j, "block_x", PUB_BLOCK_X);
        kit_json_int(&j, "block_y", PUB_BLOCK_Y);
        kit_json_end_object(&j);
        kit_json_begin_array(&j, "bench");
    }
    printf("published: the design of NVIDIA's introduction to dynamic parallelism (A. Adinets, 2014): a host grid "
           "of %d x %d blocks, a block per rectangle, one child launch per block (%d x %d-block splits, max depth "
           "%d, parts larger than %d); its rectangles are not the rule's\n", PUB_INIT_SUBDIV, PUB_INIT_SUBDIV,
           PUB_SUBDIV, PUB_SUBDIV, PUB_MAX_DEPTH, PUB_MIN_SIZE);
    printf("%-10s %5s %6s %6s | %11s %11s %11s %11s | %8s %8s %8s | %7s\n", "view", "zoom", "dwell", "side",
           "exhaustive", "worklist", "published", "CDP (yours)", "exh/CDP", "wl/CDP", "exh/pub", "filled");
    for (size_t r = 0; r < sizeof regions / sizeof regions[0]; r++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int view = 0;
            while (strcmp(view_names[view], regions[r].view) != 0)
                view++;
            int side = sizes[s];
            mandel_job_t job = make_job(side, side, view, regions[r].zoom, 0, regions[r].max_dwell, BENCH_MAX_DEPTH,
                                        BENCH_MIN_SIDE);
            size_t bytes = sizeof(int) * (size_t)side * side;
            KIT_CHECK(cudaMalloc((void **)&job.image, bytes));
            rule_t rule = rule_of_exhaustive(job); /* what the rule fills */
            worklist_t w;
            worklist_init(&w, job);
            kit_timing_t exhaustive = kit_time_kernel(NULL, exhaustive_step, &job, 1, repeats);
            kit_timing_t worklist = kit_time_kernel(NULL, worklist_run, &w, 1, repeats);
            version_run_t published = bench_published(job, rule.exhaustive, repeats); /* sets its own limit */
            prepare_mandelbrot(side, side, BENCH_MAX_DEPTH, BENCH_MIN_SIDE); /* the runtime takes it between kernels */
            version_run_t student = bench_student(job, rule.exhaustive, repeats);
            if (student.launches.failed)
                printf("  (%u of your launches failed: this row's CDP time is of an incomplete subdivision)\n",
                       student.launches.failed);
            if (published.launches.failed)
                printf("  (%u of the published design's launches failed: its time is of an incomplete run)\n",
                       published.launches.failed);
            double pixels = (double)side * side, filled = (double)rule.filled / pixels;
            double exh = exhaustive.median_ms, pub = published.timing.median_ms, cdp = student.timing.median_ms;
            printf("%-10s %5d %6d %6d | %8.3f ms %8.3f ms %8.3f ms %8.3f ms | %7.2fx %7.2fx %7.2fx | %6.1f%%\n",
                   view_names[view], regions[r].zoom, regions[r].max_dwell, side, exh, worklist.median_ms, pub, cdp,
                   exh / cdp, worklist.median_ms / cdp, exh / pub, 100.0 * filled);
            printf("%30s child grids: yours %lld (pending-launch limit %zu), published %lld (limit %zu; %llu split, "
                   "%llu fill, %llu per pixel; %.1f%% filled); pixels unlike the exhaustive image: yours %.4f%%, "
                   "published %.4f%%\n", "", student.child_grids, student.pending_limit, published.child_grids,
                   published.pending_limit, published.grids[PUB_BLOCK_GRIDS], published.grids[PUB_FILL_GRIDS],
                   published.grids[PUB_PIXEL_GRIDS], 100.0 * published.filled,
                   100.0 * student.unlike_exhaustive / pixels, 100.0 * published.unlike_exhaustive / pixels);
            fflush(stdout);
            if (json_path != NULL) {
                kit_json_begin_object(&j, NULL);
                kit_json_string(&j, "view", view_names[view]);
                kit_json_int(&j, "zoom", regions[r].zoom);
                kit_json_int(&j, "max_dwell", regions[r].max_dwell);
                kit_json_int(&j, "side", side);
                kit_json_double(&j, "exhaustive_ms", exh);
                kit_json_double(&j, "worklist_ms", worklist.median_ms);
                kit_json_double(&j, "cdp_ms", cdp);
                kit_json_double(&j, "published_ms", pub);
                kit_json_double(&j, "filled_fraction", filled);
                kit_json_int(&j, "rects", rule.n_rects);
                kit_json_uint(&j, "failed_launches", student.launches.failed);
                /* each version that launches: the child grids of its counted run, the pending-launch limit
                 * its runs had (the student's: prepare_mandelbrot's; the published design's: the kit's, for
                 * its worst case), and the pixels of its image unlike the exhaustive one */
                kit_json_int(&j, "cdp_child_grids", student.child_grids);
                kit_json_uint(&j, "cdp_pending_limit", student.pending_limit);
                kit_json_double(&j, "cdp_unlike_exhaustive_fraction", student.unlike_exhaustive / pixels);
                kit_json_int(&j, "published_child_grids", published.child_grids);
                kit_json_uint(&j, "published_split_grids", published.grids[PUB_BLOCK_GRIDS]);
                kit_json_uint(&j, "published_fill_grids", published.grids[PUB_FILL_GRIDS]);
                kit_json_uint(&j, "published_pixel_grids", published.grids[PUB_PIXEL_GRIDS]);
                kit_json_uint(&j, "published_pending_limit", published.pending_limit);
                kit_json_double(&j, "published_filled_fraction", published.filled);
                kit_json_double(&j, "published_unlike_exhaustive_fraction", published.unlike_exhaustive / pixels);
                kit_json_uint(&j, "published_failed_launches", published.launches.failed);
                kit_json_end_object(&j);
            }
            worklist_free(&w);
            rule_free(&rule);
            KIT_CHECK(cudaFree(job.image));
        }
    if (json_path != NULL) {
        kit_json_end_array(&j);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
}

/* ---- one case ---- */

static void json_rect(kit_json_t *j, const char *key, rect_t r)
{
    kit_json_begin_array(j, key);
    if (r.depth >= 0) {
        kit_json_int(j, NULL, r.x);
        kit_json_int(j, NULL, r.y);
        kit_json_int(j, NULL, r.side);
        kit_json_int(j, NULL, r.depth);
    }
    kit_json_end_array(j);
}

static void json_counts(kit_json_t *j, const char *key, const long long *counts)
{
    int last = 0;
    for (int d = 0; d < DEPTH_SLOTS; d++)
        if (counts[d])
            last = d;
    kit_json_begin_array(j, key);
    for (int d = 0; d <= last; d++)
        kit_json_int(j, NULL, counts[d]);
    kit_json_end_array(j);
}

/* The document's "figure": the image, one pixel in every `every` x `every`, as dwells; and the rectangles
 * as reported, each [x, y, side, depth, computed], computed 1 where the rule computes the rectangle's
 * corner pixel pixel by pixel (a leaf it computes rather than fills), so a picture can tell the two apart. */
static void json_figure(kit_json_t *j, const mandel_job_t *job, const int *image, const unsigned char *computed,
                        const rect_t *rects, long long n_rects, int figure_side)
{
    int longer = job->width > job->height ? job->width : job->height;
    int every = (longer + figure_side - 1) / figure_side;
    int fw = (job->width + every - 1) / every, fh = (job->height + every - 1) / every;
    char *row = (char *)kit_host_alloc((size_t)fw * 4 + 1);
    kit_json_begin_object(j, "figure");
    kit_json_int(j, "every", every);
    kit_json_int(j, "width", fw);
    kit_json_int(j, "height", fh);
    kit_json_begin_array(j, "dwell_rows"); /* 4 hex digits per pixel */
    for (int y = 0; y < fh; y++) {
        for (int x = 0; x < fw; x++)
            snprintf(row + 4 * x, 5, "%04x", (unsigned int)image[(y * every) * job->width + x * every] & 0xffffu);
        kit_json_string(j, NULL, row);
    }
    kit_json_end_array(j);
    kit_json_begin_array(j, "rects"); /* [x, y, side, depth, computed], as reported, in image pixels */
    for (long long i = 0; i < n_rects && i < FIGURE_MAX_RECTS; i++) { /* any depth: json_rect writes [] for < 0 */
        rect_t r = rects[i];
        int inside = r.x >= 0 && r.y >= 0 && r.x < job->width && r.y < job->height;
        kit_json_begin_array(j, NULL);
        kit_json_int(j, NULL, r.x);
        kit_json_int(j, NULL, r.y);
        kit_json_int(j, NULL, r.side);
        kit_json_int(j, NULL, r.depth);
        kit_json_int(j, NULL, inside ? computed[(size_t)r.y * job->width + r.x] : 0);
        kit_json_end_array(j);
    }
    kit_json_end_array(j);
    kit_json_int(j, "rects_left_out", n_rects > FIGURE_MAX_RECTS ? n_rects - FIGURE_MAX_RECTS : 0);
    kit_json_end_object(j);
    free(row);
}

/* One case (kit_harness.h): the exhaustive image, the rule, the student's run, the comparisons, the
 * timings, the document. Everything it allocates is freed before it returns. */
static int run_case(int argc, char **argv)
{
    int width = (int)kit_option_long(argc, argv, options, "--width");
    int height = (int)kit_option_long(argc, argv, options, "--height");
    int view = kit_option_word(argc, argv, options, "--view");
    int zoom = (int)kit_option_long(argc, argv, options, "--zoom");
    unsigned int seed = (unsigned int)kit_option_long(argc, argv, options, "--seed");
    int max_dwell = (int)kit_option_long(argc, argv, options, "--max-dwell");
    int max_depth = (int)kit_option_long(argc, argv, options, "--max-depth");
    int min_side = (int)kit_option_long(argc, argv, options, "--min-side");
    int repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    int figure_side = (int)kit_option_long(argc, argv, options, "--figure");
    int bench_mode = (int)kit_option_long(argc, argv, options, "--bench");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    if (min_side & (min_side - 1)) {
        fprintf(stderr, "--min-side must be a power of two (got %d)\n", min_side);
        return KIT_EXIT_USAGE;
    }

    /* The student's preparation comes before any launch of the case and owns the pending-launch
     * limit; an earlier case of the process may have changed it, so the kit first puts it back to
     * the default (kit_harness.h). */
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, 0))
        return KIT_CASE_DEFERRED;
    if (bench_mode) {
        bench(repeats > 0 ? repeats : 5, json_path); /* prepare_mandelbrot for each image */
        return 0;
    }
    prepare_mandelbrot(width, height, max_depth, min_side);
    size_t pending = 0;
    KIT_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));

    mandel_job_t job = make_job(width, height, view, zoom, seed, max_dwell, max_depth, min_side);
    long long pixels = (long long)width * height;
    size_t bytes = sizeof(int) * (size_t)pixels;
    printf("%d x %d pixels, view %s, zoom %d (span %g), seed %u, max dwell %d; max depth %d, min side %d, "
           "top side %d\n", width, height, view_names[view], zoom, ldexp(3.0, -zoom), seed, max_dwell, max_depth, min_side,
           top_side(&job));
    printf("pending-launch limit after prepare_mandelbrot: %zu\n", pending);

    /* 1. the kit's exhaustive image, and the rule applied to it */
    KIT_CHECK(cudaMalloc((void **)&job.image, bytes));
    rule_t rule = rule_of_exhaustive(job);
    const int *exhaustive = rule.exhaustive;
    long long rule_vs_exhaustive = 0;
    for (long long p = 0; p < pixels; p++)
        rule_vs_exhaustive += rule.expected[p] != exhaustive[p];
    long long child_grids = rule.n_rects - 1;
    printf("the rule: %lld rectangles (%lld child grids), %.1f%% of the pixels filled, %lld pixels (%.3f%%) "
           "differ from the exhaustive image\n", rule.n_rects, child_grids, 100.0 * rule.filled / pixels,
           rule_vs_exhaustive, 100.0 * rule_vs_exhaustive / pixels);

    /* 2. the student's subdivision, counted */
    long long log_size = 2 * rule.n_rects + 1024; /* room for twice the rule's rectangles */
    rect_t *d_log = NULL;
    unsigned long long *d_log_grid = NULL;
    KIT_CHECK(cudaMalloc((void **)&d_log, sizeof(rect_t) * (size_t)log_size));
    KIT_CHECK(cudaMalloc((void **)&d_log_grid, sizeof(unsigned long long) * (size_t)log_size));
    unsigned int zero_grids[DEPTH_SLOTS], zero = 0, log_size_u = (unsigned int)log_size;
    unsigned long long zero_calls = 0;
    memset(zero_grids, 0, sizeof zero_grids);
    KIT_CHECK(cudaMemcpyToSymbol(kit_grids, zero_grids, sizeof zero_grids));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_count, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_misshapen, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_log, &d_log, sizeof d_log));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_grid, &d_log_grid, sizeof d_log_grid));
    KIT_CHECK(cudaMemcpyToSymbol(kit_rect_log_size, &log_size_u, sizeof log_size_u));
    KIT_CHECK(cudaMemcpyToSymbol(kit_dwell_calls, &zero_calls, sizeof zero_calls));
    KIT_CHECK(cudaMemset(job.image, 0xff, bytes)); /* -1: a pixel nobody wrote */
    kit_launch_log_reset();
    set_counting(1);
    run_student(job);
    KIT_CHECK_KERNEL();
    set_counting(0);
    kit_launch_log_t launches = kit_launch_log_read();
    unsigned int grids_u[DEPTH_SLOTS], reported = 0;
    unsigned long long dwell_calls = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(grids_u, kit_grids, sizeof grids_u));
    KIT_CHECK(cudaMemcpyFromSymbol(&reported, kit_rect_count, sizeof reported));
    unsigned int misshapen = 0, misshapen_shape[2] = {0, 0};
    KIT_CHECK(cudaMemcpyFromSymbol(&misshapen, kit_misshapen, sizeof misshapen));
    KIT_CHECK(cudaMemcpyFromSymbol(misshapen_shape, kit_misshapen_shape, sizeof misshapen_shape));
    KIT_CHECK(cudaMemcpyFromSymbol(&dwell_calls, kit_dwell_calls, sizeof dwell_calls));
    long long kept = reported < (unsigned int)log_size ? reported : log_size;
    rect_t *got = (rect_t *)kit_host_alloc(sizeof(rect_t) * (size_t)(kept > 0 ? kept : 1));
    KIT_CHECK(cudaMemcpy(got, d_log, sizeof(rect_t) * (size_t)kept, cudaMemcpyDeviceToHost));
    /* Grids that ran, from the records' grid ids: report_rect is a function the student's code may call
     * as often as it likes, so a count of its calls is not a count of grids. */
    unsigned long long *got_grids = (unsigned long long *)kit_host_alloc(sizeof(unsigned long long) *
                                                                         (size_t)(kept > 0 ? kept : 1));
    KIT_CHECK(cudaMemcpy(got_grids, d_log_grid, sizeof(unsigned long long) * (size_t)kept, cudaMemcpyDeviceToHost));
    long long same_grid = repeated_ids(got_grids, kept);
    free(got_grids);
    int *image = (int *)kit_host_alloc(bytes);
    KIT_CHECK(cudaMemcpy(image, job.image, bytes, cudaMemcpyDeviceToHost));
    long long grids[DEPTH_SLOTS], reports = 0;
    for (int d = 0; d < DEPTH_SLOTS; d++) {
        grids[d] = grids_u[d];
        reports += grids_u[d];
    }
    long long grids_ran = reports - same_grid; /* distinct grids among the records */

    /* 3. comparisons */
    long long wrong = 0, wrong_computed = 0, unwritten = 0, vs_exhaustive = 0;
    long long first_wrong = -1;
    for (long long p = 0; p < pixels; p++) {
        vs_exhaustive += image[p] != exhaustive[p];
        if (image[p] != rule.expected[p]) {
            wrong++;
            wrong_computed += rule.computed[p];
            unwritten += image[p] == -1;
            if (first_wrong < 0)
                first_wrong = p;
        }
    }
    rect_t *figure_rects = NULL;
    if (figure_side > 0) { /* in the order reported, before diff_rects sorts them */
        figure_rects = (rect_t *)kit_host_alloc(sizeof(rect_t) * (size_t)(kept > 0 ? kept : 1));
        memcpy(figure_rects, got, sizeof(rect_t) * (size_t)kept);
    }
    rect_diff_t rects = diff_rects(rule.rects, rule.n_rects, got, kept); /* sorts both: the rule's are not used after */
    printf("yours: %lld grids ran, %u in the image reported; rectangles missing %lld, extra %lld; %llu dwell "
           "evaluations (%.2f per pixel)\n", grids_ran, reported, rects.missing, rects.extra, dwell_calls,
           (double)dwell_calls / pixels);
    if (same_grid)
        printf("  %lld reports came from a grid that had already reported: report_rect is called once per grid\n",
               same_grid);
    if (misshapen)
        printf("  %u grids not of one block of %d threads (the first: %u blocks of %u threads)\n", misshapen,
               MS_THREADS, misshapen_shape[0], misshapen_shape[1]);
    printf("  pixels unlike the rule: %lld (%lld where the rule computes each pixel, %lld never written); unlike the "
           "exhaustive image: %lld (%.3f%%)\n", wrong, wrong_computed, unwritten, vs_exhaustive,
           100.0 * vs_exhaustive / pixels);
    kit_print_launch_log("  ", launches);

    /* 4. timing: the kit's exhaustive kernel and the student's subdivision, nothing counted; not where the
     * counted subdivision already differs from the rule, whose time would count for nothing */
    kit_timing_t t_exhaustive = {0, 0, 0, 0}, t_student = {0, 0, 0, 0};
    checked_timing_t checked;
    memset(&checked, 0, sizeof checked);
    if (repeats > 0 && (wrong || rects.missing || rects.extra)) {
        printf("  not timed: the subdivision above differs from the rule's\n");
        repeats = 0;
    }
    if (repeats > 0) {
        t_exhaustive = kit_time_kernel(NULL, exhaustive_step, &job, 1, repeats);
        checked = time_student_checked(job, rule.expected, repeats, GIVE_UP_SLOWER * t_exhaustive.median_ms);
        t_student = checked.timing;
        if (t_student.repeats < repeats)
            printf("  timing given up after %d timed run(s), each %.0fx the exhaustive kernel or slower\n",
                   t_student.repeats, GIVE_UP_SLOWER);
        if (checked.wrong_runs)
            printf("  %d of your %d timed runs left an image unlike the rule's (the first: %lld pixels): work skipped "
                   "in a later launch, so the time does not count\n", checked.wrong_runs, checked.runs,
                   checked.first_unlike);
        printf("  exhaustive (kit): median %.3f ms (min %.3f, max %.3f); yours: median %.3f ms (min %.3f, max %.3f): "
               "%.2fx\n", t_exhaustive.median_ms, t_exhaustive.min_ms, t_exhaustive.max_ms, t_student.median_ms,
               t_student.min_ms, t_student.max_ms, t_exhaustive.median_ms / t_student.median_ms);
    }

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "07-mandelbrot");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "width", width);
        kit_json_int(&j, "height", height);
        kit_json_string(&j, "view", view_names[view]);
        kit_json_int(&j, "zoom", zoom);
        kit_json_int(&j, "seed", seed);
        kit_json_int(&j, "max_dwell", max_dwell);
        kit_json_int(&j, "max_depth", max_depth);
        kit_json_int(&j, "min_side", min_side);
        kit_json_int(&j, "top_side", top_side(&job));
        kit_json_end_object(&j);
        kit_json_uint(&j, "pending_launch_limit", pending);
        kit_json_begin_object(&j, "rule");
        kit_json_int(&j, "rects", rule.n_rects);
        kit_json_int(&j, "child_grids", child_grids);
        json_counts(&j, "grids_per_depth", rule.grids);
        kit_json_int(&j, "filled_pixels", rule.filled);
        kit_json_int(&j, "computed_pixels", rule.computed_pixels);
        kit_json_int(&j, "unlike_exhaustive", rule_vs_exhaustive);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "rects");
        kit_json_uint(&j, "reported", reported);
        kit_json_int(&j, "kept", kept);
        json_counts(&j, "grids_per_depth", grids);
        kit_json_int(&j, "missing", rects.missing);
        kit_json_int(&j, "extra", rects.extra);
        json_rect(&j, "first_missing", rects.first_missing);
        json_rect(&j, "first_extra", rects.first_extra);
        kit_json_int(&j, "same_grid", same_grid); /* records from a grid that had already reported */
        kit_json_uint(&j, "misshapen", misshapen); /* grids not of one block of MS_THREADS threads */
        kit_json_begin_array(&j, "first_misshapen"); /* [blocks, threads per block] */
        if (misshapen) {
            kit_json_uint(&j, NULL, misshapen_shape[0]);
            kit_json_uint(&j, NULL, misshapen_shape[1]);
        }
        kit_json_end_array(&j);
        kit_json_end_object(&j);
        kit_json_int(&j, "grids_ran", grids_ran);
        kit_json_begin_object(&j, "image");
        kit_json_int(&j, "pixels", pixels);
        kit_json_int(&j, "unlike_rule", wrong);
        kit_json_int(&j, "unlike_rule_computed", wrong_computed);
        kit_json_int(&j, "unwritten", unwritten);
        kit_json_int(&j, "unlike_exhaustive", vs_exhaustive);
        kit_json_begin_array(&j, "first_unlike_rule"); /* [px, py, yours, the rule's] */
        if (first_wrong >= 0) {
            kit_json_int(&j, NULL, first_wrong % width);
            kit_json_int(&j, NULL, first_wrong / width);
            kit_json_int(&j, NULL, image[first_wrong]);
            kit_json_int(&j, NULL, rule.expected[first_wrong]);
        }
        kit_json_end_array(&j);
        kit_json_end_object(&j);
        kit_json_uint(&j, "dwell_calls", dwell_calls);
        kit_json_launch_log(&j, "cdp_log", launches); /* the subdivision's launches */
        if (repeats > 0) {
            kit_json_begin_object(&j, "timing_ms");
            kit_json_double(&j, "exhaustive", t_exhaustive.median_ms);
            kit_json_double(&j, "cdp_student", t_student.median_ms);
            /* each of the student's runs, the warm-up's and those timed (fewer than repeats: given up),
             * checked against the rule's image */
            kit_json_int(&j, "cdp_student_runs", checked.runs);
            kit_json_int(&j, "cdp_student_wrong_runs", checked.wrong_runs);
            kit_json_int(&j, "cdp_student_first_unlike", checked.first_unlike);
            kit_json_end_object(&j);
        }
        if (figure_side > 0)
            json_figure(&j, &job, image, rule.computed, figure_rects, kept, figure_side);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    KIT_CHECK(cudaFree(job.image));
    KIT_CHECK(cudaFree(d_log));
    KIT_CHECK(cudaFree(d_log_grid));
    free(image);
    free(got);
    free(figure_rects);
    rule_free(&rule);
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
