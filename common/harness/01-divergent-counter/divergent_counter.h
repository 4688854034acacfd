/* divergent_counter.h - Lab 01's contract between the kit and the student's file.
 *
 * The kit owns the work (entry_work, entry_kernel) and the harness; the student owns diverge_cta
 * in divergent_counter.cu. The harness launches it as
 *
 *     diverge_cta<<<K, 32 * M>>>(foo, N);
 *
 * and expects foo == K * (N * M + 5 * (M - 1)) afterwards (handout section 2.5).
 */
#ifndef DIVERGENT_COUNTER_H
#define DIVERGENT_COUNTER_H

#include "kit_check.h"

/* The per-thread work of the divergent phase: n atomic increments of *foo. The kit counts the
 * increments made through it: in your solution the child grids do that work, not diverge_cta. */
__device__ void entry_work(unsigned long long *foo, int n);

/* The same work as a kernel: every thread of the grid does entry_work's n increments.
 * The kit counts every grid of it that runs (by the grid's identity), records the grid's shape,
 * and counts the increments done in these grids. */
__global__ void entry_kernel(unsigned long long *foo, int n);

/* Written by the student (divergent_counter.cu). */
__global__ void diverge_cta(unsigned long long *foo, int n);

#endif /* DIVERGENT_COUNTER_H */
