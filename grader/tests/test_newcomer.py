"""What a newcomer meets first, on a machine without a GPU: build errors that name their cause, the
make commands' messages and exit statuses, make test's last line, and the grader's wording.

Some tests run make and nvcc (as CI has them); KIT_NO_GPU=1 makes them behave the same on a GPU
machine."""
import concurrent.futures
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
from unittest import mock

from gradelib import build, checks as chk, exits, failures, feedback, gpu as gpu_mod, grading, paths, registry, report, starters
from tests.fakes import run_grade, run_make

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import batch_throughput  # noqa: E402
import suite_summary  # noqa: E402

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "grader"))
import kit  # noqa: E402

# What ld and nvlink print for a kernel the harness calls and the student's file lacks.
LD_OUTPUT = """nvcc -O2 -rdc=true -arch=sm_75 -dc src/divergent_counter.cu -o build/divergent_counter.o
nvcc -O2 -rdc=true -arch=sm_75 build/divergent_counter.o build/kit/harness.o -o build/divergent_counter -lcudadevrt
/usr/bin/ld: /kit/build/kit/sm_75/01-divergent-counter/harness.o: in function `main':
tmpxft_000071ed_00000000-6_harness.cudafe1.cpp:(.text.startup+0x37c): undefined reference to `diverge_cta(unsigned long long*, int)'
/usr/bin/ld: build/divergent_counter: hidden symbol `_Z11diverge_ctaPyi' isn't defined
/usr/bin/ld: final link failed: bad value
collect2: error: ld returned 1 exit status
make: *** [common/kit.mk:83: build/divergent_counter] Error 1
"""
NVLINK_OUTPUT = """nvcc -O2 -rdc=true -arch=sm_90 build/a.o build/harness.o -o build/prog -lcudadevrt
nvlink error   : Undefined reference to '_Z11diverge_ctaPyi' in '/kit/build/kit/sm_90/harness.o'
make: *** [common/kit.mk:83: build/prog] Error 255
"""


make = run_make


class LinkErrors(unittest.TestCase):
    def test_an_undefined_kernel_is_named_first(self):
        shown = build.compiler_errors(LD_OUTPUT)
        first = shown.splitlines()[0]
        self.assertIn("diverge_cta(unsigned long long*, int)", first)
        self.assertIn("do not define", first)
        self.assertNotIn("tmpxft_", shown)
        self.assertNotIn("nvcc ", shown)
        self.assertIn("collect2: error: ld returned 1 exit status", shown)

    def test_nvlink_names_are_demangled_where_cfilt_is(self):
        shown = build.compiler_errors(NVLINK_OUTPUT)
        name = "diverge_cta(unsigned long long*, int)" if shutil.which("c++filt") else "_Z11diverge_ctaPyi"
        self.assertIn(name, shown.splitlines()[0])

    def test_a_compiler_error_is_shown_from_its_first_line(self):
        shown = build.compiler_errors("nvcc -c a.cu\na.cu(3): error: identifier \"x\" is undefined\n1 error detected\n")
        self.assertEqual(shown.splitlines()[0], 'a.cu(3): error: identifier "x" is undefined')

    def test_an_error_in_a_macro_shows_the_students_line(self):
        """nvcc echoes the line after macro expansion; the student wrote KIT_CHECK_LAUNCH()."""
        with tempfile.TemporaryDirectory() as src:
            with open(os.path.join(src, "a.cu"), "w") as f:
                f.write("void f(void)\n{\n    KIT_CHECK_LAUNCH();\n}\n")
            output = ("a.cu(3): error: calling a __device__ function(\"kit_check_launch\") from a __host__ "
                      "function(\"f\") is not allowed\n      kit_check_launch(3);\n"
                      "      ^\n\n1 error detected in the compilation of \"a.cu\".\n")
            shown = build.compiler_errors(output, source_dir=src).splitlines()
            self.assertEqual(shown[1], "      KIT_CHECK_LAUNCH();   (line 3 as you wrote it)")
            self.assertNotIn("kit_check_launch(3)", "\n".join(shown))
            self.assertNotIn("      ^", shown)
            plain = "a.cu(2): error: something\n      {\n      ^\n"
            self.assertEqual(build.compiler_errors(plain, source_dir=src), plain.rstrip("\n"))

    def test_an_empty_file_names_the_missing_kernel(self):
        """A real build of an empty student file: the grader's message names the kernel."""
        lab = registry.resolve("01")
        with tempfile.TemporaryDirectory() as sub:
            for name in build.lab_vars(lab.name)["student_files"]:
                open(os.path.join(sub, name), "w").close()
            out = run_grade(["--lab", "01", "--submission", sub], timeout=600).stdout
        student_file = build.lab_vars(lab.name)["student_files"][0]
        with open(os.path.join(paths.solution_dir(lab.name), student_file)) as f:
            called = re.search(r"__global__ void (\w+)\(", f.read()).group(1)  # the kernel the student writes
        self.assertRegex(out, r"the kit's code calls %s\(" % called)


