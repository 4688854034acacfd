"""A lab's harness: its contract, declared in the lab's rubric module, and the one way the kit builds and
runs it (the grader, make figures, the threshold measurements and mutation testing).

A harness's options are declared once, in its C table (kit_option_t, kit_args.h): the built program
prints them with --describe (describe() below reads them), and refuses anything else before it makes a
CUDA context. The contract names the keys of the result document the harness writes, and which case
parameters are for the checks only; every other case parameter is an option, passed as --name-with-dashes.
The kit's tests check each lab's drawn cases against its built reference's description.
"""
import json
import os
import secrets
import subprocess
import time

from . import build, gpushare, process, sandbox

# The key under which a result document says why the harness left its case out (a case too large for
# this GPU's memory): such a case is not counted, never failed.
NOT_RUN = "not_run"

# Options every harness takes for the whole process, set by the kit, never by a case: where the
# results go, the nonce, the cases (kit_harness.h).
PROCESS_OPTIONS = ("--json", "--nonce-fd", "--cases-fd")


def flag(key):
    """The harness option of a case parameter: "max_dwell" -> "--max-dwell"."""
    return "--" + key.replace("_", "-")


def describe(program, timeout=30):
    """{flag: option} of a built harness, from its --describe (kit_options_describe): each option a dict
    with "help" and "default", and "low" and "high" (an integer option) or "words". It makes no CUDA
    context, so it runs without a GPU. Raises RuntimeError when the program does not describe itself."""
    proc = subprocess.run([program, "--describe"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    try:
        options = json.loads(proc.stdout.decode("utf-8"))["options"]
        return {o["flag"]: o for o in options}
    except (ValueError, KeyError, TypeError):
        raise RuntimeError("%s --describe (exit %d) did not print its options: %s"
                           % (program, proc.returncode, proc.stderr.decode("utf-8", "replace")[-500:]))


def option_problem(described, key, value):
    """Why a harness described as described would refuse value for the case parameter key, or None."""
    option = described.get(flag(key))
    if option is None:
        return "%s is not an option of the harness (it takes %s)" % (flag(key), ", ".join(sorted(described)))
    if "words" in option:
        return None if value in option["words"] else "%s %r is not one of %s" % (flag(key), value, option["words"])
    if not isinstance(value, int) or isinstance(value, bool):
        return "%s %r is not an integer" % (flag(key), value)
    if not option["low"] <= value <= option["high"]:
        return "%s %d is outside %d..%d" % (flag(key), value, option["low"], option["high"])
    return None


class Contract:
    """What a lab's harness writes, and how a case becomes its arguments.

    result_keys  the top-level keys of every result document
    optional_result_keys  keys a document has only in some runs (e.g. "not_run" where memory is short)
    grading_defaults  option values the grader passes when a case does not set them (e.g. no timed repeats)
    case_keys    case parameters that are for the checks only (e.g. "timing"): never passed
    The grader sends a submission's cases to one process (kit_harness.h).
    """

    def __init__(self, result_keys, optional_result_keys=(), grading_defaults=None, case_keys=()):
        self.result_keys = frozenset(result_keys)
        self.optional_result_keys = frozenset(optional_result_keys)
        self.grading_defaults = dict(grading_defaults or {})
        self.case_keys = frozenset(case_keys)

    def options(self, params):
        """{key: value} of the options a case passes: its parameters over grading_defaults, but case_keys."""
        values = dict(params)
        for key, value in self.grading_defaults.items():
            values.setdefault(key, value)
        return {k: v for k, v in values.items() if k not in self.case_keys}

    def argv(self, params):
        """The harness's arguments for a case: --name value for each option it passes. A value that is
        neither an integer nor a word is a kit bug (ValueError); what the harness accepts is its own
        table's to say (case_problems)."""
        args = []
        for key, value in self.options(params).items():
            if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip() \
                    or len(str(value).split()) != 1:
                raise ValueError("case parameter %s=%r is not one integer or word" % (key, value))
            args += [flag(key), str(value)]
        return args

    def case_problems(self, described, params):
        """Why the harness described as described would refuse this case: [problem] (none: [])."""
        return [p for p in (option_problem(described, k, v) for k, v in self.options(params).items()) if p]

    def document_problem(self, doc):
        """How a result document differs from the contract, or None. A document that says its case
        was not run (NOT_RUN: too little GPU memory) needs none of the result keys."""
        keys = set(doc)
        missing = [] if NOT_RUN in doc else sorted(self.result_keys - keys)
        extra = sorted(keys - self.result_keys - self.optional_result_keys - {NOT_RUN})
        if missing or extra:
            return "result keys missing: %s; not in the contract: %s" % (missing or "none", extra or "none")
        return None


# ---- running a harness ------------------------------------------------------------------------

NONCE_LINE = b"kit-nonce "  # the first line a harness writes on the channel (kit_result.h)
CASE_LINE = b"kit-case "    # after each case's document: the case is done (kit_harness.h)
HOLD_LINE = b"kit-hold "    # between cases: the run waits for the grader's go (kit_harness.h)
CLOCK_LINE = b"kit-clock "  # the last: when main began, the CUDA context was made, the last case ended
DEFERRED = "kit_deferred"   # the document of a case the harness deferred to a fresh process


class ChannelCase:
    """What the channel says of one case: its document (or None, and why none), when it began and
    ended (CLOCK_MONOTONIC ns, or None), and whether it is done (its kit-case line came)."""

    def __init__(self, doc=None, why=None, begin_ns=None, end_ns=None, done=False):
        self.doc = doc
        self.why = why
        self.begin_ns = begin_ns
        self.end_ns = end_ns
        self.done = done


def _stamps(line, prefix, count):
    """The integers after prefix on line, when there are count of them, none negative; else None."""
    try:
        stamps = [int(x) for x in line[len(prefix):].split()]
    except ValueError:
        return None
    return stamps if len(stamps) == count and all(x >= 0 for x in stamps) else None


def _document(line):
    """A ChannelCase of one document line, not yet done."""
    try:
        doc = json.loads(line.decode("utf-8"))
    except ValueError:
        return ChannelCase(why="its result was not valid JSON (cut short, or written over)")
    return ChannelCase(doc=doc) if isinstance(doc, dict) else ChannelCase(why="its result was not a JSON object")


def read_channel(data, nonce):
    """What a run's channel says: ([ChannelCase] in order, the last one possibly not done; the
    kit-clock stamps [main, ready, done] or None; why no case can be read from it, or None: None exactly
    when the channel's first line carries this run's nonce). Documents count only then."""
    if data is None:
        return [], None, "its result was too large to read"
    first, _, rest = data.partition(b"\n")
    if not first.startswith(NONCE_LINE):
        return [], None, "it wrote no result on the grader's channel"
    if first[len(NONCE_LINE):].decode("ascii", "replace") != nonce:
        return [], None, "its result did not carry this run's nonce (not written by the kit's harness for this run)"
    lines = rest.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    clock = _stamps(lines.pop(), CLOCK_LINE, 3) if lines and lines[-1].startswith(CLOCK_LINE) else None
    cases = []
    current = None  # the case being read: its document came, its kit-case line not yet
    for line in lines:
        if current is None and line.startswith(HOLD_LINE):
            continue
        if line.startswith(CASE_LINE):
            case = current or ChannelCase(why="it wrote no result on the grader's channel")
            current = None
            stamps = _stamps(line, CASE_LINE, 3)
            if stamps is None or stamps[0] != len(cases):
                case.doc, case.why = None, "its result's case line was not the kit's"
                cases.append(case)
                break
            case.begin_ns, case.end_ns, case.done = stamps[1], stamps[2], True
            cases.append(case)
        elif current is None:
            current = _document(line)
        else:  # a second document where a case line was due
            current.doc, current.why = None, "its result was not valid JSON (cut short, or written over)"
            break
    if current is not None:
        cases.append(current)
    return cases, (clock if clock and all(clock) else None), None


class CaseOutcome:
    """One case of a harness run (run_cases): the process's RunResult where the case is the one the
    process ended on, else a clean one of its own; its document or None and why; what it cost
    (run_costs). state: DONE, DEFERRED (run it again in a fresh process), NOT_STARTED (the process
    ended before it: run it again, unless the process hung)."""

    def __init__(self, state, result=None, doc=None, why=None):
        self.state = state
        self.result = result
        self.doc = doc
        self.why = why


DONE, DEFERRED_STATE, NOT_STARTED = "done", "deferred", "not started"


def _case_output(output, k):
    """Case k's part of a run's output: from the driver's "== case K:" line to the next one (the
    whole output where the lines are not there: the head and tail kept may not hold them)."""
    begin = output.find("== case %d:" % k)
    if begin < 0:
        return output
    end = output.find("== case %d:" % (k + 1), begin)
    return output[begin:] if end < 0 else output[begin:end]


def run_costs(cases, clock, spawned_ns, ended_ns, waited_s, count, handed_ns=None, resumed=None, made_ns=None):
    """What each of count cases cost, in seconds: [{phase: s}], one per case ({} for a case that did not
    run). The first case carries the run's wait for the GPU (gpushare), its start (process, sandbox,
    loader: until main) and its context (making the CUDA context); each case its own span (case_s,
    from the end of the case before, or from the context); the last case, the exit (tearing down) when
    every case was done, else the case the run ended on, the rest of the run. total_s: a case's phases
    but the wait. handed_ns: when the run was handed its cases (a started run, start_run; else when it
    was spawned): the time it waited for them, with its context made, counts as wait. resumed: {k: (when
    the grader let the run go on at case k's hold, the seconds it waited for the GPU there)}: case k's
    span starts at its go, and that wait is its own. Where the channel's stamps do not fit inside the
    run, the first case carries the whole run. made_ns: when the channel's first line came, which the
    harness writes once its CUDA context is made: a run with no clock line (stopped before its end) then
    says it made its context, by when (start_context_s: its start and its context together).
    run_segments adds held_s to each segment's first case: how long the segment held the GPU (from its
    cases' start, for a run started before its hold).
    Diagnostics only: a run can forge its stamps."""
    costs = [{} for _ in range(count)]
    if not count:
        return costs
    ends = [c.end_ns for c in cases if c.done][:count]
    ready = clock[1] if clock else None
    idle_ns = max(0, handed_ns - ready) if clock and handed_ns is not None else 0
    marks = [spawned_ns] + (clock[:2] if clock else []) + [e - idle_ns for e in ends] + [ended_ns - idle_ns]
    if not clock or any(b < a for a, b in zip(marks, marks[1:])):
        costs[0] = {"wait_s": round(waited_s + idle_ns / 1e9, 4),
                    "total_s": round((ended_ns - spawned_ns - idle_ns) / 1e9, 4)}
        if not clock and made_ns is not None and spawned_ns <= made_ns <= ended_ns:
            costs[0]["start_context_s"] = round((made_ns - spawned_ns) / 1e9, 4)
        return costs

    def span(a, b):
        return round((b - a) / 1e9, 4)

    costs[0] = {"start_s": span(spawned_ns, clock[0]), "context_s": span(clock[0], clock[1])}
    resumed = resumed or {}
    previous = ready + idle_ns
    for k in range(min(count, len(ends) + 1)):
        if k in resumed:
            previous = max(previous, resumed[k][0])
        end = ends[k] if k < len(ends) else ended_ns
        costs[k]["case_s"] = span(previous, end)
        previous = end
    if len(ends) == count:
        costs[count - 1]["exit_s"] = span(previous, ended_ns)
    for c in costs:
        if c:
            c["total_s"] = round(sum(c.values()), 4)
    costs[0]["wait_s"] = round(waited_s + idle_ns / 1e9, 4)
    for k, (_, waited) in resumed.items():
        if k < count and costs[k]:
            costs[k]["wait_s"] = round(waited, 4)
    return costs


# A sandboxed harness run's limits: its private /tmp, the largest file it may write, its processes and
# threads (the CUDA runtime starts a few).
RUN_TMP_BYTES = 256 << 20
RUN_FILE_BYTES = 64 << 20
RUN_PROCESSES = 256


def run_policy(program):
    """What a sandboxed harness run sees: its program's folder (read-only), the GPU, a private /tmp."""
    return sandbox.Policy(read_only=[os.path.dirname(os.path.abspath(program))],
                          devices=sandbox.gpu_devices(), cwd="/tmp",
                          tmp_bytes=RUN_TMP_BYTES, max_file_bytes=RUN_FILE_BYTES, max_processes=RUN_PROCESSES,
                          env=gpushare.visible_env())


def made_context(first_costs):
    """Whether a run's first case's costs (run_costs) say the run made its CUDA context: timed by its clock
    line, or, stopped before its end, by its channel's first line (start_context_s)."""
    return "context_s" in first_costs or "start_context_s" in first_costs


RUN_LOG_ENV = "KIT_RUN_LOG"  # a file: one JSON line per harness run (when, alone or not, what it cost)


def _log_run(program, alone, slots, started_before, begin_ns, end_ns, held_from_ns, verdict, cases, costs, segment=0,
             tool=False, ended=None):
    """Append a run, or a segment of one (run_segments), to $KIT_RUN_LOG, where set: a timeline of every
    run of every grader on a machine (the kit's GPU suite reads it to see where the time goes): its
    cases, what each cost, and how long it held the GPU (held_s: from held_from_ns, its cases' start
    for a run started before its hold (start_run) or a later segment, else its spawn), and the shared
    slots it held (slots, for a shared run); gpu: its GPU's gate (gpushare.gate_dir); segment: 0 for a run's
    first, or only, segment; tool: a run of the harness under a tool (run_under), program the tool's;
    cases_ended: how many of its cases ended (ended), where known: a run stopped at a limit writes no
    clock line, so its costs do not say in which case it was stopped."""
    path = os.environ.get(RUN_LOG_ENV)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "gpu": gpushare.gate().folder, "program": os.path.basename(program),
                       "alone": alone,
                       "slots": 0 if alone else slots, "started_before": started_before, "spawned_s": begin_ns / 1e9,
                       "seconds": round((end_ns - begin_ns) / 1e9, 4), "held_s": round((end_ns - held_from_ns) / 1e9, 4),
                       "verdict": verdict, "cases": cases, "costs": costs, "segment": segment,
                       **({"tool": True} if tool else {}),
                       **({"cases_ended": ended} if ended is not None else {})}) + "\n"
    with open(path, "a") as f:
        f.write(line)


