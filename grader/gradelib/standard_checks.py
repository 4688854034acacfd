"""The three checks every rubric starts with: "compiles" (the lab's files staged beside the kit's and
built in the sandbox, the student's objects read first), "runs cleanly" (every case's run, through the
GPU run scheduler) and "no memory errors (memcheck)"."""
import os

from . import build, failures, gpushare, harness, memcheck, objects, paths, process, sandbox
from . import checks as chk
from .registry import times_something
from .runs import output_tail, run_all, runs_alone


COMPILES = "compiles"


RUNS_CLEANLY = "runs cleanly"


def compiles(points, hint, passes=""):
    """The check every rubric starts with: the lab's files staged next to the kit's and built."""
    return chk.Check(COMPILES, points, chk.BUILD, _compiles, hint=hint, passes=passes)


def runs_cleanly(points, hint, problem=None, passes=""):
    """The check every rubric has second: every case's harness run exits normally with a valid result
    document and no failed device launch. problem: optional (params, doc) -> str or None, the lab's
    own reason a run is not clean (e.g. the kit's reference disagreeing with the formula)."""
    return chk.Check(RUNS_CLEANLY, points, chk.RUNTIME, lambda ctx: _runs_cleanly(ctx, problem),
                     parent=COMPILES, hint=hint, passes=passes)


MEMCHECK = "no memory errors (memcheck)"


# Seconds the memcheck run may take, at least: compute-sanitizer starts slower than the harness alone
# and each kernel runs instrumented (measured: RESULTS.md, "compute-sanitizer's memcheck").
MEMCHECK_TIME_LIMIT = 60


OUT_OF_MEMORY = "cudaErrorMemoryAllocation"  # a CUDA call's error in memcheck's report


def memcheck_clean(points, hint, passes=""):
    """The check every rubric has third: the student's build runs the lab's memcheck case (Lab.memcheck_case)
    under compute-sanitizer's memcheck, the device heap checked too, and memcheck reports no error: no
    access out of bounds or misaligned, no bad free, no failed CUDA call. Not run where compute-sanitizer
    is missing (not held against the submission). It runs after a run that crashed or stopped on a CUDA
    error too, where it tells the student most (a read out of bounds that faulted, or did not, by where
    the memory lay), but not after one that hit the time limit (a case that times something aside: too
    slow to time, "runs cleanly" says) or flooded its output. It shares the GPU with other runs, but where
    every case of the submission runs alone (runs.runs_alone) it has the GPU alone too."""
    return chk.Check(MEMCHECK, points, chk.RUNTIME, _memcheck_clean, parent=COMPILES, hint=hint, passes=passes)


def _memcheck_clean(ctx):
    stuck = [r for r in ctx.runs if r.failure in (failures.TIMEOUT, failures.OUTPUT_FLOOD)]
    if stuck:
        return chk.skipped("skipped: %s %s (runs cleanly)" % (stuck[0].label(), failures.VERDICTS[stuck[0].failure]))
    sanitizer = memcheck.find()
    if sanitizer is None:
        return chk.not_run_here(memcheck.TOOL, "not run: no %s here (it comes with the CUDA toolkit, in its bin/ "
                                               "folder beside nvcc)" % memcheck.TOOL)
    params = ctx.lab.memcheck_case
    limit = max(ctx.time_limit(params), MEMCHECK_TIME_LIMIT)
    def run(alone):
        result = harness.run_under(memcheck.command(sanitizer), memcheck.tool_folder(sanitizer), ctx.lab, ctx.program,
                                   params, limit, ctx.work_dir, ctx.sandboxed,
                                   gpushare.slots_for(ctx.lab.gpu_bytes(params)), alone=alone)
        ctx.memcheck_costs.append(result.costs)
        return result, memcheck.read(result.output, ctx.work_dir)
    # Where every case runs alone (Lab 05: each is timed), the memcheck run is the only one of a submission's
    # runs that would share the GPU, and a run that waits to be alone waits for every shared run to end. There
    # it runs alone: a class of 200 Lab 05 submissions on one H200 graded 88 in 470 s so, 71 with it shared,
    # whose runs took a median of 30 s each (RESULTS.md, "Lab 05's class: its memcheck run alone").
    alone = bool(ctx.cases) and all(runs_alone(ctx.lab, c) for c in ctx.cases)
    result, found = run(alone)
    if not alone and found.errors and any(OUT_OF_MEMORY in b for b in found.first):
        # Beside other runs, the GPU's memory may be theirs (measured: a correct Lab 05's cudaFree
        # failed so under memcheck on an H200 with 15 other gradings): the run alone decides.
        result, found = run(True)
    how = "make sanitize LAB=%s ARGS=\"%s\"" % (ctx.lab.number, " ".join(ctx.lab.harness_args(params)))
    if result.verdict != process.OK and result.verdict != process.EXITED or found.errors is None:
        return chk.failed("memcheck did not finish (%s): the harness under it %s\n%s"
                          % (how, result.describe(limit), output_tail(result.output)))
    if found.errors == 0 and result.returncode != memcheck.ERRORS_EXIT:
        return chk.passed("memcheck: no errors (%s)" % how)
    shown = found.first[:3]
    return chk.failed("memcheck found %d error(s) in this run (%s)%s:\n%s"
                      % (found.errors, how, ", the first %d" % len(shown) if found.errors > len(shown) else "",
                         "\n".join(_indent_block(b) for b in shown) or output_tail(result.output)))


