"""The build cache (gradelib.build.cached_make): the same inputs give the kept verdict, log and files;
any changed input (a student file, a kit header, the architecture) builds again; a failed build is kept
with its message, a timeout or the sandbox's own failure never; KIT_BUILD_CACHE=0 turns it off; the
files handed out are copies. Most tests use a stand-in for make over a copy of the kit's make rules
and common/ (no nvcc); one builds with nvcc where it is installed."""
import json
import os
import shutil
import stat
import tempfile
import unittest
from unittest import mock

from gradelib import build, paths, process, sandbox

LAB = "01-divergent-counter"
SOURCE = "divergent_counter.cu"
PROGRAM = "divergent_counter"
TARGETS = ["all", "ptx"]


class FakeMake:
    """make's stand-in: writes a program and a PTX file made from the staged source and the
    architecture, and answers with the verdict, status and log it is given ({src}, {build}: the folders)."""

    def __init__(self):
        self.calls = 0
        self.verdict, self.returncode, self.log = process.OK, 0, "nvcc {src}/%s -o {build}/%s" % (SOURCE, PROGRAM)

    def __call__(self, lab_name, src_dir, build_dir, targets, cuda_arch, timeout=build.BUILD_TIMEOUT):
        self.calls += 1
        os.makedirs(build_dir, exist_ok=True)
        with open(os.path.join(src_dir, SOURCE)) as f:
            text = f.read()
        if self.verdict == process.OK:
            program = os.path.join(build_dir, PROGRAM)
            with open(program, "w") as f:
                f.write("program of %s for sm_%s\n" % (text, cuda_arch))
            os.chmod(program, 0o755)
            with open(os.path.join(build_dir, SOURCE[:-3] + ".ptx"), "w") as f:
                f.write("// PTX of %s\n" % text)
        log = self.log.format(src=src_dir, build=build_dir)
        return process.RunResult(self.verdict, self.returncode, log, 1.5, len(log))


class CacheTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        # A copy of what a build sees of the kit, so that a header can be changed here.
        self.kit = os.path.join(self.tmp, "kit")
        shutil.copytree(os.path.join(paths.KIT_ROOT, "common"), os.path.join(self.kit, "common"))
        os.makedirs(os.path.join(self.kit, "labs", LAB))
        shutil.copy(paths.lab_makefile(LAB), os.path.join(self.kit, "labs", LAB))
        self.make = FakeMake()
        env = {k: v for k, v in os.environ.items() if k != build.CACHE_ENV}
        for patch in (mock.patch.object(paths, "KIT_ROOT", self.kit),
                      mock.patch.object(paths, "LABS_DIR", os.path.join(self.kit, "labs")),
                      mock.patch.object(paths, "BUILD_ROOT", os.path.join(self.kit, "build")),
                      mock.patch.object(build, "make", self.make),
                      mock.patch.dict(os.environ, env, clear=True)):
            patch.start()
            self.addCleanup(patch.stop)
        self.cache = os.path.join(self.kit, "build", "cache")
        self.builds = 0

    def build(self, source="int x;", arch="75"):
        """A fresh work folder with the source staged, built through the cache: (RunResult, build folder)."""
        self.builds += 1
        work = os.path.join(self.tmp, "work-%d" % self.builds)
        src_dir = os.path.join(work, "src")
        os.makedirs(src_dir)
        with open(os.path.join(src_dir, SOURCE), "w") as f:
            f.write(source)
        build_dir = os.path.join(work, "build")
        return build.cached_make(LAB, src_dir, build_dir, TARGETS, arch, sandboxed=False), build_dir

    def files(self, build_dir):
        found = {}
        for name in sorted(os.listdir(build_dir)):
            with open(os.path.join(build_dir, name), "rb") as f:
                found[name] = (f.read(), stat.S_IMODE(os.stat(os.path.join(build_dir, name)).st_mode))
        return found

    def entries(self):
        return sorted(n for n in os.listdir(self.cache) if len(n) == 64) if os.path.isdir(self.cache) else []

    def test_a_hit_gives_the_same_verdict_log_and_files(self):
        first, first_dir = self.build()
        again, again_dir = self.build()
        self.assertEqual(self.make.calls, 1)
        self.assertEqual((again.verdict, again.returncode, again.ok), (first.verdict, first.returncode, True))
        self.assertEqual(self.files(again_dir), self.files(first_dir))
        self.assertTrue(os.access(os.path.join(again_dir, PROGRAM), os.X_OK))
        # The log names this build's folders, as a build here would have.
        self.assertEqual(again.output, "nvcc %s/src/%s -o %s/%s" % (os.path.dirname(again_dir), SOURCE, again_dir,
                                                                     PROGRAM))
        self.assertEqual(len(self.entries()), 1)

    def test_a_changed_student_file_builds_again(self):
        self.build("int x;")
        _, changed = self.build("int y;")
        self.assertEqual(self.make.calls, 2)
        self.assertIn(b"int y;", self.files(changed)[PROGRAM][0])

    def test_a_changed_kit_header_builds_again(self):
        self.build()
        with open(os.path.join(self.kit, "common", "include", "kit_check.h"), "a") as f:
            f.write("\n/* changed */\n")
        self.build()
        self.assertEqual(self.make.calls, 2)
        with open(os.path.join(self.kit, "labs", LAB, "Makefile"), "a") as f:
            f.write("\n# changed\n")
        self.build()
        self.assertEqual(self.make.calls, 3)

    def test_a_changed_architecture_builds_again(self):
        self.build(arch="75")
        _, other = self.build(arch="90")
        self.assertEqual(self.make.calls, 2)
        self.assertIn(b"sm_90", self.files(other)[PROGRAM][0])
        self.build(arch="75")
        self.assertEqual(self.make.calls, 2)

    def test_a_failed_build_is_kept_with_its_message(self):
        self.make.verdict, self.make.returncode = process.EXITED, 2
        self.make.log = "{src}/%s(3): error: identifier \"x\" is undefined\nmake: *** Error 1\n" % SOURCE
        first, _ = self.build("x = 1;")
        again, again_dir = self.build("x = 1;")
        self.assertEqual(self.make.calls, 1)
        self.assertEqual((again.verdict, again.returncode), (process.EXITED, 2))
        src_dir = os.path.join(os.path.dirname(again_dir), "src")
        self.assertEqual(build.compiler_errors(again.output).replace(src_dir + os.sep, ""),
                         build.compiler_errors(first.output).replace(os.path.join(self.tmp, "work-1", "src") + os.sep,
                                                                     ""))
        self.assertIn('%s(3): error: identifier "x" is undefined' % SOURCE,
                      build.compiler_errors(again.output).replace(src_dir + os.sep, ""))

    def test_a_timeout_or_the_machines_trouble_is_not_kept(self):
        self.make.verdict, self.make.returncode, self.make.log = process.TIMEOUT, None, "nvcc ..."
        self.build()
        self.build()
        self.assertEqual(self.make.calls, 2)
        for verdict, log in ((process.EXITED, "nvcc error   : 'cicc' died due to signal 9 (Kill signal)"),
                             (process.EXITED, "/tmp/x.o: No space left on device"),
                             (process.CRASHED, ""), (process.FLOOD, "spam")):
            self.make.verdict, self.make.returncode, self.make.log = verdict, 2, log
            self.build("int %s;" % verdict)
            self.build("int %s;" % verdict)
        self.assertEqual(self.make.calls, 10)
        self.assertEqual(self.entries(), [])

    def test_the_sandboxs_own_failure_is_not_kept(self):
        self.make.verdict, self.make.returncode = process.EXITED, sandbox.SETUP_FAILED
        self.make.log = sandbox.FAILED_PREFIX + sandbox.SETUP_TOKEN + " unshare: Operation not permitted"
        self.build()
        self.build()
        self.assertEqual(self.make.calls, 2)
        self.assertEqual(self.entries(), [])

    def test_kit_build_cache_0_turns_it_off(self):
        os.environ[build.CACHE_ENV] = "0"
        self.assertIsNone(build.cache_dir())
        self.build()
        self.build()
        self.assertEqual(self.make.calls, 2)
        self.assertFalse(os.path.exists(self.cache))

    def test_kit_build_cache_may_name_the_folder(self):
        elsewhere = os.path.join(self.tmp, "shared-cache")
        os.environ[build.CACHE_ENV] = elsewhere
        self.build()
        self.build()
        self.assertEqual(self.make.calls, 1)
        self.assertEqual(len([n for n in os.listdir(elsewhere) if len(n) == 64]), 1)
        self.assertFalse(os.path.exists(self.cache))

    def test_the_files_handed_out_are_copies(self):
        _, first_dir = self.build()
        kept = self.files(first_dir)
        _, handed = self.build()
        with open(os.path.join(handed, PROGRAM), "w") as f:
            f.write("changed after the build")
        os.remove(os.path.join(handed, SOURCE[:-3] + ".ptx"))
        _, again = self.build()
        self.assertEqual(self.make.calls, 1)
        self.assertEqual(self.files(again), kept)

    def test_an_entry_changed_in_the_cache_is_dropped_and_built_again(self):
        self.build()
        entry = os.path.join(self.cache, self.entries()[0])
        with open(os.path.join(entry, "files", PROGRAM), "a") as f:
            f.write("tampered")
        _, rebuilt = self.build()
        self.assertEqual(self.make.calls, 2)
        self.assertNotIn(b"tampered", self.files(rebuilt)[PROGRAM][0])
        with open(os.path.join(entry, "entry.json"), "w") as f:
            f.write("{not json")
        self.build()
        self.assertEqual(self.make.calls, 3)
        _, last = self.build()
        self.assertEqual(self.make.calls, 3)  # kept again, whole
        self.assertNotIn(b"tampered", self.files(last)[PROGRAM][0])

    def test_an_entry_naming_a_file_outside_the_build_folder_is_refused(self):
        self.build()
        entry = os.path.join(self.cache, self.entries()[0])
        with open(os.path.join(entry, "entry.json")) as f:
            meta = json.load(f)
        meta["files"][0]["name"] = os.path.join("..", "escaped")
        with open(os.path.join(entry, "entry.json"), "w") as f:
            json.dump(meta, f)
        _, build_dir = self.build()
        self.assertEqual(self.make.calls, 2)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(build_dir), "escaped")))

    def test_a_build_that_leaves_a_link_is_not_kept(self):
        real = self.make.__call__

        def linking(lab_name, src_dir, build_dir, targets, cuda_arch, timeout=build.BUILD_TIMEOUT):
            made = real(lab_name, src_dir, build_dir, targets, cuda_arch, timeout)
            os.symlink("/etc/passwd", os.path.join(build_dir, "link"))
            return made
        with mock.patch.object(build, "make", linking):
            self.build()
        self.assertEqual(self.entries(), [])

    def test_a_build_during_which_a_kit_file_changed_is_not_kept(self):
        real = self.make.__call__
        header = os.path.join(self.kit, "common", "include", "kit_check.h")

        def saving_a_header(lab_name, src_dir, build_dir, targets, cuda_arch, timeout=build.BUILD_TIMEOUT):
            with open(header, "a") as f:
                f.write("\n/* saved during the build */\n")
            return real(lab_name, src_dir, build_dir, targets, cuda_arch, timeout)
        with mock.patch.object(build, "make", saving_a_header):
            made, _ = self.build()
        self.assertTrue(made.ok)
        self.assertEqual(self.entries(), [])

    def test_the_least_recently_used_entries_go_first(self):
        for k in range(3):
            self.build("int v%d;" % k)
        keys = {}
        for name in self.entries():
            with open(os.path.join(self.cache, name, "files", PROGRAM)) as f:
                keys[f.read().split()[3]] = name
            os.utime(os.path.join(self.cache, name), (1000, 1000))
        os.utime(os.path.join(self.cache, keys["v2;"]), (2000, 2000))
        self.build("int v0;")  # found: used last
        self.assertEqual(self.make.calls, 3)
        build.evict(self.cache, max_entries=2)
        self.assertEqual(self.entries(), sorted([keys["v0;"], keys["v2;"]]))
        size = sum(os.path.getsize(os.path.join(folder, f)) for folder, _, files in
                   os.walk(os.path.join(self.cache, keys["v0;"])) for f in files)
        build.evict(self.cache, max_bytes=size)
        self.assertEqual(self.entries(), [keys["v0;"]])

    def test_an_entry_is_kept_whole_or_not_at_all(self):
        """A kept entry appears by one rename; a temporary folder left by a crashed grader is never
        taken for one, and goes once it is old."""
        os.makedirs(os.path.join(self.cache, ".tmp-crashed", "files"))
        self.build()
        self.build()
        self.assertEqual(self.make.calls, 1)
        self.assertTrue(os.path.isdir(os.path.join(self.cache, ".tmp-crashed")))
        os.utime(os.path.join(self.cache, ".tmp-crashed"), (1000, 1000))
        build.evict(self.cache)
        self.assertFalse(os.path.exists(os.path.join(self.cache, ".tmp-crashed")))
        self.assertEqual([n for n in os.listdir(self.cache) if n.startswith(".")], [])


@unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
class RealBuildTest(unittest.TestCase):
    """A real build of a file that does not compile, in the sandbox where one can be made: kept, and
    found again with the compiler's message about the second build's file."""

    def test_a_compile_error_is_found_again(self):
        with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {build.CACHE_ENV: os.path.join(tmp, "c")}):
            results = []
            for k in range(2):
                src_dir = os.path.join(tmp, "w%d" % k, "src")
                os.makedirs(src_dir)
                with open(os.path.join(src_dir, SOURCE), "w") as f:
                    f.write('#include "divergent_counter.h"\n__global__ void diverge_cta(unsigned long long *c, int n)\n'
                            "{ undeclared_thing = 1; }\n")
                with mock.patch.object(build, "make", wraps=build.make) as plain, \
                        mock.patch.object(build, "sandboxed_make", wraps=build.sandboxed_make) as boxed:
                    made = build.cached_make(LAB, src_dir, os.path.join(tmp, "w%d" % k, "build"), TARGETS,
                                             build.cuda_arch(), sandboxed=sandbox.works()[0])
                results.append((made, plain.call_count + boxed.call_count,
                                build.compiler_errors(made.output).replace(src_dir + os.sep, "")))
        (first, first_builds, first_message), (again, again_builds, again_message) = results
        self.assertEqual((first_builds, again_builds), (1, 0))
        self.assertEqual((again.verdict, again.returncode), (first.verdict, first.returncode))
        self.assertEqual(again.verdict, process.EXITED)
        self.assertEqual(again_message, first_message)
        self.assertIn('%s(3): error: identifier "undeclared_thing" is undefined' % SOURCE, again_message)


if __name__ == "__main__":
    unittest.main()
