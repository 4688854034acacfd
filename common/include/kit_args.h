/* kit_args.h - the kit's command-line parsing: "--name value" pairs, range-checked.
 *
 * A program's options are declared once, in one table, with their defaults, ranges and meanings:
 *
 *   static const char *const workloads[] = {"chained", "heavy", NULL};
 *   static const kit_option_t options[] = {
 *       {"--K", "children each parent thread launches", 2, 1, 2048, NULL},
 *       {"--workload", "what each line asks of the GPU", 0, 0, 0, workloads}, // default: workloads[0]
 *       KIT_OPTIONS_END};
 *   long k = kit_option_long(argc, argv, options, "--K");
 *   int workload = kit_option_word(argc, argv, options, "--workload");   // an index into workloads
 *
 * The table is the only place: --help prints it for a person, --describe as JSON for the grader
 * (grader/gradelib/harness.py reads it from the built program), and kit_options_check refuses an
 * unknown option or a value outside the table before the program does anything else. A value out of
 * range or not a number exits with KIT_EXIT_USAGE and says which and why.
 */
#ifndef KIT_ARGS_H
#define KIT_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_check.h"

static inline const char *kit_arg_string(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

static inline long kit_arg_long(int argc, char **argv, const char *name, long fallback, long min, long max)
{
    const char *text = kit_arg_string(argc, argv, name, NULL);
    if (text == NULL)
        return fallback;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "%s must be an integer from %ld to %ld (got '%s')\n", name, min, max, text);
        exit(KIT_EXIT_USAGE);
    }
    return v;
}

/* One option: its flag, what it means, and the values it takes: the integers low..high (default
 * fallback) when words is NULL, else one of words (NULL-terminated; default words[fallback]). */
typedef struct {
    const char *flag;
    const char *help;
    long fallback, low, high;
    const char *const *words;
} kit_option_t;

#define KIT_OPTIONS_END {NULL, NULL, 0, 0, 0, NULL}

/* The table's entry for flag; a flag the table lacks is a bug of the program, said and stopped. */
static inline const kit_option_t *kit_option_entry(const kit_option_t *table, const char *flag)
{
    for (; table->flag != NULL; table++)
        if (strcmp(table->flag, flag) == 0)
            return table;
    fprintf(stderr, "kit bug: %s is read but not declared in the program's options table\n", flag);
    exit(KIT_EXIT_USAGE);
}

/* The value of an integer option: as given, else its default. */
static inline long kit_option_long(int argc, char **argv, const kit_option_t *table, const char *flag)
{
    const kit_option_t *o = kit_option_entry(table, flag);
    return kit_arg_long(argc, argv, flag, o->fallback, o->low, o->high);
}

/* The value of a word option, as its index in the option's words: as given, else its default. */
static inline int kit_option_word(int argc, char **argv, const kit_option_t *table, const char *flag)
{
    const kit_option_t *o = kit_option_entry(table, flag);
    const char *text = kit_arg_string(argc, argv, flag, NULL);
    if (text == NULL)
        return (int)o->fallback;
    for (int k = 0; o->words[k] != NULL; k++)
        if (strcmp(o->words[k], text) == 0)
            return k;
    fprintf(stderr, "%s must be one of", flag);
    for (int k = 0; o->words[k] != NULL; k++)
        fprintf(stderr, " %s", o->words[k]);
    fprintf(stderr, " (got '%s')\n", text);
    exit(KIT_EXIT_USAGE);
}

static inline void kit_print_json_text(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* --describe: the table as one JSON document on stdout,
 *   {"options": [{"flag": "--K", "help": "...", "default": 2, "low": 1, "high": 2048},
 *                {"flag": "--workload", "help": "...", "default": "chained", "words": ["chained", "heavy"]}]} */
static inline void kit_options_describe(const kit_option_t *table)
{
    printf("{\"options\": [");
    for (const kit_option_t *o = table; o->flag != NULL; o++) {
        printf(o == table ? "{\"flag\": " : ", {\"flag\": ");
        kit_print_json_text(o->flag);
        printf(", \"help\": ");
        kit_print_json_text(o->help);
        if (o->words == NULL) {
            printf(", \"default\": %ld, \"low\": %ld, \"high\": %ld}", o->fallback, o->low, o->high);
            continue;
        }
        printf(", \"default\": ");
        kit_print_json_text(o->words[o->fallback]);
        printf(", \"words\": [");
        for (int k = 0; o->words[k] != NULL; k++) {
            printf(k == 0 ? "" : ", ");
            kit_print_json_text(o->words[k]);
        }
        printf("]}");
    }
    printf("]}\n");
}

/* --help: the table for a person. */
static inline void kit_options_help(const char *program, const kit_option_t *table)
{
    printf("usage: %s [--name value ...]\n", program);
    for (const kit_option_t *o = table; o->flag != NULL; o++) {
        char values[160];
        if (o->words == NULL) {
            snprintf(values, sizeof values, "%ld..%ld, default %ld", o->low, o->high, o->fallback);
        } else {
            int used = 0;
            for (int k = 0; o->words[k] != NULL && used < (int)sizeof values - 32; k++)
                used += snprintf(values + used, sizeof values - used, "%s%s", k ? "|" : "", o->words[k]);
            snprintf(values + used, sizeof values - used, ", default %s", o->words[o->fallback]);
        }
        printf("  %-18s %s\n  %-18s %s\n", o->flag, o->help, "", values);
    }
}

/* Answers --help or --describe (the program's only argument) and exits; returns otherwise. */
static inline void kit_options_answer(int argc, char **argv, const kit_option_t *table)
{
    if (argc != 2)
        return;
    if (strcmp(argv[1], "--describe") == 0)
        kit_options_describe(table);
    else if (strcmp(argv[1], "--help") == 0)
        kit_options_help(argv[0], table);
    else
        return;
    exit(fflush(stdout) == 0 ? 0 : KIT_EXIT_USAGE);
}

/* Rejects any "--name" not in the NULL-terminated list, so a typo is not silently ignored. */
static inline void kit_args_require_known(int argc, char **argv, const char *const *known)
{
    for (int i = 1; i < argc; i += 2) {
        int ok = 0;
        for (const char *const *k = known; *k != NULL; k++)
            if (strcmp(argv[i], *k) == 0)
                ok = 1;
        if (!ok || i + 1 >= argc) {
            fprintf(stderr, "unknown or incomplete option '%s'; options:", argv[i]);
            for (const char *const *k = known; *k != NULL; k++)
                fprintf(stderr, " %s", *k);
            fprintf(stderr, "\n");
            exit(KIT_EXIT_USAGE);
        }
    }
}

/* Rejects an option that is neither in table nor one of extra (NULL-terminated; values unchecked), and
 * a value the table does not allow: before the program does anything else. */
static inline void kit_options_check(int argc, char **argv, const kit_option_t *table, const char *const *extra)
{
    const char *known[128];
    int n = 0;
    for (const kit_option_t *o = table; o->flag != NULL && n < 127; o++)
        known[n++] = o->flag;
    for (const char *const *p = extra; *p != NULL && n < 127; p++)
        known[n++] = *p;
    known[n] = NULL;
    kit_args_require_known(argc, argv, known);
    for (const kit_option_t *o = table; o->flag != NULL; o++) {
        if (o->words == NULL)
            (void)kit_option_long(argc, argv, table, o->flag);
        else
            (void)kit_option_word(argc, argv, table, o->flag);
    }
}

#endif /* KIT_ARGS_H */
