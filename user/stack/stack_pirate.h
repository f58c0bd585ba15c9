/* SPDX-License-Identifier: MIT */
/*
 * `scalebpf stack`'s real Cache Pirate (pirate/profiled.h): whether it
 * runs (the calibration must find a last-level cache shared by CPUs,
 * unless asked for anyway), what it holds at each thread count, and what
 * each run under the profiled-thread framework gave: usable, discarded
 * (the pirate did not hold its set) or none (the framework gave up: a
 * program it cannot control).
 */
#ifndef SB_STACK_PIRATE_H
#define SB_STACK_PIRATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "profiled.h"
#include "stack/stack.h"

#define SB_STACK_PIRATE_RUNS 16

struct sb_stack_pirate_runs {
	char lib[PATH_MAX];      /* the framework, preloaded */
	uint64_t llc;            /* the cache it steals from */
	double hit_ns, miss_ns;  /* its residency check's latencies */
	unsigned llc_cpus;       /* the calibration's sharers (1: private) */
	/* per thread count (the stack's index) */
	char file[SB_STACK_PIRATE_RUNS][PATH_MAX];    /* its profile */
	char stats[SB_STACK_PIRATE_RUNS][PATH_MAX];   /* the framework's */
	struct sb_profiled_stats st[SB_STACK_PIRATE_RUNS];
	int ran[SB_STACK_PIRATE_RUNS];                /* stats read, not abandoned */
	struct sb_profile *run[SB_STACK_PIRATE_RUNS];
	struct sb_stack_site sites[SB_STACK_PIRATE_RUNS][SB_PROFILED_MAX_SITES];
};

/*
 * Whether the real pirate runs: 1 (sp filled), 0 (the virtual one: why
 * printed unless quiet), -1 (forced and impossible: printed).  self: the
 * scalebpf binary (the library sits beside it, or $SCALEBPF_PROFILED_LIB).
 */
int sb_stack_pirate_plan(struct sb_stack_pirate_runs *sp, bool forced, const char *self, bool quiet);

/* The pirate's set at t threads: all but the 1/t share it leaves. */
uint64_t sb_stack_pirate_bytes(const struct sb_stack_pirate_runs *sp, unsigned t);

/* After the run at index k (t threads): its stats read and judged, what
 * it means printed (abandoned, not held); sp->ran[k] set. */
void sb_stack_pirate_judge(struct sb_stack_pirate_runs *sp, size_t k, unsigned t, bool quiet);

/* The usable runs' profiles read into real[] (n entries, zeroed where
 * none) for sb_stack_rows; the pirate's metadata into out.  0, or -1
 * with the reason printed. */
int sb_stack_pirate_real(struct sb_stack_pirate_runs *sp, const unsigned *threads, size_t n,
			 struct sb_stack_real *real, struct sb_profile *out);

void sb_stack_pirate_release(struct sb_stack_pirate_runs *sp);

#endif
