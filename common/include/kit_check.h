/* kit_check.h - error checks used by every harness and lab.
 *
 * Host side:   KIT_CHECK(cudaMalloc(...));   aborts with file:line and the CUDA error string.
 *              KIT_CHECK_KERNEL();           after a host-side launch: launch and execution errors.
 * Device side: KIT_CHECK_LAUNCH();           right after a device-side launch, in the launching
 *              thread. Errors are per thread on the device, so only that thread can see whether
 *              its launch failed (for example cudaErrorLaunchPendingCountExceeded, which the host
 *              never sees). Failures are counted into the kit's launch log, which the harness
 *              reports; see kit_launch_log.h.
 */
#ifndef KIT_CHECK_H
#define KIT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#include "kit_launch_log.h"

/* Exit status a harness uses when a CUDA call fails on the host; the grader reports it as a CUDA error. */
#define KIT_EXIT_CUDA_ERROR 3
/* Exit status for bad command-line parameters. */
#define KIT_EXIT_USAGE 2
/* Exit status for "not run" (the probe: no usable GPU); the grader and the kit's tests say "not run"
 * with the same 77. */
#define KIT_EXIT_NOT_RUN 77

/* Prints "CUDA error at FILE:LINE: CALL: NAME (message)" to stderr and exits with KIT_EXIT_CUDA_ERROR.
 * The grader shows that line as the run's verdict. */
void kit_fail_cuda(cudaError_t err, const char *call, const char *file, int line);

#define KIT_CHECK(call)                                                      \
    do {                                                                     \
        cudaError_t kit_err_ = (call);                                       \
        if (kit_err_ != cudaSuccess)                                         \
            kit_fail_cuda(kit_err_, #call, __FILE__, __LINE__);              \
    } while (0)

/* Host memory for the harness, zeroed; exits with a message when there is none (nothing to recover). */
static inline void *kit_host_alloc(size_t bytes)
{
    void *p = calloc(1, bytes > 0 ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* After a host-side <<<>>> launch: a bad configuration shows at once, a fault during the run
 * shows at the synchronize. */
#define KIT_CHECK_KERNEL()                                                   \
    do {                                                                     \
        KIT_CHECK(cudaGetLastError());                                       \
        KIT_CHECK(cudaDeviceSynchronize());                                  \
    } while (0)

#define KIT_CHECK_LAUNCH() kit_check_launch(__LINE__)

/* Device side, around any other device runtime call (cudaStreamCreateWithFlags, cudaMalloc, ...):
 *   KIT_CHECK_DEVICE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
 * Failures are counted in the same log, apart from launches. Evaluates to the call's result. */
#define KIT_CHECK_DEVICE(call) kit_record_call_result((call), __LINE__)

#endif /* KIT_CHECK_H */
