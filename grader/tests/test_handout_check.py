"""tools/check_handouts.py on constructed handouts: it must catch what it claims to."""
import os
import sys
import tempfile
import unittest

from gradelib import paths

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import check_handouts  # noqa: E402


class HandoutCheckTest(unittest.TestCase):
    def problems(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "figure.svg"), "w") as f:
                f.write("<svg/>")
            path = os.path.join(tmp, "h.md")
            with open(path, "w") as f:
                f.write(text)
            return check_handouts.check(path, check_handouts.makefile_targets(), check_handouts.grader_options())

    def test_good_text_passes(self):
        text = ("# 1. Intro\n\nSee [the figure](figure.svg) and [below](#2-more).\n\n## 2. More\n\n"
                "Run `make grade LAB=01` or `make run LAB=04 ARGS=\"--lines 12000 --seed 3\"`, "
                "then `grade.py --lab 1 --seed 3`. We make two kinds of checks.\n\n"
                "```c\ncudaDeviceSynchronize(); // removed from device code in CUDA 12\n```\n")
        self.assertEqual(self.problems(text), [])

    def test_each_problem_is_reported(self):
        text = ("Run `make bogus`, `make grade LAB=42`, `make run LAB=01 ARGS=\"--Q 3\"`, `grade.py --fast`.\n"
                "[x](missing.md) [y](#nowhere)\n\n"
                "A parent thread calls cudaDeviceSynchronize() to wait for the result.\n")
        found = "\n".join(self.problems(text))
        for expected in ("`make bogus` is not a target", "LAB=42 names no lab", "has no option --Q",
                         "grade.py has no option --fast", "missing file: missing.md", "missing heading: #nowhere",
                         "cudaDeviceSynchronize named without saying it is legacy"):
            self.assertIn(expected, found)

    def test_the_kit_handouts_pass(self):
        self.assertEqual(check_handouts.main([]), 0)


GOOD_HANDOUT = """# Lab 07: Example

Intro.

## 1. Goal

## 2. Background

### 2.1 The first topic

### 2.2 Streams: why the `NULL` stream serializes

## 3. The lab, step by step

## 4. How it is graded

## 5. Common mistakes

## 6. Check yourself

```c
## 9. not a heading: inside a code block
```

## 7. Where next
"""


class RenderedPageTest(unittest.TestCase):
    """check_handouts.check_html: every 2.x section a hint names is in the table of contents, and long
    table cells wrap."""

    PAGE = ('<html><head><style>td { overflow-wrap: anywhere; }</style></head><body><nav id="TOC"><ul>'
            '<li><a href="#the-lab">The lab</a><ul><li><a href="#errors">2.4 Errors</a></li></ul></li></ul></nav>'
            '<h2 id="the-lab">The lab</h2><h3 id="errors">2.4 Errors</h3></body></html>')

    def problems(self, text):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "01.html"), "w") as f:
                f.write(text)
            return check_handouts.check_html(folder)[1]

    def test_a_page_as_rendered_passes(self):
        self.assertEqual(self.problems(self.PAGE), [])

    def test_a_level_3_section_missing_from_the_contents(self):
        problems = self.problems(self.PAGE.replace('<ul><li><a href="#errors">2.4 Errors</a></li></ul>', ""))
        self.assertEqual(len(problems), 1)
        self.assertIn("section errors is not in the table of contents", problems[0])

    def test_no_wrapping_style(self):
        problems = self.problems(self.PAGE.replace("overflow-wrap: anywhere", "color: red"))
        self.assertIn("scroll sideways", problems[0])


class FakeCheck:
    def __init__(self, name, hint):
        self.name, self.hint = name, hint


class FakeLab:
    def __init__(self, number, handout, build_hint, run_hint, hints):
        self.number, self.handout = number, handout
        self.checks = [FakeCheck("compiles", build_hint), FakeCheck("runs cleanly", run_hint)] + \
            [FakeCheck("check %d" % i, h) for i, h in enumerate(hints)]


