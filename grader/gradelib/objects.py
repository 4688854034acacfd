"""What a student's built objects may import, define and run: checked on the objects the build wrote,
before anything of them runs.

A student's code shares the harness's process, so the grader believes its evidence only if the code
cannot reach what writes it. The compiler says what an object needs from outside it (its undefined
symbols), what it adds to the program (its defined ones) and what runs before main (.init_array and
its kin). A student object may:
- import, on the host, what nvcc and g++ put in every object, the C library's printing, memory and
  maths functions, and the CUDA runtime calls of HOST_RUNTIME plus its lab's own (Imports.host);
- import, on the device, the device runtime calls of DEVICE_RUNTIME and the kit functions its lab's
  header declares for it (Imports.device), besides the kit's launch checks;
- define functions of C++ linkage (the lab's functions, its own helpers) and variables of its own, but
  no name a library of the program defines (a write, fflush or cudaMemcpy of its own would stand in for
  the real one in the kit's code too);
- run nothing before main but the registration nvcc adds to every object;
- make no system call of its own (a syscall instruction).
Anything else is refused, one line per finding, naming the symbol and, where the source shows it, its
line. Each lab's Imports are part of its contract: its README shows them (a generated block).
"""
import os
import re
import shutil
import subprocess

from . import elf


class Imports:
    """A lab's own imports beyond the common ones: host and device function names (plain, as the
    source writes them)."""

    def __init__(self, host=(), device=()):
        self.host = frozenset(host)
        self.device = frozenset(device)


# What nvcc and g++ put into an object whatever its source says: kernel registration and launch
# stubs, C++ runtime support (exceptions, guards of local statics), and calls a compiler may emit on
# its own (memcpy, memset, stack protection).
COMPILER_HOST = frozenset("""
__cudaRegisterFunction __cudaRegisterVar __cudaRegisterManagedVar __cudaRegisterFatBinary
__cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary __cudaInitModule __cudaPushCallConfiguration
__cudaPopCallConfiguration __cudaLaunchKernel __cudaGetKernel cudaLaunchKernel cudaLaunchKernel_ptsz
__cxa_guard_acquire __cxa_guard_release __cxa_guard_abort __cxa_atexit atexit __dso_handle
__gxx_personality_v0 _Unwind_Resume __cxa_begin_catch __cxa_end_catch __cxa_rethrow
__cxa_call_terminate __cxa_call_unexpected __cxa_allocate_exception __cxa_free_exception __cxa_throw
_ZSt9terminatev __stack_chk_fail memcpy memset memmove _GLOBAL_OFFSET_TABLE_ __assert_fail kit_fail_cuda
""".split())
# The C++ library's names that the CUDA toolkit's own headers (CUB, libcu++) import: its exception
# classes, the type information their throws use, and <iostream>'s initializer object (g++ 13 and newer:
# a reference to std::ios_base_library_init instead).
TOOLKIT_HEADERS_MANGLED = re.compile(
    r"^_Z(TI|TV|TS|N|NK)?(St\d+(runtime_error|logic_error|exception|bad_alloc|invalid_argument|out_of_range|"
    r"length_error|overflow_error)|N10__cxxabiv1\d+\w*class_type_info|NSt8ios_base4Init[CD]1|St21ios_base_library_initv)")
COMPILER_HOST_PREFIXES = ("__cudaRegisterLinkedBinary_",)

# The C library a lab's host code may use: printing to the terminal, host memory, maths. No files, no
# descriptors, no processes, no environment, no dynamic loading.
C_LIBRARY = frozenset("""
printf puts putchar fprintf fputs fputc fflush vprintf vfprintf snprintf sprintf vsnprintf stdout stderr
malloc calloc realloc free memcmp strlen strcmp strncmp strcpy strncpy strchr strstr qsort abs labs llabs
exit abort rand srand
sqrt sqrtf pow powf exp expf exp2 exp2f log logf log2 log2f log10 log10f floor floorf ceil ceilf fabs fabsf
fmin fminf fmax fmaxf fmod fmodf hypot hypotf sin sinf cos cosf tan tanf atan2 atan2f round roundf lround
lroundf llround llroundf trunc truncf cbrt cbrtf ldexp ldexpf frexp frexpf
_Znwm _Znam _ZdlPv _ZdaPv _ZdlPvm _ZdaPvm
""".split())
# Their fortified forms (a compiler with _FORTIFY_SOURCE calls these instead).
FORTIFIED = frozenset("__%s_chk" % name for name in
                      "printf fprintf vprintf vfprintf snprintf sprintf vsnprintf memcpy memset memmove strcpy "
                      "strncpy".split())

