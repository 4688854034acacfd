#!/usr/bin/env bash
# The kit on a machine with a GPU, in one call: build everything, run the whole test suite
# (CPU and GPU tests), the timing figures, and print a short table last.
#
#   tools/gpu-suite.sh [PHASE ...]   (default: all; several run in the order below, e.g. "mutants thresholds")
#     phases: all tests thresholds figures costs memcheck feedback throughput hostile busy sandbox mutants
#     tests:      make all, make doctor, make test (every CPU and GPU test; the JUnit file and the probe's
#                 document are what tools/suite_summary.py sums up into handouts/figures/data/suite.json)
#     thresholds: both sides of the grader's timing thresholds and the races (tools/measure_thresholds.py;
#                 THRESHOLD_LABS="lab07" for some labs, the others kept as recorded)
#     figures:    the solutions graded, what a student sees, the recorded harness documents of every
#                 submission and the handout figures drawn from them, the bench tables of Labs 04, 07 and 08 (data/bench-0N.json)
#     costs:      make costs, what launches and device malloc cost here (data/costs.json); "all" runs it too
#     memcheck:   what compute-sanitizer's memcheck costs on each lab's memcheck case, and its verdict on each
#                 solution and memcheck known-wrong submission (tools/memcheck_costs.py, data/memcheck.json); "all"
#                 runs it too
#     feedback:   the feedback pages (grade.py --html) of each lab's solution and one known-wrong submission,
#                 graded here; tools/browser_check.py looks at them in Chromium where there is one (this
#                 machine may have none: the pages come back in the logs, and are kept in
#                 grader/tests/data/feedback/, which the browser test checks)
#     throughput: batch-grade a class of 200 submissions of each lab (THROUGHPUT_LABS="01 05" for some, CLASS_SIZE=N
#                 for another size, CLASS_LIMIT=SEC to stop each batch there, CLASS_DEADLINE=SEC the phase;
#                 tools/batch_throughput.py) on the first GPU, then on every GPU of a host of several (CLASS_SPREAD="05;03 08":
#                 each GPU its share of the labs, side by side): time, each phase's cost, every verdict as
#                 expected; data/class-scale.json gathers them (with the latency phase's, where it runs)
#     hostile:    each lab's hostile class in the sandbox (grader/selftest.py hostile; HOSTILE_LABS="01 02"
#                 for some labs): every verdict right, no breach of grader/README.md's "Trust the result"
#     busy:       each lab's solution graded on 10 seeds (BUSY_SEEDS=N), and each alternative, beside the load of
#                 tools/busy_host.py (BUSY_LABS="05" for some labs): every grading must have full marks
#     sandbox:    the same class of Lab 01 without the sandbox, on a throwaway copy of the kit (it must show
#                 breaches: the hostile test can fail), and the sandbox's cost on a class of Lab 01
#                 submissions, with and without it, alternating (data/sandbox-cost.json)
#     mutants:    mutation testing of the grader (tools/mutants.py) on the labs in MUTANT_LABS (default: every lab
#                 in labs/), the solution and alternatives graded on 10 seeds each among the mutants (a busy host);
#                 each run's recorded form lands in data/mutants/, for grader/tests/data/mutants/
#     latency:    what a student waits for: each lab's solution graded as make grade grades it, cold (an empty
#                 build cache) and warm (tools/batch_throughput.py --latency, data/latency.json); run it on an idle GPU
#     walk:       the student kit as a student meets it: make dist, unpacked elsewhere, then from its README
#                 make doctor, make grade LAB=01 on the starter, a known-wrong and the reference, make run LAB=01,
#                 make handouts; every output and feedback page kept in walk/
#     record:     everything a lab records on a GPU, copied into place in this checkout: the mutants phase on
#                 MUTANT_LABS, their timing thresholds (where tools/measure_thresholds.py measures them; copied
#                 when this GPU is the one handouts/figures/data/thresholds.json names) and every lab's recorded
#                 result documents (grader/tests/data/recorded/); what the test NN-recorded reads
# CTEST_FILTER="-R ^0[1-4]-" runs part of the tests; CTEST_JOBS=N runs N tests at once (default: one per core).
# Logs go to build/gpu-suite/ (SUITE_NAME=NAME: build/NAME/, so that two calls can run side by side, each
# on its GPU); with $OUT set, they are also packed into $OUT/NAME.tar.gz (suite.tar.gz). The documents
# the kit's pages quote land in build/gpu-suite/data/: copied to handouts/figures/data/, the pages'
# markers are checked against them (tools/quoted_figures.py).
# Every step has a time limit, so one hang cannot eat the machine's time.
set -uo pipefail
cd "$(dirname "$0")/.."
every_lab=$(ls labs | sed -n 's/^\([0-9][0-9]\)-.*/\1/p')  # every lab's number: "01 02 ..."
PHASE=${*:-all}
case " $PHASE " in *" record "*)  # the phases it is made of
    PHASE="$PHASE mutants"
    record_labs=${MUTANT_LABS:-$every_lab}
    THRESHOLD_LABS=$(for n in $record_labs; do grep -q "^def lab$n(" tools/measure_thresholds.py && echo "lab$n"; done)
    [ -n "$THRESHOLD_LABS" ] && PHASE="$PHASE thresholds" ;;
