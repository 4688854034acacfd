#!/usr/bin/env python3
"""A class graded through grader/slurm/grade-class.sh on a throwaway one-node Slurm cluster.

The test starts the cluster itself, with no systemd, in a temporary folder: munged with a key, socket,
pid and log files of its own, then slurmctld -D and slurmd -D with a slurm.conf there (this host's
short name as the one node and the controller, free ports, no accounting, the munge socket named by
AuthInfo). Once `sinfo` shows the node idle, it grades a class of four Lab 01 submissions made from the
kit's own files (the reference solution, the known-wrong unchecked-launch, whose missing check a
static check catches, the pristine starter, and a file that does not compile) through grade-class.sh
in 2 shards (GRADE_SBATCH_GPU empty, a fixed SEED), waits for the merge job, and checks:
  - every shard's log is in OUT/logs/, and the shards graded disjoint parts of the class, all of it;
  - OUT/merged/scores.csv equals, row for row, the scores.csv of `grade.py batch` of the same class
    with the same seed run here directly (scores.csv has no time or path column: id, verdict, score,
    max_score and a column per check, so every cell is compared);
  - the merge job exited as the direct batch did (77 where no GPU ran the runtime checks).
Without a GPU the runtime checks are reported as not run in both sheets alike: what is tested is the
script's sharding and merge.

Whatever happens, every daemon it started is stopped, and every process left with this cluster's
slurm.conf in its environment (a job's) is killed, before it exits; a leftover is a failure.
Exits 77 (not run), with one line saying why, without slurmctld, slurmd, the Slurm client commands or
munged (apt-get install slurmctld slurmd slurm-client munge), when not root (slurmd runs the jobs),
or where no grading sandbox can be made (grade-class.sh grades with the sandbox).
"""
import csv
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))

from gradelib import sandbox, starters  # noqa: E402

NOT_RUN = 77
LAB = "01-divergent-counter"
STUDENT_FILE = "divergent_counter.cu"
WRONG = "unchecked-launch"  # its note: 'launch errors checked' (a static check) fails
SEED = "271828"
SHARDS = 2
CLUSTER_UP_S = 60
GRADED_S = 15 * 60
SCRIPT = os.path.join(KIT, "grader", "slurm", "grade-class.sh")
# The daemons live in sbin, which a user's PATH may not name.
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin", "/usr/local/sbin"])
NEEDED = (("slurmctld", "slurmctld"), ("slurmd", "slurmd"), ("sbatch", "slurm-client"), ("sinfo", "slurm-client"),
          ("squeue", "slurm-client"), ("scancel", "slurm-client"), ("scontrol", "slurm-client"), ("munged", "munge"))


