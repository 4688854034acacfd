/* launch_costs.cu - what dynamic parallelism costs on the GPU present (`make costs`).
 *
 *   ./launch_costs [--name value ...] [--json costs.json]      (options[] below; ./launch_costs --help)
 *   ./launch_costs --slots 1 [--json slot-memory.json]   only what a pending-launch slot costs in memory
 *
 * Last, after the figures below, it measures what the pending-launch pool costs in device memory
 * (measure_slot_memory): the memory in use at three limits, one launch under each.
 * Each figure is measured --repeats times after one untimed warm-up (the first run pays for loading
 * code and warming caches); the result document keeps every run with the median, minimum and
 * maximum. The table quotes the median, which resists the odd slow run; min-max shows the spread.
 * --quick 1 uses smaller sizes: 100 host launches, 20 round trips, 100 device launches and chain
 * grids (instead of 1000, 100, 1000, 1000), one malloc block per SM instead of four.
 *
 * What each figure is, and why it is measured that way:
 *
 * host_launch_us        The host launches N empty <<<1,1>>> kernels back to back into one stream;
 *                       CUDA events around them, / N. This is launch THROUGHPUT (whichever is slower:
 *                       the host issuing, or the GPU starting and finishing each kernel), not the
 *                       latency of one launch.
 * host_round_trip_us    One empty launch, then cudaStreamSynchronize, N times; host wall clock / N.
 *                       The LATENCY a host loop pays when each step waits for the GPU.
 * device_launch_*_us    One device thread issues L child launches <<<1,1>>> back to back, into the
 *                       NULL stream or cudaStreamFireAndForget; the global timer in that thread
 *                       before the first launch and after the last launch call returned, / L. This
 *                       is the ISSUE cost the launching thread pays (the call and its check:
 *                       cudaGetLastError and one counter update in the kit's launch log), not the
 *                       time until a child has run: the children run later, unwaited for.
 * nested_chain_step_us  D grids <<<1,1>>>, each launching the next as its child (NULL stream); host
 *                       events around the whole chain, / D. Launch AND completion of a dependent
 *                       step: what a recursion pays per level. Every grid stays pending until its
 *                       child completes, so the chain needs about D pending launches at once.
 * tail_chain_step_us    The same chain, each grid launching the next into cudaStreamTailLaunch: the
 *                       next grid starts once its parent has finished, so nothing piles up.
 * siblings_*_us         One block of 32 threads, each launching one child of one thread that spins
 *                       50 us; host events around the whole parent grid (its children included).
 *                       The NULL stream is shared by the whole block, so its children run one after
 *                       another (about 32 x 50 us); a stream per thread or fire-and-forget lets them
 *                       run at once (about 50 us plus launch costs). Each child stamps the global
 *                       timer; overlapping_pairs counts the pairs that ran at the same time (last run).
 *                       The event time also holds the parent grid's own launch and completion, so
 *                       children_span_us (first child start to last child end, global timer, median
 *                       over runs) is reported beside it: quote the one that answers your question.
 * malloc_per_*_cycles   Device malloc, clock64() around the call, in SM clock cycles: every thread
 *                       of 4 x SMs blocks of 256 asks for 64 bytes at once (contention on the heap),
 *                       against thread 0 of each block asking for the block's 256 x 64 bytes in one
 *                       call. Median over the calls of a run; kernel_ms is the whole allocating
 *                       kernel on host events. The memory is freed by a second, untimed kernel
 *                       (device heap memory cannot be freed by the host).
 *
 * Trust: every device launch is checked in the launching thread with cudaGetLastError
 * (KIT_CHECK_LAUNCH), every other device runtime call with KIT_CHECK_DEVICE, and every child grid
 * counts itself. Where a figure comes from host events around device-launched work (chains,
 * siblings), the work's own span on the global timer must fit inside the events' span, so a stop
 * event that fired early cannot pass. A failed launch, a grid that did not run, a span that does not
 * fit or a NULL from malloc makes the run invalid: the program says what went wrong and exits 1, and
 * prints and writes no figure.
 * A program that launches from the device must link the device runtime (-rdc=true); the CUDA
 * programming guide warns that this can slow every kernel of the program, so the host figures here
 * are those of a CDP program. Device limits are read before the program changes them ("defaults")
 * and reported as set ("limits").
 *
 * Exit status: 0 measured; 1 invalid run; 2 bad option; 3 CUDA error; 77 (KIT_EXIT_NOT_RUN) no GPU
 * or no working dynamic parallelism.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_device.h"
#include "kit_result.h"
#include "kit_timing.h"

#define DEFAULT_REPEATS 7
#define MAX_REPEATS 100
#define EXIT_INVALID 1
#define SIBLINGS 32                    /* threads of the sibling parent block, one child each */
#define CHILD_SPIN_NS 50000LL          /* each sibling child spins 50 us */
#define MALLOC_THREADS 256             /* threads per block of the malloc grids */
#define MALLOC_BLOCKS_PER_SM 4
#define MALLOC_BYTES 64                /* per thread; a block's call asks for MALLOC_THREADS times that */
#define PENDING_MARGIN 64              /* pending launches on top of the most one measurement needs */
#define HEAP_SPARE ((size_t)64 << 20)  /* device heap on top of what the malloc runs need */
#define HEAP_NEED_FACTOR 4             /* room for the allocator's own bookkeeping and fragmentation */
#define MAX_PARAMS 4

/* Which stream or version a measurement uses (cost_t.variant). */
#define STREAM_NULL 0
#define STREAM_FIRE_AND_FORGET 1
#define STREAM_PER_THREAD 2
#define CHAIN_NESTED 0
#define CHAIN_TAIL 1
#define MALLOC_PER_THREAD 0
#define MALLOC_PER_BLOCK 1

