/* @IDENT@.h - Lab @NN@'s contract between the kit and the student's file.
 *
 * A placeholder exercise, from the kit's lab template: replace it with the lab's own, keeping the
 * shape (the kit's code here, the student's in @IDENT@.cu, evidence only the kit can write).
 *
 * The kit owns the child kernel fill_part and the harness; the student owns launch_parts in
 * @IDENT@.cu. The harness launches
 *
 *     launch_parts<<<blocks, threads>>>(out, n);     blocks = ceil(n / threads)
 *
 * and expects out[i] == 2 * i + 1 for every i in [0, n), written by one child grid per block.
 */
#ifndef @GUARD@
#define @GUARD@

#include "kit_check.h"

/* The kit's child kernel: thread t of the grid (counted over all its blocks) writes
 * out[first + t] = 2 * (first + t) + 1 where that index is in [0, n). The kit counts every grid of
 * it that runs and every element it writes. */
__global__ void fill_part(int *out, int first, int n);

/* Written by the student (@IDENT@.cu). */
__global__ void launch_parts(int *out, int n);

#endif /* @GUARD@ */
