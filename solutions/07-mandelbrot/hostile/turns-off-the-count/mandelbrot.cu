/* Hostile: the kit's own counting switch is turned off from the student's file, and the first grid
 * launches one flat grid that computes every pixel: nothing is reported, nothing subdivided. */
#include "mandelbrot.h"

extern __device__ int kit_counting; /* the harness's switch */

static __global__ void every_pixel(mandel_job_t job)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < (long long)job.width * job.height)
        job.image[k] = kit_dwell(job, (int)(k % job.width), (int)(k / job.width));
}

__global__ void mariani_silver(mandel_job_t job, int x, int y, int side, int depth)
{
    kit_counting = 0;
    report_rect(x, y, side, depth);
    if (threadIdx.x == 0) {
        long long pixels = (long long)job.width * job.height;
        every_pixel<<<(unsigned int)((pixels + 255) / 256), 256, 0, cudaStreamFireAndForget>>>(job);
        KIT_CHECK_LAUNCH();
    }
}

void prepare_mandelbrot(int width, int height, int max_depth, int min_side)
{
    (void)width; (void)height; (void)max_depth; (void)min_side;
}