/* ---------------- device code ---------------- */

__device__ unsigned int grids_ran;            /* every child grid adds one: did each launch run? */
__device__ unsigned long long issue_ns;       /* the issuing thread's own time for its launches */
__device__ unsigned long long chain_start_ns, chain_end_ns; /* first grid's start, last grid's end */
__device__ int probe_flag;

__global__ void empty_kernel(void) {}

/* A child that does nothing but count that it ran (one atomic add). */
__global__ void counted_child(void) { atomicAdd(&grids_ran, 1u); }

__global__ void probe_parent(void)
{
    counted_child<<<1, 1>>>();
    if (KIT_CHECK_LAUNCH() == cudaSuccess)
        probe_flag = 1;
}

/* One thread issues `launches` child launches back to back and times only the issuing. Two loops,
 * not a stream held in a variable, so that each launch names its stream as a literal. */
__global__ void issue_parent(int launches, int stream)
{
    unsigned long long start = kit_globaltimer_ns();
    if (stream == STREAM_FIRE_AND_FORGET) {
        for (int i = 0; i < launches; i++) {
            counted_child<<<1, 1, 0, cudaStreamFireAndForget>>>();
            KIT_CHECK_LAUNCH();
        }
    } else {
        for (int i = 0; i < launches; i++) {
            counted_child<<<1, 1>>>();
            KIT_CHECK_LAUNCH();
        }
    }
    issue_ns = kit_globaltimer_ns() - start;
}

/* A chain of chain_grids grids: this one and grids_left - 1 after it. The nested chain keeps every
 * grid pending until its child completes; the tail chain starts each grid after its parent has
 * finished. The first and the last grid stamp the global timer, so that the host can check that its
 * events spanned the whole chain. */
__global__ void nested_step(int grids_left, int chain_grids)
{
    if (grids_left == chain_grids)
        chain_start_ns = kit_globaltimer_ns();
    atomicAdd(&grids_ran, 1u);
    if (grids_left > 1) {
        nested_step<<<1, 1>>>(grids_left - 1, chain_grids);
        KIT_CHECK_LAUNCH();
    } else {
        chain_end_ns = kit_globaltimer_ns();
    }
}

__global__ void tail_step(int grids_left, int chain_grids)
{
    if (grids_left == chain_grids)
        chain_start_ns = kit_globaltimer_ns();
    atomicAdd(&grids_ran, 1u);
    if (grids_left > 1) {
        tail_step<<<1, 1, 0, cudaStreamTailLaunch>>>(grids_left - 1, chain_grids);
        KIT_CHECK_LAUNCH();
    } else {
        chain_end_ns = kit_globaltimer_ns();
    }
}

/* Spins spin_ns on the global timer and stamps when it started and stopped. */
__global__ void spin_child(int child, long long spin_ns, unsigned long long *starts, unsigned long long *ends)
{
    unsigned long long start = kit_globaltimer_ns();
    unsigned long long end = kit_spin_ns(start, spin_ns);
    starts[child] = start;
    ends[child] = end;
    atomicAdd(&grids_ran, 1u);
}

/* One block; each thread launches one spinning child, into the stream the version names. */
__global__ void siblings_parent(int stream, long long spin_ns, unsigned long long *starts, unsigned long long *ends)
{
    int child = threadIdx.x;
    if (stream == STREAM_NULL) {
        spin_child<<<1, 1>>>(child, spin_ns, starts, ends);
        KIT_CHECK_LAUNCH();
    } else if (stream == STREAM_FIRE_AND_FORGET) {
        spin_child<<<1, 1, 0, cudaStreamFireAndForget>>>(child, spin_ns, starts, ends);
        KIT_CHECK_LAUNCH();
    } else {
        cudaStream_t own;
        if (KIT_CHECK_DEVICE(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking)) == cudaSuccess) {
            spin_child<<<1, 1, 0, own>>>(child, spin_ns, starts, ends);
            KIT_CHECK_LAUNCH();
            /* The child still runs: a stream destroyed with work in it is released after the work. */
            KIT_CHECK_DEVICE(cudaStreamDestroy(own));
        }
    }
}

/* Every thread allocates; clock64() right around the call, so only the call is counted. */
__global__ void malloc_per_thread(size_t bytes, void **blocks, long long *cycles, unsigned int *null_returns)
{
    unsigned int call = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    void *p = malloc(bytes);
    long long stop = clock64();
    blocks[call] = p;
    cycles[call] = stop - start;
    if (p == NULL)
        atomicAdd(null_returns, 1u);
}

/* Thread 0 of each block allocates for the whole block; the other threads have nothing to do. */
__global__ void malloc_per_block(size_t bytes, void **blocks, long long *cycles, unsigned int *null_returns)
{
    if (threadIdx.x != 0)
        return;
    unsigned int call = blockIdx.x;
    long long start = clock64();
    void *p = malloc(bytes);
    long long stop = clock64();
    blocks[call] = p;
    cycles[call] = stop - start;
    if (p == NULL)
        atomicAdd(null_returns, 1u);
}

__global__ void free_blocks(void **blocks, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (blocks[i] != NULL)
            free(blocks[i]);
        blocks[i] = NULL;
    }
}

/* ---------------- host side ---------------- */

