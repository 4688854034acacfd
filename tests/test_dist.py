#!/usr/bin/env python3
"""What the kit ships, unpacked into an empty folder and used there.

  tests/test_dist.py student      make dist's archive: no solutions, no salt, no self-tests, the
                                  student's README; no reference solution's code in any file
                                  (answers_in); shipped pages true for the student kit (doc_problems,
                                  staff_passages_dropped, and every make target they name is one
                                  the student kit runs); `make grade` builds every lab and runs the
                                  static checks there (and the runtime checks on a GPU machine), its
                                  builds shared with the kit's through the build cache (grading_env)
  tests/test_dist.py gradescope   make gradescope's zip: run_autograder against a fake /autograder
                                  tree grades the reference solution into a valid results.json
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))
sys.path.insert(0, os.path.join(KIT, "tools"))

import check_handouts  # noqa: E402
import dist  # noqa: E402
from gradelib import build  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import context  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import report  # noqa: E402
from gradelib import starters  # noqa: E402


# ---------------------------------------------------------------- no answer in the student kit
#
# Every function of every reference solution (solutions/NN-name/*.cu, the KIT_STARTER branches
# removed, as the grader compiles it) whose body the starter does not already give the student is an
# answer. None may appear in any file of the student kit, compared as C tokens (comments, preprocessor
# lines and whitespace dropped): neither the body itself anywhere in a file, nor, with the function's
# own parameters renamed by position ($0, $1, ...), inside the body of any function of a file, so
# that a copy under other parameter names is caught too. Exempt: bodies of fewer than MIN_STATEMENTS
# statements (counted as semicolons), which are too small to give anything away (none of the
# solutions has one today; the smallest answers, a child kernel of two statements, are checked).

C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*|<<<|>>>|->|\+\+|--|<<=|>>=|<<|>>|'
                     r'[<>=!+\-*/%&|^]=|&&|\|\||::|\S')
IDENTIFIER = re.compile(r"[A-Za-z_]\w*$")
NOT_A_FUNCTION = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}
MIN_STATEMENTS = 2


def c_tokens(text):
    """text as C tokens: comments (outside string literals) and preprocessor lines dropped."""
    text = re.sub(r'("(?:\\.|[^"\\\n])*")|/\*.*?\*/|//[^\n]*', lambda m: m.group(1) or " ", text, flags=re.S)
    text = re.sub(r"^[ \t]*#.*$", " ", text, flags=re.M)
    return C_TOKEN.findall(text)


def _parameter_names(tokens):
    names, depth, last = [], 0, None
    for t in tokens + [","]:
        if t in ("(", "["):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
        elif t == "," and depth == 0:
            if last not in (None, "void"):
                names.append(last)
            last = None
        elif depth == 0 and IDENTIFIER.match(t):
            last = t
    return names


def c_functions(tokens):
    """[(name, parameter names, body tokens)] of every function definition: NAME ( ... ) { ... }."""
    found = []
    for i, t in enumerate(tokens):
        if t != "{" or i == 0 or tokens[i - 1] != ")":
            continue
        j, depth = i - 1, 0
        while j >= 0:
            depth += (tokens[j] == ")") - (tokens[j] == "(")
            if depth == 0:
                break
            j -= 1
        if j < 2:
            continue
        name, before = tokens[j - 1], tokens[j - 2]
        if not IDENTIFIER.match(name) or name in NOT_A_FUNCTION or before in NOT_A_FUNCTION:
            continue
        if not (IDENTIFIER.match(before) or before in ("*", "&", ")")):
            continue
        end, depth = i, 0
        while end < len(tokens):
            depth += (tokens[end] == "{") - (tokens[end] == "}")
            if depth == 0:
                break
            end += 1
        found.append((name, _parameter_names(tokens[j + 1:i - 1]), tokens[i + 1:end]))
    return found


def parameters_renamed(body, parameters):
    """body with each parameter named by its position ($0, $1, ...); members (x.p, x->p) left alone."""
    position = {p: k for k, p in enumerate(parameters)}
    return [("$%d" % position[t]) if t in position and (k == 0 or body[k - 1] not in (".", "->")) else t
            for k, t in enumerate(body)]


def _joined(tokens):
    return " %s " % " ".join(tokens)


def answer_bodies(kit=KIT):
    """[(solution file, function, parameter names, body tokens)] of every function a reference
    solution has that its starter does not give as it is."""
    answers = []
    for path in sorted(glob.glob(os.path.join(kit, "solutions", "[0-9][0-9]-*", "*.cu"))):
        with open(path) as f:
            source = f.read()
        given = {name: body for name, _, body in c_functions(c_tokens(starters.starter_text(source, path)))}
        for name, parameters, body in c_functions(c_tokens(context.compiled_text(source))):
            if given.get(name) != body and body.count(";") >= MIN_STATEMENTS:
                answers.append((os.path.relpath(path, kit), name, parameters, body))
    return answers


def answers_in(root, answers):
    """Where a file under root holds an answer's body: one line each."""
    problems = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(folder, n)
            with open(path, encoding="utf-8", errors="replace") as f:
                tokens = c_tokens(f.read())
            text = _joined(tokens)
            functions = [(name, _joined(parameters_renamed(body, parameters)))
                         for name, parameters, body in c_functions(tokens)]
            for source, name, parameters, body in answers:
                how = "verbatim" if _joined(body) in text else None
                if how is None:
                    renamed = _joined(parameters_renamed(body, parameters))
                    how = next(("in %s, parameters renamed" % f for f, b in functions if renamed in b), None)
                if how:
                    problems.append("%s holds the body of %s from %s (%s)"
                                    % (os.path.relpath(path, root), name, source, how))
    return problems


