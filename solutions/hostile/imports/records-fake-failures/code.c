#include "kit_check.h"
/* The kit's old recorder, declared by hand: a failure the launching thread never saw, logged as seen. */
extern __device__ cudaError_t kit_record_launch_result(cudaError_t err, int line);
__global__ void hostile_fake_failure(void) { kit_record_launch_result(cudaErrorLaunchPendingCountExceeded, 1); }
