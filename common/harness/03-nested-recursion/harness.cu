/* Lab 03 harness (kit-owned): runs the student's nested_hello (Part A) and deep_chain (Part B),
 * records what ran in device logs, and writes the result document.
 *
 *   ./nested_recursion [--blocks 1] [--threads 8] [--depth 5000] [--print 1] [--json result.json]
 *
 * runs one case by hand; the grader sends several cases to one process (kit_harness.h). The
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

typedef struct {
    int depth, block, thread;
} hello_record_t;

static __device__ int kit_print_hello;
static __device__ unsigned int kit_hello_count;
static __device__ unsigned int kit_hello_grids; /* grids of nested_hello that ran, the host's included */
static __device__ hello_record_t kit_hello_log[MAX_RECORDS];
static __device__ unsigned int kit_levels_ran;
static __device__ int kit_deepest_level;

__device__ void report_hello(int depth)
{
    unsigned int ticket = atomicAdd(&kit_hello_count, 1u);
    /* Counted by the grid's first thread, whatever depth the code passed: a wrong depth is the
     * records' business, not the launch count's. */
    if (kit_first_thread_of_grid())
        atomicAdd(&kit_hello_grids, 1u);
    if (ticket < MAX_RECORDS) {
        hello_record_t r = {depth, (int)blockIdx.x, (int)threadIdx.x};
        kit_hello_log[ticket] = r;
    }
    if (kit_print_hello)
        printf("Recursion=%d: Hello World from thread %d block %d\n", depth, threadIdx.x, blockIdx.x);
}

__device__ void report_level(int depth)
{
    atomicAdd(&kit_levels_ran, 1u);
    atomicMax(&kit_deepest_level, depth);
}

/* One case (kit_harness.h): Parts A and B, the document. */
static int run_case(int argc, char **argv)
{
    int blocks = (int)kit_arg_long(argc, argv, "--blocks", 1, 1, 16);
    int threads = (int)kit_arg_long(argc, argv, "--threads", 8, 1, 1024);
    int deep = (int)kit_arg_long(argc, argv, "--depth", 5000, 1, MAX_DEEP);
    int print = (int)kit_arg_long(argc, argv, "--print", 1, 0, 1);
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
    void *hello_log = NULL; /* only the records counted are read: cleared all the same, as in a fresh process */
    KIT_CHECK(cudaGetSymbolAddress(&hello_log, kit_hello_log));
    KIT_CHECK(cudaMemset(hello_log, 0, sizeof(hello_record_t) * MAX_RECORDS));
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
    unsigned int hello_grids = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(&hello_grids, kit_hello_grids, sizeof hello_grids));
    unsigned int hello_child_grids = hello_grids > 0 ? hello_grids - 1 : 0; /* all but the host's */
    int deepest_hello = -1;
    for (unsigned int i = 0; i < kept; i++)
        if (records[i].depth > deepest_hello)
            deepest_hello = records[i].depth;
    printf("  %u hello records, deepest level %d%s\n", count, deepest_hello,
           count > kept ? " (log full: the rest were counted, not kept)" : "");
    kit_print_launch_log("  ", hello_launches);

    /* Part B */
    int minus_one = -1;
    KIT_CHECK(cudaMemcpyToSymbol(kit_levels_ran, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_deepest_level, &minus_one, sizeof minus_one));
    kit_launch_log_reset();
    printf("Part B: deep_chain<<<1, 1>>>(0, %d)\n", deep);
    deep_chain<<<1, 1>>>(0, deep);
    KIT_CHECK_KERNEL();
    unsigned int levels = 0;
    int deepest = -1;
    KIT_CHECK(cudaMemcpyFromSymbol(&levels, kit_levels_ran, sizeof levels));
    KIT_CHECK(cudaMemcpyFromSymbol(&deepest, kit_deepest_level, sizeof deepest));
    kit_launch_log_t deep_launches = kit_launch_log_read();
    printf("  levels that ran: %u of %d, deepest: %d\n", levels, deep + 1, deepest);
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
    static const char *const options[] = {"--blocks", "--threads", "--depth", "--print", NULL};
    return kit_harness_main(argc, argv, options, run_case);
}