/* One figure: what it is, every run, and their summary. */
typedef struct {
    const char *key;
    const char *unit;
    char what[320];
    int variant;
    const char *param_names[MAX_PARAMS];
    long long param_values[MAX_PARAMS];
    int n_params;
    double runs[MAX_REPEATS];
    int n_runs;
    double median, min, max;
    int has_overlaps;
    long long overlapping_pairs; /* siblings: from the last run */
    double span_runs[MAX_REPEATS];
    double children_span_us;     /* siblings: first child start to last child end, median over runs */
    int has_malloc;
    double kernel_ms_runs[MAX_REPEATS];
    double kernel_ms;            /* malloc: median over runs */
    unsigned long long null_returns; /* malloc: warm-up and every run together */
} cost_t;

/* Sizes, and what the runs share. */
typedef struct {
    int repeats, quick;
    int host_launches, round_trips, device_launches, chain_grids, malloc_blocks;
    cudaEvent_t start, stop;
    unsigned long long *d_starts, *d_ends;
    void **d_blocks;
    long long *d_cycles;
    unsigned int *d_nulls;
    long long *h_cycles;
    double *h_sorted;
} bench_t;

/* One run of a measurement: returns its figure. run_index is -1 for the warm-up. */
typedef double (*run_fn)(bench_t *b, cost_t *c, int run_index);

static long long host_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add_param(cost_t *c, const char *name, long long value)
{
    c->param_names[c->n_params] = name;
    c->param_values[c->n_params] = value;
    c->n_params++;
}

static void start_timer(bench_t *b)
{
    KIT_CHECK(cudaDeviceSynchronize()); /* an idle GPU: nothing earlier inside the timed region */
    KIT_CHECK(cudaEventRecord(b->start, 0));
}

/* Milliseconds since start_timer, on the GPU's clock. The stop event waits for the grids launched
 * before it, and a grid is complete only when every grid it launched is complete. */
static double stop_timer_ms(bench_t *b)
{
    float ms = 0.0f;
    KIT_CHECK(cudaEventRecord(b->stop, 0));
    KIT_CHECK(cudaEventSynchronize(b->stop));
    KIT_CHECK(cudaEventElapsedTime(&ms, b->start, b->stop));
    return ms;
}

/* Before a run that launches from the device: zero the launch log and the count of grids that ran. */
static void device_run_begin(void)
{
    unsigned int zero = 0;
    kit_launch_log_reset();
    KIT_CHECK(cudaMemcpyToSymbol(grids_ran, &zero, sizeof zero));
}

/* After it: every launch and runtime call checked and successful, every grid ran; else the run is
 * invalid and the program stops before any figure is printed. */
static void device_run_check(const char *key, unsigned int launches, unsigned int calls, unsigned int grids)
{
    unsigned int ran = 0;
    KIT_CHECK(cudaDeviceSynchronize());
    kit_launch_log_t log = kit_launch_log_read();
    KIT_CHECK(cudaMemcpyFromSymbol(&ran, grids_ran, sizeof ran));
    if (log.failed == 0 && log.calls_failed == 0 && log.checked == launches && log.calls_checked == calls &&
        ran == grids)
        return;
    fprintf(stderr, "launch_costs: %s: INVALID run, no figure reported:\n", key);
    fprintf(stderr, "  device launches checked %u of %u, failed %u", log.checked, launches, log.failed);
    if (log.failed)
        fprintf(stderr, " (first: %s at line %d)", cudaGetErrorName((cudaError_t)log.first_error),
                log.first_error_line);
    fprintf(stderr, "\n  other device runtime calls checked %u of %u, failed %u", log.calls_checked, calls,
            log.calls_failed);
    if (log.calls_failed)
        fprintf(stderr, " (first: %s at line %d)", cudaGetErrorName((cudaError_t)log.first_call_error),
                log.first_call_error_line);
    fprintf(stderr, "\n  grids that ran: %u of %u\n", ran, grids);
    exit(EXIT_INVALID);
}

/* The device's own span of the work (global timer) must fit inside the host events' span: if the
 * stop event fired before the work was done, the figure would be too small. The slack covers the two
 * clocks' resolutions (about a microsecond each). */
#define SPAN_SLACK_US 5.0
static void require_events_cover(const char *key, double device_span_us, double event_us)
{
    if (device_span_us <= event_us + SPAN_SLACK_US)
        return;
    fprintf(stderr, "launch_costs: %s: INVALID run, no figure reported: the device work took %.1f us on the "
                    "global timer but the CUDA events measured %.1f us\n", key, device_span_us, event_us);
    exit(EXIT_INVALID);
}

/* ---- one run of each measurement ---- */

static double run_host_launches(bench_t *b, cost_t *c, int run_index)
{
    (void)c;
    (void)run_index;
    start_timer(b);
    for (int i = 0; i < b->host_launches; i++)
        empty_kernel<<<1, 1>>>();
    KIT_CHECK(cudaGetLastError()); /* a launch error stays until read, so one check sees any */
    double ms = stop_timer_ms(b);
    KIT_CHECK(cudaDeviceSynchronize());
    return ms * 1000.0 / b->host_launches;
}

static double run_host_round_trips(bench_t *b, cost_t *c, int run_index)
{
    (void)c;
    (void)run_index;
    KIT_CHECK(cudaDeviceSynchronize());
    long long start = host_now_ns();
    for (int i = 0; i < b->round_trips; i++) {
        empty_kernel<<<1, 1>>>();
        KIT_CHECK(cudaStreamSynchronize(0));
    }
    long long stop = host_now_ns();
    KIT_CHECK(cudaGetLastError());
    return (double)(stop - start) / 1000.0 / b->round_trips;
}

