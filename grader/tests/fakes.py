"""The one stand-in for context.Context in the grader's tests: harness runs given as (params, document)
pairs, the student's PTX and source given as text, and the real Context's readers over them. And
the one way the tests run grade.py and make as a user does, on a machine without a GPU."""
import os
import subprocess
import sys
from unittest import mock

from gradelib import build, context, gpushare, harness, paths
from gradelib.context import CaseRun

GRADE = os.path.join(paths.KIT_ROOT, "grader", "grade.py")


def run_grade(args, env_extra=None, timeout=None):
    """grade.py ARGS with KIT_NO_GPU=1 (and env_extra): the finished process, output and errors in stdout."""
    env = dict(os.environ, KIT_NO_GPU="1", **(env_extra or {}))
    return subprocess.run([sys.executable, GRADE] + list(args), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)


def private_gate(folder):
    """Patches that give a test's graders a GPU gate of their own, in folder: the graders of a GPU suite
    running on this machine meanwhile neither hold up the test's fake runs nor wait for them, and the
    suite's log of harness runs (KIT_RUN_LOG) does not count the fake ones."""
    return [mock.patch.object(gpushare, "gate_dir", lambda info=None: os.path.join(folder, "gate")),
            mock.patch.dict(gpushare._gates, clear=True),
            mock.patch.dict(os.environ, {harness.RUN_LOG_ENV: ""})]


def run_make(*args):
    """make ARGS in the kit's top folder with KIT_NO_GPU=1, without an outer make's variables."""
    return subprocess.run(["make", "--no-print-directory"] + list(args), cwd=paths.KIT_ROOT,
                          env=dict(build.make_env(), KIT_NO_GPU="1"), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)


class FakeContext:
    def __init__(self, runs=(), ptx=None, source="", work_dir=None):
        self.runs = [CaseRun(p, None, d, None) for p, d in runs]
        self.ptx = ptx or {}
        self.source = source
        self.work_dir = work_dir

    def student_sources(self):
        return self.source

    # the real readers of the student's PTX and code
    ptx_calls = context.Context.ptx_calls
    ptx_call_count = context.Context.ptx_call_count
    kernel_ptx = context.Context.kernel_ptx
    launch_order = context.Context.launch_order
    student_code = context.Context.student_code
