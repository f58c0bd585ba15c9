# tests/workloads/workloads.mk — test and benchmark workloads of scalebpf.
#
# Included by the top-level Makefile (after its `all` target, so nothing
# here becomes the default goal); also usable on its own:
#     make -f tests/workloads/workloads.mk BUILD=build workloads
# Binaries go to $(BUILD)/workloads/.  Only GNU make syntax.

BUILD ?= build

WL_CC      ?= gcc
WL_CLANG   ?= clang
WL_CFLAGS  ?= -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror
WL_SRCDIR  := tests/workloads
WL_OUTDIR  := $(BUILD)/workloads

# Every tests/workloads/<name>.c is one program $(BUILD)/workloads/<name>
# (programs added later are picked up automatically).  Sources that use
# OpenMP (mention omp.h or "pragma omp") are built with -fopenmp (libgomp
# with gcc), the others as plain pthread programs.
WL_SRCS          := $(wildcard $(WL_SRCDIR)/*.c)
WL_OMP_SRCS      := $(if $(WL_SRCS),$(shell grep -l -e 'pragma omp' \
			-e 'omp\.h' $(WL_SRCS) 2>/dev/null))
# Tail-call workloads are built as users build: gcc and clang -O2, no
# frame-pointer flag (rules below); the automatic rules skip them.
WL_TAIL_OMP      := omp_tail
WL_TAIL_PTHREAD  := tail_barrier
WL_NOFP_CFLAGS   := $(filter-out -fno-omit-frame-pointer,$(WL_CFLAGS))
WL_OMP_PROGS     := $(filter-out $(WL_TAIL_OMP),$(patsubst $(WL_SRCDIR)/%.c,%,$(WL_OMP_SRCS)))
# Plain programs built as users build them (-O2 -g, no frame-pointer
# flags), with gcc here and with clang in $(BUILD)/workloads/clang-O2/.
WL_USER_PROGS    := join_late dup_site futex_other
WL_USER_CFLAGS   ?= -O2 -g -pthread -Wall -Wextra -Werror
WL_PTHREAD_PROGS := $(filter-out $(WL_OMP_PROGS) $(WL_TAIL_OMP) $(WL_TAIL_PTHREAD) $(WL_USER_PROGS), \
			$(patsubst $(WL_SRCDIR)/%.c,%,$(WL_SRCS)))

# omp_imbalance_libomp: the same source built with clang against LLVM's
# libomp, only when clang exists and a libomp.so is found (clang's own
# lib dir first, e.g. /usr/lib/llvm-14/lib/libomp.so); skipped otherwise.
WL_HAVE_CLANG := $(shell command -v $(WL_CLANG) 2>/dev/null)
WL_LIBOMP_SO  := $(if $(WL_HAVE_CLANG),$(realpath $(firstword $(wildcard \
	$(shell $(WL_CLANG) -print-resource-dir 2>/dev/null)/../../libomp.so \
	/usr/lib/llvm-*/lib/libomp.so \
	/usr/lib/x86_64-linux-gnu/libomp.so \
	/usr/local/lib/libomp.so))))
WL_LIBOMP_PROGS := $(if $(WL_LIBOMP_SO),$(if $(filter omp_imbalance,$(WL_OMP_PROGS)),\
			omp_imbalance_libomp))