# The CUDA runtime's host calls any lab's host code may make: errors, devices and their limits, device
# memory and copies (a symbol's too: only the student's own symbols are in reach), streams, events,
# kernel attributes and occupancy. Not the driver's entry points, modules or libraries, IPC, or a
# device reset.
HOST_RUNTIME = frozenset("""
cudaGetLastError cudaPeekAtLastError cudaGetErrorString cudaGetErrorName cudaDeviceSynchronize
cudaGetDevice cudaGetDeviceCount cudaGetDeviceProperties cudaDeviceGetAttribute cudaDeviceGetLimit
cudaDeviceSetLimit cudaRuntimeGetVersion cudaDriverGetVersion cudaMemGetInfo
cudaMalloc cudaFree cudaMallocHost cudaFreeHost cudaHostAlloc cudaMallocManaged cudaMallocAsync cudaFreeAsync
cudaMemcpy cudaMemcpyAsync cudaMemset cudaMemsetAsync cudaMemcpyToSymbol cudaMemcpyFromSymbol
cudaMemcpyToSymbolAsync cudaMemcpyFromSymbolAsync cudaGetSymbolAddress cudaGetSymbolSize
cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority cudaStreamDestroy cudaStreamSynchronize
cudaStreamQuery cudaStreamWaitEvent cudaStreamGetFlags
cudaEventCreate cudaEventCreateWithFlags cudaEventDestroy cudaEventRecord cudaEventRecordWithFlags
cudaEventSynchronize cudaEventQuery cudaEventElapsedTime
cudaFuncGetAttributes cudaFuncSetAttribute cudaFuncSetCacheConfig cudaOccupancyMaxActiveBlocksPerMultiprocessor
cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags cudaOccupancyMaxPotentialBlockSize cudaSetDevice
""".split())
# Per-thread default stream builds (nvcc --default-stream per-thread) call these forms.
PER_THREAD_SUFFIXES = ("_ptsz", "_ptds")

# The device runtime's calls a lab's device code may make (named as the source names them; the
# compiler may call them __cudaCDP2NAME), device printf, malloc and assert, and the kit's launch checks.
DEVICE_RUNTIME = frozenset("""
cudaGetLastError cudaPeekAtLastError cudaGetParameterBuffer cudaGetParameterBufferV2 cudaLaunchDevice
cudaLaunchDeviceV2 cudaStreamCreateWithFlags cudaStreamDestroy cudaGetDevice cudaDeviceGetAttribute
cudaDeviceGetLimit cudaMalloc cudaFree cudaGetErrorString cudaGetErrorName cudaEventCreateWithFlags
cudaEventRecord cudaEventRecordWithFlags cudaEventDestroy cudaStreamWaitEvent cudaMemcpyAsync cudaMemsetAsync
vprintf malloc free __assertfail kit_check_launch kit_record_call_result
""".split())

# Names nvcc and g++ give the symbols they define in every object.
COMPILER_DEFINED = re.compile(r"^(__fatbinwrap_|__cuda|__nv|hostRef|fatbinData|DW\.ref\.|\.)")
# Mangled names of the C++ library's own: operator new and delete, std::, the ABI's.
LIBRARY_MANGLED = re.compile(r"^_Z(n[wa]|d[la]|St|NSt|NKSt|TISt|TSSt|TVSt|N9__gnu_cxx|N10__cxxabiv1)")
# What runs before or after main beside .init_array.
RUN_AROUND_MAIN = (".preinit_array", ".ctors", ".dtors", ".fini_array", ".init", ".fini")
# The one function nvcc puts in .init_array: it registers the object's kernels with the runtime.
NVCC_REGISTRATION = "__sti____cudaRegisterAll"
SYSCALL = re.compile(r"\t(syscall|sysenter|int\s+\$0x80)\b")


