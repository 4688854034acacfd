/* Lab 04 harness (kit-owned): generates lines from a seed, runs the student's flat and dynamic
 * tessellations, checks every vertex against a double-precision reference, counts the calls of
 * bezier_point in both runs, reports the limits prepare_cdp left and the heap the worst case needs,
 * measures memory, times the student's version against the kit's flat and NULL-stream versions,
 * and writes the result.
 *
 *   ./bezier [--name value ...] [--json result.json]      (options[] below; ./bezier --help)
 *
 * --bench 1 prints a timing table (flat, CDP in the NULL stream, your CDP version, the kit's
 * fire-and-forget) over several line counts and both workloads instead of one run; with --json, the
 * table is the document (make bench LAB=04; tools/gpu-suite.sh records it for the handouts).
 * --figure-lines N puts the first N lines in the result document ("figure"): control
 * points, vertex count and the vertices the dynamic version computed, from which
 * grader/gradelib/figures.py draws the curves (make run LAB=04 draws them next to the program).
 *
 * The lines, the kit's heap, its own versions for the timing comparisons and the vertex check are in
 * common/src/bezier_lines.cu (Lab 06 uses them too); everything that calls the student's code is here.
 *
 * The grader sends several cases to one process (kit_harness.h). prepare_cdp sets the device heap,
 * and the runtime refuses a new heap size once a kernel that uses malloc has run: the plan step calls
 * prepare_cdp for every case of the process before any kernel runs, records what it left, and the
 * process runs its cases at the largest heap (plan_case, heap_with_margin).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bezier.h"
#include "bezier_lines.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"

#define FLAT_THREADS 128
#define FIGURE_MAX_LINES 400
#define FLAT_MAX_BYTES (1LL << 30)

/* ---- timing ---- */

/* Every run of the student's version in a timing loop (warm-up included) is checked, outside the
 * timed region: a run that left lines without their vertices (state kept from an earlier run, a flag
 * set once) fails the timing check instead of passing with a fast time. */
typedef struct {
    int runs, runs_wrong; /* runs checked, and of those, runs with a line wrong */
    int first_wrong_run;  /* 1-based, warm-up first; 0: none */
    check_t first_wrong;
} timed_checks_t;

typedef struct {
    workload_t *w;
    int version; /* VERSION_* */
    char *pool;  /* vertex blocks come from here while timing */
    unsigned long long pool_size;
    int check_runs; /* check each run of the student's version (not in the bench table: nothing is graded) */
    int launched;   /* runs launched so far, of which the last is not yet checked */
    timed_checks_t checks;
} timed_t;

#define VERSION_FLAT 0
#define VERSION_CDP_NULL 1
#define VERSION_CDP_STUDENT 2
#define VERSION_CDP_FIRE_AND_FORGET 3
#define N_VERSIONS 4
static const char *const version_names[N_VERSIONS] = {"flat (kit)", "CDP, NULL stream (kit)",
                                                      "CDP, yours", "CDP, fire-and-forget (kit)"};

/* Checks the vertices the student's last timed run left in the lines (kit heap blocks from the pool,
 * with their fences), as the checked run's are checked. */
static void check_timed_run(timed_t *t)
{
    if (!t->check_runs || t->launched <= t->checks.runs)
        return;
    check_t c = check_lines(t->w, 1);
    t->checks.runs++;
    if (c.lines_bad) {
        if (t->checks.runs_wrong++ == 0) {
            t->checks.first_wrong_run = t->checks.runs;
            t->checks.first_wrong = c;
        }
    }
}

/* Before each timed run, outside the timed region. The kit's versions need nothing: they write into
 * the kit's own buffer, the same vertices every time. The student's version: the run before is
 * checked first; then the pool is emptied and poisoned (NaN, so no vertex of an earlier run is left
 * to pass for this one's) and the lines handed over as the kit hands them (no vertices), so that
 * every run starts alike; the blocks of the run before are not freed one by one: the pool is reset
 * as a whole. */
