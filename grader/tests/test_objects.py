"""The check of a student's objects (gradelib.objects), on objects nvcc builds here: every hostile import
case and every attack is refused for every lab, naming what it found; an extern to any of a lab's kit
device variables is refused and does not link; and the reference solutions pass. Needs nvcc (no GPU)."""
import glob
import os
import re
import shutil
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

from gradelib import build, elf, objects, paths, registry, starters
from selftest import ATTACKS_DIR, IMPORTS_DIR

NVCC = shutil.which("nvcc")


def first_cu(lab):
    return next(f for f in build.lab_vars(lab.name)["student_files"] if f.endswith(".cu"))


def build_object(lab, text, work, arch="75"):
    """The student object of lab built from text (as its first .cu file) with the kit's rules, in work,
    for compute capability arch; returns (src_dir, build_dir, make's RunResult for the object alone)."""
    src, out = os.path.join(work, "src"), os.path.join(work, "build")
    os.makedirs(src)
    for name in build.lab_vars(lab.name)["student_files"]:
        shutil.copyfile(os.path.join(starters.pristine(lab.name), name), os.path.join(src, name))
    with open(os.path.join(src, first_cu(lab)), "w") as f:
        f.write(text)
    made = build.make(lab.name, src, out, [os.path.join(out, first_cu(lab)[:-3] + ".o")], arch)
    return src, out, made


def build_objects(builds):
    """{key: (lab, text, work, arch)}: each built as build_object builds it, in a folder of its own, side by
    side, one per core: {key: what build_object returns}."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        started = {key: pool.submit(build_object, *args) for key, args in builds.items()}
    return {key: future.result() for key, future in started.items()}


def read(path):
    with open(path) as f:
        return f.read()


def note_finding(case_dir):
    return next(l.split(":", 1)[1].strip() for l in read(os.path.join(case_dir, "note.txt")).splitlines()
                if l.startswith("finding:"))


def kit_device_variables(lab):
    """The names of the kit's device variables in lab's program: every file-scope __device__ variable of
    common/src and of the lab's harness."""
    names = []
    for path in glob.glob(os.path.join(paths.KIT_ROOT, "common", "src", "*.cu")) + \
            glob.glob(os.path.join(paths.KIT_ROOT, "common", "harness", lab.name, "*.cu")):
        names += re.findall(r"^(?:static\s+)?__device__\s+[^(;=]*?\b(\w+)\s*(?:\[[^\]]*\])*\s*(?:=[^;]*)?;",
                            read(path), re.M)
    return sorted(set(names))