# ---------------------------------------------------------------- the shipped pages

STAFF_PASSAGE = re.compile(r"<!-- staff -->.*?<!-- /staff -->", re.S)
NOT_SHIPPED_NAMES = re.compile(r"solutions/|RESULTS\.md|grader/tests|selftest")
MAKE_IN_CODE = re.compile(r"(?<![\w-])make(?![\w-])[ \t\n]*([^\s`]*)")


def kit_only_targets(makefile):
    """The targets whose recipe runs $(KIT_ONLY): those the student kit refuses."""
    with open(makefile) as f:
        lines = f.read().splitlines()
    found, current = set(), []
    for line in lines:
        m = re.match(r"^([\w][\w .-]*):(?!=)", line)
        if m:
            current = m.group(1).split()
        elif line.startswith("\t") and "$(KIT_ONLY)" in line:
            found.update(current)
    return found


def _path_glob(word):
    """A glob for a path as a page writes it, its placeholders (NN, NN-name, ...) as wildcards."""
    return word.replace("...", "*").replace("NN-name", "[0-9][0-9]-*").replace("NN", "[0-9][0-9]")


def code_of(text):
    """(offset, text) of every code span and fenced code block of a Markdown page."""
    return [(m.start(), m.group(0).strip("`")) for m in re.finditer(r"```.*?```|`[^`]+`", text, re.S)]


def shipped_pages(root):
    return sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True))


def doc_problems(root, staff_targets):
    """What the student kit's pages say that is not true there: a relative link to a missing file
    or heading; a kit path in code (`labs/...`, `tools/...`, `RESULTS.md`; build/ is made by make)
    that the student kit lacks; a name of what only the full kit has; a `make X` the student kit
    refuses (staff_targets)."""
    top_level = set(os.listdir(KIT)) - {".git"}
    problems = []
    for page in shipped_pages(root):
        rel = os.path.relpath(page, root)
        with open(page) as f:
            text = f.read()

        def where(offset):
            return "%s:%d" % (rel, text.count("\n", 0, offset) + 1)
        for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
            if not os.path.exists(dest):
                problems.append("%s: link to a file the student kit lacks: %s" % (where(m.start()), target))
            elif anchor and dest.endswith(".md"):
                if anchor not in check_handouts.anchors_of(dest):
                    problems.append("%s: link to a missing heading: %s" % (where(m.start()), target))
        for offset, code in code_of(text):
            for word in code.split():
                word = re.sub(r":\d+$", "", word.strip("\"'(),;:"))
                first = word.split("/", 1)[0]
                if first not in top_level or first == "build" or ("/" not in word and not os.path.isfile(
                        os.path.join(KIT, word))):
                    continue  # not a path of the kit (a bare name is one only for a top-level file)
                if not glob.glob(os.path.join(root, _path_glob(word))):
                    problems.append("%s: names %s, which the student kit lacks" % (where(offset), word))
        for m in NOT_SHIPPED_NAMES.finditer(text):
            problems.append("%s: names %s, which only the full kit has" % (where(m.start()), m.group(0)))
        for m in re.finditer(r"\bmake\s+([a-z][\w-]*)", text):
            if m.group(1) in staff_targets:
                problems.append("%s: names `make %s`, which the student kit refuses" % (where(m.start()), m.group(1)))
    return problems


