// SPDX-License-Identifier: MIT
/*
 * clang's load and store callbacks (-fsanitize-coverage=trace-loads,
 * trace-stores), for `scalebpf cc --trace-mem` and `--chip`, either or
 * both: each access goes to the trace writer (trace_mem.c) and to the
 * cache hit profile (chip_rt.c), whichever is linked (weak symbols).  The
 * callbacks are here, once, so the two can be linked together; pulled in
 * by `-u sb_mem_hooks`.
 */
#include "exact_rt.h"

int sb_mem_hooks;   /* the -u anchor */

/* CHiP's fast path (exact_rt.h), here: linked whenever the callbacks are */
struct sb_chip_fast sb_chip_fast;
__thread int sb_chip_open __attribute__((tls_model("initial-exec")));
__thread struct sb_chip_counts sb_chip_k __attribute__((tls_model("initial-exec")));

#define RET ((uintptr_t)__builtin_return_address(0))

/* (A unit that defines one of them too, as the trace test does by
 * including both files, knows it exists: no warning for the test.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"
/* The last line the gate stopped in this thread: the next access to the
 * same line (a stream's next words, a struct's next field) is stopped
 * without the hash. */
static __thread uintptr_t stopped_line __attribute__((tls_model("initial-exec")));

/* Whether SHARDS' gate stops addr, counted if so (sb_chip_gate_passes) */
static inline int chip_stopped(uintptr_t addr)
{
	uintptr_t line;

	if (!sb_chip_open || __atomic_load_n(&sb_chip_fast.set, __ATOMIC_ACQUIRE) != 1 ||
	    !sb_chip_fast.gate.shards)
		return 0;
	line = (addr >> sb_chip_fast.gate.line_shift) + 1;   /* 0: none yet */
	if (line != stopped_line) {
		if (sb_chip_gate_passes(&sb_chip_fast.gate, addr))
			return 0;
		stopped_line = line;
	}
	sb_chip_k.accesses++;
	return 1;
}

/* A trace, and maybe a cache profile too: out of the callbacks, whose
 * CHiP-only path then needs no saved register (fewer instructions per
 * access: more of a loop's loads in the core's window). */
static __attribute__((noinline)) void access_traced(uintptr_t addr, uintptr_t pc, uint32_t kind,
						    uint32_t size)
{
	if (sb_chip_access_rt && !chip_stopped(addr))
		sb_chip_access_rt(addr);
	sb_trace_access(addr, pc, kind, size);
}

static inline void access_one(uintptr_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
{
	if (sb_trace_access)
		access_traced(addr, pc, kind, size);
	else if (sb_chip_access_rt && !chip_stopped(addr))
		sb_chip_access_rt(addr);
}
#pragma GCC diagnostic pop

#define ACCESS(name, n, kind) \
	void __sanitizer_cov_##name##n(void *addr) { access_one((uintptr_t)addr, RET, kind, n); }
ACCESS(load, 1, SB_TRACE_LOAD)
ACCESS(load, 2, SB_TRACE_LOAD)
ACCESS(load, 4, SB_TRACE_LOAD)
ACCESS(load, 8, SB_TRACE_LOAD)
ACCESS(load, 16, SB_TRACE_LOAD)
ACCESS(store, 1, SB_TRACE_STORE)
ACCESS(store, 2, SB_TRACE_STORE)
ACCESS(store, 4, SB_TRACE_STORE)
ACCESS(store, 8, SB_TRACE_STORE)
ACCESS(store, 16, SB_TRACE_STORE)
