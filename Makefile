# CUDA dynamic parallelism labs. Quick start (README.md):
#   make grade          grade your labs in labs/ (LAB=01 for one)
#   make test           the kit's own tests (CTest)
# Also:
#   make run LAB=01 [ARGS="--K 8 --M 4 --N 1000"]   build your lab and run its harness
#   make legacy LAB=02  what today's nvcc says about the textbook's device-side synchronize
#   make bench LAB=04   timing table of the Bezier lab's versions on this GPU
#   make handouts       render handouts/*.md to HTML in build/handouts/ (needs pandoc)
#   make doctor         toolkit, GPU, and whether dynamic parallelism can run here
#   make                build every lab from labs/
#   make starters       regenerate labs/ starter files from solutions/ (kit maintainers)
#   make clean          remove build/
PYTHON ?= python3
LAB    ?=
LAB_MAKEFILES := $(wildcard labs/*/Makefile)

.PHONY: all grade test run legacy bench handouts doctor starters clean

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

legacy bench:
	@test -n "$(LAB)" || { echo "usage: make $@ LAB=NN"; exit 2; }
	@$(MAKE) --no-print-directory -f labs/$$($(PYTHON) grader/kit.py lab-dir $(LAB))/Makefile $@

handouts:
	@sh tools/render_handouts.sh

doctor:
	$(PYTHON) grader/kit.py doctor

starters:
	$(PYTHON) grader/kit.py starters

clean:
	rm -rf build
