"""Is there a GPU that can run dynamic parallelism? Asked once per grader run, of the kit's probe
(common/probe/cdp_probe.cu), built with the same make rules as the labs. Setting KIT_NO_GPU=1
makes the grader behave as on a machine without one.

On a host with several GPUs, each is probed on its own (usable): one that fails is left out with its
reason, and the grader spreads submissions over the rest (GpuPool), each submission's runs on one GPU.
KIT_GPUS (or a command's --gpus) names those to use, as CUDA_VISIBLE_DEVICES entries: "0,2"."""
import contextlib
import json
import os
import shutil
import tempfile
import threading

from . import build, paths, process, sandbox

PROBE_TIMEOUT = 60


class GpuInfo:
    def __init__(self, available, reason, device=None, token=None, count=1, pci_bus_id=""):
        self.available = available
        self.reason = reason  # why not, when not available
        self.device = device or {}
        self.token = token  # its CUDA_VISIBLE_DEVICES entry, where the grader picked it among several; else None
        self.count = count  # the GPUs its probe saw
        self.pci_bus_id = pci_bus_id

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


def probe_dir():
    """Where the kit's probe is built for this machine's GPU architecture (its program: cdp_probe)."""
    return os.path.join(paths.BUILD_ROOT, "probe", "sm_%s" % build.cuda_arch())


def _probe(sandboxed, token=None):
    if os.environ.get("KIT_NO_GPU"):
        return GpuInfo(False, "no GPU: KIT_NO_GPU is set")
    if not driver_present():
        return GpuInfo(False, NO_DRIVER)  # no CUDA program can run: the probe need not be built to say so
    build_dir = probe_dir()
    with build.kit_build_lock():
        made = build.run_make(paths.PROBE_MAKEFILE, {"BUILD_DIR": build_dir, "CUDA_ARCH": build.cuda_arch()})
    if not made.ok:
        return GpuInfo(False, "the kit's GPU probe did not build (%s):\n%s"
                       % (made.describe(), build.compiler_errors(made.output)))
    # Each probe run writes in a folder of its own (graders run side by side); the last result is
    # also kept as build_dir/probe.json, for people and the GPU suite's logs.
    run_dir = tempfile.mkdtemp(prefix="run-", dir=build_dir)
    result_path = os.path.join(run_dir, "probe.json")
    argv = [os.path.join(build_dir, "cdp_probe"), "--json", result_path]
    env = None if token is None else {VISIBLE: token}
    if sandboxed:
        argv = sandbox.wrap(sandbox.Policy(read_only=[build_dir], writable=[run_dir], devices=sandbox.gpu_devices(),
                                           cwd=run_dir, env=env), argv)
    # The probe holds the GPU shared, like a harness run: a grader starting beside a timing run that has
    # the GPU alone waits for it, and does not put its context and launch in its way. Its gate is known
    # only by the bus id the probe reports, so it holds every GPU's.
    from . import gpushare  # here: gpushare imports this module
    with gpushare.every_gpu_shared():
        ran = process.run_bounded(argv, PROBE_TIMEOUT, cwd=run_dir, env=env and dict(os.environ, **env))
    try:
        with open(result_path) as f:
            doc = json.load(f)
        os.replace(result_path, os.path.join(build_dir, "probe.json"))
    except (OSError, ValueError):
        return GpuInfo(False, "the kit's GPU probe %s without a result:\n%s"
                       % (ran.describe(PROBE_TIMEOUT), ran.output.strip()))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    found = dict(token=token, count=doc.get("device_count", 1), pci_bus_id=doc.get("pci_bus_id", ""))
    if doc.get("gpu") and doc.get("dp_ok"):
        return GpuInfo(True, "", doc.get("device"), **found)
    reason = plain_reason(doc.get("reason", "the GPU probe failed"))
    if sandboxed and (detect(False) if token is None else _probe(False, token)).available:
        reason = "the GPU works, but not inside the grading sandbox (are /dev/nvidia* readable by %s?): %s" % (
            "nobody, the user a root grader's sandbox runs as" if os.geteuid() == 0 else "you", reason)
    return GpuInfo(False, reason, doc.get("device"), **found)


VISIBLE = "CUDA_VISIBLE_DEVICES"
GPUS_ENV = "KIT_GPUS"


def usable(sandboxed=False, chosen=None, need=None):
    """(the GPUs to grade on, [(CUDA_VISIBLE_DEVICES entry, why left out)]). chosen: the entries to use
    ("0,2"; default $KIT_GPUS, else every GPU visible). With one GPU visible and none chosen: the probe's
    one GpuInfo, its runs left to see what the grader sees (token None), or none. need: the most this
    grader can use (one submission: 1); the GPUs are probed from the process id's turn on until that
    many pass, so that graders side by side take different ones and a grader probes no more than it needs."""
    first = detect(sandboxed)
    chosen = chosen if chosen is not None else os.environ.get(GPUS_ENV, "").strip()
    if chosen in ("", "all"):
        if not first.available or first.count <= 1:
            return ([first] if first.available else []), []
        visible = os.environ.get(VISIBLE)
        tokens = [t.strip() for t in visible.split(",") if t.strip()] if visible else [str(k) for k in range(first.count)]
    else:
        tokens = [t.strip() for t in chosen.split(",") if t.strip()]
    gpus, left_out = [], []
    turn = os.getpid() % len(tokens) if tokens else 0
    for token in tokens[turn:] + tokens[:turn]:
        if need is not None and len(gpus) >= need:
            break
        info = _probe(sandboxed, token)
        if info.available:
            gpus.append(info)
        else:
            left_out.append((token, info.reason.splitlines()[0]))
    return gpus, left_out


class GpuPool:
    """The GPUs a grader spreads its submissions over: each submission takes (checkout) the one with the
    fewest of this process's submissions on it, ties broken by the process id, so that graders side by
    side (a test suite's) start on different GPUs. shown: the GpuInfo a report names (the first GPU), and
    what a grading gets where there is none (why not)."""

    def __init__(self, gpus, shown):
        self.gpus = list(gpus)
        self.shown = shown
        self._busy = [0] * len(self.gpus)
        self._lock = threading.Lock()

    @classmethod
    def probed(cls, sandboxed=False, chosen=None, need=None):
        """(the pool of the usable GPUs, the lines that say which; usable() chooses them)."""
        gpus, left_out = usable(sandboxed, chosen, need)
        lines = ["GPU %s left out: %s" % (token, why) for token, why in left_out]
        if not gpus:
            reason = detect(sandboxed).reason if not left_out else "none of the GPUs chosen passed the kit's probe"
            return cls([], GpuInfo(False, reason or "no GPU")), lines
        first = gpus[0]
        if len(gpus) == 1:
            lines.insert(0, "GPU: %s (compute capability %s)" % (first.name, first.compute_capability))
        else:
            names = sorted({g.name for g in gpus})
            lines.insert(0, "GPUs: %d (%s: %s), each submission's runs on one" % (
                len(gpus), ", ".join(g.token for g in gpus), " and ".join(names)))
        return cls(gpus, first), lines

    @contextlib.contextmanager
    def checkout(self):
        if not self.gpus:
            yield self.shown
            return
        n = len(self.gpus)
        with self._lock:
            k = min(range(n), key=lambda i: (self._busy[i], (i - os.getpid()) % n))
            self._busy[k] += 1
        try:
            yield self.gpus[k]
        finally:
            with self._lock:
                self._busy[k] -= 1


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
