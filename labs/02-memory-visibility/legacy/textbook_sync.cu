/* The textbook's Part B, as CUDA 5 to 11 taught it (the "CDP1" model): the parent thread waits for
 * its child with cudaDeviceSynchronize() in device code, then the whole block uses the result.
 * Kept here, unchanged, so that `make legacy LAB=02` can show what today's nvcc says about it.
 * It is not part of the lab and is never graded. */
#include <stdio.h>

__global__ void child(int *data)
{
    data[threadIdx.x] = data[threadIdx.x] + 1;
}

__global__ void parent(int *data)
{
    data[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) {
        child<<<1, 256>>>(data);
        cudaDeviceSynchronize(); /* removed from device code in CUDA 12 */
    }
    __syncthreads();
}

int main(void)
{
    int *data;
    cudaMalloc((void **)&data, 256 * sizeof(int));
    parent<<<1, 256>>>(data);
    printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