class TemplateCheckTest(unittest.TestCase):
    """Every lab handout has exactly the template's ## sections, in order, and 2.k subsections."""

    def template_problems(self, text, name="07-example.md", folder="handouts"):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, folder))
            path = os.path.join(tmp, folder, name)
            with open(path, "w") as f:
                f.write(text)
            return [p for p in check_handouts.check(path, check_handouts.makefile_targets(),
                                                    check_handouts.grader_options()) if "section" in p]

    def test_template_handout_passes(self):
        self.assertEqual(self.template_problems(GOOD_HANDOUT), [])

    def test_missing_section_fails(self):
        found = "\n".join(self.template_problems(GOOD_HANDOUT.replace("## 5. Common mistakes\n", "")))
        self.assertIn("missing: 5. Common mistakes", found)

    def test_extra_section_fails(self):
        text = GOOD_HANDOUT.replace("## 7. Where next", "## 7. Where next\n\n## 8. Then and now")
        self.assertIn("not in the template: 8. Then and now", "\n".join(self.template_problems(text)))

    def test_sections_out_of_order_fail(self):
        text = GOOD_HANDOUT.replace("## 4. How it is graded", "## 9. placeholder").replace(
            "## 5. Common mistakes", "## 4. How it is graded").replace("## 9. placeholder", "## 5. Common mistakes")
        self.assertIn("out of order", "\n".join(self.template_problems(text)))

    def test_old_style_handout_fails(self):
        text = "# Lab 07: Example\n\n## 1. What it is\n\n## 2. The lab, step by step\n\n## Check yourself\n"
        self.assertTrue(self.template_problems(text))

    def test_background_subsections_numbered_in_order(self):
        found = "\n".join(self.template_problems(GOOD_HANDOUT.replace("### 2.2 Streams", "### 2.3 Streams")))
        self.assertIn("should be numbered 2.2", found)
        found = "\n".join(self.template_problems(GOOD_HANDOUT.replace("### 2.1 The first topic", "### The first topic")))
        self.assertIn("should be numbered 2.1", found)

    def test_teaching_text_over_its_length_fails(self):
        # Lines of sections 4 and 5 and of generated blocks are the grader's, not the lesson's.
        grading = "\n".join("a grading line" for _ in range(400))
        generated = "<!-- begin generated: x -->\n%s\n<!-- end generated: x -->" % grading
        text = GOOD_HANDOUT.replace("## 5. Common mistakes", "## 5. Common mistakes\n" + grading).replace(
            "## 7. Where next", "## 7. Where next\n" + generated)
        self.assertEqual(self.template_problems(text), [])
        lesson = "\n".join("a line that teaches" for _ in range(check_handouts.TEACHING_LINES_MAX))
        found = "\n".join(self.template_problems(text.replace("## 3. The lab", lesson + "\n## 3. The lab")))
        self.assertIn("lines of teaching text", found)

    def test_overview_and_other_files_are_not_lab_handouts(self):
        self.assertEqual(self.template_problems("# Overview\n\n## 1. Anything\n", name="00-overview.md"), [])
        self.assertEqual(self.template_problems("# Notes\n\n## Anything\n", folder="notes"), [])


