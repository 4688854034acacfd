/* Lab 02 harness (kit-owned): runs the student's race_parent (Part A) and consume_parent (Part B),
 * counts what the children saw and what the continuations used, and writes the result document.
 *
 *   ./memory_visibility [--blocks 16] [--trials 2] [--n 1000] [--threads 128] [--json result.json]
 */
#include <stdio.h>
#include <stdlib.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_result.h"
#include "memory_visibility.h"

#define RACE_THREADS 128              /* parents per block in Part A */
#define MAX_N (1 << 20)
#define POISON (-1000000)             /* what data and the use log hold before a run */
#define PRODUCE_DELAY_NS 50000ULL     /* produce() outside warp 0 */

/* ---- kit-owned device code ---- */

__global__ void observe_kernel(const int *slot, int *seen)
{
    *seen = *(const volatile int *)slot;
}

__global__ void store_value_kernel(int *slot, int value)
{
    *slot = value;
}

static __device__ unsigned long long globaltimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ int produce(int i)
{
    if (threadIdx.x >= 32) {
        unsigned long long start = globaltimer_ns();
        while (globaltimer_ns() - start < PRODUCE_DELAY_NS) {
        }
    }
    return i;
}

__global__ void add_one_kernel(int *data, int count)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count)
        data[j] += 1;
}

__device__ int *kit_used; /* kit_used[i]: the value element i was used with */

__device__ void use_result(int i, int value)
{
    kit_used[i] = value;
}

__global__ void use_result_kernel(const int *data, int base, int count)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count)
        use_result(base + j, data[j]);
}

/* ---- host side ---- */

