/* kit_args.h - the harnesses' command-line parsing: "--name value" pairs, range-checked.
 *
 *   long k = kit_arg_long(argc, argv, "--K", 2, 1, 2048);
 *   const char *json = kit_arg_string(argc, argv, "--json", NULL);
 *
 * A value out of range or not a number exits with KIT_EXIT_USAGE and says which and why.
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

#endif /* KIT_ARGS_H */
