/* Lab 05 harness (kit-owned): runs both parts of the lab twice in one process, once the kit's
 * legacy way (legacy.cu) and once the student's way (default_streams.cu), reads back every kernel's
 * %globaltimer stamps, and reports how many kernels ran at once, the span of each timeline, when
 * many_streams returned compared with the end of the last kernel it launched, and for Part B when
 * each host thread's wait returned compared with the end of its own kernel.
 *
 *   ./default_streams [--name value ...] [--json result.json]      (options[] below; ./default_streams --help)
 *
 * Part A: --streams worker kernels of --spin-us each, one per stream, with a tiny kernel on the
 * default stream after each. Part B: --threads host threads; thread i's kernel spins
 * (i + 1) x --thread-spin-us, so that a thread that waits for everything returns visibly late.
 * One warm-up round of short kernels (WARM_UP_SPIN_US), then --repeats rounds of the student's way, the
 * kit's legacy way before the first LEGACY_ROUNDS of them (below); medians are reported.
 * The result document holds each side's median round, kernel by kernel ("median_timeline"), from
 * which grader/gradelib/figures.py draws the timeline picture (make run LAB=05 writes it).
 *
 * --delay-us D (0: none) turns on the kit's hidden delays, drawn per round from
 * --delay-seed and the same for both sides: about half the workers of each part (at least one) run
 * D/2 to D us longer than their job says, and in even rounds every tiny kernel runs D us, so the
 * default stream finishes last there and a worker finishes last in odd rounds. The student's code
 * sees none of it (the kernels read their lengths from the kit's table): only a real wait returns
 * after them.
 *
 * Evidence the student's code cannot write: the kernels' lengths and stamps live in static device
 * memory of this file, which the student's code is never handed; only kit_lab05_worker and
 * kit_lab05_tiny (below) write the stamps, each with a seal keyed by a number drawn for the round.
 * After every round the harness reads the table back and checks it against what it set, and checks
 * every stamp's seal and length; what does not match is reported as tampered evidence. A launch
 * with an index outside the job runs nothing and is counted ("stray").
 *
 * Part B's reference wait: on the student's side, before the threads start, the kit launches a
 * kernel of its own, twice as long as the longest thread's, into a stream of its own, and one more
 * host thread of the kit's waits for that stream alone, next to the student's threads. Its lateness
 * is what a correct wait costs on this host in this run; a thread that waits for the whole device
 * returns only after the kit's kernel has ended, at least the gap between the two kernels' ends late.
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
#include "kit_device.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"

#define MAX_KERNELS (2 * MAX_STREAMS) /* Part A: workers and tiny kernels */
#define MAX_REPEATS 51
#define MAX_DELAY_US 100000
#define CALIBRATION_ROUNDS 7
/* Counted rounds of the kit's legacy way. It is the baseline of the span ratios and the kit's premise
 * that the legacy default stream serializes, not the student's work: its kernels run one after another,
 * so its span is the sum of their lengths and varies by microseconds between rounds, and with every
 * round it took most of a case's time on the GPU (the sum of every kernel's length, where the student's
 * way takes the longest one). Two rounds keep a best of two for a host that stalls one. */
#define LEGACY_ROUNDS 2
/* The warm-up round's kernels, in us: it loads the modules and makes the first streams and threads of
 * both ways, which takes the same calls at any length, and counts for nothing. With the job's lengths it
 * took over a quarter of a case's rounds on an H200 (the legacy way's sum of lengths once more; RESULTS.md,
 * "Lab 05: a warm-up round of short kernels"). */
#define WARM_UP_SPIN_US 50LL
#define TEXT_OF(x) #x /* a macro's value as text, for --help */
#define VALUE_TEXT(x) TEXT_OF(x)
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

