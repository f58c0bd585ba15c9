/* SPDX-License-Identifier: MIT */
/*
 * Full per-thread memory traces of a program built with
 * `scalebpf cc --trace-mem` (user/rt/trace_mem.c), for the exact cache
 * coherence and cache-hit-profile analyses: one file per thread,
 * <dir>/trace.<tid>, holding a header and then records in program order.
 * Sync records are written at every segment end the exact-mode runtime
 * sees (barriers, joins, OpenMP regions and barriers, thread ends), with
 * CLOCK_MONOTONIC time, the clock of the profile's instances: they order
 * the threads' accesses against each other (ccSIM's interleaved mode) and
 * place them in section instances.  Little-endian, fixed-size records; a
 * file cut short by a crash ends in a partial record, which readers drop.
 */
#ifndef SBPF_TRACE_H
#define SBPF_TRACE_H

#include <linux/types.h>

#define SB_TRACE_MAGIC "SBTRACE1"

struct sb_trace_hdr {
	char magic[8];
	__u32 pid, tid;
};

enum sb_trace_kind {
	SB_TRACE_LOAD = 1,   /* addr, pc of the access, size in bytes */
	SB_TRACE_STORE = 2,
	/* A segment ends at a sync call, before it (an arrival): addr:
	 * CLOCK_MONOTONIC ns; pc: the sync object (below); size: the
	 * SB_EXACT_* flags in bits 0-7, enum sb_trace_sync in bits 8-15. */
	SB_TRACE_SYNC = 3,
	/* The thread started, or went on after the SYNC just before it (a
	 * barrier left, a join done).  It is the thread's first record, and
	 * the very next record after every SYNC but the thread's last:
	 * written just before the first record the thread makes after its
	 * start or after the sync call returned (a load or store, a lock
	 * record or the next SYNC).  addr: CLOCK_MONOTONIC ns of that
	 * moment, an upper bound of when the call returned (later by the
	 * untraced work in between), never after the next SYNC's.  [RESUME,
	 * next SYNC] is when the thread ran, which the simulator's regions
	 * need: a SYNC alone is an arrival, and the first thread at a
	 * barrier arrives long before the last. */
	SB_TRACE_RESUME = 4,
	/* A lock taken and about to be given back: addr: the lock object
	 * (pthread mutex, OpenMP critical name or omp_lock_t); pc: the
	 * program's call site.  Each stands at its place among the thread's
	 * records, after the accesses before the call and before those
	 * after it.  An ACQUIRE is written before a blocking lock call
	 * (nothing is traced inside it; a lock call that fails or times out
	 * is recorded as taken), after a trylock that succeeded, and, for a
	 * condvar wait retaking its mutex, just before the thread's next
	 * record (after the wait's RESUME).  A RELEASE is written before the
	 * unlock or condvar wait.  Accesses between them are lock-protected,
	 * and the interleaved simulation keeps their mutual exclusion
	 * (ccSIM §II-C). */
	SB_TRACE_ACQUIRE = 5,
	SB_TRACE_RELEASE = 6,
	/* The thread's stack: [addr, pc) (pthread_getattr_np), right after
	 * its first RESUME: data there is named as that thread's stack. */
	SB_TRACE_STACK = 7,
};

/*
 * What a SYNC stands before, and its object: what lets the simulator
 * find when the thread could go on (its departure is not recorded: the
 * wrappers tail-call).  A barrier's k-th wait on an object is one
 * episode for all its threads, left when the last arrived; a join is left
 * when the joined thread ended; a condvar wait when a later broadcast or
 * signal on it came.  (Traces written before there were kinds read as
 * SB_TSYNC_OTHER, object 0.)
 */
enum sb_trace_sync {
	SB_TSYNC_OTHER = 0,
	SB_TSYNC_BARRIER = 1,       /* pthread_barrier_wait: the barrier */
	SB_TSYNC_COND_WAIT = 2,     /* a flushing pthread_cond_(timed)wait: the cond */
	SB_TSYNC_COND_WAKE = 3,     /* pthread_cond_broadcast or _signal: the cond */
	SB_TSYNC_JOIN = 4,          /* pthread_join: the joined pthread_t */
	SB_TSYNC_THREAD_END = 5,    /* the thread's end: its own pthread_t */
	SB_TSYNC_OMP_FORK = 6,      /* __kmpc_fork_call, the master: the
				     * region's number (1, 2, ... per process) */
	SB_TSYNC_OMP_TASK = 7,      /* a team thread starts the region's
				     * outlined function: the region's number */
	SB_TSYNC_OMP_TASK_END = 8,  /* ... and ends it (SB_EXACT_LAST) */
	SB_TSYNC_OMP_BARRIER = 9,   /* __kmpc_barrier in a region: its number */
	SB_TSYNC_CREATE = 10,       /* pthread_create, before it: 0 (trace
				     * only: no segment of counts ends) */
};

struct sb_trace_rec {
	__u64 addr;
	__u64 pc;            /* return address of the instrumentation call */
	__u32 kind;          /* enum sb_trace_kind */
	__u32 size;
};

#endif
