/* mandelbrot.h - Lab 07's contract between the kit and the student's file.
 *
 * The image is width x height pixels, row by row. Pixel (px, py) samples the point
 * c = (x_min + px * step) + i (y_min + py * step), and its dwell is kit_dwell(job, px, py): the number
 * of iterations of z = z^2 + c, from z = 0, before |z| > 2, or max_dwell if that never happens.
 *
 * A rectangle (x, y, side, depth) is the square [x, x + side) x [y, y + side), cut off at the image's
 * right and bottom edges; x < width and y < height. Its border is the pixels of that cut rectangle
 * on its first and last row and its first and last column. The Mariani-Silver rule, one grid of one
 * block (MS_THREADS threads) per rectangle:
 *
 *   - every border pixel has the same dwell d: every pixel of the rectangle gets d (fill);
 *   - else, if depth + 1 < max_depth and side > min_side: split it into SUBDIV x SUBDIV squares of
 *     side side / SUBDIV and, for each that starts inside the image (x' < width and y' < height),
 *     launch mariani_silver<<<1, MS_THREADS, 0, s>>>(job, x', y', side / SUBDIV, depth + 1), with s
 *     cudaStreamFireAndForget or a stream the launching thread created; check every launch;
 *   - else every pixel gets its own kit_dwell (compute).
 *
 * The harness calls prepare_mandelbrot(width, height, max_depth, min_side) once before the case's
 * launches, then launches the whole image as one rectangle:
 *
 *     mariani_silver<<<1, MS_THREADS>>>(job, 0, 0, top_side(&job), 0)
 *
 * and compares the image with the rule applied to the kit's exhaustive image (kit_dwell for every
 * pixel), and the rectangles reported with the ones the rule visits. A timing case launches it again
 * for each timed run, on a poisoned image, and checks each run's image the same way: every launch
 * does the whole subdivision.
 */
#ifndef MANDELBROT_H
#define MANDELBROT_H

#include "kit_check.h" /* KIT_CHECK, KIT_CHECK_LAUNCH, KIT_CHECK_DEVICE */

#define SUBDIV 4        /* a rectangle that splits makes SUBDIV x SUBDIV squares */
#define MS_THREADS 256  /* threads of each mariani_silver grid's one block */

typedef struct {
    int *image;        /* width * height dwells, row by row: image[py * width + px] */
    int width, height;
    double x_min, y_min, step; /* pixel (px, py) samples (x_min + px * step, y_min + py * step) */
    int max_dwell;     /* the iteration cap: a point still bounded after max_dwell iterations gets max_dwell */
    int max_depth;     /* rectangles of depth max_depth - 1 never split */
    int min_side;      /* rectangles of this side never split; a power of two */
} mandel_job_t;

/* The side of the first rectangle: min_side times the smallest power of SUBDIV that covers the
 * image, so that every split divides a side exactly. */
static inline __host__ __device__ int top_side(const mandel_job_t *job)
{
    int longer = job->width > job->height ? job->width : job->height;
    int side = job->min_side;
    while (side < longer)
        side *= SUBDIV;
    return side;
}

/* Kit-owned (the harness). The dwell of pixel (px, py), 0 <= px < width, 0 <= py < height. */
__device__ int kit_dwell(mandel_job_t job, int px, int py);
/* Kit-owned. Every thread of every mariani_silver grid calls it first, with the grid's rectangle, and
 * only then: the kit records one rectangle per grid (grids told apart by their id, not by calls) and
 * counts the grids per depth. */
__device__ void report_rect(int x, int y, int side, int depth);

/* Written by the student (mandelbrot.cu). */
__global__ void mariani_silver(mandel_job_t job, int x, int y, int side, int depth);
/* Host code, called once before the case's launches: make room for the launches the subdivision of a
 * width x height image can make, down to max_depth and min_side. */
void prepare_mandelbrot(int width, int height, int max_depth, int min_side);

#endif /* MANDELBROT_H */
