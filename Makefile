# CUDA dynamic parallelism labs. Quick start (README.md):
#   make grade          grade your labs in labs/ (LAB=01 for one)
#   make test           the kit's own tests (CTest)
# Also:
#   make run LAB=01 [ARGS="--K 8 --M 4 --N 1000"]   build your lab and run its harness
#   make legacy LAB=02  what today's nvcc says about the textbook's device-side synchronize
#   make bench LAB=04   timing table of the Bezier lab's versions on this GPU
#   make costs [ARGS="--repeats 7 --quick 1"]   what dynamic parallelism costs on this GPU
#                       (launches, chains, sibling streams, device malloc; build/costs/costs.json)
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

.PHONY: all grade test run legacy bench costs handouts figures doctor starters clean dist gradescope mutants

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

# What dynamic parallelism costs on this GPU (common/costs/launch_costs.cu). The program is run here,
# not through a sub-make, so that make reports its own exit status (77: no GPU, 1: invalid run); a
# run that measured nothing leaves no old costs.json behind.
costs:
	@$(MAKE) --no-print-directory -f common/costs/Makefile all
	@mkdir -p build/costs && rm -f build/costs/costs.json
	@program=$$($(MAKE) --no-print-directory -s -f common/costs/Makefile print-program) && \
	  $$program --json build/costs/costs.json $(ARGS)

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
