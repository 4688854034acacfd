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
DEVICE_GRAPH_LAUNCH = "cudaGraphLaunch"
# KIT_CHECK_DEVICE's recorder (kit_launch_log.h), by its exact symbol: a function of the student's of the
# same name in a namespace or with other parameters is another symbol, and the kit's own cannot be defined twice.
DEVICE_CALL_RECORDER = "_Z22kit_record_call_result9cudaErrori"

# The stream argument of a device launch, when it is a constant (cuda_device_runtime_api.h).
NULL_STREAM = 0
TAIL_LAUNCH_STREAM = 3       # cudaStreamTailLaunch
FIRE_AND_FORGET_STREAM = 4   # cudaStreamFireAndForget
UNREAD_STREAM = -1           # a launch whose stream operand the grader could not read: no check accepts it
UNREAD_STREAM_NAME = "a stream the grader could not read from the PTX (a grader problem: please report it)"

# call.uni (retval0), name, (args);   the parts may be split across lines.
_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$%][\w$]*)")


def called_functions(ptx_text):
    """The set of function names that call instructions in the PTX name."""
    return set(_CALL.findall(ptx_text))


def count_calls(ptx_text, name):
    return sum(1 for m in _CALL.finditer(ptx_text) if m.group(1) == name)


# One call sequence: "{ // callseq N ... } // callseq N".
_CALLSEQ = re.compile(r"\{\s*//\s*callseq\s+(\d+).*?\}\s*//\s*callseq\s+\1\b", re.S)
# The launch's second parameter, its stream: "[param1+0]", or "[param1]" where a toolkit writes no
# offset (CUDA 13.0 for sm_100 and sm_120).
_STREAM_PARAM = re.compile(r"st\.param\.b64\s+\[param1(?:\+0)?\],\s*([^;]+);")


def launch_stream_operands(ptx_text):
    """The stream operand of every device-side launch, in order, as the PTX writes it: a constant
    ("0", "3", "4") or a register ("%rd7")."""
    operands = []
    for seq in _CALLSEQ.finditer(ptx_text):
        body = seq.group(0)
        if DEVICE_LAUNCH in called_functions(body):
            m = _STREAM_PARAM.search(body)
            operands.append(m.group(1).strip() if m else "")
    return operands


def launch_streams(ptx_text):
    """The stream argument of every device-side launch, in order: an int for a constant stream
    (0 NULL, 3 tail launch, 4 fire-and-forget), None for a stream held in a register (a stream
    the code created), UNREAD_STREAM where the PTX shows neither."""
    return [int(v) if v.isdigit() else None if v.startswith("%") else UNREAD_STREAM
            for v in launch_stream_operands(ptx_text)]


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


# ---- control flow inside one function: order, not only counts ----------------------------------

DEVICE_PEEK_AT_LAST_ERROR = "__cudaCDP2PeekAtLastError"
# KIT_CHECK_LAUNCH() calls the kit's kit_check_launch(int), which reads cudaGetLastError() itself.
KIT_LAUNCH_CHECK = "_Z16kit_check_launchi"
ERROR_QUERIES = (DEVICE_GET_LAST_ERROR, DEVICE_PEEK_AT_LAST_ERROR, KIT_LAUNCH_CHECK)
_LABEL = re.compile(r"^\s*([$\w]+):")
_PREDICATE = re.compile(r"^@!?%\w+\s+")
_BRANCH = re.compile(r"^bra(?:\.uni)?\s+([$\w]+)\s*$")
_BARRIER = re.compile(r"^(?:bar|barrier)(?:\.cta)?\.(?:sync|red)\b")


