#!/usr/bin/env python3
"""Every lab built and statically checked under each CUDA toolkit the kit claims, and for each GPU
architecture a toolkit lists: the part of "correct on CUDA 12.0 to 13.x, compute capability 7.5 and
newer" that needs no GPU.

  python3 tools/toolkit_matrix.py [--toolkits 12.0,12.4,12.9,13.0,newest] [--archs 75,80,...|none]
                                  [--json FILE] [--jobs N]

Toolkits. Each version is installed from PyPI's NVIDIA wheels (nvidia-cuda-nvcc, -runtime, -crt and
nvidia-nvvm for 13.x; nvidia-cuda-nvcc-cu12 and -runtime-cu12 for 12.x; and the newest CCCL of the
major version, nvidia-cuda-cccl or -cccl-cu12: CUB, which a full toolkit ships) into a cache outside the
checkout ($KIT_TOOLKIT_CACHE, else ~/.cache/cdp-kit/toolkits), once. "newest" is the newest 13.x
there. A version whose wheels cannot be had, or hold no nvcc driver, is reported as not available,
with why: never as a pass. The reference is the toolkit on PATH. Under each toolkit, in a copy of the
kit of its own (so that no build of one toolkit is linked by another), every submission the kit
keeps is graded without a GPU (grade.py, KIT_NO_GPU=1): each lab's solution and alternatives, its
starter, and each known-wrong submission. What must hold:
  - a known-wrong submission whose note names a build or static check fails it; every other
    submission compiles;
  - the solutions and alternatives pass every build and static check; each starter fails the static
    checks its lab says it must (Lab.starter_must_fail);
  - every build and static check gives the same status as under the reference toolkit (the static
    checks read PTX, whose markers a toolkit may change).

Architectures. With the reference toolkit, each lab's solution and starter, and each known-wrong
submission whose note names a build or static check, are graded the same way for each compute
capability in --archs that the toolkit lists (nvcc --list-gpu-arch); default: 75, 80, 86, 89, 90, 100
and 120.

Prints a table, writes the document (--json; default build/toolkits/matrix.json). Exit status 0 when
every available toolkit and architecture held, 1 otherwise, 77 (not run) when pip could install none
of the toolkits asked for (no registry reached): only the reference ran then.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import checks as chk  # noqa: E402
from gradelib import paths, registry  # noqa: E402
from selftest import read_note  # noqa: E402

CLAIMED = ("12.0", "12.4", "12.9", "13.0", "newest")
DEFAULT_ARCHS = ("75", "80", "86", "89", "90", "100", "120")
CACHE_ENV = "KIT_TOOLKIT_CACHE"
# The wheels that make a toolkit that builds the labs, by major version, each pinned to the toolkit's
# MAJOR.MINOR; and those taken at the newest release of the major version, whose numbers do not
# follow the toolkit's: CCCL (CUB, Thrust, libcu++), which a full toolkit ships and Lab 08 uses.
WHEELS = {
    "12": ("nvidia-cuda-nvcc-cu12", "nvidia-cuda-runtime-cu12"),
    "13": ("nvidia-cuda-nvcc", "nvidia-cuda-runtime", "nvidia-cuda-crt", "nvidia-nvvm"),
}
NEWEST_OF_MAJOR = {
    "12": ("nvidia-cuda-cccl-cu12",),
    "13": ("nvidia-cuda-cccl",),
}
STATIC_KINDS = (chk.BUILD, chk.STATIC)


def cache_root():
    return os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "cdp-kit", "toolkits")


def newest_13():
    """The newest 13.x version of the nvcc wheel on the registry, as MAJOR.MINOR, or None."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", WHEELS["13"][0]],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True).stdout
    found = re.findall(r"\b(13)\.(\d+)\.\d+\b", out)
    return "13.%d" % max(int(minor) for _, minor in found) if found else None