/* One kernel's record, written by the kit's device code only. Times are %globaltimer nanoseconds. */
typedef struct {
    unsigned long long start_ns;
    unsigned long long end_ns;
    unsigned int runs; /* how many launches ran this kernel: exactly 1 when all is well */
    unsigned int sm;   /* the SM that ran it, for the curious */
    unsigned int threads, blocks; /* the launch's block and grid size: the kit checks the shapes */
    long long length_ns;     /* how long it spun: the job's length plus the kit's delay */
    unsigned long long seal; /* seal_of(record): the kit wrote it */
} kit_stamp_t;

/* One round of one part on one side: every kernel's stamps (with its length, the kit's delay
 * included), the host's times of the calls' returns, and what the evidence checks found. */
typedef struct {
    int n_workers;                     /* streams (Part A) or threads (Part B) */
    int n_default;                     /* Part A: tiny kernels on the default stream; Part B: 0 */
    kit_stamp_t stamps[MAX_KERNELS];   /* workers first, then the tiny kernels */
    long long returned_ns[MAX_THREADS]; /* host clock when the call returned: Part A [0] (many_streams),
                                          Part B each thread's */
    long long started_ns[MAX_THREADS]; /* Part B: host clock when each thread left the barrier, before
                                          your call (0 in Part A) */
    long long offset_ns;               /* host clock minus %globaltimer, calibrated before the round */
    unsigned int stray;                /* launches whose index the round does not have */
    int tampered;                      /* the round's table or stamps differ from what the kit wrote */
    char tampered_what[160];           /* the first difference found */
    /* Part B, the student's side: the kit's reference kernel and its own thread's wait */
    int has_reference;
    unsigned long long reference_end_ns;
    long long reference_returned_ns;
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
    int never_overlapped;        /* pairs of workers that ran at the same time in no round where both
                                    were started in time (Part B: by the host, before the other's end) */
    int started_late;            /* Part B: pairs that never overlapped, the host having started one of
                                    them after the other's kernel ended in every round: not judged */
    int never_i, never_j;        /* the first such pair */
    long long stray;             /* over all rounds */
    int tampered;                /* rounds with tampered evidence */
    const char *tampered_what;   /* the first round's difference, or NULL */
    int has_reference;           /* Part B, the student's side: the reference wait ran */
    double reference_best_us;    /* the kit's own wait's lateness, the smallest over rounds */
    double device_gap_us[MAX_THREADS]; /* per thread, the smallest over rounds of (reference kernel's end - own end) */
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

/* ---------------- the kit's device code and memory ---------------- */

#define TINY_SLOT(i) (MAX_STREAMS + (i)) /* the device table: workers [0, MAX_STREAMS), tiny kernels after */

/* What the harness sets before a round: which indices the round's kernels may take, each kernel's
 * length (the job's plus the kit's delay), and the key of the round's seals. */
typedef struct {
    int n_workers, n_tiny;
    long long length_ns[MAX_KERNELS];
    unsigned long long key;
} round_setup_t;

/* Static: out of the student's link scope, and no pointer to them is handed to student code. */
static __device__ round_setup_t d_setup;
static __device__ kit_stamp_t d_stamps[MAX_KERNELS];
static __device__ unsigned int d_stray;
static __device__ unsigned long long d_reference_end_ns; /* Part B's reference kernel */
static __device__ unsigned long long d_calibration_end_ns;

static __host__ __device__ unsigned long long mix64(unsigned long long z) /* splitmix64's finalizer */
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The seal of a record in table slot `slot` under the round's key: every field but runs (a second
 * launch of the same kernel only counts, it never rewrites the record). */
static __host__ __device__ unsigned long long seal_of(const kit_stamp_t *s, int slot, unsigned long long key)
{
    unsigned long long h = mix64(key ^ (unsigned long long)slot);
    h = mix64(h ^ s->start_ns);
    h = mix64(h ^ s->end_ns);
    h = mix64(h ^ (unsigned long long)s->length_ns);
    h = mix64(h ^ (((unsigned long long)s->threads << 32) | s->blocks));
    return mix64(h ^ s->sm);
}

