# scalebpf — see README.md.  `make`, `make demo`, `make check`, `make bench`.

VERSION   := 0.1.0
BUILD     := build
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
ARCH      := x86
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

WARN      := -Wall -Wextra -Werror
CFLAGS    ?= -O2 -g
CFLAGS    += $(WARN) -std=gnu11 -D_GNU_SOURCE -DSB_VERSION=\"$(VERSION)\" \
	     -Iinclude -Ianalysis -Iuser -Ipirate -I$(BUILD)
# float-cast-overflow: gcc's "undefined" leaves out a double cast to an
# integer it cannot hold (clang's, the fuzzer's, has it); a profile's
# crafted numbers reach such casts.
SAN_FLAGS := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	     -fno-sanitize-recover=undefined,float-cast-overflow

LIBS_ANALYSIS := -lgsl -lgslcblas -lm
# -lstdc++: __cxa_demangle, for C++ function names (user/binary/demangle.c)
LIBS_ELF      := -ldw -lelf -lcapstone -lz -lstdc++
LIBS_BPF      := -lbpf
# record --push: HTTP(S) to Pyroscope or Parca (user/push/)
LIBS_CURL     := -lcurl -lpthread
LIBS_PFM      := -lpfm
# the simulated caches' geometry (user/record/record_sharing.c)
LIBS_HWLOC    := -lhwloc

# The engine: one folder per module (analysis/<m>/), no root access or
# libbpf needed.  user/binary/ and the PMU-free parts of user/hw/ are
# likewise unit-testable anywhere; the rest of user/ loads BPF.
ANALYSIS_SRC := $(wildcard analysis/*/*.c)
USER_LIB_SRC := $(wildcard user/binary/*.c) user/hw/lbr_pebs.c user/hw/hwagg.c user/hw/pmu.c \
		user/opt_parse.c user/calibrate/calibrate_cache.c user/record/record_region.c \
		pirate/pirate.c pirate/profiled_stats.c user/report/export/pb.c \
		user/push/push_req.c
USER_SRC     := $(filter-out $(USER_LIB_SRC) user/rt/%,$(wildcard user/*.c user/*/*.c \
		user/report/export/*.c))
BPF_SRC      := $(wildcard bpf/*.bpf.c)
SKELS        := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRC))

ANALYSIS_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(ANALYSIS_SRC))
USER_LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(USER_LIB_SRC))
USER_OBJ     := $(patsubst %.c,$(BUILD)/%.o,$(USER_SRC))
ASAN_ANALYSIS_OBJ := $(patsubst %.c,$(BUILD)/asan/%.o,$(ANALYSIS_SRC))
ASAN_USER_LIB_OBJ := $(patsubst %.c,$(BUILD)/asan/%.o,$(USER_LIB_SRC))
ASAN_USER_OBJ     := $(patsubst %.c,$(BUILD)/asan/%.o,$(USER_SRC))

# tests/unit/<module>/test_*.c, one folder per module; the binaries keep
# flat names (build/tests/test_lime...), the sources are found by vpath.
UNIT_SRC   := $(wildcard tests/unit/*/test_*.c)
UNIT_BIN   := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(UNIT_SRC)))
UNIT_ASAN  := $(patsubst %.c,$(BUILD)/asan/tests/%,$(notdir $(UNIT_SRC)))
vpath test_%.c $(sort $(dir $(UNIT_SRC)))

DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all deps demo check check-unit check-integration bench clean workloads fuzz accuracy
all: $(BUILD)/scalebpf $(BUILD)/libscalebpf-rt.a $(BUILD)/libscalebpf-profiled.so

# Missing Debian packages are installed once (root + apt-get); the stamp
# is redone when the script changes.
$(DEPS_STAMP): .ci/install-deps.sh
	@mkdir -p $(BUILD)
	@sh .ci/install-deps.sh
	@touch $@
deps: $(DEPS_STAMP)

