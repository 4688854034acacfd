/* Lab 07: the Mandelbrot set by Mariani-Silver subdivision, with dynamic parallelism.
 *
 * A rectangle whose border has one dwell all round is filled without computing its inside; any other
 * splits into SUBDIV x SUBDIV squares, each a child grid, down to a cutoff where every pixel is
 * computed. Read handouts/07-mandelbrot.md first; the rule, word for word, is at the top of
 * common/harness/07-mandelbrot/mandelbrot.h. You edit this file only.
 */
#include "mandelbrot.h"

/* Pixel i of the border of the w x h rectangle at (x, y): the first row, the last row, then the
 * first and the last column without their corners. A rectangle one pixel wide or tall is all border. */
static __device__ void border_pixel(int i, int x, int y, int w, int h, int *px, int *py)
{
    /* TODO (step 1), if you want this helper: set *px, *py for i in [0, border_length(w, h)). */
    (void)i; (void)w; (void)h;
    *px = x;
    *py = y;
}

/* How many pixels the border of a w x h rectangle has. */
static __device__ int border_length(int w, int h)
{
    /* TODO (step 1), if you want this helper. */
    (void)w; (void)h;
    return 0;
}

/* One grid of one block per rectangle (x, y, side, depth). */
__global__ void mariani_silver(mandel_job_t job, int x, int y, int side, int depth)
{
    report_rect(x, y, side, depth); /* the kit's record of this grid: first, from every thread */
    /* TODO (steps 1-4), the rule of mandelbrot.h:
     *  1. w, h: the rectangle cut off at the image's edges. Every thread compares the dwell
     *     (kit_dwell) of its share of the border pixels with the dwell of the corner (x, y); the block
     *     agrees with __syncthreads_and.
     *  2. Uniform border: every pixel of the rectangle gets the corner's dwell (job.image[py * job.width + px]).
     *  3. Else, if depth + 1 < job.max_depth and side > job.min_side: for each of the SUBDIV x SUBDIV
     *     squares of side side / SUBDIV that starts inside the image, launch
     *     mariani_silver<<<1, MS_THREADS, 0, cudaStreamFireAndForget>>>(job, x', y', side / SUBDIV, depth + 1)
     *     (or into a stream the launching thread creates), and check each launch right after it with
     *     KIT_CHECK_LAUNCH().
     *  4. Else every pixel of the rectangle gets its own kit_dwell. */
    (void)job; (void)border_pixel; (void)border_length;
}

/* Host code, called once before the case's launches: a pending-launch limit for every child grid the
 * subdivision of a width x height image can launch. */
void prepare_mandelbrot(int width, int height, int max_depth, int min_side)
{
    /* TODO (step 5): every child grid may be pending at once, and a parent's launch slot is held until
     * its children end. Count, for each depth 1 .. max_depth - 1 that the cutoff lets the rectangles
     * reach (side > min_side before the split), the squares of that depth's side that start inside
     * the image; raise cudaLimitDevRuntimePendingLaunchCount to the sum (never below the default
     * 2,048), with KIT_CHECK. top_side() gives the first rectangle's side. */
    (void)width; (void)height; (void)max_depth; (void)min_side;
}
