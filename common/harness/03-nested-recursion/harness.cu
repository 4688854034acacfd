/* Lab 03 harness (kit-owned): runs the student's nested_hello (Part A) and deep_chain (Part B),
 * records what ran in device logs, and writes the result document.
 *
 *   ./nested_recursion [--name value ...] [--json result.json]      (options[] below; ./nested_recursion --help)
 *
 * runs one case by hand; the grader sends several cases to one process (kit_harness.h). Grids are
 * counted by their identity (kit_grid_id), each once however often its threads report. The
 * student's prepare_deep_recursion may set the pending-launch limit, which holds for the whole
 * process: each case first puts it back to the default, and then calls the preparation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "nested_recursion.h"

#define MAX_RECORDS 65536
#define MAX_DEEP 100000
/* Sets of grids (below): a right Part A has 1 + 16 * 10 grids at most, a right Part B MAX_DEEP + 1. */
#define HELLO_GRID_SLOTS 8192
#define LEVEL_GRID_SLOTS (1 << 18)

typedef struct {
    int depth, block, thread;
} hello_record_t;

/* A grid's shape as its threads see it: blocks in the grid and threads in a block, all dimensions. */
typedef struct {
    unsigned int blocks, threads;
} grid_shape_t;

/* A set of grids, by identity (kit_grid_id): each grid that called a kit report function is added
 * once, however often its threads call, so the count is of grids that ran, not of calls. Open
 * addressing in device memory; a slot holds the grid's id + 1 (0: free). A grid that finds the
 * table full is counted in *unkept. */
typedef struct {
    unsigned long long *ids;
    grid_shape_t *shapes; /* NULL, or the shape of the grid in each slot */
    unsigned int capacity; /* a power of two */
    unsigned int *count, *unkept;
} grid_set_t;