def make_mentions(root):
    """{target: LAB} of every make command the shipped pages show in code ("" for plain make, or for
    no LAB=), a LAB the pages show with the target where there is one."""
    found = {}
    for page in shipped_pages(root):
        with open(page) as f:
            text = f.read()
        for _, code in code_of(text):
            for m in MAKE_IN_CODE.finditer(code):
                word = m.group(1)
                if word.startswith("-"):
                    continue  # make -f ...: a lab's own Makefile, not the kit's
                target = word if re.match(r"[a-z][\w-]*$", word) else ""
                lab = re.search(r"\bLAB=(\w+)", code[m.end():].split("\n", 1)[0])
                if lab or target not in found:
                    found[target] = lab.group(1) if lab else ""
    return found


def staff_passages_dropped(root):
    """Each shipped page is its kit page less its staff passages (whitespace aside), and no other change."""
    problems = []
    for source, name in dist.student_files():
        if not name.endswith(".md"):
            continue
        with open(os.path.join(KIT, source)) as a, open(os.path.join(root, name)) as b:
            want, got = STAFF_PASSAGE.sub("", a.read()), b.read()
        if re.sub(r"\s+", "", want) != re.sub(r"\s+", "", got) or "<!-- staff" in got or "<!-- /staff" in got:
            problems.append("%s is not %s less its staff passages" % (name, source))
    return problems


def _checker_problems(answers, tmp):
    """The answer check itself: it found answers, and it catches each under other parameter names."""
    if not answers:
        return ["no function bodies found in solutions/*/*.cu: the answer check would check nothing"]
    folder = os.path.join(tmp, "renamed-copies")
    os.makedirs(folder)
    for k, (_, name, parameters, body) in enumerate(answers):
        other = ["renamed_%d" % p for p in range(len(parameters))]
        with open(os.path.join(folder, "%02d.cu" % k), "w") as f:
            f.write("/* a copy */ void copy_%d(%s)\n{\n%s\n}\n" % (
                k, ", ".join("int " + o for o in other),
                " ".join(re.sub(r"^\$(\d+)$", lambda m: other[int(m.group(1))], t)
                         for t in parameters_renamed(body, parameters))))
    caught = answers_in(folder, answers)
    return ["the answer check misses %s under other parameter names" % name
            for k, (_, name, parameters, _) in enumerate(answers)
            if parameters and not any(c.startswith("%02d.cu " % k) for c in caught)]


def student_kit_problems(root, tmp):
    """Every problem of the unpacked student kit that needs no build: answers, pages, make targets."""
    answers = answer_bodies()
    problems = _checker_problems(answers, tmp) + answers_in(root, answers)
    staff_targets = kit_only_targets(os.path.join(root, "Makefile"))
    if "test" not in staff_targets:
        problems.append("Makefile: no KIT_ONLY targets found (make test is one)")
    problems += staff_passages_dropped(root) + doc_problems(root, staff_targets)
    for target in sorted(staff_targets):
        refused = run(["make", "--no-print-directory", target], root, clean_env())
        if refused.returncode == 0 or "not part of the student kit" not in refused.stdout:
            problems.append("make %s in the student kit should say it is not part of it" % target)
    # Every make command a page shows runs here, as far as the student kit's refusal goes: PYTHON and
    # NVCC are replaced by true, so that nothing long runs; a refused target says so first.
    for target, lab in sorted(make_mentions(root).items()):
        argv = ["make", "--no-print-directory"] + ([target] if target else []) + (["LAB=" + lab] if lab else [])
        made = run(argv + ["PYTHON=true", "NVCC=true"], root, clean_env())
        if "not part of the student kit" in made.stdout:
            problems.append("the pages show `%s`, which the student kit refuses" % " ".join(
                ["make"] + argv[2:]))
    return problems


