/* Lab 05 harness (kit-owned): runs both parts of the lab twice in one process, once the kit's
 * legacy way (legacy.cu) and once the student's way (default_streams.cu), reads back every kernel's
 * %globaltimer stamps, and reports how many kernels ran at once, the span of each timeline, when
 * many_streams returned compared with the end of the last kernel it launched, and for Part B when
 * each host thread's wait returned compared with the end of its own kernel.
 *
 *   ./default_streams [--streams 8] [--threads 8] [--spin-us 1000] [--thread-spin-us 1000]
 *                     [--repeats 5] [--delay-us 0] [--delay-seed 1] [--json result.json]
 *
 * Part A: --streams worker kernels of --spin-us each, one per stream, with a tiny kernel on the
 * default stream after each. Part B: --threads host threads; thread i's kernel spins
 * (i + 1) x --thread-spin-us, so that a thread that waits for everything returns visibly late.
 * One warm-up round, then --repeats rounds (legacy and student interleaved); medians are reported.
 * The result document holds each side's median round, kernel by kernel ("median_timeline"), from
 * which tools/draw_figures.py draws the timeline picture (make run LAB=05 writes it).
 *
 * --delay-us D (default 0: none) turns on the kit's hidden delays, drawn per round from
 * --delay-seed and the same for both sides: about half the workers of each part (at least one) run
 * D/2 to D us longer than their job says, and in even rounds every tiny kernel runs D us, so the
 * default stream finishes last there and a worker finishes last in odd rounds. The student's code
 * sees none of it (the kernels read it from their stamps): only a real wait returns after them.
 *
 * The grader can send several cases to one process (kit_harness.h). Each case waits for all its
 * work, joins its threads and frees what it allocated, and starts with a warm-up round of its own.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "default_streams.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"

#define MAX_KERNELS (2 * MAX_STREAMS) /* Part A: workers and tiny kernels */
#define MAX_REPEATS 51
#define MAX_DELAY_US 100000
#define CALIBRATION_ROUNDS 7
/* Enough hardware work queues for every stream of Part A and every thread of Part B: with the
 * default of 8, streams beyond the eighth share a queue and can wait for each other for no reason
 * the lab teaches. Set in main, before the CUDA runtime starts (kit_harness_main makes the context
 * before the first case); a value already in the environment wins. */
#define MAX_CONNECTIONS "32"

enum { PART_A, PART_B, N_PARTS };
enum { LEGACY, STUDENT, N_SIDES };
static const char *const part_keys[N_PARTS] = {"part_a", "part_b"};
static const char *const side_keys[N_SIDES] = {"legacy", "student"};
static const char *const side_names[N_SIDES] = {"legacy (kit)", "yours"};

/* One round of one part on one side: every kernel's stamps (with the kit's delays, extra_ns), and
 * the host's times of the calls' returns. */
typedef struct {
    int n_workers;                     /* streams (Part A) or threads (Part B) */
    int n_default;                     /* Part A: tiny kernels on the default stream; Part B: 0 */
    kit_stamp_t stamps[MAX_KERNELS];   /* workers first, then the tiny kernels */
    long long returned_ns[MAX_THREADS]; /* host clock when the call returned: Part A [0] (many_streams),
                                          Part B each thread's */
    long long offset_ns;               /* host clock minus %globaltimer, calibrated before the round */
} round_t;

/* The kit's hidden delays of one round, in ns (see --delay-us above). */
typedef struct {
    long long part_a[MAX_KERNELS]; /* workers, then tiny kernels: as the stamps */
    long long part_b[MAX_THREADS];
} delays_t;

typedef struct {
    round_t *rounds; /* [repeats] */
    double span_us_median;
    double max_concurrent_median;
    long long overlapping_pairs; /* over all rounds, every kernel of the part counted */
    int missing, duplicated;     /* kernels that never stamped, or stamped more than once */
    int misshapen;               /* kernels launched in another shape than the header's "Launch as" */
    int median_round;            /* the round listed kernel by kernel: the one with the median span */
    double lateness_us[MAX_THREADS]; /* Part B: median over rounds, per thread */
    double earliest_us[MAX_THREADS]; /* Part B: the smallest over rounds, per thread */
    double return_us_median, return_us_min; /* Part A: many_streams's return after its last kernel's end */
} timeline_t;

