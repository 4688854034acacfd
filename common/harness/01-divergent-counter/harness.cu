/* Lab 01 harness (kit-owned): runs the kit's flat reference and the student's diverge_cta with the
 * same K, M, N, observes the child grids the student's code launched, and writes the result
 * document the grader reads.
 *
 *   ./divergent_counter [--name value ...] [--json result.json]   (options[] below; ./divergent_counter --help)
 *
 * --pending-limit L sets the device runtime's pending-launch limit to L before any launch, and
 * --child-spin-us S keeps every grid of entry_kernel busy for S microseconds before its work: with
 * K well above L, launches fail (cudaErrorLaunchPendingCountExceeded), and only a check in the
 * launching thread, right after its launch, can see it. The grader's fault-injection case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "divergent_counter.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"

#define MAX_K 2048        /* at most one child per block: stays inside the default pending-launch pool */
#define MAX_N (1L << 24)
#define MAX_LOGGED_GRIDS 4096
#define MAX_SHAPES 16
#define MAX_CHILD_SPIN_US 100000

typedef struct {
    unsigned int grid[3];
    unsigned int block[3];
} grid_shape_t;

typedef struct {
    unsigned long long id; /* kit_grid_id() */
    grid_shape_t shape;
} logged_grid_t;

/* Instrumentation, written only by kit code. */
static __device__ unsigned int child_grids_started;
static __device__ logged_grid_t child_grid_log[MAX_LOGGED_GRIDS];
static __device__ unsigned long long kit_child_spin_ns; /* set by --child-spin-us */
/* The divergent phase's increments, by where they ran: in grids of entry_kernel, or in a call of
 * entry_work from the student's code (the parent's own threads, where the work was to move out). */
static __device__ unsigned long long kit_work_in_child_grids;
static __device__ unsigned long long kit_work_elsewhere;

static __device__ void add_work(unsigned long long *foo, int n)
{
    for (int i = 0; i < n; i++)
        atomicAdd(foo, 1ULL);
}

/* Only the student's code calls this one: entry_kernel does its work through add_work. */
__device__ void entry_work(unsigned long long *foo, int n)
{
    if (n > 0)
        atomicAdd(&kit_work_elsewhere, (unsigned long long)n);
    add_work(foo, n);
}

__global__ void entry_kernel(unsigned long long *foo, int n)
{
    /* A kit kernel: its first thread runs once in each grid of it, and the grid's identity is logged
     * with its shape, so the harness counts distinct grids that ran. */
    if (kit_first_thread_of_grid()) {
        unsigned int ticket = atomicAdd(&child_grids_started, 1u);
        if (ticket < MAX_LOGGED_GRIDS) {
            logged_grid_t g = {kit_grid_id(), {{gridDim.x, gridDim.y, gridDim.z}, {blockDim.x, blockDim.y, blockDim.z}}};
            child_grid_log[ticket] = g;
        }
    }
    if (kit_child_spin_ns > 0) /* stay pending a while, so that later launches find the pool full */
        kit_spin_ns(kit_globaltimer_ns(), (long long)kit_child_spin_ns);
    if (n > 0)
        atomicAdd(&kit_work_in_child_grids, (unsigned long long)n);
    add_work(foo, n);
}

/* The flat version, as the textbook has it, except that every thread reaches the barrier: thread 0
 * does not return early (a __syncthreads() that some threads of the block never reach is undefined
 * behaviour). Only threads whose index is a multiple of 32 work: one "leader" per warp. */
__global__ void reference_diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0)
        x = 5;
    if (leader)
        add_work(foo, n);
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}

typedef struct {
    void (*kernel)(unsigned long long *, int);
    unsigned long long *foo;
    int k, m, n;
} run_ctx_t;

static void reset_counter(void *p)
{
    run_ctx_t *c = (run_ctx_t *)p;
    KIT_CHECK(cudaMemset(c->foo, 0, sizeof *c->foo));
}

static void launch_kernel(void *p)
{
    run_ctx_t *c = (run_ctx_t *)p;
    c->kernel<<<c->k, 32 * c->m>>>(c->foo, c->n);
}

/* One checked run: zero the counter, launch, wait, return the counter. */
static unsigned long long run_once(run_ctx_t *c)
{
    unsigned long long foo = 0;
    reset_counter(c);
    launch_kernel(c);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(&foo, c->foo, sizeof foo, cudaMemcpyDeviceToHost));
    return foo;
}