static __device__ void grid_set_add(grid_set_t set)
{
    unsigned long long key = kit_grid_id() + 1ULL;
    unsigned int mask = set.capacity - 1;
    unsigned int home = (unsigned int)((key * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
    for (unsigned int probe = 0; probe <= mask; probe++) {
        unsigned int slot = (home + probe) & mask;
        unsigned long long held = *(volatile unsigned long long *)&set.ids[slot];
        if (held == 0ULL)
            held = atomicCAS(&set.ids[slot], 0ULL, key);
        if (held == 0ULL) { /* this thread added the grid */
            if (set.shapes != NULL) {
                grid_shape_t shape = {gridDim.x * gridDim.y * gridDim.z, blockDim.x * blockDim.y * blockDim.z};
                set.shapes[slot] = shape;
            }
            atomicAdd(set.count, 1u);
            return;
        }
        if (held == key)
            return;
    }
    atomicAdd(set.unkept, 1u);
}

static __device__ int kit_print_hello;
static __device__ unsigned int kit_hello_count;
static __device__ hello_record_t kit_hello_log[MAX_RECORDS];
static __device__ unsigned long long kit_hello_grid_ids[HELLO_GRID_SLOTS];
static __device__ grid_shape_t kit_hello_grid_shapes[HELLO_GRID_SLOTS];
static __device__ unsigned int kit_hello_grids;        /* grids of nested_hello that reported, the host's included */
static __device__ unsigned int kit_hello_grids_unkept;
static __device__ unsigned int kit_level_reports;      /* calls of report_level */
static __device__ unsigned long long kit_level_grid_ids[LEVEL_GRID_SLOTS];
static __device__ unsigned int kit_levels_ran;         /* grids that reported a level, the host's included */
static __device__ unsigned int kit_level_grids_unkept;
static __device__ int kit_deepest_level;

__device__ void report_hello(int depth)
{
    unsigned int ticket = atomicAdd(&kit_hello_count, 1u);
    /* The grid counts once, whatever depth the code passed and however often it calls: a wrong depth
     * is the records' business, a loop of reports in one grid is one grid. */
    grid_set_t grids = {kit_hello_grid_ids, kit_hello_grid_shapes, HELLO_GRID_SLOTS, &kit_hello_grids,
                        &kit_hello_grids_unkept};
    grid_set_add(grids);
    if (ticket < MAX_RECORDS) {
        hello_record_t r = {depth, (int)blockIdx.x, (int)threadIdx.x};
        kit_hello_log[ticket] = r;
    }
    if (kit_print_hello)
        printf("Recursion=%d: Hello World from thread %d block %d\n", depth, threadIdx.x, blockIdx.x);
}

__device__ void report_level(int depth)
{
    grid_set_t grids = {kit_level_grid_ids, NULL, LEVEL_GRID_SLOTS, &kit_levels_ran, &kit_level_grids_unkept};
    atomicAdd(&kit_level_reports, 1u);
    grid_set_add(grids);
    atomicMax(&kit_deepest_level, depth);
}

/* Zeroes a device array named by its symbol, as a fresh process has it. */
#define CLEAR_SYMBOL(symbol)                                          \
    do {                                                              \
        void *kit_at_ = NULL;                                         \
        KIT_CHECK(cudaGetSymbolAddress(&kit_at_, symbol));            \
        KIT_CHECK(cudaMemset(kit_at_, 0, sizeof(symbol)));            \
    } while (0)

typedef struct {
    grid_shape_t shape;
    unsigned int count;
} shape_count_t;

/* The grids of Part A by shape: (blocks, threads, how many grids), at most `most` shapes; grids of
 * further shapes are counted in *other. Returns the number of shapes. */
static int hello_grid_shapes(shape_count_t *out, int most, unsigned int *other)
{
    static unsigned long long ids[HELLO_GRID_SLOTS];
    static grid_shape_t shapes[HELLO_GRID_SLOTS];
    KIT_CHECK(cudaMemcpyFromSymbol(ids, kit_hello_grid_ids, sizeof ids));
    KIT_CHECK(cudaMemcpyFromSymbol(shapes, kit_hello_grid_shapes, sizeof shapes));
    int distinct = 0;
    *other = 0;
    for (int i = 0; i < HELLO_GRID_SLOTS; i++) {
        if (ids[i] == 0ULL)
            continue;
        int j = 0;
        while (j < distinct && (out[j].shape.blocks != shapes[i].blocks || out[j].shape.threads != shapes[i].threads))
            j++;
        if (j < distinct) {
            out[j].count++;
        } else if (distinct < most) {
            out[distinct].shape = shapes[i];
            out[distinct].count = 1;
            distinct++;
        } else {
            (*other)++;
        }
    }
    return distinct;
}

#define MAX_SHAPES 64

static const kit_option_t options[] = {
    {"--blocks", "Part A's blocks of nested_hello", 1, 1, 16, NULL},
    {"--threads", "Part A's threads per block of nested_hello, and its size argument", 8, 1, 1024, NULL},
    {"--depth", "Part B's depth: deep_chain runs levels 0 to it", 5000, 1, MAX_DEEP, NULL},
    {"--print", "1: every report_hello also prints its line", 1, 0, 1, NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): Parts A and B, the document. */
static int run_case(int argc, char **argv)
{
    int blocks = (int)kit_option_long(argc, argv, options, "--blocks");
    int threads = (int)kit_option_long(argc, argv, options, "--threads");
    int deep = (int)kit_option_long(argc, argv, options, "--depth");
    int print = (int)kit_option_long(argc, argv, options, "--print");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    /* The student's host-side preparation comes before any launch of the case, and owns the
     * pending-launch limit. An earlier case of the same process may have changed it: the kit first
     * puts it back to the default, so that the preparation starts from what a fresh process has
     * (kit_harness.h). */
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, 0))
        return KIT_CASE_DEFERRED;
    prepare_deep_recursion(deep);

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
    size_t pending = 0;
    KIT_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    printf("pending-launch limit: %zu\n", pending);

    /* Part A */
    unsigned int zero = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_print_hello, &print, sizeof print));
    KIT_CHECK(cudaMemcpyToSymbol(kit_hello_count, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_hello_grids, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_hello_grids_unkept, &zero, sizeof zero));
    CLEAR_SYMBOL(kit_hello_log); /* only the records counted are read: cleared all the same, as in a fresh process */
    CLEAR_SYMBOL(kit_hello_grid_ids);
    CLEAR_SYMBOL(kit_hello_grid_shapes);
    kit_launch_log_reset();
    printf("Part A: nested_hello<<<%d, %d>>>(%d, 0)\n", blocks, threads, threads);
    fflush(stdout);
    nested_hello<<<blocks, threads>>>(threads, 0);
    KIT_CHECK_KERNEL();
    unsigned int count = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(&count, kit_hello_count, sizeof count));
    unsigned int kept = count < MAX_RECORDS ? count : MAX_RECORDS;
    static hello_record_t records[MAX_RECORDS]; /* static for its size; [0, kept) is written each case */
    KIT_CHECK(cudaMemcpyFromSymbol(records, kit_hello_log, sizeof(hello_record_t) * kept));
    kit_launch_log_t hello_launches = kit_launch_log_read();
    unsigned int hello_grids = 0, hello_grids_unkept = 0, other_shapes = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(&hello_grids, kit_hello_grids, sizeof hello_grids));
    KIT_CHECK(cudaMemcpyFromSymbol(&hello_grids_unkept, kit_hello_grids_unkept, sizeof hello_grids_unkept));
    unsigned int hello_child_grids = hello_grids > 0 ? hello_grids - 1 : 0; /* all but the host's */
    static shape_count_t shapes[MAX_SHAPES];
    int shape_count = hello_grid_shapes(shapes, MAX_SHAPES, &other_shapes);
    int deepest_hello = -1;
    for (unsigned int i = 0; i < kept; i++)
        if (records[i].depth > deepest_hello)
            deepest_hello = records[i].depth;
    printf("  %u hello records, deepest level %d%s\n", count, deepest_hello,
           count > kept ? " (log full: the rest were counted, not kept)" : "");
    printf("  %u grids reported%s:", hello_grids, hello_grids_unkept ? " (and more: the kit's table was full)" : "");
    for (int i = 0; i < shape_count; i++)
        printf(" %u x <<<%u, %u>>>", shapes[i].count, shapes[i].shape.blocks, shapes[i].shape.threads);
    printf("\n");
    kit_print_launch_log("  ", hello_launches);

    /* Part B */
    int minus_one = -1;
    KIT_CHECK(cudaMemcpyToSymbol(kit_levels_ran, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_level_reports, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_level_grids_unkept, &zero, sizeof zero));
    CLEAR_SYMBOL(kit_level_grid_ids);
    KIT_CHECK(cudaMemcpyToSymbol(kit_deepest_level, &minus_one, sizeof minus_one));
    kit_launch_log_reset();
    printf("Part B: deep_chain<<<1, 1>>>(0, %d)\n", deep);
    deep_chain<<<1, 1>>>(0, deep);
    KIT_CHECK_KERNEL();
    unsigned int levels = 0, level_reports = 0, level_grids_unkept = 0;
    int deepest = -1;
    KIT_CHECK(cudaMemcpyFromSymbol(&levels, kit_levels_ran, sizeof levels));
    KIT_CHECK(cudaMemcpyFromSymbol(&level_reports, kit_level_reports, sizeof level_reports));
    KIT_CHECK(cudaMemcpyFromSymbol(&level_grids_unkept, kit_level_grids_unkept, sizeof level_grids_unkept));
    KIT_CHECK(cudaMemcpyFromSymbol(&deepest, kit_deepest_level, sizeof deepest));
    kit_launch_log_t deep_launches = kit_launch_log_read();
    printf("  levels that ran (grids that reported one): %u of %d, deepest: %d; %u reports\n", levels, deep + 1,
           deepest, level_reports);
    kit_print_launch_log("  ", deep_launches);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "03-nested-recursion");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "blocks", blocks);
        kit_json_int(&j, "threads", threads);
        kit_json_int(&j, "depth", deep);
        kit_json_end_object(&j);
        kit_json_uint(&j, "pending_launch_limit", pending);
        kit_json_begin_object(&j, "hello");
        kit_json_uint(&j, "count", count);
        kit_json_uint(&j, "child_grids", hello_child_grids);
        kit_json_uint(&j, "grids", hello_grids);
        kit_json_uint(&j, "grids_unkept", hello_grids_unkept);
        kit_json_begin_array(&j, "grid_shapes"); /* [blocks, threads, grids of that shape] */
        for (int i = 0; i < shape_count; i++) {
            kit_json_begin_array(&j, NULL);
            kit_json_uint(&j, NULL, shapes[i].shape.blocks);
            kit_json_uint(&j, NULL, shapes[i].shape.threads);
            kit_json_uint(&j, NULL, shapes[i].count);
            kit_json_end_array(&j);
        }
        kit_json_end_array(&j);
        kit_json_uint(&j, "grids_other_shapes", other_shapes);
        kit_json_begin_array(&j, "records");
        for (unsigned int i = 0; i < kept; i++) {
            kit_json_begin_array(&j, NULL);
            kit_json_int(&j, NULL, records[i].depth);
            kit_json_int(&j, NULL, records[i].block);
            kit_json_int(&j, NULL, records[i].thread);
            kit_json_end_array(&j);
        }
        kit_json_end_array(&j);
        kit_json_end_object(&j);
        kit_json_launch_log(&j, "launch_log", hello_launches);
        kit_json_begin_object(&j, "deep");
        kit_json_uint(&j, "levels_ran", levels);
        kit_json_uint(&j, "reports", level_reports);
        kit_json_uint(&j, "grids_unkept", level_grids_unkept);
        kit_json_int(&j, "deepest", deepest);
        kit_json_launch_log(&j, "launch_log", deep_launches);
        kit_json_end_object(&j);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
