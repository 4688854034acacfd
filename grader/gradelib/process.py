"""Run a command in its own process group, bounded in time and output.

A hang, a crash or a flood of output costs that run, never the grader: the whole process group
is killed at the time limit or once the output passes the flood limit, and only the head and
tail of the output are kept.
"""
import os
import selectors
import signal
import subprocess
import time

KEEP_HEAD = 16 * 1024
KEEP_TAIL = 16 * 1024
FLOOD_LIMIT = 8 * 1024 * 1024
CHANNEL_LIMIT = 256 * 1024 * 1024  # a result document larger than this is dropped, not kept

OK = "ok"            # exited with status 0
EXITED = "exited"    # exited with a non-zero status
TIMEOUT = "timeout"  # killed at the time limit
FLOOD = "flood"      # killed for printing more than the flood limit
CRASHED = "crashed"  # killed by a signal it did not get from us
NOT_FOUND = "not-found"  # the program could not be started


class RunResult:
    def __init__(self, verdict, returncode, output, seconds, total_bytes, signal_name=None, channel=None):
        self.verdict = verdict
        self.returncode = returncode
        self.output = output
        self.seconds = seconds
        self.total_bytes = total_bytes
        self.signal_name = signal_name
        self.channel = channel  # bytes read from the result channel (None: no channel, or too large)
        self.costs = {}  # what a harness run cost, by phase (harness.run_costs)

    @property
    def ok(self):
        return self.verdict == OK

    def describe(self, timeout=None):
        """One line for a person: what happened to the run."""
        if self.verdict == OK:
            return "exited normally"
        if self.verdict == EXITED:
            return "exited with status %d" % self.returncode
        if self.verdict == TIMEOUT:
            return "did not finish within the time limit (%gs): a hang or runaway work" % timeout if timeout else \
                "did not finish within the time limit: a hang or runaway work"
        if self.verdict == FLOOD:
            return "printed more than %d MiB of output and was stopped" % (FLOOD_LIMIT // (1024 * 1024))
        if self.verdict == CRASHED:
            return "crashed (%s)" % self.signal_name
        return "could not be started: %s" % self.output.strip()


class _OutputKeeper:
    """Keeps the first KEEP_HEAD and last KEEP_TAIL bytes of a stream."""

    def __init__(self):
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk):
        self.total += len(chunk)
        room = KEEP_HEAD - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > KEEP_TAIL:
                del self.tail[: len(self.tail) - KEEP_TAIL]

    def text(self):
        dropped = self.total - len(self.head) - len(self.tail)
        middle = b"" if dropped <= 0 else b"\n[... %d bytes of output not shown ...]\n" % dropped
        return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", errors="replace")


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_bounded(argv, timeout, cwd=None, env=None, flood_limit=FLOOD_LIMIT, pass_fds=(), channel_fd=None,
                restart_marker=None):
    """Run argv with stdout and stderr merged; return a RunResult.

    pass_fds: descriptors the command inherits (closed here once it has started).
    channel_fd: the read end of a pipe whose write end is in pass_fds: read alongside the output,
    into RunResult.channel, so a large result document never blocks the command.
    restart_marker: bytes that mark, on the channel, the end of one piece of work of several (a case
    of a harness run): each time one comes, the time limit and the flood limit start again.
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, pass_fds=tuple(pass_fds))
    except OSError as err:
        return RunResult(NOT_FOUND, None, "%s: %s" % (argv[0], err.strerror), 0.0, 0)
    finally:
        for passed in pass_fds:  # the command has its copies; ours would keep the pipes open
            os.close(passed)

    keeper = _OutputKeeper()
    channel = bytearray()
    channel_dropped = False
    verdict = None
    deadline = start + timeout
    output_before = 0  # the output the pieces of work before this one printed (restart_marker)
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        if channel_fd is not None:
            sel.register(channel_fd, selectors.EVENT_READ)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                verdict = TIMEOUT
                break
            exited = proc.poll() is not None
            # Once the command has exited, take what is already written and stop: a process it left
            # behind may hold the pipes open forever.
            ready = sel.select(0 if exited else min(remaining, 0.5))
            if not ready:
                if exited:
                    break
                continue
            for key, _ in ready:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.fd == fd:
                    keeper.add(chunk)
                elif len(channel) + len(chunk) <= CHANNEL_LIMIT:
                    seen = len(channel)
                    channel += chunk
                    if restart_marker and restart_marker in channel[max(0, seen - len(restart_marker) + 1):]:
                        deadline = time.monotonic() + timeout
                        output_before = keeper.total
                else:
                    channel_dropped = True
            if keeper.total - output_before > flood_limit:
                verdict = FLOOD
                break
    if verdict is None:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            verdict = TIMEOUT
    _kill_group(proc)  # also ends anything the command left behind
    proc.wait()
    proc.stdout.close()
    seconds = time.monotonic() - start

    signal_name = None
    if verdict is None:
        if proc.returncode == 0:
            verdict = OK
        elif proc.returncode < 0:
            verdict = CRASHED
            try:
                signal_name = signal.Signals(-proc.returncode).name
            except ValueError:
                signal_name = "signal %d" % -proc.returncode
        else:
            verdict = EXITED
    kept_channel = None if channel_fd is None or channel_dropped else bytes(channel)
    return RunResult(verdict, proc.returncode, keeper.text(), seconds, keeper.total, signal_name, kept_channel)