class StartedRun:
    """A harness process of run_segments: its pipes, its nonce, its cases' lines. Run by run_segments,
    or first started with its cases held back (start_run) and handed them later (hand_cases). holds:
    the cases before which the run waits for go() (kit_harness.h's kit-hold)."""

    def __init__(self, lab, program, cases, limits, cwd, sandboxed, hold_cases, holds=(), tool=None):
        lines = "".join(("kit-hold\n" if k in holds else "") + " ".join(lab.harness_args(params)) + "\n"
                        for k, params in enumerate(cases))
        lines = (lines + ("kit-end\n" if holds else "")).encode("ascii")
        if len(lines) > 60000:  # a pipe holds 64 KiB: the lines are written before the harness reads them
            raise ValueError("%d cases are too many for one run" % len(cases))
        self.lines = lines
        self.holds = set(holds)
        self.nonce = secrets.token_hex(16)
        nonce_read, nonce_write = os.pipe()
        os.write(nonce_write, self.nonce.encode("ascii") + b"\n")
        os.close(nonce_write)
        cases_read, self.cases_write = os.pipe()
        if not hold_cases:
            self._write_cases()
        self.channel_read, channel_write = os.pipe()
        argv = [program, "--json", "fd:%d" % channel_write, "--nonce-fd", str(nonce_read), "--cases-fd",
                str(cases_read)]
        if tool is not None:  # (its argv prefix, the folder it lives in): the harness runs under it
            argv = list(tool[0]) + argv
        if sandboxed:
            policy = run_policy(program)
            if tool is not None:
                policy.read_only.append(tool[1])
            argv = sandbox.wrap(policy, argv)
        self.spawned_ns = self.handed_ns = time.monotonic_ns()
        self.waited_before_s = 0.0  # start_run's wait to make its context
        self.ready = None  # its place among the processes waiting for a run alone (start_run)
        self.bounded = process.BoundedRun(argv, limits, cwd=cwd, env=None if sandboxed else gpushare.run_env(),
                                          pass_fds=(channel_write, nonce_read, cases_read),
                                          channel_fd=self.channel_read, restart_marker=b"\n" + CASE_LINE)

    def _write_cases(self):
        os.write(self.cases_write, self.lines)
        if not self.holds:
            self._close_cases()

    def _close_cases(self):
        if self.cases_write is not None:
            os.close(self.cases_write)
            self.cases_write = None

    def at_hold(self, k):
        """Read the run until it waits at case k's hold: True, or False once it ended or hit a limit."""
        return self.bounded.until(b"\n" + HOLD_LINE + b"%d\n" % k)

    def go(self, k):
        """Let a run waiting at case k's hold go on: its time limit starts again."""
        self.bounded.restart_clock()
        self.holds.discard(k)
        try:
            os.write(self.cases_write, b"kit-go\n")
        except OSError:  # it ended meanwhile: finish() says how
            pass
        if not self.holds:
            self._close_cases()

    def hand_cases(self, limits):
        """A started run's cases, handed over now: its time limit starts again, limits[k] seconds for
        case k (stamped before the lines go: the harness may start at once)."""
        self.handed_ns = time.monotonic_ns()
        self.bounded.limits = list(limits)
        self.bounded.restart_clock()
        self._let_go_of_ready()
        self._write_cases()

    def _let_go_of_ready(self):
        if self.ready is not None:
            self.ready()
            self.ready = None

    def finish(self, stop=False):
        """The run to its end, or stopped now (stop): its RunResult, the pipes closed."""
        try:
            return self.bounded.stop() if stop else self.bounded.finish()
        finally:
            os.close(self.channel_read)
            self._close_cases()
            self._let_go_of_ready()

    def discard(self):
        """A started run not used: stopped, its pipes closed."""
        self.finish(stop=True)


