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
	SB_TRACE_SYNC = 3,   /* addr: CLOCK_MONOTONIC ns; pc: SB_EXACT_* flags */
	/* The sync call a SYNC stands before has returned (a barrier left,
	 * a join done): addr: CLOCK_MONOTONIC ns.  [RESUME, next SYNC] is
	 * when the thread ran, which the simulator's regions need: a SYNC
	 * alone is an arrival, and the first thread at a barrier arrives
	 * long before the last. */
	SB_TRACE_RESUME = 4,
	/* A lock taken (after the call returned) and about to be given
	 * back (before the call): addr: the lock object (pthread mutex,
	 * OpenMP critical name or omp_lock_t); pc: the call site.  Accesses
	 * between them are lock-protected, and the interleaved simulation
	 * keeps their mutual exclusion (ccSIM §II-C). */
	SB_TRACE_ACQUIRE = 5,
	SB_TRACE_RELEASE = 6,
};

struct sb_trace_rec {
	__u64 addr;
	__u64 pc;            /* return address of the instrumentation call */
	__u32 kind;          /* enum sb_trace_kind */
	__u32 size;
};

#endif