esac
# wants X: X is one of the phases asked for ("all" covers those it names below).
wants() { case " $PHASE " in *" $1 "*) return 0 ;; esac; [ "${2:-}" = all ] && case " $PHASE " in *" all "*) return 0 ;; esac; return 1; }
SUITE_NAME=${SUITE_NAME:-gpu-suite}
LOGS=build/$SUITE_NAME
rm -rf "$LOGS"
mkdir -p "$LOGS/recorded" "$LOGS/data"
keep_logs() { [ -z "${OUT:-}" ] || { tar -czf "$OUT/.suite-$BASHPID.tgz" -C build "$SUITE_NAME" &&
                                     mv "$OUT/.suite-$BASHPID.tgz" "$OUT/${SUITE_NAME/gpu-suite/suite}.tar.gz"; }; }
export PYTHONUNBUFFERED=1
# What the grader said of each known-wrong submission (grader/selftest.py caught), for the handouts'
# Common mistakes tables: copied to grader/tests/data/verdicts/.
export KIT_VERDICTS_OUT="$PWD/$LOGS/verdicts"
build_status=- test_status=- thresholds_status=- grade_status=- run_status=- starter_grade_status=- throughput_status=-
mutants_status=- draw_status=- costs_status=- bench_status=- feedback_status=- hostile_status=- breach_status=-
sandbox_status=- busy_status=-
cost_status=- memcheck_status=- walk_status=- latency_status=-

{ nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv; nvcc --version | tail -n 2; } \
    > "$LOGS/machine.txt" 2>&1
# Two calls side by side build the same objects of this checkout (nvcc's --keep files among them): one at a time.
built_alone() { flock build/.gpu-suite-build.lock "$@"; }
built_alone timeout 120 make doctor > "$LOGS/doctor.txt" 2>&1
cp build/probe/sm_*/probe.json "$LOGS/probe.json" 2>/dev/null
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
every_gpu=$(seq 0 $((gpus - 1)) | paste -sd' ')  # their CUDA_VISIBLE_DEVICES entries: "0 1 2 3"
if wants tests all; then
built_alone timeout 300 make all > "$LOGS/build-all.log" 2>&1; build_status=$?

# Tests side by side: the grader's GPU gate (gradelib/gpushare.py) lets runs that time nothing share the
# GPU and gives a timing run the GPU alone, across every test's grader. On a host with several GPUs, each
# takes a share of the labs' tests (the first also the tests of no lab), with a gate of its own (its own
# TMPDIR) and only its GPU visible.
if [ -n "${CTEST_FILTER:-}" ] || [ "${gpus:-0}" -le 1 ]; then
    KIT_RUN_LOG="$PWD/$LOGS/runs.jsonl" timeout "${TEST_TIMEOUT:-560}" make test TEST_JOBS="${CTEST_JOBS:-$(nproc)}" \
        CTEST_ARGS="-V --output-junit $PWD/$LOGS/ctest-junit.xml ${CTEST_FILTER:-}" > "$LOGS/ctest.log" 2>&1
    test_status=$?
    junits="$LOGS/ctest-junit.xml"
