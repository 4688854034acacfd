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
#ifdef KIT_STARTER
    /* TODO (step 1), if you want this helper: set *px, *py for i in [0, border_length(w, h)). */
    (void)i; (void)w; (void)h;
    *px = x;
    *py = y;
#else
    if (w == 1 || h == 1) {
        *px = x + (h == 1 ? i : 0);
        *py = y + (h == 1 ? 0 : i);
    } else if (i < 2 * w) {
        *px = x + i % w;
        *py = i < w ? y : y + h - 1;
    } else {
        i -= 2 * w;
        *px = i < h - 2 ? x : x + w - 1;
        *py = y + 1 + i % (h - 2);
    }
#endif /* KIT_STARTER */
}

/* How many pixels the border of a w x h rectangle has. */
static __device__ int border_length(int w, int h)
{
#ifdef KIT_STARTER
    /* TODO (step 1), if you want this helper. */
    (void)w; (void)h;
    return 0;
#else
    return (w == 1 || h == 1) ? w * h : 2 * w + 2 * (h - 2);
#endif /* KIT_STARTER */
}

/* One grid of one block per rectangle (x, y, side, depth). */
__global__ void mariani_silver(mandel_job_t job, int x, int y, int side, int depth)
{
    report_rect(x, y, side, depth); /* the kit's record of this grid: first, from every thread */
#ifdef KIT_STARTER
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
#else
    int w = min(side, job.width - x), h = min(side, job.height - y);
    __shared__ int corner;
    if (threadIdx.x == 0)
        corner = kit_dwell(job, x, y);
    __syncthreads();
    int same = 1;
    /* each thread stops at its first border pixel unlike the corner: one such pixel decides the verdict */
    for (int i = threadIdx.x; same && i < border_length(w, h); i += blockDim.x) {
        int px, py;
        border_pixel(i, x, y, w, h, &px, &py);
        same &= kit_dwell(job, px, py) == corner;
    }
    if (__syncthreads_and(same)) { /* a border of one dwell: fill, computing nothing inside */
        for (int k = threadIdx.x; k < w * h; k += blockDim.x)
            job.image[(y + k / w) * job.width + x + k % w] = corner;
        return;
    }
    if (depth + 1 < job.max_depth && side > job.min_side) {
        if (threadIdx.x < SUBDIV * SUBDIV) { /* thread t launches square t: the sixteen launches side by side */
            int sub = side / SUBDIV, cx = x + (threadIdx.x % SUBDIV) * sub, cy = y + (threadIdx.x / SUBDIV) * sub;
            if (cx < job.width && cy < job.height) { /* it starts inside the image */
                /* fire-and-forget: the children run side by side, and the parent need not wait */
                mariani_silver<<<1, MS_THREADS, 0, cudaStreamFireAndForget>>>(job, cx, cy, sub, depth + 1);
                KIT_CHECK_LAUNCH(); /* in the thread that launched */
            }
        }
        return;
    }
    for (int k = threadIdx.x; k < w * h; k += blockDim.x) /* the cutoff: every pixel */
        job.image[(y + k / w) * job.width + x + k % w] = kit_dwell(job, x + k % w, y + k / w);
#endif /* KIT_STARTER */
}

/* Host code, called once before the case's launches: a pending-launch limit for every child grid the
 * subdivision of a width x height image can launch. */
void prepare_mandelbrot(int width, int height, int max_depth, int min_side)
{
#ifdef KIT_STARTER
    /* TODO (step 5): every child grid may be pending at once, and a parent's launch slot is held until
     * its children end. Count, for each depth 1 .. max_depth - 1 that the cutoff lets the rectangles
     * reach (side > min_side before the split), the squares of that depth's side that start inside
     * the image; raise cudaLimitDevRuntimePendingLaunchCount to the sum (never below the default
     * 2,048), with KIT_CHECK. top_side() gives the first rectangle's side. */
    (void)width; (void)height; (void)max_depth; (void)min_side;
#else
    mandel_job_t job;
    job.width = width;
    job.height = height;
    job.min_side = min_side;
    int side = top_side(&job);
    size_t grids = 0;
    for (int depth = 1; depth < max_depth && side > min_side; depth++) {
        side /= SUBDIV;
        grids += (size_t)((width + side - 1) / side) * (size_t)((height + side - 1) / side);
    }
    size_t limit = grids > 2048 ? grids : 2048; /* never below the default */
    KIT_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, limit));
#endif /* KIT_STARTER */
}