def _indent_block(text):
    return "\n".join("      " + l for l in text.splitlines())


def _compiles(ctx):
    src_dir, problems = build.stage(ctx.lab.name, ctx.submission_dir, ctx.work_dir)
    if problems:
        kinds = [kind for kind, _ in problems]
        return chk.failed("%s (looked in %s)" % ("; ".join(line for _, line in problems),
                                                 paths.relative(ctx.submission_dir)),
                          failure=failures.MISSING_FILE if failures.MISSING_FILE in kinds else kinds[0])
    made = build.cached_make(ctx.lab.name, src_dir, ctx.build_dir, ["all", "ptx"], build.cuda_arch(), ctx.sandboxed)
    if ctx.sandboxed:
        sandbox.check_made(made, "the build")
    refused = _refused_code(ctx, src_dir, made.ok)
    if refused:
        return refused
    if not made.ok:
        return chk.failed("the build %s with the kit's flags (nvcc -rdc=true, sm_%s):\n%s"
                          % ("failed" if made.verdict == process.EXITED else made.describe(build.BUILD_TIMEOUT),
                             build.cuda_arch(),
                             build.compiler_errors(made.output, source_dir=src_dir).replace(src_dir + os.sep, "")),
                          failure=failures.COMPILE_ERROR)
    for name in ctx.student_cu_files():
        with open(os.path.join(ctx.build_dir, name[:-3] + ".ptx")) as f:
            ctx.ptx[name] = f.read()
    ctx.program = os.path.join(ctx.build_dir, build.lab_vars(ctx.lab.name)["program"])
    return chk.passed()


# "off" turns the check of the student's objects off: only for the kit's test of the sandbox, which needs
# the attacks to run (tools/gpu-suite.sh sandbox).
OBJECT_CHECK_ENV = "KIT_OBJECT_CHECK"


def _refused_code(ctx, src_dir, built):
    """The failed outcome of "compiles" when the student's objects import, define or run what the lab does
    not allow (gradelib.objects), else None. Read before the build's own verdict: an import of kit state
    also fails the link, and the refusal says why in one line. Objects a failed build did not write are
    the compiler's verdict to give."""
    if os.environ.get(OBJECT_CHECK_ENV, "").lower() == "off":
        return None
    objects_built = all(os.path.isfile(os.path.join(ctx.build_dir, name[:-3] + ".o")) for name in ctx.student_cu_files())
    if not built and not objects_built:
        return None
    found = objects.refusals(ctx.lab.imports, ctx.build_dir, ctx.student_cu_files(), src_dir)
    if not found:
        return None
    return chk.failed("refused before anything ran: your code may call what %s's README lists under \"What your "
                      "code may call\", and run nothing before main\n%s"
                      % (ctx.lab.name, "\n".join("  " + line for line in found)), failure=failures.REFUSED_CODE)


def _runs_cleanly(ctx, lab_problem=None):
    ctx.runs = ctx.all_runs = run_all(ctx, lab_problem)
    bad = [r for r in ctx.runs if r.problem]
    busy = [r for r in ctx.runs if r.host_busy_before]
    ran_again = ("%d ran again alone, the host having been too busy to time them (first, %s: %s)"
                 % (len(busy), busy[0].label(), busy[0].host_busy_before[0]) if busy else None)
    if not bad:
        return chk.passed("; ".join(filter(None, ["%d runs" % len(ctx.runs), ran_again])))
    clean = [r for r in ctx.runs if not r.problem]
    # A case that times something and ran out of its time (with the GPU alone) is too slow to time, not
    # a hang that voids the rest: a version that never splits its work can take minutes on a timing case.
    too_slow_to_time = bool(clean) and all(times_something(r.params) and r.failure == failures.TIMEOUT for r in bad)
    lines = []
    shown_output = set()
    for r in bad[:4]:
        lines.append("  %s: %s" % (r.label(), r.problem))
        if r.result.output.strip() and id(r.result) not in shown_output:
            shown_output.add(id(r.result))
            lines.append(output_tail(r.result.output))
    if len(bad) > 4:
        lines.append("  ... and %d more runs" % (len(bad) - 4))
    if ran_again:
        lines.append(ran_again)
    first = next(kind for kind in failures.RUN_ORDER if any(r.failure == kind for r in bad))
    if too_slow_to_time:
        lines.append("the checks that time nothing are judged on the %d runs that were clean; those that time "
                     "something are not" % len(clean))
        ctx.runs = clean
    return chk.failed("%d of %d runs were not clean:\n%s" % (len(bad), len(ctx.all_runs), "\n".join(lines)),
                      fraction=1 - len(bad) / len(ctx.all_runs), failure=first, dependents_go_on=too_slow_to_time)