def doctor_problems(root):
    """make doctor in the student kit names no make target the student kit refuses."""
    problems = []
    doctor = run(["make", "--no-print-directory", "doctor"], root, clean_env())
    for target in sorted(kit_only_targets(os.path.join(root, "Makefile"))):
        if re.search(r"\bmake\s+%s\b" % re.escape(target), doctor.stdout):
            problems.append("make doctor in the student kit names `make %s`, which it refuses" % target)
    return problems


def fail(message):
    print("FAILED: " + message)
    return 1


def run(argv, cwd, env=None):
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    print("$ %s  (exit %d)\n%s" % (" ".join(argv), proc.returncode, proc.stdout[-6000:]))
    return proc


def clean_env():
    """The environment without an outer make's variables and the salt, and without the suite's folder for
    compiled Python (a kit unpacked in a new folder each time would leave its modules there)."""
    return {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "KIT_GRADER_SALT", "PYTHONPYCACHEPREFIX")}


def grading_env():
    """clean_env() with this kit's build cache (gradelib.build.cache_dir) for the unpacked kit's grader. Its
    builds are keyed on its own files, byte for byte: a lab whose files are the kit's finds the kit's
    build of them, or keeps its own for the kit's tests, and one that differs is built there.
    KIT_BUILD_CACHE=0 stays off."""
    return dict(clean_env(), **{build.CACHE_ENV: build.cache_dir() or "0"})


def build_common_objects(root):
    """The objects every program of the kit links (common/src) and the GPU probe's own, built by the student
    kit's make rules with make -j: what make doctor builds first, one nvcc after another, before it links
    the probe (it then finds them up to date). Each lab's harness objects are left to make grade, which
    builds them itself as in any fresh kit."""
    return run(["make", "--no-print-directory", "-j%d" % (os.cpu_count() or 1), "-f", "common/probe/Makefile",
                "kit-objects"], root, clean_env())


def student(tmp):
    archive = os.path.join(tmp, "kit.tar.gz")
    if run([sys.executable, os.path.join(KIT, "tools", "dist.py"), "student", archive], KIT).returncode != 0:
        return fail("make dist's script failed")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        for member in tar.getmembers():
            if not (member.isfile() or member.isdir()) or member.name.startswith(("/", "..")):
                return fail("unexpected member %s" % member.name)
        tar.extractall(tmp)
    root = os.path.join(tmp, dist.TOP)
    held_back = [n for n in names if "/solutions/" in n or "/grader/tests/" in n or n.endswith(
        ("salt.txt", "selftest.py")) or "/tests/" in n]
    if held_back:
        return fail("the student kit holds what it must not: %s" % held_back[:5])
    with open(os.path.join(root, "README.md")) as a, open(os.path.join(KIT, dist.STUDENT_README)) as b:
        if a.read() != b.read():
            return fail("the student kit's README is not the student's")
    for lab in registry.all_labs().values():
        if not os.path.isdir(os.path.join(root, "labs", lab.name)):
            return fail("lab %s is missing" % lab.name)
    problems = student_kit_problems(root, tmp)  # its make commands include make clean: builds come after
    if build_common_objects(root).returncode != 0:
        problems.append("common/src and the GPU probe do not build in the student kit (make -j above)")
    problems += doctor_problems(root)
    if problems:
        return fail("the student kit is not as it should be:\n  " + "\n  ".join(problems))

    graded = run(["make", "grade"], root, grading_env())
    if graded.returncode == 0:
        return fail("make grade gave the starters full marks in the student kit")
    return check_grade_output(graded.stdout)


def check_grade_output(text):
    labs = list(registry.all_labs().values())
    built = [l for l in text.splitlines() if l.strip().startswith("compiles") and " OK " in l]
    if len(built) != len(labs):
        return fail("%d of %d labs built in the student kit" % (len(built), len(labs)))
    if gpu_mod.detect().available and "NOT RUN" in text:
        return fail("a GPU is here but the runtime checks did not run in the student kit")
    print("student kit: every lab builds and is graded (%s)"
          % ("runtime checks ran" if gpu_mod.detect().available else "no GPU: runtime checks not run"))
    return 0


