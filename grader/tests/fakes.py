"""The one stand-in for grading.Context in the grader's tests: harness runs given as (params, document)
pairs, the student's PTX and source given as text, and the real Context's readers over them."""
from gradelib import grading
from gradelib.grading import CaseRun


class FakeContext:
    def __init__(self, runs=(), ptx=None, source="", work_dir=None):
        self.runs = [CaseRun(p, None, d, None) for p, d in runs]
        self.ptx = ptx or {}
        self.source = source
        self.work_dir = work_dir

    def student_sources(self):
        return self.source

    # the real readers of the student's PTX and code
    ptx_calls = grading.Context.ptx_calls
    ptx_call_count = grading.Context.ptx_call_count
    kernel_ptx = grading.Context.kernel_ptx
    launch_order = grading.Context.launch_order
    student_code = grading.Context.student_code