$(BUILD)/vmlinux.h: | $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	@if [ ! -r $(VMLINUX_BTF) ]; then \
		echo "error: $(VMLINUX_BTF) is missing: this kernel has no BTF" \
		     "(CONFIG_DEBUG_INFO_BTF=y is needed to build and run scalebpf)" >&2; \
		exit 1; fi
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/*.h include/*.h $(BUILD)/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-Iinclude -Ibpf -I$(BUILD) -c $< -o $@

# Kept: as intermediates of a pattern chain make would delete them after
# each build and then rebuild everything that depends on the skeletons.
.SECONDARY: $(SKELS) $(SKELS:.skel.h=.bpf.o)

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# Header dependencies come from the compiler (-MMD: one .d beside each
# object); the skeletons are generated headers, so every user/ object
# waits for them.
DEPFLAGS := -MMD -MP
$(BUILD)/analysis/%.o: analysis/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/user/%.o: user/%.c $(SKELS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/pirate/%.o: pirate/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# The speedup stacks' profiled-thread framework with its Cache Pirate
# (pirate/profiled.h), preloaded into the program by `scalebpf stack`.
PROFILED_SRC := pirate/profiled.c pirate/pirate.c pirate/profiled_stats.c
$(BUILD)/libscalebpf-profiled.so: $(PROFILED_SRC) pirate/*.h | $(DEPS_STAMP)
	$(CC) -O2 -g -fPIC -shared $(WARN) -std=gnu11 -D_GNU_SOURCE $(PROFILED_SRC) -o $@ \
		-ldl -lpthread

$(BUILD)/scalebpf: $(USER_OBJ) $(USER_LIB_OBJ) $(ANALYSIS_OBJ)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS_BPF) $(LIBS_PFM) $(LIBS_HWLOC) $(LIBS_ELF) $(LIBS_ANALYSIS) \
		$(LIBS_CURL)

# The exact-mode runtime linked into `scalebpf cc` programs: position
# independent, never instrumented, one archive member per wrapper.
# The cache hit profile (--chip) runs analysis/chip's CacheSets in the
# target: those sources are compiled into it too.
RT_CHIP_SRC := analysis/chip/chip.c analysis/chip/chip_shards.c
RT_SRC := $(wildcard user/rt/*.c) $(wildcard user/rt/*.S)
RT_OBJ := $(patsubst %,$(BUILD)/rt/%.o,$(notdir $(RT_SRC) $(RT_CHIP_SRC)))
$(BUILD)/rt/%.o: user/rt/% user/rt/*.h include/*.h analysis/chip/*.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIC $(WARN) -std=gnu11 -Iinclude -Ianalysis -c $< -o $@
$(BUILD)/rt/%.o: analysis/chip/% analysis/chip/*.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIC $(WARN) -std=gnu11 -Iinclude -Ianalysis -c $< -o $@
$(BUILD)/libscalebpf-rt.a: $(RT_OBJ)
	rm -f $@
	ar rcs $@ $^

# Sanitizer builds of everything userspace.
$(BUILD)/asan/%.o: %.c $(SKELS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/asan/scalebpf: $(ASAN_USER_OBJ) $(ASAN_USER_LIB_OBJ) $(ASAN_ANALYSIS_OBJ) \
		| $(BUILD)/asan/libscalebpf-profiled.so
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(filter %.o,$^) -o $@ $(LIBS_BPF) $(LIBS_PFM) $(LIBS_HWLOC) \
		$(LIBS_ELF) $(LIBS_ANALYSIS) $(LIBS_CURL)

# `scalebpf stack` finds the framework beside its binary: the sanitizer
# build's gets the same library (it runs in the program, never under ASan).
$(BUILD)/asan/libscalebpf-profiled.so: $(BUILD)/libscalebpf-profiled.so
	@mkdir -p $(@D)
	cp $< $@

# Loads the hardware samplers' BPF programs through record's own loader
# (tests/integration/hw.sh): they must pass the verifier even where no
# PMU lets them attach.
$(BUILD)/tests/hw_load: tests/integration/hw_load.c $(BUILD)/user/hw/hwsample.o $(BUILD)/user/hw/pmu.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS_BPF) $(LIBS_PFM)

$(BUILD)/tests/test_%: test_%.c $(ANALYSIS_OBJ) $(USER_LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itests/unit $< $(ANALYSIS_OBJ) $(USER_LIB_OBJ) -o $@ \
		$(LIBS_PFM) $(LIBS_ELF) $(LIBS_ANALYSIS)

$(BUILD)/asan/tests/test_%: test_%.c $(ASAN_ANALYSIS_OBJ) $(ASAN_USER_LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -Itests/unit $< $(ASAN_ANALYSIS_OBJ) \
		$(ASAN_USER_LIB_OBJ) -o $@ $(LIBS_PFM) $(LIBS_ELF) $(LIBS_ANALYSIS)

# The profile reader's fuzz target (tests/fuzz/): libFuzzer, built with
# clang (its runtime: libclang-rt-14-dev) under ASan/UBSan, from the
# analysis modules and the report views it drives.  The seeds are
# profiles the module's own writer makes at build time.
FUZZ_SRC   := $(ANALYSIS_SRC) $(wildcard user/report/*.c user/report/export/*.c) \
	      $(wildcard user/binary/*.c)
FUZZ_OBJ   := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(FUZZ_SRC))
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	      -fno-omit-frame-pointer
$(BUILD)/fuzz/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

# user/binary/: the report's source view links the ELF reader (it runs
# with no_source in the target: nothing is opened).
$(BUILD)/fuzz/fuzz_profile: tests/fuzz/fuzz_profile.c $(FUZZ_OBJ)
	$(CLANG) $(CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(DEPFLAGS) $< $(FUZZ_OBJ) \
		-o $@ $(LIBS_ELF) $(LIBS_ANALYSIS)

$(BUILD)/fuzz/fuzz_seeds: tests/fuzz/fuzz_seeds.c $(ANALYSIS_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itests/unit $< $(ANALYSIS_OBJ) -o $@ $(LIBS_ANALYSIS)

$(BUILD)/fuzz/seeds/.stamp: $(BUILD)/fuzz/fuzz_seeds
	@rm -rf $(@D) && mkdir -p $(@D)
	$(BUILD)/fuzz/fuzz_seeds $(@D)
	@touch $@

FUZZ_DEPS := $(BUILD)/fuzz/fuzz_profile $(BUILD)/fuzz/seeds/.stamp

# `make fuzz`: ten minutes (FUZZ_TIME=seconds to change); `make check`
# runs the same for 30 s with the unit tests.
FUZZ_TIME ?= 600
fuzz: $(FUZZ_DEPS)
	@FUZZ_TIME=$(FUZZ_TIME) BUILD=$(BUILD) sh tests/fuzz/run-fuzz.sh

include tests/workloads/workloads.mk

check-unit: $(UNIT_BIN) $(UNIT_ASAN) workloads $(FUZZ_DEPS)
	@FUZZ_TIME=$${FUZZ_CHECK_TIME:-30} BUILD=$(BUILD) \
		sh tests/run-unit.sh $(UNIT_BIN) $(UNIT_ASAN) tests/fuzz/run-fuzz.sh

check-integration: $(BUILD)/scalebpf $(BUILD)/asan/scalebpf workloads workloads-exact
	@bash tests/run-integration.sh

check: $(DEPS_STAMP)
	@$(MAKE) --no-print-directory all $(BUILD)/asan/scalebpf workloads workloads-exact
	@sh tests/tools/layout.sh $(BUILD)
	@sh tests/run-all.sh

demo: $(BUILD)/scalebpf workloads
	@sh tests/demo.sh

bench: $(BUILD)/scalebpf workloads workloads-exact $(BUILD)/tests/test_lime_bench \
	$(BUILD)/tests/test_coherence_bench
	@sh tests/bench.sh

# `make accuracy`: the generated planted-cause suite of issue 12
# (tests/accuracy/run.sh): ACC_N programs written from a seed, new each run
# and printed (ACC_SEED= repeats one), built, recorded and scored in exact and
# sampled mode.  Needs root.  ACC_MODE=exact|sampled|both, ACC_ARGS= more
# run.sh options (thresholds, -k, -o DIR).
ACC_N    ?= 60
ACC_MODE ?= both
accuracy: $(BUILD)/scalebpf $(BUILD)/libscalebpf-rt.a $(BUILD)/tests/acc_gen
	@ACC_GEN=$(BUILD)/tests/acc_gen bash tests/accuracy/run.sh -n $(ACC_N) --mode $(ACC_MODE) \
		$(if $(ACC_SEED),-s $(ACC_SEED)) $(ACC_ARGS)

# the suite's program generator (run.sh builds its own when run alone)
$(BUILD)/tests/acc_gen: $(wildcard tests/accuracy/*.c) tests/accuracy/gen.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror $(filter %.c,$^) -o $@

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