static double run_device_launches(bench_t *b, cost_t *c, int run_index)
{
    (void)run_index;
    unsigned long long ns = 0;
    device_run_begin();
    issue_parent<<<1, 1>>>(b->device_launches, c->variant);
    KIT_CHECK(cudaGetLastError());
    device_run_check(c->key, (unsigned int)b->device_launches, 0, (unsigned int)b->device_launches);
    KIT_CHECK(cudaMemcpyFromSymbol(&ns, issue_ns, sizeof ns));
    return (double)ns / 1000.0 / b->device_launches;
}

static double run_chain(bench_t *b, cost_t *c, int run_index)
{
    (void)run_index;
    unsigned long long start_ns = 0, end_ns = 0;
    KIT_CHECK(cudaMemcpyToSymbol(chain_start_ns, &start_ns, sizeof start_ns));
    KIT_CHECK(cudaMemcpyToSymbol(chain_end_ns, &end_ns, sizeof end_ns));
    device_run_begin();
    start_timer(b);
    if (c->variant == CHAIN_TAIL)
        tail_step<<<1, 1>>>(b->chain_grids, b->chain_grids);
    else
        nested_step<<<1, 1>>>(b->chain_grids, b->chain_grids);
    KIT_CHECK(cudaGetLastError());
    double ms = stop_timer_ms(b);
    device_run_check(c->key, (unsigned int)b->chain_grids - 1, 0, (unsigned int)b->chain_grids);
    KIT_CHECK(cudaMemcpyFromSymbol(&start_ns, chain_start_ns, sizeof start_ns));
    KIT_CHECK(cudaMemcpyFromSymbol(&end_ns, chain_end_ns, sizeof end_ns));
    require_events_cover(c->key, (double)(end_ns - start_ns) / 1000.0, ms * 1000.0);
    return ms * 1000.0 / b->chain_grids;
}

/* Pairs (i < j) of children whose [start, end) intervals intersect. */
static long long count_overlapping_pairs(const unsigned long long *starts, const unsigned long long *ends, int n)
{
    long long pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (starts[i] < ends[j] && starts[j] < ends[i])
                pairs++;
    return pairs;
}

