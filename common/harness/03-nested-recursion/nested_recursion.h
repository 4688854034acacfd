/* nested_recursion.h - Lab 03's contract between the kit and the student's file.
 *
 * Part A. The harness launches nested_hello<<<B, n>>>(n, 0). Every thread reports itself with
 * report_hello(depth); thread 0 of each block launches the next level, one block of half as many
 * threads (integer division), until a level of one thread. Graded: the multiset of
 * (depth, block, thread) records equals the tree the grader computes from B and n.
 *
 * Part B. The harness calls prepare_deep_recursion(D) before any kernel runs, then launches
 * deep_chain<<<1, 1>>>(0, D). Every level reports itself with report_level(depth) and launches the
 * next, to depth D (thousands). Graded: levels 0..D all ran, and no device launch failed.
 */
#ifndef NESTED_RECURSION_H
#define NESTED_RECURSION_H

#include "kit_check.h"

/* Part A (kit-owned): records (depth, blockIdx.x, threadIdx.x) in the kit's log and, when the
 * harness prints (make run), prints "Recursion=<depth>: Hello World from thread <t> block <b>".
 * printf alone could not be graded: its buffer drops lines silently when full. The kit also notes
 * the calling grid (its identity and shape), once per grid: the grids that ran must be the tree's. */
__device__ void report_hello(int depth);
/* Part A (student). */
__global__ void nested_hello(int size, int depth);

/* Part B (kit-owned): records that level `depth` of the chain ran, in the calling grid: the kit
 * counts the grids that report (each once, by identity), not the calls. */
__device__ void report_level(int depth);
/* Part B (student). */
__global__ void deep_chain(int depth, int max_depth);
/* Part B (student, host code): called once by the harness before any kernel is launched. */
void prepare_deep_recursion(int max_depth);

#endif /* NESTED_RECURSION_H */
