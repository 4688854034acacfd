# CUDA dynamic parallelism labs. Quick start (README.md):
#   make grade          grade your labs in labs/ (LAB=01 for one)
#   make test           the kit's own tests (CTest)
# Also:
#   make run LAB=01 [ARGS="--K 8 --M 4 --N 1000"]   build your lab and run its harness
#   make legacy LAB=02  what today's nvcc says about the textbook's device-side synchronize
#   make bench LAB=04   timing table of the Bezier lab's versions on this GPU
#   make handouts       render handouts/*.md to HTML in build/handouts/ (needs pandoc; PDF too
#                       where pandoc has a PDF engine)
#   make figures        redraw handouts/figures/ from real runs (needs a GPU; exits 77 without one)
#   make doctor         toolkit, GPU, and whether dynamic parallelism can run here
#   make                build every lab from labs/
#   make starters       regenerate labs/ starter files from solutions/ (kit maintainers)
#   make clean          remove build/
# For instructors (not in the student kit):
#   make dist           the student kit: build/dist/cdp-labs-student.tar.gz (no solutions, no salt)
#   make gradescope LAB=01   a Gradescope autograder zip for one lab, in build/dist/
#   make mutants LAB=01      mutation testing of the grader on one lab (GPU; tools/mutants.py)
#   python3 grader/grade.py batch SUBMISSIONS_DIR --lab 01   grade a class (README, "For instructors")
PYTHON ?= python3
LAB    ?=
LAB_MAKEFILES := $(wildcard labs/*/Makefile)

.PHONY: all grade test run legacy bench handouts figures doctor starters clean dist gradescope mutants

all:
	@set -e; for mk in $(LAB_MAKEFILES); do $(MAKE) --no-print-directory -f $$mk all; done

grade:
	$(PYTHON) grader/grade.py $(if $(LAB),--lab $(LAB)) $(GRADE_ARGS)

# What needs the kit's own tests or the reference solutions says so in the student kit.
KIT_ONLY = @test -d solutions || { echo "make $@: not part of the student kit (course staff have it)"; exit 2; }

test:
	$(KIT_ONLY)
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

figures:
	$(KIT_ONLY)
	@$(PYTHON) tools/draw_figures.py --gpu

doctor:
	$(PYTHON) grader/kit.py doctor

starters:
	$(KIT_ONLY)
	$(PYTHON) grader/kit.py starters

clean:
	rm -rf build

dist:
	$(KIT_ONLY)
	$(PYTHON) tools/dist.py student build/dist/cdp-labs-student.tar.gz

gradescope:
	$(KIT_ONLY)
	@test -n "$(LAB)" || { echo "usage: make gradescope LAB=NN"; exit 2; }
	$(PYTHON) tools/dist.py gradescope $(LAB) build/dist

# Mutation testing of the grader (GPU): every mutant of a lab's solution graded (tools/mutants.py).
mutants:
	$(KIT_ONLY)
	@test -n "$(LAB)" || { echo "usage: make mutants LAB=NN [MUTANT_ARGS='--jobs 8']"; exit 2; }
	$(PYTHON) tools/mutants.py $(LAB) $(MUTANT_ARGS)