static double run_siblings(bench_t *b, cost_t *c, int run_index)
{
    (void)run_index;
    unsigned long long starts[SIBLINGS], ends[SIBLINGS];
    KIT_CHECK(cudaMemset(b->d_starts, 0, sizeof starts));
    KIT_CHECK(cudaMemset(b->d_ends, 0, sizeof ends));
    device_run_begin();
    start_timer(b);
    siblings_parent<<<1, SIBLINGS>>>(c->variant, CHILD_SPIN_NS, b->d_starts, b->d_ends);
    KIT_CHECK(cudaGetLastError());
    double ms = stop_timer_ms(b);
    /* Per thread: a stream created and destroyed, both checked. */
    unsigned int calls = c->variant == STREAM_PER_THREAD ? 2 * SIBLINGS : 0;
    device_run_check(c->key, SIBLINGS, calls, SIBLINGS);
    KIT_CHECK(cudaMemcpy(starts, b->d_starts, sizeof starts, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(ends, b->d_ends, sizeof ends, cudaMemcpyDeviceToHost));
    unsigned long long first_start = starts[0], last_end = ends[0];
    for (int i = 1; i < SIBLINGS; i++) {
        if (starts[i] < first_start)
            first_start = starts[i];
        if (ends[i] > last_end)
            last_end = ends[i];
    }
    double span_us = (double)(last_end - first_start) / 1000.0;
    require_events_cover(c->key, span_us, ms * 1000.0);
    if (run_index >= 0)
        c->span_runs[run_index] = span_us;
    c->overlapping_pairs = count_overlapping_pairs(starts, ends, SIBLINGS); /* the last run's stays */
    return ms * 1000.0;
}

static double run_malloc(bench_t *b, cost_t *c, int run_index)
{
    int per_block = c->variant == MALLOC_PER_BLOCK;
    unsigned int calls = per_block ? (unsigned int)b->malloc_blocks : (unsigned int)b->malloc_blocks * MALLOC_THREADS;
    size_t bytes = per_block ? (size_t)MALLOC_THREADS * MALLOC_BYTES : (size_t)MALLOC_BYTES;
    unsigned int nulls = 0;
    KIT_CHECK(cudaMemset(b->d_nulls, 0, sizeof nulls));
    KIT_CHECK(cudaMemset(b->d_blocks, 0, sizeof(void *) * calls));
    start_timer(b);
    if (per_block)
        malloc_per_block<<<b->malloc_blocks, MALLOC_THREADS>>>(bytes, b->d_blocks, b->d_cycles, b->d_nulls);
    else
        malloc_per_thread<<<b->malloc_blocks, MALLOC_THREADS>>>(bytes, b->d_blocks, b->d_cycles, b->d_nulls);
    KIT_CHECK(cudaGetLastError());
    double ms = stop_timer_ms(b);
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpy(&nulls, b->d_nulls, sizeof nulls, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(b->h_cycles, b->d_cycles, sizeof(long long) * calls, cudaMemcpyDeviceToHost));
    /* Device heap memory: only device code can free it. */
    free_blocks<<<b->malloc_blocks, MALLOC_THREADS>>>(b->d_blocks, calls);
    KIT_CHECK_KERNEL();
    c->null_returns += nulls;
    if (nulls != 0) {
        fprintf(stderr, "launch_costs: %s: INVALID run, no figure reported: %u of %u malloc calls returned NULL "
                        "(device heap too small)\n", c->key, nulls, calls);
        exit(EXIT_INVALID);
    }
    for (unsigned int i = 0; i < calls; i++)
        b->h_sorted[i] = (double)b->h_cycles[i];
    if (run_index >= 0)
        c->kernel_ms_runs[run_index] = ms;
    return kit_median(b->h_sorted, calls);
}

/* One untimed warm-up, then the runs; then the median, minimum and maximum. */
static void measure(bench_t *b, cost_t *c, run_fn run)
{
    double sorted[MAX_REPEATS];
    printf("  %s ...\n", c->key);
    fflush(stdout);
    run(b, c, -1);
    for (int i = 0; i < b->repeats; i++)
        c->runs[i] = run(b, c, i);
    c->n_runs = b->repeats;
    memcpy(sorted, c->runs, sizeof(double) * (size_t)c->n_runs);
    c->median = kit_median(sorted, c->n_runs);
    c->min = sorted[0];
    c->max = sorted[c->n_runs - 1];
    if (c->has_overlaps) {
        memcpy(sorted, c->span_runs, sizeof(double) * (size_t)c->n_runs);
        c->children_span_us = kit_median(sorted, c->n_runs);
    }
    if (c->has_malloc) {
        memcpy(sorted, c->kernel_ms_runs, sizeof(double) * (size_t)c->n_runs);
        c->kernel_ms = kit_median(sorted, c->n_runs);
    }
}

/* ---- reporting ---- */

typedef struct {
    size_t pending_launch_count, malloc_heap_bytes, stack_bytes, printf_fifo_bytes;
} limits_t;

static void json_cost(kit_json_t *j, const cost_t *c)
{
    kit_json_begin_object(j, c->key);
    kit_json_string(j, "what", c->what);
    kit_json_string(j, "unit", c->unit);
    kit_json_double(j, "median", c->median);
    kit_json_double(j, "min", c->min);
    kit_json_double(j, "max", c->max);
    kit_json_begin_array(j, "runs");
    for (int i = 0; i < c->n_runs; i++)
        kit_json_double(j, NULL, c->runs[i]);
    kit_json_end_array(j);
    kit_json_begin_object(j, "params");
    for (int i = 0; i < c->n_params; i++)
        kit_json_int(j, c->param_names[i], c->param_values[i]);
    kit_json_end_object(j);
    if (c->has_overlaps) {
        kit_json_int(j, "overlapping_pairs", c->overlapping_pairs);
        kit_json_double(j, "children_span_us", c->children_span_us);
    }
    if (c->has_malloc) {
        kit_json_double(j, "kernel_ms", c->kernel_ms);
        kit_json_uint(j, "null_returns", c->null_returns);
    }
    kit_json_end_object(j);
}

/* What the pending-launch pool costs in device memory: the memory in use (cudaMemGetInfo) after the
 * limit is set to each of SLOT_LIMITS in turn, growing, and one device launch has run under it (the
 * runtime sizes the pool for the limit in force when a kernel that launches runs). A limit the device
 * refuses ends the list there, its error kept. */
#define N_SLOT_LIMITS 3
static const size_t SLOT_LIMITS[N_SLOT_LIMITS] = {2048, 69904, 4473924}; /* the default; Lab 07's trees */

typedef struct {
    int measured;                       /* limits measured, in order */
    size_t used_bytes[N_SLOT_LIMITS];
    cudaError_t error;                  /* the refusal that ended the list, or cudaSuccess */
} slot_memory_t;

static slot_memory_t measure_slot_memory(void)
{
    slot_memory_t m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < N_SLOT_LIMITS; i++) {
        cudaError_t err = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, SLOT_LIMITS[i]);
        if (err == cudaSuccess) {
            device_run_begin();
            probe_parent<<<1, 1>>>();
            err = cudaGetLastError();
        }
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        if (err == cudaSuccess && kit_launch_log_read().failed)
            err = cudaErrorLaunchFailure;
        if (err != cudaSuccess) {
            m.error = err;
            (void)cudaGetLastError();
            break;
        }
        size_t free_bytes = 0, total_bytes = 0;
        KIT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        m.used_bytes[m.measured++] = total_bytes - free_bytes;
    }
    return m;
}

/* Bytes per pending-launch slot: the growth in use from the first limit to the last measured one. */
static double bytes_per_slot(const slot_memory_t *m)
{
    if (m->measured < 2)
        return 0.0;
    int last = m->measured - 1;
    return ((double)m->used_bytes[last] - (double)m->used_bytes[0]) / (double)(SLOT_LIMITS[last] - SLOT_LIMITS[0]);
}

static void write_json(const char *path, const bench_t *b, const limits_t *defaults, const limits_t *set,
                       const cost_t *costs, int n_costs, const slot_memory_t *slots)
{
    int runtime = 0, driver = 0;
    KIT_CHECK(cudaRuntimeGetVersion(&runtime));
    KIT_CHECK(cudaDriverGetVersion(&driver));
    kit_json_t j;
    kit_json_open(&j, path);
    kit_json_begin_object(&j, NULL);
    kit_json_string(&j, "program", "launch_costs");
    kit_json_device(&j);
    kit_json_int(&j, "runtime_version", runtime);
    kit_json_int(&j, "driver_version", driver);
    kit_json_int(&j, "repeats", b->repeats);
    kit_json_bool(&j, "quick", b->quick);
    kit_json_begin_object(&j, "defaults");
    kit_json_uint(&j, "pending_launch_count", defaults->pending_launch_count);
    kit_json_uint(&j, "malloc_heap_bytes", defaults->malloc_heap_bytes);
    kit_json_uint(&j, "stack_bytes", defaults->stack_bytes);
    kit_json_uint(&j, "printf_fifo_bytes", defaults->printf_fifo_bytes);
    kit_json_end_object(&j);
    kit_json_begin_object(&j, "limits"); /* as in force during the measurements */
    kit_json_uint(&j, "pending_launch_count", set->pending_launch_count);
    kit_json_uint(&j, "malloc_heap_bytes", set->malloc_heap_bytes);
    kit_json_end_object(&j);
    kit_json_begin_object(&j, "costs");
    for (int i = 0; i < n_costs; i++)
        json_cost(&j, &costs[i]);
    kit_json_end_object(&j);
    kit_json_begin_object(&j, "pending_slot_memory"); /* measure_slot_memory */
    kit_json_begin_array(&j, "limits");
    for (int i = 0; i < slots->measured; i++)
        kit_json_uint(&j, NULL, SLOT_LIMITS[i]);
    kit_json_end_array(&j);
    kit_json_begin_array(&j, "used_bytes");
    for (int i = 0; i < slots->measured; i++)
        kit_json_uint(&j, NULL, slots->used_bytes[i]);
    kit_json_end_array(&j);
    kit_json_double(&j, "bytes_per_slot", bytes_per_slot(slots));
    kit_json_string(&j, "error", slots->error == cudaSuccess ? "" : cudaGetErrorName(slots->error));
    kit_json_end_object(&j);
    kit_json_end_object(&j);
    kit_json_close(&j);
}

