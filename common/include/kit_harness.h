/* kit_harness.h - a harness's main: one case from the command line, or the grader's cases one after
 * another in one process, so that they share one CUDA context (making one costs about 0.2 s, and the
 * driver makes them one at a time).
 *
 *   static int run_case(int argc, char **argv) { ...parse options, run, write the document...; return 0; }
 *   int main(int argc, char **argv) { return kit_harness_main(argc, argv, options, run_case); }
 *
 * run_case reads its options with kit_option_* (kit_args.h) from the argv it is given, as a main would,
 * in the one table main passes (options), and writes its result document to --json. It may be called
 * many times in one process: it sets up and tears down everything it uses (device memory, the kit's
 * counters and logs), as must the student code it calls.
 *
 * The grader runs a harness with
 *   --json fd:W --nonce-fd R --cases-fd C
 * C is a pipe holding one line per case: the case's options ("--K 2 --M 32"), all read before the first
 * case runs, until the pipe is closed or a line "kit-end" comes. A line "kit-hold" between two cases
 * makes the run wait there: it writes "kit-hold K" on the channel (K: the cases done) and runs on once
 * the grader writes "kit-go" on C. So one process, one CUDA context, runs a submission's cases that
 * share the GPU and then, once the grader holds the GPU alone, the cases that time something.
 * The channel W then holds
 *   kit-nonce NONCE                    (written once the CUDA context is made, before any case runs; a
 *                                       grader may hold the cases back until it comes: see kit_result.h)
 *   {the document of case 0}
 *   kit-case 0 BEGIN END               (CLOCK_MONOTONIC ns; written once the case's work is done and checked)
 *   {the document of case 1}
 *   kit-case 1 BEGIN END
 *   ...
 *   kit-clock MAIN READY DONE          (when main began, the CUDA context was made, the last case ended)
 * A case counts only with its kit-case line: the driver writes it after cudaDeviceSynchronize() and
 * cudaGetLastError() succeed, so an error a case left behind fails that case, not the next one. When
 * the process dies, the grader runs the cases after the one that died in a fresh process.
 *
 * Process-wide settings. Each case says which value of a device limit (the pending-launch pool, the
 * device heap) it needs with kit_case_limit(), before any launch of its own; value 0 asks for the
 * default, so that every case starts with the limits a fresh process has. The runtime takes a new
 * pending-launch limit between kernels (measured: a later value took effect, up and down; see
 * RESULTS.md), but refuses a new heap size once a kernel that uses malloc has run. A later case whose
 * value the runtime refuses is deferred: its document is
 *   {"kit_deferred": "why"}
 * and the grader runs it in a fresh process.
 *
 * A harness whose cases decide such a value through student code (Lab 04's prepare_cdp sizes the heap)
 * uses kit_harness_main_planned: its plan step sees every case of the process before any kernel runs,
 * so that one value can serve them all. Any case may then be deferred, as long as one case of the
 * process runs (the grader takes a process that deferred every case for one that is not the kit's).
 */
#ifndef KIT_HARNESS_H
#define KIT_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_result.h"

#define KIT_CASE_LINE_MAX 4096
#define KIT_CASE_MAX_ARGS 128
#define KIT_CASE_DEFERRED (-1) /* run_case's return value for a case deferred to a fresh process */
#define KIT_LIMITS 2           /* the limits kit_case_limit knows: the pending-launch pool, the device heap */

/* The options the driver takes for the whole process; no case may name them. */
static const char *const kit_process_options[] = {"--json", "--nonce-fd", "--cases-fd", NULL};

static int kit_case_number;                  /* 0 for the first case this process runs */
static size_t kit_limit_default[KIT_LIMITS]; /* each limit as the fresh context has it */
static char kit_deferred_why[256];           /* set by kit_case_limit when it defers a case */

static inline int kit_limit_slot(enum cudaLimit limit)
{
    if (limit == cudaLimitDevRuntimePendingLaunchCount)
        return 0;
    if (limit == cudaLimitMallocHeapSize)
        return 1;
    fprintf(stderr, "kit_case_limit: a limit the kit does not manage\n");
    exit(KIT_EXIT_USAGE);
}

static inline const char *kit_limit_name(int slot)
{
    return slot == 0 ? "pending-launch limit" : "device heap size";
}