# Seconds a started run may take to make its context (no student code runs before): on the H100, with
# the kit's suite starting a few hundred processes side by side, the driver took up to 5.4 s for one.
START_LIMIT = 30


def case_limits(timeout, cases, alone=True):
    """Each case's time limit, in seconds: timeout, or timeout(params, alone) where it is a function (alone:
    whether the case runs with the GPU alone)."""
    return [timeout(params, alone) if callable(timeout) else timeout for params in cases]


def start_run(lab, program, cases, timeout, cwd=None, sandboxed=False, tool=None, alone=True):
    """Start a harness process for cases, with its cases held back: a StartedRun, or None for a process
    that did not make its context within START_LIMIT or its cases' longest limit (timeout: run_segments),
    the longer (it ended, hung or flooded): run_cases starts it afresh. It makes its CUDA context with the
    GPU shared (its first line on the channel says it is made), then waits, doing nothing on the GPU,
    for run_cases to hand it its cases, so that a grader that holds the GPU does not spend the hold on
    process start and context. alone: its hold will be alone; it first takes one of the few places of
    the processes that wait so (gpushare.Gate.ready), let go once it is handed its cases. tool: as
    StartedRun's, the run under it."""
    gate = gpushare.gate()
    began = time.monotonic()
    ready = gate.ready() if alone else None
    try:
        with gate.held(False):
            waited = time.monotonic() - began
            run = StartedRun(lab, program, cases, max(case_limits(timeout, cases) + [START_LIMIT]), cwd,
                             sandboxed, hold_cases=True, tool=tool)
            run.ready, ready = ready, None
            run.waited_before_s = waited
            if not run.bounded.until(b"\n"):
                run.discard()
                return None
    finally:
        if ready is not None:
            ready()
    return run


