/* kit_result.h - the harness's result document: one JSON object written to the path the grader
 * passes with --json. The grader never parses a harness's stdout; stdout is for people.
 *
 *   kit_json_t j;
 *   kit_json_open(&j, path);
 *   kit_json_begin_object(&j, NULL);
 *     kit_json_int(&j, "K", k);
 *     kit_json_begin_array(&j, "shapes"); ... kit_json_end_array(&j);
 *   kit_json_end_object(&j);
 *   kit_json_close(&j);
 *
 * Keys are NULL inside arrays. The document is written to PATH.tmp and renamed to PATH by
 * kit_json_close, so a harness that dies half-way leaves no half-written result behind.
 *
 * The grader's channel. The grader does not read files a run leaves behind: it runs a harness with
 *   --json fd:W --nonce-fd R
 * where W is the write end of a pipe only the grader reads and R a pipe holding one line, a nonce
 * drawn fresh for this run. main calls kit_result_take_nonce(argc, argv) first, before any student
 * code runs; once the CUDA context is made, it writes "kit-nonce NONCE" as the channel's first line. A printed pass line or a result
 * file written by student code carries no valid nonce on the channel, and the grader ignores it; a
 * document replayed from another run carries another run's nonce.
 *
 * The channel holds one document per case, each followed by its kit-case line, and ends with
 *   kit-clock MAIN READY DONE
 * (kit_harness.h says how the cases come and go.) CLOCK_MONOTONIC nanoseconds (the clock the grader
 * reads): when main began, when the CUDA context was made (kit_result_take_nonce makes it, before any
 * student code runs) and when the last case was done. The grader splits a run's wall time with them:
 * start, context, each case, exit. They decide nothing.
 */
#ifndef KIT_RESULT_H
#define KIT_RESULT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kit_args.h"
#include "kit_check.h"

#define KIT_JSON_MAX_DEPTH 16
#define KIT_JSON_MAX_PATH 4096
#define KIT_NONCE_MAX 128
#define KIT_CHANNEL_PREFIX "fd:"

/* This run's nonce, read from the grader before any student code runs; empty when run by hand. */
static char kit_result_nonce[KIT_NONCE_MAX];
/* The grader's channel, opened by kit_result_take_nonce (NULL when the run writes to a file or not at
 * all), and the --json value that names it. */
static FILE *kit_channel;
static char kit_channel_path[64];
/* kit-clock's first two times (see above); 0 when run by hand. */
static long long kit_clock_main_ns, kit_clock_ready_ns;
/* cudaSetDeviceFlags for the context kit_result_take_nonce makes (0: the runtime's default). A harness
 * sets it in main, before kit_harness_main: the call makes the context, so it belongs to that step. */
static unsigned int kit_context_flags;

static inline void kit_make_context(void)
{
    if (kit_context_flags != 0)
        KIT_CHECK(cudaSetDeviceFlags(kit_context_flags));
    KIT_CHECK(cudaFree(0));
}

static inline long long kit_clock_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

typedef struct {
    FILE *file;
    char path[KIT_JSON_MAX_PATH];
    char tmp_path[KIT_JSON_MAX_PATH + 8];
    int depth;
    int has_items[KIT_JSON_MAX_DEPTH]; /* a comma is due before the next item at this depth */
    int to_channel;                    /* writing to the grader's pipe, not to a file */
} kit_json_t;

static inline void kit_json_die(const char *what)
{
    fprintf(stderr, "result document: %s\n", what);
    exit(1);
}

/* --json fd:W: the channel's descriptor, or -1 when path names a file. */
static inline long kit_channel_fd(const char *path)
{
    if (strncmp(path, KIT_CHANNEL_PREFIX, strlen(KIT_CHANNEL_PREFIX)) != 0)
        return -1;
    char *end = NULL;
    long fd = strtol(path + strlen(KIT_CHANNEL_PREFIX), &end, 10);
    if (end == path + strlen(KIT_CHANNEL_PREFIX) || *end != '\0' || fd < 0 || fd > (1 << 20))
        kit_json_die("--json fd:N needs a file descriptor number");
    return fd;
}

/* --nonce-fd R: read the grader's one-line nonce from R and close it; with --json fd:W, open the
 * channel; make the CUDA context (its cost is the grader's to see apart from the cases'); then write
 * the nonce line. Call first in main (kit_harness_main does). */