static __device__ __forceinline__ unsigned int kit_smid(void)
{
    unsigned int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

/* One kernel of the round: index-checked, spun for the kit's length, stamped and sealed. Only thread
 * (0, 0, 0) of each block acts, so a launch of more blocks runs the kernel more than once. */
static __device__ void run_kernel(int index, int tiny)
{
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0)
        return;
    if (index < 0 || index >= (tiny ? d_setup.n_tiny : d_setup.n_workers)) {
        atomicAdd(&d_stray, 1u);
        return;
    }
    int slot = tiny ? TINY_SLOT(index) : index;
    long long length = d_setup.length_ns[slot]; /* read before the start stamp: not part of the length */
    unsigned long long start = kit_globaltimer_ns();
    unsigned long long end = kit_spin_ns(start, length); /* its last reading: the end */
    if (atomicAdd(&d_stamps[slot].runs, 1u) != 0)
        return; /* a second run of the same kernel is counted, the first one's record stays */
    kit_stamp_t r;
    r.start_ns = start;
    r.end_ns = end;
    r.runs = 0;
    r.sm = kit_smid();
    r.threads = blockDim.x * blockDim.y * blockDim.z;
    r.blocks = gridDim.x * gridDim.y * gridDim.z;
    r.length_ns = length;
    r.seal = seal_of(&r, slot, d_setup.key);
    kit_stamp_t *out = &d_stamps[slot];
    out->start_ns = r.start_ns;
    out->end_ns = r.end_ns;
    out->sm = r.sm;
    out->threads = r.threads;
    out->blocks = r.blocks;
    out->length_ns = r.length_ns;
    out->seal = r.seal;
}

__device__ void kit_lab05_worker(int index)
{
    run_kernel(index, 0);
}

__device__ void kit_lab05_tiny(int index)
{
    run_kernel(index, 1);
}

/* Part B's reference: one kernel of the kit's, which the kit's own thread waits for. */
static __global__ void reference_kernel(long long length_ns)
{
    unsigned long long start = kit_globaltimer_ns();
    d_reference_end_ns = kit_spin_ns(start, length_ns);
}

static __global__ void calibration_kernel(void)
{
    d_calibration_end_ns = kit_globaltimer_ns();
}

/* ---------------- running the parts ---------------- */

static unsigned long long round_key_state; /* drawn from the host clock: a student cannot know it */

/* The round's table: lengths (job plus delay; extra: n values in the layout of delays_t, workers
 * then tiny kernels, or NULL), indices, a fresh key; cleared stamps and stray count. Written and
 * finished before the student's code runs; *setup keeps what was written, for the check after. */
static void prepare_round(int n_workers, int n_tiny, const long long *job_ns, const long long *extra,
                          round_setup_t *setup)
{
    memset(setup, 0, sizeof *setup);
    setup->n_workers = n_workers;
    setup->n_tiny = n_tiny;
    for (int i = 0; i < n_workers; i++)
        setup->length_ns[i] = job_ns[i] + (extra != NULL ? extra[i] : 0);
    for (int i = 0; i < n_tiny; i++)
        setup->length_ns[TINY_SLOT(i)] = extra != NULL ? extra[n_workers + i] : 0;
    setup->key = mix64(round_key_state += (unsigned long long)host_now_ns() ^ 0x9E3779B97F4A7C15ULL);
    static const kit_stamp_t cleared[MAX_KERNELS] = {};
    static const unsigned int zero = 0;
    KIT_CHECK(cudaMemcpyToSymbol(d_stamps, cleared, sizeof cleared));
    KIT_CHECK(cudaMemcpyToSymbol(d_stray, &zero, sizeof zero));
    KIT_CHECK(cudaMemcpyToSymbol(d_setup, setup, sizeof *setup));
    KIT_CHECK(cudaDeviceSynchronize());
}

