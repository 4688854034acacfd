/* kit_bezier.h - the kit's Bezier lines as student code sees them: the line type, the kit's vertex
 * count and curve point, and the kit's device heap for vertex arrays. Lab 04 (bezier.h) and Lab 06
 * (allocator.h) both include it; the definitions are in common/src/bezier_lines.cu, which every
 * program links.
 */
#ifndef KIT_BEZIER_H
#define KIT_BEZIER_H

#include "kit_check.h"

#define MIN_VERTICES 4

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

#endif /* KIT_BEZIER_H */
