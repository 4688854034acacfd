# CUDA dynamic parallelism labs. Quick start (README.md):
#   make grade          grade your labs in labs/ (LAB=01 for one)
#   make test           the kit's own tests (CTest)
# Also:
#   make run LAB=01 [ARGS="--K 8 --M 4 --N 1000"]   build your lab and run its harness
#   make doctor         toolkit, GPU, and whether dynamic parallelism can run here
#   make                build every lab from labs/
#   make starters       regenerate labs/ starter files from solutions/ (kit maintainers)
#   make clean          remove build/
PYTHON ?= python3
LAB    ?=
LAB_MAKEFILES := $(wildcard labs/*/Makefile)

.PHONY: all grade test run doctor starters clean

all:
	@set -e; for mk in $(LAB_MAKEFILES); do $(MAKE) --no-print-directory -f $$mk all; done

grade:
	$(PYTHON) grader/grade.py $(if $(LAB),--lab $(LAB)) $(GRADE_ARGS)

test:
	cmake -S tests -B build/tests
	cd build/tests && ctest --output-on-failure $(CTEST_ARGS)

run:
	@test -n "$(LAB)" || { echo "usage: make run LAB=01 [ARGS='--K 8 --M 4 --N 1000']"; exit 2; }
	$(PYTHON) grader/kit.py run $(LAB) $(ARGS)

doctor:
	$(PYTHON) grader/kit.py doctor

starters:
	$(PYTHON) grader/kit.py starters

clean:
	rm -rf build
