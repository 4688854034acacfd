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

#include "kit_check.h"

#define MIN_VERTICES 4
#define PARENT_THREADS 64 /* threads per block of tessellate_cdp and free_vertices */

typedef struct {
    float2 cp[3];      /* control points: set by the kit */
    float2 *vertices;  /* flat: set by the kit to this line's worst-case array; CDP: yours to allocate */
    int n_vertices;    /* yours to set */
} bezier_line_t;

/* Kit-owned. curvature = |P1 - (P0 + P2) / 2| / |P2 - P0| (infinite when P0 == P2);
 * the count is clamp(curvature * factor, MIN_VERTICES, max_vertices). */
__device__ int vertex_count(const bezier_line_t *line, float factor, int max_vertices);
/* Kit-owned. Vertex i of n: (1-u)^2 P0 + 2u(1-u) P1 + u^2 P2 with u = i / (n - 1). */
__device__ float2 bezier_point(const bezier_line_t *line, int i, int n);

/* Kit-owned device heap for vertex arrays. Use these instead of cudaMalloc/cudaFree in device code:
 * they call them for you, check and count every call (the kit's launch log), count the bytes, and
 * put a fence after every block so that a write past its end is caught. A block from
 * kit_malloc_vertices must be freed with kit_free_vertices. Each block costs KIT_ALLOC_OVERHEAD
 * bytes of heap on top of what you ask for. Returns NULL when the heap is full. */
#define KIT_ALLOC_OVERHEAD 1024
__device__ float2 *kit_malloc_vertices(int count);
__device__ void kit_free_vertices(float2 *vertices);

/* Written by the student (bezier.cu). */
__global__ void tessellate_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices);
__global__ void compute_vertices(bezier_line_t *line, int n);
__global__ void tessellate_cdp(bezier_line_t *lines, int n_lines, float factor, int max_vertices);
__global__ void free_vertices(bezier_line_t *lines, int n_lines);
/* Host code, called once before any kernel runs. max_total_vertices bounds the vertices of all
 * lines together, over every run the harness will make: n_lines * max_vertices in general, less
 * when the harness knows its workload is lighter (the heavy-tail workload). */
void prepare_cdp(int n_lines, long long max_total_vertices);

#endif /* BEZIER_H */