def base_name(symbol):
    """The plain name of a function or variable: _Z12entry_kernelPyi -> entry_kernel (a name at file
    scope, internal or not); other names as they are."""
    m = re.match(r"_ZL?(\d+)", symbol)
    if m:
        length = int(m.group(1))
        return symbol[m.end():m.end() + length]
    return symbol


def _without_per_thread_suffix(name):
    """cudaMemcpy_ptds -> cudaMemcpy: a per-thread default stream build calls these forms."""
    for suffix in PER_THREAD_SUFFIXES:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def device_call_name(symbol):
    """A device runtime call as the source names it: __cudaCDP2GetLastError -> cudaGetLastError."""
    name = _without_per_thread_suffix(base_name(symbol))
    return "cuda" + name[len("__cudaCDP2"):] if name.startswith("__cudaCDP2") else name


def host_import_allowed(name, imports):
    plain = base_name(_without_per_thread_suffix(name))
    return (plain in COMPILER_HOST or plain in C_LIBRARY or plain in FORTIFIED or plain in HOST_RUNTIME
            or plain in imports.host or plain.startswith(COMPILER_HOST_PREFIXES)
            or bool(TOOLKIT_HEADERS_MANGLED.match(plain)))


# What the device linker itself defines (from compute capability 9.0: the unified function and data
# tables, reserved shared memory); every object of such an architecture refers to them.
DEVICE_LINKER_DEFINED = re.compile(r"^(__U[DF]T(_CANONICAL|_END|_OFFSET)?|\.nv\..*)$")


def device_import_allowed(name, imports):
    plain = device_call_name(name)
    return plain in DEVICE_RUNTIME or plain in imports.device or bool(DEVICE_LINKER_DEFINED.match(name))