def install(version):
    """(the folder of its nvcc, None) for MAJOR.MINOR, installed into the cache once; or (None, why)."""
    major = version.split(".")[0]
    if major not in WHEELS:
        return None, "no wheels are known for CUDA %s" % major
    target = os.path.join(cache_root(), "cuda-%s" % version)
    specs = (["%s==%s.*" % (name, version) for name in WHEELS[major]]
             + ["%s>=%s,<%d" % (name, major, int(major) + 1) for name in NEWEST_OF_MAJOR[major]])
    # The cache holds what one pip call installed (pip --target does not add to a folder it made
    # before), named in .installed: another list of wheels installs afresh.
    marker = os.path.join(target, ".installed")
    installed = open(marker).read() if os.path.exists(marker) else None
    if installed != "\n".join(specs):
        shutil.rmtree(target, ignore_errors=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target]
                              + specs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            return None, "pip could not install %s: %s" % (" ".join(specs), proc.stdout.strip().splitlines()[-1:])
        with open(marker, "w") as f:
            f.write("\n".join(specs))
    found = glob.glob(os.path.join(target, "nvidia", "*", "bin", "nvcc"))
    if not found:
        return None, ("the registry's wheels for CUDA %s (%s) hold no nvcc driver (only ptxas and libnvvm): "
                      "it cannot build CUDA C here" % (version, ", ".join(WHEELS[major])))
    return os.path.dirname(found[0]), None