class SubmissionPaths(unittest.TestCase):
    """--submission takes a folder, an archive of one, or one lab file; anything else is named."""

    def grade(self, submission):
        return run_grade(["--lab", "01", "--submission", submission], timeout=600)

    def test_a_lab_file_and_an_archive_are_graded(self):
        lab = registry.resolve("01")
        solution = paths.solution_dir(lab.name)
        name = build.lab_vars(lab.name)["student_files"][0]
        with tempfile.TemporaryDirectory() as tmp:
            archive = shutil.make_archive(os.path.join(tmp, "alice"), "zip", solution)
            given = (os.path.join(solution, name), archive)
            # Two grade.py runs at once, each with its own scratch and build folders. Their files are the
            # same, so they share one build through the build cache (the second waits for the first's).
            with concurrent.futures.ThreadPoolExecutor(len(given)) as pool:
                graded = list(pool.map(self.grade, given))
            for ran in graded:
                self.assertEqual(ran.returncode, exits.NOT_RUN, ran.stdout)  # graded: only the GPU missing
                self.assertRegex(ran.stdout, r"compiles \.+ OK")
            other = os.path.join(tmp, "notes.txt")
            open(other, "w").close()
            ran = self.grade(other)
            self.assertEqual(ran.returncode, exits.USAGE)
            self.assertIn("is a file, but not an archive", ran.stdout)
            self.assertNotIn("no such folder", ran.stdout)


class MissingFiles(unittest.TestCase):
    def test_a_name_differing_in_case_is_suggested(self):
        lab = registry.resolve("01")
        name = build.lab_vars(lab.name)["student_files"][0]
        with tempfile.TemporaryDirectory() as sub, tempfile.TemporaryDirectory() as work:
            open(os.path.join(sub, name.upper()), "w").close()
            _, problems = build.stage(lab.name, sub, work)
        self.assertEqual(problems[0][0], failures.MISSING_FILE)
        self.assertIn("there is %s: rename it to %s" % (name.upper(), name), problems[0][1])

    def test_the_hint_for_a_missing_file_is_the_labs_readme(self):
        lab = registry.resolve("01")
        compiles = lab.checks[0]
        missing = chk.CheckResult(compiles, chk.FAILED, 0, "missing file: x.cu", failure=failures.MISSING_FILE)
        self.assertIn("labs/%s/README.md" % lab.name, report.hint(missing, lab))
        self.assertTrue(os.path.isfile(os.path.join(paths.KIT_ROOT, "labs", lab.name, "README.md")))
        other = chk.CheckResult(compiles, chk.FAILED, 0, "error", failure=failures.COMPILE_ERROR)
        self.assertEqual(report.hint(other, lab), compiles.hint)