def _die_with_parent():
    """In a daemon's process before it runs: SIGTERM when the test dies, even of a SIGKILL (a CTest
    timeout), so that a daemon never outlives it (PR_SET_PDEATHSIG; kept across exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


class Failed(Exception):
    pass


class Stopped(BaseException):
    """SIGTERM or SIGHUP (CTest's timeout, a closed terminal): the cluster is still stopped."""


def _stop_signal(signum, frame):
    raise Stopped("signal %d" % signum)


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as err:
        return "(%s)\n" % err


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged, slurmctld and slurmd in folder, started by start() and all stopped by stop()."""

    def __init__(self, folder, programs):
        self.dir = folder
        self.programs = programs
        self.host = socket.gethostname().split(".")[0]  # hostname -s
        self.conf = os.path.join(folder, "slurm.conf")
        self.munge_dir = os.path.join(folder, "munge")
        self.munge_socket = os.path.join(self.munge_dir, "munge.socket")
        self.env = dict(os.environ, SLURM_CONF=self.conf, PATH=SEARCH_PATH)
        self.daemons = []  # (name, Popen), in the order started

    def log(self, name):
        return os.path.join(self.dir, name + ".log")

    def _start(self, name, argv):
        out = open(os.path.join(self.dir, name + ".out"), "wb")
        try:
            proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            out.close()
        self.daemons.append((name, proc))
        return proc

    def _died(self):
        for name, proc in self.daemons:
            if proc.poll() is not None:
                raise Failed("%s exited with %d while the cluster started:\n%s%s" % (
                    name, proc.returncode, tail(os.path.join(self.dir, name + ".out")), tail(self.log(name))))

    def slurm(self, *argv, check=True):
        proc = subprocess.run([self.programs[argv[0]]] + list(argv[1:]), env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=60)
        if check and proc.returncode != 0:
            raise Failed("%s exited with %d:\n%s" % (" ".join(argv), proc.returncode, proc.stdout))
        return proc.stdout

    def start(self):
        # munged refuses a socket in a folder not every user may pass through, and a key or folders that
        # others may write: 0755 folders, a 0600 key.
        os.chmod(self.dir, 0o755)
        os.mkdir(self.munge_dir, 0o755)
        os.chmod(self.munge_dir, 0o755)
        key = os.path.join(self.munge_dir, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))
        self._start("munged", [self.programs["munged"], "--foreground", "--key-file=" + key,
                               "--socket=" + self.munge_socket,
                               "--pid-file=" + os.path.join(self.munge_dir, "munged.pid"),
                               "--log-file=" + self.log("munged"),
                               "--seed-file=" + os.path.join(self.munge_dir, "munged.seed")])
        deadline = time.time() + 20
        while not os.path.exists(self.munge_socket):
            self._died()
            if time.time() > deadline:
                raise Failed("munged made no socket in 20 s:\n" + tail(self.log("munged")))
            time.sleep(0.1)
        for sub in ("state", "spool"):
            os.mkdir(os.path.join(self.dir, sub), 0o755)
        ctld_port, d_port = free_port(), free_port()
        while d_port == ctld_port:
            d_port = free_port()
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=kit-test",
                "SlurmctldHost=%s(127.0.0.1)" % self.host,
                "SlurmctldPort=%d" % ctld_port,
                "SlurmdPort=%d" % d_port,
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "AuthInfo=socket=" + self.munge_socket,
                "StateSaveLocation=" + os.path.join(self.dir, "state"),
                "SlurmdSpoolDir=" + os.path.join(self.dir, "spool"),
                "SlurmctldPidFile=" + os.path.join(self.dir, "slurmctld.pid"),
                "SlurmdPidFile=" + os.path.join(self.dir, "slurmd.pid"),
                "SlurmctldLogFile=" + self.log("slurmctld"),
                "SlurmdLogFile=" + self.log("slurmd"),
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_CPU",
                "MpiDefault=none",
                "MailProg=/bin/true",
                "ReturnToService=2",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=256 State=UNKNOWN"
                % (self.host, os.cpu_count() or 1),
                "PartitionName=kit Nodes=%s Default=YES MaxTime=INFINITE State=UP" % self.host,
            ]) + "\n")
        self._start("slurmctld", [self.programs["slurmctld"], "-D", "-f", self.conf])
        self._start("slurmd", [self.programs["slurmd"], "-D", "-f", self.conf, "-N", self.host])
        deadline = time.time() + CLUSTER_UP_S
        state = ""
        while True:
            self._died()
            proc = subprocess.run([self.programs["sinfo"], "-h", "-N", "-n", self.host, "-o", "%T"], env=self.env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, timeout=60)
            state = proc.stdout.strip()
            if proc.returncode == 0 and state == "idle":
                return
            if time.time() > deadline:
                raise Failed("the node %s is not idle after %d s (sinfo: %r)\nslurmctld:\n%s\nslurmd:\n%s"
                             % (self.host, CLUSTER_UP_S, state, tail(self.log("slurmctld")), tail(self.log("slurmd"))))
            time.sleep(0.5)

    def cluster_processes(self):
        """Pids of the processes whose environment names this cluster's slurm.conf: the daemons, the
        slurmstepd they start, the jobs (sbatch passes its environment on) and what the jobs start."""
        marker = ("SLURM_CONF=" + self.conf).encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % entry, "rb") as f:
                    if marker in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
        return found

    def stop(self):
        """Cancel every job, stop every daemon started, kill what is left of the cluster (every process
        with its slurm.conf in its environment); returns what went wrong (nothing: a clean stop)."""
        problems = []
        slurm_up = any(name == "slurmctld" and proc.poll() is None for name, proc in self.daemons)
        if slurm_up:
            try:
                jobs = self.slurm("squeue", "-h", "-o", "%A", check=False).split()
                jobs = [j for j in jobs if j.isdigit()]
                if jobs:
                    self.slurm("scancel", *jobs, check=False)
                    deadline = time.time() + 20
                    while time.time() < deadline and self.slurm("squeue", "-h", check=False).strip():
                        time.sleep(0.5)
            except (OSError, subprocess.SubprocessError) as err:
                problems.append("could not cancel the jobs: %s" % err)
        # slurmd first (no new steps), then the controller, then munged, which both use.
        order = {"slurmd": 0, "slurmctld": 1, "munged": 2}
        for name, proc in sorted(self.daemons, key=lambda d: order[d[0]]):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    problems.append("%s did not stop on SIGTERM in 20 s: killed" % name)
        left = self.cluster_processes()
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            for pid in left:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.time() + wait
            while left and time.time() < deadline:
                time.sleep(0.2)
                left = [p for p in left if os.path.exists("/proc/%d" % p) and not _zombie(p)]
        killed = self.cluster_processes()
        if killed:
            problems.append("processes of the cluster still running after SIGKILL: %s" % killed)
        return problems


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def make_class(folder):
    """One subfolder per student, as grade.py batch reads a class (gradelib/batch.py)."""
    solution = os.path.join(KIT, "solutions", LAB)
    wrong = os.path.join(KIT, "solutions", LAB, "incorrect", WRONG)
    sources = {"reference": solution, WRONG: wrong, "starter": starters.pristine(LAB)}
    for sub_id, source in sources.items():
        os.makedirs(os.path.join(folder, sub_id))
        shutil.copy(os.path.join(source, STUDENT_FILE), os.path.join(folder, sub_id, STUDENT_FILE))
    os.makedirs(os.path.join(folder, "does-not-compile"))
    with open(os.path.join(solution, STUDENT_FILE)) as f:
        text = f.read()
    with open(os.path.join(folder, "does-not-compile", STUDENT_FILE), "w") as f:
        f.write(text + "\nthis line is not C++ at all\n")
    return sorted(list(sources) + ["does-not-compile"])


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def job_exit_codes(cluster, job):
    """{array task id or None: exit code} of a job Slurm still knows (MinJobAge)."""
    codes = {}
    for line in cluster.slurm("scontrol", "-o", "show", "job", job, check=False).splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if "ExitCode" in fields:
            codes[fields.get("ArrayTaskId")] = int(fields["ExitCode"].split(":")[0])
    return codes


def wait_for_jobs(cluster, jobs):
    deadline = time.time() + GRADED_S
    seen = None
    while True:
        queue = cluster.slurm("squeue", "-h", "-o", "%i %T %r", check=False).strip()
        if queue != seen:
            print("squeue: %s" % (queue.replace("\n", "; ") or "empty"), flush=True)
            seen = queue
        if not queue:
            return
        if "DependencyNeverSatisfied" in queue:
            raise Failed("the merge job's dependency can never be satisfied: %s" % queue)
        if time.time() > deadline:
            raise Failed("jobs %s not done after %d s: %s" % (jobs, GRADED_S, queue))
        time.sleep(1)


def grade_class(cluster, class_dir, out, seed):
    """grade-class.sh CLASS 01 OUT 2, with SEED=seed (None: no SEED), and its jobs waited for:
    (the seed it said, the shards' job, the merge job, seconds)."""
    env = dict(cluster.env, GRADE_SBATCH_GPU="")
    env.pop("SEED", None)
    if seed is not None:
        env["SEED"] = seed
    started = time.time()
    proc = subprocess.run(["bash", SCRIPT, class_dir, "01", out, str(SHARDS)], cwd=KIT, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120)
    print("$ GRADE_SBATCH_GPU= %sgrader/slurm/grade-class.sh CLASS 01 OUT %d  (exit %d)\n%s"
          % ("SEED=%s " % seed if seed else "", SHARDS, proc.returncode, proc.stdout))
    if proc.returncode != 0:
        raise Failed("grade-class.sh exited with %d" % proc.returncode)
    m = re.search(r"batch seed (\d+); shards: job (\d+) .*merge: job (\d+)", proc.stdout)
    if not m:
        raise Failed("grade-class.sh did not say its seed and its two jobs")
    wait_for_jobs(cluster, [m.group(2), m.group(3)])
    return m.group(1), m.group(2), m.group(3), time.time() - started


def grade(cluster, top):
    class_dir = os.path.join(top, "class")
    ids = make_class(class_dir)
    out = os.path.join(top, "slurm-out")
    seed, shard_job, merge_job, slurm_s = grade_class(cluster, class_dir, out, SEED)
    if seed != SEED:
        raise Failed("grade-class.sh said batch seed %s, given SEED=%s" % (seed, SEED))
    shard_codes, merge_codes = job_exit_codes(cluster, shard_job), job_exit_codes(cluster, merge_job)
    print("graded on Slurm in %.0f s; exit codes: shards %s, merge %s" % (
        slurm_s, ", ".join("%s: %s" % kv for kv in sorted(shard_codes.items())) or "unknown",
        merge_codes.get(None, "unknown")))

    problems = []
    logs = ["shard-%d.log" % i for i in range(1, SHARDS + 1)] + ["merge.log"]
    log_dir = os.path.join(out, "logs")
    for name in logs:
        if not os.path.isfile(os.path.join(log_dir, name)):
            problems.append("no log %s in OUT/logs/ (there: %s)"
                            % (name, sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else "nothing"))
    covered = []
    for i in range(1, SHARDS + 1):
        path = os.path.join(out, "shard-%d" % i, "batch.json")
        if not os.path.isfile(path):
            problems.append("shard %d wrote no batch.json" % i)
            continue
        with open(path) as f:
            shard = json.load(f)
        if shard.get("shard") != "%d/%d" % (i, SHARDS) or not shard.get("ids"):
            problems.append("shard %d's batch.json: shard %r, ids %r" % (i, shard.get("shard"), shard.get("ids")))
        covered += shard.get("ids") or []
    if sorted(covered) != ids:
        problems.append("the shards graded %s; the class is %s" % (sorted(covered), ids))

    merged = os.path.join(out, "merged", "scores.csv")
    direct_out = os.path.join(top, "direct-out")
    direct = subprocess.run([sys.executable, os.path.join(KIT, "grader", "grade.py"), "batch", class_dir,
                             "--lab", "01", "--seed", SEED, "--out", direct_out], cwd=KIT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print("$ grade.py batch CLASS --lab 01 --seed %s --out DIR2  (exit %d)\n%s"
          % (SEED, direct.returncode, direct.stdout[-3000:]))
    direct_csv = os.path.join(direct_out, "scores.csv")
    if not os.path.isfile(merged):
        problems.append("no OUT/merged/scores.csv; merge.log:\n" + tail(os.path.join(out, "logs", "merge.log")))
    elif not os.path.isfile(direct_csv):
        problems.append("the direct batch wrote no scores.csv")
    else:
        merged_rows, direct_rows = read_csv(merged), read_csv(direct_csv)
        if merged_rows != direct_rows:
            differ = sorted({r[0] for r in merged_rows[1:]} ^ {r[0] for r in direct_rows[1:]}
                            | {a[0] for a, b in zip(merged_rows[1:], direct_rows[1:]) if a != b})
            with open(merged) as f, open(direct_csv) as g:
                problems.append("the merged sheet differs from the direct batch's (rows %s%s):\n"
                                "--- OUT/merged/scores.csv\n%s--- the direct batch's scores.csv\n%s" % (
                                    ", ".join(differ), "; header" if merged_rows[:1] != direct_rows[:1] else "",
                                    f.read(), g.read()))
        elif [r[0] for r in merged_rows[1:]] != ids:
            problems.append("the sheets' rows are %s; the class is %s" % ([r[0] for r in merged_rows[1:]], ids))
    if merge_codes.get(None) != direct.returncode:
        problems.append("the merge job exited with %s, the direct batch with %d"
                        % (merge_codes.get(None), direct.returncode))
    if not problems:
        problems += resumed(cluster, class_dir, out, ids, read_csv(direct_csv))
    if problems:
        for i in range(1, SHARDS + 1):
            print("--- shard-%d.log\n%s" % (i, tail(os.path.join(out, "logs", "shard-%d.log" % i))))
        print("--- merge.log\n%s" % tail(os.path.join(out, "logs", "merge.log")))
        raise Failed("\n".join(problems))
    return len(ids), slurm_s


def resumed(cluster, class_dir, out, ids, direct_rows):
    """The same command again, without SEED: it takes the shards' seed, and each shard grades nothing
    again; the merged sheet is the same."""
    problems = []
    seed, _, _, _ = grade_class(cluster, class_dir, out, None)
    if seed != SEED:
        problems.append("run again without SEED, grade-class.sh drew batch seed %s, not the shards' %s: the "
                        "shards grade every submission again" % (seed, SEED))
    for i in range(1, SHARDS + 1):
        with open(os.path.join(out, "shard-%d" % i, "batch.json")) as f:
            mine = len(json.load(f)["ids"])
        log = os.path.join(out, "logs", "shard-%d.log" % i)
        with open(log, errors="replace") as f:
            text = f.read()
        if "%d already graded with this kit version, seed and files" % mine not in text:
            problems.append("run again, shard %d did not skip its %d submissions:\n%s" % (i, mine, tail(log)))
    if read_csv(os.path.join(out, "merged", "scores.csv")) != direct_rows:
        problems.append("run again, the merged sheet is no longer the direct batch's")
    if not problems:
        print("run again without SEED: the shards' seed, nothing graded again, the same merged sheet")
    return problems


def main():
    programs = {}
    for name, package in NEEDED:
        programs[name] = shutil.which(name, path=SEARCH_PATH)
        if programs[name] is None:
            print("not run: no %s here (apt-get install slurmctld slurmd slurm-client munge; %s is in %s)"
                  % (name, name, package))
            return NOT_RUN
    if os.geteuid() != 0:
        print("not run: the one-node Slurm cluster's slurmd runs the jobs as root, and this is uid %d" % os.geteuid())
        return NOT_RUN
    possible, why = sandbox.works()
    if not possible:
        print("not run: grade-class.sh grades with the sandbox, and none can be made here (%s)" % why)
        return NOT_RUN
    started = time.time()
    signal.signal(signal.SIGTERM, _stop_signal)
    signal.signal(signal.SIGHUP, _stop_signal)
    top = tempfile.mkdtemp(prefix="kit-slurm-")
    os.chmod(top, 0o755)  # munged wants every folder above its socket open to all
    cluster = Cluster(os.path.join(top, "cluster"), programs)
    os.mkdir(cluster.dir)
    status, message = 1, None
    try:
        cluster.start()
        version = cluster.slurm("sinfo", "-V").strip()
        print("cluster up: %s, node %s idle, %.0f s" % (version, cluster.host, time.time() - started), flush=True)
        n, slurm_s = grade(cluster, top)
        status, message = 0, ("%d Lab 01 submissions graded by grade-class.sh in %d shards on a one-node "
                              "%s cluster in %.0f s; the merged sheet equals a direct batch's"
                              % (n, SHARDS, version, slurm_s))
    except Failed as err:
        message = "FAILED: %s" % err
    except (Stopped, KeyboardInterrupt) as err:
        message = "FAILED: stopped (%s)" % (err or "interrupted")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        left = cluster.stop()
        shutil.rmtree(top, ignore_errors=True)
    print(message)
    if left:
        print("FAILED: stopping the cluster: %s" % "; ".join(left))
        status = 1
    print("slurm-class: %s in %.0f s; %s" % (
        "passed" if status == 0 else "FAILED", time.time() - started,
        "every daemon it started is stopped, none of its processes left" if not left else "see above"))
    return status


if __name__ == "__main__":
    sys.exit(main())
