"""Who runs on the GPU at once: harness runs that time nothing share it; a run that times something,
or needs most of its memory, has it to itself.

Every harness run the grader starts (harness.run_cases) passes through the gate, shared or alone:

  shared  up to sharers() runs at once, on this machine, from every grader process of this user (a
          class batch, a test suite running several tests at once, a second terminal). Each is a
          process with its own CUDA context; the GPU time-slices between them, which no check that
          takes no timing can see. Each shared run takes one slot, of BYTES_PER_SHARER of GPU memory;
          a run that needs more takes as many slots as its memory fills (slots_for), so that the
          shared runs together keep to the memory they would have one slot each.
  alone   waits until no other run (shared or alone) holds the GPU, and holds it alone: what it
          measures is its own work.

A run that waits to be alone stops new shared runs from starting (a turnstile), so a busy class
does not starve it; runs alone that wait while one runs go before any shared run, so the shared runs
drain once for all of them. The gate is made of flock(2) locks on files in a folder of the user's own
(gate_dir()): a grader that dies releases what it held, and two kit checkouts on one machine share
one gate. Within one process, a semaphore keeps to the same number of shared runs; processes that
wait for slots take turns, so that one that lets a slot go and wants one again does not keep out another.

A process started before its run alone (harness.start_run) makes its CUDA context with the GPU shared
and then waits for the run alone, its context made. At most READY_BEFORE_ALONE processes per GPU wait
so (ready): every CUDA context made costs more for each process alive on the GPU (measured: RESULTS.md,
"Lab 05's class: its memcheck run alone"; with the places, "Lab 05's class: few processes wait for a
run alone").

KIT_GPU_SHARERS=N sets how many shared runs may hold the GPU at once (1: every run has it alone,
one at a time, as on a GPU that other people use too).

Each GPU has a gate of its own (a folder named after its PCI bus id, which names it for every grader
whatever CUDA_VISIBLE_DEVICES they were given: a grader that sees one GPU of several and one that picked
it among them share its gate). A grading holds one GPU (on_gpu, for the thread that grades it): its runs
go through that GPU's gate and, where the grader picked it among several, see only that GPU (run_env,
the sandbox's env). The probe that names a GPU holds every gate shared (every_gpu_shared).
"""
import contextlib
import fcntl
import glob
import os
import re
import tempfile
import threading
import time

from . import gpu

SHARERS_ENV = "KIT_GPU_SHARERS"
MAX_SHARERS = 16           # more contexts than this gain nothing: each run's start is CPU work
BYTES_PER_SHARER = 2 << 30  # every shared run may use 2 GiB of GPU memory (a lab's shared cases use less)
READY_BEFORE_ALONE = 2  # processes per GPU with their context made, waiting for a run alone


def sharers(device=None, cpus=None):
    """How many harness runs may share the GPU: KIT_GPU_SHARERS when set, else one per core and per
    BYTES_PER_SHARER of the GPU's memory (device: the probe's document), at most MAX_SHARERS."""
    given = os.environ.get(SHARERS_ENV, "").strip()
    if given:
        try:
            return max(1, int(given))
        except ValueError:
            raise SystemExit("%s must be a whole number, not %r" % (SHARERS_ENV, given))
    cpus = cpus or os.cpu_count() or 1
    memory = (device or {}).get("total_memory_bytes")
    by_memory = memory // BYTES_PER_SHARER if memory else 1  # unknown memory: no sharing
    return max(1, min(MAX_SHARERS, cpus, by_memory))


