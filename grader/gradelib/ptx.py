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

# call.uni (retval0), name, (args);   the parts may be split across lines.
_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$%][\w$]*)")


def called_functions(ptx_text):
    """The set of function names that call instructions in the PTX name."""
    return set(_CALL.findall(ptx_text))


def count_calls(ptx_text, name):
    return sum(1 for m in _CALL.finditer(ptx_text) if m.group(1) == name)