else
    cmake -S tests -B build/tests > "$LOGS/cmake.log" 2>&1
    labs=$(ls labs | cut -c1-2 | sort -u)
    test_status=0 junits= pids=
    for g in $every_gpu; do
        share=$(echo "$labs" | awk -v g="$g" -v n="$gpus" '(NR - 1) % n == g' | paste -sd'|')
        filter="^(${share})-"
        [ "$g" = 0 ] && filter="^((${share})-|[^0])"
        mkdir -p "/tmp/kit-gpu-$g"
        ( cd build/tests && CUDA_VISIBLE_DEVICES=$g TMPDIR="/tmp/kit-gpu-$g" KIT_RUN_LOG="$PWD/../../$LOGS/runs-$g.jsonl" \
            timeout "${TEST_TIMEOUT:-560}" ctest --output-on-failure -V -j "${CTEST_JOBS:-$(( $(nproc) / gpus ))}" -R "$filter" \
            --output-junit "$PWD/../../$LOGS/ctest-junit-$g.xml" > "../../$LOGS/ctest-$g.log" 2>&1 ) &
        pids="$pids $!"
        junits="$junits $LOGS/ctest-junit-$g.xml"
    done
    for p in $pids; do wait "$p" || test_status=$?; done
    cat "$LOGS"/runs-*.jsonl > "$LOGS/runs.jsonl" 2>/dev/null
    cat "$LOGS"/ctest-[0-9]*.log > "$LOGS/ctest.log"
    side_by_side=--side-by-side
fi
# The document RESULTS.md quotes: every test's result and time, and where the harness runs' time went.
timeout 60 python3 tools/suite_summary.py "$LOGS/data/suite.json" "$LOGS/probe.json" $junits \
    --runs "$LOGS/runs.jsonl" ${side_by_side:-} > "$LOGS/suite-summary.txt" 2>&1
fi

if wants thresholds all; then
timeout 560 python3 tools/measure_thresholds.py "$LOGS/data" ${THRESHOLD_LABS:-} > "$LOGS/thresholds.log" 2>&1
thresholds_status=$?
fi

if wants record; then
timeout 480 python3 tools/draw_figures.py --gpu --docs-out "$LOGS/recorded" --out "$LOGS/figures" \
    > "$LOGS/draw-figures.log" 2>&1; draw_status=$?
fi

if wants figures all; then
timeout 120 python3 grader/grade.py --submission solutions --seed 2026 --json "$LOGS/grade-solutions.json" \
    > "$LOGS/grade-solutions.txt" 2>&1; grade_status=$?

# What a student sees: make run and make grade on the starter as shipped (make exits 2: points lost).
timeout 120 make run LAB=01 ARGS="--K 4 --M 8 --N 1000" > "$LOGS/make-run-01.txt" 2>&1; run_status=$?
timeout 120 make grade LAB=01 GRADE_ARGS="--seed 7" > "$LOGS/make-grade-01-starter.txt" 2>&1
starter_grade_status=$?

# Harness result documents kept as recorded inputs for the grader's unit tests: the solution, every
# known-wrong and every alternative submission of each lab, each run on its lab's recorded case; and
# every handout figure, drawn from them (the repository is left as it is).
timeout 480 python3 tools/draw_figures.py --gpu --docs-out "$LOGS/recorded" --out "$LOGS/figures" \
    > "$LOGS/draw-figures.log" 2>&1; draw_status=$?

# The Bezier lab's timing table (make bench LAB=04), of the reference solution.
timeout 300 make -s --no-print-directory -f labs/04-bezier-streams/Makefile \
    SRC_DIR="$PWD/solutions/04-bezier-streams" BUILD_DIR="$PWD/build/bench/04-bezier-streams" bench \
    ARGS="--json $PWD/$LOGS/data/bench-04.json" > "$LOGS/bench-04.txt" 2>&1; bench_status=$?
# The Mandelbrot lab's (make bench LAB=07): exhaustive, the host-driven worklist, the reference solution.
timeout 300 make -s --no-print-directory -f labs/07-mandelbrot/Makefile \
    SRC_DIR="$PWD/solutions/07-mandelbrot" BUILD_DIR="$PWD/build/bench/07-mandelbrot" bench \
    ARGS="--json $PWD/$LOGS/data/bench-07.json" > "$LOGS/bench-07.txt" 2>&1 || bench_status=1
# Lab 08's (make bench LAB=08): the tessellation four ways, what a launch or a round costs each way, the
# refinement three ways, of the reference solution.
timeout 300 make -s --no-print-directory -f labs/08-device-graphs/Makefile \
    SRC_DIR="$PWD/solutions/08-device-graphs" BUILD_DIR="$PWD/build/bench/08-device-graphs" bench \
    ARGS="--json $PWD/$LOGS/data/bench-08.json" > "$LOGS/bench-08.txt" 2>&1 || bench_status=1