static void tampered(round_t *r, const char *what, int tiny, int index)
{
    if (r->tampered++ > 0)
        return;
    if (index < 0)
        snprintf(r->tampered_what, sizeof r->tampered_what, "%s", what);
    else
        snprintf(r->tampered_what, sizeof r->tampered_what, "%s %d: %s", tiny ? "tiny kernel" : "worker", index, what);
}

/* After the round: the stamps into r (workers first, then the tiny kernels), the stray count, and
 * the evidence checked against what the kit wrote. */
static void read_round(round_t *r, const round_setup_t *setup)
{
    round_setup_t seen;
    kit_stamp_t stamps[MAX_KERNELS];
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaMemcpyFromSymbol(&seen, d_setup, sizeof seen));
    KIT_CHECK(cudaMemcpyFromSymbol(stamps, d_stamps, sizeof stamps));
    KIT_CHECK(cudaMemcpyFromSymbol(&r->stray, d_stray, sizeof r->stray));
    r->n_workers = setup->n_workers;
    r->n_default = setup->n_tiny;
    r->tampered = 0;
    r->tampered_what[0] = '\0';
    static const kit_stamp_t unused = {}; /* zero: a slot no kernel of the round may stamp */
    for (int slot = 0; slot < MAX_KERNELS; slot++) {
        const kit_stamp_t *st = &stamps[slot];
        int tiny = slot >= MAX_STREAMS, index = tiny ? slot - MAX_STREAMS : slot;
        if (memcmp(&seen.length_ns[slot], &setup->length_ns[slot], sizeof seen.length_ns[slot]) != 0)
            tampered(r, "its length in the kit's table changed during the round", tiny, index);
        if (index >= (tiny ? setup->n_tiny : setup->n_workers)) {
            if (memcmp(st, &unused, sizeof *st) != 0)
                tampered(r, "a record appeared where no kernel of the round stamps", tiny, index);
            continue;
        }
        r->stamps[tiny ? r->n_workers + index : index] = *st;
        if (st->runs == 0)
            continue;
        if (st->seal != seal_of(st, slot, setup->key))
            tampered(r, "its record does not carry the seal the kit's code wrote", tiny, index);
        else if (st->length_ns != setup->length_ns[slot] || st->end_ns - st->start_ns < (unsigned long long)st->length_ns)
            tampered(r, "its record is shorter than the length the kit set", tiny, index);
    }
    if (memcmp(&seen, setup, sizeof seen) != 0 && r->tampered == 0)
        tampered(r, "the kit's table (indices, seal key) changed during the round", 0, -1);
}

static long long calibrate_offset(void);

static void run_part_a(int side, int n_streams, long long spin_ns, const delays_t *delays, round_t *r)
{
    streams_job_t job;
    job.n_streams = n_streams;
    job.spin_ns = spin_ns;
    long long job_ns[MAX_STREAMS];
    for (int i = 0; i < n_streams; i++)
        job_ns[i] = spin_ns;
    round_setup_t setup;
    r->offset_ns = calibrate_offset();
    prepare_round(n_streams, n_streams, job_ns, delays->part_a, &setup);
    if (side == LEGACY)
        legacy_many_streams(&job);
    else
        many_streams(&job);
    r->returned_ns[0] = host_now_ns(); /* before anything of the kit's waits for the device */
    read_round(r, &setup);
    r->has_reference = 0;
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
        calibration_kernel<<<1, 1, 0, s>>>();
        KIT_CHECK(cudaGetLastError());
        KIT_CHECK(cudaStreamSynchronize(s));
        long long after = host_now_ns();
        unsigned long long end;
        KIT_CHECK(cudaMemcpyFromSymbol(&end, d_calibration_end_ns, sizeof end));
        long long offset = after - (long long)end;
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
    cudaStream_t reference; /* the kit's reference thread: the stream it waits for; else NULL */
} thread_slot_t;

/* When each of Part B's threads left the barrier and when its call returned (host clock): the kit's
 * own, outside the slots the student's calls get a pointer into. */