def run_cases(lab, program, cases, timeout, cwd=None, sandboxed=False, alone=True, started=None, slots=1):
    """Run a lab's built harness on several cases in one process: run_segments with one segment, the GPU
    held alone (alone) or shared, holding slots of it. started: the StartedRun of these cases
    (start_run), else a process is started here."""
    return run_segments(lab, program, [(alone, slots, cases)], timeout, cwd, sandboxed, started)


def run_segments(lab, program, segments, timeout, cwd=None, sandboxed=False, started=None):
    """Run a lab's built harness on several cases in one process (kit_harness.h), so in one CUDA
    context: [CaseOutcome], one per case, in order. segments: [(alone, slots, cases)], run one after
    another, each with the GPU held as it says (gpushare: alone, or shared holding slots of it); the
    process waits at each later segment's first case (a hold) until the grader holds the GPU for it.
    Each case's options go through the lab's contract.

    The documents travel on a pipe the grader creates for this run, never through a file, and count
    only with this run's nonce: printing a pass line or writing a results file does not count. Each
    case has its time limit (timeout: seconds, or (params, alone) -> seconds, alone as its segment
    holds the GPU) from the end of the case before it (the first, from the process's start, or for a
    started run, from when it is handed its cases; the first of a segment, from its go), and its own
    share of output before it counts as a flood.
    sandboxed: in gradelib.sandbox, with run_policy (cwd is then the sandbox's /tmp). started: the
    StartedRun of a one-segment run (start_run), else a process is started here.
    A shared case that has run longer than its limit alone gives way to a run that waits to hold the
    GPU alone: it is stopped as at its limit, and so runs again alone (runs.take_outcomes), where a hang
    is told from a busy GPU: a hang holds the runs alone back for its limit alone, not its shared one."""
    segments = [segment for segment in segments if segment[2]]
    cases = [params for _, _, group in segments for params in group]
    limits = [limit for alone, _, group in segments for limit in case_limits(timeout, group, alone)]
    give_way_after = [None if alone or mine >= limit else mine for alone, _, group in segments
                      for mine, limit in zip(case_limits(timeout, group, True), case_limits(timeout, group, alone))]
    firsts = [sum(len(group) for _, _, group in segments[:s]) for s in range(len(segments))]
    run = started
    waited_first = 0.0
    resumed = {}  # the first case of each later segment: (its go, the wait for the GPU there)
    spans = []    # each segment that ran: (when it began, when it ended), monotonic ns
    for s, (alone, slots, group) in enumerate(segments):
        with gpushare.gate().held(alone, slots) as waited:
            if run is None:
                run = StartedRun(lab, program, cases, limits, cwd, sandboxed, hold_cases=False, holds=firsts[1:])
                waited_first = waited
                run.bounded.give_way_after = give_way_after
                run.bounded.give_way = gpushare.gate().alone_waiting
            elif s:  # stamped before the go: the harness may start the case at once
                resumed[firsts[s]] = (time.monotonic_ns(), waited)
                run.go(firsts[s])
            else:  # a started run, handed its cases now
                run.hand_cases(limits)
                waited_first = waited
            begin = resumed[firsts[s]][0] if s else run.spawned_ns
            if s + 1 < len(segments) and run.at_hold(firsts[s + 1]):
                spans.append((begin, time.monotonic_ns()))
                continue
            result = run.finish()
            ended = time.monotonic_ns()
            spans.append((begin, ended))
            break
    if sandboxed:
        sandbox.check_made(result, "a harness run")
    found, clock, why = read_channel(result.channel, run.nonce)
    made_ns = run.bounded.first_line_ns if why is None else None  # its first line carried this run's nonce
    costs = run_costs(found, clock, run.spawned_ns, ended, waited_first + run.waited_before_s, len(cases),
                      run.handed_ns, resumed, made_ns)
    outcomes = []
    ended_on = None  # the case the process ended on: the first not done, else the last

    def deferred(case):
        return case is not None and case.done and case.doc is not None and DEFERRED in case.doc
    # The kit's harness runs at least one case of every process; one that deferred them all would send
    # the grader round in circles, and was not the kit's. A process stopped before its last case may
    # have been about to run it (Lab 04's, the case of its largest heap): what it deferred runs again.
    all_deferred = len(found) >= len(cases) and all(deferred(found[k]) for k in range(len(cases)))
    for k in range(len(cases)):
        case = found[k] if k < len(found) else None
        done = case is not None and case.done
        if deferred(case) and not all_deferred:
            outcomes.append(CaseOutcome(DEFERRED_STATE, doc=case.doc))
        elif done and (result.ok or k < len(cases) - 1):
            clean = process.RunResult(process.OK, 0, _case_output(result.output, k),
                                      (case.end_ns - case.begin_ns) / 1e9, result.total_bytes)
            if deferred(case):
                outcomes.append(CaseOutcome(DONE, clean, None, "it deferred every case of its process "
                                                               "(not the kit's harness)"))
            else:
                outcomes.append(CaseOutcome(DONE, clean, case.doc, case.why))
        elif ended_on is None:
            ended_on = k
            outcomes.append(CaseOutcome(DONE, result, case.doc if case else None,
                                        why or (case.why if case else None)))
        else:
            outcomes.append(CaseOutcome(NOT_STARTED))
    for outcome, cost in zip(outcomes, costs):
        if outcome.result is not None:
            outcome.result.costs = cost
    for s, (begin, end) in enumerate(spans):
        alone, slots, group = segments[s]
        last = s == len(spans) - 1
        held_from = begin if s else run.handed_ns  # its cases' start where it was started before its hold
        # the hold is the grader's own, kept where the run wrote no clock line too (stopped at its limit)
        costs[firsts[s]]["held_s"] = round((end - held_from) / 1e9, 4)
        ended = sum(1 for case in found[firsts[s]:firsts[s] + len(group)] if case is not None and case.done)
        _log_run(program, alone, slots, started is not None or s > 0, begin, end, held_from,
                 result.verdict if last else process.OK, len(group), costs[firsts[s]:firsts[s] + len(group)], s,
                 ended=ended)
    return outcomes