# Every tests/workloads/<name>.cc is a C++ program, built as users build
# one (-O2, no frame-pointer flags) with g++ as $(BUILD)/workloads/<name>
# and, when clang++ exists, as $(BUILD)/workloads/<name>_clang.
WL_CXX        ?= g++
WL_CLANGXX    ?= clang++
WL_CXXFLAGS   ?= -O2 -g -pthread -Wall -Wextra -Werror
WL_CXX_SRCS   := $(wildcard $(WL_SRCDIR)/*.cc)
WL_CXX_PROGS  := $(patsubst $(WL_SRCDIR)/%.cc,%,$(WL_CXX_SRCS))
WL_HAVE_CLANGXX := $(shell command -v $(WL_CLANGXX) 2>/dev/null)
WL_CLANGXX_PROGS := $(if $(WL_HAVE_CLANGXX),$(addsuffix _clang,$(WL_CXX_PROGS)))

# omp_cg: built as users build such codes (-O2, no frame-pointer flags),
# with libm; its own rule below.
WL_OMP_PROGS := $(filter-out omp_cg,$(WL_OMP_PROGS))
WL_OWN_PROGS := $(if $(wildcard $(WL_SRCDIR)/omp_cg.c),omp_cg)

WL_TAIL_PROGS := $(WL_TAIL_OMP) $(WL_TAIL_PTHREAD) \
	$(if $(WL_HAVE_CLANG),$(addsuffix _clang,$(WL_TAIL_PTHREAD))) \
	$(if $(WL_LIBOMP_SO),$(addsuffix _libomp,$(WL_TAIL_OMP)))

WL_PROGS := $(WL_PTHREAD_PROGS) $(WL_OMP_PROGS) $(WL_LIBOMP_PROGS) $(WL_OWN_PROGS) \
	    $(WL_CXX_PROGS) $(WL_CLANGXX_PROGS) $(WL_TAIL_PROGS) $(WL_USER_PROGS)
WL_USER_CLANG_BINS := $(if $(WL_HAVE_CLANG),$(addprefix $(WL_OUTDIR)/clang-O2/,$(WL_USER_PROGS)))
WL_BINS  := $(addprefix $(WL_OUTDIR)/,$(WL_PROGS)) $(WL_USER_CLANG_BINS)
WL_DEPS  := $(WL_SRCDIR)/work.h $(WL_SRCDIR)/workloads.mk

.PHONY: workloads
workloads: $(WL_BINS)

# Static pattern rules, so a program cannot be built with the wrong flags.
$(addprefix $(WL_OUTDIR)/,$(WL_PTHREAD_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_CFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/,$(WL_USER_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_USER_CFLAGS) $< -o $@

$(WL_USER_CLANG_BINS): $(WL_OUTDIR)/clang-O2/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_USER_CFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/,$(WL_OMP_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_CFLAGS) -fopenmp $< -o $@

$(addprefix $(WL_OUTDIR)/,$(WL_CXX_PROGS)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.cc $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CXX) $(WL_CXXFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/,$(WL_CLANGXX_PROGS)): $(WL_OUTDIR)/%_clang: $(WL_SRCDIR)/%.cc $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANGXX) $(WL_CXXFLAGS) $< -o $@

# clang adds -L and -rpath for its own libomp directory; the explicit
# rpath covers a libomp.so found elsewhere.
$(WL_OUTDIR)/omp_imbalance_libomp: $(WL_SRCDIR)/omp_imbalance.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_CFLAGS) -fopenmp=libomp $< -o $@ \
		-L$(dir $(WL_LIBOMP_SO)) -Wl,-rpath,$(dir $(WL_LIBOMP_SO))

$(addprefix $(WL_OUTDIR)/,$(WL_TAIL_PTHREAD)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_NOFP_CFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/,$(addsuffix _clang,$(WL_TAIL_PTHREAD))): $(WL_OUTDIR)/%_clang: \
		$(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_NOFP_CFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/,$(WL_TAIL_OMP)): $(WL_OUTDIR)/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) $(WL_NOFP_CFLAGS) -fopenmp $< -o $@

$(addprefix $(WL_OUTDIR)/,$(addsuffix _libomp,$(WL_TAIL_OMP))): $(WL_OUTDIR)/%_libomp: \
		$(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_NOFP_CFLAGS) -fopenmp=libomp $< -o $@ \
		-L$(dir $(WL_LIBOMP_SO)) -Wl,-rpath,$(dir $(WL_LIBOMP_SO))

# Exact-mode builds (`scalebpf cc`: every block counted per thread) of the
# planted-cause workloads, in $(BUILD)/workloads/exact/.  OpenMP ones use
# clang's libomp, the runtime exact mode follows.
WL_EXACT_PTHREAD := lime_owner lime_root lime_cache
WL_EXACT_OMP     := $(if $(WL_LIBOMP_SO),lime_omp_tri omp_args)
WL_EXACT_BINS    := $(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_PTHREAD) $(WL_EXACT_OMP) trace_sum)
WL_SCALEBPF      ?= $(BUILD)/scalebpf
WL_EXACT_FLAGS   := -O2 -Wall -Wextra -Werror

# The same sources built plainly with clang, the baseline of exact mode's
# slowdown in `make bench`.
WL_CLANG_BINS    := $(addprefix $(WL_OUTDIR)/clang/,$(WL_EXACT_PTHREAD))

.PHONY: workloads-exact
workloads-exact: $(WL_EXACT_BINS) $(WL_CLANG_BINS)

$(WL_CLANG_BINS): $(WL_OUTDIR)/clang/%: $(WL_SRCDIR)/%.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CLANG) $(WL_CFLAGS) $< -o $@

$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_PTHREAD)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_DEPS) $(WL_SCALEBPF) $(BUILD)/libscalebpf-rt.a
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc $(WL_EXACT_FLAGS) -pthread $< -o $@

# with full memory traces
$(WL_OUTDIR)/exact/trace_sum: $(WL_SRCDIR)/trace_sum.c $(WL_DEPS) $(WL_SCALEBPF) $(BUILD)/libscalebpf-rt.a
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc --trace-mem $(WL_EXACT_FLAGS) -pthread $< -o $@

$(addprefix $(WL_OUTDIR)/exact/,$(WL_EXACT_OMP)): $(WL_OUTDIR)/exact/%: $(WL_SRCDIR)/%.c $(WL_DEPS) $(WL_SCALEBPF) $(BUILD)/libscalebpf-rt.a
	@mkdir -p $(@D)
	$(WL_SCALEBPF) cc $(WL_EXACT_FLAGS) -fopenmp=libomp $< -o $@ \
		-L$(dir $(WL_LIBOMP_SO)) -Wl,-rpath,$(dir $(WL_LIBOMP_SO))

$(WL_OUTDIR)/omp_cg: $(WL_SRCDIR)/omp_cg.c $(WL_DEPS)
	@mkdir -p $(@D)
	$(WL_CC) -O2 -g -pthread -Wall -Wextra -Werror -fopenmp $< -o $@ -lm
