/* cdp_probe.cu - can this machine run dynamic parallelism? Used by the grader and `make doctor`.
 *
 * A parent kernel launches a child that writes a flag; the child's write must be visible to the host
 * after the parent grid completes, on device 0 of those visible. Writes {"gpu": bool, "dp_ok": bool,
 * "reason": ..., "device_count": N, "pci_bus_id": ..., "device": ...} to --json PATH (device_count: the
 * GPUs visible; pci_bus_id: device 0's, which names the GPU whatever CUDA_VISIBLE_DEVICES says). Exit status: 0 works, KIT_EXIT_NOT_RUN (77) no usable GPU, 1 a GPU that failed the
 * probe.
 */
#include <stdio.h>
#include <string.h>

#include "kit_args.h"
#include "kit_check.h"
#include "kit_result.h"

__global__ void probe_child(int *flag) { *flag = 42; }

__global__ void probe_parent(int *flag)
{
    probe_child<<<1, 1>>>(flag);
    KIT_CHECK_LAUNCH();
}

static void write_result(const char *path, int gpu, int dp_ok, const char *reason, int count)
{
    if (path == NULL)
        return;
    kit_json_t j;
    kit_json_open(&j, path);
    kit_json_begin_object(&j, NULL);
    kit_json_bool(&j, "gpu", gpu);
    kit_json_bool(&j, "dp_ok", dp_ok);
    kit_json_string(&j, "reason", reason);
    if (gpu) {
        char bus_id[32] = "";
        KIT_CHECK(cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, 0));
        kit_json_int(&j, "device_count", count);
        kit_json_string(&j, "pci_bus_id", bus_id);
        kit_json_device(&j);
    }
    kit_json_end_object(&j);
    kit_json_close(&j);
}

/* No options of its own: only the process's --json (--help says so). */
static const kit_option_t options[] = {KIT_OPTIONS_END};

int main(int argc, char **argv)
{
    static const char *const json_only[] = {"--json", NULL};
    kit_options_answer(argc, argv, options);
    kit_options_check(argc, argv, options, json_only);
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    char reason[512];

    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        snprintf(reason, sizeof reason, "no CUDA GPU: cudaGetDeviceCount: %s (%s)",
                 cudaGetErrorName(err), err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        printf("%s\n", reason);
        write_result(json_path, 0, 0, reason, 0);
        return KIT_EXIT_NOT_RUN;
    }

    int *flag = NULL;
    int host_flag = 0;
    KIT_CHECK(cudaMalloc((void **)&flag, sizeof *flag));
    KIT_CHECK(cudaMemset(flag, 0, sizeof *flag));
    kit_launch_log_reset();
    probe_parent<<<1, 1>>>(flag);
    err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        err = cudaMemcpy(&host_flag, flag, sizeof host_flag, cudaMemcpyDeviceToHost);
    kit_launch_log_t launches;
    memset(&launches, 0, sizeof launches);
    if (err == cudaSuccess)
        launches = kit_launch_log_read();

    int dp_ok = err == cudaSuccess && launches.failed == 0 && host_flag == 42;
    if (dp_ok)
        snprintf(reason, sizeof reason, "a device-side launch ran");
    else if (err != cudaSuccess)
        snprintf(reason, sizeof reason, "the probe kernel failed: %s (%s)", cudaGetErrorName(err),
                 cudaGetErrorString(err));
    else if (launches.failed)
        snprintf(reason, sizeof reason, "the device-side launch failed: %s",
                 cudaGetErrorName((cudaError_t)launches.first_error));
    else
        snprintf(reason, sizeof reason, "the child kernel did not run (flag %d)", host_flag);
    printf("dynamic parallelism: %s\n", reason);
    write_result(json_path, 1, dp_ok, reason, count);
    return dp_ok ? 0 : 1;
}