static void timed_reset(void *p)
{
    timed_t *t = (timed_t *)p;
    if (t->version == VERSION_CDP_STUDENT) {
        check_timed_run(t);
        KIT_CHECK(cudaMemset(t->pool, 0xff, t->pool_size));
        reset_lines(t->w, 0);
        set_pool(t->pool, t->pool_size);
    }
}

static void timed_launch(void *p)
{
    timed_t *t = (timed_t *)p;
    workload_t *w = t->w;
    t->launched++;
    int parents = (w->n_lines + PARENT_THREADS - 1) / PARENT_THREADS;
    switch (t->version) {
    case VERSION_FLAT:
        kit_flat<<<w->n_lines, FLAT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets,
                                              w->d_out);
        break;
    case VERSION_CDP_NULL:
        kit_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets,
                                             w->d_out, KIT_STREAM_NULL);
        break;
    case VERSION_CDP_STUDENT:
        tessellate_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices);
        break;
    default:
        kit_cdp<<<parents, PARENT_THREADS>>>(w->d_lines, w->n_lines, w->factor, w->max_vertices, w->d_offsets,
                                             w->d_out, KIT_STREAM_FIRE_AND_FORGET);
    }
}

/* Median time of one version. The student's version gets its vertex blocks from a pool the kit
 * allocated beforehand (kit_pool), so that it is timed on its launches, as the kit's CDP versions
 * are (they write into the kit's preallocated buffer). */
static kit_timing_t time_version(workload_t *w, int version, int repeats, timed_checks_t *checks)
{
    timed_t t;
    memset(&t, 0, sizeof t);
    t.w = w;
    t.version = version;
    t.check_runs = checks != NULL;
    if (version == VERSION_CDP_STUDENT) {
        t.pool_size = (unsigned long long)w->total * sizeof(float2) +
                      (unsigned long long)w->n_lines * (KIT_ALLOC_OVERHEAD + 16);
        KIT_CHECK(cudaMalloc((void **)&t.pool, t.pool_size));
    }
    kit_timing_t result = kit_time_kernel(timed_reset, timed_launch, &t, 1, repeats);
    if (version == VERSION_CDP_STUDENT) {
        check_timed_run(&t); /* the last run */
        set_pool(NULL, 0);
        reset_lines(w, 0); /* no line keeps a pointer into the pool, freed next */
        KIT_CHECK(cudaFree(t.pool));
    }
    if (checks != NULL)
        *checks = t.checks;
    return result;
}

/* The bench table: every version over line counts and both workloads, printed; with json_path, also
 * written as a document ("bench": the rows, each version's median) that the kit's pages quote. */
static void bench(int max_heavy, float factor, unsigned long long seed, int repeats, const char *json_path)
{
    static const int line_counts[] = {1024, 4096, 16384};
    kit_json_t j;
    if (json_path != NULL) {
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "04-bezier-streams");
        kit_json_device(&j);
        kit_json_begin_object(&j, "bench");
        kit_json_int(&j, "repeats", repeats);
        kit_json_int(&j, "parent_threads", PARENT_THREADS);
        kit_json_double(&j, "factor", factor);
        kit_json_uint(&j, "seed", seed);
        kit_json_begin_array(&j, "versions");
        for (int v = 0; v < N_VERSIONS; v++)
            kit_json_string(&j, NULL, version_names[v]);
        kit_json_end_array(&j);
        kit_json_begin_array(&j, "rows");
    }
    printf("median of %d runs, ms; one child grid per line in the CDP versions, parents in blocks of %d;\n"
           "vertex memory preallocated by the kit (yours: blocks from its pool; the kit's: its own buffer),\n"
           "so the CDP versions are timed on their launches\n",
           repeats, PARENT_THREADS);
    printf("%-9s %6s %8s", "workload", "lines", "vertices");
    for (int v = 0; v < N_VERSIONS; v++)
        printf(" | %26s", version_names[v]);
    printf("\n");
    for (int heavy = 0; heavy <= 1; heavy++) {
        for (int k = 0; k < 3; k++) {
            workload_t w;
            workload_init(&w, line_counts[k], heavy, heavy ? max_heavy : 32, factor, seed, 0);
            printf("%-9s %6d %8lld", heavy ? "heavy" : "chained", w.n_lines, w.total);
            if (json_path != NULL) {
                kit_json_begin_object(&j, NULL);
                kit_json_string(&j, "workload", heavy ? "heavy" : "chained");
                kit_json_int(&j, "lines", w.n_lines);
                kit_json_int(&j, "max_vertices", w.max_vertices);
                kit_json_int(&j, "vertices", w.total);
                kit_json_begin_array(&j, "median_ms");
            }
            for (int v = 0; v < N_VERSIONS; v++) {
                double ms = time_version(&w, v, repeats, NULL).median_ms;
                printf(" | %26.3f", ms);
                if (json_path != NULL)
                    kit_json_double(&j, NULL, ms);
            }
            if (json_path != NULL) {
                kit_json_end_array(&j);
                kit_json_end_object(&j);
            }
            printf("\n");
            fflush(stdout);
            workload_free(&w);
        }
    }
    if (json_path != NULL) {
        kit_json_end_array(&j);
        kit_json_end_object(&j);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
}

