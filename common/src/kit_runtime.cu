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

/* Counts one checked call; the first failure wins the right to record its code and line. */
static __device__ cudaError_t record(unsigned int *checked, unsigned int *failed, int *first_error,
                                     int *first_error_line, cudaError_t err, int line)
{
    atomicAdd(checked, 1u);
    if (err != cudaSuccess && atomicAdd(failed, 1u) == 0) {
        *first_error = (int)err;
        *first_error_line = line;
    }
    return err;
}

/* The error is read here, not passed in: a launch's result the log counts is the thread's own. */
__device__ cudaError_t kit_check_launch(int line)
{
    return record(&kit_launch_log.checked, &kit_launch_log.failed, &kit_launch_log.first_error,
                  &kit_launch_log.first_error_line, cudaGetLastError(), line);
}

__device__ cudaError_t kit_record_call_result(cudaError_t err, int line)
{
    return record(&kit_launch_log.calls_checked, &kit_launch_log.calls_failed, &kit_launch_log.first_call_error,
                  &kit_launch_log.first_call_error_line, err, line);
}

void kit_launch_log_reset(void)
{
    kit_launch_log_t zero = {0, 0, 0, 0, 0, 0, 0, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_launch_log, &zero, sizeof zero));
}

kit_launch_log_t kit_launch_log_read(void)
{
    kit_launch_log_t log;
    KIT_CHECK(cudaMemcpyFromSymbol(&log, kit_launch_log, sizeof log));
    return log;
}
