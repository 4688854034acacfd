# CUDA dynamic parallelism labs. Quick start (README.md):
#   make grade          grade your labs in labs/ (LAB=01 for one; CHECK="name" with it for one check);
#                       pages in build/feedback/
#                       (NO_SANDBOX=1 where no sandbox can be made: README, "Trust the result")
# Also:
#   make run LAB=01 [ARGS="--K 8 --M 4 --N 1000"]   build your lab and run its harness
#   make legacy LAB=02  what today's nvcc says about the textbook's device-side synchronize
#   make bench LAB=04   timing table of the Bezier lab's versions on this GPU (LAB=07: the Mandelbrot lab's)
#   make sanitize LAB=04 [ARGS="..."]   your lab's harness under compute-sanitizer's memcheck
#   make costs [ARGS="--repeats 7 --quick 1"]   what dynamic parallelism costs on this GPU
#                       (launches, chains, sibling streams, device malloc; build/costs/costs.json)
#   make handouts       render handouts/*.md to HTML in build/handouts/ (needs pandoc; PDF too
#                       where pandoc has a PDF engine)
#   make doctor         toolkit, GPU, and whether dynamic parallelism can run here
#   make                build every lab from labs/
#   make clean          remove build/
# When a command fails, make's last line ends in "Error N": N is the command's own exit status
# (77: not run, no usable GPU or no compute-sanitizer; 1: points lost or a failure; 2: a bad command line;
# 86: make sanitize's memcheck found errors).
# For course staff and kit maintainers (not in the student kit):
#   make test           the kit's own tests (CTest, TEST_JOBS at once: twice the cores, at most
#                       16 per GPU); its last line counts the tests not run
#   make figures        redraw handouts/figures/ from real runs (needs a GPU; exits 77 without one)
#   make starters       regenerate labs/ starter files from solutions/
#   make dist           the student kit: build/dist/cdp-labs-student.tar.gz (no solutions, no salt)
#   make gradescope LAB=01   a Gradescope autograder zip for one lab, in build/dist/
#   make mutants LAB=01      mutation testing of the grader on one lab (GPU; tools/mutants.py)
#   make toolkits            every lab built and statically checked under each claimed CUDA toolkit
#                            and GPU architecture (tools/toolkit_matrix.py; installs toolkits from PyPI)
#   python3 grader/grade.py batch SUBMISSIONS_DIR --lab 01   grade a class (README, "For instructors")
PYTHON ?= python3
LAB    ?=
LAB_MAKEFILES := $(wildcard labs/*/Makefile)

.PHONY: all grade test run legacy bench sanitize costs handouts figures doctor starters clean dist gradescope mutants toolkits new-lab

all:
	@set -e; for mk in $(LAB_MAKEFILES); do $(MAKE) --no-print-directory -f $$mk all; done

grade:
	$(PYTHON) grader/grade.py --html build/feedback $(if $(LAB),--lab $(LAB)) $(if $(CHECK),--check "$(CHECK)") $(if $(NO_SANDBOX),--no-sandbox) $(GRADE_ARGS)

# What needs the kit's own tests or the reference solutions says so in the student kit.
KIT_ONLY = @test -d solutions || { echo "make $@: not part of the student kit (course staff have it)"; exit 2; }

# CTest counts a test that could not run (no GPU, no pandoc) in its "100% tests passed" line and
# lists it under "The following tests did not run" as (Skipped); the last line says how many of
# them there were, so that nobody reads the percentage as a pass of the GPU tests.
# TEST_JOBS tests at once: twice the cores, since many tests spend part of their time waiting (a
# deliberate hang's time limit, a child process, the build lock), and a core left idle meanwhile is
# lost; at most 16 for each GPU, the most the GPU tests have been run with side by side on one (RESULTS.md):
# the graders spread over a host's GPUs, each taking one in its process id's turn (gradelib/gpu.py).
TEST_JOBS ?= $(shell n=$$(( 2 * $$(nproc 2>/dev/null || echo 1) )); \
  g=$$(nvidia-smi -L 2>/dev/null | grep -c '^GPU '); most=$$(( 16 * (g > 1 ? g : 1) )); echo $$(( n > most ? most : n )))
test:
	$(KIT_ONLY)
	cmake -S tests -B build/tests
	@cd build/tests && { ctest --output-on-failure -j$(TEST_JOBS) $(CTEST_ARGS); echo $$? > ctest.status; } 2>&1 | tee ctest.log; \
	  status=$$(cat ctest.status); $(PYTHON) ../../tools/suite_summary.py --not-run ctest.log; exit $$status

# run, legacy, bench and sanitize go through grader/kit.py, which names the labs that have the command
# and says "no usable GPU" (status 77) before running anything that needs one.
run legacy bench sanitize:
	@$(PYTHON) grader/kit.py $@ "$(LAB)" $(ARGS)

# What dynamic parallelism costs on this GPU (common/costs/launch_costs.cu). The program is run here,
# not through a sub-make, so that make reports its own exit status (77: no GPU, 1: invalid run); a
# run that measured nothing leaves no old costs.json behind.
costs:
	@$(MAKE) --no-print-directory -f common/costs/Makefile all
	@$(PYTHON) grader/kit.py need-gpu costs
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
# Every lab built and statically checked under each claimed CUDA toolkit (from PyPI, cached outside the
# checkout) and each GPU architecture: tools/toolkit_matrix.py (TOOLKITS="13.0,newest" ARCHS="75,90").
toolkits:
	$(KIT_ONLY)
	$(PYTHON) tools/toolkit_matrix.py $(if $(TOOLKITS),--toolkits $(TOOLKITS)) $(if $(ARCHS),--archs $(ARCHS))

mutants:
	$(KIT_ONLY)
	@test -n "$(LAB)" || { echo "usage: make mutants LAB=NN [MUTANT_ARGS='--jobs 8']"; exit 2; }
	$(PYTHON) tools/mutants.py $(LAB) $(MUTANT_ARGS)

# A new lab's skeleton, which passes the CPU tests as it is (tools/new_lab.py; CONTRIBUTING.md, "Add a
# lab"): make new-lab NN=09 NAME=example-lab. A bad or missing NN or NAME, or a lab that exists: exit 2.
new-lab:
	$(KIT_ONLY)
	@$(PYTHON) tools/new_lab.py "$(NN)" "$(NAME)"
