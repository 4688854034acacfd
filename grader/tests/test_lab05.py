"""Lab 05's grading rules on constructed harness documents (no GPU needed), and the flags whitelist
(the kit's own script, the one the build runs)."""
import os
import random
import tempfile
import unittest

from gradelib import checks as chk
from gradelib import grading, paths, starters
from gradelib.grading import CaseRun
from labs import lab05


class FakeContext:
    def __init__(self, runs, source="", work_dir=None):
        self.runs = [CaseRun(p, None, d, None) for p, d in runs]
        self.source = source
        self.work_dir = work_dir

    def student_sources(self):
        return self.source

    student_code = grading.Context.student_code  # the real stripping of comments and starter branches


def serial(n, lengths, gap=5.0):
    """Kernels one after another: (start, end) pairs."""
    out, t = [], 0.0
    for i in range(n):
        out.append((t, t + lengths[i]))
        t += lengths[i] + gap
    return out


def together(n, lengths, skew=3.0):
    return [(i * skew, i * skew + lengths[i]) for i in range(n)]


def side(intervals, n_default=0, lateness=None, concurrent=None):
    """A side's summary as the harness writes it, from the workers' (start, end) intervals."""
    kernels = [{"kind": "worker", "row": i, "runs": 1, "start_us": s, "end_us": e, "sm": i}
               for i, (s, e) in enumerate(intervals)]
    last = max(e for _, e in intervals)
    for i in range(n_default):  # tiny kernels right after their worker, or all at once
        kernels.append({"kind": "default", "row": i, "runs": 1, "start_us": intervals[i][1] + 1,
                        "end_us": intervals[i][1] + 1, "sm": 0})
    span = last - min(s for s, _ in intervals)
    at_once = concurrent if concurrent is not None else max(
        sum(1 for s2, e2 in intervals if s2 <= s < e2) for s, _ in intervals)
    doc = {"span_us": span, "max_concurrent": at_once, "overlapping_pairs": 0 if at_once == 1 else 28,
           "missing": 0, "duplicated": 0, "spans_us": [span] * 5, "max_concurrent_runs": [at_once] * 5,
           "median_round": 2, "kernels": kernels}
    if lateness is not None:
        doc["lateness_us"] = lateness
        doc["worst_lateness_runs_us"] = [max(lateness)] * 5
        for k in kernels:
            k["wait_returned_us"] = k["end_us"] + lateness[k["row"]]
    return doc


def make_doc(p, student_a="concurrent", student_b="concurrent", waits="own"):
    n, t = p["streams"], p["threads"]
    spin, base = float(p["spin_us"]), float(p["thread_spin_us"])
    a_len = [spin] * n
    b_len = [(i + 1) * base for i in range(t)]
    a_student = together(n, a_len) if student_a == "concurrent" else serial(n, a_len)
    b_student = together(t, b_len) if student_b == "concurrent" else serial(t, b_len)
    if waits == "own":
        lateness = [12.0 + i for i in range(t)]
    elif waits == "all":
        last = max(e for _, e in b_student)
        lateness = [last - e + 10.0 for _, e in b_student]
    else:  # "none": returned at once
        lateness = [-(e - s) + 5.0 for s, e in b_student]
    return {
        "device": {"name": "test GPU"},
        "params": dict(p),
        "max_connections": "32",
        "part_a": {"legacy": side(serial(n, a_len), n_default=n),
                   "student": side(a_student, n_default=n)},
        "part_b": {"legacy": side(serial(t, b_len), lateness=[10.0] * t),
                   "student": side(b_student, lateness=lateness)},
    }


SOLUTION_SOURCE = """
/* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels go to this
 * thread's own default stream, which does not synchronize with the created streams. */
void many_streams(const streams_job_t *job) { }
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->stamp, job->spin_ns);
    if (job->thread_index >= 0) { KIT_CHECK(cudaGetLastError()); }
#ifdef KIT_STARTER
    KIT_CHECK(cudaDeviceSynchronize());
#else
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread)); // not cudaDeviceSynchronize()
#endif /* KIT_STARTER */
}
"""


