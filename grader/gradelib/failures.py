"""Why a submission did not build or did not run cleanly, as kinds the code compares.

The kit's checks "compiles" and "runs cleanly" return a kind with their message (Outcome.kind); each
harness run that is not clean has one too (CaseRun.failure). Messages are for students and may be
reworded freely: the score sheet's verdict is read from these kinds (VERDICTS), never from words.

A check that raised is a grader bug (GRADER_BUG: its submission is not graded, gradelib.batch grades it
again). What this machine could not do (MACHINE_PROBLEMS: the grading sandbox not made, the kit's own
objects not built) is raised past the checks, never counted against a submission.
"""
from .sandbox import SandboxFailed


class MachineProblem(RuntimeError):
    """This machine could not grade: never the submission's doing."""


MACHINE_PROBLEMS = (MachineProblem, SandboxFailed)

# "compiles"
MISSING_FILE = "missing-file"
REFUSED_FILE = "refused-file"      # a link, or a file too large to be a source file
COMPILE_ERROR = "compile-error"    # the build failed or ran out of time
REFUSED_CODE = "refused-code"      # the objects import, define or run what the lab does not allow (gradelib.objects)

# a harness run
TIMEOUT = "timeout"
CRASH = "crash"                    # killed by a signal
OUTPUT_FLOOD = "output-flood"
CUDA_ERROR = "cuda-error"          # the harness stopped on a CUDA error (KIT_EXIT_CUDA_ERROR)
FAILED_LAUNCHES = "failed-launches"  # the launch log: device launches or device runtime calls failed
NO_RESULT = "no-result"            # finished without a valid result document
EXIT_STATUS = "exit-status"        # any other non-zero exit status (the harness's usage error included)
LAB_PROBLEM = "lab-problem"        # the lab's own reason a run is not clean (its runs_cleanly problem)

# any check
GRADER_BUG = "grader-bug"          # the check raised: no verdict of the submission's can rest on it

# The score sheet's phrase for each kind. A failed "runs cleanly" shows the first of RUN_ORDER that
# any of its runs had: the most telling first.
VERDICTS = {
    MISSING_FILE: "missing file",
    REFUSED_FILE: "refused file",
    COMPILE_ERROR: "compile error",
    REFUSED_CODE: "refused code",
    TIMEOUT: "timeout",
    CRASH: "crash",
    OUTPUT_FLOOD: "output flood",
    CUDA_ERROR: "CUDA error",
    FAILED_LAUNCHES: "failed device launches",
    NO_RESULT: "no valid result",
    EXIT_STATUS: "runs not clean",
    LAB_PROBLEM: "runs not clean",
    GRADER_BUG: "grader error",
}
RUN_ORDER = (TIMEOUT, CRASH, OUTPUT_FLOOD, CUDA_ERROR, FAILED_LAUNCHES, NO_RESULT, EXIT_STATUS, LAB_PROBLEM)
