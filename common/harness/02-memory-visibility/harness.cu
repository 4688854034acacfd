/* Lab 02 harness (kit-owned): runs the student's race_parent (Part A) and consume_parent (Part B),
 * counts what the children saw and what the continuations used, and writes the result document.
 *
 *   ./memory_visibility [--name value ...] [--json result.json]   (options[] below; ./memory_visibility --help)
 *
 * runs one case by hand; the grader sends several cases to one process (kit_harness.h).
 *
 * --observe-delay-us D: every child of Part A waits D microseconds before it reads its slot, as a
 * child that starts late would. A write the parent makes after the launch, or a store that is not
 * ordered after the child, then lands before the read every time instead of sometimes.
 *
 * The result document also holds "timeline": %globaltimer stamps, taken in kit-owned code only, that
 * put Part A in time order for the handout's figure (tools/draw_figures.py). "submission": when the
 * children of the first trial read their slot, and when tail-launched stores landed, measured from a
 * kit kernel that ran just before race_parent. "probe": the same race written by the kit
 * (write 1, launch, write 2) with the parent's own steps stamped, run after Parts A and B, outside
 * the launch log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"
#include "memory_visibility.h"

#define RACE_THREADS 128              /* parents per block in Part A */
#define MAX_N (1 << 20)
#define POISON (-1000000)             /* what data and the use log hold before a run */
#define PRODUCE_DELAY_NS 50000LL      /* produce() outside warp 0 */
#define MAX_OBSERVE_DELAY_US 100000
#define DATA_GUARD 64                 /* elements after data[n - 1] that nothing may write */

/* ---- kit-owned device code ---- */

/* Part A's time stamps (first trial only; NULL otherwise): set by the host before race_parent. */
static __device__ int *kit_race_seen;                  /* the seen array of the timed trial */
static __device__ int *kit_race_slots;                 /* its slots */
static __device__ int kit_race_parents;
static __device__ unsigned long long *kit_read_ns;     /* [i]: when the child of parent i read its slot */
static __device__ unsigned long long *kit_store_ns;    /* [i]: when a store_value_kernel wrote slot i */

/* Grids of the kit's children that ran, each counted by its first thread: with the launch log's
 * counts, they tell whether every launch was checked. */
typedef struct {
    unsigned int observe, store, add_one, use_result;
} child_grids_t;
static __device__ child_grids_t kit_child_grids;
static __device__ unsigned long long kit_observe_delay_ns;
/* Part A: reads by observe_kernel of anything but a parent's own slot into that parent's seen entry
 * (a child that does not watch the race). */
static __device__ unsigned int kit_observed_elsewhere;

__global__ void observe_kernel(const int *slot, int *seen)
{
    if (kit_first_thread_of_grid())
        atomicAdd(&kit_child_grids.observe, 1u);
    if (kit_race_parents > 0) {
        long long at = slot - kit_race_slots;
        if (at < 0 || at >= kit_race_parents || seen - kit_race_seen != at)
            atomicAdd(&kit_observed_elsewhere, 1u);
    }
    if (kit_observe_delay_ns > 0)
        kit_spin_ns(kit_globaltimer_ns(), (long long)kit_observe_delay_ns);
    *seen = *(const volatile int *)slot;
    unsigned long long now = kit_globaltimer_ns();
    if (kit_read_ns != NULL && seen >= kit_race_seen && seen < kit_race_seen + kit_race_parents)
        kit_read_ns[seen - kit_race_seen] = now;
}

__global__ void store_value_kernel(int *slot, int value)
{
    if (kit_first_thread_of_grid())
        atomicAdd(&kit_child_grids.store, 1u);
    *slot = value;
    unsigned long long now = kit_globaltimer_ns();
    if (kit_store_ns != NULL && slot >= kit_race_slots && slot < kit_race_slots + kit_race_parents)
        kit_store_ns[slot - kit_race_slots] = now;
}

/* One stamp from a one-thread grid: the host launches it just before and just after race_parent
 * in the same stream, so it brackets the whole launch tree, tail launches included. */