static long long thread_started_ns[MAX_THREADS + 1], thread_returned_ns[MAX_THREADS + 1];

static void *thread_main(void *arg)
{
    thread_slot_t *slot = (thread_slot_t *)arg;
    int me = slot->job.thread_index;
    pthread_barrier_wait(slot->start); /* all threads launch together */
    thread_started_ns[me] = host_now_ns();
    if (slot->reference != NULL)
        KIT_CHECK(cudaStreamSynchronize(slot->reference)); /* the correct wait, for its own stream */
    else if (slot->side == LEGACY)
        legacy_thread_launch_and_wait(&slot->job);
    else
        thread_launch_and_wait(&slot->job);
    thread_returned_ns[me] = host_now_ns();
    return NULL;
}

static void run_part_b(int side, int n_threads, long long base_ns, const delays_t *delays, round_t *r)
{
    thread_slot_t slots[MAX_THREADS + 1];
    pthread_t threads[MAX_THREADS + 1];
    pthread_barrier_t start;
    long long job_ns[MAX_THREADS], longest = 0;
    for (int i = 0; i < n_threads; i++) {
        job_ns[i] = (long long)(i + 1) * base_ns;
        if (job_ns[i] + delays->part_b[i] > longest)
            longest = job_ns[i] + delays->part_b[i];
    }
    /* The student's side gets the kit's reference thread, one more than the student's threads. */
    int with_reference = side == STUDENT, n_all = n_threads + with_reference;
    cudaStream_t reference = NULL;
    round_setup_t setup;
    r->offset_ns = calibrate_offset();
    prepare_round(n_threads, 0, job_ns, delays->part_b, &setup);
    if (with_reference) {
        /* launched before any student thread starts, so a wait for the whole device includes it */
        KIT_CHECK(cudaStreamCreateWithFlags(&reference, cudaStreamNonBlocking));
        reference_kernel<<<1, 1, 0, reference>>>(2 * longest);
        KIT_CHECK(cudaGetLastError());
    }
    if (pthread_barrier_init(&start, NULL, (unsigned)n_all) != 0) {
        fprintf(stderr, "cannot create a barrier for %d threads\n", n_all);
        exit(1);
    }
    memset(thread_started_ns, 0, sizeof thread_started_ns);
    memset(thread_returned_ns, 0, sizeof thread_returned_ns);
    for (int i = 0; i < n_all; i++) {
        slots[i].job.thread_index = i;
        slots[i].job.spin_ns = i < n_threads ? job_ns[i] : 0;
        slots[i].side = side;
        slots[i].start = &start;
        slots[i].reference = i < n_threads ? NULL : reference;
        if (pthread_create(&threads[i], NULL, thread_main, &slots[i]) != 0) {
            fprintf(stderr, "cannot create host thread %d\n", i);
            exit(1);
        }
    }
    for (int i = 0; i < n_all; i++)
        if (pthread_join(threads[i], NULL) != 0) {
            fprintf(stderr, "cannot join host thread %d\n", i);
            exit(1);
        }
    pthread_barrier_destroy(&start);
    read_round(r, &setup);
    for (int i = 0; i < n_threads; i++) {
        r->returned_ns[i] = thread_returned_ns[i];
        r->started_ns[i] = thread_started_ns[i];
    }
    r->has_reference = with_reference;
    if (with_reference) {
        KIT_CHECK(cudaMemcpyFromSymbol(&r->reference_end_ns, d_reference_end_ns, sizeof r->reference_end_ns));
        r->reference_returned_ns = thread_returned_ns[n_threads];
        KIT_CHECK(cudaStreamDestroy(reference));
    }
}

/* ---------------- summaries ---------------- */