def slots_for(gpu_bytes):
    """The shared slots a run that may take gpu_bytes of GPU memory holds (None: one, within its share)."""
    return max(1, -(-gpu_bytes // BYTES_PER_SHARER)) if gpu_bytes else 1


def gate_dir(info=None):
    """The gate's lock files: one folder per user, machine and GPU, outside any kit checkout, named after
    the GPU's PCI bus id (info: its gpu.GpuInfo), which names it for every grader whatever
    CUDA_VISIBLE_DEVICES they were given; the machine's own folder where no GPU is known."""
    folder = os.path.join(tempfile.gettempdir(), "cdp-kit-gpu-gate-%d" % os.getuid())
    name = info is not None and (info.pci_bus_id or info.token)
    return folder + "-" + re.sub(r"[^0-9A-Za-z]", "_", name) if name else folder


@contextlib.contextmanager
def every_gpu_shared():
    """Every gate of this machine (each GPU's that a grader used) held shared, for the body: for a CUDA
    program that cannot know its GPU's gate before it runs (the kit's probe, which reports the bus id), so
    that it makes no context beside a run that has any GPU alone. It waits for one gate holding no other,
    then takes the rest only if none of them must be waited for: holding one GPU's gate while it waits
    for another's would hold that GPU's runs alone back behind the other GPU's."""
    base = gate_dir()
    folders = sorted(f for f in glob.glob(glob.escape(base) + "*") if f == base or f.startswith(base + "-"))
    # Any free slot of the most a gate has, as a shared run takes one: a gate of one would make every
    # such holder wait for the same lock, and one that takes it again and again (tools/busy_host.py's
    # context loops) would keep it from another for minutes, as its lock is looked for only now and then.
    gates = [Gate(MAX_SHARERS, folder) for folder in folders]
    waited = 0
    while True:
        with contextlib.ExitStack() as stack:
            if gates:
                stack.enter_context(gates[waited].held(False))
            try:
                for k, other in enumerate(gates):
                    if k != waited:
                        stack.enter_context(other.held(False, wait=False))
            except BlockingIOError:
                waited = k
                continue
            yield
            return


# .alone: this thread holds the GPU alone, through whichever gate (one per sharers() count and GPU; those
# of one GPU all on one gpu lock file): a run it starts meanwhile must not wait for the lock the thread holds.
_this_thread = threading.local()


class Gate:
    def __init__(self, count, folder=None):
        self.count = count
        self.folder = folder or gate_dir()
        self._free_in_process = count  # slots no thread of this process holds
        self._waiting_for_several = 0  # threads of this process waiting for more than one slot
        self._slots_changed = threading.Condition()
        self._ready_in_process = threading.Semaphore(READY_BEFORE_ALONE)

    def _open(self, name):
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        return os.open(os.path.join(self.folder, name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _through_turnstile(self, mode, wait=True):
        """The GPU lock, taken in mode (LOCK_SH shared, LOCK_EX alone) behind the turnstile: a run
        waiting to be alone holds the turnstile, and no shared run starts meanwhile. A shared run that
        finds the GPU held alone waits for that run outside the turnstile and then passes it again, so
        the runs alone that queued meanwhile go first, one after another, instead of each waiting for
        the shared runs that started between them to end. Shared and not wait: BlockingIOError where it
        would wait."""
        turnstile, gpu = self._open("turnstile"), self._open("gpu")
        wanted = self._open("alone-wanted") if mode == fcntl.LOCK_EX else None
        try:
            if wanted is not None:
                fcntl.flock(wanted, fcntl.LOCK_SH)  # until it holds the GPU (alone_waiting)
            while True:
                fcntl.flock(turnstile, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                if mode == fcntl.LOCK_EX:
                    fcntl.flock(gpu, fcntl.LOCK_EX)
                    return gpu
                try:
                    fcntl.flock(gpu, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    return gpu
                except BlockingIOError:
                    if not wait:
                        raise
                fcntl.flock(turnstile, fcntl.LOCK_UN)
                fcntl.flock(gpu, fcntl.LOCK_SH)  # until the run alone ends
                fcntl.flock(gpu, fcntl.LOCK_UN)
        except BaseException:
            os.close(gpu)
            raise
        finally:
            os.close(turnstile)  # closing releases it
            if wanted is not None:
                os.close(wanted)

    def alone_waiting(self):
        """Whether a run waits to hold this GPU alone: a shared case past the limit it would have alone
        gives way to it (harness.run_segments)."""
        fd = self._open("alone-wanted")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    def _slots(self, slots, name="slot", count=None, poll_s=0.05, wait=True):
        """slots of the count (default: the gate's) lock files name-k, shared by every process on this
        machine: any that are free, from the top; where fewer are free, none is kept (no two runs can
        wait for each other) and it looks again every poll_s, among all of them (a process that waited
        for one of them would miss another let go meanwhile); not wait: BlockingIOError instead. Those
        that look take turns (the lock name-queue): one that lets a slot go and at once wants one again
        waits behind the one looking, which gets the slot let go at its next look."""
        queue = self._open(name + "-queue")
        fds = [self._open("%s-%d" % (name, k)) for k in range(count or self.count)]
        kept = []  # what is returned; on an exception, nothing (closing a lock file lets its lock go)
        try:
            fcntl.flock(queue, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            while True:
                taken = []
                for fd in reversed(fds):
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue
                    taken.append(fd)
                    if len(taken) == slots:
                        kept = taken
                        return kept
                for fd in taken:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                if not wait:
                    raise BlockingIOError("fewer than %d of the %s locks are free" % (slots, name))
                time.sleep(poll_s)
        finally:
            os.close(queue)  # closing lets its turn go
            for fd in fds:
                if fd not in kept:
                    os.close(fd)

    @contextlib.contextmanager
    def _in_process(self, slots, wait=True):
        """slots of this process's count, taken together: a run that needs several does not hold some
        while it waits for the rest, and while it waits, runs of one slot do not take the slots it waits
        for. Not wait: BlockingIOError where it would wait."""
        def free():
            return self._free_in_process >= slots and (slots > 1 or not self._waiting_for_several)
        with self._slots_changed:
            if not wait and not free():
                raise BlockingIOError("this process holds the slots")
            self._waiting_for_several += slots > 1
            self._slots_changed.wait_for(free)
            self._waiting_for_several -= slots > 1
            self._free_in_process -= slots
        try:
            yield
        finally:
            with self._slots_changed:
                self._free_in_process += slots
                self._slots_changed.notify_all()

    def ready(self):
        """A place among the READY_BEFORE_ALONE processes of this GPU that may wait, their contexts made,
        for a run alone: a function that lets it go, to call once the run holds the GPU (or is not used);
        None in a thread that holds the GPU alone already. Within one process, a semaphore keeps to the
        same count, so that no more of its threads look for a place than there are places."""
        if getattr(_this_thread, "alone", False):
            return None
        self._ready_in_process.acquire()
        try:
            fd, = self._slots(1, "ready", READY_BEFORE_ALONE)
        except BaseException:
            self._ready_in_process.release()
            raise

        def let_go():
            os.close(fd)
            self._ready_in_process.release()
        return let_go

    @contextlib.contextmanager
    def held(self, alone, slots=1, wait=True):
        """Hold the GPU, alone or shared (slots of it: slots_for), for the body; yields the seconds spent
        waiting. A run that needs more slots than there are holds it alone. Within a body that holds it
        alone, the same thread holds it already: a grader takes it once for all of a submission's runs
        alone, so that shared runs drain once for them, not once each. Shared and not wait: BlockingIOError,
        holding nothing, where it would wait."""
        started = time.monotonic()
        if getattr(_this_thread, "alone", False):
            yield 0.0
            return
        if alone or slots > self.count:
            gpu = self._through_turnstile(fcntl.LOCK_EX)
            _this_thread.alone = True
            try:
                yield time.monotonic() - started
            finally:
                _this_thread.alone = False
                os.close(gpu)
            return
        with self._in_process(slots, wait):
            taken = self._slots(slots, wait=wait)
            try:
                gpu = self._through_turnstile(fcntl.LOCK_SH, wait)
                try:
                    yield time.monotonic() - started
                finally:
                    os.close(gpu)
            finally:
                for fd in taken:
                    os.close(fd)


_gates = {}
_gates_lock = threading.Lock()


def gate():
    """The gate of this thread's GPU (on_gpu), else of the GPU the grader's probe found, sized by
    sharers() for it (before a probe: one run at a time)."""
    info = getattr(_this_thread, "gpu", None)
    count = sharers(info.device if info is not None else gpu.known_device())
    folder = gate_dir(info)
    with _gates_lock:
        if (count, folder) not in _gates:
            _gates[(count, folder)] = Gate(count, folder)
        return _gates[(count, folder)]


@contextlib.contextmanager
def on_gpu(info):
    """This thread's harness runs, for the body, on the GPU info (a gpu.GpuInfo): its gate, and where the
    grader picked it among several (its token), only it visible to them."""
    before = getattr(_this_thread, "gpu", None)
    _this_thread.gpu = info
    try:
        yield
    finally:
        _this_thread.gpu = before


def visible_env():
    """The variables a harness run of this thread gets for its GPU ({} where the grader picked none)."""
    info = getattr(_this_thread, "gpu", None)
    return {} if info is None or info.token is None else {gpu.VISIBLE: info.token}


def run_env():
    """The environment of an unsandboxed harness run of this thread: None (the grader's) where no GPU
    was picked."""
    extra = visible_env()
    return dict(os.environ, **extra) if extra else None