class Flow:
    """The statements of one function's PTX body and where control can go after each.

    statements[i] is one instruction (comments and call-sequence braces removed); successors[i]
    lists the statements that can run next, END where the function can end there (ret, exit, a
    predicated ret, or the last statement)."""

    END = -1

    def __init__(self, function_text):
        text = re.sub(r"//[^\n]*", "", function_text)
        start, end = text.find("{"), text.rfind("}")
        body = "\n".join(l for l in text[start + 1:end].splitlines() if l.strip() not in ("{", "}"))
        self.statements, labels = [], {}
        for chunk in body.split(";"):
            m = _LABEL.match(chunk)
            while m:
                labels[m.group(1)] = len(self.statements)
                chunk = chunk[m.end():]
                m = _LABEL.match(chunk)
            if chunk.strip():
                self.statements.append(" ".join(chunk.split()))
        n = len(self.statements)
        self.successors = []
        for i, s in enumerate(self.statements):
            predicated = bool(_PREDICATE.match(s))
            op = _PREDICATE.sub("", s)
            after = [i + 1] if i + 1 < n else [self.END]
            if op.startswith(("ret", "exit")):
                nxt = [self.END] + (after if predicated else [])
            elif _BRANCH.match(op):
                target = labels.get(_BRANCH.match(op).group(1), n)
                nxt = ([target] if target < n else [self.END]) + (after if predicated else [])
            elif op.startswith("brx.idx"):  # a jump table: any label
                nxt = sorted(set(t for t in labels.values() if t < n)) + (after if predicated else [])
            else:
                nxt = after
            self.successors.append(nxt)

    def call(self, i):
        """The function statement i calls, or None."""
        m = _CALL.match(_PREDICATE.sub("", self.statements[i]))
        return m.group(1) if m else None

    def is_barrier(self, i):
        return bool(_BARRIER.match(_PREDICATE.sub("", self.statements[i])))

    def reaches_end_avoiding(self, start, stop, bad=lambda i: False):
        """Whether some path from statement start reaches the function's end, or a statement for
        which bad(i) holds, without passing a statement for which stop(i) holds."""
        todo, seen = [start], set()
        while todo:
            i = todo.pop()
            if i == self.END:
                return True
            if i in seen or stop(i):
                continue
            seen.add(i)
            if bad(i):
                return True
            todo += self.successors[i]
        return False


def unchecked_launches(function_text):
    """How many device launches in one function have a path to the function's end, or to another
    launch, on which no cudaGetLastError() (cudaPeekAtLastError(), KIT_CHECK_LAUNCH()) comes first: a check before
    the launch, or on one branch only, does not count."""
    flow = Flow(function_text)
    launches = [i for i in range(len(flow.statements)) if flow.call(i) == DEVICE_LAUNCH]
    count = 0
    for i in launches:
        following = flow.successors[i]
        if any(flow.reaches_end_avoiding(
                j, stop=lambda k: flow.call(k) in ERROR_QUERIES, bad=lambda k: flow.call(k) == DEVICE_LAUNCH)
                for j in following):
            count += 1
    return count


_RESULT_LOAD = re.compile(r"^ld\.param\.b32\s+(%\w+),\s*\[retval0(?:\+0)?\]$")
_FIRST_ARGUMENT = re.compile(r"^st\.param\.b32\s+\[param0(?:\+0)?\],\s*(%\w+)$")
_COPY = re.compile(r"^mov\.[bus]32\s+(%\w+),\s*(%\w+)$")


def unrecorded_results(function_text, callee, recorder):
    """How many calls of callee in one function have a path to the function's end, or to another call
    of callee, on which its result is not passed to recorder (as its first argument, directly or
    through copies): a result ignored, recorded on one branch only, or a recorder called with
    something else."""
    flow = Flow(function_text)
    n = len(flow.statements)
    plain = [_PREDICATE.sub("", s) for s in flow.statements]
    copies = [m.groups() for m in map(_COPY.match, plain) if m]

    def copies_of(register):
        found, grew = {register}, True
        while grew:
            grew = False
            for dst, src in copies:
                if src in found and dst not in found:
                    found.add(dst)
                    grew = True
        return found

    def argument_of(k):  # the register a call at k passes first, from the stores just before it
        for j in range(k - 1, -1, -1):
            if flow.call(j):
                return None
            m = _FIRST_ARGUMENT.match(plain[j])
            if m:
                return m.group(1)
        return None

    count = 0
    for i in (i for i in range(n) if flow.call(i) == callee):
        result = None
        for j in range(i + 1, min(n, i + 4)):
            m = _RESULT_LOAD.match(plain[j])
            if m:
                result = copies_of(m.group(1))
                break
        if result is None or flow.reaches_end_avoiding(
                i + 1 if i + 1 < n else Flow.END,
                stop=lambda k: flow.call(k) == recorder and argument_of(k) in result,
                bad=lambda k: flow.call(k) == callee):
            count += 1
    return count


def barrier_can_be_skipped(function_text):
    """Whether a thread can leave the function without passing a barrier (bar.sync, from
    __syncthreads()) although the function has one; None when it has none."""
    flow = Flow(function_text)
    if not any(flow.is_barrier(i) for i in range(len(flow.statements))):
        return None
    return bool(flow.statements) and flow.reaches_end_avoiding(0, stop=flow.is_barrier)

