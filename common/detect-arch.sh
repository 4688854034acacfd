#!/bin/sh
# Prints the compute capability to build for, as digits (90 for an H100/H200).
# The GPU present wins, capped at the newest architecture this nvcc knows; with no GPU, 75
# (the oldest CUDA 13 supports): code built for sm_75 carries PTX that newer GPUs compile at load.
NVCC=${NVCC:-nvcc}
default=75
gpu=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
case "$gpu" in
    '' | *[!0-9]*) echo "$default"; exit 0 ;;
esac
known=$("$NVCC" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_\([0-9]*\)$/\1/p' | sort -n)
best=""
for a in $known; do
    [ "$a" -le "$gpu" ] && best=$a
done
echo "${best:-$gpu}"