static inline void kit_result_take_nonce(int argc, char **argv)
{
    kit_clock_main_ns = kit_clock_now_ns();
    long fd = kit_arg_long(argc, argv, "--nonce-fd", -1, 0, 1 << 20);
    const char *json = kit_arg_string(argc, argv, "--json", NULL);
    if (fd < 0) {
        if (json != NULL && kit_channel_fd(json) >= 0)
            kit_json_die("--json fd:N needs --nonce-fd");
        kit_make_context();
        kit_clock_ready_ns = kit_clock_now_ns();
        return;
    }
    size_t used = 0;
    while (used + 1 < sizeof kit_result_nonce) {
        ssize_t got = read((int)fd, kit_result_nonce + used, sizeof kit_result_nonce - 1 - used);
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    close((int)fd);
    kit_result_nonce[used] = '\0';
    kit_result_nonce[strcspn(kit_result_nonce, "\r\n")] = '\0';
    if (kit_result_nonce[0] == '\0')
        kit_json_die("--nonce-fd gave no nonce");
    if (json != NULL && kit_channel_fd(json) >= 0) {
        if (strlen(json) >= sizeof kit_channel_path)
            kit_json_die("--json fd:N is too long");
        kit_channel = fdopen((int)kit_channel_fd(json), "w");
        if (kit_channel == NULL)
            kit_json_die("cannot open the grader's channel");
        strcpy(kit_channel_path, json);
    }
    kit_make_context();
    kit_clock_ready_ns = kit_clock_now_ns();
    /* The nonce line says the context is made: a grader that runs the cases with the GPU to itself
     * hands them over only now, so that the hold is not spent making the context. */
    if (kit_channel != NULL) {
        fprintf(kit_channel, "kit-nonce %s\n", kit_result_nonce);
        fflush(kit_channel);
    }
}

static inline void kit_json_open(kit_json_t *j, const char *path)
{
    memset(j, 0, sizeof *j);
    if (kit_channel_fd(path) >= 0) {
        if (kit_channel == NULL || strcmp(path, kit_channel_path) != 0)
            kit_json_die("--json fd:N is the grader's channel: kit_result_take_nonce opens it");
        j->file = kit_channel;
        j->to_channel = 1;
        return;
    }
    if (strlen(path) >= KIT_JSON_MAX_PATH)
        kit_json_die("path too long");
    strcpy(j->path, path);
    snprintf(j->tmp_path, sizeof j->tmp_path, "%s.tmp", path);
    j->file = fopen(j->tmp_path, "w");
    if (j->file == NULL)
        kit_json_die("cannot open the output file");
}

static inline void kit_json_string_literal(kit_json_t *j, const char *s)
{
    fputc('"', j->file);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(j->file, "\\%c", c);
        else if (c < 0x20)
            fprintf(j->file, "\\u%04x", c);
        else
            fputc(c, j->file);
    }
    fputc('"', j->file);
}

/* Comma and key before a new item. */
static inline void kit_json_item(kit_json_t *j, const char *key)
{
    if (j->has_items[j->depth])
        fputc(',', j->file);
    j->has_items[j->depth] = 1;
    if (key != NULL) {
        kit_json_string_literal(j, key);
        fputc(':', j->file);
    }
}

static inline void kit_json_open_scope(kit_json_t *j, const char *key, char bracket)
{
    kit_json_item(j, key);
    fputc(bracket, j->file);
    if (++j->depth >= KIT_JSON_MAX_DEPTH)
        kit_json_die("nested too deeply");
    j->has_items[j->depth] = 0;
}

static inline void kit_json_close_scope(kit_json_t *j, char bracket)
{
    if (j->depth == 0)
        kit_json_die("unbalanced end");
    j->depth--;
    fputc(bracket, j->file);
}

static inline void kit_json_begin_object(kit_json_t *j, const char *key) { kit_json_open_scope(j, key, '{'); }
static inline void kit_json_end_object(kit_json_t *j) { kit_json_close_scope(j, '}'); }
static inline void kit_json_begin_array(kit_json_t *j, const char *key) { kit_json_open_scope(j, key, '['); }
static inline void kit_json_end_array(kit_json_t *j) { kit_json_close_scope(j, ']'); }

static inline void kit_json_int(kit_json_t *j, const char *key, long long v)
{
    kit_json_item(j, key);
    fprintf(j->file, "%lld", v);
}

static inline void kit_json_uint(kit_json_t *j, const char *key, unsigned long long v)
{
    kit_json_item(j, key);
    fprintf(j->file, "%llu", v);
}

/* JSON has no NaN or infinity: a value that is not finite (a student's wrong vertex) is written as null. */
static inline void kit_json_double(kit_json_t *j, const char *key, double v)
{
    kit_json_item(j, key);
    if (isfinite(v))
        fprintf(j->file, "%.9g", v);
    else
        fputs("null", j->file);
}