class NoGpuWords(unittest.TestCase):
    def test_no_driver_is_not_called_an_old_driver(self):
        raw = "no CUDA GPU: cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver version is insufficient)"
        said = gpu_mod.plain_reason(raw, driver_device="/nonexistent/nvidiactl")
        self.assertIn("no NVIDIA GPU driver", said)
        # With a driver loaded, an old driver is what it says.
        self.assertEqual(gpu_mod.plain_reason(raw, driver_device=paths.KIT_ROOT), raw)

    def test_make_run_and_bench_say_no_usable_gpu_with_status_77(self):
        for command, lab in (("run", "01"), ("bench", "04")):
            ran = make(command, "LAB=" + lab)
            self.assertIn("make %s LAB=%s: not run: no usable GPU here" % (command, lab), ran.stdout)
            self.assertIn("Error %d" % exits.NOT_RUN, ran.stdout)
            self.assertNotIn("CUDA error", ran.stdout)

    def test_the_readme_is_short_enough_to_start_from(self):
        """Instructors' material lives in grader/README.md and maintainers' in CONTRIBUTING.md."""
        with open(os.path.join(paths.KIT_ROOT, "README.md")) as f:
            self.assertLessEqual(len(f.read().splitlines()), 120)

    def test_the_readme_quotes_makes_line_as_it_is(self):
        with open(os.path.join(paths.KIT_ROOT, "Makefile")) as f:
            line = next(i for i, l in enumerate(f, 1) if l.startswith("grade:"))
        with open(os.path.join(paths.KIT_ROOT, "README.md")) as f:
            quoted = re.findall(r"\[Makefile:(\d+): grade\]", f.read())
        self.assertEqual(quoted, [str(line)])

    def test_the_same_message_from_a_lab_folder_and_for_costs(self):
        """make run in a lab's folder and make costs say what make run LAB=NN says, not a driver message."""
        for args, said in ((("-C", "labs/01-divergent-counter", "run"), "make run LAB=01: not run: no usable GPU here"),
                           (("costs",), "make costs: not run: no usable GPU here")):
            ran = make(*args)
            self.assertIn(said, ran.stdout)
            self.assertIn("Error %d" % exits.NOT_RUN, ran.stdout)
            self.assertNotIn("driver", ran.stdout.lower())
        graded = make("-C", "labs/01-divergent-counter", "grade",
                      "GRADE_ARGS=--submission solutions/01-divergent-counter --check compiles")
        self.assertNotIn("No rule to make target", graded.stdout)
        self.assertIn("compiles", graded.stdout)

    def test_make_grade_says_the_reason_once_and_explains_its_status(self):
        ran = make("grade", "LAB=01", "GRADE_ARGS=--submission solutions/01-divergent-counter")
        self.assertEqual(ran.returncode, 2)  # make's own status when a command fails
        self.assertIn("make: *** [Makefile", ran.stdout)
        self.assertIn("Error %d" % exits.NOT_RUN, ran.stdout)
        self.assertEqual(ran.stdout.count("KIT_NO_GPU"), 1)  # the reason, said once
        self.assertRegex(ran.stdout, r"exit status %d: " % exits.NOT_RUN)
        page = os.path.join(paths.KIT_ROOT, "build", "feedback", "01-divergent-counter.html")
        self.assertIn("feedback page: build/feedback/01-divergent-counter.html", ran.stdout)
        with open(page) as f:
            self.assertIn("NOT RUN (no GPU)", f.read())
        with open(os.path.join(os.path.dirname(page), "index.html")) as f:
            self.assertIn('href="01-divergent-counter.html"', f.read())

    def test_the_reason_is_said_once_for_every_lab(self):
        lab = registry.resolve("01")
        results = [chk.CheckResult(c, chk.SKIPPED, 0, "a long reason", lacking=chk.GPU if c.kind == chk.RUNTIME else None) for c in lab.checks]

        class Rep:
            pass
        rep = Rep()
        rep.lab, rep.results, rep.score, rep.max_score, rep.submission_dir_label = lab, results, 0, lab.max_score, "x"
        self.assertNotIn("a long reason", report.lab_text(rep))
        self.assertIn("NOT RUN", report.lab_text(rep))

    def test_a_score_without_its_runtime_checks_says_it_is_unverified(self):
        """Without a GPU a right and a wrong Lab 01 must not both read as a plain 6/18."""
        lab = registry.resolve("01")
        results = [chk.CheckResult(c, chk.SKIPPED, 0, "", lacking=chk.GPU) if c.kind == chk.RUNTIME
                   else chk.CheckResult(c, chk.PASSED, c.points, "") for c in lab.checks]
        rep = grading.LabReport(lab, "/tmp/sub", 1, [], results)
        checked = sum(c.points for c in lab.checks if c.kind != chk.RUNTIME)
        unchecked = lab.max_score - checked
        line = "%g of %g checkable points; %g points NOT CHECKED (no usable GPU): your results are unverified" % (
            checked, checked, unchecked)
        self.assertIn("score: %g/%g (%s)" % (checked, lab.max_score, line), report.lab_text(rep))
        self.assertIn(line, feedback.page(rep, "Lab 01", []))
        full = grading.LabReport(lab, "/tmp/sub", 1, [], [chk.CheckResult(c, chk.PASSED, c.points, "")
                                                          for c in lab.checks])
        self.assertIn("score: %g/%g\n" % (lab.max_score, lab.max_score), report.lab_text(full) + "\n")
        self.assertNotIn("NOT CHECKED", feedback.page(full, "Lab 01", []))

    def test_the_feedback_folder_has_an_index(self):
        lab = registry.resolve("01")
        results = [chk.CheckResult(c, chk.PASSED, c.points, "") for c in lab.checks]
        with tempfile.TemporaryDirectory() as folder:
            feedback.write_page(os.path.join(folder, lab.name + ".html"), grading.LabReport(lab, "/x", 1, [], results),
                                "Lab 01", [])
            feedback.write_index(folder)
            with open(os.path.join(folder, "index.html")) as f:
                index = f.read()
        self.assertIn('<a href="%s.html">%s</a>' % (lab.name, lab.title), index)

    def test_make_grades_page_links_each_hint_to_its_handout_section(self):
        """A hint's sections are links into the rendered handout (make handouts), at their headings;
        a batch's page, handed to students elsewhere, keeps the words without links."""
        lab = registry.resolve("04")
        results = [chk.CheckResult(c, chk.FAILED if c.name == "device heap covers the worst case" else chk.PASSED,
                                   0, "heap too small") for c in lab.checks]
        rep = grading.LabReport(lab, "/tmp/sub", 1, [], results)
        with tempfile.TemporaryDirectory() as folder:
            path = feedback.write_page(os.path.join(folder, "build", "feedback", lab.name + ".html"), rep,
                                       "Lab 04", [])
            with open(path) as f:
                page = f.read()
        href = os.path.relpath(os.path.join(paths.BUILD_ROOT, "handouts", "04-bezier-streams.html"),
                               os.path.join(folder, "build", "feedback"))
        self.assertIn('<a href="%s#26-the-pending-launch-pool-and-the-device-heap">2.6 (the pending-launch pool '
                      'and the device heap)</a>' % href, page)
        self.assertNotIn("<a href", feedback.page(rep, "Lab 04", []))
        self.assertIn("2.6 (the pending-launch pool and the device heap)", feedback.page(rep, "Lab 04", []))

    def test_every_hint_section_has_an_anchor(self):
        for lab in registry.all_labs().values():
            for c in lab.checks:
                for number in re.findall(r"(\d+(?:\.\d+)*) \(", c.hint.split(", section ", 1)[1]):
                    self.assertTrue(registry.section_anchor(lab.handout, number), (lab.name, c.name, number))

    def test_a_page_without_a_run_says_why_it_has_no_picture(self):
        lab = registry.resolve("01")
        results = [chk.CheckResult(c, chk.SKIPPED, 0, "", lacking=chk.GPU) if c.kind == chk.RUNTIME
                   else chk.CheckResult(c, chk.PASSED, c.points, "") for c in lab.checks]
        page = feedback.page_with_figure(grading.LabReport(lab, "/tmp/sub", 1, [], results), "Lab 01", [])
        self.assertIn("No picture: your code did not run here", page)
        self.assertIn("no usable GPU", page)

    def test_a_class_summary_says_which_scores_are_unverified(self):
        from gradelib import sheets
        lab = registry.resolve("01")
        checks = [{"name": c.name, "status": chk.SKIPPED if c.kind == chk.RUNTIME else chk.PASSED,
                   "points": c.points, "not_run_lacking": chk.GPU if c.kind == chk.RUNTIME else None}
                  for c in lab.checks]
        unchecked = sum(c.points for c in lab.checks if c.kind == chk.RUNTIME)
        records = {"alice": {"verdict": sheets.NOT_RUN_NO_GPU, "score": 6, "max_score": lab.max_score,
                             "report": {"checks": checks}},
                   "bob": {"verdict": "full marks", "score": lab.max_score, "max_score": lab.max_score,
                           "report": {"checks": [dict(c, status=chk.PASSED, not_run_lacking=None) for c in checks]}}}
        text = sheets.summary_text(lab, records, ["alice", "bob"])
        self.assertIn("UNVERIFIED: 1 of 2 scores were made with checks NOT CHECKED (%g points each at most, for "
                      "want of a usable GPU): alice" % unchecked, text)
        del records["alice"]
        self.assertNotIn("UNVERIFIED", sheets.summary_text(lab, records, ["bob"]))


