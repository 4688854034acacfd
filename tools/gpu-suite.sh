#!/usr/bin/env bash
# The kit on a machine with a GPU, in one call: build everything, run the whole test suite
# (CPU and GPU tests), the timing figures, and print a short table last.
#
#   tools/gpu-suite.sh            logs go to $OUT if set, else build/gpu-suite/
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-suite}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

{ nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv; nvcc --version | tail -n 2; } \
    > "$OUT/machine.txt" 2>&1
make doctor > "$OUT/doctor.txt" 2>&1
make all > "$OUT/build-all.log" 2>&1; build_status=$?

make test CTEST_ARGS="-j4 --output-on-failure --output-junit $OUT/ctest-junit.xml" > "$OUT/ctest.log" 2>&1
test_status=$?

python3 tools/lab_timing.py "$OUT" > "$OUT/timing.log" 2>&1; timing_status=$?

python3 grader/grade.py --submission solutions --seed 2026 --json "$OUT/grade-solutions.json" \
    > "$OUT/grade-solutions.txt" 2>&1; grade_status=$?

echo "================ GPU suite ================"
cat "$OUT/machine.txt"
echo
sed -n '/tests passed/,$p' "$OUT/ctest.log"
grep -E '^\s*[0-9]+/[0-9]+ Test' "$OUT/ctest.log" | sed 's/^ *//' | sort -t'#' -k2 -n
echo
cat "$OUT/timing.md" 2>/dev/null || cat "$OUT/timing.log"
echo
printf '%-24s %s\n' "make all" "$build_status" "make test" "$test_status" "timing" "$timing_status" \
    "grade solutions (exit)" "$grade_status"
[ "$build_status" = 0 ] && [ "$test_status" = 0 ] && [ "$timing_status" = 0 ] && [ "$grade_status" = 0 ]