static inline void kit_json_null(kit_json_t *j, const char *key)
{
    kit_json_item(j, key);
    fputs("null", j->file);
}

static inline void kit_json_bool(kit_json_t *j, const char *key, int v)
{
    kit_json_item(j, key);
    fputs(v ? "true" : "false", j->file);
}

static inline void kit_json_string(kit_json_t *j, const char *key, const char *v)
{
    kit_json_item(j, key);
    kit_json_string_literal(j, v);
}

static inline void kit_json_close(kit_json_t *j)
{
    if (j->depth != 0)
        kit_json_die("document closed with open objects");
    fputc('\n', j->file);
    if (j->to_channel) {
        if (fflush(j->file) != 0)
            kit_json_die("cannot write to the grader's channel");
    } else if (fclose(j->file) != 0 || rename(j->tmp_path, j->path) != 0) {
        kit_json_die("cannot write the output file");
    }
    j->file = NULL;
}

/* On the channel: "kit-case K BEGIN END", after case K's document (kit_harness.h). */
static inline void kit_channel_case_done(int k, long long begin_ns, long long end_ns)
{
    if (kit_channel == NULL)
        return;
    fprintf(kit_channel, "kit-case %d %lld %lld\n", k, begin_ns, end_ns);
    if (fflush(kit_channel) != 0)
        kit_json_die("cannot write to the grader's channel");
}

/* On the channel: the kit-clock line, then the channel is closed. */
static inline void kit_channel_close(void)
{
    if (kit_channel == NULL)
        return;
    fprintf(kit_channel, "kit-clock %lld %lld %lld\n", kit_clock_main_ns, kit_clock_ready_ns, kit_clock_now_ns());
    if (fclose(kit_channel) != 0)
        kit_json_die("cannot write to the grader's channel");
    kit_channel = NULL;
}

/* "device": {"name", "cc_major", "cc_minor", "sm_count", "total_memory_bytes", "runtime_version",
 * "driver_version"} */
static inline void kit_json_device(kit_json_t *j)
{
    int dev = 0, runtime = 0, driver = 0;
    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDevice(&dev));
    KIT_CHECK(cudaGetDeviceProperties(&prop, dev));
    KIT_CHECK(cudaRuntimeGetVersion(&runtime));
    KIT_CHECK(cudaDriverGetVersion(&driver));
    kit_json_begin_object(j, "device");
    kit_json_string(j, "name", prop.name);
    kit_json_int(j, "cc_major", prop.major);
    kit_json_int(j, "cc_minor", prop.minor);
    kit_json_int(j, "sm_count", prop.multiProcessorCount);
    kit_json_uint(j, "total_memory_bytes", (unsigned long long)prop.totalGlobalMem);
    kit_json_int(j, "runtime_version", runtime);
    kit_json_int(j, "driver_version", driver);
    kit_json_end_object(j);
}

/* "key": {"checked", "failed", "first_error", "first_error_line", "calls_checked", "calls_failed",
 * "first_call_error", "first_call_error_line"}: the launch log as the grader reads it. */
static inline void kit_json_launch_log(kit_json_t *j, const char *key, kit_launch_log_t log)
{
    kit_json_begin_object(j, key);
    kit_json_uint(j, "checked", log.checked);
    kit_json_uint(j, "failed", log.failed);
    kit_json_string(j, "first_error", log.failed ? cudaGetErrorName((cudaError_t)log.first_error) : "");
    kit_json_int(j, "first_error_line", log.first_error_line);
    kit_json_uint(j, "calls_checked", log.calls_checked);
    kit_json_uint(j, "calls_failed", log.calls_failed);
    kit_json_string(j, "first_call_error",
                    log.calls_failed ? cudaGetErrorName((cudaError_t)log.first_call_error) : "");
    kit_json_int(j, "first_call_error_line", log.first_call_error_line);
    kit_json_end_object(j);
}

/* One line for people: "device launches checked: N, failed: M (first: ...)" and the same for calls. */
static inline void kit_print_launch_log(const char *indent, kit_launch_log_t log)
{
    printf("%sdevice launches checked: %u, failed: %u", indent, log.checked, log.failed);
    if (log.failed)
        printf(" (first: %s at line %d)", cudaGetErrorName((cudaError_t)log.first_error), log.first_error_line);
    printf("\n");
    if (log.calls_checked) {
        printf("%sother device runtime calls checked: %u, failed: %u", indent, log.calls_checked, log.calls_failed);
        if (log.calls_failed)
            printf(" (first: %s at line %d)", cudaGetErrorName((cudaError_t)log.first_call_error),
                   log.first_call_error_line);
        printf("\n");
    }
}

#endif /* KIT_RESULT_H */