class Lab05Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab05.make_cases(random.Random(5))

    def ctx(self, source=SOLUTION_SOURCE, **kinds):
        return FakeContext([(p, make_doc(p, **kinds)) for p in self.cases], source)

    def run_check(self, name, ctx):
        return lab05.LAB.check_named(name).func(ctx)

    def test_cases(self):
        self.assertEqual(self.cases, lab05.make_cases(random.Random(5)))
        self.assertEqual((self.cases[0]["streams"], self.cases[0]["threads"]), (8, 8), "the seed's sizes first")
        for c in self.cases:
            args = lab05.harness_args(c)
            self.assertIn("--streams", args)
            self.assertIn("--thread-spin-us", args)
            self.assertGreaterEqual(c["threads"], 8)
        seeds = {(c["streams"], c["threads"]) for s in range(20) for c in lab05.make_cases(random.Random(s))[1:]}
        self.assertGreater(len(seeds), 5, "the drawn sizes vary with the seed")

    def test_solution_documents_pass(self):
        ctx = self.ctx()
        for name in ("legacy build serializes", "Part A runs concurrently", "Part B runs concurrently",
                     "Part B waits only for its own stream", "Part B waits without cudaDeviceSynchronize",
                     "fix explained"):
            self.assertEqual(self.run_check(name, ctx).status, chk.PASSED, name)
        for p, d in ((r.params, r.doc) for r in ctx.runs):
            self.assertIsNone(lab05.run_problem(p, d))

    def test_still_legacy_fails_part_a(self):
        out = self.run_check("Part A runs concurrently", self.ctx(student_a="serial"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("ran at once", out.message)
        self.assertIn("at least 2.00x wanted", out.message)

    def test_ratio_alone_fails(self):
        """Kernels that overlap but a span no shorter than the legacy one still fail."""
        ctx = self.ctx()
        for run in ctx.runs:
            legacy = run.doc["part_a"]["legacy"]
            run.doc["part_a"]["student"]["span_us"] = legacy["span_us"] / 1.5
        out = self.run_check("Part A runs concurrently", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("1.50x", out.message)
        self.assertNotIn("ran at once", out.message)

    def test_shared_stream_fails_part_b(self):
        out = self.run_check("Part B runs concurrently", self.ctx(student_b="serial"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("threads' kernels ran at once", out.message)
        self.assertEqual(self.run_check("Part A runs concurrently", self.ctx(student_b="serial")).status,
                         chk.PASSED)

    def test_waiting_for_everything_fails(self):
        out = self.run_check("Part B waits only for its own stream", self.ctx(waits="all"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("thread 0's wait returned", out.message)
        self.assertIn("waited for other threads' work", out.message)

    def test_not_waiting_fails(self):
        out = self.run_check("Part B waits only for its own stream", self.ctx(waits="none"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("before their own kernel ended", out.message)

    def test_legacy_premise(self):
        ctx = self.ctx()
        self.assertEqual(self.run_check("legacy build serializes", ctx).status, chk.PASSED)
        ctx.runs[0].doc["part_a"]["legacy"]["overlapping_pairs"] = 3
        ctx.runs[0].doc["part_a"]["legacy"]["max_concurrent"] = 2
        out = self.run_check("legacy build serializes", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("the kit's premise did not hold", out.message)
        self.assertIn("Part A: 3 overlapping pair(s)", out.message)

    def test_missing_kernels_are_not_clean(self):
        p = self.cases[0]
        d = make_doc(p)
        d["part_a"]["student"]["missing"] = 8
        problem = lab05.run_problem(p, d)
        self.assertIn("Part A, your version: 8 kernel(s) never ran", problem)

    def test_device_synchronize_in_part_b(self):
        source = SOLUTION_SOURCE.replace("cudaStreamSynchronize(cudaStreamPerThread)", "cudaDeviceSynchronize()")
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source=source))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("cudaDeviceSynchronize", out.message)

    def test_device_synchronize_elsewhere_or_in_comments_is_fine(self):
        source = SOLUTION_SOURCE.replace("void many_streams(const streams_job_t *job) { }",
                                         "void many_streams(const streams_job_t *job) { cudaDeviceSynchronize(); }")
        source += "\n/* thread_launch_and_wait must not call cudaDeviceSynchronize() */\n"
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source=source))
        self.assertEqual(out.status, chk.PASSED, out.message)

    def test_missing_part_b_function(self):
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source="int x;"))
        self.assertEqual(out.status, chk.FAILED)

    def test_explanation(self):
        self.assertEqual(self.run_check("fix explained", self.ctx()).status, chk.PASSED)
        todo = "/* WHY: TODO explain the per-thread default stream fix here in twelve words or more please */"
        self.assertEqual(self.run_check("fix explained", self.ctx(source=todo)).status, chk.FAILED)
        vague = "/* WHY: it works now because I changed some things in the file and it runs faster now */"
        self.assertEqual(self.run_check("fix explained", self.ctx(source=vague)).status, chk.FAILED)
        nb = ("/* WHY: streams created with cudaStreamNonBlocking do not synchronize with the legacy default "
              "stream, so the tiny kernels no longer serialize the workers */")
        self.assertEqual(self.run_check("fix explained", self.ctx(source=nb)).status, chk.PASSED)
        self.assertEqual(self.run_check("fix explained", self.ctx(source="")).status, chk.FAILED)

    def test_checks_have_parents_and_hints(self):
        for c in lab05.LAB.lab_checks:
            self.assertTrue(c.hint.startswith("read handouts/05-default-streams.md, section "), c.name)
            if c.kind == chk.RUNTIME:
                self.assertEqual(c.parent, "runs cleanly", c.name)
        self.assertIn("fix explained", lab05.LAB.starter_must_fail)


class FlagsWhitelistTest(unittest.TestCase):
    ALLOWED = [
        ("", "none"),
        ("# only a comment\n\n", "none"),
        ("--default-stream per-thread\n", "--default-stream=per-thread"),
        ("--default-stream=per-thread\n", "--default-stream=per-thread"),
        ("-default-stream per-thread\n", "--default-stream=per-thread"),
        ("-default-stream=per-thread\n", "--default-stream=per-thread"),
        ("--default-stream legacy\n", "--default-stream=legacy"),
        ("--default-stream=legacy\n", "--default-stream=legacy"),
        ("-default-stream legacy\n", "--default-stream=legacy"),
        ("  --default-stream per-thread   # for Part A and Part B\r\n", "--default-stream=per-thread"),
        ("#ifdef KIT_STARTER\n# TODO\n#else\n--default-stream per-thread\n#endif /* KIT_STARTER */\n",
         "--default-stream=per-thread"),
    ]
    REFUSED = [
        ("-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1\n", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"),
        ("--default-stream per-thread\n-Xcompiler -fplugin=x.so\n", "-Xcompiler"),
        ("--default-stream null\n", "null"),
        ("--default-stream\nper-thread\n", "needs its value on the same line"),
        ("--default-stream per-thread\n--default-stream legacy\n", "given twice"),
        ("--default-stream per-thread -O0\n", "-O0"),
        ("-o /tmp/elsewhere\n", "-o"),
        ("--default-streams per-thread\n", "--default-streams"),
    ]

    def verdict(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "nvcc.flags")
            with open(path, "w", newline="") as f:
                f.write(text)
            return lab05.flags_verdict(path)

    def test_allowed(self):
        for text, options in self.ALLOWED:
            allowed, message = self.verdict(text)
            self.assertTrue(allowed, "%r: %s" % (text, message))
            self.assertIn(options, message, text)

    def test_refused_names_the_option(self):
        for text, named in self.REFUSED:
            allowed, message = self.verdict(text)
            self.assertFalse(allowed, text)
            self.assertIn(named, message, text)
            self.assertIn("allowed here", message, text)

    def test_missing_file(self):
        allowed, message = lab05.flags_verdict("/nonexistent/nvcc.flags")
        self.assertFalse(allowed)
        self.assertIn("no nvcc.flags", message)

    def test_starter_markers_work_in_the_flags_file(self):
        """The solution's nvcc.flags asks for per-thread; the starter made from it by the kit's markers
        asks for nothing, and both pass the whitelist (the marker lines are comments)."""
        solution = os.path.join(paths.SOLUTIONS_DIR, lab05.LAB.name, lab05.FLAGS_FILE)
        with open(solution) as f:
            text = f.read()
        self.assertEqual(self.verdict(text), (True, "options: --default-stream=per-thread"))
        self.assertEqual(self.verdict(starters.starter_text(text)), (True, "options: none (the legacy default stream)"))

    def test_check_reads_the_staged_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "src"))
            with open(os.path.join(tmp, "src", "nvcc.flags"), "w") as f:
                f.write("-G\n")
            out = lab05.check_flags_allowed(FakeContext([], work_dir=tmp))
            self.assertEqual(out.status, chk.FAILED)
            self.assertIn('"-G" is not an option', out.message)
            with open(os.path.join(tmp, "src", "nvcc.flags"), "w") as f:
                f.write("--default-stream per-thread\n")
            self.assertEqual(lab05.check_flags_allowed(FakeContext([], work_dir=tmp)).status, chk.PASSED)


if __name__ == "__main__":
    unittest.main()
