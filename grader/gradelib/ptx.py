"""What a PTX file calls. nvcc -ptx needs no GPU, so these checks run everywhere.

Device-side runtime calls show up as calls to extern functions (CUDA 12/13, the CDP2 model):
  __cudaCDP2LaunchDeviceV2       a kernel launch from device code
  __cudaCDP2GetLastError         cudaGetLastError() in device code
  __cudaCDP2StreamCreateWithFlags, __cudaCDP2Malloc, ...
A program built for the legacy model (CDP1) calls cudaLaunchDeviceV2 and cudaDeviceSynchronize
without the prefix.
"""
import re

DEVICE_LAUNCH = "__cudaCDP2LaunchDeviceV2"
DEVICE_GET_LAST_ERROR = "__cudaCDP2GetLastError"
DEVICE_STREAM_CREATE = "__cudaCDP2StreamCreateWithFlags"

# The stream argument of a device launch, when it is a constant (cuda_device_runtime_api.h).
NULL_STREAM = 0
TAIL_LAUNCH_STREAM = 3       # cudaStreamTailLaunch
FIRE_AND_FORGET_STREAM = 4   # cudaStreamFireAndForget

# call.uni (retval0), name, (args);   the parts may be split across lines.
_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$%][\w$]*)")


def called_functions(ptx_text):
    """The set of function names that call instructions in the PTX name."""
    return set(_CALL.findall(ptx_text))


def count_calls(ptx_text, name):
    return sum(1 for m in _CALL.finditer(ptx_text) if m.group(1) == name)


# One call sequence: "{ // callseq N ... } // callseq N".
_CALLSEQ = re.compile(r"\{\s*//\s*callseq\s+(\d+).*?\}\s*//\s*callseq\s+\1\b", re.S)
_STREAM_PARAM = re.compile(r"st\.param\.b64\s+\[param1\+0\],\s*([^;]+);")


def launch_streams(ptx_text):
    """The stream argument of every device-side launch, in order: an int for a constant stream
    (0 NULL, 3 tail launch, 4 fire-and-forget), None for a stream held in a register (a stream
    the code created)."""
    streams = []
    for seq in _CALLSEQ.finditer(ptx_text):
        body = seq.group(0)
        if DEVICE_LAUNCH not in called_functions(body):
            continue
        m = _STREAM_PARAM.search(body)
        value = m.group(1).strip() if m else ""
        streams.append(int(value) if value.isdigit() else None)
    return streams


# ".visible .entry NAME(" ... up to the next entry or function.
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(")


def entries(ptx_text):
    """{mangled kernel name: its PTX text} for every kernel (.entry) in the file."""
    marks = list(_ENTRY.finditer(ptx_text))
    found = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(ptx_text)
        found[m.group(1)] = ptx_text[m.start():end]
    return found


def names(mangled, name):
    """Whether a PTX symbol is the C++-mangled (or extern "C") name of function name."""
    return mangled.startswith("_Z%d%s" % (len(name), name)) or mangled == name


def kernel_text(ptx_text, kernel_name):
    """The PTX of the kernel whose (C++-mangled) name contains kernel_name, or None."""
    for mangled, text in entries(ptx_text).items():
        if names(mangled, kernel_name):
            return text
    return None


# ".visible .func (retval) NAME(", ".func NAME(" (a static function), ".visible .entry NAME(", not ".extern".
_DEFINITION = re.compile(r"^(?:\.(?:visible|weak)\s+)?\.(?:func|entry)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(", re.M)


def definitions(ptx_text):
    """{mangled name: its PTX text} of every function and kernel the file defines, each up to the next."""
    marks = list(_DEFINITION.finditer(ptx_text))
    return {m.group(1): ptx_text[m.start():marks[k + 1].start() if k + 1 < len(marks) else len(ptx_text)]
            for k, m in enumerate(marks)}


def reachable_text(defined, name):
    """The PTX of function name and of every function in defined ({mangled: text}) that it calls,
    directly or not; None when name is not defined."""
    todo = [m for m in defined if names(m, name)]
    if not todo:
        return None
    seen, parts = set(), []
    while todo:
        mangled = todo.pop()
        if mangled in seen:
            continue
        seen.add(mangled)
        parts.append(defined[mangled])
        todo += [f for f in called_functions(defined[mangled]) if f in defined]
    return "\n".join(parts)
