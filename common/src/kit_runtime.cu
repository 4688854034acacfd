/* kit_runtime.cu - definitions behind kit_check.h and kit_launch_log.h. Linked into every lab. */
#include <stdio.h>
#include <stdlib.h>

#include "kit_check.h"
#include "kit_launch_log.h"

void kit_fail_cuda(cudaError_t err, const char *call, const char *file, int line)
{
    fprintf(stderr, "CUDA error at %s:%d: %s: %s (%s)\n", file, line, call,
            cudaGetErrorName(err), cudaGetErrorString(err));
    exit(KIT_EXIT_CUDA_ERROR);
}

static __device__ kit_launch_log_t kit_launch_log;

__device__ cudaError_t kit_record_launch_result(cudaError_t err, int line)
{
    atomicAdd(&kit_launch_log.checked, 1u);
    if (err != cudaSuccess) {
        /* The first failure wins the right to record its code and line. */
        if (atomicAdd(&kit_launch_log.failed, 1u) == 0) {
            kit_launch_log.first_error = (int)err;
            kit_launch_log.first_error_line = line;
        }
    }
    return err;
}

void kit_launch_log_reset(void)
{
    kit_launch_log_t zero = {0, 0, 0, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_launch_log, &zero, sizeof zero));
}

kit_launch_log_t kit_launch_log_read(void)
{
    kit_launch_log_t log;
    KIT_CHECK(cudaMemcpyFromSymbol(&log, kit_launch_log, sizeof log));
    return log;
}