static void print_table(const cost_t *costs, int n_costs)
{
    printf("\n%-32s %12s %25s  %-6s  %s\n", "figure", "median", "min - max", "unit", "what");
    for (int i = 0; i < n_costs; i++) {
        const cost_t *c = &costs[i];
        int decimals = strcmp(c->unit, "cycles") == 0 ? 0 : 2;
        char extra[96] = "";
        if (c->has_overlaps)
            snprintf(extra, sizeof extra, " [children's own span %.2f us; overlapping pairs %lld]",
                     c->children_span_us, c->overlapping_pairs);
        if (c->has_malloc)
            snprintf(extra, sizeof extra, " [kernel %.3f ms, NULL returns %llu]", c->kernel_ms, c->null_returns);
        printf("%-32s %12.*f %12.*f - %-10.*f  %-6s  %s%s\n", c->key, decimals, c->median, decimals, c->min,
               decimals, c->max, c->unit, c->what, extra);
    }
}

/* ---- set-up ---- */

static cost_t *new_cost(cost_t *costs, int *n_costs, const char *key, const char *unit, int variant)
{
    cost_t *c = &costs[(*n_costs)++];
    memset(c, 0, sizeof *c);
    c->key = key;
    c->unit = unit;
    c->variant = variant;
    return c;
}

static size_t read_limit(enum cudaLimit limit)
{
    size_t value = 0;
    KIT_CHECK(cudaDeviceGetLimit(&value, limit));
    return value;
}

/* Does a device-side launch run here? 1 if so; otherwise 0 and the reason. */
static int dynamic_parallelism_works(char *reason, size_t size)
{
    int flag = 0;
    unsigned int ran = 0;
    device_run_begin();
    KIT_CHECK(cudaMemcpyToSymbol(probe_flag, &flag, sizeof flag));
    probe_parent<<<1, 1>>>();
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        snprintf(reason, size, "the probe kernel failed: %s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
        return 0;
    }
    kit_launch_log_t log = kit_launch_log_read();
    KIT_CHECK(cudaMemcpyFromSymbol(&flag, probe_flag, sizeof flag));
    KIT_CHECK(cudaMemcpyFromSymbol(&ran, grids_ran, sizeof ran));
    if (log.failed) {
        snprintf(reason, size, "the device-side launch failed: %s", cudaGetErrorName((cudaError_t)log.first_error));
        return 0;
    }
    if (flag != 1 || ran != 1) {
        snprintf(reason, size, "the child grid did not run");
        return 0;
    }
    return 1;
}

static void print_slot_memory(const slot_memory_t *m)
{
    printf("pending-launch pool: device memory in use at limit");
    for (int i = 0; i < m->measured; i++)
        printf(" %zu: %.1f MiB;", SLOT_LIMITS[i], m->used_bytes[i] / 1048576.0);
    printf(" about %.0f bytes a slot%s%s\n", bytes_per_slot(m), m->error == cudaSuccess ? "" : "; stopped: ",
           m->error == cudaSuccess ? "" : cudaGetErrorName(m->error));
}

static const kit_option_t options[] = {
    {"--repeats", "timed runs of each figure after one warm-up (medians)", DEFAULT_REPEATS, 1, MAX_REPEATS, NULL},
    {"--quick", "1: smaller sizes (see the top of launch_costs.cu)", 0, 0, 1, NULL},
    {"--slots", "1: only what a pending-launch slot costs in memory", 0, 0, 1, NULL},
    KIT_OPTIONS_END};