static long long host_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------------- measurements of one round ---------------- */

static int n_kernels(const round_t *r) { return r->n_workers + r->n_default; }

static unsigned long long first_start(const round_t *r)
{
    unsigned long long t = 0;
    int found = 0;
    for (int i = 0; i < n_kernels(r); i++)
        if (r->stamps[i].runs > 0 && (!found || r->stamps[i].start_ns < t)) {
            t = r->stamps[i].start_ns;
            found = 1;
        }
    return t;
}

static double span_us(const round_t *r)
{
    unsigned long long first = first_start(r), last = first;
    for (int i = 0; i < n_kernels(r); i++)
        if (r->stamps[i].runs > 0 && r->stamps[i].end_ns > last)
            last = r->stamps[i].end_ns;
    return (double)(last - first) / 1000.0;
}

/* The most workers running at one instant: the largest number of worker intervals [start, end)
 * that contain some worker's start. */
static int max_concurrent(const round_t *r)
{
    int best = 0;
    for (int i = 0; i < r->n_workers; i++) {
        if (r->stamps[i].runs == 0)
            continue;
        int active = 0;
        for (int j = 0; j < r->n_workers; j++)
            if (r->stamps[j].runs > 0 && r->stamps[j].start_ns <= r->stamps[i].start_ns &&
                r->stamps[i].start_ns < r->stamps[j].end_ns)
                active++;
        if (active > best)
            best = active;
    }
    return best;
}

/* Pairs of kernels (tiny ones included) whose intervals overlap. */
static int overlapping_pairs(const round_t *r)
{
    int pairs = 0;
    for (int i = 0; i < n_kernels(r); i++)
        for (int j = i + 1; j < n_kernels(r); j++) {
            const kit_stamp_t *a = &r->stamps[i], *b = &r->stamps[j];
            if (a->runs > 0 && b->runs > 0 && a->start_ns < b->end_ns && b->start_ns < a->end_ns)
                pairs++;
        }
    return pairs;
}

/* Part B: how long after its own kernel ended thread i's wait returned, in microseconds. */
static double lateness_us(const round_t *r, int i)
{
    long long returned_gpu = r->returned_ns[i] - r->offset_ns;
    return (double)(returned_gpu - (long long)r->stamps[i].end_ns) / 1000.0;
}

/* Part A: the kernel (worker or tiny) that ended last, of those that ran. */
static int last_kernel(const round_t *r)
{
    int last = 0;
    for (int i = 0; i < n_kernels(r); i++)
        if (r->stamps[i].runs > 0 && (r->stamps[last].runs == 0 || r->stamps[i].end_ns > r->stamps[last].end_ns))
            last = i;
    return last;
}

/* Part A: how long after the last of its kernels ended many_streams returned, in microseconds;
 * negative when it returned before that kernel had finished. */
static double return_lateness_us(const round_t *r)
{
    long long returned_gpu = r->returned_ns[0] - r->offset_ns;
    return (double)(returned_gpu - (long long)r->stamps[last_kernel(r)].end_ns) / 1000.0;
}

/* ---------------- the kit's hidden delays ---------------- */