fi

if wants costs all; then
timeout 300 make costs > "$LOGS/costs.txt" 2>&1; costs_status=$?
cp build/costs/costs.json "$LOGS/data/costs.json" 2>/dev/null
fi

if wants memcheck all; then
timeout 400 python3 tools/memcheck_costs.py "$LOGS/data" --repeats "${MEMCHECK_REPEATS:-3}" > "$LOGS/memcheck.log" 2>&1
memcheck_status=$?
fi

if wants feedback all; then
feedback_status=0
mkdir -p "$LOGS/feedback"
while read -r lab case folder; do
    rm -rf build/feedback-one
    timeout 240 python3 grader/grade.py --lab "$lab" --submission "$folder" --seed 2026 --html build/feedback-one \
        > "$LOGS/feedback/lab$lab-$case.txt" 2>&1
    mv build/feedback-one/[0-9]*.html "$LOGS/feedback/lab$lab-$case.html" 2>/dev/null || feedback_status=1
done <<'PAGES'
01 solution solutions/01-divergent-counter
01 unchecked-launch solutions/01-divergent-counter/incorrect/unchecked-launch
02 solution solutions/02-memory-visibility
02 race-left-in solutions/02-memory-visibility/incorrect/race-left-in
03 solution solutions/03-nested-recursion
03 off-by-one-depth solutions/03-nested-recursion/incorrect/off-by-one-depth
04 solution solutions/04-bezier-streams
04 no-bound-check solutions/04-bezier-streams/incorrect/no-bound-check
05 solution solutions/05-default-streams
05 still-legacy solutions/05-default-streams/incorrect/still-legacy
06 solution solutions/06-parallel-allocator
06 racy-counter solutions/06-parallel-allocator/incorrect/racy-counter
07 solution solutions/07-mandelbrot
07 corners-only solutions/07-mandelbrot/incorrect/corners-only
08 solution solutions/08-device-graphs
08 no-assign-default solutions/08-device-graphs/incorrect/no-assign-default
PAGES
if command -v chromium > /dev/null || command -v google-chrome > /dev/null; then
    python3 tools/browser_check.py "$LOGS"/feedback/*.html > "$LOGS/feedback/browser-check.txt" 2>&1 || feedback_status=1
else
    echo "no Chromium on this machine: the pages are checked in a browser where there is one" \
        > "$LOGS/feedback/browser-check.txt"
fi
fi

if wants throughput; then
throughput_status=0
# Each class on the first GPU, then, on a host of several, on all of them: data/class-gN/; CLASS_LIMIT=SEC
# stops each batch there, CLASS_DEADLINE=SEC stops the phase there (each batch gets the time left); the
# tables say how many each graded by then. With CLASS_SPREAD="05;03 08" on a host of several GPUs, each GPU
# takes its share of the labs instead (GPU 0 Lab 05, GPU 1 Labs 03 then 08), its one-GPU classes one after
# another, beside the other GPUs' (the cores split between them): a class's time there bounds its time
# alone from above. data/class-scale.json
# gathers them, after the latency phase where it runs too.
class_labs=${THROUGHPUT_LABS:-$every_lab}
throughput_began=$(date +%s)
# class_batch LAB GPUS [JOBS [BESIDE]]: one class, KIT_GPUS=GPUS
class_batch() {
    local n limit=${CLASS_LIMIT:-}
    n=$(echo "$2" | tr , '\n' | wc -l)
    if [ -n "${CLASS_DEADLINE:-}" ]; then
        limit=$(( CLASS_DEADLINE - ($(date +%s) - throughput_began) ))
        [ "$limit" -ge 30 ] || { echo "no time left for Lab $1's class" > "$LOGS/throughput-$1-g$n.log"; return 1; }
    fi
    KIT_GPUS=$2 timeout 590 python3 tools/batch_throughput.py "$LOGS/data/class-g$n" "${CLASS_SIZE:-200}" \
        --lab "$1" ${limit:+--limit "$limit"} ${3:+--jobs "$3"} ${4:+--beside "$4"} > "$LOGS/throughput-$1-g$n.log" 2>&1
}
if [ -n "${CLASS_SPREAD:-}" ] && [ "${gpus:-0}" -gt 1 ]; then
    pids= g=0
    IFS=';' read -ra queues <<< "$CLASS_SPREAD"
    for share in "${queues[@]}"; do
        others=$(echo "$CLASS_SPREAD" | tr ';' '\n' | sed "$((g + 1))d" | tr ' ' '\n' | grep . | paste -sd, | sed 's/,/, /g')
        what="Lab $others's class" where="the other GPU"
        case $others in *,*) what="the classes of Labs $others" ;; esac
        [ "$gpus" -gt 2 ] && where="the other GPUs"
        ( status=0
          for lab in $share; do
              class_batch "$lab" "$g" $(( $(nproc) / gpus )) "$what, on $where" || status=1
              keep_logs
          done
          exit $status ) &
        pids="$pids $!" g=$((g + 1))
    done
    for p in $pids; do wait "$p" || throughput_status=1; done
else
    uses=0  # KIT_GPUS of each batch: the first GPU, then all of a host's several
    [ "${gpus:-0}" -gt 1 ] && uses="0 $(echo $every_gpu | tr ' ' ,)"
    for lab in $class_labs; do
        for use in $uses; do
            class_batch "$lab" "$use" || throughput_status=1
            keep_logs  # a call cut short by its time limit keeps the classes done
        done
    done
fi
fi

if wants hostile; then
hostile_status=0
for lab in ${HOSTILE_LABS:-$every_lab}; do
    timeout 400 python3 grader/selftest.py hostile "$lab" > "$LOGS/hostile-$lab.log" 2>&1 || hostile_status=1
done
fi

if wants busy; then
busy_status=0
for n in ${BUSY_LABS:-$every_lab}; do
    lab=$(ls labs | grep "^$n-")
    for alternative in "" $(ls "solutions/$lab/alternative" 2>/dev/null); do
        if [ -z "$alternative" ]; then grading="full-marks $lab --seeds ${BUSY_SEEDS:-10}"; else grading="alternative $lab $alternative"; fi
        echo "== $grading" >> "$LOGS/busy-$n.log"
        KIT_SOLUTION_SEEDS=${BUSY_SEEDS:-10} timeout 560 python3 tools/busy_host.py -- python3 grader/selftest.py $grading \
            >> "$LOGS/busy-$n.log" 2>&1 || { busy_status=1; echo "FAILED: $grading" >> "$LOGS/busy-$n.log"; }
    done
done
fi

if wants latency; then
timeout 400 python3 tools/batch_throughput.py "$LOGS/data" --latency > "$LOGS/latency.log" 2>&1; latency_status=$?
keep_logs
fi
# data/class-scale.json: the classes and the latency above together (RESULTS.md's class-scale table)
if wants throughput && ! python3 tools/batch_throughput.py "$LOGS/data" --gather "$LOGS"/data/class-g* \
        > "$LOGS/throughput-gather.log" 2>&1; then
    throughput_status=1
fi

if wants walk; then
walk_status=0
W=/tmp/kit-walk; rm -rf "$W"; mkdir -p "$W" "$LOGS/walk"
timeout 120 python3 tools/dist.py student "$W/kit.tar.gz" > "$LOGS/walk/dist.txt" 2>&1 || walk_status=1
tar -xzf "$W/kit.tar.gz" -C "$W" && kit=$(dirname "$(ls -d "$W"/*/Makefile | head -n 1)")
lab01=$(ls -d "$kit"/labs/01-*) solved=solutions/01-divergent-counter
walk() {  # NAME EXPECTED_STATUS COMMAND...: run it in the student kit, keep its output and status
    local name=$1 want=$2 got; shift 2
    ( cd "$kit" && timeout 240 "$@" ) > "$LOGS/walk/$name.txt" 2>&1; got=$?
    echo "$name: exit $got (expected $want)" >> "$LOGS/walk/summary.txt"
    [ "$got" = "$want" ] || walk_status=1
}
walk doctor 0 make doctor
walk grade-01-starter 2 make grade LAB=01
cp "$solved/incorrect/unchecked-launch/"*.cu "$lab01/"
walk grade-01-unchecked-launch 2 make grade LAB=01
cp "$kit/build/feedback/01-"*.html "$LOGS/walk/feedback-01-unchecked-launch.html" 2>/dev/null
cp "$solved/"*.cu "$lab01/"
walk grade-01-solution 0 make grade LAB=01
cp "$kit/build/feedback/01-"*.html "$LOGS/walk/feedback-01-solution.html" 2>/dev/null
cp "$kit/build/feedback/index.html" "$LOGS/walk/feedback-index.html" 2>/dev/null
walk run-01 0 make run LAB=01
picture=$(sed -n 's/^picture of this run: //p' "$LOGS/walk/run-01.txt")
[ -n "$picture" ] && cp "$kit/$picture" "$LOGS/walk/run-01-$(basename "$picture")"
walk handouts "$(command -v pandoc > /dev/null && echo 0 || echo 2)" make handouts
fi

