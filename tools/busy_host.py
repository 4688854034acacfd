#!/usr/bin/env python3
"""Run a command beside a load that keeps the host as busy as a class does, and more: the kit's
checks must hold "with the host busy", and a load made on purpose shows it again and again where a
class or a mutation run beside the grader shows it by chance.

  python3 tools/busy_host.py [--spinners N] [--contexts N] [--builds N] -- COMMAND [ARG ...]

The load: N spinners (busy loops at normal priority: other work on a shared machine); N loops each
running the kit's GPU probe (a CUDA context made and torn down each time, and a short kernel) through
the grader's gate, holding the GPU shared as other graders' runs do; N loops each compiling Lab 05's
solution with nvcc at nice 10, as the grader's builds run. Defaults: three quarters of the cores, 4,
half of the cores. Without a GPU the probe loops are left out, with a message. A CUDA program outside
the gate (another user's) would share the GPU with a timing run, time-sliced: no grader can time
anything beside that, and the load makes none.

The command runs once the load has started; the load is stopped (each loop's process group killed)
when the command ends, however it ends. Exit status: the command's.

  python3 tools/busy_host.py -- python3 grader/selftest.py full-marks 05-default-streams --seeds 10
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build, gpu, paths  # noqa: E402

MARK = "kit-busy-host"  # in every load process's command line: what tests look for
BUILD_LAB = "05-default-streams"
START_S = 2.0  # the load's time to get going before the command starts


def spinner():
    return [sys.executable, "-c", "while True: pass", MARK]


def context_loop(probe):
    """The probe again and again, each run holding the GPU shared as the grader's probe does (every GPU's
    gate): it waits while a run has a GPU alone."""
    loop = ("import sys; sys.path.insert(0, %r)\n"
            "from gradelib import gpushare, process\n"
            "while True:\n"
            "    with gpushare.every_gpu_shared():\n"
            "        process.run_bounded([%r, '--json', '/dev/null'], 60)\n")
    loop %= (os.path.join(KIT_ROOT, "grader"), probe)
    return [sys.executable, "-c", loop, MARK]


def build_loop(out_dir):
    source = os.path.join(KIT_ROOT, "solutions", BUILD_LAB, "default_streams.cu")
    nvcc = os.environ.get("NVCC") or "nvcc"
    return ["nice", "-n", "10", "sh", "-c",
            'dir=$1; shift; while :; do "$@" -o "$dir/load-$$.o" > /dev/null 2>&1 || sleep 1; done', MARK, out_dir,
            nvcc, "-arch=sm_%s" % build.cuda_arch(), "-rdc=true", "-c", source,
            "-I" + os.path.join(KIT_ROOT, "common", "include"), "-I" + os.path.join(KIT_ROOT, "common", "harness", BUILD_LAB)]


def probe_program():
    """The kit's GPU probe, built and run once (gpu.detect), or None where there is no GPU."""
    info = gpu.detect()
    if not info.available:
        print("busy_host: no CUDA contexts in the load: %s" % info.reason, file=sys.stderr)
        return None
    return os.path.join(gpu.probe_dir(), "cdp_probe")


def start_load(spinners, contexts, builds, scratch):
    loops = [spinner() for _ in range(spinners)]
    probe = probe_program() if contexts else None
    if probe:
        loops += [context_loop(probe) for _ in range(contexts)]
    loops += [build_loop(scratch) for _ in range(builds)]
    return [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            for argv in loops]


def stop_load(load):
    for p in load:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for p in load:
        p.wait()


def main(argv):
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spinners", type=int, default=max(1, cores * 3 // 4))
    parser.add_argument("--contexts", type=int, default=4)
    parser.add_argument("--builds", type=int, default=max(1, cores // 2))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: busy_host.py [options] -- COMMAND [ARG ...]")
    # a time limit around this tool (timeout, CTest) stops the load with it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    scratch = os.path.join(paths.BUILD_ROOT, "busy-host-%d" % os.getpid())
    os.makedirs(scratch, exist_ok=True)
    load = []
    try:
        load = start_load(args.spinners, args.contexts, args.builds, scratch)
        print("busy_host: %d load processes (%d spinners, %d context loops, %d nvcc loops at nice 10) beside: %s" % (
            len(load), args.spinners, len(load) - args.spinners - args.builds, args.builds, " ".join(command)), flush=True)
        time.sleep(START_S)
        return subprocess.call(command)
    finally:
        stop_load(load)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