def gradescope(tmp):
    lab = registry.resolve("01")
    made = run([sys.executable, os.path.join(KIT, "tools", "dist.py"), "gradescope", "01", tmp], KIT)
    if made.returncode != 0:
        return fail("make gradescope's script failed")
    autograder = os.path.join(tmp, "autograder")
    with zipfile.ZipFile(os.path.join(tmp, "gradescope-%s.zip" % lab.name)) as z:
        names = z.namelist()
        if not {"setup.sh", "run_autograder"} <= set(names):
            return fail("the zip lacks setup.sh or run_autograder at its top")
        if any(n.startswith("kit/solutions/") for n in names):
            return fail("the autograder zip holds the solutions")
        z.extractall(os.path.join(autograder, "source"))
    for name in names:  # zipfile does not restore permissions
        info = z.getinfo(name)
        os.chmod(os.path.join(autograder, "source", name), (info.external_attr >> 16) & 0o777 or 0o644)
    submission = os.path.join(autograder, "submission")
    os.makedirs(submission)
    shutil.copy(os.path.join(KIT, "solutions", lab.name, "divergent_counter.cu"), submission)
    env = dict(grading_env(), AUTOGRADER_ROOT=autograder)
    if not gpu_mod.detect().available:
        # No GPU here: the autograder's probe, built first in its tree, would find none either, and what
        # is checked below is the same. The probe building in a shipped tree is the student kit's test.
        env["KIT_NO_GPU"] = "1"
    if run(["bash", os.path.join(autograder, "source", "run_autograder")], tmp, env).returncode != 0:
        return fail("run_autograder failed")
    with open(os.path.join(autograder, "results", "results.json")) as f:
        results = json.load(f)
    problems = report.gradescope_problems(results)
    if problems or not results.get("tests"):
        return fail("results.json is not Gradescope's, or has no tests: %s" % (problems or sorted(results)))
    # Without a GPU too: what ran (the build, the static checks) gives the reference solution every point.
    lost = [t["name"] for t in results["tests"]
            if t["score"] != t["max_score"] and not t.get("output", "").startswith("NOT RUN")]
    if lost:
        return fail("the reference solution lost points through the autograder on: %s" % ", ".join(lost))
    if gpu_mod.detect().available and results["score"] != results["max_score"]:
        return fail("the reference solution scored %s of %s through the autograder"
                    % (results["score"], results["max_score"]))
    print("gradescope: results.json valid, score %s of %s" % (results["score"], results["max_score"]))
    return without_user_namespaces(autograder, tmp, env, results)


# Docker's default seccomp profile (Gradescope's and most course containers) refuses user namespaces.
# A user namespace whose limit of nested ones is 0 refuses them the same way, without root.
NO_NAMESPACES = "echo 0 > /proc/sys/user/max_user_namespaces && exec bash \"$0\""


def without_user_namespaces(autograder, tmp, env, with_sandbox):
    """run_autograder where no sandbox can be made: the same scores, and results.json says the container
    was the isolation boundary."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--user", "--map-root-user", "sh", "-c", NO_NAMESPACES.replace('exec bash "$0"', "unshare --user true")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode == 0:
        print("gradescope without user namespaces: not run (this machine cannot refuse them to a test)")
        return 0
    os.remove(os.path.join(autograder, "results", "results.json"))
    ran = run(["unshare", "--user", "--map-root-user", "sh", "-c", NO_NAMESPACES,
               os.path.join(autograder, "source", "run_autograder")], tmp, env)
    if ran.returncode != 0:
        return fail("run_autograder failed without user namespaces")
    with open(os.path.join(autograder, "results", "results.json")) as f:
        results = json.load(f)
    if "isolation boundary" not in results.get("output", "") or "sandbox: OFF" not in results["output"]:
        return fail("without user namespaces, results.json does not say the sandbox was off: %r"
                    % results.get("output"))
    if results["score"] != with_sandbox["score"] or report.gradescope_problems(results):
        return fail("without user namespaces the autograder scored %s (with the sandbox: %s)"
                    % (results["score"], with_sandbox["score"]))
    print("gradescope without user namespaces: graded, and results.json says the container is the boundary")
    return 0


def main(argv):
    if argv not in (["student"], ["gradescope"]):
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        return student(tmp) if argv[0] == "student" else gradescope(tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