if wants sandbox; then
# A copy, because without the sandbox the class does to the kit what the sandbox stops (kit objects
# emptied, a header broken, processes left behind: the test kills those it finds).
rm -rf /tmp/kit-breach && mkdir /tmp/kit-breach && cp -a common grader labs solutions Makefile /tmp/kit-breach/
timeout 200 python3 /tmp/kit-breach/grader/selftest.py hostile 01 --no-sandbox --no-object-check \
    > "$LOGS/breach-01.log" 2>&1
breach_status=$?
rm -rf /tmp/kit-breach
# The sandbox alone holds: the same class, the attacks let through the check of the student's objects.
timeout 300 python3 grader/selftest.py hostile 01 --no-object-check > "$LOGS/sandbox-01.log" 2>&1
sandbox_status=$?
timeout 380 python3 tools/batch_throughput.py "$LOGS/data" "${COST_CLASS:-16}" --sandbox-cost "${COST_ROUNDS:-3}" \
    > "$LOGS/sandbox-cost.log" 2>&1; cost_status=$?
fi

if wants mutants; then
# Each GPU (MUTANT_GPUS, default every one) takes a share of the labs, with a gate of its own (its TMPDIR),
# MUTANT_JOBS gradings at once (16: three runs of 64 at once on a host of 64 cores and four H200s left
# one lab's run 3 of 35 mutants done in 560 s, the CUDA contexts being made one at a time for the host).
mutant_gpus=${MUTANT_GPUS:-$every_gpu}
mutant_gpus=${mutant_gpus:-0}
mutant_labs() {  # GPU LAB...: the labs one after another on that GPU
    local g=$1 lab; shift
    mkdir -p "/tmp/kit-gpu-$g" "$LOGS/data/mutants"
    for lab; do
        CUDA_VISIBLE_DEVICES=$g TMPDIR="/tmp/kit-gpu-$g" timeout "${MUTANT_TIMEOUT:-560}" python3 tools/mutants.py "$lab" \
            --baseline-seeds "${BASELINE_SEEDS:-10}" --jobs "${MUTANT_JOBS:-16}" --out "$LOGS/mutants/$lab" > "$LOGS/mutants-$lab.log" 2>&1 ||
            touch "$LOGS/mutants-$lab.failed"
        cp "$LOGS/mutants/$lab/recorded.json" "$LOGS/data/mutants/$(ls labs | grep "^$lab-").json" 2>/dev/null
        keep_logs  # a call cut short by its time limit keeps the labs done
    done
}
set -- ${MUTANT_LABS:-$every_lab}
n=$(echo $mutant_gpus | wc -w) k=0 pids=
for g in $mutant_gpus; do
    share=$(printf '%s\n' "$@" | awk -v k="$k" -v n="$n" '(NR - 1) % n == k' | paste -sd' ')
    [ -n "$share" ] && { mutant_labs "$g" $share & pids="$pids $!"; }
    k=$((k + 1))