class MakeCommands(unittest.TestCase):
    def test_a_lab_without_the_command_names_the_labs_that_have_it(self):
        having = [lab.name for lab in registry.all_labs().values() if "bench" in kit.lab_commands(lab)]
        self.assertTrue(having)
        ran = make("bench", "LAB=01")
        self.assertIn("has no bench command (labs with one: %s)" % ", ".join(having), ran.stdout)
        self.assertNotIn("No rule to make target", ran.stdout)
        ran = make("legacy", "LAB=01")
        self.assertIn("has no legacy command", ran.stdout)

    def test_an_unknown_lab_gets_one_message_and_makes_one_line(self):
        ran = make("bench", "LAB=foo")
        self.assertIn("no lab 'foo'", ran.stdout)
        self.assertEqual(len([l for l in ran.stdout.splitlines() if l.startswith("make")]), 2, ran.stdout)
        self.assertNotIn("No such file", ran.stdout)

    def test_make_starters_says_when_there_was_nothing_to_write(self):
        real = starters.generate
        starters.generate = lambda check_only=False: []
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                kit.cmd_starters([])
        finally:
            starters.generate = real
        self.assertIn("nothing to write", out.getvalue())


class MakeTestLastLine(unittest.TestCase):
    LOG = ("100% tests passed, 0 tests failed out of 4\n\nLabel Time Summary:\ncpu = 1.0 sec\n\n"
           "The following tests did not run:\n\t  3 - 01-solution-full-marks (Skipped)\n"
           "\t  4 - handouts-render (Skipped)\n\nTotal Test time (real) = 1.00 sec\n")
    LABELS = {"grader-unit": ["cpu"], "handouts-render": ["cpu"], "01-solution-full-marks": ["gpu"],
              "01-solution-static": ["cpu"], "02-solution-full-marks": ["gpu"]}

    def test_the_tests_not_run_are_counted(self):
        line = suite_summary.not_run_line(self.LOG, self.LABELS)
        self.assertIn("1 of the 2 GPU tests", line)
        self.assertIn("handouts-render", line)
        self.assertIn("did not pass", line)

    def test_the_toolkit_matrix_says_how_to_run_it(self):
        log = self.LOG.replace("\t  4 - handouts-render (Skipped)\n", "\t  4 - toolkit-matrix (Skipped)\n")
        labels = dict(self.LABELS, **{"toolkit-matrix": ["cpu", "toolkits"]})
        line = suite_summary.not_run_line(log, labels)
        self.assertIn("toolkit-matrix (KIT_TOOLKIT_MATRIX=1 runs it", line)
        self.assertNotIn("a tool it needs is missing", line)

    def test_a_lab_not_recorded_yet_says_how_to_record_it(self):
        log = self.LOG.replace("\t  4 - handouts-render (Skipped)\n", "\t  4 - 09-recorded (Skipped)\n")
        line = suite_summary.not_run_line(log, dict(self.LABELS, **{"09-recorded": ["cpu"]}))
        self.assertIn("09-recorded (not recorded yet: tools/gpu-suite.sh record", line)
        self.assertNotIn("a tool it needs is missing", line)

    def test_nothing_when_every_test_ran(self):
        self.assertIsNone(suite_summary.not_run_line("100% tests passed, 0 tests failed out of 4\n", self.LABELS))


