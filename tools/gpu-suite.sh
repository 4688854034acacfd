#!/usr/bin/env bash
# The kit on a machine with a GPU, in one call: build everything, run the whole test suite
# (CPU and GPU tests), the timing figures, and print a short table last.
#
#   tools/gpu-suite.sh [all|tests|figures|throughput|mutants]
#     tests:      make all, make doctor, make test (every CPU and GPU test)
#     figures:    timing and race figures, the solutions graded, what a student sees, recorded
#                 harness documents and the kit-drawn figures
#     throughput: batch-grade a class of 200 Lab 01 submissions (tools/batch_throughput.py)
#     mutants:    mutation testing of the grader (tools/mutants.py) on the labs in MUTANT_LABS
#                 (default: every lab), the solution and alternatives first on 10 seeds each
# CTEST_FILTER="-R ^0[1-4]-" runs part of the tests, for machines where one command may not run
# longer than about 10 minutes (the whole test phase takes longer on one GPU).
# Logs go to build/gpu-suite/; with $OUT set, they are also packed into $OUT/suite.tar.gz.
# Every step has a time limit, so one hang cannot eat the machine's time.
set -uo pipefail
cd "$(dirname "$0")/.."
PHASE=${1:-all}
LOGS=build/gpu-suite
rm -rf "$LOGS"
mkdir -p "$LOGS/recorded"
export PYTHONUNBUFFERED=1
build_status=- test_status=- figures_status=- grade_status=- run_status=- starter_grade_status=- throughput_status=-
mutants_status=-

{ nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv; nvcc --version | tail -n 2; } \
    > "$LOGS/machine.txt" 2>&1
timeout 120 make doctor > "$LOGS/doctor.txt" 2>&1
if [ "$PHASE" = all ] || [ "$PHASE" = tests ]; then
timeout 300 make all > "$LOGS/build-all.log" 2>&1; build_status=$?

timeout 540 make test CTEST_ARGS="-j4 -V --output-junit $PWD/$LOGS/ctest-junit.xml ${CTEST_FILTER:-}" \
    > "$LOGS/ctest.log" 2>&1
test_status=$?
fi

if [ "$PHASE" = all ] || [ "$PHASE" = figures ]; then
timeout 300 python3 tools/measure_thresholds.py "$LOGS" > "$LOGS/figures.log" 2>&1; figures_status=$?

timeout 120 python3 grader/grade.py --submission solutions --seed 2026 --json "$LOGS/grade-solutions.json" \
    > "$LOGS/grade-solutions.txt" 2>&1; grade_status=$?

# What a student sees: make run and make grade on the starter as shipped (make exits 2: points lost).
timeout 120 make run LAB=01 ARGS="--K 4 --M 8 --N 1000" > "$LOGS/make-run-01.txt" 2>&1; run_status=$?
timeout 120 make grade LAB=01 GRADE_ARGS="--seed 7" > "$LOGS/make-grade-01-starter.txt" 2>&1
starter_grade_status=$?

# Harness result documents kept as recorded inputs for the grader's unit tests: the solution and
# every known-wrong submission of each lab, at small sizes.
record() { # lab, harness arguments...
    lab=$1; shift
    program=$(make -s --no-print-directory -f "labs/$lab/Makefile" print-lab | sed -n 's/^PROGRAM=//p')
    for sub in "solutions/$lab" solutions/incorrect/"$lab"/*/ solutions/alternative/"$lab"/*/; do
        [ -d "$sub" ] || continue
        name=$(basename "$sub")
        [ "$sub" = "solutions/$lab" ] && name=solution
        timeout 120 make --no-print-directory -f "labs/$lab/Makefile" SRC_DIR="$PWD/$sub" \
            BUILD_DIR="$PWD/build/recorded/$lab/$name" all > /dev/null 2>&1 &&
        timeout 20 "build/recorded/$lab/$name/$program" "$@" \
            --json "$LOGS/recorded/lab${lab%%-*}-$name.json" > /dev/null 2>&1
    done
}
record 01-divergent-counter --K 5 --M 3 --N 7 --repeats 0
record 02-memory-visibility --blocks 8 --trials 1 --n 300 --threads 128
record 03-nested-recursion --blocks 2 --threads 6 --depth 2500 --print 0
record 04-bezier-streams --lines 300 --factor 64 --max 256 --seed 5

# The handout's figure of tessellated curves, drawn by the kit from the solution's vertices.
timeout 60 build/recorded/04-bezier-streams/solution/bezier --lines 60 --factor 64 --max 256 --seed 3 \
    --svg "$LOGS/04-bezier-curves.svg" > /dev/null 2>&1
timeout 120 build/recorded/04-bezier-streams/solution/bezier --bench 1 --max 1048576 --repeats 5 \
    > "$LOGS/bench-04.txt" 2>&1

fi

if [ "$PHASE" = throughput ]; then
timeout 560 python3 tools/batch_throughput.py "$LOGS" 200 > "$LOGS/throughput.log" 2>&1; throughput_status=$?
fi

if [ "$PHASE" = mutants ]; then
mutants_status=0
for lab in ${MUTANT_LABS:-01 02 03 04 05 06}; do
    timeout "${MUTANT_TIMEOUT:-560}" python3 tools/mutants.py "$lab" --baseline-seeds "${BASELINE_SEEDS:-10}" \
        --out "$LOGS/mutants/$lab" > "$LOGS/mutants-$lab.log" 2>&1 || mutants_status=1
done
fi

echo "================ GPU suite ($PHASE) ================"
cat "$LOGS/machine.txt"
echo
if [ -f "$LOGS/ctest.log" ]; then
    sed -n '/tests passed/,$p' "$LOGS/ctest.log"
    grep -E '^\s*[0-9]+/[0-9]+ Test' "$LOGS/ctest.log" | sed 's/^ *//' | sort -t'#' -k2 -n
fi
echo
case $PHASE in
    all|figures) cat "$LOGS/figures.md" 2>/dev/null || tail -n 20 "$LOGS/figures.log" ;;
    throughput) head -n 20 "$LOGS/throughput.log" ;;
    mutants) for f in "$LOGS"/mutants-*.log; do grep -E '^(baseline .*LOST|operator|all \(|PROBLEM|[a-z-]+ +[0-9])' "$f"; done ;;
esac
echo
printf '%-30s %s\n' "make all" "$build_status" "make test" "$test_status" "figures" "$figures_status" \
    "grade solutions (exit)" "$grade_status" "make run LAB=01" "$run_status" \
    "make grade LAB=01, starter (2)" "$starter_grade_status" "batch throughput" "$throughput_status" \
    "mutants" "$mutants_status"
[ -n "${OUT:-}" ] && tar -czf "$OUT/suite.tar.gz" -C build gpu-suite
ok() { [ "$1" = 0 ] || [ "$1" = - ]; }
ok "$build_status" && ok "$test_status" && ok "$figures_status" && ok "$grade_status" && ok "$throughput_status" &&
    ok "$mutants_status"