class HintCheckTest(unittest.TestCase):
    """Every grader hint names a section its lab's handout has, by number and title."""

    def hint_problems(self, build_hint, run_hint="", hints=(), handout="handouts/07-example.md"):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "handouts"))
            for name in ("07-example.md", "08-other.md"):
                with open(os.path.join(tmp, "handouts", name), "w") as f:
                    f.write(GOOD_HANDOUT)
            ok = "read %s, section 3 (the lab, step by step)" % handout
            lab = FakeLab("07", handout, build_hint, run_hint or ok, hints)
            return check_handouts.grader_hint_problems([lab], tmp)

    def test_good_hints_pass(self):
        self.assertEqual(self.hint_problems(
            "read handouts/07-example.md, section 2.1 (the first topic)",
            "read handouts/07-example.md, section 2.2 (streams: why the NULL stream serializes)",
            ["read handouts/07-example.md, section 2.1 (the first topic) and 3 (the lab, step by step)",
             "read handouts/07-example.md, section 4 (how it is graded)"]), [])

    def test_each_bad_hint_is_reported(self):
        cases = {
            "read handouts/07-example.md, section 2.3 (the first topic)": "which handouts/07-example.md does not have",
            "read handouts/07-example.md, section 2.1 (the second topic)": "but in handouts/07-example.md it is 2.1 (the first topic)",
            "read handouts/07-example.md, section 2 (the first topic)": "it is 2 (background)",
            "read handouts/07-example.md, section 2.1 (the first topic) and 8 (then and now)": "section 8",
            "read handouts/missing.md, section 1 (goal)": "missing handout",
            "read handouts/07-example.md, the first topic": "does not read",
            "read handouts/07-example.md, section 2.1 the first topic": "do not read",
            "read handouts/08-other.md, section 1 (goal)": "another lab's handout",
            "": "no hint",
        }
        for hint_text, expected in cases.items():
            found = "\n".join(self.hint_problems(hint_text))
            self.assertIn(expected, found, hint_text)

    def test_check_and_run_hints_are_checked_too(self):
        self.assertIn("runs cleanly", "\n".join(self.hint_problems(
            "read handouts/07-example.md, section 1 (goal)", run_hint="read handouts/07-example.md, section 9 (x)")))
        self.assertIn("check 0", "\n".join(self.hint_problems(
            "read handouts/07-example.md, section 1 (goal)", hints=["read handouts/07-example.md, section 2.9 (x)"])))

    def test_the_kit_labs_01_to_04_hints_and_handouts_pass(self):
        from gradelib import registry
        kit_labs = [lab for lab in registry.all_labs().values() if lab.number in ("01", "02", "03", "04")]
        self.assertEqual(len(kit_labs), 4)
        self.assertEqual(check_handouts.grader_hint_problems(kit_labs), [])
        handouts = [os.path.join(paths.KIT_ROOT, lab.handout) for lab in kit_labs]
        targets, options = check_handouts.makefile_targets(), check_handouts.grader_options()
        self.assertEqual([p for h in handouts for p in check_handouts.check(h, targets, options)], [])

    def test_every_lab_of_the_grader_has_its_handout_checked(self):
        """Labs added later (05, 06, ...) are covered without a change here: their hints are checked too."""
        from gradelib import registry
        names = [where for lab in registry.all_labs().values() for where, _ in check_handouts.lab_hints(lab)]
        self.assertTrue(all(any(w.startswith("lab %s " % lab.number) for w in names) for lab in registry.all_labs().values()))