def run_under(tool_argv, tool_folder, lab, program, params, timeout, cwd=None, sandboxed=False, slots=1,
              alone=False):
    """Run a lab's built harness on one case under a tool (tool_argv: the tool's argv prefix, e.g.
    compute-sanitizer's; tool_folder: where it lives, which a sandboxed run must see), the GPU shared,
    holding slots of it (or alone): its RunResult. What the tool says is in the output, and the tool's
    exit status is the run's. The run starts as start_run's do, the tool and the harness's CUDA context
    made with the GPU shared, and holds the GPU as asked for its case only: compute-sanitizer took about
    0.8 s to get that far, its case 0.2 s (Lab 05's memcheck case on an H200, RESULTS.md). A run that did
    not get that far starts afresh under the hold."""
    tool = (tool_argv, tool_folder)
    limits = case_limits(timeout, [params])
    run = start_run(lab, program, [params], timeout, cwd, sandboxed, tool, alone)
    started = run is not None
    waited_before = run.waited_before_s if started else 0.0
    with gpushare.gate().held(alone, slots) as waited:
        begin = time.monotonic_ns()
        if not started:
            run = StartedRun(lab, program, [params], limits, cwd, sandboxed, hold_cases=False, tool=tool)
        else:
            run.hand_cases(limits)
        result = run.finish()
        end = time.monotonic_ns()
    made = run.bounded.first_line_ns
    idle_s = max(0, begin - made) / 1e9 if made is not None else 0.0  # with its context made, before its hold
    result.costs = {"wait_s": round(waited + waited_before + idle_s, 4),  # as run_costs's
                    "total_s": round(result.seconds - idle_s, 4), "held_s": round((end - begin) / 1e9, 4),
                    "alone": alone}
    # in the run log under the tool's name: a run like the harness's, which holds the GPU as they do
    _log_run(tool_argv[0], alone, slots, started, begin, end, begin, result.verdict, 1, [result.costs], tool=True)
    if sandboxed:
        sandbox.check_made(result, "a harness run under %s" % os.path.basename(tool_argv[0]))
    return result


def run(lab, program, params, timeout, cwd=None, sandboxed=False, alone=True):
    """Run a lab's built harness on one case: (RunResult, document or None, why none). alone: as for
    run_cases."""
    outcome = run_cases(lab, program, [params], timeout, cwd, sandboxed, alone)[0]
    return outcome.result, outcome.doc, outcome.why


def build_program(lab, source_dir, build_dir, targets=("all",)):
    """Build a lab from the files in source_dir (a solution, a known-wrong submission, a student's
    folder) with the kit's make rules: (path of the harness program, or None when the build failed;
    the make RunResult)."""
    made = build.make(lab.name, source_dir, build_dir, list(targets), build.cuda_arch())
    program = os.path.join(build_dir, build.lab_vars(lab.name)["program"])
    return (program if made.ok else None), made
