# kit.mk - the build rules every lab shares.
#
# A lab's Makefile names its parts and includes this file:
#   LAB_NAME        := 01-divergent-counter
#   PROGRAM         := divergent_counter             (the harness executable)
#   STUDENT_FILES   := divergent_counter.cu          (the files a student edits)
#   HARNESS_SOURCES := harness.cu                    (kit-owned, in common/harness/$(LAB_NAME)/)
#   include $(dir $(lastword $(MAKEFILE_LIST)))../../common/kit.mk
#
# Code more than one lab uses lives in common/: headers in common/include/, sources in common/src/.
# Every common/src/*.cu is compiled once per architecture and linked into every program, so a lab
# needs no line to use it (none of it calls student code, so a lab that does not use it still links).
#
# A lab about compiler options may also name a small flags file the student edits (listed in
# STUDENT_FILES too):
#   STUDENT_FLAGS_FILE := nvcc.flags
# common/student-flags.sh checks it against the kit's whitelist before anything is compiled (a
# refused option stops the build with a message that names it, and nvcc never sees it); the accepted
# options go to the compile and PTX rules of the student's .cu files only, never to kit-owned
# objects. Comment lines (#...) are dropped, so the starter markers work in a flags file as well.
#
# Variables you may set on the command line:
#   CUDA_ARCH=90         build for compute capability 9.0 (default: the GPU present, else 75)
#   SRC_DIR=dir          take the student files from dir (default: the lab's folder)
#   BUILD_DIR=dir        where objects and the program go (default: build/labs/$(LAB_NAME))
#   ARGS="--K 4"         arguments for `make run`
#
# Targets: all (the program), ptx (PTX of each student .cu, for the static checks), run (in a lab's
# folder: the top-level `make run LAB=NN`, as are grade and sanitize),
# kit-objects (the kit-owned objects alone: the grader builds them before a sandboxed build, which
# sees them read-only), print-lab (PROGRAM and STUDENT_FILES, read by the grader), clean.

KIT_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
LAB_DIR  := $(abspath $(dir $(firstword $(MAKEFILE_LIST))))

NVCC ?= nvcc
ifeq ($(origin CUDA_ARCH), undefined)
CUDA_ARCH := $(shell $(KIT_ROOT)/common/detect-arch.sh)
endif
export CUDA_ARCH

# Typed in a lab's folder: no outer make, no SRC_DIR given (see `run` below).
TYPED_IN_LAB_FOLDER := $(filter 0undefined,$(MAKELEVEL)$(origin SRC_DIR))
SRC_DIR     ?= $(LAB_DIR)
BUILD_DIR   ?= $(KIT_ROOT)/build/labs/$(LAB_NAME)/sm_$(CUDA_ARCH)
HARNESS_DIR ?= $(KIT_ROOT)/common/harness/$(LAB_NAME)
# Kit-owned objects do not depend on student code: built once per architecture, shared by every build.
KIT_OBJ_DIR ?= $(KIT_ROOT)/build/kit/sm_$(CUDA_ARCH)

# -rdc=true: a kernel that launches kernels needs relocatable device code and a device link step.
# -lcudadevrt: the device runtime (nvcc links it by itself with -rdc=true; named here so you see it).
NVCC_FLAGS := -O2 -lineinfo -rdc=true -DNVTX_DISABLE -arch=sm_$(CUDA_ARCH) -Wno-deprecated-gpu-targets \
              -Xcompiler -Wall,-Wextra -I$(KIT_ROOT)/common/include -I$(HARNESS_DIR) $(EXTRA_NVCC_FLAGS)
LDLIBS     := -lcudadevrt

