#!/usr/bin/env python3
"""The kit's tests of itself: does the grader say what it must about the kit's own submissions?

  selftest.py manifest                         the test list, for tests/CMakeLists.txt
  selftest.py static-pass LAB                  the solution passes every build and static check
  selftest.py starter LAB                      the starter compiles and fails the static checks it must
  selftest.py harness-options LAB              every case the kit sends the harness is one its built
                                               reference accepts, by the program's own --describe
  selftest.py full-marks LAB [--seeds N]       the solution scores full marks, N seeds in a row (GPU)
  selftest.py alternative LAB CASE             an alternative solution scores full marks (GPU)
  (with KIT_SOLUTION_SEEDS=N in the environment, both grade seeds 1..N)
  selftest.py not-full-marks LAB               the starter runs on the GPU and scores less (GPU)
  selftest.py caught LAB CASE                  the check named in the case's note.txt fails (graded with
                                               grade.py --check: that check, what it depends on, its cases)
  selftest.py hostile LAB                      batch-grade solutions/LAB/hostile and every attack of
                                               solutions/hostile/attacks under a salt, with a bystander: every
                                               verdict as its note.txt says (every attack refused by the check
                                               of the student's objects), and no breach of the sandbox's
                                               contract (grader/README.md, "Trust the result") (GPU)
  selftest.py hostile LAB --no-object-check    the same with that check off, so that the attacks run and the
                                               sandbox alone must hold (GPU)
  selftest.py hostile LAB --no-sandbox --no-object-check
                                               the same without the sandbox either, on a throwaway copy of the
                                               kit: passes only if breaches are found (the test can fail)

Exit status 0 passed, 1 failed, 77 not run (it needs a GPU and there is none).
Each test runs the grader as a user would (grade.py --json) and reads its JSON document.
"""
import ctypes
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import checks as chk  # noqa: E402
from gradelib import exits, standard_checks  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import paths  # noqa: E402
from gradelib import batch, build, context, harness, process, sandbox, sheets, starters  # noqa: E402

NOT_RUN = exits.NOT_RUN
# How many seeds the solution and alternative tests grade (full-marks, alternative), when set:
# KIT_SOLUTION_SEEDS=10 make test, before a release.
SEEDS_ENV = "KIT_SOLUTION_SEEDS"
GRADE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grade.py")


