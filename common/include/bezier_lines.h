/* bezier_lines.h - the kit's Bezier lines, for the kit's harnesses (common/src/bezier_lines.cu).
 * Lab 04's harness grades and times with them, Lab 06's Part C collects their vertices into one
 * pool; both check every vertex with check_lines. Student files see kit_bezier.h only (through
 * bezier.h or allocator.h), not this.
 */
#ifndef BEZIER_LINES_H
#define BEZIER_LINES_H

#include "kit_bezier.h"
#include "kit_check.h"
#include "kit_result.h"

#define MAX_LINES 100000
#define MAX_MAX_VERTICES (1 << 22)

/* The kit heap's counters: kit_malloc_vertices and kit_free_vertices count every call. */
typedef struct {
    unsigned long long bytes_requested;
    unsigned int allocations, alloc_failures, frees, bad_frees, free_failures;
} heap_stats_t;

/* A workload: n_lines lines from a seed, the vertex count each needs (the kit's vertex_count), and
 * room for all their vertices, gathered. */
typedef struct {
    int n_lines, heavy, max_vertices;
    float factor;
    bezier_line_t *h_lines; /* control points */
    bezier_line_t *d_lines;
    int *h_counts, *d_counts; /* expected counts, from the kit's vertex_count */
    long long *h_offsets, *d_offsets, total;
    float2 *d_out, *h_out;
    int *d_status, *h_status;
    float2 *d_worst; /* flat: n_lines * max_vertices */
    float2 *d_guard_block; /* the vertices of the guard line past the end (workload_init) */
} workload_t;

/* What check_lines found: lines without vertices, with a wrong count, written past the end of a kit
 * heap block, vertices off the double-precision reference, and the first bad line. */
typedef struct {
    int lines_bad, missing, count_wrong, overruns;
    long long vertices_wrong;
    int first_bad_line, first_bad_index, first_bad_status;
    double first_got_x, first_got_y, first_want_x, first_want_y, max_error;
} check_t;

/* Calls of the kit's bezier_point while counting: all of them, and those for a vertex index outside
 * [0, n). Each vertex of a correct run is computed exactly once. */
typedef struct {
    unsigned long long calls, out_of_range;
} point_calls_t;

/* Which grids computed the lines (grid_probe_start .. grid_probe_stop): for each line of the workload,
 * the grid that first asked vertex_count for it (the parent, which sizes the line) and the grid that
 * first computed its vertex 0 with bezier_point, each by its PTX %gridid (unique per launched grid in
 * the context). Evidence of child grids from the grids that ran, not from launch checks. */
typedef struct {
    int lines_counted;   /* lines some grid asked vertex_count for */
    int lines_pointed;   /* lines whose vertex 0 some grid computed */
    int lines_in_child;  /* of those, computed by a grid that asked no line's vertex count: a child */
    int child_grids;     /* distinct grids among those: child grids that ran and computed a line */
    int counting_grids;  /* distinct grids that asked vertex_count: the parents */
} grid_census_t;

/* ---- kit versions, for the timing comparisons (device code) ---- */
/* Each writes line i's vertices at out + offsets[i] (the workload's d_out and d_offsets, laid out
 * from the kit's counts); none touches a line's vertices or n_vertices, or the kit's heap. */

/* Flat, with an exact layout. One block per line. */
__global__ void kit_flat(bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                         const long long *offsets, float2 *out);

#define KIT_STREAM_NULL 0
#define KIT_STREAM_FIRE_AND_FORGET 1
/* Dynamic, one thread per line: a child grid per line (ceil(n / 32) blocks of 32), in the NULL
 * stream or fire-and-forget (stream_kind); every launch checked (KIT_CHECK_LAUNCH). */
__global__ void kit_cdp(const bezier_line_t *lines, int n_lines, float factor, int max_vertices,
                        const long long *offsets, float2 *out, int stream_kind);

/* ---- host side ---- */

/* The most vertices the workload can need, all lines together (prepare_cdp's bound). */
long long max_total_vertices(int n, int heavy, int max_vertices);
/* heavy: 1 for the heavy-tail workload, 0 for chained. flat_arrays: allocate d_worst too.
 * d_lines holds one guard line past the last, which no correct kernel touches: a straight line
 * whose vertices point at a kit buffer that kit_malloc_vertices never handed out, so a kernel that
 * runs one line too far tessellates it (one block, one child too many) or frees it (a bad free). */
void workload_init(workload_t *w, int n, int heavy, int max_vertices, float factor, unsigned long long seed,
                   int flat_arrays);
void workload_free(workload_t *w);
/* Lines as the kit hands them over: control points, no vertices (flat: the worst-case arrays). */
void reset_lines(workload_t *w, int flat);
/* heap_blocks: the vertices are kit heap blocks, whose fences are checked too. */
check_t check_lines(workload_t *w, int heap_blocks);
/* Whether the last check_lines copied line l's vertices into h_out (at h_offsets[l], h_counts[l]
 * of them): not for a line it found without vertices or with a wrong count. */
int line_gathered(const workload_t *w, int l);
void json_check(kit_json_t *j, const char *key, check_t c);
void print_check(const char *what, check_t c, int n);
heap_stats_t read_heap(void);
void reset_heap(void);
/* List every block kit_malloc_vertices takes from the device heap from now on (capacity of them at
 * most); then free the listed blocks still live, stop listing and return how many were freed: what a
 * case left in the heap does not shrink the next case's heap in the same process. */
void heap_blocks_track(unsigned int capacity);
unsigned int heap_blocks_free_left(void);
/* While base is not NULL, kit_malloc_vertices carves blocks from [base, base + size) instead of the
 * device heap (timing runs). */
void set_pool(char *base, unsigned long long size);
/* Zero the counts and count bezier_point calls from now on; stop (after a device synchronize) and
 * return the counts. Never while timing: counting costs an atomic per vertex. */
void point_calls_start(void);
point_calls_t point_calls_stop(void);
/* Record which grid counts and which computes each line of w (its d_lines) from now on; stop (after a
 * device synchronize) and return the census. Never while timing: it costs an atomic per line. */
void grid_probe_start(const workload_t *w);
grid_census_t grid_probe_stop(void);
void json_grid_census(kit_json_t *j, const char *key, grid_census_t g);

#endif /* BEZIER_LINES_H */