def nvcc_release(bin_dir):
    out = subprocess.run([os.path.join(bin_dir, "nvcc"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    return m.group(2) if m else "unknown"


def gpu_archs(bin_dir):
    out = subprocess.run([os.path.join(bin_dir, "nvcc"), "--list-gpu-arch"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return set(re.findall(r"compute_(\d+)", out))


def kit_copy(name):
    """A copy of the kit's files for one toolkit: its own build folder, its own kit objects."""
    top = os.path.join(paths.BUILD_ROOT, "toolkits", name, "kit")
    shutil.rmtree(top, ignore_errors=True)
    shutil.copytree(KIT_ROOT, top, ignore=shutil.ignore_patterns("build", ".git", "__pycache__"))
    return top


def submissions():
    """[(lab, kind, folder relative to the kit, static check that must fail or None)]: each lab's solution,
    alternatives, starter and known-wrong submissions."""
    found = []
    for lab in registry.all_labs().values():
        alternative, incorrect = paths.alternative_dir(lab.name), paths.incorrect_dir(lab.name)
        found.append((lab, "solution", os.path.join("solutions", lab.name), None))
        for case in paths.case_folders(alternative):
            found.append((lab, "alternative", os.path.relpath(os.path.join(alternative, case), KIT_ROOT), None))
        found.append((lab, "starter", os.path.join("labs", lab.name), None))
        for case in paths.case_folders(incorrect):
            name, _ = read_note(os.path.join(incorrect, case))
            check = lab.check_named(name)
            must_fail = name if check is not None and check.kind in STATIC_KINDS else None
            found.append((lab, "incorrect", os.path.relpath(os.path.join(incorrect, case), KIT_ROOT), must_fail))
    return found


def grade_static(kit, bin_dir, arch, lab, folder):
    """{check name: status} of the build and static checks of one submission, graded in kit without a GPU."""
    env = dict(os.environ, KIT_NO_GPU="1", CUDA_ARCH=arch)
    env.pop("KIT_GRADER_SALT", None)
    if bin_dir:
        env["PATH"] = bin_dir + os.pathsep + env["PATH"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "grade.json")
        proc = subprocess.run([sys.executable, os.path.join(kit, "grader", "grade.py"), "--lab", lab.name,
                               "--submission", os.path.join(kit, folder), "--seed", "1", "--json", out],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if not os.path.exists(out):
            return {"grade.py": "exited %d: %s" % (proc.returncode, proc.stdout.strip()[-300:])}
        with open(out) as f:
            doc = json.load(f)
    return {c["name"]: c["status"] for c in doc["labs"][0]["checks"] if c["kind"] in STATIC_KINDS}


def expectation_problems(lab, kind, folder, must_fail, statuses):
    """What a row's statuses break of what the kit says of the submission."""
    problems = []
    if must_fail:  # its named check decides (a refused flags file is not compiled at all)
        if statuses.get(must_fail) != chk.FAILED:
            problems.append("%s: '%s' should fail, %s" % (folder, must_fail, statuses.get(must_fail)))
    elif statuses.get("compiles") != chk.PASSED:
        problems.append("%s: does not compile (%s)" % (folder, statuses))
    elif kind in ("solution", "alternative"):
        problems += ["%s: '%s' %s" % (folder, n, s) for n, s in statuses.items() if s != chk.PASSED]
    elif kind == "starter":
        problems += ["%s: '%s' should fail, %s" % (folder, n, statuses.get(n)) for n in lab.starter_must_fail
                     if statuses.get(n) != chk.FAILED]
    return problems


def grade_row(kit, bin_dir, arch, items, jobs):
    """{folder: statuses} of items graded in kit."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {folder: pool.submit(grade_static, kit, bin_dir, arch, lab, folder) for lab, _, folder, _ in items}
    return {folder: f.result() for folder, f in futures.items()}


def run_row(name, kit, bin_dir, arch, items, jobs, reference=None):
    """One row of the matrix: a dict with what was graded, how long it took and what did not hold."""
    started = time.monotonic()
    statuses = grade_row(kit, bin_dir, arch, items, jobs)
    problems = []
    for lab, kind, folder, must_fail in items:
        problems += expectation_problems(lab, kind, folder, must_fail, statuses[folder])
        if reference is not None and statuses[folder] != reference.get(folder):
            differ = sorted(n for n in set(statuses[folder]) | set(reference[folder])
                            if statuses[folder].get(n) != reference[folder].get(n))
            problems.append("%s: differs from the reference toolkit on %s" % (folder, differ))
    return {"toolkit": name, "arch": arch, "graded": len(items), "problems": problems,
            "seconds": round(time.monotonic() - started, 1), "statuses": statuses}


def print_row(row):
    print("%-24s sm_%-4s %3d graded, %s (%.0f s)" % (row["toolkit"], row["arch"], row["graded"],
          "as expected" if not row["problems"] else "%d problems" % len(row["problems"]), row["seconds"]),
          flush=True)


def main(argv):
    p = argparse.ArgumentParser(prog="toolkit_matrix.py", description=__doc__.split("\n")[0])
    p.add_argument("--toolkits", default=",".join(CLAIMED),
                   help="CUDA versions, MAJOR.MINOR or newest (default: %(default)s)")
    p.add_argument("--archs", default=",".join(DEFAULT_ARCHS),
                   help="compute capabilities for the reference toolkit's rows, or none (default: %(default)s)")
    p.add_argument("--json", default=os.path.join(paths.BUILD_ROOT, "toolkits", "matrix.json"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    system_nvcc = shutil.which("nvcc")
    if system_nvcc is None:
        print("not run: no nvcc on PATH (the reference toolkit)")
        return 77
    system_bin = os.path.dirname(os.path.realpath(system_nvcc))
    default_arch = "75"
    everything = submissions()
    rows, unavailable = [], []
    installs = []  # for each toolkit tried: None when installed, else why not

    reference_release = nvcc_release(system_bin)
    reference = run_row("reference %s" % reference_release, KIT_ROOT, None, default_arch, everything, args.jobs)
    rows.append(reference)
    print_row(reference)

    for version in [v.strip() for v in args.toolkits.split(",") if v.strip()]:
        wanted = newest_13() if version == "newest" else version
        if wanted is not None and reference_release.startswith(wanted + "."):
            print("%-24s is the reference (the toolkit on PATH)" % ("CUDA %s" % version), flush=True)
            continue
        bin_dir, why = install(wanted) if wanted else (None, "pip found no 13.x nvcc wheel on the registry")
        installs.append(why)
        if bin_dir is None:
            unavailable.append({"toolkit": version, "why": why})
            print("%-24s not available: %s" % ("CUDA %s" % version, why), flush=True)
            continue
        release = nvcc_release(bin_dir)
        row = run_row("CUDA %s" % release, kit_copy("cuda-" + release), bin_dir, default_arch, everything, args.jobs,
                      reference["statuses"])
        rows.append(row)
        print_row(row)

    listed = gpu_archs(system_bin)
    archs = [] if args.archs == "none" else [a.strip() for a in args.archs.split(",") if a.strip()]
    # per architecture: what the static checks decide (the PTX they read is the architecture's)
    labs_only = [item for item in everything if item[1] in ("solution", "starter") or item[3]]
    for arch in archs:
        if arch not in listed:
            unavailable.append({"toolkit": "reference", "arch": arch, "why": "nvcc --list-gpu-arch does not list it"})
            print("%-24s sm_%-4s not listed by this toolkit" % ("reference", arch), flush=True)
            continue
        if arch == default_arch:
            continue  # the first row
        row = run_row(reference["toolkit"], KIT_ROOT, None, arch, labs_only, args.jobs, reference["statuses"])
        rows.append(row)
        print_row(row)

    for row in rows:
        for problem in row["problems"][:20]:
            print("  %s sm_%s: %s" % (row["toolkit"], row["arch"], problem))
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"rows": [{k: v for k, v in r.items() if k != "statuses"} for r in rows],
                   "not_available": unavailable}, f, indent=2)
    print("wrote %s" % paths.relative(args.json))
    if any(r["problems"] for r in rows):
        return 1
    if installs and all(why is not None and why.startswith("pip") for why in installs):
        print("not run: no toolkit could be installed here (pip reached no registry?): only the reference ran")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