/* bezier_point calls of one run, against the vertices it needed (one call each). */
static void print_point_calls(const char *what, point_calls_t p, long long total)
{
    printf("  %s: %llu bezier_point calls for %lld vertices", what, p.calls, total);
    if (p.out_of_range)
        printf(", %llu of them for a vertex index outside [0, n)", p.out_of_range);
    printf("\n");
}

static void json_point_calls(kit_json_t *j, const char *key, point_calls_t p)
{
    kit_json_begin_object(j, key);
    kit_json_uint(j, "calls", p.calls);
    kit_json_uint(j, "out_of_range", p.out_of_range);
    kit_json_end_object(j);
}

/* A coordinate for the figure: 4 decimals are finer than the picture shows and keep the document
 * small; a value that is not finite (a wrong submission's vertex) is written as null. */
static void json_coordinate(kit_json_t *j, double v)
{
    if (isfinite(v))
        kit_json_double(j, NULL, round(v * 1e4) / 1e4);
    else
        kit_json_null(j, NULL);
}

/* "figure": the first n lines, each with its control points, its vertex count (the kit's
 * vertex_count: the colour) and the vertices the dynamic version left, as its check_lines gathered
 * them (none for a line without vertices or with a wrong count). The flat version is checked
 * before the dynamic one, so those are still there at the end, unless the case also times: each timed
 * run of the dynamic version is checked too, and the figure then shows the last one's (the same
 * vertices, where every run is right). */
static void json_figure(kit_json_t *j, const workload_t *w, int n)
{
    kit_json_begin_object(j, "figure");
    kit_json_string(j, "from", "cdp");
    kit_json_int(j, "min_vertices", MIN_VERTICES);
    kit_json_int(j, "max_vertices", w->max_vertices);
    kit_json_begin_array(j, "lines");
    for (int l = 0; l < n; l++) {
        kit_json_begin_object(j, NULL);
        kit_json_begin_array(j, "points");
        for (int k = 0; k < 3; k++) {
            kit_json_begin_array(j, NULL);
            json_coordinate(j, w->h_lines[l].cp[k].x);
            json_coordinate(j, w->h_lines[l].cp[k].y);
            kit_json_end_array(j);
        }
        kit_json_end_array(j);
        kit_json_int(j, "count", w->h_counts[l]);
        kit_json_begin_array(j, "vertices");
        if (line_gathered(w, l))
            for (int i = 0; i < w->h_counts[l]; i++) {
                float2 p = w->h_out[w->h_offsets[l] + i];
                kit_json_begin_array(j, NULL);
                json_coordinate(j, p.x);
                json_coordinate(j, p.y);
                kit_json_end_array(j);
            }
        kit_json_end_array(j);
        kit_json_end_object(j);
    }
    kit_json_end_array(j);
    kit_json_end_object(j);
}

