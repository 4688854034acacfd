"""The lab registry. Each lab's rubric is a module grader/rubrics/labNN.py that defines LAB = Lab(...);
adding one is all it takes to register a lab (CONTRIBUTING.md)."""
import functools
import importlib
import os
import pkgutil
import re

from . import gpushare, objects, paths

# Seconds a case of ordinary size may run with the GPU alone (Lab.case_time_limit): on an H100, the slowest
# case of Labs 01, 02, 05 and 06 took 1.6 s alone and 3.9 s with 16 runs sharing the GPU.
CASE_TIME_LIMIT = 6
# Seconds any case may run while it shares the GPU, where its own limit is less: the runs beside it
# time-slice the GPU. Measured on four H200s (a class of 200 of each of Labs 03 to 06 side by side, 16
# runs sharing each GPU), Lab 03's 100,000-level chain, 1.2 s alone, went past 6 s shared in 75 of 87
# submissions, and each such case ran again alone. A shared run over this limit still runs again alone
# before it counts as a hang; one past its limit alone gives way sooner to a run waiting to hold the GPU
# alone (harness.run_segments), so a hang does not hold the runs alone back for all of this.
SHARED_TIME_LIMIT = 20


class Lab:
    """What the grader needs to know about one lab, declared once in its rubric module.

    name            folder name, e.g. "01-divergent-counter" (labs/NAME, solutions/NAME, common/harness/NAME)
    title           for reports
    handout         path of the handout, relative to the kit
    harness         the harness's contract (gradelib.harness.Contract): its options and result keys
    make_cases      rng -> list of case parameter dicts; one harness run per dict
    recorded_case   the case whose result documents the kit records (grader/tests/data/recorded/) and
                    draws the handout's figures from
    memcheck_case   the small case the memcheck check runs under compute-sanitizer, and `make sanitize`
                    without ARGS (default: recorded_case): one that reaches the edges of the lab's
                    arrays (a partly filled last block, the largest block), where an access out of
                    bounds happens
    checks          the whole rubric, in order: compiles(...), runs_cleanly(...),
                    memcheck_clean(...) (gradelib.rubric), then the lab's own checks
    starter_must_fail  names of static checks the starter must fail (the kit's own tests use it)
    gpu_bytes       params -> the GPU memory, in bytes, a case's run may take (None: no more than one
                    shared run's share, gpushare.BYTES_PER_SHARER). A case that needs more holds as
                    many shared slots as its memory fills (gpushare.slots_for); one that needs more
                    than all of them has the GPU alone. The cases whose parameters set "timing" always
                    have it alone (times_something), and so do those that set "alone" (WORK_FILLS_GPU);
                    every other case shares the GPU with other runs, which no check that takes no
                    timing can tell.
    heap_per_process  True where the harness sizes a device memory for every case of its process before any
                    runs (Lab 04's device heap, which the runtime fixes once a kernel has called malloc):
                    a process then holds its largest case's memory from its first case, so the cases
                    of more memory than the lightest shared ones run in a second process
                    (runs.first_processes)
    imports         what the student's objects may import beyond what every lab may (gradelib.objects.Imports):
                    the kit functions its header declares for the student's device code, the runtime
                    calls its parts need; its README shows the whole list
    host_too_busy   params, doc -> why the host was too busy for this run's timing to be judged (the kit's own
                    evidence in the document), or None (default: no lab's run is). A clean run alone that it
                    names runs again alone in a fresh process, at most runs.BUSY_RUNS_AGAIN times (runs.run_all)
    time_limit      seconds that a case which times something, or needs more GPU memory than one shared run's
                    share (gpu_bytes), may run unless a grading is told otherwise (grade.py --timeout); every
                    other case gets CASE_TIME_LIMIT, or time_limit where that is less (case_time_limit).
                    The kit's own tests (grader/selftest.py) grade with them too. Ample for every case of the
                    solution and the alternatives run alone, short because a hang, or a wrong submission's
                    runaway work, holds the GPU alone for that long once it runs alone (a shared case over
                    its limit runs again alone before it counts; the clock stops while a run waits for the GPU)
    """

    def __init__(self, name, title, handout, harness, make_cases, recorded_case, checks, starter_must_fail=(),
                 gpu_bytes=None, time_limit=CASE_TIME_LIMIT, memcheck_case=None, imports=None, heap_per_process=False,
                 host_too_busy=None):
        self.name = name
        self.title = title
        self.handout = handout
        self.harness = harness
        self.make_cases = make_cases
        self.recorded_case = dict(recorded_case)
        self.memcheck_case = dict(memcheck_case or recorded_case)
        self.checks = list(checks)
        self.starter_must_fail = tuple(starter_must_fail)
        self.gpu_bytes = gpu_bytes or (lambda params: None)
        self.time_limit = time_limit
        self.imports = imports or objects.Imports()
        self.heap_per_process = heap_per_process
        self.host_too_busy = host_too_busy

    @property
    def number(self):
        return self.name.split("-", 1)[0]

    @property
    def own_checks(self):
        """The lab's own checks: those after the three every rubric starts with (compiles, runs
        cleanly, memcheck)."""
        return self.checks[3:]

    @property
    def max_score(self):
        return sum(c.points for c in self.checks)

    def case_time_limit(self, params, alone=True):
        """Seconds a case may run with the GPU alone: time_limit for a case that times something or holds
        more than one shared slot of the GPU (its memory), at most CASE_TIME_LIMIT for any other, so that
        a hang in a case of ordinary size costs no more than that alone; with the GPU shared (not alone),
        at least SHARED_TIME_LIMIT."""
        heavy = times_something(params) or gpushare.slots_for(self.gpu_bytes(params)) > 1
        limit = self.time_limit if heavy else min(self.time_limit, CASE_TIME_LIMIT)
        return limit if alone else max(limit, SHARED_TIME_LIMIT)

    def harness_args(self, params):
        """The harness's arguments for one case (through the contract)."""
        return self.harness.argv(params)

    def restricted(self, checks, keep_case, title):
        """This lab with only checks (its own, in order) and the cases keep_case(params) keeps, under
        title: those cases as a whole grade with the same seed has them."""
        return Lab(self.name, title, self.handout, self.harness,
                   lambda rng: [c for c in self.make_cases(rng) if keep_case(c)], self.recorded_case, checks,
                   self.starter_must_fail, self.gpu_bytes, self.time_limit, self.memcheck_case, self.imports,
                   self.heap_per_process)

    def check_named(self, name):
        for c in self.checks:
            if c.name == name:
                return c
        return None


