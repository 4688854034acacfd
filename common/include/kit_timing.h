/* kit_timing.h - CUDA-event timing with warm-up, repeats and the median.
 *
 *   kit_timing_t t = kit_time_kernel(reset_fn, launch_fn, ctx, 2, 7);
 *
 * reset(ctx) runs before every repetition, outside the timed region (zero a counter, say);
 * launch(ctx) is timed between two events on the default stream. Medians resist the odd slow run;
 * the minimum and maximum show the spread.
 */
#ifndef KIT_TIMING_H
#define KIT_TIMING_H

#include <stdlib.h>
#include "kit_check.h"

/* Device side: the GPU's global timer in nanoseconds, the same clock on every SM, for stamping when
 * kit-owned code ran (its resolution is about a microsecond on some GPUs). */
static __device__ __forceinline__ unsigned long long kit_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

typedef void (*kit_step_fn)(void *ctx);

typedef struct {
    float median_ms;
    float min_ms;
    float max_ms;
    int repeats;
} kit_timing_t;

static int kit_compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static inline kit_timing_t kit_time_kernel(kit_step_fn reset, kit_step_fn launch, void *ctx,
                                           int warmup, int repeats)
{
    kit_timing_t t = {0.0f, 0.0f, 0.0f, repeats};
    if (repeats <= 0)
        return t;
    float *ms = (float *)kit_host_alloc(sizeof(float) * (size_t)repeats);
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
        if (i >= warmup)
            KIT_CHECK(cudaEventElapsedTime(&ms[i - warmup], start, stop));
    }
    KIT_CHECK(cudaEventDestroy(start));
    KIT_CHECK(cudaEventDestroy(stop));
    qsort(ms, (size_t)repeats, sizeof(float), kit_compare_float);
    t.min_ms = ms[0];
    t.max_ms = ms[repeats - 1];
    t.median_ms = (repeats % 2) ? ms[repeats / 2] : 0.5f * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    free(ms);
    return t;
}

#endif /* KIT_TIMING_H */