/* The case needs this limit at value (0: the default). Returns 1 when the process has it now (set
 * here if it had another), 0 when the runtime refuses to change it in a later case of the process:
 * run_case then returns KIT_CASE_DEFERRED at once, before any launch. The first case of a process
 * stops on a refusal, as any failed CUDA call. */
static inline int kit_case_limit(enum cudaLimit limit, size_t value)
{
    int slot = kit_limit_slot(limit);
    size_t now = 0;
    if (value == 0)
        value = kit_limit_default[slot];
    KIT_CHECK(cudaDeviceGetLimit(&now, limit));
    if (value == now)
        return 1;
    cudaError_t set = cudaDeviceSetLimit(limit, value);
    if (set == cudaSuccess || kit_case_number == 0) {
        KIT_CHECK(set);
        return 1;
    }
    (void)cudaGetLastError(); /* the refusal is this process's answer, not an error of the case */
    snprintf(kit_deferred_why, sizeof kit_deferred_why, "needs a %s of %zu; this process has %zu (%s)",
             kit_limit_name(slot), value, now, cudaGetErrorName(set));
    return 0;
}

/* Splits line (changed in place) at spaces into args[first..]; returns the new count. */
static inline int kit_split_case_line(char *line, char **args, int first)
{
    int count = first;
    for (char *word = strtok(line, " \t\r\n"); word != NULL; word = strtok(NULL, " \t\r\n")) {
        if (count >= KIT_CASE_MAX_ARGS - 3) {
            fprintf(stderr, "a case line has too many options\n");
            exit(KIT_EXIT_USAGE);
        }
        args[count++] = word;
    }
    return count;
}

/* The process's own limits, as the fresh context has them. */
static inline void kit_read_default_limits(void)
{
    KIT_CHECK(cudaDeviceGetLimit(&kit_limit_default[0], cudaLimitDevRuntimePendingLaunchCount));
    KIT_CHECK(cudaDeviceGetLimit(&kit_limit_default[1], cudaLimitMallocHeapSize));
}

/* Runs one case and, on the grader's channel, closes it with its kit-case line. */
static inline void kit_run_one_case(int argc, char **argv, int (*run_case)(int, char **))
{
    long long begin = kit_clock_now_ns();
    int status = run_case(argc, argv);
    if (status == KIT_CASE_DEFERRED) {
        kit_json_t j;
        const char *json = kit_arg_string(argc, argv, "--json", NULL);
        if (json == NULL) {
            fprintf(stderr, "this case %s: run it on its own\n", kit_deferred_why);
            exit(KIT_EXIT_USAGE);
        }
        printf("case deferred: it %s\n", kit_deferred_why);
        kit_json_open(&j, json);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "kit_deferred", kit_deferred_why);
        kit_json_end_object(&j);
        kit_json_close(&j);
    } else if (status != 0) {
        exit(status);
    }
    /* An error the case left behind (a fault in a grid still running) fails this case, not the next. */
    KIT_CHECK(cudaDeviceSynchronize());
    KIT_CHECK(cudaGetLastError());
    fflush(stdout);
    kit_channel_case_done(kit_case_number, begin, kit_clock_now_ns());
    kit_case_number++;
}

/* A process's cases: each one's argv (the process's --json appended), its line as the grader sent it,
 * and whether the run waits for the grader's go before it (a kit-hold line came before it). */
typedef struct {
    int argc;
    char **argv;
    char *line;
    int hold;
} kit_case_t;

/* The grader's cases pipe, kept open after a kit-end line for its kit-go lines (else NULL). */
static FILE *kit_cases_in;

#define KIT_MAX_CASES 1024

/* Every case line on descriptor cases_fd, read to its end or to a kit-end line before any case runs (a
 * harness with a plan step sees them all first); returns how many. */