def times_something(params):
    """Whether a case has the GPU to itself for what it times: its parameters set "timing"."""
    return bool(params.get("timing"))


# A case parameter, for the grader only (a harness contract's case_keys): the case times nothing, but
# its own work fills the GPU, so it runs with the GPU alone. Shared, such a case outlasts its limit alone
# whenever a class keeps the GPU busy, gives way, and runs again alone all the same: in a class of 200
# Lab 04 submissions on an H200 (16 jobs), 50 of the 60 shared processes that ran the case of 100,000
# lines (a child grid and a heap block per line) were stopped in it, where it takes about 2 s alone, at
# most 2.4 s (RESULTS.md, "Lab 04's largest case alone").
WORK_FILLS_GPU = "alone"


def hint(lab_handout, section):
    """A hint line that names the handout and section."""
    return "read %s, section %s" % (lab_handout, section)


# A hint as hint() writes it: "read handouts/NN-name.md, section 2.6 (title) and 2.7 (title)"; its
# handout and sections, and each section's number and title.
HINT_TEXT = re.compile(r"read (handouts/[\w.-]+\.md), section (.*)$")
HINT_SECTION = re.compile(r"(\d+(?:\.\d+)*) \(((?:[^()]|\([^()]*\))*)\)")


def heading_anchor(text):
    """The anchor GitHub and pandoc's gfm reader give a heading: lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"[`*_]", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def section_anchor(handout, number):
    """The anchor of section number ("2.6", "4") of a handout (its path from the kit's root), or None."""
    try:
        with open(os.path.join(paths.KIT_ROOT, handout)) as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"^#+\s+(%s\.?\s.*?)\s*$" % re.escape(number), text, re.M)
    return heading_anchor(m.group(1)) if m else None


def _load_all():
    import rubrics as rubric_package  # grader/rubrics, on sys.path beside gradelib
    found = {}
    for info in pkgutil.iter_modules(rubric_package.__path__):
        if not info.name.startswith("lab"):
            continue
        module = importlib.import_module("rubrics." + info.name)
        lab = getattr(module, "LAB", None)
        if isinstance(lab, Lab):
            found[lab.name] = lab
    return dict(sorted(found.items()))


_REGISTRY = None


def all_labs():
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _load_all()
    return _REGISTRY


def resolve(spec):
    """'4', '04' or '04-bezier-streams' -> Lab. Raises KeyError with the choices."""
    labs = all_labs()
    spec = spec.strip().rstrip("/")
    spec = os.path.basename(spec)
    if spec.isdigit():
        spec = "%02d" % int(spec)
    for name, lab in labs.items():
        if name == spec or lab.number == spec:
            return lab
    raise KeyError("no lab %r; labs are: %s" % (spec, ", ".join(labs)))
