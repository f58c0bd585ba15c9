/* SPDX-License-Identifier: MIT */
/*
 * The exact-mode runtime linked into programs built by `scalebpf cc`:
 * per-thread basic-block counts (clang's trace-pc-guard callbacks) flushed
 * to scalebpf_exact_batch() whenever a segment of work ends (see
 * include/sbpf_events.h).  The wrappers (wrap_*.c, linked with
 * -Wl,--wrap=NAME) flush before a thread reaches a sync that closes a
 * segment, so each batch holds the work of exactly one segment.
 */
#ifndef SB_EXACT_RT_H
#define SB_EXACT_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "chip/chip.h"
#include "sbpf_trace.h"

/* Flushes the calling thread's counts; flags: 0 or SB_EXACT_LAST.  In a
 * trace build the SYNC record says which sync follows: kind (enum
 * sb_trace_sync, include/sbpf_trace.h) and its object. */
void sb_exact_sync(uint16_t flags, uint32_t kind, uintptr_t obj);
/* sb_exact_sync(flags, SB_TSYNC_OTHER, 0). */
void sb_exact_flush(uint16_t flags);

/* wrap_kmpc_fork_call.c: the OpenMP region the thread runs a task of
 * (its number, 1, 2, ... per process), 0 outside any: the object of its
 * region's barriers. */
extern __thread uintptr_t sbx_region;

/* Flushes and frees the calling thread's counters (its work is done). */
void sb_exact_thread_done(void);

/* cv_signalled.c: condvars pthread_cond_signal was called on (queues
 * not barriers), whose waits need no flush. */
void sb_cv_mark_signalled(const void *cv);
bool sb_cv_signalled(const void *cv);

/* In trace_mem.c, linked only into `scalebpf cc --trace-mem` programs
 * (weak: absent otherwise): a sync record at each segment end (and a
 * resume record owed before the thread's next record), lock records
 * written now (kind: SB_TRACE_ACQUIRE or SB_TRACE_RELEASE; pc: the
 * program's call), a condvar wait's re-acquisition of its mutex owed
 * like the resume, and the end of a thread's trace.  One object: all
 * present or none.
 *
 * Every wrapper of a sync or lock call ends in a tail call of the real
 * function, trace build or not: `record` takes the real call's return
 * address for the program's call site (records.c calls_probed).  So no
 * wrapper writes after a sync or lock call returns: what the trace must
 * show after it (the resume, a condvar wait's ACQUIRE) is owed and
 * written before the thread's next record, and a lock's ACQUIRE goes
 * before the call (nothing the trace records happens inside it).  The
 * exceptions never wait and are not probed: pthread_mutex_trylock,
 * omp_test_lock and omp_test_nest_lock return to their wrapper, which
 * must see whether they took the lock. */
void sb_trace_sync(uint16_t flags, uint32_t kind, uintptr_t obj) __attribute__((weak));
void sb_trace_lock(uint32_t kind, const void *lock, uintptr_t pc) __attribute__((weak));
void sb_trace_reacquire(const void *lock, uintptr_t pc) __attribute__((weak));
void sb_trace_thread_done(void) __attribute__((weak));
void sb_trace_access(uint64_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
	__attribute__((weak));

/* In chip_rt.c, linked only into `scalebpf cc --chip` programs (weak:
 * absent otherwise): a load or store into the thread's cache hit profile,
 * the segment's counters passed to scalebpf_chip_batch() at its end (before
 * the exact batch), and the thread's profile freed at its end. */
void sb_chip_access_rt(uintptr_t addr) __attribute__((weak));
void sb_chip_sync(uint16_t flags) __attribute__((weak));
void sb_chip_thread_done(void) __attribute__((weak));

/*
 * CHiP's fast path, inline in every load and store callback (mem_hooks.c,
 * which defines these): SHARDS' gate, and the count of the accesses it
 * stops, with no call.  At R = 0.01, 99% of accesses stop there; a call
 * and a thread lookup for each left fewer of a loop's loads in flight
 * (random reads: 4.5x the plain run).  All of it is the thread's own, in
 * 32 aligned bytes of TLS, so a stopped access reads nothing else (and
 * adds one to sb_chip_k.accesses): chip_rt.c fills it when the thread's
 * profile is made and closes it with the profile; while it is not open
 * every access goes to sb_chip_access_rt.
 * The thread's counters are TLS for that too: sb_chip_k, which `record
 * --region` reads.
 */
enum {
	SB_CHIP_TL_CLOSED = 0,
	SB_CHIP_TL_OPEN,             /* every access to sb_chip_access_rt */
	SB_CHIP_TL_GATED,            /* ... but those the gate stops (SHARDS) */
};
struct __attribute__((aligned(32))) sb_chip_tl {
	uint32_t state;              /* SB_CHIP_TL_* */
	uint32_t pad;
	struct sb_chip_gate gate;    /* sb_chip_gate_of's */
	uint64_t stopped;            /* the last line it stopped: the same
				      * line's next access (a stream's next
				      * words) is stopped without the hash */
};
/* initial-exec: the runtime is linked into executables only, and the
 * general model's __tls_get_addr call, which the linker relaxes away,
 * still made the compiler save registers around it in every callback */
extern __thread struct sb_chip_tl sb_chip_tl __attribute__((tls_model("initial-exec")));
extern __thread struct sb_chip_counts sb_chip_k __attribute__((tls_model("initial-exec")));

#endif