class ClassCostsTest(unittest.TestCase):
    """tools/batch_throughput.py: a submission's costs, and the classes gathered into class-scale.json."""

    def test_the_time_alone_is_the_cases_alone(self):
        record = {"costs": {"build_s": 2.0, "runs": [
            {"wait_s": 0.5, "context_s": 0.3, "case_s": 1.0, "total_s": 1.3, "alone": False},
            {"wait_s": 4.0, "case_s": 2.0, "total_s": 2.0, "alone": True},
            {"case_s": 1.5, "exit_s": 0.1, "total_s": 1.6, "alone": True}]}}
        row, cases = batch_throughput.submission_costs(record)
        self.assertEqual(row["alone_s"], 3.6)  # its waits aside
        self.assertEqual(row["wait_s"], 4.5)
        self.assertEqual(row["contexts"], 1)
        self.assertEqual(cases, [1.3, 2.0, 1.6])

    def test_a_run_stopped_before_its_end_counts_its_context(self):
        record = {"costs": {"runs": [{"wait_s": 0.5, "total_s": 7.0, "start_context_s": 1.5, "alone": False},
                                     {}, {"start_s": 0.1, "context_s": 0.3, "case_s": 1.0, "total_s": 1.4,
                                          "alone": True}]}}
        row, _ = batch_throughput.submission_costs(record)
        self.assertEqual((row["contexts"], row["context_s"]), (2, 0.3))

    def test_the_time_alone_is_the_hold_where_runs_say_it(self):
        """A run started before its hold makes its context while others share the GPU: its held_s, from
        its cases' start, is its time alone, not its context."""
        record = {"costs": {"runs": [
            {"start_s": 0.1, "context_s": 2.5, "case_s": 1.0, "total_s": 3.6, "held_s": 1.05, "alone": True},
            {"case_s": 0.5, "exit_s": 0.1, "total_s": 0.6, "alone": True}]}}
        row, _ = batch_throughput.submission_costs(record)
        self.assertEqual(row["alone_s"], 1.05)

    def test_memcheck_says_its_wait_and_its_run(self):
        record = {"costs": {"runs": [], "memcheck": [{"wait_s": 3.0, "total_s": 1.5}, {"wait_s": 0.5, "total_s": 1.0}]}}
        row, _ = batch_throughput.submission_costs(record)
        self.assertEqual((row["memcheck_wait_s"], row["memcheck_s"]), (3.5, 2.5))
        self.assertEqual(row["alone_s"], 0.0)
        row, _ = batch_throughput.submission_costs({"costs": {"runs": []}})  # a record of an older kit
        self.assertEqual((row["memcheck_wait_s"], row["memcheck_s"]), (0.0, 0.0))

    def test_a_memcheck_run_alone_counts_in_the_time_alone(self):
        """Where memcheck's run had the GPU alone (a lab whose every case is timed), a class's floor counts it."""
        record = {"costs": {"runs": [{"case_s": 1.0, "total_s": 1.2, "held_s": 2.0, "alone": True}],
                            "memcheck": [{"wait_s": 3.0, "total_s": 1.5, "alone": True}]}}
        row, _ = batch_throughput.submission_costs(record)
        self.assertEqual((row["alone_s"], row["memcheck_s"]), (3.5, 1.5))

    def test_a_memcheck_run_started_before_its_hold_counts_its_hold_alone(self):
        """A memcheck run makes its context before its hold (harness.run_under): its held_s is its time alone."""
        record = {"costs": {"runs": [{"case_s": 1.0, "total_s": 1.2, "held_s": 2.0, "alone": True}],
                            "memcheck": [{"wait_s": 3.0, "total_s": 1.5, "held_s": 0.7, "alone": True}]}}
        row, _ = batch_throughput.submission_costs(record)
        self.assertEqual((row["alone_s"], row["memcheck_s"]), (2.7, 1.5))

    def test_the_document_names_the_gpu_probed_before_the_class(self):
        """A probe after the batch may find no GPU (one stopped at its limit, on an H200): the document
        names the GPU the class ran on, probed before it."""
        graded = []

        def probe(sandboxed=False):
            if graded:
                return gpu_mod.GpuInfo(False, "no GPU")
            return gpu_mod.GpuInfo(True, None, device={"name": "NVIDIA H200", "runtime_version": 13000,
                                                       "total_memory_bytes": 140 << 30})

        def grade_class(*args, **kwargs):  # a batch stopped at its limit before any submission was graded
            graded.append(args)
            return 1.0, 0, "", False
        with tempfile.TemporaryDirectory() as out, \
                mock.patch.object(batch_throughput, "grade_class", grade_class), \
                mock.patch.dict(gpu_mod._cached, clear=True), \
                mock.patch.object(gpu_mod, "_probe", lambda sandboxed, token=None: probe(sandboxed)), \
                contextlib.redirect_stdout(io.StringIO()):
            batch_throughput.main([out, "2", "--lab", "01", "--limit", "1"])
            with open(os.path.join(out, "throughput-01.json")) as f:
                document = json.load(f)
        self.assertEqual(len(graded), 1)
        self.assertEqual((document["device"], document["runtime_version"]), ("NVIDIA H200", 13000))

    def test_a_wrong_verdict_says_what_the_solution_lost(self):
        record = {"verdict": "points lost", "score": 15, "max_score": 18, "report": {"checks": [
            {"name": "Part B runs concurrently", "status": "failed", "score": 0, "points": 3, "message": "never at once"}]}}
        self.assertEqual(batch_throughput.wrong_verdict(record, batch_throughput.SOLUTION, None),
                         "the solution got points lost (15/18): lost 'Part B runs concurrently' 0/3: never at once")
        self.assertEqual(batch_throughput.wrong_verdict(record, "null-stream", "Part B runs concurrently"), None)
        self.assertEqual(batch_throughput.wrong_verdict(record, "null-stream", "Part A runs concurrently"),
                         "null-stream: 'Part A runs concurrently' was not reported")

    def test_the_report_says_where_the_gpus_time_went(self):
        lab = registry.resolve("05")
        record = {"id": "s1", "verdict": batch_throughput.FULL_MARKS, "score": 18, "max_score": 18, "seconds": 3.0,
                  "costs": {"runs": [{"case_s": 1.0, "total_s": 1.0, "held_s": 1.0, "alone": True}]}}
        runs = [{"spawned_s": 0.0, "seconds": 4.0, "held_s": 4.0, "alone": False, "costs": [{"wait_s": 0.0}]},
                {"spawned_s": 1.0, "seconds": 5.0, "held_s": 1.0, "alone": True, "costs": [{"wait_s": 3.0}]}]
        with tempfile.TemporaryDirectory() as out:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                status = batch_throughput.report(lab, out, {"s1": (batch_throughput.SOLUTION, None)}, 9.0, 0,
                                                 {"s1": record}, runs=runs)
            with open(os.path.join(out, "throughput-05.json")) as f:
                doc = json.load(f)
            with contextlib.redirect_stdout(io.StringIO()):
                batch_throughput.report(lab, out, {"s1": (batch_throughput.SOLUTION, None)}, 9.0, 0, {"s1": record})
            with open(os.path.join(out, "throughput-05.json")) as f:
                without = json.load(f)
        self.assertEqual(status, 0)
        # shared [0, 4], alone [5, 6] after waiting [2, 5]: 2 s of the shared run drained before it, 1 s by none
        self.assertEqual(doc["gpu_time"], {"gpus": 1, "span_s": 6.0, "alone_s": 1.0, "shared_s": 4.0,
                                           "draining_s": 2.0, "idle_s": 1.0})
        self.assertIn("held alone 1.0, shared 4.0 (of it, 2.0 draining before a run alone), by no run 1.0",
                      printed.getvalue())
        self.assertIsNone(without["gpu_time"])  # no run log

    def test_gather_keeps_each_class_and_the_latency(self):
        with tempfile.TemporaryDirectory() as out:
            for folder, gpus, graded in (("class-g1", 1, 40), ("class-g4", 4, 200)):
                os.makedirs(os.path.join(out, folder))
                with open(os.path.join(out, folder, "throughput-03.json"), "w") as f:
                    json.dump({"lab": "03-nested-recursion", "device": "GPU", "gpus_on_host": 4,
                               "runtime_version": 13000, "gpus": gpus, "submissions": 200, "graded": graded,
                               "finished": graded == 200, "wall_s": 60.0, "verdicts_as_expected": graded,
                               "jobs": 16, "cores": 32, "contexts": {"median": 1, "p90": 1},
                               "beside": "Lab 05's class" if gpus == 1 else None,
                               **({"gpu_time": {"span_s": 60.0}} if gpus == 4 else {}),
                               "phases": dict({k: {"median": 0.5, "p90": 1.0} for k in batch_throughput.PHASES},
                                              # a document from before the mean: no mean
                                              **({"alone_s": {"median": 0.5, "p90": 1.0, "mean": 0.75}}
                                                 if gpus == 1 else {}))}, f)
            with open(os.path.join(out, "latency.json"), "w") as f:
                json.dump({"device": "GPU", "labs": {"03": {"cold_s": 7.0, "warm_s": 5.0, "alone_s": 0.0}}}, f)
            with contextlib.redirect_stdout(io.StringIO()):
                status = batch_throughput.main([out, "--gather", os.path.join(out, "class-g4"),
                                                os.path.join(out, "class-g1")])
            with open(os.path.join(out, "class-scale.json")) as f:
                doc = json.load(f)
        self.assertEqual(status, 0)
        self.assertEqual([(c["lab"], c["gpus"], c["graded"], c["finished"]) for c in doc["classes"]],
                         [("03", 1, 40, False), ("03", 4, 200, True)])
        self.assertEqual(doc["classes"][0]["phases"]["alone_s"], 0.5)
        self.assertEqual([c["alone_mean_s"] for c in doc["classes"]], [0.75, None])  # where the document has it
        self.assertEqual(doc["latency"]["labs"]["03"]["warm_s"], 5.0)
        self.assertEqual(doc["classes"][0]["beside"], "Lab 05's class")
        self.assertEqual([c["gpu_time"] for c in doc["classes"]], [None, {"span_s": 60.0}])  # where measured
        self.assertEqual((doc["device"], doc["gpus_on_host"], doc["cores"]), ("GPU", 4, 32))