def grade(lab, submission, seed=1, no_gpu=False, check=None):
    """Run grade.py (with check: grade.py --check, that check and what it depends on); return (exit
    status, {check name: check dict}, document)."""
    env = dict(os.environ)
    if no_gpu:
        env["KIT_NO_GPU"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "grade.json")
        proc = subprocess.run([sys.executable, GRADE, "--lab", lab.name, "--submission", submission,
                               "--seed", str(seed), "--json", out]
                              + (["--check", check] if check else []) + sandbox.trusted_code_option(),
                              env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        print(proc.stdout)
        with open(out) as f:
            doc = json.load(f)
    checks = {c["name"]: c for c in doc["labs"][0]["checks"]}
    return proc.returncode, checks, doc


def lost_checks(checks):
    """What a grading's checks (their dicts, as grade.py --json and the batch's records write them) lost:
    "'name' score/points: its message", the message on one line and cut short, for each that lost points."""
    lost = []
    for c in checks:
        if c["score"] < c["points"]:
            words = " ".join((c.get("message") or "").split())
            if len(words) > 300:
                words = words[:300] + " ..."
            lost.append("'%s' %g/%g" % (c["name"], c["score"], c["points"]) + (": " + words if words else ""))
    return lost


def lost_words(record):
    """": lost ..." for a batch record whose checks lost points (lost_checks), else ""."""
    lost = lost_checks(record.get("report", {}).get("checks", []))
    return ": lost " + "; ".join(lost) if lost else ""


def fail(message):
    print("SELFTEST FAILED: " + message)
    return 1


def starter_dir(lab):
    return starters.pristine(lab.name)


def static_pass(lab):
    _, checks, _ = grade(lab, paths.solution_dir(lab.name), no_gpu=True)
    bad = [n for n, c in checks.items() if c["kind"] != chk.RUNTIME and c["status"] != chk.PASSED]
    return fail("build/static checks did not pass: %s" % bad) if bad else 0


def starter(lab):
    _, checks, _ = grade(lab, starter_dir(lab), no_gpu=True)
    if checks[standard_checks.COMPILES]["status"] != chk.PASSED:
        return fail("the starter does not compile")
    should_fail = [n for n in lab.starter_must_fail if checks[n]["status"] != chk.FAILED]
    return fail("the starter passes checks it must fail: %s" % should_fail) if should_fail else 0


OPTION_SEEDS = range(50)  # case draws checked against the harness's description


def harness_options(lab):
    """The cases the grader draws (seeds OPTION_SEEDS, with the salt a class has none of), the recorded
    case and the memcheck case pass only options the built reference declares, with values it accepts
    (harness.describe: the C table is the only place the options are written)."""
    with tempfile.TemporaryDirectory() as tmp:
        program, made = harness.build_program(lab, paths.solution_dir(lab.name), tmp)
        if program is None:
            return fail("the solution does not build:\n" + made.output[-3000:])
        described = harness.describe(program)
    cases = [("the recorded case", lab.recorded_case), ("the memcheck case", lab.memcheck_case)]
    for seed in OPTION_SEEDS:
        cases += [("seed %d, case %d" % (seed, k), c) for k, c in enumerate(lab.make_cases(context.case_rng(seed, lab.name, salt="")))]
    problems = ["%s %s: %s" % (where, case, "; ".join(p)) for where, case in cases
                for p in [lab.harness.case_problems(described, case)] if p]
    for line in problems[:10]:
        print(line)
    print("%d cases checked against %d options: %s" % (len(cases), len(described), ", ".join(sorted(described))))
    return fail("%d cases the harness would refuse" % len(problems)) if problems else 0


def full_marks(lab, seeds, submission=None):
    for seed in range(1, seeds + 1):
        status, checks, _ = grade(lab, submission or paths.solution_dir(lab.name), seed=seed)
        if status == NOT_RUN:
            return NOT_RUN
        if status != 0:
            return fail("seed %d: the solution lost points on %s" % (seed, "; ".join(lost_checks(checks.values()))))
    return 0


def not_full_marks(lab):
    _, checks, doc = grade(lab, starter_dir(lab))
    if any(c["skipped_no_gpu"] for c in checks.values()):
        return NOT_RUN
    if doc["score"] >= doc["max_score"]:
        return fail("the starter scored full marks")
    if checks[standard_checks.RUNS_CLEANLY]["status"] != chk.PASSED:
        return fail("the starter does not run cleanly: it should run and lose points on results")
    return 0


def read_note(case_dir):
    with open(os.path.join(case_dir, "note.txt")) as f:
        line = f.readline().strip()
    name, sep, why = line.partition(":")
    if not sep or not why.strip():
        raise ValueError("%s/note.txt: the first line must be 'check name: what it catches'" % case_dir)
    return name.strip(), why.strip()


def caught(lab, case):
    case_dir = os.path.join(paths.incorrect_dir(lab.name), case)
    name, why = read_note(case_dir)
    check = lab.check_named(name)
    if check is None:
        return fail("note.txt names no check of %s: %r" % (lab.name, name))
    # The check and what it depends on, on the cases it reads (grade.py --check): a whole grade would
    # run the rest of the rubric too, which this test does not look at.
    status, checks, document = grade(lab, case_dir, no_gpu=(check.kind != chk.RUNTIME), check=name)
    result = checks[name]
    if result["skipped_no_gpu"]:
        return NOT_RUN
    if result["status"] != chk.FAILED:
        return fail("'%s' should reject this submission (%s) but was %s" % (name, why, result["status"]))
    print("rejected by '%s', as its note says: %s" % (name, why))
    record_verdict(lab, case, name, result["message"], document)
    return 0


# Where `caught` keeps what the grader said (KIT_VERDICTS_OUT=DIR: DIR/NN-name/CASE.json); the handouts'
# "Common mistakes" tables quote these words (tools/quoted_figures.py, blocks mistakes-NN).
VERDICTS_ENV = "KIT_VERDICTS_OUT"


def record_verdict(lab, case, check, message, document):
    out = os.environ.get(VERDICTS_ENV)
    if not out:
        return
    folder = os.path.join(out, lab.name)
    os.makedirs(folder, exist_ok=True)
    gpu_name = ((document.get("gpu") or {}).get("device") or {}).get("name")
    with open(os.path.join(folder, case + ".json"), "w") as f:
        json.dump({"check": check, "message": message, "gpu": gpu_name}, f, indent=1, sort_keys=True)
        f.write("\n")


UNCHECKED = "without the object check:"  # a note's line: the verdicts of a case the check refuses, when it runs


def read_hostile_note(case_dir, objects_checked=True):
    """(allowed verdicts, check that must fail or None) from a hostile case's note.txt; objects_checked
    False: those of its line UNCHECKED where it has one (a case the check of the objects refuses, whose
    code then runs), with no check named."""
    with open(os.path.join(case_dir, "note.txt")) as f:
        lines = [l.strip() for l in f if l.strip()]
    unchecked = [l[len(UNCHECKED):].strip().split("|") for l in lines[1:] if l.startswith(UNCHECKED)]
    if unchecked and not objects_checked:
        return unchecked[0], None
    verdicts = lines[0].split(":", 1)[0].split("|")
    failed = [l.split(":", 1)[1].strip() for l in lines[1:] if l.startswith("failed check:")]
    return verdicts, (failed[0] if failed else None)


# The hostile test (grader/README.md, "Trust the result"): a class of the lab's hostile submissions, every attack of
# solutions/hostile/attacks/ put in front of the lab's starter, and a bystander (the reference solution).
ATTACKS_DIR = os.path.join(paths.HOSTILE_DIR, "attacks")
ATTACK_PRELUDE = os.path.join(ATTACKS_DIR, "prelude.h")
IMPORTS_DIR = os.path.join(paths.HOSTILE_DIR, "imports")
BYSTANDER = "bystander-solution"
LINGER = 6             # seconds to wait after a batch: forges-records-later acts 3 s after its run


def attack_source(lab, kind, port):
    """The lab's starter .cu file with the prelude and one attack in front of it; port: where the test
    listens (opens-network connects there)."""
    first_cu = next(f for f in build.lab_vars(lab.name)["student_files"] if f.endswith(".cu"))
    texts = ["#define HOSTILE_PORT %d" % port]
    for path in (ATTACK_PRELUDE, os.path.join(ATTACKS_DIR, kind, "attack.c"),
                 os.path.join(starter_dir(lab), first_cu)):
        with open(path) as f:
            texts.append(f.read())
    return first_cu, "\n".join(texts)


def hostile_class(lab, class_dir, port, objects_checked=True):
    """Fill class_dir with the lab's hostile submissions, one submission per attack (its starter with the
    attack in front) and the bystander; port: the listener's. Returns {id: (allowed verdicts, check that
    must fail or None)}. objects_checked: the grader checks the student's objects (gradelib.objects), which
    refuses every attack before it runs (each runs code before main), and the class has each case of
    solutions/hostile/imports/ in front of the starter too; without, each attack runs and gets what its
    note says."""
    expected = {}
    lab_cases = paths.hostile_dir(lab.name)
    for case in paths.case_folders(lab_cases):
        shutil.copytree(os.path.join(lab_cases, case), os.path.join(class_dir, case))
        expected[case] = read_hostile_note(os.path.join(lab_cases, case), objects_checked)
    for kind in paths.case_folders(ATTACKS_DIR):
        folder = os.path.join(class_dir, "attack-" + kind)
        os.makedirs(folder)
        for name in build.lab_vars(lab.name)["student_files"]:
            shutil.copyfile(os.path.join(starter_dir(lab), name), os.path.join(folder, name))
        name, text = attack_source(lab, kind, port)
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
        expected["attack-" + kind] = ((["refused code"], "compiles") if objects_checked
                                      else read_hostile_note(os.path.join(ATTACKS_DIR, kind)))
    for kind in paths.case_folders(IMPORTS_DIR) if objects_checked else []:
        folder = os.path.join(class_dir, "import-" + kind)
        os.makedirs(folder)
        for name in build.lab_vars(lab.name)["student_files"]:
            shutil.copyfile(os.path.join(starter_dir(lab), name), os.path.join(folder, name))
        name = next(f for f in build.lab_vars(lab.name)["student_files"] if f.endswith(".cu"))
        with open(os.path.join(IMPORTS_DIR, kind, "code.c")) as code, open(os.path.join(folder, name)) as starter:
            text = code.read() + "\n" + starter.read()
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
        expected["import-" + kind] = (["refused code"], "compiles")
    bystander_class(lab, class_dir)
    return expected


def bystander_class(lab, class_dir):
    folder = os.path.join(class_dir, BYSTANDER)
    os.makedirs(folder)
    for name in build.lab_vars(lab.name)["student_files"]:
        shutil.copyfile(os.path.join(paths.solution_dir(lab.name), name), os.path.join(folder, name))


def tree_digest(top, skip_dirs=()):
    """A digest of every file's path and bytes below top (batch.hash_tree)."""
    digest = hashlib.sha256()
    batch.hash_tree(digest, top, skip_dirs)
    return digest.hexdigest()


def kit_digest(lab):
    """The kit's files and the kit-owned objects the lab's builds link (build/kit/sm_ARCH/: the common ones
    and the lab's); the rest of build/ is left out: work folders and other labs' builds come and go there."""
    objects = build.kit_objects_dir(build.cuda_arch())
    common = [os.path.join(objects, f) for f in sorted(os.listdir(objects)) if f.endswith(".o")]
    digest = tree_digest(paths.KIT_ROOT, skip_dirs=(os.path.basename(paths.BUILD_ROOT), "__pycache__")) + \
        tree_digest(os.path.join(objects, lab.name))
    for path in common:
        with open(path, "rb") as f:
            digest += hashlib.sha256(f.read()).hexdigest()
    return digest


PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def adopt_orphans():
    """Make this process the subreaper of all it starts: a process a batch leaves behind, detached or
    not (setsid, a double fork), stays among its descendants, where leftover_processes finds it, and
    nothing else on the machine (another test's runs, side by side) is taken for it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def leftover_processes():
    """[(pid, what)] of this process's descendants that still run (see adopt_orphans); zombies, which
    run nothing, are not counted."""
    table = process.processes()
    me = os.getpid()
    found = []
    for pid, (ppid, _, state, comm) in table.items():
        if state == "Z" or pid == me:
            continue  # a zombie runs nothing (a machine whose init does not reap keeps them)
        seen = set()
        while ppid not in (me, 0) and ppid in table and ppid not in seen:
            seen.add(ppid)
            ppid = table[ppid][0]
        if ppid == me:
            found.append((pid, "%s (pid %d)" % (comm, pid)))
    return found


def files_named(top, prefix):
    found = []
    for folder, _, files in os.walk(top):
        found += [os.path.join(folder, f) for f in files if f.startswith(prefix)]
    return found


def files_containing(top, needle):
    found = []
    for folder, _, files in os.walk(top):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                if needle.encode() in f.read():
                    found.append(os.path.relpath(os.path.join(folder, name), top))
    return found


class Listener:
    """A TCP listener on a free port of 127.0.0.1 (self.port) that counts the connections it gets: tests
    side by side each have their own."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def stop(self):
        self.running = False
        self.thread.join()
        self.sock.close()
        return self.connections


def run_batch(lab, class_dir, out, salt, no_sandbox, objects_checked=True):
    argv = [sys.executable, GRADE, "batch", class_dir, "--lab", lab.name, "--out", out,
            "--seed", "1"] + (["--no-sandbox"] if no_sandbox else [])
    env = dict(os.environ, KIT_GRADER_SALT=salt)
    if not objects_checked:
        env[standard_checks.OBJECT_CHECK_ENV] = "off"
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    print(proc.stdout)
    records = {}
    for name in os.listdir(os.path.join(out, "records")) if os.path.isdir(os.path.join(out, "records")) else []:
        try:
            with open(os.path.join(out, "records", name)) as f:
                records[name[:-len(".json")]] = json.load(f)
        except ValueError:
            records[name[:-len(".json")]] = {"verdict": "unreadable record", "score": -1, "max_score": 0}
    return proc.returncode, records


def breaches_of_a_class(lab, no_sandbox, objects_checked=True):
    """Grade the hostile class, then the bystander alone; return (breaches of the contract, wrong verdicts).
    A breach is a line of grader/README.md's "Trust the result" that did not hold."""
    salt = "hostile-salt-" + secrets.token_hex(8)
    breaches, wrong = [], []
    with tempfile.TemporaryDirectory() as tmp:
        class_dir, out, after_class, after_out = (os.path.join(tmp, d) for d in ("class", "out", "after", "after-out"))
        os.makedirs(class_dir)
        listener = Listener()
        expected = hostile_class(lab, class_dir, listener.port, objects_checked)
        print("%d submissions: %s" % (len(expected) + 1, ", ".join(sorted(expected) + [BYSTANDER])))
        build.make_kit_objects(lab.name, build.cuda_arch())  # before the digest: a first build makes them
        kit_before, class_before = kit_digest(lab), tree_digest(class_dir)
        status, records = run_batch(lab, class_dir, out, salt, no_sandbox, objects_checked)
        out_after_batch = tree_digest(out)
        time.sleep(LINGER)
        left = leftover_processes()
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if left:
            breaches.append("%d process(es) of the class still running %d s after the batch: %s"
                            % (len(left), LINGER, ", ".join(w for _, w in left[:3])))
        if tree_digest(out) != out_after_batch or files_containing(out, "FORGED"):
            breaches.append("the batch's records were changed after it ended: %s"
                            % ", ".join(files_containing(out, "FORGED")[:3]))
        if files_containing(out, salt):
            breaches.append("the salt is in the batch's output: %s" % ", ".join(files_containing(out, salt)[:3]))
        connections = listener.stop()
        if connections:
            breaches.append("%d connection(s) reached 127.0.0.1:%d" % (connections, listener.port))
        if kit_digest(lab) != kit_before:
            breaches.append("the kit's files changed (sources or the kit-owned objects in build/kit)")
        if tree_digest(class_dir) != class_before:
            breaches.append("the class folder changed")
        shared_tmp = tempfile.gettempdir()
        fills = files_named(paths.KIT_ROOT, "hostile-fill") + files_named(tmp, "hostile-fill") + [
            os.path.join(shared_tmp, f) for f in os.listdir(shared_tmp) if f.startswith("hostile-fill")]
        if fills:
            breaches.append("files written outside a run's scratch: %s" % ", ".join(fills[:3]))
            for path in fills:
                os.remove(path)
        if status != 0:
            breaches.append("the batch did not complete (exit status %d)" % status)
        bystander = records.get(BYSTANDER, {})
        if bystander.get("verdict") != sheets.FULL_MARKS:
            breaches.append("the bystander (the reference solution) got '%s' beside the hostile class%s"
                            % (bystander.get("verdict"), lost_words(bystander)))
        os.makedirs(after_class)
        bystander_class(lab, after_class)
        _, after = run_batch(lab, after_class, after_out, salt, no_sandbox, objects_checked)
        if after.get(BYSTANDER, {}).get("verdict") != sheets.FULL_MARKS:
            breaches.append("the bystander, graded after the hostile class, got '%s'%s"
                            % (after.get(BYSTANDER, {}).get("verdict"), lost_words(after.get(BYSTANDER, {}))))
        for case, (verdicts, must_fail) in sorted(expected.items()):
            record = records.get(case)
            checks = {c["name"]: c for c in (record or {}).get("report", {}).get("checks", [])}
            if record is None:
                wrong.append("%s: no record" % case)
            elif record["verdict"] not in verdicts:
                wrong.append("%s: verdict '%s', expected %s" % (case, record["verdict"], " or ".join(verdicts)))
            elif record["score"] >= record["max_score"]:
                wrong.append("%s: full marks" % case)
            elif must_fail and checks.get(must_fail, {}).get("status") != chk.FAILED:
                wrong.append("%s: '%s' did not fail" % (case, must_fail))
            else:
                print("%-32s %s (%g/%g), as its note says" % (case, record["verdict"], record["score"],
                                                               record["max_score"]))
    return breaches, wrong


def hostile(lab, expect_breach=False, objects_checked=True):
    """The hostile class, graded as a batch in the sandbox: every verdict as its note says and no breach
    of the contract. expect_breach (--no-sandbox): the same class without the sandbox, on a copy of the
    kit, must show breaches: the test can tell a contract that holds from one that does not.
    objects_checked=False (--no-object-check): the attacks are not refused and run, so that the sandbox
    itself is tested (the check of the student's objects refuses them first in a real grading)."""
    if not expect_breach and not sandbox.works()[0]:
        print("no sandbox can be made here (%s): the contract it enforces cannot be tested" % sandbox.works()[1])
        return NOT_RUN
    adopt_orphans()
    breaches, wrong = breaches_of_a_class(lab, no_sandbox=expect_breach, objects_checked=objects_checked)
    for line in breaches:
        print("BREACH: " + line)
    if expect_breach:
        return 0 if breaches else fail("without the sandbox, the hostile class showed no breach: the test cannot "
                                       "tell a contract that holds from one that does not")
    problems = breaches + wrong
    return fail("; ".join(problems)) if problems else 0


def manifest():
    """One line per test: name|labels|selftest arguments, separated by '|'."""
    lines = []
    for lab in registry.all_labs().values():
        n = lab.number
        lines.append("%s-solution-static|cpu|static-pass|%s" % (n, lab.name))
        lines.append("%s-starter-static|cpu|starter|%s" % (n, lab.name))
        lines.append("%s-harness-options|cpu|harness-options|%s" % (n, lab.name))
        lines.append("%s-solution-full-marks|gpu|full-marks|%s|--seeds|3" % (n, lab.name))
        lines.append("%s-starter-not-full-marks|gpu|not-full-marks|%s" % (n, lab.name))
        alternative = paths.alternative_dir(lab.name)
        for case in paths.case_folders(alternative):
            lines.append("%s-alternative-%s|gpu|alternative|%s|%s" % (n, case, lab.name, case))
        incorrect = paths.incorrect_dir(lab.name)
        for case in paths.case_folders(incorrect):
            name, _ = read_note(os.path.join(incorrect, case))
            label = "gpu" if lab.check_named(name).kind == chk.RUNTIME else "cpu"
            lines.append("%s-incorrect-%s|%s|caught|%s|%s" % (n, case, label, lab.name, case))
        lines.append("%s-hostile-batch|gpu|hostile|%s" % (n, lab.name))
    return "\n".join(lines)


# The modes that need a GPU: without one they are not run, at once (building and grading first would
# show nothing the cpu tests do not).
GPU_MODES = ("full-marks", "alternative", "not-full-marks", "hostile")


def needs_gpu(mode, lab, rest):
    if mode == "caught":
        name, _ = read_note(os.path.join(paths.incorrect_dir(lab.name), rest[1]))
        check = lab.check_named(name)
        return check is not None and check.kind == chk.RUNTIME
    return mode in GPU_MODES


def main(argv):
    if not argv:
        sys.exit(__doc__)
    mode, rest = argv[0], argv[1:]
    if mode == "manifest":
        print(manifest())
        return 0
    lab = registry.resolve(rest[0])
    if needs_gpu(mode, lab, rest):
        from gradelib import gpu as gpu_mod
        found = gpu_mod.detect()
        if not found.available:
            print("not run: this test needs a GPU that can run dynamic parallelism (%s)" % found.reason.splitlines()[0])
            return NOT_RUN
    if mode == "static-pass":
        return static_pass(lab)
    if mode == "starter":
        return starter(lab)
    if mode == "harness-options":
        return harness_options(lab)
    if mode == "full-marks":
        seeds = int(rest[2]) if len(rest) > 2 and rest[1] == "--seeds" else 1
        return full_marks(lab, int(os.environ.get(SEEDS_ENV, seeds)))
    if mode == "alternative":
        return full_marks(lab, int(os.environ.get(SEEDS_ENV, 1)), os.path.join(paths.alternative_dir(lab.name), rest[1]))
    if mode == "not-full-marks":
        return not_full_marks(lab)
    if mode == "caught":
        return caught(lab, rest[1])
    if mode == "hostile":
        return hostile(lab, expect_breach="--no-sandbox" in rest, objects_checked="--no-object-check" not in rest)
    sys.exit("selftest.py: unknown mode %r\n%s" % (mode, __doc__))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
