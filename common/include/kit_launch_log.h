/* kit_launch_log.h - the kit's log of failed device-side launches (and other device runtime calls).
 *
 * A kernel launched from the device that fails (bad configuration, the pending-launch pool full,
 * out of device memory) never runs, and the host still sees cudaSuccess. Only the launching thread
 * learns of it, from cudaGetLastError(). KIT_CHECK_LAUNCH() (kit_check.h) asks for that result here,
 * in the kit's own code, so what the log counts is what the launching thread's last error was;
 * failures are counted in device memory and the harness reads the count after the grid finishes.
 */
#ifndef KIT_LAUNCH_LOG_H
#define KIT_LAUNCH_LOG_H

#include <cuda_runtime.h>

typedef struct {
    unsigned int checked;     /* launches checked with KIT_CHECK_LAUNCH */
    unsigned int failed;      /* of those, how many failed */
    int first_error;          /* cudaError_t of the first failure seen (0 if none) */
    int first_error_line;     /* source line of the KIT_CHECK_LAUNCH that saw it */
    unsigned int calls_checked;   /* other device runtime calls checked with KIT_CHECK_DEVICE */
    unsigned int calls_failed;
    int first_call_error;
    int first_call_error_line;
} kit_launch_log_t;

/* Device side: read and clear the calling thread's last error (cudaGetLastError) and record it as the
 * result of the launch just made. Returns the error so callers can branch on it. */
__device__ cudaError_t kit_check_launch(int line);
/* Device side: record the result of any other device runtime call, passed in (KIT_CHECK_DEVICE).
 * Returns it. */
__device__ cudaError_t kit_record_call_result(cudaError_t err, int line);

/* Host side: zero the log before a run, read it after the run has been synchronized. */
void kit_launch_log_reset(void);
kit_launch_log_t kit_launch_log_read(void);

#endif /* KIT_LAUNCH_LOG_H */
