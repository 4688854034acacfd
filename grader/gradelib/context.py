"""What a lab's checks see of one grading: its cases (drawn from the seed, the lab and the instructor's
salt), the student's staged sources and PTX, and each case's harness run."""
import os
import random
import re

from . import build, paths, ptx


class CaseRun:
    """One harness run: the parameters, what the process did, and its result document."""

    def __init__(self, params, result, doc, problem, failure=None):
        self.params = params
        self.result = result
        self.doc = doc
        self.problem = problem  # None when the run was clean
        self.failure = failure  # why not, as a kind of gradelib.failures
        self.alone = False  # it had the GPU to itself (gpushare)
        self.host_busy_before = []  # why each earlier run of this case was too busy to judge (runs.run_all)

    def label(self):
        return " ".join("%s=%s" % kv for kv in self.params.items())


def case_rng(seed, lab_name, salt=None):
    """The random source of a lab's test cases: the seed, the lab and the instructor's salt. With a
    salt, the public seed alone does not tell a student which inputs are graded."""
    salt = paths.instructor_salt() if salt is None else salt
    return random.Random("%s:%s" % (seed, lab_name) + (":" + salt if salt else ""))


class Context:
    """What check functions see."""

    def __init__(self, lab, submission_dir, work_dir, seed, timeout, sandboxed=True):
        self.lab = lab
        self.sandboxed = sandboxed  # builds and runs in gradelib.sandbox
        self.submission_dir = submission_dir
        self.work_dir = work_dir
        self.build_dir = os.path.join(work_dir, "build")
        self.seed = seed
        self.timeout = timeout  # --timeout, or None: each case its lab's limit (time_limit)
        self.cases = lab.make_cases(case_rng(seed, lab.name))
        self.ptx = {}
        self.program = None  # the built harness, set by the "compiles" check
        self.runs = []      # the runs the checks judge: every run, or after a timing case ran out of time, the clean ones
        self.all_runs = []  # every case's run ("runs cleanly"), for the report
        self.memcheck_costs = []  # each memcheck run's wait for the GPU and its time, for the report

    def time_limit(self, params, alone=True):
        """Seconds a case may run, with the GPU alone or shared: the grading's --timeout where given, else
        its lab's for that case."""
        return self.timeout or self.lab.case_time_limit(params, alone)

    def ptx_calls(self):
        """Functions called anywhere in the PTX of the student's .cu files."""
        found = set()
        for text in self.ptx.values():
            found |= ptx.called_functions(text)
        return found

    def ptx_call_count(self, name):
        return sum(ptx.count_calls(text, name) for text in self.ptx.values())

    def launch_order(self, function_name=None):
        """(launches, unchecked) in the student's PTX, of one function or of all: the device launches,
        and those with a path on which no cudaGetLastError() follows them (ptx.unchecked_launches)."""
        launches = unchecked = 0
        for text in self.ptx.values():
            for mangled, body in ptx.definitions(text).items():
                if function_name is None or ptx.names(mangled, function_name):
                    launches += ptx.count_calls(body, ptx.DEVICE_LAUNCH)
                    unchecked += ptx.unchecked_launches(body)
        return launches, unchecked

    def kernel_ptx(self, kernel_name):
        """The PTX of one kernel of the student's files (ptx.kernel_text), or None."""
        for text in self.ptx.values():
            body = ptx.kernel_text(text, kernel_name)
            if body is not None:
                return body
        return None

    def student_sources(self):
        """The text of the student's .cu files as staged for this build, one after another."""
        texts = []
        for name in self.student_cu_files():
            with open(os.path.join(self.work_dir, "src", name)) as f:
                texts.append(f.read())
        return "\n".join(texts)

    def student_code(self):
        """The student's sources as the compiler sees them: no comments, and none of the
        "#ifdef KIT_STARTER" branches the kit's own solution files keep (the build never compiles them)."""
        return compiled_text(self.student_sources())

    def student_cu_files(self):
        return [f for f in build.lab_vars(self.lab.name)["student_files"] if f.endswith(".cu")]


def compiled_text(source):
    """source without comments and without "#ifdef KIT_STARTER" branches."""
    source = re.sub(r"^[ \t]*#ifdef[ \t]+KIT_STARTER\b.*?^[ \t]*#(?:else|endif)\b", "", source, flags=re.S | re.M)
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", source, flags=re.S)