/* --workload's words: the index is workload_init's heavy. */
static const char *const workload_names[] = {"chained", "heavy", NULL};

static const kit_option_t options[] = {
    {"--lines", "lines of the workload", 1000, 1, MAX_LINES, NULL},
    {"--workload", "the lines: the textbook's chain, or one line in 256 at --max and the rest short", 0, 0, 0,
     workload_names},
    {"--factor", "a line's vertex count is its curvature times this, clamped", 16, 1, 1000000, NULL},
    {"--max", "the most vertices a line may have", 32, MIN_VERTICES, MAX_MAX_VERTICES, NULL},
    {"--seed", "the seed the lines are generated from", 1, 0, 2000000000L, NULL},
    {"--repeats", "timed runs of each version (medians; 0: no timings)", 0, 0, 100, NULL},
    {"--figure-lines", "the first lines put in the document's figure (0: none)", 0, 0, FIGURE_MAX_LINES, NULL},
    {"--bench", "1: the timing table of make bench instead", 0, 0, 1, NULL},
    KIT_OPTIONS_END};

/* A case's options. */
typedef struct {
    int n_lines, max_vertices, repeats, bench_mode, figure_lines, heavy;
    float factor;
    unsigned long long seed;
    const char *workload_name, *json_path;
} options_t;

static void read_options(int argc, char **argv, options_t *o)
{
    o->n_lines = (int)kit_option_long(argc, argv, options, "--lines");
    o->heavy = kit_option_word(argc, argv, options, "--workload");
    o->workload_name = workload_names[o->heavy];
    o->max_vertices = (int)kit_option_long(argc, argv, options, "--max");
    o->factor = (float)kit_option_long(argc, argv, options, "--factor");
    o->seed = (unsigned long long)kit_option_long(argc, argv, options, "--seed");
    o->repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    o->bench_mode = (int)kit_option_long(argc, argv, options, "--bench");
    o->figure_lines = (int)kit_option_long(argc, argv, options, "--figure-lines");
    o->json_path = kit_arg_string(argc, argv, "--json", NULL);
}

/* What prepare_cdp decided for each case of the process, each from the limits a fresh process has,
 * in the plan step (kit_harness.h) before any kernel ran. The runtime fixes the heap once a kernel that
 * uses malloc has run, so the process runs its cases at one heap: the largest prepare_cdp asked for. */
typedef struct {
    int not_run;          /* the GPU has too little free memory for the case's worst case */
    size_t free_bytes;    /* the GPU's free memory when the case was planned */
    long long bound;      /* the most vertices the case can need (prepare_cdp's max_total_vertices) */
    long long heap_need;  /* the heap that worst case needs: every vertex, and a header and fence per line */
    size_t pending, heap; /* the limits prepare_cdp left */
} case_plan_t;
static case_plan_t plans[KIT_MAX_CASES];
static size_t process_heap; /* the largest heap of the process's cases; 0 until the first case sets it */

/* The heap the reference asks for a worst case: twice it and 32 MiB, for the device allocator's own
 * bookkeeping. No allocation of the reference failed at that heap in any recorded run, so a case whose
 * heap has that margin is run at the process's larger heap; one with less is run at exactly its own
 * heap (deferred, unless it is the process's largest, to a process where it is). */
static long long heap_with_margin(long long heap_need)
{
    return 2 * heap_need + (32LL << 20);
}