__global__ void kit_stamp_kernel(unsigned long long *stamp)
{
    *stamp = kit_globaltimer_ns();
}

/* The probe: the race as the starter writes it, but kit-owned, so the parent's own steps can be
 * stamped. stamps[4 * i + k]: k = 0 before writing FIRST_VALUE, 1 when the launch statement has
 * returned, 2 after writing SECOND_VALUE, 3 when the child read the slot. Failed launches are
 * counted in *failed, not in the launch log the grader reads. */
__global__ void kit_probe_observe(const int *slot, int *seen, unsigned long long *read_stamp)
{
    *seen = *(const volatile int *)slot;
    *read_stamp = kit_globaltimer_ns();
}

__global__ void kit_probe_parent(int *slots, int *seen, unsigned long long *stamps, int *failed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stamps[4 * i + 0] = kit_globaltimer_ns();
    slots[i] = FIRST_VALUE;
    kit_probe_observe<<<1, 1>>>(slots + i, seen + i, stamps + 4 * i + 3);
    if (cudaGetLastError() != cudaSuccess)
        atomicAdd(failed, 1);
    stamps[4 * i + 1] = kit_globaltimer_ns();
    slots[i] = SECOND_VALUE;
    stamps[4 * i + 2] = kit_globaltimer_ns();
}

/* Part B's producing grid: the first grid to call produce() (consume_parent's, by the contract), by
 * its identity + 1 (0: none yet). A use of an element in that same grid cannot have seen the child's
 * result, however the value was obtained; calls of produce() from any other grid are counted. */
static __device__ unsigned long long kit_producer_grid;
static __device__ unsigned int kit_produce_calls, kit_produce_calls_elsewhere;

__device__ int produce(int i)
{
    unsigned long long me = kit_grid_id() + 1ULL;
    unsigned long long producer = *(volatile unsigned long long *)&kit_producer_grid;
    if (producer == 0ULL)
        producer = atomicCAS(&kit_producer_grid, 0ULL, me);
    if (producer != 0ULL && producer != me)
        atomicAdd(&kit_produce_calls_elsewhere, 1u);
    atomicAdd(&kit_produce_calls, 1u);
    if (threadIdx.x >= 32)
        kit_spin_ns(kit_globaltimer_ns(), PRODUCE_DELAY_NS);
    return i;
}

__global__ void add_one_kernel(int *data, int count)
{
    if (kit_first_thread_of_grid())
        atomicAdd(&kit_child_grids.add_one, 1u);
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count)
        data[j] += 1;
}

static __device__ int *kit_used;            /* kit_used[i]: the value element i was used with */
static __device__ unsigned int *kit_use_count; /* kit_use_count[i]: how many times element i was used */
static __device__ int kit_used_n;              /* n: uses of other elements are counted, not stored */
static __device__ unsigned int kit_uses_out_of_range;
static __device__ unsigned int kit_uses_in_producing_grid;

__device__ void use_result(int i, int value)
{
    if (kit_grid_id() + 1ULL == *(volatile unsigned long long *)&kit_producer_grid)
        atomicAdd(&kit_uses_in_producing_grid, 1u);
    if (i < 0 || i >= kit_used_n) {
        atomicAdd(&kit_uses_out_of_range, 1u);
        return;
    }
    kit_used[i] = value;
    atomicAdd(&kit_use_count[i], 1u);
}

__global__ void use_result_kernel(const int *data, int base, int count)
{
    if (kit_first_thread_of_grid())
        atomicAdd(&kit_child_grids.use_result, 1u);
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count)
        use_result(base + j, data[j]);
}

/* ---- host side ---- */

static void fill(int *d, int n, int value)
{
    int *h = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        h[i] = value;
    KIT_CHECK(cudaMemcpy(d, h, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice));
    free(h);
}

static int *copy_to_host(const int *d, int n)
{
    int *h = (int *)kit_host_alloc(sizeof(int) * (size_t)n);
    KIT_CHECK(cudaMemcpy(h, d, sizeof(int) * (size_t)n, cudaMemcpyDeviceToHost));
    return h;
}