typedef struct {
    grid_shape_t shape;
    unsigned int count;
} shape_count_t;

static int same_shape(const grid_shape_t *a, const grid_shape_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static int compare_ids(const void *a, const void *b)
{
    unsigned long long x = ((const logged_grid_t *)a)->id, y = ((const logged_grid_t *)b)->id;
    return x < y ? -1 : x > y;
}

/* Keeps one entry per grid identity (sorting the log by id); returns how many are left. */
static unsigned int distinct_grids(logged_grid_t *log, unsigned int n)
{
    unsigned int kept = 0;
    qsort(log, n, sizeof *log, compare_ids);
    for (unsigned int i = 0; i < n; i++)
        if (kept == 0 || log[i].id != log[kept - 1].id)
            log[kept++] = log[i];
    return kept;
}

/* Groups the logged grids by shape; returns the number of distinct shapes kept (at most MAX_SHAPES;
 * grids of further shapes are counted in *other). */
static int summarize_shapes(const logged_grid_t *log, unsigned int n, shape_count_t *out, unsigned int *other)
{
    int distinct = 0;
    *other = 0;
    for (unsigned int i = 0; i < n; i++) {
        int j = 0;
        while (j < distinct && !same_shape(&out[j].shape, &log[i].shape))
            j++;
        if (j < distinct) {
            out[j].count++;
        } else if (distinct < MAX_SHAPES) {
            out[distinct].shape = log[i].shape;
            out[distinct].count = 1;
            distinct++;
        } else {
            (*other)++;
        }
    }
    return distinct;
}

static void json_timing(kit_json_t *j, const char *key, kit_timing_t t)
{
    kit_json_begin_object(j, key);
    kit_json_double(j, "median_ms", t.median_ms);
    kit_json_double(j, "min_ms", t.min_ms);
    kit_json_double(j, "max_ms", t.max_ms);
    kit_json_end_object(j);
}

static void json_dim3(kit_json_t *j, const char *key, const unsigned int *d)
{
    kit_json_begin_array(j, key);
    for (int i = 0; i < 3; i++)
        kit_json_uint(j, NULL, d[i]);
    kit_json_end_array(j);
}

static const kit_option_t options[] = {
    {"--K", "blocks of diverge_cta (diverge_cta<<<K, 32 * M>>>)", 2, 1, MAX_K, NULL},
    {"--M", "warps per block", 32, 1, 32, NULL},
    {"--N", "increments each thread's entry_work makes", 128, 1, MAX_N, NULL},
    {"--repeats", "timed runs of the reference and of yours, each (medians; 0: none)", 5, 0, 1000, NULL},
    {"--pending-limit", "the pending-launch limit, set before any launch (0: the default)", 0, 0, 1 << 20, NULL},
    {"--child-spin-us", "microseconds every grid of entry_kernel spins before its work", 0, 0, MAX_CHILD_SPIN_US,
     NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): its options, the reference and the student's runs, the document. */
static int run_case(int argc, char **argv)
{
    int k = (int)kit_option_long(argc, argv, options, "--K");
    int m = (int)kit_option_long(argc, argv, options, "--M");
    int n = (int)kit_option_long(argc, argv, options, "--N");
    int repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    long pending_limit = kit_option_long(argc, argv, options, "--pending-limit");
    long child_spin_us = kit_option_long(argc, argv, options, "--child-spin-us");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    /* The case's limit, set before any of its kernels runs (kit_case_limit). */
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, (size_t)pending_limit))
        return KIT_CASE_DEFERRED;
    size_t pending = 0;
    KIT_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    unsigned long long spin_ns = (unsigned long long)child_spin_us * 1000ULL;
    KIT_CHECK(cudaMemcpyToSymbol(kit_child_spin_ns, &spin_ns, sizeof spin_ns));

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
    printf("K=%d blocks of 32*M=%d threads, N=%d; pending-launch limit %zu", k, 32 * m, n, pending);
    if (child_spin_us > 0)
        printf("; every child grid waits %ld us first", child_spin_us);
    printf("\n");

    unsigned long long *d_foo = NULL;
    KIT_CHECK(cudaMalloc((void **)&d_foo, sizeof *d_foo));

    run_ctx_t reference = {reference_diverge_cta, d_foo, k, m, n};
    run_ctx_t student = {diverge_cta, d_foo, k, m, n};

    unsigned long long reference_foo = run_once(&reference);

    unsigned int zero = 0;
    unsigned long long zero_work = 0, work_in_child_grids = 0, work_elsewhere = 0;
    KIT_CHECK(cudaMemcpyToSymbol(child_grids_started, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_work_in_child_grids, &zero_work, sizeof zero_work));
    KIT_CHECK(cudaMemcpyToSymbol(kit_work_elsewhere, &zero_work, sizeof zero_work));
    kit_launch_log_reset();
    unsigned long long student_foo = run_once(&student);
    unsigned int started = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(&started, child_grids_started, sizeof started));
    KIT_CHECK(cudaMemcpyFromSymbol(&work_in_child_grids, kit_work_in_child_grids, sizeof work_in_child_grids));
    KIT_CHECK(cudaMemcpyFromSymbol(&work_elsewhere, kit_work_elsewhere, sizeof work_elsewhere));
    kit_launch_log_t launches = kit_launch_log_read();

    static logged_grid_t log[MAX_LOGGED_GRIDS];
    unsigned int logged = started < MAX_LOGGED_GRIDS ? started : MAX_LOGGED_GRIDS;
    KIT_CHECK(cudaMemcpyFromSymbol(log, child_grid_log, sizeof(logged_grid_t) * logged));
    /* Distinct grids by identity; past the log's end (a wrong submission only) the starts are counted. */
    logged = distinct_grids(log, logged);
    unsigned int grids = logged + (started - (started < MAX_LOGGED_GRIDS ? started : MAX_LOGGED_GRIDS));
    shape_count_t shapes[MAX_SHAPES];
    unsigned int other_shapes = 0;
    int distinct = summarize_shapes(log, logged, shapes, &other_shapes);

    printf("flat reference:  foo = %llu\n", reference_foo);
    printf("your diverge_cta: foo = %llu\n", student_foo);
    printf("child grids of entry_kernel that ran: %u\n", grids);
    printf("divergent work (increments): %llu in those grids, %llu by entry_work called from your kernel\n",
           work_in_child_grids, work_elsewhere);
    for (int i = 0; i < distinct; i++)
        printf("  %u x grid(%u,%u,%u) block(%u,%u,%u)\n", shapes[i].count,
               shapes[i].shape.grid[0], shapes[i].shape.grid[1], shapes[i].shape.grid[2],
               shapes[i].shape.block[0], shapes[i].shape.block[1], shapes[i].shape.block[2]);
    if (other_shapes > 0)
        printf("  %u more grids of other shapes\n", other_shapes);
    kit_print_launch_log("", launches);

    kit_timing_t reference_time = kit_time_kernel(reset_counter, launch_kernel, &reference, 1, repeats);
    kit_timing_t student_time = kit_time_kernel(reset_counter, launch_kernel, &student, 1, repeats);
    if (repeats > 0)
        printf("median of %d runs: flat reference %.3f ms, yours %.3f ms\n", repeats,
               reference_time.median_ms, student_time.median_ms);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "01-divergent-counter");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "K", k);
        kit_json_int(&j, "M", m);
        kit_json_int(&j, "N", n);
        kit_json_int(&j, "child_spin_us", child_spin_us);
        kit_json_end_object(&j);
        kit_json_uint(&j, "pending_launch_limit", pending);
        kit_json_uint(&j, "reference_foo", reference_foo);
        kit_json_uint(&j, "student_foo", student_foo);
        kit_json_uint(&j, "child_grids", grids);
        kit_json_begin_array(&j, "child_shapes");
        for (int i = 0; i < distinct; i++) {
            kit_json_begin_object(&j, NULL);
            json_dim3(&j, "grid", shapes[i].shape.grid);
            json_dim3(&j, "block", shapes[i].shape.block);
            kit_json_uint(&j, "count", shapes[i].count);
            kit_json_end_object(&j);
        }
        kit_json_end_array(&j);
        kit_json_uint(&j, "child_grids_other_shapes", other_shapes);
        kit_json_begin_object(&j, "work");
        kit_json_uint(&j, "in_child_grids", work_in_child_grids);
        kit_json_uint(&j, "elsewhere", work_elsewhere);
        kit_json_end_object(&j);
        kit_json_launch_log(&j, "launch_log", launches);
        if (repeats > 0) {
            kit_json_begin_object(&j, "timing");
            kit_json_int(&j, "repeats", repeats);
            json_timing(&j, "reference", reference_time);
            json_timing(&j, "student", student_time);
            kit_json_end_object(&j);
        }
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    KIT_CHECK(cudaFree(d_foo));
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