static void fill(int *d, int n, int value)
{
    int *h = (int *)malloc(sizeof(int) * (size_t)n);
    if (h == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (int i = 0; i < n; i++)
        h[i] = value;
    KIT_CHECK(cudaMemcpy(d, h, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice));
    free(h);
}

static int *copy_to_host(const int *d, int n)
{
    int *h = (int *)malloc(sizeof(int) * (size_t)n);
    if (h == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    KIT_CHECK(cudaMemcpy(h, d, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    return h;
}

typedef struct {
    long long saw_first, saw_second, saw_other, ended_second;
} race_counts_t;

static race_counts_t run_race(int blocks, int trials)
{
    int parents = blocks * RACE_THREADS;
    int *slots, *seen;
    race_counts_t c = {0, 0, 0, 0};
    KIT_CHECK(cudaMalloc((void **)&slots, sizeof(int) * (size_t)parents));
    KIT_CHECK(cudaMalloc((void **)&seen, sizeof(int) * (size_t)parents));
    for (int t = 0; t < trials; t++) {
        fill(slots, parents, 0);
        fill(seen, parents, POISON);
        race_parent<<<blocks, RACE_THREADS>>>(slots, seen);
        KIT_CHECK_KERNEL();
        int *h_seen = copy_to_host(seen, parents);
        int *h_slots = copy_to_host(slots, parents);
        for (int i = 0; i < parents; i++) {
            if (h_seen[i] == FIRST_VALUE)
                c.saw_first++;
            else if (h_seen[i] == SECOND_VALUE)
                c.saw_second++;
            else
                c.saw_other++;
            if (h_slots[i] == SECOND_VALUE)
                c.ended_second++;
        }
        free(h_seen);
        free(h_slots);
    }
    KIT_CHECK(cudaFree(slots));
    KIT_CHECK(cudaFree(seen));
    return c;
}

typedef struct {
    long long sum, weighted; /* sum of v[i], sum of i * v[i] */
    int bad, first_bad_index, first_bad_value;
} array_summary_t;

/* Sums for the grader (which computes the expected ones itself) and, for people, where the
 * first element differs from i + 1. */
static array_summary_t summarize(const int *v, int n)
{
    array_summary_t s = {0, 0, 0, -1, 0};
    for (int i = 0; i < n; i++) {
        s.sum += v[i];
        s.weighted += (long long)i * v[i];
        if (v[i] != i + 1) {
            if (s.bad++ == 0) {
                s.first_bad_index = i;
                s.first_bad_value = v[i];
            }
        }
    }
    return s;
}

static void run_consume(int n, int threads, array_summary_t *data_out, array_summary_t *used_out)
{
    int *data, *used;
    KIT_CHECK(cudaMalloc((void **)&data, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&used, sizeof(int) * (size_t)n));
    fill(data, n, POISON);
    fill(used, n, POISON);
    KIT_CHECK(cudaMemcpyToSymbol(kit_used, &used, sizeof used));
    int blocks = (n + threads - 1) / threads;
    consume_parent<<<blocks, threads>>>(data, n);
    KIT_CHECK_KERNEL();
    int *h_data = copy_to_host(data, n);
    int *h_used = copy_to_host(used, n);
    *data_out = summarize(h_data, n);
    *used_out = summarize(h_used, n);
    free(h_data);
    free(h_used);
    KIT_CHECK(cudaFree(data));
    KIT_CHECK(cudaFree(used));
}

static void json_summary(kit_json_t *j, const char *key, array_summary_t s)
{
    kit_json_begin_object(j, key);
    kit_json_int(j, "sum", s.sum);
    kit_json_int(j, "weighted", s.weighted);
    kit_json_int(j, "bad", s.bad);
    kit_json_int(j, "first_bad_index", s.first_bad_index);
    kit_json_int(j, "first_bad_value", s.first_bad_value);
    kit_json_end_object(j);
}

static void print_summary(const char *what, array_summary_t s, int n)
{
    if (s.bad == 0)
        printf("  %s: all %d elements are i + 1\n", what, n);
    else
        printf("  %s: %d of %d elements wrong; first: element %d is %d, expected %d%s\n", what, s.bad, n,
               s.first_bad_index, s.first_bad_value, s.first_bad_index + 1,
               s.first_bad_value == POISON ? " (never written)" : "");
}

int main(int argc, char **argv)
{
    static const char *const options[] = {"--blocks", "--trials", "--n", "--threads", "--json", "--nonce-fd", NULL};
    kit_args_require_known(argc, argv, options);
    kit_result_take_nonce(argc, argv); /* before any student code runs */
    int blocks = (int)kit_arg_long(argc, argv, "--blocks", 16, 1, 128);
    int trials = (int)kit_arg_long(argc, argv, "--trials", 2, 1, 100);
    int n = (int)kit_arg_long(argc, argv, "--n", 1000, 1, MAX_N);
    int threads = (int)kit_arg_long(argc, argv, "--threads", 128, 1, 1024);
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    /* Every parent of Part A makes two launches, every block of Part B two more. The kit sizes the
     * pending-launch pool so that all of them fit (Lab 03 is about this limit); it must be set
     * before the first launch. */
    int part_b_blocks = (n + threads - 1) / threads;
    size_t pending = 2 * (size_t)(blocks * RACE_THREADS > part_b_blocks ? blocks * RACE_THREADS : part_b_blocks) + 256;
    if (pending < 2048)
        pending = 2048;
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);

    kit_launch_log_reset();
    race_counts_t race = run_race(blocks, trials);
    long long observations = (long long)blocks * RACE_THREADS * trials;
    printf("Part A: %lld parents (%d trials of %d blocks x %d)\n", observations, trials, blocks, RACE_THREADS);
    printf("  the child saw the value written before the launch (%d): %lld times\n", FIRST_VALUE, race.saw_first);
    printf("  the child saw the value written after the launch  (%d): %lld times\n", SECOND_VALUE, race.saw_second);
    if (race.saw_other)
        printf("  the child saw something else: %lld times\n", race.saw_other);
    printf("  slots holding %d at the end: %lld\n", SECOND_VALUE, race.ended_second);

    array_summary_t data_summary, used_summary;
    run_consume(n, threads, &data_summary, &used_summary);
    printf("Part B: n = %d, %d blocks of %d threads\n", n, part_b_blocks, threads);
    print_summary("data after the children (data[i] == i + 1)", data_summary, n);
    print_summary("values used (use_result(i, v) with v == i + 1)", used_summary, n);

    kit_launch_log_t launches = kit_launch_log_read();
    kit_print_launch_log("", launches);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "02-memory-visibility");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "blocks", blocks);
        kit_json_int(&j, "trials", trials);
        kit_json_int(&j, "n", n);
        kit_json_int(&j, "threads", threads);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "race");
        kit_json_int(&j, "parents", observations);
        kit_json_int(&j, "saw_first", race.saw_first);
        kit_json_int(&j, "saw_second", race.saw_second);
        kit_json_int(&j, "saw_other", race.saw_other);
        kit_json_int(&j, "ended_second", race.ended_second);
        kit_json_end_object(&j);
        json_summary(&j, "data", data_summary);
        json_summary(&j, "used", used_summary);
        kit_json_launch_log(&j, "launch_log", launches);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    return 0;
}