int main(int argc, char **argv)
{
    static const char *const json_only[] = {"--json", NULL};
    kit_options_answer(argc, argv, options);
    kit_options_check(argc, argv, options, json_only);
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    bench_t b;
    memset(&b, 0, sizeof b);
    b.repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    b.quick = (int)kit_option_long(argc, argv, options, "--quick");
    int slots_only = (int)kit_option_long(argc, argv, options, "--slots");

    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        printf("launch_costs: NOT RUN: no CUDA GPU (cudaGetDeviceCount: %s: %s); nothing measured\n",
               cudaGetErrorName(err), err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return KIT_EXIT_NOT_RUN;
    }
    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));

    b.host_launches = b.quick ? 100 : 1000;
    b.round_trips = b.quick ? 20 : 100;
    b.device_launches = b.quick ? 100 : 1000;
    b.chain_grids = b.quick ? 100 : 1000;
    b.malloc_blocks = (b.quick ? 1 : MALLOC_BLOCKS_PER_SM) * prop.multiProcessorCount;

    /* The defaults, before this program changes any of them. */
    limits_t defaults, set;
    defaults.pending_launch_count = read_limit(cudaLimitDevRuntimePendingLaunchCount);
    defaults.malloc_heap_bytes = read_limit(cudaLimitMallocHeapSize);
    defaults.stack_bytes = read_limit(cudaLimitStackSize);
    defaults.printf_fifo_bytes = read_limit(cudaLimitPrintfFifoSize);

    /* Set once, before the first kernel, to the largest need. A launch past the pending-launch limit
     * fails (CDP2 has no overflow pool); the nested chain keeps chain_grids - 1 launches pending at
     * its deepest. The heap holds one malloc run at a time (they are freed between runs). Neither
     * limit is set below its default. */
    size_t pending_need = (size_t)b.device_launches;
    if ((size_t)b.chain_grids > pending_need)
        pending_need = (size_t)b.chain_grids;
    if ((size_t)SIBLINGS > pending_need)
        pending_need = SIBLINGS;
    pending_need += PENDING_MARGIN;
    size_t malloc_need = (size_t)b.malloc_blocks * MALLOC_THREADS * MALLOC_BYTES;
    size_t heap_need = HEAP_SPARE + HEAP_NEED_FACTOR * malloc_need;
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                 pending_need > defaults.pending_launch_count ? pending_need
                                                                              : defaults.pending_launch_count));
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize,
                                 heap_need > defaults.malloc_heap_bytes ? heap_need : defaults.malloc_heap_bytes));
    set.pending_launch_count = read_limit(cudaLimitDevRuntimePendingLaunchCount);
    set.malloc_heap_bytes = read_limit(cudaLimitMallocHeapSize);
    set.stack_bytes = defaults.stack_bytes;
    set.printf_fifo_bytes = defaults.printf_fifo_bytes;
    if (set.pending_launch_count < pending_need || set.malloc_heap_bytes < heap_need) {
        fprintf(stderr, "launch_costs: the device kept a pending-launch limit of %zu (need %zu) and a heap of %zu "
                        "bytes (need %zu)\n", set.pending_launch_count, pending_need, set.malloc_heap_bytes, heap_need);
        return EXIT_INVALID;
    }

    char reason[512];
    if (!dynamic_parallelism_works(reason, sizeof reason)) {
        printf("launch_costs: NOT RUN: dynamic parallelism does not work on %s: %s; nothing measured\n", prop.name,
               reason);
        return KIT_EXIT_NOT_RUN;
    }

    printf("device: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    printf("limits: pending launches %zu (default %zu), device heap %.1f MiB (default %.1f MiB); "
           "stack %zu B, printf FIFO %.1f MiB left at their defaults\n", set.pending_launch_count,
           defaults.pending_launch_count, set.malloc_heap_bytes / 1048576.0, defaults.malloc_heap_bytes / 1048576.0,
           defaults.stack_bytes, defaults.printf_fifo_bytes / 1048576.0);
    if (slots_only) {
        slot_memory_t only = measure_slot_memory();
        print_slot_memory(&only);
        if (json_path != NULL)
            write_json(json_path, &b, &defaults, &set, NULL, 0, &only);
        return only.measured == N_SLOT_LIMITS ? 0 : EXIT_INVALID;
    }
    printf("each figure: 1 warm-up, then %d runs%s\n", b.repeats, b.quick ? " (quick sizes)" : "");

    unsigned int malloc_calls = (unsigned int)b.malloc_blocks * MALLOC_THREADS;
    KIT_CHECK(cudaEventCreate(&b.start));
    KIT_CHECK(cudaEventCreate(&b.stop));
    KIT_CHECK(cudaMalloc((void **)&b.d_starts, sizeof(unsigned long long) * SIBLINGS));
    KIT_CHECK(cudaMalloc((void **)&b.d_ends, sizeof(unsigned long long) * SIBLINGS));
    KIT_CHECK(cudaMalloc((void **)&b.d_blocks, sizeof(void *) * malloc_calls));
    KIT_CHECK(cudaMalloc((void **)&b.d_cycles, sizeof(long long) * malloc_calls));
    KIT_CHECK(cudaMalloc((void **)&b.d_nulls, sizeof(unsigned int)));
    b.h_cycles = (long long *)kit_host_alloc(sizeof(long long) * malloc_calls);
    b.h_sorted = (double *)kit_host_alloc(sizeof(double) * malloc_calls);

    cost_t costs[11];
    int n_costs = 0;
    cost_t *c;

    c = new_cost(costs, &n_costs, "host_launch_us", "us", 0);
    snprintf(c->what, sizeof c->what,
             "GPU time per empty <<<1,1>>> kernel, %d launched back to back from the host into one stream "
             "(CUDA events / %d: launch throughput, not latency)", b.host_launches, b.host_launches);
    add_param(c, "launches", b.host_launches);
    measure(&b, c, run_host_launches);

    c = new_cost(costs, &n_costs, "host_round_trip_us", "us", 0);
    snprintf(c->what, sizeof c->what,
             "host wall time of one empty <<<1,1>>> launch followed by cudaStreamSynchronize "
             "(CLOCK_MONOTONIC over %d in a row / %d)", b.round_trips, b.round_trips);
    add_param(c, "round_trips", b.round_trips);
    measure(&b, c, run_host_round_trips);

    c = new_cost(costs, &n_costs, "device_launch_null_us", "us", STREAM_NULL);
    snprintf(c->what, sizeof c->what,
             "time one device thread spends issuing one <<<1,1>>> child launch (the call and its cudaGetLastError check) into "
             "the NULL stream, %d back to back (globaltimer / %d; issue only: the children run later)",
             b.device_launches, b.device_launches);
    add_param(c, "launches", b.device_launches);
    measure(&b, c, run_device_launches);

    c = new_cost(costs, &n_costs, "device_launch_fire_and_forget_us", "us", STREAM_FIRE_AND_FORGET);
    snprintf(c->what, sizeof c->what,
             "time one device thread spends issuing one <<<1,1>>> child launch (the call and its cudaGetLastError check) into "
             "cudaStreamFireAndForget, %d back to back (globaltimer / %d; issue only: the children run later)",
             b.device_launches, b.device_launches);
    add_param(c, "launches", b.device_launches);
    measure(&b, c, run_device_launches);

    c = new_cost(costs, &n_costs, "nested_chain_step_us", "us", CHAIN_NESTED);
    snprintf(c->what, sizeof c->what,
             "per grid of a chain of %d <<<1,1>>> grids, each launching the next as its child in the NULL stream "
             "(launch to completion; CUDA events around the whole chain / %d)", b.chain_grids, b.chain_grids);
    add_param(c, "grids", b.chain_grids);
    add_param(c, "device_launches", b.chain_grids - 1);
    measure(&b, c, run_chain);

    c = new_cost(costs, &n_costs, "tail_chain_step_us", "us", CHAIN_TAIL);
    snprintf(c->what, sizeof c->what,
             "per grid of a chain of %d <<<1,1>>> grids, each launching the next into cudaStreamTailLaunch "
             "(starts after its parent finished; CUDA events around the whole chain / %d)", b.chain_grids,
             b.chain_grids);
    add_param(c, "grids", b.chain_grids);
    add_param(c, "device_launches", b.chain_grids - 1);
    measure(&b, c, run_chain);

    static const char *const sibling_keys[3] = {"siblings_null_us", "siblings_streams_us",
                                                "siblings_fire_and_forget_us"};
    static const int sibling_streams[3] = {STREAM_NULL, STREAM_PER_THREAD, STREAM_FIRE_AND_FORGET};
    static const char *const sibling_how[3] = {
        "into the block's NULL stream, which runs them one after another",
        "each into a non-blocking stream the thread creates and destroys",
        "into cudaStreamFireAndForget"};
    for (int v = 0; v < 3; v++) {
        c = new_cost(costs, &n_costs, sibling_keys[v], "us", sibling_streams[v]);
        snprintf(c->what, sizeof c->what,
                 "whole parent grid, children included (CUDA events): one block of %d threads, each launching "
                 "one <<<1,1>>> child that spins %lld us, %s", SIBLINGS, CHILD_SPIN_NS / 1000, sibling_how[v]);
        add_param(c, "children", SIBLINGS);
        add_param(c, "child_spin_us", CHILD_SPIN_NS / 1000);
        c->has_overlaps = 1;
        measure(&b, c, run_siblings);
    }

    cost_t *per_thread = new_cost(costs, &n_costs, "malloc_per_thread_cycles", "cycles", MALLOC_PER_THREAD);
    snprintf(per_thread->what, sizeof per_thread->what,
             "SM clock cycles of one device malloc(%d) when all %u threads (%d blocks of %d) call it at once "
             "(clock64 around the call; median over the calls)", MALLOC_BYTES, malloc_calls, b.malloc_blocks,
             MALLOC_THREADS);
    add_param(per_thread, "blocks", b.malloc_blocks);
    add_param(per_thread, "threads_per_block", MALLOC_THREADS);
    add_param(per_thread, "calls", malloc_calls);
    add_param(per_thread, "bytes_per_call", MALLOC_BYTES);
    per_thread->has_malloc = 1;

    cost_t *per_block = new_cost(costs, &n_costs, "malloc_per_block_cycles", "cycles", MALLOC_PER_BLOCK);
    snprintf(per_block->what, sizeof per_block->what,
             "SM clock cycles of one device malloc(%d) by thread 0 of each of %d blocks of %d, all at once "
             "(clock64 around the call; median over the %d calls)", MALLOC_THREADS * MALLOC_BYTES, b.malloc_blocks,
             MALLOC_THREADS, b.malloc_blocks);
    add_param(per_block, "blocks", b.malloc_blocks);
    add_param(per_block, "threads_per_block", MALLOC_THREADS);
    add_param(per_block, "calls", b.malloc_blocks);
    add_param(per_block, "bytes_per_call", MALLOC_THREADS * MALLOC_BYTES);
    per_block->has_malloc = 1;

    /* The per-block run first, while the heap is still in one piece: its calls ask for the larger
     * blocks. (The document lists per-thread first.) */
    measure(&b, per_block, run_malloc);
    measure(&b, per_thread, run_malloc);

    /* Last: it raises the pending-launch limit far past what the measurements above ran under. */
    slot_memory_t slots = measure_slot_memory();
    print_slot_memory(&slots);

    if (json_path != NULL) {
        write_json(json_path, &b, &defaults, &set, costs, n_costs, &slots);
        printf("result document: %s\n", json_path);
    }
    print_table(costs, n_costs);

    KIT_CHECK(cudaEventDestroy(b.start));
    KIT_CHECK(cudaEventDestroy(b.stop));
    KIT_CHECK(cudaFree(b.d_starts));
    KIT_CHECK(cudaFree(b.d_ends));
    KIT_CHECK(cudaFree(b.d_blocks));
    KIT_CHECK(cudaFree(b.d_cycles));
    KIT_CHECK(cudaFree(b.d_nulls));
    free(b.h_cycles);
    free(b.h_sorted);
    return 0;
}