/* splitmix64: small and well mixed, so one --delay-seed gives the same delays on every machine. */
static unsigned long long next_random(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static long long draw_delay(unsigned long long *state, long long delay_ns) /* delay/2 to delay */
{
    return delay_ns / 2 + (long long)(next_random(state) % (unsigned long long)(delay_ns - delay_ns / 2 + 1));
}

/* n kernels: each delayed with probability 1/2, and one always, so every round has a kernel that
 * ends at least delay/2 after its job's length (a sleep of that length returns before it). */
static void draw_delays(unsigned long long *state, long long delay_ns, int n, long long *out)
{
    for (int i = 0; i < n; i++)
        out[i] = (next_random(state) & 1) ? draw_delay(state, delay_ns) : 0;
    int forced = (int)(next_random(state) % (unsigned long long)n);
    if (out[forced] == 0)
        out[forced] = draw_delay(state, delay_ns);
}

/* Round k's delays, drawn in round order from one state. The tiny kernels run long in even rounds:
 * there the default stream ends last (a many_streams that does not wait for it returns early),
 * in odd rounds a worker does (one that waits for the default stream only returns early). */
static void round_delays(unsigned long long *state, long long delay_ns, int k, int n_streams, int n_threads,
                         delays_t *d)
{
    memset(d, 0, sizeof *d);
    if (delay_ns <= 0)
        return;
    draw_delays(state, delay_ns, n_streams, d->part_a);
    if (k % 2 == 0)
        for (int i = 0; i < n_streams; i++)
            d->part_a[n_streams + i] = delay_ns;
    draw_delays(state, delay_ns, n_threads, d->part_b);
}

/* ---------------- running the parts ---------------- */

static kit_stamp_t *d_stamps; /* MAX_KERNELS records in device memory */

static void clear_stamps(void)
{
    KIT_CHECK(cudaMemset(d_stamps, 0, sizeof(kit_stamp_t) * MAX_KERNELS));
    KIT_CHECK(cudaDeviceSynchronize());
}

/* Cleared records with the round's delays in them (extra: n values, or NULL for none), written and
 * finished before the student's code runs. */
static void prepare_stamps(const long long *extra, int n)
{
    kit_stamp_t init[MAX_KERNELS];
    memset(init, 0, sizeof init);
    for (int i = 0; extra != NULL && i < n; i++)
        init[i].extra_ns = extra[i];
    KIT_CHECK(cudaMemcpy(d_stamps, init, sizeof init, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaDeviceSynchronize());
}

static void read_stamps(round_t *r)
{
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpy(r->stamps, d_stamps, sizeof(kit_stamp_t) * MAX_KERNELS, cudaMemcpyDeviceToHost));
}

static long long calibrate_offset(void);

static void run_part_a(int side, int n_streams, long long spin_ns, const delays_t *delays, round_t *r)
{
    streams_job_t job;
    job.n_streams = n_streams;
    job.spin_ns = spin_ns;
    job.worker_stamps = d_stamps;
    job.default_stamps = d_stamps + n_streams;
    r->offset_ns = calibrate_offset();
    prepare_stamps(delays->part_a, 2 * n_streams);
    if (side == LEGACY)
        legacy_many_streams(&job);
    else
        many_streams(&job);
    r->returned_ns[0] = host_now_ns(); /* before anything of the kit's waits for the device */
    read_stamps(r);
    r->n_workers = n_streams;
    r->n_default = n_streams;
}

/* Host clock minus %globaltimer: the smallest (host time after a wait) - (kernel's end stamp) over a
 * few rounds, so the host's time of a wait's return can be placed on the GPU's time line. What is
 * left over is the quickest wait's own latency, the same for every thread. */
static long long calibrate_offset(void)
{
    cudaStream_t s;
    KIT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    long long best = 0;
    for (int i = 0; i < CALIBRATION_ROUNDS; i++) {
        clear_stamps();
        kit_tiny_kernel<<<1, 1, 0, s>>>(d_stamps);
        KIT_CHECK(cudaGetLastError());
        KIT_CHECK(cudaStreamSynchronize(s));
        long long after = host_now_ns();
        kit_stamp_t stamp;
        KIT_CHECK(cudaMemcpy(&stamp, d_stamps, sizeof stamp, cudaMemcpyDeviceToHost));
        long long offset = after - (long long)stamp.end_ns;
        if (i == 0 || offset < best)
            best = offset;
    }
    KIT_CHECK(cudaStreamDestroy(s));
    return best;
}

typedef struct {
    thread_job_t job;
    int side;
    pthread_barrier_t *start;
    long long returned_ns;
} thread_slot_t;

static void *thread_main(void *arg)
{
    thread_slot_t *slot = (thread_slot_t *)arg;
    pthread_barrier_wait(slot->start); /* all threads launch together */
    if (slot->side == LEGACY)
        legacy_thread_launch_and_wait(&slot->job);
    else
        thread_launch_and_wait(&slot->job);
    slot->returned_ns = host_now_ns();
    return NULL;
}

static void run_part_b(int side, int n_threads, long long base_ns, const delays_t *delays, round_t *r)
{
    thread_slot_t slots[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    pthread_barrier_t start;
    r->offset_ns = calibrate_offset();
    prepare_stamps(delays->part_b, n_threads);
    if (pthread_barrier_init(&start, NULL, (unsigned)n_threads) != 0) {
        fprintf(stderr, "cannot create a barrier for %d threads\n", n_threads);
        exit(1);
    }
    for (int i = 0; i < n_threads; i++) {
        slots[i].job.thread_index = i;
        slots[i].job.spin_ns = (long long)(i + 1) * base_ns;
        slots[i].job.stamp = d_stamps + i;
        slots[i].side = side;
        slots[i].start = &start;
        slots[i].returned_ns = 0;
        if (pthread_create(&threads[i], NULL, thread_main, &slots[i]) != 0) {
            fprintf(stderr, "cannot create host thread %d\n", i);
            exit(1);
        }
    }
    for (int i = 0; i < n_threads; i++)
        if (pthread_join(threads[i], NULL) != 0) {
            fprintf(stderr, "cannot join host thread %d\n", i);
            exit(1);
        }
    pthread_barrier_destroy(&start);
    read_stamps(r);
    r->n_workers = n_threads;
    r->n_default = 0;
    for (int i = 0; i < n_threads; i++)
        r->returned_ns[i] = slots[i].returned_ns;
}

/* ---------------- summaries ---------------- */

static void summarize(int part, timeline_t *t, int repeats)
{
    double spans[MAX_REPEATS], counts[MAX_REPEATS];
    t->overlapping_pairs = 0;
    t->missing = t->duplicated = t->misshapen = 0;
    for (int k = 0; k < repeats; k++) {
        const round_t *r = &t->rounds[k];
        spans[k] = span_us(r);
        counts[k] = max_concurrent(r);
        t->overlapping_pairs += overlapping_pairs(r);
        for (int i = 0; i < n_kernels(r); i++) {
            const kit_stamp_t *st = &r->stamps[i];
            t->missing += st->runs == 0;
            t->duplicated += st->runs > 1;
            t->misshapen += st->runs > 0 && (st->blocks != 1 || st->threads != (i < r->n_workers ? WORKER_THREADS : 1));
        }
    }
    t->max_concurrent_median = kit_median(counts, repeats);
    double sorted[MAX_REPEATS];
    memcpy(sorted, spans, sizeof(double) * repeats);
    t->span_us_median = kit_median(sorted, repeats);
    double lower_median = sorted[(repeats - 1) / 2];
    t->median_round = 0;
    for (int k = 0; k < repeats; k++)
        if (spans[k] == lower_median)
            t->median_round = k;
    if (part == PART_B) {
        int n = t->rounds[0].n_workers;
        for (int i = 0; i < n; i++) {
            double late[MAX_REPEATS];
            for (int k = 0; k < repeats; k++)
                late[k] = lateness_us(&t->rounds[k], i);
            t->lateness_us[i] = kit_median(late, repeats); /* sorts late */
            t->earliest_us[i] = late[0];
        }
    } else {
        double late[MAX_REPEATS];
        for (int k = 0; k < repeats; k++)
            late[k] = return_lateness_us(&t->rounds[k]);
        t->return_us_median = kit_median(late, repeats); /* sorts late */
        t->return_us_min = late[0];
    }
}

/* ---------------- output ---------------- */

static void print_part(int part, timeline_t t[N_SIDES], int repeats)
{
    printf("  %-16s %12s %16s %18s\n", "", "span (us)", "kernels at once", "overlapping pairs");
    for (int s = 0; s < N_SIDES; s++)
        printf("  %-16s %12.1f %16.1f %18lld%s\n", side_names[s], t[s].span_us_median,
               t[s].max_concurrent_median, t[s].overlapping_pairs,
               t[s].missing || t[s].duplicated || t[s].misshapen ? "  (kernels missing, repeated or misshapen: "
                                                                   "see below)" : "");
    if (t[STUDENT].span_us_median > 0)
        printf("  legacy / yours: %.2fx\n", t[LEGACY].span_us_median / t[STUDENT].span_us_median);
    for (int s = 0; s < N_SIDES; s++) {
        printf("  %s, every round: span (us)", side_names[s]);
        for (int k = 0; k < repeats; k++)
            printf(" %.0f", span_us(&t[s].rounds[k]));
        printf("; kernels at once");
        for (int k = 0; k < repeats; k++)
            printf(" %d", max_concurrent(&t[s].rounds[k]));
        printf("\n");
    }
    for (int s = 0; s < N_SIDES; s++)
        if (t[s].missing || t[s].duplicated || t[s].misshapen)
            printf("  %s: %d kernel(s) never ran, %d ran more than once, %d launched in another shape than "
                   "<<<1, %d>>> (workers) or <<<1, 1>>> (tiny kernels) (over all rounds)\n", side_names[s],
                   t[s].missing, t[s].duplicated, t[s].misshapen, WORKER_THREADS);
    if (part == PART_A)
        for (int s = 0; s < N_SIDES; s++) {
            printf("  %s: many_streams returned this long after its last kernel ended (us; negative: before "
                   "it): median %.0f, every round", side_names[s], t[s].return_us_median);
            for (int k = 0; k < repeats; k++)
                printf(" %.0f", return_lateness_us(&t[s].rounds[k]));
            printf("\n");
        }
    if (part == PART_B)
        for (int s = 0; s < N_SIDES; s++) {
            printf("  %s: each thread's wait returned this long after its own kernel ended (us, median; "
                   "earliest round):\n   ", side_names[s]);
            for (int i = 0; i < t[s].rounds[0].n_workers; i++)
                printf(" t%d %.0f (%.0f)", i, t[s].lateness_us[i], t[s].earliest_us[i]);
            printf("\n");
        }
}

static void json_side(kit_json_t *j, const char *key, int part, const timeline_t *t, int repeats)
{
    kit_json_begin_object(j, key);
    kit_json_double(j, "span_us", t->span_us_median);
    kit_json_double(j, "max_concurrent", t->max_concurrent_median);
    kit_json_int(j, "overlapping_pairs", t->overlapping_pairs);
    kit_json_int(j, "missing", t->missing);
    kit_json_int(j, "duplicated", t->duplicated);
    kit_json_int(j, "misshapen", t->misshapen);
    kit_json_begin_array(j, "spans_us");
    for (int k = 0; k < repeats; k++)
        kit_json_double(j, NULL, span_us(&t->rounds[k]));
    kit_json_end_array(j);
    kit_json_begin_array(j, "max_concurrent_runs");
    for (int k = 0; k < repeats; k++)
        kit_json_int(j, NULL, max_concurrent(&t->rounds[k]));
    kit_json_end_array(j);
    const round_t *r = &t->rounds[t->median_round];
    if (part == PART_A) {
        /* When many_streams returned, against the end of the last kernel it launched, every round. */
        kit_json_double(j, "return_lateness_us", t->return_us_median);
        kit_json_double(j, "return_lateness_min_us", t->return_us_min);
        kit_json_begin_array(j, "return_runs");
        for (int k = 0; k < repeats; k++) {
            const round_t *rk = &t->rounds[k];
            int last = last_kernel(rk);
            kit_json_begin_object(j, NULL);
            kit_json_int(j, "round", k + 1); /* the warm-up is round 0 */
            kit_json_double(j, "lateness_us", return_lateness_us(rk));
            kit_json_string(j, "last_kind", last < rk->n_workers ? "worker" : "default");
            kit_json_int(j, "last_row", last < rk->n_workers ? last : last - rk->n_workers);
            kit_json_double(j, "last_end_us", (double)(rk->stamps[last].end_ns - first_start(rk)) / 1000.0);
            kit_json_end_object(j);
        }
        kit_json_end_array(j);
    }
    if (part == PART_B) {
        kit_json_begin_array(j, "lateness_us");
        for (int i = 0; i < r->n_workers; i++)
            kit_json_double(j, NULL, t->lateness_us[i]);
        kit_json_end_array(j);
        kit_json_begin_array(j, "earliest_lateness_us"); /* per thread, its earliest round */
        for (int i = 0; i < r->n_workers; i++)
            kit_json_double(j, NULL, t->earliest_us[i]);
        kit_json_end_array(j);
        kit_json_begin_array(j, "worst_lateness_runs_us");
        for (int k = 0; k < repeats; k++) {
            double worst = lateness_us(&t->rounds[k], 0);
            for (int i = 1; i < r->n_workers; i++)
                if (lateness_us(&t->rounds[k], i) > worst)
                    worst = lateness_us(&t->rounds[k], i);
            kit_json_double(j, NULL, worst);
        }
        kit_json_end_array(j);
    }
    /* The median round, times in us from its first kernel's start. */
    unsigned long long t0 = first_start(r);
    kit_json_int(j, "median_round", t->median_round);
    kit_json_begin_array(j, "kernels");
    for (int i = 0; i < n_kernels(r); i++) {
        const kit_stamp_t *st = &r->stamps[i];
        kit_json_begin_object(j, NULL);
        kit_json_string(j, "kind", i < r->n_workers ? "worker" : "default");
        kit_json_int(j, "row", i < r->n_workers ? i : i - r->n_workers);
        kit_json_int(j, "runs", st->runs);
        kit_json_double(j, "start_us", st->runs ? (double)(st->start_ns - t0) / 1000.0 : -1.0);
        kit_json_double(j, "end_us", st->runs ? (double)(st->end_ns - t0) / 1000.0 : -1.0);
        kit_json_int(j, "sm", st->sm);
        kit_json_int(j, "threads", st->threads);
        kit_json_int(j, "blocks", st->blocks);
        kit_json_double(j, "extra_us", (double)st->extra_ns / 1000.0);
        if (part == PART_B)
            kit_json_double(j, "wait_returned_us",
                            (double)(r->returned_ns[i] - r->offset_ns - (long long)t0) / 1000.0);
        kit_json_end_object(j);
    }
    kit_json_end_array(j);
    /* The same round for the timeline picture (tools/draw_figures.py): the kernels that ran, times
     * in us from its first start; Part B: when each thread's wait returned, on the same clock. */
    kit_json_begin_array(j, "median_timeline");
    for (int i = 0; i < n_kernels(r); i++) {
        const kit_stamp_t *st = &r->stamps[i];
        if (st->runs == 0)
            continue;
        kit_json_begin_object(j, NULL);
        kit_json_int(j, "row", i < r->n_workers ? i : i - r->n_workers);
        kit_json_bool(j, "worker", i < r->n_workers);
        kit_json_double(j, "start_us", (double)(st->start_ns - t0) / 1000.0);
        kit_json_double(j, "end_us", (double)(st->end_ns - t0) / 1000.0);
        if (part == PART_B)
            kit_json_double(j, "returned_us", (double)(r->returned_ns[i] - r->offset_ns - (long long)t0) / 1000.0);
        kit_json_end_object(j);
    }
    kit_json_end_array(j);
    kit_json_end_object(j);
}

/* ---------------- main ---------------- */

/* One case (kit_harness.h): the rounds, the summaries, the document. Every round waits for all its
 * kernels (read_stamps) and joins its threads; the case frees its memory before it returns, so the
 * next case starts on an idle device. */
static int run_case(int argc, char **argv)
{
    int n_streams = (int)kit_arg_long(argc, argv, "--streams", 8, 1, MAX_STREAMS);
    int n_threads = (int)kit_arg_long(argc, argv, "--threads", 8, 1, MAX_THREADS);
    long spin_us = kit_arg_long(argc, argv, "--spin-us", 1000, 1, 100000);
    long thread_spin_us = kit_arg_long(argc, argv, "--thread-spin-us", 1000, 1, 100000);
    int repeats = (int)kit_arg_long(argc, argv, "--repeats", 5, 1, MAX_REPEATS);
    long delay_us = kit_arg_long(argc, argv, "--delay-us", 0, 0, MAX_DELAY_US);
    long delay_seed = kit_arg_long(argc, argv, "--delay-seed", 1, 0, 2147483647L);
    if (delay_us > 0 && repeats < 2) { /* both shapes of Part A's delays need a round each */
        fprintf(stderr, "--delay-us needs --repeats 2 or more\n");
        return KIT_EXIT_USAGE;
    }
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    KIT_CHECK(cudaMalloc(&d_stamps, sizeof(kit_stamp_t) * MAX_KERNELS));

    timeline_t tl[N_PARTS][N_SIDES];
    for (int p = 0; p < N_PARTS; p++)
        for (int s = 0; s < N_SIDES; s++) {
            tl[p][s].rounds = (round_t *)kit_host_alloc(((size_t)repeats + 1) * sizeof(round_t));
        }

    printf("Lab 05: default streams on %s, CUDA_DEVICE_MAX_CONNECTIONS=%s\n", prop.name,
           getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
    printf("Part A: %d streams, a worker of %ld us in each, a tiny kernel on the default stream after each\n",
           n_streams, spin_us);
    printf("Part B: %d host threads, thread i's kernel spins (i + 1) x %ld us\n", n_threads, thread_spin_us);
    if (delay_us > 0)
        printf("the kit's hidden delays (seed %ld): some kernels run %ld to %ld us longer than their jobs say, "
               "and Part A's tiny kernels %ld us in even rounds\n", delay_seed, delay_us / 2, delay_us, delay_us);
    printf("1 warm-up round, then %d rounds, legacy and yours in turn; medians below\n\n", repeats);
    fflush(stdout);

    /* Round 0 is the warm-up (module loading, first use of streams); rounds 1..repeats count. */
    unsigned long long delay_state = (unsigned long long)delay_seed;
    for (int k = 0; k <= repeats; k++) {
        delays_t delays;
        round_delays(&delay_state, delay_us * 1000LL, k, n_streams, n_threads, &delays);
        for (int s = 0; s < N_SIDES; s++) {
            run_part_a(s, n_streams, spin_us * 1000LL, &delays, &tl[PART_A][s].rounds[k]);
            run_part_b(s, n_threads, thread_spin_us * 1000LL, &delays, &tl[PART_B][s].rounds[k]);
        }
    }
    for (int p = 0; p < N_PARTS; p++)
        for (int s = 0; s < N_SIDES; s++) {
            tl[p][s].rounds += 1; /* drop the warm-up */
            summarize(p, &tl[p][s], repeats);
        }

    printf("Part A (many streams)\n");
    print_part(PART_A, tl[PART_A], repeats);
    printf("\nPart B (many host threads)\n");
    print_part(PART_B, tl[PART_B], repeats);

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "05-default-streams");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "streams", n_streams);
        kit_json_int(&j, "threads", n_threads);
        kit_json_int(&j, "spin_us", spin_us);
        kit_json_int(&j, "thread_spin_us", thread_spin_us);
        kit_json_int(&j, "repeats", repeats);
        kit_json_int(&j, "delay_us", delay_us);
        kit_json_int(&j, "delay_seed", delay_seed);
        kit_json_end_object(&j);
        kit_json_string(&j, "max_connections", getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
        for (int p = 0; p < N_PARTS; p++) {
            kit_json_begin_object(&j, part_keys[p]);
            for (int s = 0; s < N_SIDES; s++)
                json_side(&j, side_keys[s], p, &tl[p][s], repeats);
            kit_json_end_object(&j);
        }
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    for (int p = 0; p < N_PARTS; p++)
        for (int s = 0; s < N_SIDES; s++)
            free(tl[p][s].rounds - 1);
    KIT_CHECK(cudaFree(d_stamps));
    d_stamps = NULL;
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const options[] = {"--streams", "--threads", "--spin-us", "--thread-spin-us", "--repeats",
                                          "--delay-us", "--delay-seed", NULL};
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", MAX_CONNECTIONS, 0); /* before the CUDA runtime starts */
    return kit_harness_main(argc, argv, options, run_case);
}
