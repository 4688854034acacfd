"""A lab's harness: its contract, declared once in the lab's rubric module, and the one way the kit
builds and runs it (the grader, make figures, the threshold measurements and mutation testing).

The contract names every option the harness takes (with the range its C code accepts) and every key
of the result document it writes. tests of the grader check it against the C options table and the
recorded documents, so a case the grader draws never meets "the harness rejected its parameters".
"""
import json
import os
import secrets
import time

from . import build, gpushare, process, sandbox

# The key under which a result document says why the harness left its case out (a case too large for
# this GPU's memory): such a case is not counted, never failed.
NOT_RUN = "not_run"

# Options every harness takes that the kit, not a case, sets: where the result goes, and its nonce.
CHANNEL_OPTIONS = ("--json", "--nonce-fd")


class Option:
    """One harness option. key: the case parameter it comes from (snake_case); flag: "--" + key with
    dashes; low..high: the integers the harness accepts, or choices: the words it accepts."""

    def __init__(self, key, low=None, high=None, choices=None):
        self.key = key
        self.flag = "--" + key.replace("_", "-")
        self.low = low
        self.high = high
        self.choices = tuple(choices) if choices else None

    def problem(self, value):
        """Why the harness would refuse value, or None."""
        if self.choices is not None:
            return None if value in self.choices else "%s %r is not one of %s" % (self.flag, value, self.choices)
        if not isinstance(value, int) or isinstance(value, bool):
            return "%s %r is not an integer" % (self.flag, value)
        if not self.low <= value <= self.high:
            return "%s %d is outside %d..%d" % (self.flag, value, self.low, self.high)
        return None


class Contract:
    """What a lab's harness takes and writes.

    options      the Options, in the order they are passed
    result_keys  the top-level keys of every result document
    optional_result_keys  keys a document has only in some runs (e.g. "not_run" where memory is short)
    grading_defaults  option values the grader passes when a case does not set them (e.g. no timed repeats)
    case_keys    case parameters that are for the checks only (e.g. "timing"): never passed
    """

    def __init__(self, options, result_keys, optional_result_keys=(), grading_defaults=None, case_keys=()):
        self.options = list(options)
        self.result_keys = frozenset(result_keys)
        self.optional_result_keys = frozenset(optional_result_keys)
        self.grading_defaults = dict(grading_defaults or {})
        self.case_keys = frozenset(case_keys)
        self._by_key = {o.key: o for o in self.options}

    def flags(self):
        """Every option the harness takes, the kit's channel options included."""
        return {o.flag for o in self.options} | set(CHANNEL_OPTIONS)

    def argv(self, params):
        """The harness's arguments for a case: each option the case (or grading_defaults) sets.
        Raises ValueError for a parameter the contract does not know or a value the harness would refuse:
        a kit bug, caught by the kit's tests, never a student's."""
        values = dict(self.grading_defaults)
        values.update(params)
        unknown = sorted(k for k in values if k not in self._by_key and k not in self.case_keys)
        if unknown:
            raise ValueError("case parameter(s) %s are neither harness options nor case keys" % ", ".join(unknown))
        args = []
        for option in self.options:
            if option.key in values:
                problem = option.problem(values[option.key])
                if problem:
                    raise ValueError(problem)
                args += [option.flag, str(values[option.key])]
        return args

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
CLOCK_LINE = b"kit-clock "  # the last: when main began, the CUDA context was made, the document done


def _split_clock(rest):
    """(the document's bytes, [main, ready, done] in CLOCK_MONOTONIC ns or None) of the channel after
    its nonce line."""
    body, _, last = rest.rstrip(b"\n").rpartition(b"\n")
    if not last.startswith(CLOCK_LINE):
        return rest, None
    try:
        stamps = [int(x) for x in last[len(CLOCK_LINE):].split()]
    except ValueError:
        return body, None
    return body, (stamps if len(stamps) == 3 and all(stamps) else None)


def read_channel(data, nonce):
    """The result document from the channel's bytes, or (None, why not). The document counts only
    when its first line carries this run's nonce."""
    if data is None:
        return None, "its result was too large to read"
    first, _, rest = data.partition(b"\n")
    if not first.startswith(NONCE_LINE):
        return None, "it wrote no result on the grader's channel"
    if first[len(NONCE_LINE):].decode("ascii", "replace") != nonce:
        return None, "its result did not carry this run's nonce (not written by the kit's harness for this run)"
    try:
        return json.loads(_split_clock(rest)[0].decode("utf-8")), None
    except ValueError:
        return None, "its result was not valid JSON (cut short, or written over)"


