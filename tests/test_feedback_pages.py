#!/usr/bin/env python3
"""Feedback pages in a real browser (headless Chromium; exits 77 without one).

Pages are made by the grader's own page code (gradelib/feedback.py) from recorded result documents:
Lab 03's solution run and the same run with records missing and one duplicated (the picture must
mark them, in the figures' red, and the solution's must mark nothing), and the recorded solution
runs of every other lab that has a run picture. The pages recorded from real grading runs on a GPU
machine (grader/tests/data/feedback/, written by tools/gpu-suite.sh) are checked too.
tools/browser_check.py renders each page and its picture alone and compares the screenshots.
"""
import copy
import glob
import json
import os
import sys
import tempfile

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))
sys.path.insert(0, os.path.join(KIT, "tools"))

import browser_check  # noqa: E402
from gradelib import checks as chk  # noqa: E402
from gradelib import feedback, figures, registry  # noqa: E402
from gradelib.context import CaseRun  # noqa: E402
from gradelib.grading import LabReport  # noqa: E402

RECORDED = os.path.join(KIT, "grader", "tests", "data", "recorded")
RECORDED_PAGES = os.path.join(KIT, "grader", "tests", "data", "feedback")


def recorded(name):
    with open(os.path.join(RECORDED, name)) as f:
        return json.load(f)


def make_report(lab, doc, failed_check=None, message=""):
    results = []
    for c in lab.checks:
        wrong = c.name == failed_check
        results.append(chk.CheckResult(c, chk.FAILED if wrong else chk.PASSED, 0 if wrong else c.points,
                                       message if wrong else ""))
    rep = LabReport(lab, "submission", 1, [doc.get("params", {})], results)
    rep.runs = [CaseRun(doc.get("params", {}), None, doc, None)]
    return rep


def wrong_tree(doc):
    """Lab 03's solution run with the last two records of the deepest level lost and one record of
    depth 1 written twice."""
    wrong = copy.deepcopy(doc)
    records = wrong["hello"]["records"]
    deepest = max(r[0] for r in records)
    lost = [i for i, r in enumerate(records) if r[0] == deepest][-2:]
    for i in sorted(lost, reverse=True):
        del records[i]
    records.append(next(r for r in records if r[0] == 1))
    wrong["hello"]["count"] = len(records)
    return wrong


def main():
    if browser_check.find_browser() is None:
        print("not run: no Chromium here (apt-get install chromium)")
        return browser_check.NOT_RUN
    out = tempfile.mkdtemp(prefix="feedback-pages-")
    pages = {}
    lab03 = registry.resolve("03")
    solution03 = recorded("lab03-solution.json")
    for case, doc, failed in (("solution", solution03, None),
                              ("wrong-tree", wrong_tree(solution03), "hello records")):
        path = os.path.join(out, "lab03-%s.html" % case)
        feedback.write_page(path, make_report(lab03, doc, failed, "the records differ from the expected tree"),
                            "Lab 03: %s" % case, ["made from a recorded run"])
        pages[("03", case)] = path
    for lab in registry.all_labs().values():
        if lab.name in figures.RUN_FIGURES and lab.number != "03":
            path = os.path.join(out, "lab%s-solution.html" % lab.number)
            feedback.write_page(path, make_report(lab, recorded("lab%s-solution.json" % lab.number)),
                                "%s: solution" % lab.title, ["made from a recorded run"])
            pages[(lab.number, "solution")] = path
    for path in pages.values():
        with open(path) as f:
            if browser_check.page_figure(f.read()) is None:
                print("FAILED: %s holds no picture of its run" % path)
                return 1
    listed = [(key, path) for key, path in pages.items()] + \
        [(None, path) for path in sorted(glob.glob(os.path.join(RECORDED_PAGES, "*.html")))]
    # The check itself: the same page with its picture shrunk to half, or cut to its upper half, fails.
    # The solution's page too, whose red (none) a spoilt picture keeps: only the pictures' comparison
    # can refuse it.
    spoilt = []
    for case in ("wrong-tree", "solution"):
        with open(pages[("03", case)]) as f:
            page = f.read()
        for how, style in (("shrunk", "figure svg { width: 50%; height: auto; }"),
                           ("cut", "figure { height: 150px; overflow: hidden; }")):
            spoilt.append(("%s (Lab 03's %s)" % (how, case), os.path.join(out, "lab03-%s-%s.html" % (case, how))))
            with open(spoilt[-1][1], "w") as f:
                f.write(page.replace("</style>", style + "</style>"))
    # One Chromium for every screenshot (a launch costs as much as about ten pages), taking them ahead
    # while the ones taken are compared.
    with browser_check.Browser(browser_check.find_browser()) as browser:
        looked = browser_check.check_pages(browser, [path for _, path in listed + spoilt], out)
        try:
            return look(looked, listed, spoilt, browser.path)
        finally:
            looked.close()


def look(looked, listed, spoilt, browser):
    red = {}
    for key, _ in listed:
        path, problem, facts = next(looked)
        print("%s %s: %s" % ("FAIL" if problem else "ok  ", os.path.basename(path),
                             ", ".join("%s %d" % kv for kv in sorted(facts.items()))))
        if problem:
            print("FAILED: %s: %s" % (path, problem))
            return 1
        red[key] = facts["page_red"]
    for how, _ in spoilt:
        _, problem, _ = next(looked)
        if problem is None:
            print("FAILED: the browser check passed a page whose picture is %s" % how)
            return 1
        if "solution" in how and "does not show its picture" not in problem:
            print("FAILED: a page whose picture is %s was refused, but not for its picture: %s" % (how, problem))
            return 1
        print("ok   a page whose picture is %s is refused: %s" % (how, problem))
    if red.get(("03", "solution")) != 0 or not red.get(("03", "wrong-tree")):
        print("FAILED: Lab 03's picture should mark nothing for the solution and the wrong records for the "
              "wrong tree (red pixels: %s)" % red)
        return 1
    print("feedback pages: %d looked at in %s; Lab 03's wrong tree marked in %d red pixels, the solution's in none"
          % (len(listed), browser, red[("03", "wrong-tree")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