done
for p in $pids; do wait "$p"; done
mutants_status=0
ls "$LOGS"/mutants-*.failed > /dev/null 2>&1 && mutants_status=1
fi

if wants record; then  # into place, what came out whole, and nothing from a machine whose GPU failed the probe
if ! grep -q '"dp_ok": *true' "$LOGS/probe.json" 2>/dev/null; then
    echo "no GPU that runs dynamic parallelism here (see $LOGS/doctor.txt): nothing recorded" > "$LOGS/recorded-into-place.txt"
else
for n in $record_labs; do
    [ -f "$LOGS/mutants-$n.failed" ] || cp "$LOGS"/data/mutants/$n-*.json grader/tests/data/mutants/ 2>/dev/null
done
[ "$draw_status" = 0 ] && cp "$LOGS"/recorded/*.json grader/tests/data/recorded/
python3 - "$LOGS/data/thresholds.json" handouts/figures/data/thresholds.json <<'PY' || echo "thresholds not copied (see $LOGS/data/)"
import json, shutil, sys
new, kept = (json.load(open(p)) for p in sys.argv[1:])
if new["device"]["name"] != kept["device"]["name"]:
    sys.exit("measured on %s, the kit's thresholds on %s" % (new["device"]["name"], kept["device"]["name"]))
shutil.copy(sys.argv[1], sys.argv[2])
PY
git status --short grader/tests/data handouts/figures/data > "$LOGS/recorded-into-place.txt" 2>&1
fi
fi

echo "================ GPU suite ($PHASE) ================"
cat "$LOGS/machine.txt"
echo
if [ -f "$LOGS/ctest.log" ]; then
    sed -n '/tests passed/,$p' "$LOGS/ctest.log"
    grep -E '^\s*[0-9]+/[0-9]+ Test' "$LOGS/ctest.log" | sed 's/^ *//' | sort -t'#' -k2 -n
