"""Run a command in its own process group, bounded in time and output.

A hang, a crash or a flood of output costs that run, never the grader: the whole process group
is killed at the time limit or once the output passes the flood limit, and only the head and
tail of the output are kept. A run has ended once no process of its group runs any more: a killed
harness still tears its CUDA context down (a kernel that never ends included) after the process the
grader started has gone, when that is the sandbox's (gradelib.sandbox), and the next run to hold the
GPU alone would share it with that context meanwhile.
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
GROUP_EXIT_LIMIT = 30.0  # seconds a killed run's processes may take to exit before the grader goes on anyway
GIVE_WAY_LOOK = 0.25  # seconds between two looks at whether a run past its give_way_after must stop (BoundedRun)

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


def processes():
    """{pid: (parent pid, process group, state, command name)} of every process this one can see."""
    table = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state, ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        table[int(pid)] = (int(ppid), int(pgrp), state, comm)
    return table


def group_runs(pgid):
    """Whether a process of group pgid still runs: one that is not a zombie (a zombie has closed its
    files, the GPU's among them)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False  # the common case, and no /proc to read
    except PermissionError:
        pass  # a member runs as another user: it is there
    return any(pgrp == pgid and state != "Z" for _, pgrp, state, _ in processes().values())


def wait_for_group(pgid, limit=GROUP_EXIT_LIMIT):
    """Wait until no process of group pgid runs, for at most limit seconds."""
    end = time.monotonic() + limit
    while group_runs(pgid) and time.monotonic() < end:
        time.sleep(0.01)


class BoundedRun:
    """A command started in its own process group and read until it ends (finish), or first until its
    channel shows a marker (until): run_bounded in two steps, for a harness run that makes its CUDA
    context before the grader hands it its cases (gradelib.harness.start_run).

    pass_fds: descriptors the command inherits (closed here once it has started).
    channel_fd: the read end of a pipe whose write end is in pass_fds: read alongside the output,
    into RunResult.channel, so a large result document never blocks the command.
    restart_marker: bytes that mark, on the channel, the end of one piece of work of several (a case
    of a harness run): each time one comes, the time limit and the flood limit start again.
    timeout: seconds, or a list of seconds: the limit of each piece of work in turn (the last one's for
    any after it).
    give_way_after, give_way: a list of seconds (or None) for each piece of work in turn, and a function:
    a piece that has run that long is stopped, as at its time limit, once give_way() says so (looked at
    every GIVE_WAY_LOOK seconds at most). The first piece counts from the channel's first line, not
    from the start (a harness writes it once its CUDA context is made).
    """

    def __init__(self, argv, timeout, cwd=None, env=None, flood_limit=FLOOD_LIMIT, pass_fds=(), channel_fd=None,
                 restart_marker=None):
        self.limits = list(timeout) if isinstance(timeout, (list, tuple)) else [timeout]
        self.pieces = 0  # pieces of work done: restart markers seen
        self.flood_limit = flood_limit
        self.channel_fd = channel_fd
        self.restart_marker = restart_marker
        self.give_way_after = []
        self.give_way = None
        self._next_look = 0.0
        self._began = None  # when the piece under way began (its clock's restart; the first's: the channel's first line)
        self.first_line_ns = None  # when the channel's first line came (monotonic ns), or None
        self.start = time.monotonic()
        self.keeper = _OutputKeeper()
        self.channel = bytearray()
        self.channel_dropped = False
        self.verdict = None
        self.deadline = self.start + self.timeout
        self.output_before = 0  # the output the pieces of work before this one printed (restart_marker)
        self.ended = False  # the output and the channel are read to their end, or the run was stopped
        self.proc = None
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         start_new_session=True, pass_fds=tuple(pass_fds))
        except OSError as err:
            self.not_found = "%s: %s" % (argv[0], err.strerror)
        finally:
            for passed in pass_fds:  # the command has its copies; ours would keep the pipes open
                os.close(passed)
        if self.proc is None:
            return
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout.fileno(), selectors.EVENT_READ)
        if channel_fd is not None:
            self.selector.register(channel_fd, selectors.EVENT_READ)

    @property
    def timeout(self):
        """The time limit of the piece of work under way."""
        return self.limits[min(self.pieces, len(self.limits) - 1)]

    def restart_clock(self):
        """The time limit starts again from now (the command was kept waiting, by the grader, not by
        itself)."""
        self._began = time.monotonic()
        self.deadline = self._began + self.timeout

    def _gives_way(self, now):
        after = self.give_way_after[min(self.pieces, len(self.give_way_after) - 1)] if self.give_way_after else None
        if after is None or self._began is None or now - self._began < after or now < self._next_look:
            return False
        self._next_look = now + GIVE_WAY_LOOK
        return self.give_way()

    def until(self, marker):
        """Read until the channel holds marker: True, or False once the run ended, was stopped (its time
        limit, its flood limit) or cannot say so any more."""
        if self.proc is None:
            return False
        return self._pump(marker)

    def _pump(self, marker=None):
        sel = self.selector
        fd = self.proc.stdout.fileno()
        while sel.get_map() and self.verdict is None:
            if marker is not None and marker in self.channel:
                return True
            now = time.monotonic()
            remaining = self.deadline - now
            if remaining <= 0 or self._gives_way(now):
                self.verdict = TIMEOUT
                break
            exited = self.proc.poll() is not None
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
                    self.keeper.add(chunk)
                elif len(self.channel) + len(chunk) <= CHANNEL_LIMIT:
                    seen = len(self.channel)
                    self.channel += chunk
                    if self._began is None and b"\n" in self.channel:
                        self.first_line_ns = time.monotonic_ns()
                        self._began = self.first_line_ns / 1e9
                    marked = self.restart_marker
                    ended = self.channel[max(0, seen - len(marked) + 1):].count(marked) if marked else 0
                    if ended:
                        self.pieces += ended
                        self.restart_clock()
                        self.output_before = self.keeper.total
                else:
                    self.channel_dropped = True
            if self.keeper.total - self.output_before > self.flood_limit:
                self.verdict = FLOOD
        self.ended = True
        return marker is not None and marker in self.channel

    def stop(self):
        """Stop the run now, as at its time limit: its RunResult."""
        self.verdict = self.verdict or TIMEOUT
        return self.finish()

    def finish(self):
        """Read the run to its end, or stop it at its limits: its RunResult."""
        if self.proc is None:
            return RunResult(NOT_FOUND, None, self.not_found, 0.0, 0)
        if not self.ended:
            self._pump()
        self.selector.close()
        proc = self.proc
        if self.verdict is None:
            try:
                proc.wait(max(0.0, self.deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.verdict = TIMEOUT
        _kill_group(proc)  # also ends anything the command left behind
        proc.wait()
        wait_for_group(proc.pid)  # the sandboxed harness and its CUDA context, which outlive proc when killed
        proc.stdout.close()
        seconds = time.monotonic() - self.start

        signal_name = None
        verdict = self.verdict
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
        kept_channel = None if self.channel_fd is None or self.channel_dropped else bytes(self.channel)
        return RunResult(verdict, proc.returncode, self.keeper.text(), seconds, self.keeper.total, signal_name,
                         kept_channel)


def run_bounded(argv, timeout, cwd=None, env=None, flood_limit=FLOOD_LIMIT, pass_fds=(), channel_fd=None,
                restart_marker=None):
    """Run argv with stdout and stderr merged; return a RunResult (BoundedRun says what the options do)."""
    return BoundedRun(argv, timeout, cwd, env, flood_limit, pass_fds, channel_fd, restart_marker).finish()
