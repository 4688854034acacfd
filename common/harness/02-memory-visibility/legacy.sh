#!/bin/sh
# Compiles the textbook's device-side cudaDeviceSynchronize() three ways and shows what nvcc says:
#   1. today's default (CDP2) for the GPU generation of the H100/H200 (sm_90): an error;
#   2. the deprecated opt-in -DCUDA_FORCE_CDP1_IF_SUPPORTED for sm_80: builds, with a warning;
#   3. the same opt-in for sm_90: still an error (CDP1 does not exist there).
# Exit status 0 when the toolkit behaves as the handout says, 1 otherwise.
NVCC=$1
SOURCE=$2
OUT_DIR=$3
mkdir -p "$OUT_DIR"
status=0

attempt() { # title, expected (fails|builds), nvcc arguments...
    title=$1; expected=$2; shift 2
    echo "== $title"
    echo "\$ nvcc $* $(basename "$SOURCE")"
    if "$NVCC" "$@" "$SOURCE" -o "$OUT_DIR/textbook_sync" -lcudadevrt > "$OUT_DIR/log.txt" 2>&1; then
        result=builds
    else
        result=fails
    fi
    grep -v '^$' "$OUT_DIR/log.txt" | sed 's/^/    /' | head -n 12
    echo "    -> $result (the handout says: $expected)"
    echo
    [ "$result" = "$expected" ] || status=1
}

"$NVCC" --version | tail -n 2
echo
attempt "1. CUDA 12+ default (CDP2), sm_90" fails -rdc=true -arch=sm_90
attempt "2. deprecated CDP1 opt-in, sm_80" builds -rdc=true -arch=sm_80 -DCUDA_FORCE_CDP1_IF_SUPPORTED
attempt "3. deprecated CDP1 opt-in, sm_90" fails -rdc=true -arch=sm_90 -DCUDA_FORCE_CDP1_IF_SUPPORTED
if [ $status -eq 0 ]; then
    echo "As the handout says: device-side cudaDeviceSynchronize() is gone from CUDA 12 on; the opt-in"
    echo "brings it back only for GPUs before compute capability 9.0. Use cudaStreamTailLaunch instead."
else
    echo "This toolkit does not behave as the handout describes (it was written for CUDA 12.x/13.x)."
fi
exit $status
