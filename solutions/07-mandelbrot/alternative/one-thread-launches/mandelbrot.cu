/* Alternative: the kit's first reference solution. Thread 0 launches all sixteen squares, one after
 * another, instead of thread t launching square t; every thread goes through its whole share of the
 * border, even after a pixel unlike the corner has decided the verdict. The same image and the same
 * rectangles as the reference; slower on the uniform timing case (tools/measure_thresholds.py times both). */
#include "mandelbrot.h"

/* Pixel i of the border of the w x h rectangle at (x, y): the first row, the last row, then the
 * first and the last column without their corners. A rectangle one pixel wide or tall is all border. */
static __device__ void border_pixel(int i, int x, int y, int w, int h, int *px, int *py)
{
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
}

/* How many pixels the border of a w x h rectangle has. */
static __device__ int border_length(int w, int h)
{
    return (w == 1 || h == 1) ? w * h : 2 * w + 2 * (h - 2);
}

/* One grid of one block per rectangle (x, y, side, depth). */
__global__ void mariani_silver(mandel_job_t job, int x, int y, int side, int depth)
{
    report_rect(x, y, side, depth); /* the kit's record of this grid: first, from every thread */
    int w = min(side, job.width - x), h = min(side, job.height - y);
    __shared__ int corner;
    if (threadIdx.x == 0)
        corner = kit_dwell(job, x, y);
    __syncthreads();
    int same = 1;
    for (int i = threadIdx.x; i < border_length(w, h); i += blockDim.x) {
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
        if (threadIdx.x == 0) {
            int sub = side / SUBDIV;
            for (int j = 0; j < SUBDIV; j++)
                for (int i = 0; i < SUBDIV; i++)
                    if (x + i * sub < job.width && y + j * sub < job.height) {
                        /* fire-and-forget: the children run side by side, and the parent need not wait */
                        mariani_silver<<<1, MS_THREADS, 0, cudaStreamFireAndForget>>>(job, x + i * sub, y + j * sub,
                                                                                     sub, depth + 1);
                        KIT_CHECK_LAUNCH();
                    }
        }
        return;
    }
    for (int k = threadIdx.x; k < w * h; k += blockDim.x) /* the cutoff: every pixel */
        job.image[(y + k / w) * job.width + x + k % w] = kit_dwell(job, x + k % w, y + k / w);
}

/* Host code, called once before the case's launches: a pending-launch limit for every child grid the
 * subdivision of a width x height image can launch. */
void prepare_mandelbrot(int width, int height, int max_depth, int min_side)
{
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
}