class LegacyClaimTest(unittest.TestCase):
    """Corrected legacy statements (CDP1, printf, memcheck) never come back as current rules."""

    # The wrong phrasings the kit's pages once had, each with the words of the problem it must raise.
    WRONG = [
        ("Device-side `printf` writes into a FIFO buffer that is emptied after the kernel; when it fills,\n"
         "further lines are **dropped silently**.", "printf's buffer is circular"),
        ("| `printf` FIFO | `cudaLimitPrintfFifoSize`: 1 MiB; when full, further output is dropped silently | x | y |",
         "printf's buffer is circular"),
        ("In the old CDP1 model, launch-pool storage could be virtualized between\ndevice and host memory: "
         "launches that did not fit spilled into a slower pool\nin host memory.", "not host memory"),
        ("- **Then (CDP1):** a fixed pool, 2,048 by default; launches that did not fit spilled into a slower\n"
         "  \"virtualized\" pool, and still ran.", "could overflow too"),
        ("| **Legacy:** launches beyond the pool spill into a slower \"virtualized\" pool and still run | x | y |",
         "could overflow too"),
        ("The maximum depth has not quite gone: NVIDIA's current guide still lists a maximum nesting depth\n"
         "of 24.", "stated as current"),
        ("| nesting depth | NVIDIA's guide lists a maximum of 24 levels, then and now (some books say 64) | x |",
         "stated as current"),
        ("Older texts give a maximum nesting depth (24 levels in hardware in NVIDIA's guide).", "stated as current"),
        ("The nesting depth (24 in NVIDIA's guide, 64 in hardware in older texts) is taught in Lab 03.",
         "without saying it is in its CDP1 section"),
        ("A recursion stops at the nesting depth limit of 64.", "without saying it is CDP1's or older texts'"),
        ("memcheck reports accesses out of bounds, misaligned accesses, bad frees and\nfailed CUDA calls.",
         "memcheck does not check CUDA calls made on the GPU"),
        ("- passes when memcheck reports no error: no bad free, no failed CUDA call.",
         "memcheck does not check CUDA calls made on the GPU"),
    ]
    # The corrected wording of the kit's pages: none of it may raise a problem.
    RIGHT = [
        "Device-side `printf` writes into a FIFO buffer that is emptied after the kernel. The buffer\n"
        "is circular: when a kernel prints more than fits, **older output is overwritten**.",
        "| `printf` FIFO | 8,650,752 bytes; the buffer is circular: when a kernel prints more than fits, older "
        "output is overwritten | never count printed lines |",
        "In the old CDP1 model, the launch pool had two parts, a fixed-size pool and a slower \"virtualized\"\n"
        "pool. That was a slower buffer, not host memory, and it could fill too.",
        "| **Legacy:** launches spill into a slower \"virtualized\" pool (a slower buffer, not host memory, which "
        "could itself overflow and fail the launch with `cudaErrorLaunchPendingCountExceeded`) | x |",
        "Older texts give a maximum nesting depth (24 levels in NVIDIA's\nguide, in its section on the legacy "
        "CDP1 model; 63 or 64 in some books, with a software limit that might be lower).",
        "| **Legacy:** a nesting depth limit (24 in NVIDIA's guide, in its CDP1 section; 63 or 64 in some books) | "
        "The guide's CDP2 restrictions list no depth limit; tail-launched chains of 100,000 levels ran |",
        "| nesting depth | no limit in the guide's CDP2 restrictions. **Legacy:** a maximum of 24 levels in the "
        "guide's CDP1 section (some books say 64 in hardware, 63 or fewer in software) | x |",
        "the nesting depth (24 in the CDP1 section of NVIDIA's guide, 64 in hardware and 63 or fewer in software "
        "in older texts; the guide's CDP2 restrictions list no depth limit)",
        "The deepest rectangles have depth 4, so the 8192 x 8192 image stops at squares of 64.",
        "memcheck reports accesses out of bounds, misaligned accesses, bad frees and failed CUDA calls made\n"
        "from the host. It does not check the CUDA calls made on the GPU under dynamic parallelism.",
        "The second write dropped to \"fix\" the race leaves the slots short of 2.",
        "```c\n/* printf: further lines are dropped silently (a comment in code is not checked) */\n```",
    ]

    def problems(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "h.md")
            with open(path, "w") as f:
                f.write(text + "\n")
            return check_handouts.check(path, check_handouts.makefile_targets(), check_handouts.grader_options())

    def test_each_wrong_phrasing_is_flagged(self):
        for text, expected in self.WRONG:
            self.assertIn(expected, "\n".join(self.problems(text)), text)

    def test_the_problem_names_the_line(self):
        found = self.problems("Intro.\n\nDevice printf goes to a FIFO; when it fills,\nfurther lines are dropped.")
        self.assertEqual(len(found), 1)
        self.assertRegex(found[0], r"h\.md:4: ")

    def test_the_corrected_wording_passes(self):
        for text in self.RIGHT:
            self.assertEqual(self.problems(text), [], text)

    def test_the_kit_pages_pass(self):
        pages = check_handouts.legacy_claim_pages()
        for folder in ("handouts", "labs"):
            self.assertTrue(any(os.sep + folder + os.sep in p for p in pages), folder)
        self.assertTrue(any(p.endswith(os.sep + "answers.md") for p in pages), "the answer keys")
        self.assertIn(os.path.join(paths.KIT_ROOT, "README.md"), pages)
        found = []
        for page in pages:
            with open(page) as f:
                found += check_handouts.legacy_claim_problems(page, f.read().splitlines())
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