static inline int kit_read_cases(long cases_fd, int argc, char **argv, const kit_option_t *options, kit_case_t *cases)
{
    static const char *const json_only[] = {"--json", NULL};
    const char *json = kit_arg_string(argc, argv, "--json", NULL);
    FILE *in = fdopen((int)cases_fd, "r");
    if (in == NULL) {
        fprintf(stderr, "cannot read --cases-fd %ld\n", cases_fd);
        exit(KIT_EXIT_USAGE);
    }
    char line[KIT_CASE_LINE_MAX];
    int n = 0, hold = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        if (strcmp(line, "kit-end\n") == 0) {
            kit_cases_in = in; /* the go lines come later */
            return n;
        }
        if (strcmp(line, "kit-hold\n") == 0) {
            hold = 1;
            continue;
        }
        if (strchr(line, '\n') == NULL && !feof(in)) {
            fprintf(stderr, "a case line is longer than %d characters\n", KIT_CASE_LINE_MAX - 1);
            exit(KIT_EXIT_USAGE);
        }
        if (n == KIT_MAX_CASES) {
            fprintf(stderr, "more than %d cases for one process\n", KIT_MAX_CASES);
            exit(KIT_EXIT_USAGE);
        }
        kit_case_t *c = &cases[n++];
        c->hold = hold;
        hold = 0;
        size_t length = strlen(line);
        c->line = (char *)kit_host_alloc(length + 1);
        memcpy(c->line, line, length + 1);
        char *words = (char *)kit_host_alloc(length + 1); /* split in place, kept for the case's life */
        memcpy(words, line, length + 1);
        c->argv = (char **)kit_host_alloc(KIT_CASE_MAX_ARGS * sizeof(char *));
        c->argv[0] = argv[0];
        c->argc = kit_split_case_line(words, c->argv, 1);
        if (json != NULL) {
            c->argv[c->argc++] = (char *)"--json";
            c->argv[c->argc++] = (char *)json;
        }
        c->argv[c->argc] = NULL;
        kit_options_check(c->argc, c->argv, options, json_only);
    }
    fclose(in);
    return n;
}

/* At a kit-hold line: say so on the channel, then wait for the grader's kit-go (it holds the GPU as the
 * next cases need). A grader that closes the pipe instead ends the run here. */
static inline void kit_wait_for_go(void)
{
    char line[64];
    if (kit_channel != NULL) {
        fprintf(kit_channel, "kit-hold %d\n", kit_case_number);
        if (fflush(kit_channel) != 0)
            kit_json_die("cannot write to the grader's channel");
    }
    if (kit_cases_in == NULL || fgets(line, sizeof line, kit_cases_in) == NULL || strcmp(line, "kit-go\n") != 0) {
        fprintf(stderr, "the grader ended the run at a hold\n");
        exit(KIT_EXIT_USAGE);
    }
}

/* main of a harness whose cases must be seen together before any runs (see the top): plan_case(argc,
 * argv, k) is called for every case k of the process, in order, before the first case runs and before
 * any kernel; it may call the student's host-side preparation and record what it decided. NULL: no
 * plan step. Then each case runs (run_case). options: the case's options (kit_args.h); --help and
 * --describe print them. Every case's options are checked before anything else is done. */
static inline int kit_harness_main_planned(int argc, char **argv, const kit_option_t *options,
                                           int (*plan_case)(int, char **, int), int (*run_case)(int, char **))
{
    static const kit_option_t none[] = {KIT_OPTIONS_END};
    static kit_case_t cases[KIT_MAX_CASES];
    kit_options_answer(argc, argv, options);
    long cases_fd = kit_arg_long(argc, argv, "--cases-fd", -1, 0, 1 << 20);
    kit_options_check(argc, argv, cases_fd < 0 ? options : none, kit_process_options);
    kit_result_take_nonce(argc, argv); /* before any student code runs */
    kit_read_default_limits();
    int n = 1;
    if (cases_fd < 0) {
        cases[0].argc = argc;
        cases[0].argv = argv;
        cases[0].line = NULL;
    } else {
        n = kit_read_cases(cases_fd, argc, argv, options, cases);
    }
    for (int k = 0; plan_case != NULL && k < n; k++) {
        int status = plan_case(cases[k].argc, cases[k].argv, k);
        if (status != 0)
            exit(status);
    }
    for (int k = 0; k < n; k++) {
        if (cases[k].line != NULL && cases[k].hold)
            kit_wait_for_go();
        if (cases[k].line != NULL)
            printf("== case %d: %s", kit_case_number, cases[k].line);
        kit_run_one_case(cases[k].argc, cases[k].argv, run_case);
    }
    kit_channel_close();
    return 0;
}

/* main of a harness (see the top): the process's options, the CUDA context, then each case: the one on
 * the command line, or the grader's from --cases-fd. */
static inline int kit_harness_main(int argc, char **argv, const kit_option_t *options, int (*run_case)(int, char **))
{
    return kit_harness_main_planned(argc, argv, options, NULL, run_case);
}

#endif /* KIT_HARNESS_H */
