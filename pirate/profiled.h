/* SPDX-License-Identifier: MIT */
/*
 * The profiled-thread framework (speedup stacks §6.1), preloaded into the
 * program (build/libscalebpf-profiled.so, LD_PRELOAD): one thread runs
 * alone with the whole machine, and a Cache Pirate beside it, while the
 * others wait; so that thread's busy time is its work with no lock
 * contention, all of the memory bandwidth and the cache the pirate left.
 *
 * The rule, for pthread programs (the paper's limit too: GOMP's barriers
 * are internal; condition variables are not controlled):
 *   - a thread created while no profiled thread is alive becomes the
 *     profiled one (one per fork-join phase);
 *   - every other created thread waits at its start until the profiled
 *     thread has arrived at its first barrier or ended;
 *   - at pthread_barrier_wait the profiled thread lets the others run
 *     (the pirate pauses), waits at the barrier with them, and after it
 *     runs alone again (the pirate warms its set first); another thread,
 *     past barrier k, waits until the profiled thread arrives at k + 1 or
 *     ends.
 * A thread that waits for the profiled one forever would hang the
 * program.  The framework gives up for the rest of the run (`abandoned`,
 * with why; everything then runs free and the caller discards the
 * measurement) when, while others are held, the profiled thread is found
 * blocked outside a pthread barrier (its CPU time still for 50 ms: a
 * condition variable, a lock, I/O), or waits at a barrier for 500 ms
 * while a held thread has passed more barriers than it reached (barriers
 * of thread subsets: it may be waiting for that thread).  The main thread is not held
 * (it is running when the library loads); if it passes a barrier while
 * the profiled thread runs alone, `main_overlap` counts it.
 *
 * The profiled thread's on-CPU time per closing barrier site is kept
 * (sb_profiled_site): the recorder cannot tell the program's barriers
 * apart behind the wrapper.
 *
 * Environment: SCALEBPF_PROFILED_OUT (the stats file; unset: the library
 * does nothing), SCALEBPF_PIRATE_BYTES (0: no pirate),
 * SCALEBPF_PIRATE_HIT_NS, SCALEBPF_PIRATE_MISS_NS (the calibration's),
 * SCALEBPF_PIRATE_CPU (default: the last allowed CPU),
 * SCALEBPF_PROFILED_CPU (default: the first other).
 */
#ifndef SB_PROFILED_H
#define SB_PROFILED_H

#include <stddef.h>
#include <stdint.h>

#include "pirate.h"

#define SB_PROFILED_MAX_TIDS 256
#define SB_PROFILED_MAX_SITES 64

/* The profiled thread's on-CPU time in the segments a barrier call site
 * closed: the site as the recorder keys a location (the call's address,
 * its return address − 1, as an ELF virtual address of its binary).  The
 * recorder sees the framework's own call of the real barrier instead, so
 * its barrier sections in such a run cannot be matched by location:
 * these can. */
struct sb_profiled_site {
	uint64_t vaddr;
	uint64_t busy_ns;
	uint64_t count;
	char binary[256];
};

struct sb_profiled_stats {
	uint32_t ntids;
	int32_t tids[SB_PROFILED_MAX_TIDS];  /* the profiled threads, in order */
	uint64_t tids_dropped;               /* beyond the array */
	uint64_t turns;                      /* times it ran alone */
	uint64_t alone_ns;                   /* wall time it ran alone */
	uint64_t main_overlap;
	int abandoned;
	char why[160];                       /* when abandoned */
	uint32_t nsites;
	struct sb_profiled_site sites[SB_PROFILED_MAX_SITES];
	uint64_t sites_dropped;              /* arrivals at sites beyond them */
	int pirate;                          /* a pirate ran */
	struct sb_pirate_stats ps;
};

/* key=value lines; 0 or -errno. */
int sb_profiled_stats_write(const struct sb_profiled_stats *s, const char *path);
/* -ENOENT, -EINVAL (err says which line), or 0. */
int sb_profiled_stats_read(struct sb_profiled_stats *s, const char *path, char *err,
			   size_t len);

#endif
