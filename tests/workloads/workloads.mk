# tests/workloads/workloads.mk — test and benchmark workloads of scalebpf.
#
# Included by the top-level Makefile (after its `all` target, so nothing
# here becomes the default goal); also usable on its own:
#     make -f tests/workloads/workloads.mk BUILD=build workloads
# Only GNU make syntax.
#
# Every workload is built as users build their programs: -O2 -g -pthread
# and nothing else the tool might like (no -fno-omit-frame-pointer), once
# with gcc/g++ and once with clang/clang++:
#     $(BUILD)/workloads/<name>         gcc, g++; OpenMP with libgomp
#     $(BUILD)/workloads/clang/<name>   clang, clang++; OpenMP with what
#                                       clang -fopenmp links: LLVM's libomp
# Every tests/workloads/<name>.c and <name>.cc is one program (programs
# added later are picked up automatically).  Sources that use OpenMP
# (mention omp.h or "pragma omp") get -fopenmp; sources that include
# <math.h> are linked with -lm.

BUILD ?= build

WL_CC      ?= gcc
WL_CXX     ?= g++
WL_CLANG   ?= clang
WL_CLANGXX ?= clang++
WL_CFLAGS  ?= -O2 -g -pthread -Wall -Wextra -Werror
WL_SRCDIR  := tests/workloads
WL_OUTDIR  := $(BUILD)/workloads
WL_CLANGDIR := $(WL_OUTDIR)/clang

WL_SRCS      := $(wildcard $(WL_SRCDIR)/*.c)
WL_CXX_SRCS  := $(wildcard $(WL_SRCDIR)/*.cc)
WL_OMP_SRCS  := $(if $(WL_SRCS),$(shell grep -l -e 'pragma omp' -e 'omp\.h' $(WL_SRCS) 2>/dev/null))
WL_LIBM_SRCS := $(if $(WL_SRCS),$(shell grep -l -e '<math\.h>' $(WL_SRCS) 2>/dev/null))
WL_OMP_PROGS := $(patsubst $(WL_SRCDIR)/%.c,%,$(WL_OMP_SRCS))
WL_C_PROGS   := $(filter-out $(WL_OMP_PROGS),$(patsubst $(WL_SRCDIR)/%.c,%,$(WL_SRCS)))
WL_CXX_PROGS := $(patsubst $(WL_SRCDIR)/%.cc,%,$(WL_CXX_SRCS))

# clang's -fopenmp links libomp: its directory (clang's own lib dir first,
# e.g. /usr/lib/llvm-14/lib/libomp.so) is passed with -L and -rpath, so a
# libomp.so found elsewhere works too.  Without clang or libomp the clang
# builds (or their OpenMP part) are skipped.
WL_HAVE_CLANG   := $(shell command -v $(WL_CLANG) 2>/dev/null)
WL_HAVE_CLANGXX := $(shell command -v $(WL_CLANGXX) 2>/dev/null)
WL_LIBOMP_SO    := $(if $(WL_HAVE_CLANG),$(realpath $(firstword $(wildcard \
	$(shell $(WL_CLANG) -print-resource-dir 2>/dev/null)/../../libomp.so \
	/usr/lib/llvm-*/lib/libomp.so \
	/usr/lib/x86_64-linux-gnu/libomp.so \
	/usr/local/lib/libomp.so))))
WL_LIBOMP_LINK  := -L$(dir $(WL_LIBOMP_SO)) -Wl,-rpath,$(dir $(WL_LIBOMP_SO))

WL_GCC_BINS   := $(addprefix $(WL_OUTDIR)/,$(WL_C_PROGS) $(WL_OMP_PROGS) $(WL_CXX_PROGS))
WL_CLANG_BINS := $(addprefix $(WL_CLANGDIR)/,$(if $(WL_HAVE_CLANG),$(WL_C_PROGS)) \
	$(if $(WL_LIBOMP_SO),$(WL_OMP_PROGS)) $(if $(WL_HAVE_CLANGXX),$(WL_CXX_PROGS)))
