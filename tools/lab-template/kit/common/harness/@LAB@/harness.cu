/* Lab @NN@ harness (kit-owned): runs the student's launch_parts over an array it has marked unwritten,
 * counts the grids of the kit's fill_part that ran and the elements they wrote, and writes the result
 * document the grader reads. It judges nothing: the grader computes what the sums must be.
 *
 *   ./@IDENT@ [--name value ...] [--json result.json]      (options[] below; ./@IDENT@ --help)
 *
 * A placeholder exercise, from the kit's lab template (the lab's contract is in @IDENT@.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "@IDENT@.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"

/* With blocks of MIN_THREADS or more, at most 2,048 blocks, one launch each: inside the default
 * pending-launch pool, so no launch of a right solution can fail. */
#define MAX_N (1 << 16)
#define MIN_THREADS 32
#define MAX_THREADS 1024

/* Evidence, written only by kit code: static, so the student's code cannot reach it. */
static __device__ unsigned int kit_child_grids;
static __device__ unsigned long long kit_child_writes;

static __device__ int part_value(int i)
{
    return 2 * i + 1;
}

__global__ void fill_part(int *out, int first, int n)
{
    if (kit_first_thread_of_grid()) /* once per grid: the count is of grids that ran */
        atomicAdd(&kit_child_grids, 1u);
    long long i = (long long)first + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 0 && i < n) {
        out[i] = part_value((int)i);
        atomicAdd(&kit_child_writes, 1ULL);
    }
}

/* What the grader compares with its own sums (modulo 2^64: wrong values may be anything), and the
 * elements never written. */
typedef struct {
    unsigned long long sum, weighted; /* sum of out[i], sum of i * out[i] */
    int unwritten, first_unwritten;
} values_t;

static values_t summarize(const int *out, int n, int unwritten_value)
{
    values_t v = {0, 0, 0, -1};
    for (int i = 0; i < n; i++) {
        v.sum += (unsigned long long)(long long)out[i];
        v.weighted += (unsigned long long)i * (unsigned long long)(long long)out[i];
        if (out[i] == unwritten_value && v.unwritten++ == 0)
            v.first_unwritten = i;
    }
    return v;
}

/* The case's options: declared once, here (kit_args.h); ./@IDENT@ --help and --describe print them. */
static const kit_option_t options[] = {
    {"--n", "elements of the array", 1000, 1, MAX_N, NULL},
    {"--threads", "threads per block of launch_parts", 128, MIN_THREADS, MAX_THREADS, NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): its options, the student's run, the document. */
static int run_case(int argc, char **argv)
{
    int n = (int)kit_option_long(argc, argv, options, "--n");
    int threads = (int)kit_option_long(argc, argv, options, "--threads");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    int blocks = (n + threads - 1) / threads;

    int *d_out = NULL;
    size_t bytes = sizeof(int) * (size_t)n;
    KIT_CHECK(cudaMalloc((void **)&d_out, bytes));
    KIT_CHECK(cudaMemset(d_out, 0xff, bytes)); /* every int -1: no element's right value */
    unsigned int zero_grids = 0;
    unsigned long long zero_writes = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_child_grids, &zero_grids, sizeof zero_grids));
    KIT_CHECK(cudaMemcpyToSymbol(kit_child_writes, &zero_writes, sizeof zero_writes));
    kit_launch_log_reset();

    launch_parts<<<blocks, threads>>>(d_out, n);
    KIT_CHECK_KERNEL();

    unsigned int grids = 0;
    unsigned long long writes = 0;
    KIT_CHECK(cudaMemcpyFromSymbol(&grids, kit_child_grids, sizeof grids));
    KIT_CHECK(cudaMemcpyFromSymbol(&writes, kit_child_writes, sizeof writes));
    kit_launch_log_t launches = kit_launch_log_read();
    int *out = (int *)kit_host_alloc(bytes);
    KIT_CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    values_t values = summarize(out, n, -1);
    free(out);
    KIT_CHECK(cudaFree(d_out));

    printf("n=%d, %d blocks of %d threads\n", n, blocks, threads);
    printf("child grids of fill_part that ran: %u; elements they wrote: %llu\n", grids, writes);
    if (values.unwritten > 0)
        printf("%d of %d elements never written (first: out[%d])\n", values.unwritten, n, values.first_unwritten);
    kit_print_launch_log("", launches);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "@LAB@");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "n", n);
        kit_json_int(&j, "threads", threads);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "values");
        kit_json_uint(&j, "sum", values.sum);
        kit_json_uint(&j, "weighted", values.weighted);
        kit_json_int(&j, "unwritten", values.unwritten);
        kit_json_int(&j, "first_unwritten", values.first_unwritten);
        kit_json_end_object(&j);
        kit_json_uint(&j, "child_grids", grids);
        kit_json_uint(&j, "child_writes", writes);
        kit_json_launch_log(&j, "launch_log", launches);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