STUDENT_CU   := $(filter %.cu,$(STUDENT_FILES))
STUDENT_OBJS := $(addprefix $(BUILD_DIR)/,$(STUDENT_CU:.cu=.o))
STUDENT_PTX  := $(addprefix $(BUILD_DIR)/,$(STUDENT_CU:.cu=.ptx))
HARNESS_OBJS := $(addprefix $(KIT_OBJ_DIR)/$(LAB_NAME)/,$(HARNESS_SOURCES:.cu=.o))
COMMON_OBJS  := $(patsubst $(KIT_ROOT)/common/src/%.cu,$(KIT_OBJ_DIR)/%.o,$(wildcard $(KIT_ROOT)/common/src/*.cu))
KIT_HEADERS  := $(wildcard $(KIT_ROOT)/common/include/*.h) $(wildcard $(HARNESS_DIR)/*.h)

# Objects are written under a temporary name and renamed, so builds sharing KIT_OBJ_DIR never
# see a half-written file.
define compile
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $(1) -dc $< -o $@.$$$$.tmp && mv -f $@.$$$$.tmp $@
endef

# The student's flags file, checked (see the top of this file). STUDENT_NVCC_FLAGS is read when a
# student rule runs, after the checked copy is made.
STUDENT_FLAGS_CHECKED :=
STUDENT_NVCC_FLAGS :=
ifneq ($(strip $(STUDENT_FLAGS_FILE)),)
STUDENT_FLAGS_CHECKED := $(BUILD_DIR)/$(STUDENT_FLAGS_FILE).checked
STUDENT_NVCC_FLAGS = $(shell cat $(STUDENT_FLAGS_CHECKED))
$(STUDENT_FLAGS_CHECKED): $(SRC_DIR)/$(STUDENT_FLAGS_FILE) $(KIT_ROOT)/common/student-flags.sh
	@mkdir -p $(dir $@)
	@sh $(KIT_ROOT)/common/student-flags.sh $< > $@.$$$$.tmp && mv -f $@.$$$$.tmp $@ || { rm -f $@.$$$$.tmp; exit 1; }
endif

.PHONY: all ptx run clean print-lab kit-objects
all: $(BUILD_DIR)/$(PROGRAM)

kit-objects: $(HARNESS_OBJS) $(COMMON_OBJS)

$(BUILD_DIR)/$(PROGRAM): $(STUDENT_OBJS) $(HARNESS_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) $^ -o $@ $(LDLIBS)

# A student object's device code is kept too, as the compiler wrote it into the object (--keep; only the
# .cubin stays), for the grader's check of what the object imports (grader/gradelib/objects.py): the
# object's own fatbin may be compressed.
$(BUILD_DIR)/%.o: $(SRC_DIR)/%.cu $(KIT_HEADERS) $(STUDENT_FLAGS_CHECKED)
	@rm -rf $(BUILD_DIR)/$*.device && mkdir -p $(BUILD_DIR)/$*.device
	$(call compile,$(STUDENT_NVCC_FLAGS) --keep --keep-dir $(BUILD_DIR)/$*.device)
	@find $(BUILD_DIR)/$*.device -type f ! -name '*.cubin' -delete

$(KIT_OBJ_DIR)/$(LAB_NAME)/%.o: $(HARNESS_DIR)/%.cu $(KIT_HEADERS)
	$(compile)

$(COMMON_OBJS): $(KIT_OBJ_DIR)/%.o: $(KIT_ROOT)/common/src/%.cu $(KIT_HEADERS)
	$(compile)

ptx: $(STUDENT_PTX)

$(BUILD_DIR)/%.ptx: $(SRC_DIR)/%.cu $(KIT_HEADERS) $(STUDENT_FLAGS_CHECKED)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter-out -lineinfo,$(NVCC_FLAGS)) $(STUDENT_NVCC_FLAGS) -ptx $< -o $@

# Typed in a lab's folder (no outer make, no SRC_DIR), `make run`, `make grade` and `make sanitize` are
# the top-level commands for this lab, with their messages (no GPU, no toolkit) and the run's picture.
ifneq ($(TYPED_IN_LAB_FOLDER),)
run grade sanitize:
	@$(MAKE) --no-print-directory -C $(KIT_ROOT) $@ LAB=$(LAB_NAME)
else
run: all
	$(BUILD_DIR)/$(PROGRAM) $(ARGS)
endif

print-lab:
	@echo PROGRAM=$(PROGRAM)
	@echo STUDENT_FILES=$(STUDENT_FILES)

clean:
	rm -rf $(BUILD_DIR)