static int plan_case(int argc, char **argv, int k)
{
    options_t o;
    read_options(argc, argv, &o);
    case_plan_t *p = &plans[k];
    memset(p, 0, sizeof *p);
    p->bound = max_total_vertices(o.n_lines, o.heavy, o.max_vertices);
    p->heap_need = p->bound * (long long)sizeof(float2) + (long long)o.n_lines * KIT_ALLOC_OVERHEAD;
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, kit_limit_default[0]));
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, kit_limit_default[1]));
    /* A case whose worst case a small GPU cannot hold (a heap of twice it, as the reference asks) is
     * left out there, with a document that says so, rather than failed. */
    size_t total_bytes = 0;
    KIT_CHECK(cudaMemGetInfo(&p->free_bytes, &total_bytes));
    if (!o.bench_mode && 2.0 * (double)p->heap_need + (1 << 30) > (double)p->free_bytes) {
        p->not_run = 1;
        return 0;
    }
    /* Your host-side preparation, before any launch: limits are read when the device runtime starts. */
    if (o.bench_mode) {
        long long heaviest = max_total_vertices(16384, 1, o.max_vertices);
        prepare_cdp(16384, heaviest > 16384LL * 32 ? heaviest : 16384LL * 32);
    } else {
        prepare_cdp(o.n_lines, p->bound);
    }
    KIT_CHECK(cudaDeviceGetLimit(&p->pending, cudaLimitDevRuntimePendingLaunchCount));
    KIT_CHECK(cudaDeviceGetLimit(&p->heap, cudaLimitMallocHeapSize));
    if (p->heap > process_heap)
        process_heap = p->heap;
    return 0;
}

/* One case (kit_harness.h): the checks, the timings, the document. Everything it allocates is freed
 * before it returns, and what the student's free step left in the heap; the kit's device counters,
 * launch log and pool are set before each use. */
