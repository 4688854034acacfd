/* bezier.h - Lab 04's contract between the kit and the student's file.
 *
 * Each line is a quadratic Bezier curve with control points cp[0..2]. Its vertex count comes from
 * its curvature (vertex_count), and vertex i of n lies at u = i / (n - 1) (bezier_point). The
 * harness runs
 *
 *     tessellate_flat<<<n_lines, 128>>>(lines, n_lines, factor, max_vertices)
 *         with every lines[i].vertices pointing at a worst-case array of max_vertices, and
 *     prepare_cdp(n_lines, max_total_vertices)                 (host, before any launch)
 *     tessellate_cdp<<<ceil(n_lines / 64), 64>>>(lines, n_lines, factor, max_vertices)
 *     free_vertices<<<ceil(n_lines / 64), 64>>>(lines, n_lines)
 *
 * and checks every vertex of every line against a double-precision reference.
 */
#ifndef BEZIER_H
#define BEZIER_H

#include "kit_bezier.h" /* bezier_line_t, MIN_VERTICES, vertex_count, bezier_point, the kit's heap */

#define PARENT_THREADS 64 /* threads per block of tessellate_cdp and free_vertices */

/* Written by the student (bezier.cu). */
__global__ void tessellate_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices);
__global__ void compute_vertices(bezier_line_t *line, int n);
__global__ void tessellate_cdp(bezier_line_t *lines, int n_lines, float factor, int max_vertices);
__global__ void free_vertices(bezier_line_t *lines, int n_lines);
/* Host code, called before any kernel runs, once per case of the process (the harness resets both
 * limits to their defaults before each call and reads back what it left). max_total_vertices bounds
 * the vertices of all lines together, over every run the harness will make of the case:
 * n_lines * max_vertices in general, less when the harness knows its workload is lighter (the
 * heavy-tail workload). */
void prepare_cdp(int n_lines, long long max_total_vertices);

#endif /* BEZIER_H */
