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
__thread struct sb_chip_tl sb_chip_tl __attribute__((tls_model("initial-exec")));
__thread struct sb_chip_counts sb_chip_k __attribute__((tls_model("initial-exec")));

#define RET ((uintptr_t)__builtin_return_address(0))

/* (A unit that defines one of them too, as the trace test does by
 * including both files, knows it exists: no warning for the test.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"
/* Whether SHARDS' gate stops addr, counted if so (sb_chip_gate_passes) */
static inline int chip_stopped(uintptr_t addr)
{
	uintptr_t line;

	if (sb_chip_tl.state != SB_CHIP_TL_GATED)
		return 0;
	line = addr >> sb_chip_tl.gate.line_shift;
	if (line != sb_chip_tl.stopped) {
		if (sb_chip_line_passes(&sb_chip_tl.gate, line))
			return 0;
		sb_chip_tl.stopped = line;
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
	if (!chip_stopped(addr) && sb_chip_access_rt)
		sb_chip_access_rt(addr);
	sb_trace_access(addr, pc, kind, size);
}

static inline void access_one(uintptr_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
{
	if (sb_trace_access)
		access_traced(addr, pc, kind, size);
	else if (!chip_stopped(addr) && sb_chip_access_rt)   /* open: linked */
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