@unittest.skipIf(NVCC is None, "needs nvcc")
class RefusedEverywhere(unittest.TestCase):
    """Each hostile case's object, built once, is refused under every lab's imports."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="objects-")
        cls.lab = registry.resolve("01")
        starter = read(os.path.join(starters.pristine(cls.lab.name), first_cu(cls.lab)))
        prelude = read(os.path.join(ATTACKS_DIR, "prelude.h"))
        findings, builds = {}, {}
        for case in paths.case_folders(IMPORTS_DIR):
            findings[case] = note_finding(os.path.join(IMPORTS_DIR, case))
            builds[case] = (cls.lab, read(os.path.join(IMPORTS_DIR, case, "code.c")) + "\n" + starter,
                            os.path.join(cls.tmp, case), "75")
        for kind in paths.case_folders(ATTACKS_DIR):
            findings["attack-" + kind] = "before main"
            builds["attack-" + kind] = (cls.lab, "#define HOSTILE_PORT 9\n" + prelude +
                                        read(os.path.join(ATTACKS_DIR, kind, "attack.c")) + starter,
                                        os.path.join(cls.tmp, kind), "75")
        cls.cases = {case: (findings[case], made) for case, made in build_objects(builds).items()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_every_case_refused_for_every_lab(self):
        self.assertGreaterEqual(len(self.cases), 9 + 7)
        for case, (finding, (src, out, made)) in self.cases.items():
            self.assertTrue(made.ok, "%s did not compile:\n%s" % (case, made.output[-2000:]))
            for lab in registry.all_labs().values():
                found = objects.refusals(lab.imports, out, [first_cu(self.lab)], src)
                with self.subTest(case=case, lab=lab.name):
                    self.assertTrue(any(finding in line for line in found),
                                    "%s under %s: wanted a finding with %r, got %s" % (case, lab.name, finding, found))

    def test_refusal_names_the_students_line(self):
        _, (src, out, _) = self.cases["relays-the-channel"]
        found = objects.refusals(self.lab.imports, out, [first_cu(self.lab)], src)
        self.assertIn("imports write (divergent_counter.cu line 7)", " ".join(found))


@unittest.skipIf(NVCC is None, "needs nvcc")
class KitStateOutOfReach(unittest.TestCase):
    """For every lab: a solution that declares each kit device variable extern and writes it is refused,
    naming each one, and does not link (the kit's device variables are static)."""

    def test_every_kit_device_variable(self):
        with tempfile.TemporaryDirectory(prefix="kit-state-") as tmp:
            builds, names = {}, {}
            for lab in registry.all_labs().values():
                names[lab.name] = kit_device_variables(lab)
                self.assertTrue(names[lab.name], lab.name)
                solution = read(os.path.join(paths.solution_dir(lab.name), first_cu(lab)))
                text = solution + "\n" + "".join("extern __device__ char %s[];\n" % n for n in names[lab.name]) + \
                    "__global__ void hostile_writes_kit_state(void)\n{\n" + \
                    "".join("    %s[0] = 1;\n" % n for n in names[lab.name]) + "}\n"
                builds[lab.name] = (lab, text, os.path.join(tmp, lab.name), "75")
            for lab_name, (src, out, made) in build_objects(builds).items():
                lab = builds[lab_name][0]
                with self.subTest(lab=lab_name):
                    self.assertTrue(made.ok, made.output[-2000:])
                    found = " ".join(objects.refusals(lab.imports, out, [first_cu(lab)], src))
                    for name in names[lab_name]:
                        self.assertIn("device code imports %s " % name, found)
                    linked = build.make(lab.name, src, out, ["all"], "75")
                    self.assertFalse(linked.ok, "%s linked with an extern to the kit's device state" % lab.name)
                    self.assertRegex(linked.output, r"[Uu]ndefined reference")


@unittest.skipIf(NVCC is None, "needs nvcc")
class CorrectCodePasses(unittest.TestCase):
    """Every lab's reference solution and starter: nothing refused, for the oldest architecture the kit
    supports and for the H100's (from 9.0 the device linker's own tables appear as imports)."""

    def test_solutions_and_starters(self):
        with tempfile.TemporaryDirectory(prefix="clean-") as tmp:
            builds = {}
            for lab in registry.all_labs().values():
                for kind, folder, arch in (("solution", paths.solution_dir(lab.name), "90"),
                                           ("solution", paths.solution_dir(lab.name), "75"),
                                           ("starter", starters.pristine(lab.name), "75")):
                    builds[(lab.name, kind, arch)] = (lab, read(os.path.join(folder, first_cu(lab))),
                                                      os.path.join(tmp, lab.name + kind + arch), arch)
            for (name, kind, arch), (src, out, made) in build_objects(builds).items():
                lab = builds[(name, kind, arch)][0]
                with self.subTest(lab=name, kind=kind, arch=arch):
                    self.assertTrue(made.ok, made.output[-2000:])
                    self.assertEqual([], objects.refusals(lab.imports, out, [first_cu(lab)], src))


class ElfReading(unittest.TestCase):
    def test_not_elf(self):
        with self.assertRaises(elf.ElfError):
            elf.Elf(b"not an object file at all, just text" * 4)

    def test_names(self):
        self.assertEqual("entry_kernel", objects.base_name("_Z12entry_kernelPyi"))
        self.assertEqual("early", objects.base_name("_ZL5earlyv"))
        self.assertEqual("write", objects.base_name("write"))
        self.assertEqual("cudaGetLastError", objects.device_call_name("__cudaCDP2GetLastError"))
        self.assertEqual("cudaLaunchDeviceV2", objects.device_call_name("__cudaCDP2LaunchDeviceV2_ptsz"))

    def test_allowed_imports(self):
        none = objects.Imports()
        for name in ("printf", "cudaMalloc", "cudaMemcpy_ptds", "_Z13kit_fail_cuda9cudaErrorPKcS1_i",
                     "__cudaRegisterLinkedBinary_0890c490_20_x_cu_8111140b", "_ZNSt13runtime_errorC2EPKc",
                     "_ZSt21ios_base_library_initv"):
            self.assertTrue(objects.host_import_allowed(name, none), name)
        for name in ("write", "dup2", "open", "fopen", "fdopen", "dlsym", "syscall", "mmap", "mprotect", "ptrace",
                     "getenv", "fork", "cudaGetDriverEntryPoint", "kit_launch_log_reset", "_ZNSt14basic_ofstreamIcE4openEv"):
            self.assertFalse(objects.host_import_allowed(name, none), name)
        self.assertTrue(objects.host_import_allowed("usleep", objects.Imports(host=["usleep"])))
        self.assertTrue(objects.device_import_allowed("__cudaCDP2LaunchDeviceV2", none))
        self.assertTrue(objects.device_import_allowed("__cudaCDP2LaunchDeviceV2_ptsz", none))
        for name in ("__UDT_OFFSET", "__UFT", ".nv.reservedSmem.offset0"):  # the device linker's, from sm_90
            self.assertTrue(objects.device_import_allowed(name, none), name)
        self.assertFalse(objects.device_import_allowed("kit_launch_log", none))
        self.assertTrue(objects.device_import_allowed("_Z11report_rectiiii", objects.Imports(device=["report_rect"])))


if __name__ == "__main__":
    unittest.main()
