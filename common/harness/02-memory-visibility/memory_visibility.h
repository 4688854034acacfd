/* memory_visibility.h - Lab 02's contract between the kit and the student's file.
 *
 * Part A, the race. The harness launches race_parent<<<blocks, 128>>>(slots, seen): every thread
 * is one parent with its own slot. A parent writes FIRST_VALUE, launches observe_kernel to record
 * what the child sees, and must end with SECOND_VALUE in its slot, written after the child has
 * read it. Graded: every child saw FIRST_VALUE, every slot ends at SECOND_VALUE.
 *
 * Part B, consuming a child's result. The harness launches consume_parent<<<ceil(n/T), T>>>(data, n).
 * Each block fills its part of data with produce(i), thread 0 launches add_one_kernel on that part,
 * and the result must be used by use_result (directly, or through use_result_kernel) after the child
 * has finished. Graded: data[i] == i + 1 and the value used for element i was i + 1.
 */
#ifndef MEMORY_VISIBILITY_H
#define MEMORY_VISIBILITY_H

#include "kit_check.h"

#define FIRST_VALUE 1
#define SECOND_VALUE 2

/* Part A (kit-owned): the child records the value it sees in *slot into *seen. */
__global__ void observe_kernel(const int *slot, int *seen);
/* Part A (kit-owned): *slot = value. */
__global__ void store_value_kernel(int *slot, int value);
/* Part A (student). */
__global__ void race_parent(int *slots, int *seen);

/* Part B (kit-owned): returns i. Threads outside warp 0 take about 50 microseconds first, as real
 * work of uneven length would: long enough for a child launched without a barrier to start first.
 * The kit notes the grid that calls it (consume_parent's) by its identity. */
__device__ int produce(int i);
/* Part B (kit-owned): the child; adds 1 to data[0..count). */
__global__ void add_one_kernel(int *data, int count);
/* Part B (kit-owned): element i of the whole array is used with this value; the kit records it,
 * and counts a use made in the grid that called produce(), which cannot have seen a child's result. */
__device__ void use_result(int i, int value);
/* Part B (kit-owned): a continuation: use_result(base + j, data[j]) for j in [0, count). */
__global__ void use_result_kernel(const int *data, int base, int count);
/* Part B (student). */
__global__ void consume_parent(int *data, int n);

#endif /* MEMORY_VISIBILITY_H */
