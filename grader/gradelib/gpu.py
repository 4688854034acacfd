"""Is there a GPU that can run dynamic parallelism? Asked once per grader run, of the kit's probe
(common/probe/cdp_probe.cu), built with the same make rules as the labs. Setting KIT_NO_GPU=1
makes the grader behave as on a machine without one."""
import json
import os
import shutil
import tempfile

from . import build, paths, process, sandbox

PROBE_TIMEOUT = 60


class GpuInfo:
    def __init__(self, available, reason, device=None):
        self.available = available
        self.reason = reason  # why not, when not available
        self.device = device or {}

    @property
    def name(self):
        return self.device.get("name", "")

    @property
    def compute_capability(self):
        if not self.device:
            return ""
        return "%s.%s" % (self.device.get("cc_major"), self.device.get("cc_minor"))

    def to_dict(self):
        return {"available": self.available, "reason": self.reason, "device": self.device}


_cached = {}


def detect(sandboxed=False):
    """The GPU, as the grader's harness runs will meet it: in gradelib.sandbox when sandboxed (a GPU
    that works outside but not inside is no use to a sandboxed grader)."""
    if sandboxed not in _cached:
        _cached[sandboxed] = _probe(sandboxed)
    return _cached[sandboxed]


def known_device():
    """The device document of a probe this process already ran (in the sandbox or not), else None."""
    for info in _cached.values():
        if info.device:
            return info.device
    return None


def _probe(sandboxed):
    if os.environ.get("KIT_NO_GPU"):
        return GpuInfo(False, "no GPU: KIT_NO_GPU is set")
    if not driver_present():
        return GpuInfo(False, NO_DRIVER)  # no CUDA program can run: the probe need not be built to say so
    arch = build.cuda_arch()
    build_dir = os.path.join(paths.BUILD_ROOT, "probe", "sm_%s" % arch)
    with build.kit_build_lock():
        made = build.run_make(paths.PROBE_MAKEFILE, {"BUILD_DIR": build_dir, "CUDA_ARCH": arch})
    if not made.ok:
        return GpuInfo(False, "the kit's GPU probe did not build (%s):\n%s"
                       % (made.describe(), build.compiler_errors(made.output)))
    # Each probe run writes in a folder of its own (graders run side by side); the last result is
    # also kept as build_dir/probe.json, for people and the GPU suite's logs.
    run_dir = tempfile.mkdtemp(prefix="run-", dir=build_dir)
    result_path = os.path.join(run_dir, "probe.json")
    argv = [os.path.join(build_dir, "cdp_probe"), "--json", result_path]
    if sandboxed:
        argv = sandbox.wrap(sandbox.Policy(read_only=[build_dir], writable=[run_dir], devices=sandbox.gpu_devices(),
                                           cwd=run_dir), argv)
    ran = process.run_bounded(argv, PROBE_TIMEOUT, cwd=run_dir)
    try:
        with open(result_path) as f:
            doc = json.load(f)
        os.replace(result_path, os.path.join(build_dir, "probe.json"))
    except (OSError, ValueError):
        return GpuInfo(False, "the kit's GPU probe %s without a result:\n%s"
                       % (ran.describe(PROBE_TIMEOUT), ran.output.strip()))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if doc.get("gpu") and doc.get("dp_ok"):
        return GpuInfo(True, "", doc.get("device"))
    reason = plain_reason(doc.get("reason", "the GPU probe failed"))
    if sandboxed and detect(False).available:
        reason = "the GPU works, but not inside the grading sandbox (are /dev/nvidia* readable by %s?): %s" % (
            "nobody, the user a root grader's sandbox runs as" if os.geteuid() == 0 else "you", reason)
    return GpuInfo(False, reason, doc.get("device"))


DRIVER_DEVICE = "/dev/nvidiactl"  # there whenever the NVIDIA driver is loaded
DRIVER_DEVICES = (DRIVER_DEVICE, "/dev/dxg")  # ... and WSL's GPU, where CUDA runs without it
NO_DRIVER = ("no NVIDIA GPU driver on this machine (the CUDA runtime reports that as "
             "cudaErrorInsufficientDriver; no driver upgrade will help without a GPU)")


def driver_present(nodes=DRIVER_DEVICES):
    """Whether one of the GPU driver's device nodes is here: without one, no CUDA program can run."""
    return any(os.path.exists(node) for node in nodes)


def plain_reason(reason, driver_device=None):
    """The probe's reason in words that do not mislead: with no NVIDIA driver at all, the CUDA runtime
    says cudaErrorInsufficientDriver, which reads as "upgrade your driver". driver_device: one node to
    look for instead of DRIVER_DEVICES."""
    nodes = DRIVER_DEVICES if driver_device is None else (driver_device,)
    if "cudaErrorInsufficientDriver" in reason and not driver_present(nodes):
        return NO_DRIVER
    return reason