typedef struct {
    long long saw_first, saw_second, saw_other, ended_second;
} race_counts_t;

/* Five points of a set of times (ns after a reference stamp), for the figure. */
typedef struct {
    long long count, min, p10, median, p90, max;
} time_summary_t;

/* Sorts v in place. Each point is one of the times (an even count's median is the upper middle);
 * the times are whole nanoseconds, which a double holds exactly. */
static time_summary_t summarize_times(double *v, long long count)
{
    time_summary_t s = {count, 0, 0, 0, 0, 0};
    if (count == 0)
        return s;
    kit_sort(v, count);
    s.min = (long long)v[0];
    s.p10 = (long long)v[count / 10];
    s.median = (long long)v[count / 2];
    s.p90 = (long long)v[(count * 9) / 10];
    s.max = (long long)v[count - 1];
    return s;
}

typedef struct {
    long long parents, tree_done_ns;
    time_summary_t read_saw_first, read_saw_second, store;
} race_timeline_t;

typedef struct {
    long long parents, failed, saw_second, tree_done_ns;
    time_summary_t first_write, launch_returned, second_write, child_read;
} probe_timeline_t;

static unsigned long long *alloc_stamps(size_t count)
{
    unsigned long long *d;
    KIT_CHECK(cudaMalloc((void **)&d, sizeof(unsigned long long) * count));
    KIT_CHECK(cudaMemset(d, 0, sizeof(unsigned long long) * count));
    return d;
}

static unsigned long long *stamps_to_host(const unsigned long long *d, size_t count)
{
    unsigned long long *h = (unsigned long long *)kit_host_alloc(sizeof(unsigned long long) * count);
    KIT_CHECK(cudaMemcpy(h, d, sizeof(unsigned long long) * count, cudaMemcpyDeviceToHost));
    return h;
}

/* Stamps relative to ref; a stamp of 0 (never written) is left out. Returns how many were kept. */
static long long relative_times(const unsigned long long *stamps, size_t stride, long long count,
                                unsigned long long ref, const int *seen, int want_seen, double *out)
{
    long long kept = 0;
    for (long long i = 0; i < count; i++) {
        unsigned long long t = stamps[(size_t)i * stride];
        if (t == 0 || (seen != NULL && seen[i] != want_seen))
            continue;
        out[kept++] = (double)(long long)(t - ref);
    }
    return kept;
}

static race_timeline_t race_timeline; /* from the first trial of run_race; cleared by each case */

static void set_race_stamps(int *slots, int *seen, int parents, unsigned long long *read_ns,
                            unsigned long long *store_ns)
{
    KIT_CHECK(cudaMemcpyToSymbol(kit_race_seen, &seen, sizeof seen));
    KIT_CHECK(cudaMemcpyToSymbol(kit_race_slots, &slots, sizeof slots));
    KIT_CHECK(cudaMemcpyToSymbol(kit_race_parents, &parents, sizeof parents));
    KIT_CHECK(cudaMemcpyToSymbol(kit_read_ns, &read_ns, sizeof read_ns));
    KIT_CHECK(cudaMemcpyToSymbol(kit_store_ns, &store_ns, sizeof store_ns));
}

static void record_race_timeline(const unsigned long long *d_read, const unsigned long long *d_store,
                                 const unsigned long long *d_bracket, const int *h_seen, int parents)
{
    unsigned long long *read = stamps_to_host(d_read, (size_t)parents);
    unsigned long long *store = stamps_to_host(d_store, (size_t)parents);
    unsigned long long *bracket = stamps_to_host(d_bracket, 2);
    double *times = (double *)kit_host_alloc(sizeof(double) * (size_t)parents);
    race_timeline.parents = parents;
    race_timeline.tree_done_ns = (long long)(bracket[1] - bracket[0]);
    long long kept = relative_times(read, 1, parents, bracket[0], h_seen, FIRST_VALUE, times);
    race_timeline.read_saw_first = summarize_times(times, kept);
    kept = relative_times(read, 1, parents, bracket[0], h_seen, SECOND_VALUE, times);
    race_timeline.read_saw_second = summarize_times(times, kept);
    kept = relative_times(store, 1, parents, bracket[0], NULL, 0, times);
    race_timeline.store = summarize_times(times, kept);
    free(times);
    free(read);
    free(store);
    free(bracket);
}