def _where(name, sources):
    """' (FILE line N)' for the first line of the student's sources that names name, else ''."""
    word = re.compile(r"\b%s\b" % re.escape(name))
    for path in sources:
        try:
            with open(path, errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if word.search(re.sub(r"//.*", "", line)):
                        return " (%s line %d)" % (os.path.basename(path), number)
        except OSError:
            pass
    return ""


# What g++'s initializer for <iostream> (which a toolkit header may include) refers to, and nothing else.
IOSTREAM_INIT = frozenset(("_ZNSt8ios_base4InitC1Ev", "_ZNSt8ios_base4InitD1Ev", "__cxa_atexit", "__dso_handle",
                           "_ZStL8__ioinit"))


def _only_iostream_init(obj, function):
    """Whether an initializer only constructs <iostream>'s std::ios_base::Init object: every symbol
    its code refers to is one of IOSTREAM_INIT or data (no other function, no code section)."""
    seen = set()
    for offset, sym, _ in obj.relocations(obj.sections[function.section]):
        if function.value <= offset < function.value + function.size and sym is not None:
            target_section = obj.sections[sym.section] if 0 < sym.section < len(obj.sections) else None
            if sym.name:
                seen.add(sym.name)
            elif target_section is None or target_section.flags & elf.SHF_EXECINSTR:
                return False
    return "_ZNSt8ios_base4InitC1Ev" in seen and seen <= IOSTREAM_INIT


# The C library's variables a program may refer to; a definition of one would stand in for the library's.
C_LIBRARY_DATA = frozenset("stdin stdout stderr environ __environ errno optarg optind program_invocation_name".split())


def _replaces_library_name(sym):
    """Whether a symbol the object defines for the whole program could stand in for a library's: a
    function of C linkage (C++ names are mangled, so no library defines the student's), one of the C++
    library's own mangled names, or one of the C library's variables. A variable of the student's own
    (a __device__ variable's host shadow, say) is named plainly and is no library's."""
    if sym.undefined or sym.section == elf.SHN_UNDEF or sym.bind not in (elf.STB_GLOBAL, elf.STB_WEAK) or not sym.name:
        return False
    if COMPILER_DEFINED.match(sym.name):
        return False
    if sym.name.startswith("_Z"):
        return bool(LIBRARY_MANGLED.match(sym.name))
    return sym.kind != elf.STT_OBJECT or sym.name in C_LIBRARY_DATA


def host_findings(obj, imports, sources):
    """What is refused in one host object (an elf.Elf), as lines."""
    found = []
    for sym in obj.symbols:
        if sym.undefined and not host_import_allowed(sym.name, imports):
            found.append("imports %s%s: not among the calls this lab's code may make"
                         % (base_name(sym.name), _where(base_name(sym.name), sources)))
        elif sym.kind == elf.STT_GNU_IFUNC:
            found.append("defines %s as an indirect function, which the loader runs before main%s"
                         % (sym.name, _where(base_name(sym.name), sources)))
        elif _replaces_library_name(sym):
            found.append("defines %s, a name a library of the program defines: it would stand in for the library's "
                         "in the kit's code too%s" % (sym.name, _where(base_name(sym.name), sources)))
    init = obj.section_named(".init_array")
    if init is not None:
        for _, sym, addend in obj.relocations(init):
            target = obj.function_at(sym.section, sym.value + addend) if sym is not None else None
            name = target.name if target is not None else (sym.name if sym is not None and sym.name else "?")
            if NVCC_REGISTRATION not in name and not (target is not None and _only_iostream_init(obj, target)):
                found.append("runs %s before main (a constructor or a static initializer)%s"
                             % (base_name(name), _where(base_name(name), sources)))
    for section in obj.sections:
        if section.name in RUN_AROUND_MAIN or section.name.startswith(tuple(s + "." for s in RUN_AROUND_MAIN)):
            found.append("has a %s section: code that runs before or after main" % section.name)
    return found


def syscall_findings(path):
    """System-call instructions in a host object's code, found by objdump where the machine has it."""
    objdump = shutil.which("objdump")
    if objdump is None:
        return []
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True, check=False).stdout
    return ["makes a system call of its own (%s)" % m.group(1) for m in SYSCALL.finditer(out)][:1]


def device_findings(cubin, imports, sources):
    found = []
    for sym in cubin.symbols:
        if sym.undefined and not device_import_allowed(sym.name, imports):
            found.append("device code imports %s%s: not among the kit functions and device runtime calls this "
                         "lab's code may use" % (base_name(sym.name), _where(base_name(sym.name), sources)))
    return found


def refusals(imports, build_dir, student_cu_files, src_dir):
    """What the student's objects in build_dir (built from student_cu_files, staged in src_dir) do that
    the lab does not allow, as one line each, prefixed with the file; [] when nothing. The device code
    is read from the .cubin the build kept beside each object (kit.mk)."""
    found = []
    sources = [os.path.join(src_dir, name) for name in student_cu_files]
    for name in student_cu_files:
        stem = name[:-len(".cu")]
        obj_path = os.path.join(build_dir, stem + ".o")
        lines = []
        try:
            lines += host_findings(elf.read(obj_path), imports, sources)
        except (OSError, elf.ElfError) as e:
            lines.append("its object could not be read (%s)" % e)
        lines += syscall_findings(obj_path)
        device_dir = os.path.join(build_dir, stem + ".device")
        cubins = sorted(f for f in os.listdir(device_dir) if f.endswith(".cubin")) if os.path.isdir(device_dir) else []
        if not cubins:  # kit.mk keeps it with every student object: the kit's problem, not the student's
            raise RuntimeError("the build kept no device code of %s in %s" % (name, device_dir))
        for cubin in cubins:
            try:
                lines += device_findings(elf.read(os.path.join(device_dir, cubin)), imports, sources)
            except (OSError, elf.ElfError) as e:
                lines.append("its device code could not be read (%s)" % e)
        found += ["%s: %s" % (name, line) for line in dict.fromkeys(lines)]
    return found