static void summarize(int part, timeline_t *t, int repeats)
{
    double spans[MAX_REPEATS], counts[MAX_REPEATS];
    t->overlapping_pairs = 0;
    t->missing = t->duplicated = t->misshapen = 0;
    t->stray = 0;
    t->tampered = 0;
    t->tampered_what = NULL;
    t->has_reference = 0;
    /* Every pair of workers: did they run at the same time in at least one round? And was there a
     * round where the host started both in time for it (Part B: each thread left the barrier before
     * the other's kernel ended)? A busy host can start a thread late in every round; a design that
     * serializes two kernels keeps them apart even when both threads started together. */
    static unsigned char overlapped[MAX_STREAMS][MAX_STREAMS], in_time[MAX_STREAMS][MAX_STREAMS];
    memset(overlapped, 0, sizeof overlapped);
    memset(in_time, 0, sizeof in_time);
    for (int k = 0; k < repeats; k++) {
        const round_t *r = &t->rounds[k];
        for (int i = 0; i < r->n_workers; i++)
            for (int j = i + 1; j < r->n_workers; j++) {
                const kit_stamp_t *a = &r->stamps[i], *b = &r->stamps[j];
                if (a->runs == 0 || b->runs == 0)
                    continue;
                if (a->start_ns < b->end_ns && b->start_ns < a->end_ns)
                    overlapped[i][j] = 1;
                long long a_started = r->started_ns[i] - r->offset_ns, b_started = r->started_ns[j] - r->offset_ns;
                if ((r->started_ns[i] == 0 || a_started < (long long)b->end_ns) &&
                    (r->started_ns[j] == 0 || b_started < (long long)a->end_ns))
                    in_time[i][j] = 1;
            }
    }
    t->never_overlapped = t->started_late = 0;
    t->never_i = t->never_j = -1;
    for (int i = 0; i < t->rounds[0].n_workers; i++)
        for (int j = i + 1; j < t->rounds[0].n_workers; j++) {
            if (overlapped[i][j])
                continue;
            if (!in_time[i][j])
                t->started_late++;
            else if (t->never_overlapped++ == 0) {
                t->never_i = i;
                t->never_j = j;
            }
        }
    for (int k = 0; k < repeats; k++) {
        const round_t *r = &t->rounds[k];
        t->stray += r->stray;
        if (r->tampered && t->tampered++ == 0)
            t->tampered_what = r->tampered_what;
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
        /* The reference wait: its best round, and per thread the smallest gap between the reference
         * kernel's end and its own (how late a wait for the whole device is at least). */
        t->has_reference = t->rounds[0].has_reference;
        for (int k = 0; t->has_reference && k < repeats; k++) {
            const round_t *r = &t->rounds[k];
            double ref = (double)(r->reference_returned_ns - r->offset_ns - (long long)r->reference_end_ns) / 1000.0;
            if (k == 0 || ref < t->reference_best_us)
                t->reference_best_us = ref;
            for (int i = 0; i < n; i++) {
                double gap = ((double)(long long)(r->reference_end_ns - r->stamps[i].end_ns)) / 1000.0;
                if (k == 0 || gap < t->device_gap_us[i])
                    t->device_gap_us[i] = gap;
            }
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

static void print_part(int part, timeline_t t[N_SIDES], const int rounds[N_SIDES])
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
        for (int k = 0; k < rounds[s]; k++)
            printf(" %.0f", span_us(&t[s].rounds[k]));
        printf("; kernels at once");
        for (int k = 0; k < rounds[s]; k++)
            printf(" %d", max_concurrent(&t[s].rounds[k]));
        printf("\n");
    }
    for (int s = 0; s < N_SIDES; s++)
        if (t[s].missing || t[s].duplicated || t[s].misshapen)
            printf("  %s: %d kernel(s) never ran, %d ran more than once, %d launched in another shape than "
                   "<<<1, %d>>> (workers) or <<<1, 1>>> (tiny kernels) (over all rounds)\n", side_names[s],
                   t[s].missing, t[s].duplicated, t[s].misshapen, WORKER_THREADS);
    for (int s = 0; s < N_SIDES; s++) {
        if (t[s].stray)
            printf("  %s: %lld launch(es) with an index the job does not have (a stream or thread past the "
                   "job's), over all rounds: they ran nothing\n", side_names[s], t[s].stray);
        if (t[s].tampered)
            printf("  %s: the kit's evidence was tampered with in %d round(s): %s\n", side_names[s], t[s].tampered,
                   t[s].tampered_what);
    }
    if (part == PART_A)
        for (int s = 0; s < N_SIDES; s++) {
            printf("  %s: many_streams returned this long after its last kernel ended (us; negative: before "
                   "it): median %.0f, every round", side_names[s], t[s].return_us_median);
            for (int k = 0; k < rounds[s]; k++)
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
            if (t[s].has_reference) {
                printf("  the kit's own thread, waiting for its own longer kernel beside yours: %.0f us late in its "
                       "best round; a wait for the whole device would be at least this late (us, per thread):\n   ",
                       t[s].reference_best_us);
                for (int i = 0; i < t[s].rounds[0].n_workers; i++)
                    printf(" t%d %.0f", i, t[s].device_gap_us[i]);
                printf("\n");
            }
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
    kit_json_int(j, "pairs_never_overlapping", t->never_overlapped); /* of workers, over all rounds */
    kit_json_int(j, "pairs_started_late", t->started_late);
    kit_json_begin_array(j, "first_pair_never_overlapping");
    if (t->never_overlapped) {
        kit_json_int(j, NULL, t->never_i);
        kit_json_int(j, NULL, t->never_j);
    }
    kit_json_end_array(j);
    kit_json_int(j, "stray", t->stray);
    kit_json_int(j, "tampered", t->tampered);
    kit_json_string(j, "tampered_what", t->tampered_what != NULL ? t->tampered_what : "");
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
        if (t->has_reference) {
            /* The kit's own correct wait in the same rounds (its best), and per thread the smallest
             * gap between the kit's longer kernel's end and the thread's own kernel's end. */
            kit_json_double(j, "reference_lateness_us", t->reference_best_us);
            kit_json_begin_array(j, "reference_lateness_runs_us");
            for (int k = 0; k < repeats; k++) {
                const round_t *rk = &t->rounds[k];
                kit_json_double(j, NULL, (double)(rk->reference_returned_ns - rk->offset_ns -
                                                  (long long)rk->reference_end_ns) / 1000.0);
            }
            kit_json_end_array(j);
            kit_json_begin_array(j, "device_wait_gap_us");
            for (int i = 0; i < r->n_workers; i++)
                kit_json_double(j, NULL, t->device_gap_us[i]);
            kit_json_end_array(j);
        }
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
        kit_json_double(j, "length_us", (double)st->length_ns / 1000.0); /* the job's length plus the kit's delay */
        if (part == PART_B)
            kit_json_double(j, "wait_returned_us",
                            (double)(r->returned_ns[i] - r->offset_ns - (long long)t0) / 1000.0);
        kit_json_end_object(j);
    }
    kit_json_end_array(j);
    /* The same round for the timeline picture (grader/gradelib/figures.py): the kernels that ran, times
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

static const kit_option_t options[] = {
    {"--streams", "Part A's worker kernels, one per stream", 8, 1, MAX_STREAMS, NULL},
    {"--threads", "Part B's host threads, one kernel each", 8, 1, MAX_THREADS, NULL},
    {"--spin-us", "microseconds each worker kernel of Part A spins", 1000, 1, 100000, NULL},
    {"--thread-spin-us", "Part B: thread i's kernel spins (i + 1) times this many microseconds", 1000, 1, 100000,
     NULL},
    {"--repeats", "rounds of yours after the warm-up (medians); the kit's legacy version runs the first "
     VALUE_TEXT(LEGACY_ROUNDS),
     5, 1, MAX_REPEATS, NULL},
    {"--delay-us", "the kit's hidden delays, up to this many microseconds (0: none; needs --repeats 2 or more)", 0,
     0, MAX_DELAY_US, NULL},
    {"--delay-seed", "the seed the hidden delays are drawn from", 1, 0, 2147483647L, NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): the rounds, the summaries, the document. Every round waits for all its
 * kernels (read_round) and joins its threads; the case frees its memory before it returns, so the
 * next case starts on an idle device. */
static int run_case(int argc, char **argv)
{
    int n_streams = (int)kit_option_long(argc, argv, options, "--streams");
    int n_threads = (int)kit_option_long(argc, argv, options, "--threads");
    long spin_us = kit_option_long(argc, argv, options, "--spin-us");
    long thread_spin_us = kit_option_long(argc, argv, options, "--thread-spin-us");
    int repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    long delay_us = kit_option_long(argc, argv, options, "--delay-us");
    long delay_seed = kit_option_long(argc, argv, options, "--delay-seed");
    if (delay_us > 0 && repeats < 2) { /* both shapes of Part A's delays need a round each */
        fprintf(stderr, "--delay-us needs --repeats 2 or more\n");
        return KIT_EXIT_USAGE;
    }
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));

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
    const int rounds[N_SIDES] = {repeats < LEGACY_ROUNDS ? repeats : LEGACY_ROUNDS, repeats};
    printf("1 warm-up round, then %d rounds of yours, the kit's legacy version before the first %d; medians "
           "below\n\n", rounds[STUDENT], rounds[LEGACY]);
    fflush(stdout);

    /* Round 0 is the warm-up (module loading, first use of streams); rounds 1..rounds[side] count. Its
     * kernels are WARM_UP_SPIN_US long, without the kit's delays (still drawn, so that the counted
     * rounds keep theirs): the same calls, at a fraction of the time the GPU is held alone. */
    unsigned long long delay_state = (unsigned long long)delay_seed;
    for (int k = 0; k <= repeats; k++) {
        delays_t delays;
        round_delays(&delay_state, delay_us * 1000LL, k, n_streams, n_threads, &delays);
        if (k == 0)
            memset(&delays, 0, sizeof delays);
        long long a_ns = (k == 0 ? WARM_UP_SPIN_US : spin_us) * 1000LL;
        long long b_ns = (k == 0 ? WARM_UP_SPIN_US : thread_spin_us) * 1000LL;
        for (int s = 0; s < N_SIDES; s++) {
            if (k > rounds[s])
                continue;
            run_part_a(s, n_streams, a_ns, &delays, &tl[PART_A][s].rounds[k]);
            run_part_b(s, n_threads, b_ns, &delays, &tl[PART_B][s].rounds[k]);
        }
    }
    for (int p = 0; p < N_PARTS; p++)
        for (int s = 0; s < N_SIDES; s++) {
            tl[p][s].rounds += 1; /* drop the warm-up */
            summarize(p, &tl[p][s], rounds[s]);
        }

    printf("Part A (many streams)\n");
    print_part(PART_A, tl[PART_A], rounds);
    printf("\nPart B (many host threads)\n");
    print_part(PART_B, tl[PART_B], rounds);

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
                json_side(&j, side_keys[s], p, &tl[p][s], rounds[s]);
            kit_json_end_object(&j);
        }
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    for (int p = 0; p < N_PARTS; p++)
        for (int s = 0; s < N_SIDES; s++)
            free(tl[p][s].rounds - 1);
    return 0;
}

int main(int argc, char **argv)
{
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", MAX_CONNECTIONS, 0); /* before the CUDA runtime starts */
    /* Host threads that wait sleep instead of spinning (the runtime spins while a process has no
     * more contexts than the host has logical processors): on a busy host, Part B's threads still to
     * launch get the cores that the threads already waiting would spin on. */
    kit_context_flags = cudaDeviceScheduleBlockingSync;
    return kit_harness_main(argc, argv, options, run_case);
}