static race_counts_t run_race(int blocks, int trials)
{
    int parents = blocks * RACE_THREADS;
    int *slots, *seen;
    race_counts_t c = {0, 0, 0, 0};
    KIT_CHECK(cudaMalloc((void **)&slots, sizeof(int) * (size_t)parents));
    KIT_CHECK(cudaMalloc((void **)&seen, sizeof(int) * (size_t)parents));
    unsigned long long *read_ns = alloc_stamps((size_t)parents);
    unsigned long long *store_ns = alloc_stamps((size_t)parents);
    unsigned long long *bracket = alloc_stamps(2);
    for (int t = 0; t < trials; t++) {
        fill(slots, parents, 0);
        fill(seen, parents, POISON);
        if (t == 0) {
            /* Only the first trial is stamped; the stamps cost a few stores in kit kernels. The
             * stamp kernels are queued in the same stream as race_parent, with no synchronize in
             * between, so they bracket the parent grid's launch tree closely. */
            set_race_stamps(slots, seen, parents, read_ns, store_ns);
            kit_stamp_kernel<<<1, 1>>>(bracket);
            KIT_CHECK(cudaGetLastError());
        }
        race_parent<<<blocks, RACE_THREADS>>>(slots, seen);
        if (t == 0) {
            KIT_CHECK(cudaGetLastError());
            kit_stamp_kernel<<<1, 1>>>(bracket + 1);
        }
        KIT_CHECK_KERNEL();
        if (t == 0) {
            unsigned long long *none = NULL;
            KIT_CHECK(cudaMemcpyToSymbol(kit_read_ns, &none, sizeof none));
            KIT_CHECK(cudaMemcpyToSymbol(kit_store_ns, &none, sizeof none));
        }
        int *h_seen = copy_to_host(seen, parents);
        int *h_slots = copy_to_host(slots, parents);
        if (t == 0)
            record_race_timeline(read_ns, store_ns, bracket, h_seen, parents);
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
    KIT_CHECK(cudaFree(read_ns));
    KIT_CHECK(cudaFree(store_ns));
    KIT_CHECK(cudaFree(bracket));
    return c;
}

/* The kit's own racy parent, every step stamped: what the race looks like on this GPU. */
static probe_timeline_t run_probe(int blocks)
{
    probe_timeline_t p;
    int parents = blocks * RACE_THREADS;
    int *slots, *seen, *failed;
    KIT_CHECK(cudaMalloc((void **)&slots, sizeof(int) * (size_t)parents));
    KIT_CHECK(cudaMalloc((void **)&seen, sizeof(int) * (size_t)parents));
    KIT_CHECK(cudaMalloc((void **)&failed, sizeof(int)));
    KIT_CHECK(cudaMemset(failed, 0, sizeof(int)));
    fill(slots, parents, 0);
    fill(seen, parents, POISON);
    unsigned long long *stamps = alloc_stamps(4 * (size_t)parents);
    unsigned long long *bracket = alloc_stamps(2);
    kit_stamp_kernel<<<1, 1>>>(bracket);
    KIT_CHECK(cudaGetLastError());
    kit_probe_parent<<<blocks, RACE_THREADS>>>(slots, seen, stamps, failed);
    KIT_CHECK(cudaGetLastError());
    kit_stamp_kernel<<<1, 1>>>(bracket + 1);
    KIT_CHECK_KERNEL();
    unsigned long long *h_stamps = stamps_to_host(stamps, 4 * (size_t)parents);
    unsigned long long *h_bracket = stamps_to_host(bracket, 2);
    int *h_seen = copy_to_host(seen, parents);
    int h_failed = 0;
    KIT_CHECK(cudaMemcpy(&h_failed, failed, sizeof(int), cudaMemcpyDeviceToHost));
    double *times = (double *)kit_host_alloc(sizeof(double) * (size_t)parents);
    p.parents = parents;
    p.failed = h_failed;
    p.saw_second = 0;
    for (int i = 0; i < parents; i++)
        p.saw_second += h_seen[i] == SECOND_VALUE;
    p.tree_done_ns = (long long)(h_bracket[1] - h_bracket[0]);
    p.first_write = summarize_times(times, relative_times(h_stamps + 0, 4, parents, h_bracket[0], NULL, 0, times));
    p.launch_returned = summarize_times(times, relative_times(h_stamps + 1, 4, parents, h_bracket[0], NULL, 0, times));
    p.second_write = summarize_times(times, relative_times(h_stamps + 2, 4, parents, h_bracket[0], NULL, 0, times));
    p.child_read = summarize_times(times, relative_times(h_stamps + 3, 4, parents, h_bracket[0], NULL, 0, times));
    free(times);
    free(h_stamps);
    free(h_bracket);
    free(h_seen);
    KIT_CHECK(cudaFree(slots));
    KIT_CHECK(cudaFree(seen));
    KIT_CHECK(cudaFree(failed));
    KIT_CHECK(cudaFree(stamps));
    KIT_CHECK(cudaFree(bracket));
    return p;
}

static void json_times(kit_json_t *j, const char *key, time_summary_t s)
{
    kit_json_begin_object(j, key);
    kit_json_int(j, "count", s.count);
    kit_json_int(j, "min", s.min);
    kit_json_int(j, "p10", s.p10);
    kit_json_int(j, "median", s.median);
    kit_json_int(j, "p90", s.p90);
    kit_json_int(j, "max", s.max);
    kit_json_end_object(j);
}

static void print_times(const char *what, time_summary_t s)
{
    if (s.count == 0)
        printf("    %-34s none\n", what);
    else
        printf("    %-34s median %8.2f us (min %.2f, max %.2f) x%lld\n", what, s.median / 1000.0, s.min / 1000.0,
               s.max / 1000.0, s.count);
}

typedef struct {
    long long sum, weighted; /* sum of v[i], sum of i * v[i] */
    int bad, first_bad_index, first_bad_value;
    int past_end; /* data only: elements written in the guard after data[n - 1] */
} array_summary_t;

/* Sums for the grader (which computes the expected ones itself) and, for people, where the
 * first element differs from i + 1. */
static array_summary_t summarize(const int *v, int n)
{
    array_summary_t s = {0, 0, 0, -1, 0, 0};
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

/* How often each element was used: every element exactly once is right. */
typedef struct {
    int unused, used_more_than_once, first_unused, first_used_more_than_once;
    unsigned int out_of_range; /* uses of an element outside [0, n) */
    unsigned int in_producing_grid; /* uses in the grid that called produce(), before any child's result */
    unsigned int produce_calls, produce_calls_elsewhere;
} use_counts_t;

static use_counts_t summarize_uses(const unsigned int *counts, int n, unsigned int out_of_range)
{
    use_counts_t u = {0, 0, -1, -1, out_of_range, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        if (counts[i] == 0 && u.unused++ == 0)
            u.first_unused = i;
        if (counts[i] > 1 && u.used_more_than_once++ == 0)
            u.first_used_more_than_once = i;
    }
    return u;
}

static void run_consume(int n, int threads, array_summary_t *data_out, array_summary_t *used_out,
                        use_counts_t *uses_out)
{
    int *data, *used;
    unsigned int *use_count, zero = 0;
    KIT_CHECK(cudaMalloc((void **)&data, sizeof(int) * ((size_t)n + DATA_GUARD)));
    KIT_CHECK(cudaMalloc((void **)&used, sizeof(int) * (size_t)n));
    KIT_CHECK(cudaMalloc((void **)&use_count, sizeof(unsigned int) * (size_t)n));
    KIT_CHECK(cudaMemset(use_count, 0, sizeof(unsigned int) * (size_t)n));
    fill(data, n + DATA_GUARD, POISON);
    fill(used, n, POISON);
    KIT_CHECK(cudaMemcpyToSymbol(kit_used, &used, sizeof used));
    KIT_CHECK(cudaMemcpyToSymbol(kit_use_count, &use_count, sizeof use_count));
    KIT_CHECK(cudaMemcpyToSymbol(kit_used_n, &n, sizeof n));
    KIT_CHECK(cudaMemcpyToSymbol(kit_uses_out_of_range, &zero, sizeof zero));
    unsigned long long no_grid = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_producer_grid, &no_grid, sizeof no_grid));
    KIT_CHECK(cudaMemcpyToSymbol(kit_uses_in_producing_grid, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_produce_calls, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_produce_calls_elsewhere, &zero, sizeof zero));
    int blocks = (n + threads - 1) / threads;
    consume_parent<<<blocks, threads>>>(data, n);
    KIT_CHECK_KERNEL();
    int *h_data = copy_to_host(data, n + DATA_GUARD);
    int *h_used = copy_to_host(used, n);
    *data_out = summarize(h_data, n);
    for (int k = n; k < n + DATA_GUARD; k++)
        data_out->past_end += h_data[k] != POISON;
    *used_out = summarize(h_used, n);
    unsigned int *h_counts = (unsigned int *)kit_host_alloc(sizeof(unsigned int) * (size_t)n);
    unsigned int out_of_range = 0;
    KIT_CHECK(cudaMemcpy(h_counts, use_count, sizeof(unsigned int) * (size_t)n, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpyFromSymbol(&out_of_range, kit_uses_out_of_range, sizeof out_of_range));
    *uses_out = summarize_uses(h_counts, n, out_of_range);
    KIT_CHECK(cudaMemcpyFromSymbol(&uses_out->in_producing_grid, kit_uses_in_producing_grid, sizeof(unsigned int)));
    KIT_CHECK(cudaMemcpyFromSymbol(&uses_out->produce_calls, kit_produce_calls, sizeof(unsigned int)));
    KIT_CHECK(cudaMemcpyFromSymbol(&uses_out->produce_calls_elsewhere, kit_produce_calls_elsewhere,
                                   sizeof(unsigned int)));
    free(h_counts);
    free(h_data);
    free(h_used);
    KIT_CHECK(cudaFree(data));
    KIT_CHECK(cudaFree(used));
    KIT_CHECK(cudaFree(use_count));
}

static void json_summary(kit_json_t *j, const char *key, array_summary_t s)
{
    kit_json_begin_object(j, key);
    kit_json_int(j, "sum", s.sum);
    kit_json_int(j, "weighted", s.weighted);
    kit_json_int(j, "bad", s.bad);
    kit_json_int(j, "first_bad_index", s.first_bad_index);
    kit_json_int(j, "first_bad_value", s.first_bad_value);
    kit_json_int(j, "past_end", s.past_end);
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

/* The kit's device variables and race_timeline as a fresh process has them (zero, NULL), so that a
 * case never sees what an earlier case of the same process left there: the pointers below would
 * name memory that case has freed. Each is set again where the case uses it. */
static void reset_kit_state(void)
{
    int *no_ints = NULL;
    unsigned int *no_counts = NULL;
    int zero = 0;
    unsigned int zero_u = 0;
    memset(&race_timeline, 0, sizeof race_timeline);
    set_race_stamps(NULL, NULL, 0, NULL, NULL);
    KIT_CHECK(cudaMemcpyToSymbol(kit_used, &no_ints, sizeof no_ints));
    KIT_CHECK(cudaMemcpyToSymbol(kit_use_count, &no_counts, sizeof no_counts));
    KIT_CHECK(cudaMemcpyToSymbol(kit_used_n, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(kit_uses_out_of_range, &zero_u, sizeof zero_u));
}

static const kit_option_t options[] = {
    {"--blocks", "Part A's blocks of race_parent, 128 parents each", 16, 1, 128, NULL},
    {"--trials", "times Part A is run", 2, 1, 100, NULL},
    {"--n", "Part B's elements of data", 1000, 1, MAX_N, NULL},
    {"--threads", "Part B's threads per block of consume_parent", 128, 1, 1024, NULL},
    {"--observe-delay-us", "microseconds every child of Part A waits before it reads its slot", 0, 0,
     MAX_OBSERVE_DELAY_US, NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): Parts A and B, the probe, the document. */
static int run_case(int argc, char **argv)
{
    int blocks = (int)kit_option_long(argc, argv, options, "--blocks");
    int trials = (int)kit_option_long(argc, argv, options, "--trials");
    int n = (int)kit_option_long(argc, argv, options, "--n");
    int threads = (int)kit_option_long(argc, argv, options, "--threads");
    long observe_delay_us = kit_option_long(argc, argv, options, "--observe-delay-us");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    /* Every parent of Part A makes two launches, every block of Part B two more. The kit sizes the
     * pending-launch pool so that all of them fit (Lab 03 is about this limit), before any of the
     * case's kernels runs (kit_case_limit). */
    int part_b_blocks = (n + threads - 1) / threads;
    size_t pending = 2 * (size_t)(blocks * RACE_THREADS > part_b_blocks ? blocks * RACE_THREADS : part_b_blocks) + 256;
    if (pending < 2048)
        pending = 2048;
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, pending))
        return KIT_CASE_DEFERRED;

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);

    reset_kit_state();
    unsigned long long observe_delay_ns = (unsigned long long)observe_delay_us * 1000ULL;
    KIT_CHECK(cudaMemcpyToSymbol(kit_observe_delay_ns, &observe_delay_ns, sizeof observe_delay_ns));
    child_grids_t no_grids = {0, 0, 0, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_child_grids, &no_grids, sizeof no_grids));
    unsigned int observed_elsewhere = 0;
    KIT_CHECK(cudaMemcpyToSymbol(kit_observed_elsewhere, &observed_elsewhere, sizeof observed_elsewhere));
    kit_launch_log_reset();
    race_counts_t race = run_race(blocks, trials);
    KIT_CHECK(cudaMemcpyFromSymbol(&observed_elsewhere, kit_observed_elsewhere, sizeof observed_elsewhere));
    long long observations = (long long)blocks * RACE_THREADS * trials;
    printf("Part A: %lld parents (%d trials of %d blocks x %d)", observations, trials, blocks, RACE_THREADS);
    if (observe_delay_us > 0)
        printf("; every child waits %ld us before it reads", observe_delay_us);
    printf("\n");
    printf("  the child saw the value written before the launch (%d): %lld times\n", FIRST_VALUE, race.saw_first);
    printf("  the child saw the value written after the launch  (%d): %lld times\n", SECOND_VALUE, race.saw_second);
    if (race.saw_other)
        printf("  the child saw something else: %lld times\n", race.saw_other);
    printf("  slots holding %d at the end: %lld\n", SECOND_VALUE, race.ended_second);

    array_summary_t data_summary, used_summary;
    use_counts_t uses;
    run_consume(n, threads, &data_summary, &used_summary, &uses);
    printf("Part B: n = %d, %d blocks of %d threads\n", n, part_b_blocks, threads);
    print_summary("data after the children (data[i] == i + 1)", data_summary, n);
    if (data_summary.past_end)
        printf("  WRONG: %d of the %d elements after data[n - 1] were written\n", data_summary.past_end, DATA_GUARD);
    print_summary("values used (use_result(i, v) with v == i + 1)", used_summary, n);
    if (uses.in_producing_grid)
        printf("  WRONG: %u uses in the grid that produced the data (consume_parent's), which cannot see a child's "
               "result\n", uses.in_producing_grid);
    if (uses.unused || uses.used_more_than_once || uses.out_of_range)
        printf("  uses: %d elements never used (first: %d), %d used more than once (first: %d), %u uses of "
               "elements outside [0, n)\n", uses.unused, uses.first_unused, uses.used_more_than_once,
               uses.first_used_more_than_once, uses.out_of_range);

    kit_launch_log_t launches = kit_launch_log_read();
    child_grids_t grids;
    KIT_CHECK(cudaMemcpyFromSymbol(&grids, kit_child_grids, sizeof grids));
    kit_print_launch_log("", launches);
    printf("child grids that ran: %u observe, %u store, %u add_one, %u use_result\n", grids.observe, grids.store,
           grids.add_one, grids.use_result);

    /* After the launch log is read: the probe's launches are the kit's, not the submission's. */
    probe_timeline_t probe = run_probe(blocks);
    printf("timeline (%%globaltimer, from a kit kernel just before the parent grid):\n");
    printf("  Part A, first trial:\n");
    print_times("child read the slot, saw 1:", race_timeline.read_saw_first);
    print_times("child read the slot, saw 2:", race_timeline.read_saw_second);
    print_times("tail-launched store of 2:", race_timeline.store);
    printf("    %-34s %11.2f us\n", "whole launch tree done by:", race_timeline.tree_done_ns / 1000.0);
    printf("  the kit's probe (write 1, launch, write 2; %lld of %lld children saw 2, %lld launches failed):\n",
           probe.saw_second, probe.parents, probe.failed);
    print_times("parent wrote 1:", probe.first_write);
    print_times("launch statement returned:", probe.launch_returned);
    print_times("parent wrote 2:", probe.second_write);
    print_times("child read the slot:", probe.child_read);
    printf("    %-34s %11.2f us\n", "whole launch tree done by:", probe.tree_done_ns / 1000.0);

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
        kit_json_int(&j, "observe_delay_us", observe_delay_us);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "race");
        kit_json_int(&j, "parents", observations);
        kit_json_int(&j, "saw_first", race.saw_first);
        kit_json_int(&j, "saw_second", race.saw_second);
        kit_json_int(&j, "saw_other", race.saw_other);
        kit_json_int(&j, "ended_second", race.ended_second);
        kit_json_uint(&j, "observed_elsewhere", observed_elsewhere);
        kit_json_end_object(&j);
        json_summary(&j, "data", data_summary);
        json_summary(&j, "used", used_summary);
        kit_json_begin_object(&j, "uses");
        kit_json_int(&j, "unused", uses.unused);
        kit_json_int(&j, "first_unused", uses.first_unused);
        kit_json_int(&j, "used_more_than_once", uses.used_more_than_once);
        kit_json_int(&j, "first_used_more_than_once", uses.first_used_more_than_once);
        kit_json_uint(&j, "out_of_range", uses.out_of_range);
        kit_json_uint(&j, "in_producing_grid", uses.in_producing_grid);
        kit_json_uint(&j, "produce_calls", uses.produce_calls);
        kit_json_uint(&j, "produce_calls_elsewhere", uses.produce_calls_elsewhere);
        kit_json_end_object(&j);
        kit_json_launch_log(&j, "launch_log", launches);
        kit_json_begin_object(&j, "child_grids");
        kit_json_uint(&j, "observe", grids.observe);
        kit_json_uint(&j, "store", grids.store);
        kit_json_uint(&j, "add_one", grids.add_one);
        kit_json_uint(&j, "use_result", grids.use_result);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "timeline");
        kit_json_string(&j, "clock", "globaltimer_ns");
        kit_json_begin_object(&j, "submission");
        kit_json_int(&j, "parents", race_timeline.parents);
        kit_json_int(&j, "tree_done", race_timeline.tree_done_ns);
        json_times(&j, "read_saw_first", race_timeline.read_saw_first);
        json_times(&j, "read_saw_second", race_timeline.read_saw_second);
        json_times(&j, "tail_store", race_timeline.store);
        kit_json_end_object(&j);
        kit_json_begin_object(&j, "probe");
        kit_json_int(&j, "parents", probe.parents);
        kit_json_int(&j, "failed_launches", probe.failed);
        kit_json_int(&j, "saw_second", probe.saw_second);
        kit_json_int(&j, "tree_done", probe.tree_done_ns);
        json_times(&j, "first_write", probe.first_write);
        json_times(&j, "launch_returned", probe.launch_returned);
        json_times(&j, "second_write", probe.second_write);
        json_times(&j, "child_read", probe.child_read);
        kit_json_end_object(&j);
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