fi
echo
for phase in $PHASE; do case $phase in
    all|thresholds) cat "$LOGS/data/thresholds.md" 2>/dev/null || tail -n 20 "$LOGS/thresholds.log" ;;
    costs) tail -n 20 "$LOGS/costs.txt" ;;
    memcheck) tail -n 9 "$LOGS/memcheck.log" ;;
    figures) tail -n 12 "$LOGS/draw-figures.log" ;;
    feedback) grep -H -E '^TOTAL' "$LOGS"/feedback/*.txt; cat "$LOGS/feedback/browser-check.txt" ;;
    throughput) for f in "$LOGS"/throughput-*.log; do awk 'NR <= 26 || /^the GPU.s time/' "$f"; done ;;
    hostile) for f in "$LOGS"/hostile-*.log; do echo "== $f"; grep -E 'as its note says|^BREACH|^SELFTEST|^[0-9]+ submissions' "$f"; done ;;
    busy) grep -H -E '^(== |FAILED|TOTAL)' "$LOGS"/busy-*.log ;;
    sandbox) grep -E '^(BREACH|SELFTEST)' "$LOGS/breach-01.log" "$LOGS/sandbox-01.log"; tail -n 3 "$LOGS/sandbox-cost.log" ;;
    mutants) for f in "$LOGS"/mutants-*.log; do grep -E '^(  LOST|operator|all \(|PROBLEM|[a-z-]+ +[0-9])' "$f"; done ;;
    record) echo "copied into place:"; cat "$LOGS/recorded-into-place.txt" ;;
    latency) cat "$LOGS/latency.log" ;;
    walk) cat "$LOGS/walk/summary.txt"; grep -h -E '^TOTAL' "$LOGS"/walk/grade-*.txt ;;
esac; done
echo
printf '%-30s %s\n' "make all" "$build_status" "make test" "$test_status" "thresholds" "$thresholds_status" \
    "grade solutions (exit)" "$grade_status" "make run LAB=01" "$run_status" \
    "make grade LAB=01, starter (2)" "$starter_grade_status" "recorded documents, figures" "$draw_status" \
    "batch throughput" "$throughput_status" "mutants" "$mutants_status" "make costs" "$costs_status" \
    "make bench LAB=04" "$bench_status" "feedback pages" "$feedback_status" "hostile classes" "$hostile_status" \
    "solutions beside a busy host" "$busy_status" \
    "breaches without the sandbox" "$breach_status" "sandbox alone holds" "$sandbox_status" \
    "sandbox cost" "$cost_status" "memcheck" "$memcheck_status" "student kit walk" "$walk_status" "make grade latency" "$latency_status"
keep_logs
ok() { [ "$1" = 0 ] || [ "$1" = - ]; }
ok "$build_status" && ok "$test_status" && ok "$thresholds_status" && ok "$grade_status" && ok "$draw_status" &&
    ok "$throughput_status" && ok "$mutants_status" && ok "$costs_status" && ok "$bench_status" &&
    ok "$feedback_status" && ok "$hostile_status" && ok "$busy_status" && ok "$breach_status" && ok "$sandbox_status" && ok "$cost_status" &&
    ok "$memcheck_status" && ok "$walk_status" && ok "$latency_status"