class SuiteRunsSummary(unittest.TestCase):
    """tools/suite_summary.py --runs: the harness runs of a suite, summed up from KIT_RUN_LOG lines."""

    @staticmethod
    def line(program, spawned, alone, costs):
        return json.dumps({"program": program, "spawned_s": spawned, "alone": alone,
                           "seconds": sum(c.get("total_s", 0) for c in costs), "costs": costs})

    def test_contexts_made_at_once_count_once_in_the_union(self):
        lines = [self.line("a", 10.0, False, [{"start_s": 1.0, "context_s": 2.0, "case_s": 1.0, "total_s": 4.0}]),
                 self.line("a", 11.0, False, [{"start_s": 1.0, "context_s": 2.0, "case_s": 1.0, "total_s": 4.0}]),
                 self.line("b", 20.0, True, [{"start_s": 0.5, "context_s": 0.5, "case_s": 3.0},
                                             {"case_s": 1.0, "exit_s": 0.25, "total_s": 1.25}]),
                 self.line("b", 30.0, False, [{"wait_s": 1.0, "total_s": 2.0}])]  # stamps that did not fit
        got = suite_summary.runs_summary(lines + ["\n"])
        self.assertEqual(got["harness_runs"], 4)
        self.assertEqual(got["contexts_made"], 3)
        self.assertEqual(got["context_sum_s"], 4.5)
        self.assertEqual(got["context_union_s"], 3.5)  # [11, 13] and [12, 14] overlap, [20.5, 21] apart
        self.assertEqual((got["context_median_s"], got["context_max_s"]), (2.0, 2.0))  # of 2.0, 2.0, 0.5
        self.assertEqual(got["alone_runs"], 1)
        self.assertEqual(got["alone_s"], 1.2)  # the run's seconds as the log has them (1.25 rounds to 1.2)
        self.assertEqual(got["alone_start_context_exit_s"], 1.2)
        self.assertEqual(got["runs_per_program"], {"a": 2, "b": 2})
        self.assertEqual(got["alone_timeouts"], 0)
        self.assertEqual(got["span_s"], 22.0)  # from the first run's start, 10.0, to the last's end, 32.0
        self.assertEqual(got["contexts_per_grader"], {"a": 2, "b": 1})  # no pid: one grader

    def test_a_later_segment_is_the_same_process(self):
        """harness.run_segments logs each segment: the one after a hold made no context of its own."""
        lines = [json.dumps({"pid": 7, "program": "a", "spawned_s": 1.0, "alone": False, "seconds": 2.0,
                             "costs": [{"start_s": 0.1, "context_s": 0.2, "case_s": 1.0}], "segment": 0}),
                 json.dumps({"pid": 7, "program": "a", "spawned_s": 3.0, "alone": True, "started_before": True,
                             "seconds": 1.0, "held_s": 1.0, "costs": [{"wait_s": 0.5, "case_s": 1.0}], "segment": 1}),
                 json.dumps({"pid": 8, "program": "a", "spawned_s": 1.0, "alone": False, "seconds": 2.0,
                             "costs": [{"start_s": 0.1, "context_s": 0.2, "case_s": 1.0}]})]
        got = suite_summary.runs_summary(lines)
        self.assertEqual((got["harness_runs"], got["contexts_made"], got["alone_runs"]), (2, 2, 1))
        self.assertEqual(got["contexts_per_grader"], {"a": 1})

    def test_a_run_alone_that_hit_the_time_limit_counts_as_a_hang(self):
        lines = [json.dumps({"program": "a", "spawned_s": 5.0, "alone": True, "seconds": 6.0, "verdict": "timeout",
                             "costs": [{"start_s": 0.1, "context_s": 0.2, "total_s": 6.0}]}),
                 json.dumps({"program": "a", "spawned_s": 1.0, "alone": False, "seconds": 6.0, "verdict": "timeout",
                             "costs": []}),
                 json.dumps({"program": "a", "spawned_s": 12.0, "alone": True, "seconds": 1.5, "verdict": "ok",
                             "costs": [{"start_s": 0.1, "context_s": 0.2, "case_s": 1.0, "exit_s": 0.2}]})]
        got = suite_summary.runs_summary(lines)
        self.assertEqual((got["alone_runs"], got["alone_s"]), (2, 7.5))
        self.assertEqual((got["alone_timeouts"], got["alone_timeouts_s"]), (1, 6.0))  # the shared one is no hang
        self.assertEqual(got["alone_start_context_exit_s"], 0.5)  # of the run that did not hang
        self.assertEqual(got["timeouts"], 2)  # every run that hit its time limit, shared or alone


    def test_a_run_stopped_before_its_end_made_its_context(self):
        """A run stopped before its clock line says when its channel's first line came (start_context_s): it
        made its context, which counts, though not its time."""
        lines = [self.line("a", 1.0, False, [{"wait_s": 0.1, "total_s": 8.0, "start_context_s": 2.0}, {}]),
                 self.line("a", 2.0, False, [{"start_s": 0.5, "context_s": 1.0, "case_s": 1.0, "total_s": 2.5}])]
        got = suite_summary.runs_summary(lines)
        self.assertEqual((got["contexts_made"], got["context_sum_s"], got["context_max_s"]), (2, 1.0, 1.0))
        self.assertEqual(got["contexts_per_grader"], {"a": 2})

    def test_a_run_started_before_its_hold_counts_from_its_cases(self):
        """harness.start_run: the process made its context before the hold; held_s is the hold, and only
        its exit counts among start, context and exit."""
        lines = [json.dumps({"program": "a", "spawned_s": 1.0, "alone": True, "started_before": True, "seconds": 9.0,
                             "held_s": 2.0, "verdict": "ok",
                             "costs": [{"start_s": 0.1, "context_s": 0.2, "case_s": 1.5, "exit_s": 0.25,
                                        "wait_s": 7.0}]})]
        got = suite_summary.runs_summary(lines)
        self.assertEqual((got["alone_runs"], got["alone_s"]), (1, 2.0))
        self.assertEqual(got["alone_start_context_exit_s"], 0.2)  # 0.25, rounded to 0.1 s
        self.assertEqual(got["contexts_made"], 1)

    def test_where_the_gpus_time_went(self):
        """Each GPU over its own runs' span: held alone, held shared (and of that, drained while a run waited
        to be alone), held by none."""
        def run(gpu, spawned, seconds, alone, held=None, wait=0.0, tool=False):
            line = {"gpu": gpu, "program": "a", "spawned_s": spawned, "seconds": seconds, "alone": alone,
                    "costs": [{"wait_s": wait}]}
            if held is not None:
                line["held_s"] = held
            if tool:
                line["tool"] = True
            return json.dumps(line)
        lines = [run("g1", 0.0, 10.0, False, held=10.0, tool=True),  # a shared run under memcheck, [0, 10]
                 run("g1", 2.0, 12.0, True, held=4.0, wait=6.0),  # alone [10, 14], after waiting [4, 10]
                 run("g1", 16.0, 2.0, False),                      # shared, no held_s: the whole run, [16, 18]
                 run("g2", 100.0, 1.0, True, held=1.0)]            # another GPU, its span its own
        summed = suite_summary.runs_summary(lines)
        self.assertEqual(summed["harness_runs"], 3)  # the run under the tool is not the harness's own
        got = summed["gpu"]
        self.assertEqual(got, {"gpus": 2, "span_s": 19.0, "alone_s": 5.0, "shared_s": 12.0, "draining_s": 6.0,
                               "idle_s": 2.0})
        self.assertEqual(suite_summary.gpu_time([])["span_s"], 0.0)


class Wording(unittest.TestCase):
    def test_no_article_after_no_in_the_graders_messages(self):
        """'has no %s' % 'an atomic add' reads "has no an atomic add": the nouns such a message joins
        take no article."""
        bad = []
        for folder in ("gradelib", "rubrics"):
            for name in sorted(os.listdir(os.path.join(paths.KIT_ROOT, "grader", folder))):
                if name.endswith(".py"):
                    with open(os.path.join(paths.KIT_ROOT, "grader", folder, name)) as f:
                        text = f.read()
                    bad += ["%s: %s" % (name, m) for m in re.findall(r"\bno (?:a|an) [\w-]+", text)]
                    if re.search(r'"no %s', text):
                        joined = re.findall(r'\(\w+, "(an? [^"]+)"\)', text)
                        bad += ["%s: %s" % (name, j) for j in joined]
        self.assertEqual(bad, [])


if __name__ == "__main__":
    unittest.main()