static int run_case(int argc, char **argv)
{
    options_t o;
    read_options(argc, argv, &o);
    int n_lines = o.n_lines, max_vertices = o.max_vertices, repeats = o.repeats, figure_lines = o.figure_lines;
    int heavy = o.heavy;
    float factor = o.factor;
    unsigned long long seed = o.seed;
    const char *workload_name = o.workload_name, *json_path = o.json_path;
    const case_plan_t *plan = &plans[kit_case_number];
    long long bound = plan->bound, heap_need = plan->heap_need;
    static int heap_set;
    if (!heap_set) { /* before the process's first kernel */
        KIT_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, process_heap ? process_heap : kit_limit_default[1]));
        heap_set = 1;
    }
    if (plan->not_run) {
        printf("not run: the worst case needs a heap of %.1f GiB (twice that with the reference's margin); "
               "this GPU has %.1f GiB free\n", heap_need / 1073741824.0, plan->free_bytes / 1073741824.0);
        if (json_path != NULL) {
            kit_json_t j;
            kit_json_open(&j, json_path);
            kit_json_begin_object(&j, NULL);
            kit_json_string(&j, "lab", "04-bezier-streams");
            kit_json_string(&j, "not_run", "the GPU has too little free memory for this case's worst case");
            kit_json_int(&j, "heap_need_bytes", heap_need);
            kit_json_uint(&j, "free_bytes", plan->free_bytes);
            kit_json_end_object(&j);
            kit_json_close(&j);
        }
        return 0;
    }
    if (plan->heap != process_heap && (long long)plan->heap < heap_with_margin(heap_need)) {
        snprintf(kit_deferred_why, sizeof kit_deferred_why, "runs at exactly the heap prepare_cdp asked for, "
                 "%zu bytes (less than twice the worst case and 32 MiB); this process has %zu", plan->heap,
                 process_heap);
        return KIT_CASE_DEFERRED;
    }
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, plan->pending))
        return KIT_CASE_DEFERRED;
    /* kit_malloc_vertices takes blocks from the device heap, as in a fresh process, not from a pool. */
    set_pool(NULL, 0);

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t pending = plan->pending, heap = plan->heap;
    printf("device: %s (compute capability %d.%d); prepare_cdp: pending-launch limit %zu, device heap %.1f MiB "
           "(run at %.1f MiB, the largest of this process's cases)\n", prop.name, prop.major, prop.minor, pending,
           heap / 1048576.0, process_heap / 1048576.0);
    if (o.bench_mode) {
        bench(max_vertices, factor, seed, repeats > 0 ? repeats : 5, json_path);
        return 0;
    }
    printf("  for %d lines: at least %d pending launches, and a heap of at least %.1f MiB (%lld vertices at most, "
           "%d bytes of kit header and fence per line)\n", n_lines, n_lines, heap_need / 1048576.0, bound,
           KIT_ALLOC_OVERHEAD);

    long long worst_bytes = (long long)n_lines * max_vertices * (long long)sizeof(float2);
    /* The flat version needs the worst case for every line; past FLAT_MAX_BYTES it is not run. */
    int run_flat = worst_bytes <= FLAT_MAX_BYTES;
    workload_t w;
    workload_init(&w, n_lines, heavy, max_vertices, factor, seed, run_flat);
    printf("%d %s lines, factor %g, max %d: %lld vertices in all\n", n_lines, workload_name, factor, max_vertices,
           w.total);

    /* 1. flat */
    kit_launch_log_reset();
    check_t flat;
    memset(&flat, 0, sizeof flat);
    flat.first_bad_line = -1;
    point_calls_t flat_points = {0, 0};
    if (run_flat) {
        reset_lines(&w, 1);
        point_calls_start();
        tessellate_flat<<<n_lines, FLAT_THREADS>>>(w.d_lines, n_lines, factor, max_vertices);
        KIT_CHECK_KERNEL();
        flat_points = point_calls_stop();
        flat = check_lines(&w, 0);
        print_check("flat", flat, n_lines);
        print_point_calls("flat", flat_points, w.total);
    } else {
        printf("  flat: not run (its worst-case arrays would take %.1f GiB)\n", worst_bytes / 1073741824.0);
    }
    kit_launch_log_t flat_log = kit_launch_log_read();

    /* 2-4. dynamic */
    reset_lines(&w, 0);
    reset_heap();
    heap_blocks_track(2 * (unsigned int)n_lines + 1024);
    kit_launch_log_reset();
    point_calls_start();
    grid_probe_start(&w);
    tessellate_cdp<<<(n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(w.d_lines, n_lines, factor,
                                                                                      max_vertices);
    KIT_CHECK_KERNEL();
    point_calls_t cdp_points = point_calls_stop();
    grid_census_t cdp_grids = grid_probe_stop();
    kit_launch_log_t cdp_log = kit_launch_log_read();
    check_t cdp = check_lines(&w, 1);
    print_check("dynamic", cdp, n_lines);
    print_point_calls("dynamic", cdp_points, w.total);
    kit_print_launch_log("  ", cdp_log);
    printf("  child grids that ran: %d, computing %d of %d lines (the parent grids, which counted %d lines: %d)\n",
           cdp_grids.child_grids, cdp_grids.lines_in_child, n_lines, cdp_grids.lines_counted,
           cdp_grids.counting_grids);
    heap_stats_t allocated = read_heap();
    printf("  device heap: %u blocks, %llu bytes asked for (exact need %lld; the flat worst case %lld); "
           "%u allocations failed\n", allocated.allocations, allocated.bytes_requested,
           w.total * (long long)sizeof(float2), worst_bytes, allocated.alloc_failures);

    /* 5. free */
    free_vertices<<<(n_lines + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(w.d_lines, n_lines);
    KIT_CHECK_KERNEL();
    heap_stats_t freed = read_heap();
    printf("  freed: %u of %u blocks", freed.frees, freed.allocations);
    if (freed.bad_frees || freed.free_failures)
        printf(" (%u frees of blocks not from kit_malloc_vertices, %u failed)", freed.bad_frees, freed.free_failures);
    printf("\n");
    /* The blocks free_vertices left are counted above (freed against allocated), which is what the
     * grader judges; the kit frees them now, so that the next case of this process finds the heap whole.
     * The timing runs below take their vertex blocks from the kit's pool, not the heap, and start from
     * lines without vertices. */
    unsigned int left = heap_blocks_free_left();
    if (left)
        printf("  the kit freed the %u blocks left in the heap\n", left);

    kit_timing_t times[N_VERSIONS];
    timed_checks_t student_checks;
    memset(times, 0, sizeof times);
    memset(&student_checks, 0, sizeof student_checks);
    if (repeats > 0) {
        for (int v = 0; v < N_VERSIONS; v++) {
            times[v] = time_version(&w, v, repeats, v == VERSION_CDP_STUDENT ? &student_checks : NULL);
            printf("  %-28s median %.3f ms (min %.3f, max %.3f)\n", version_names[v], times[v].median_ms,
                   times[v].min_ms, times[v].max_ms);
        }
        printf("  your timed runs: %d checked (1 warm-up, %d timed), %d with lines wrong\n", student_checks.runs,
               repeats, student_checks.runs_wrong);
        if (student_checks.runs_wrong) {
            char what[64];
            snprintf(what, sizeof what, "timed run %d", student_checks.first_wrong_run);
            print_check(what, student_checks.first_wrong, n_lines);
        }
    }

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "04-bezier-streams");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "lines", n_lines);
        kit_json_string(&j, "workload", workload_name);
        kit_json_double(&j, "factor", factor);
        kit_json_int(&j, "max", max_vertices);
        kit_json_int(&j, "seed", (long long)seed);
        kit_json_int(&j, "repeats", repeats);
        kit_json_end_object(&j);
        kit_json_uint(&j, "pending_launch_limit", pending);
        kit_json_uint(&j, "heap_bytes", heap);
        kit_json_int(&j, "max_total_vertices", bound);
        kit_json_int(&j, "heap_need_bytes", heap_need);
        kit_json_int(&j, "total_vertices", w.total);
        kit_json_int(&j, "exact_bytes", w.total * (long long)sizeof(float2));
        kit_json_int(&j, "worst_case_bytes", worst_bytes);
        json_check(&j, "flat", flat);
        kit_json_bool(&j, "flat_ran", run_flat);
        json_point_calls(&j, "flat_point_calls", flat_points);
        kit_json_launch_log(&j, "launch_log", flat_log);
        json_check(&j, "cdp", cdp);
        json_point_calls(&j, "cdp_point_calls", cdp_points);
        kit_json_launch_log(&j, "cdp_log", cdp_log);
        json_grid_census(&j, "cdp_grids", cdp_grids);
        kit_json_begin_object(&j, "heap");
        kit_json_uint(&j, "allocations", allocated.allocations);
        kit_json_uint(&j, "alloc_failures", allocated.alloc_failures);
        kit_json_uint(&j, "bytes_requested", allocated.bytes_requested);
        kit_json_uint(&j, "frees", freed.frees);
        kit_json_uint(&j, "bad_frees", freed.bad_frees);
        kit_json_uint(&j, "free_failures", freed.free_failures);
        kit_json_end_object(&j);
        if (repeats > 0) {
            static const char *const keys[N_VERSIONS] = {"flat", "cdp_null", "cdp_student", "cdp_fire_and_forget"};
            kit_json_begin_object(&j, "timing_ms");
            for (int v = 0; v < N_VERSIONS; v++)
                kit_json_double(&j, keys[v], times[v].median_ms);
            kit_json_end_object(&j);
            /* Every run of the student's version in its timing loop, checked as the checked run is. */
            kit_json_begin_object(&j, "timed_runs_checked");
            kit_json_int(&j, "runs", student_checks.runs);
            kit_json_int(&j, "warmup", 1);
            kit_json_int(&j, "runs_wrong", student_checks.runs_wrong);
            kit_json_int(&j, "first_wrong_run", student_checks.first_wrong_run);
            json_check(&j, "first_wrong", student_checks.first_wrong);
            kit_json_end_object(&j);
        }
        if (figure_lines > 0)
            json_figure(&j, &w, figure_lines < n_lines ? figure_lines : n_lines);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    workload_free(&w);
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main_planned(argc, argv, options, plan_case, run_case);
}
