/* kit_timing.h - CUDA-event timing with warm-up, repeats and the median; the kit's one sort and
 * median of measurements.
 *
 *   kit_timing_t t = kit_time_kernel(reset_fn, launch_fn, ctx, 2, 7);
 *   double m = kit_median(values, n);            (sorts values)
 *
 * reset(ctx) runs before every repetition, outside the timed region (zero a counter, say);
 * launch(ctx) is timed between two events on the default stream. Medians resist the odd slow run;
 * the minimum and maximum show the spread.
 */
#ifndef KIT_TIMING_H
#define KIT_TIMING_H

#include <stdlib.h>
#include "kit_check.h"

typedef void (*kit_step_fn)(void *ctx);

typedef struct {
    float median_ms;
    float min_ms;
    float max_ms;
    int repeats;
} kit_timing_t;

static int kit_compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) in place, smallest first. */
static inline void kit_sort(double *v, long long n)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof v[0], kit_compare_double);
}

/* The median of v[0..n), n >= 1: the middle value, or the mean of the two middle ones. Sorts v, so
 * v[0] and v[n - 1] are then the smallest and the largest. */
static inline double kit_median(double *v, long long n)
{
    kit_sort(v, n);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline kit_timing_t kit_time_kernel(kit_step_fn reset, kit_step_fn launch, void *ctx,
                                           int warmup, int repeats)
{
    kit_timing_t t = {0.0f, 0.0f, 0.0f, repeats};
    if (repeats <= 0)
        return t;
    double *ms = (double *)kit_host_alloc(sizeof(double) * (size_t)repeats);
    cudaEvent_t start, stop;
    KIT_CHECK(cudaEventCreate(&start));
    KIT_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup + repeats; i++) {
        if (reset != NULL)
            reset(ctx);
        KIT_CHECK(cudaDeviceSynchronize());
        KIT_CHECK(cudaEventRecord(start, 0));
        launch(ctx);
        KIT_CHECK(cudaGetLastError());
        KIT_CHECK(cudaEventRecord(stop, 0));
        KIT_CHECK(cudaEventSynchronize(stop));
        if (i >= warmup) {
            float elapsed;
            KIT_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
            ms[i - warmup] = elapsed;
        }
    }
    KIT_CHECK(cudaEventDestroy(start));
    KIT_CHECK(cudaEventDestroy(stop));
    /* A double holds every float exactly, and the mean of two, rounded to float, is the float mean. */
    t.median_ms = (float)kit_median(ms, repeats);
    t.min_ms = (float)ms[0];
    t.max_ms = (float)ms[repeats - 1];
    free(ms);
    return t;
}

#endif /* KIT_TIMING_H */