WL_BINS := $(WL_GCC_BINS) $(WL_CLANG_BINS)
WL_DEPS := $(WL_SRCDIR)/work.h $(WL_SRCDIR)/workloads.mk

.PHONY: workloads
workloads: $(WL_BINS)

# Per-program link additions (target-specific, so both compilers get them).
$(foreach p,$(patsubst $(WL_SRCDIR)/%.c,%,$(WL_LIBM_SRCS)),\
	$(eval $(WL_OUTDIR)/$(p) $(WL_CLANGDIR)/$(p): WL_LDLIBS += -lm))

# Static pattern rules, so a program cannot be built with the wrong flags.
$(addprefix $(WL_OUTDIR)/,$(WL_C_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_CFLAGS) $< -o $@ $(WL_LDLIBS)

$(addprefix $(WL_OUTDIR)/,$(WL_OMP_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_CFLAGS) -fopenmp $< -o $@ $(WL_LDLIBS)

$(addprefix $(WL_OUTDIR)/,$(WL_CXX_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.cc $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CXX) $(WL_CFLAGS) $< -o $@ $(WL_LDLIBS)

$(addprefix $(WL_CLANGDIR)/,$(WL_C_PROGS)): $(WL_CLANGDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_CFLAGS) $< -o $@ $(WL_LDLIBS)

$(addprefix $(WL_CLANGDIR)/,$(WL_OMP_PROGS)): $(WL_CLANGDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_CFLAGS) -fopenmp $< -o $@ $(WL_LIBOMP_LINK) $(WL_LDLIBS)

$(addprefix $(WL_CLANGDIR)/,$(WL_CXX_PROGS)): $(WL_CLANGDIR)/%: $(WL_SRCDIR)/%.cc $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANGXX) $(WL_CFLAGS) $< -o $@ $(WL_LDLIBS)

# Exact-mode builds (`scalebpf cc`: every block counted per thread) of the
# planted-cause workloads, in $(BUILD)/workloads/exact/.  OpenMP ones use
# clang's libomp, the runtime exact mode follows.  Their baseline in
# `make bench` is the plain clang build, $(BUILD)/workloads/clang/<name>.
WL_EXACT_PTHREAD := lime_owner lime_root lime_cache lime_lu lime_owner_hdr lime_root_tail lime_cv
WL_EXACT_OMP     := $(if $(WL_LIBOMP_SO),lime_omp_tri omp_args)
WL_EXACT_TRACE   := trace_sum trace_lock share
WL_EXACT_TRACE_OMP := $(if $(WL_LIBOMP_SO),share_omp)
WL_EXACT_CHIP    := chip_ws chip_phases
WL_EXACT_BINS    := $(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_PTHREAD) $(WL_EXACT_OMP) \
	$(WL_EXACT_TRACE) $(WL_EXACT_TRACE_OMP) $(WL_EXACT_CHIP))
WL_SCALEBPF      ?= $(BUILD)/scalebpf
WL_EXACT_FLAGS   := -O2 -Wall -Wextra -Werror
WL_EXACT_DEPS    := $(WL_DEPS) $(WL_SCALEBPF) $(BUILD)/libscalebpf-rt.a

.PHONY: workloads-exact
workloads-exact: $(WL_EXACT_BINS)

$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_PTHREAD)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_EXACT_DEPS)
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc $(WL_EXACT_FLAGS) -pthread $< -o $@

# with a cache hit profile (CHiP) of every load and store
$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_CHIP)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_EXACT_DEPS)
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc --chip $(WL_EXACT_FLAGS) -pthread $< -o $@

# with full memory traces
$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_TRACE)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_EXACT_DEPS)
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc --trace-mem $(WL_EXACT_FLAGS) -pthread $< -o $@

$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_TRACE_OMP)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_EXACT_DEPS)
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc --trace-mem $(WL_EXACT_FLAGS) -fopenmp=libomp $< -o $@ $(WL_LIBOMP_LINK)

$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_OMP)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_EXACT_DEPS)
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc $(WL_EXACT_FLAGS) -fopenmp=libomp $< -o $@ $(WL_LIBOMP_LINK)