def run_costs(data, spawned_ns, ended_ns, waited_s):
    """What one run cost, in seconds: waiting for the GPU (gpushare), then, from the channel's
    kit-clock line where there is one, start (process, sandbox, loader: until main), context (making
    the CUDA context), case (the case's work, until the document was written) and exit (tearing
    down); total: from the process's start to its end. Diagnostics only: a run can forge its clock."""
    costs = {"wait_s": round(waited_s, 4), "total_s": round((ended_ns - spawned_ns) / 1e9, 4)}
    stamps = None
    if data is not None and data.startswith(NONCE_LINE):
        stamps = _split_clock(data.partition(b"\n")[2])[1]
    if stamps and spawned_ns <= stamps[0] <= stamps[1] <= stamps[2] <= ended_ns:
        marks = [spawned_ns] + stamps + [ended_ns]
        for key, begin, end in zip(("start_s", "context_s", "case_s", "exit_s"), marks, marks[1:]):
            costs[key] = round((end - begin) / 1e9, 4)
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
                          tmp_bytes=RUN_TMP_BYTES, max_file_bytes=RUN_FILE_BYTES, max_processes=RUN_PROCESSES)


RUN_LOG_ENV = "KIT_RUN_LOG"  # a file: one JSON line per harness run (when, alone or not, what it cost)


def _log_run(program, alone, spawned_ns, result):
    """Append the run to $KIT_RUN_LOG, where set: a timeline of every run of every grader on a machine
    (the kit's GPU suite reads it to see where the time goes)."""
    path = os.environ.get(RUN_LOG_ENV)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "program": os.path.basename(program),
                       "alone": alone, "spawned_s": spawned_ns / 1e9, "verdict": result.verdict,
                       "costs": result.costs}) + "\n"
    with open(path, "a") as f:
        f.write(line)


def run_argv(argv, timeout, cwd=None, sandboxed=False, alone=True):
    """Run a harness with a fresh result channel and nonce: (RunResult, document or None, why none).

    The document travels on a pipe the grader creates for this run, never through a file, and is
    accepted only with this run's nonce: printing a pass line or writing a results file does not
    count. sandboxed: in gradelib.sandbox, with run_policy (cwd is then the sandbox's /tmp).
    alone: hold the GPU alone for the run, else share it (gpushare). The RunResult's costs say what
    the run cost (run_costs)."""
    program = argv[0]
    nonce = secrets.token_hex(16)
    nonce_read, nonce_write = os.pipe()
    os.write(nonce_write, nonce.encode("ascii") + b"\n")
    os.close(nonce_write)
    channel_read, channel_write = os.pipe()
    argv = argv + ["--json", "fd:%d" % channel_write, "--nonce-fd", str(nonce_read)]
    if sandboxed:
        argv = sandbox.wrap(run_policy(argv[0]), argv)
    try:
        with gpushare.gate().held(alone) as waited:
            spawned = time.monotonic_ns()
            result = process.run_bounded(argv, timeout, cwd=cwd, pass_fds=(channel_write, nonce_read),
                                         channel_fd=channel_read)
            ended = time.monotonic_ns()
    finally:
        os.close(channel_read)
    result.costs = run_costs(result.channel, spawned, ended, waited)
    _log_run(program, alone, spawned, result)
    if sandboxed:
        sandbox.check_made(result, "a harness run")
    doc, why = read_channel(result.channel, nonce)
    return result, doc, why


def run(lab, program, params, timeout, cwd=None, sandboxed=False, alone=True):
    """Run a lab's built harness on one case (its parameters, through the lab's contract):
    (RunResult, document or None, why none). alone: as for run_argv."""
    return run_argv([program] + lab.harness_args(params), timeout, cwd, sandboxed, alone)


def build_program(lab, source_dir, build_dir, targets=("all",)):
    """Build a lab from the files in source_dir (a solution, a known-wrong submission, a student's
    folder) with the kit's make rules: (path of the harness program, or None when the build failed;
    the make RunResult)."""
    made = build.make(lab.name, source_dir, build_dir, list(targets), build.cuda_arch())
    program = os.path.join(build_dir, build.lab_vars(lab.name)["program"])
    return (program if made.ok else None), made
