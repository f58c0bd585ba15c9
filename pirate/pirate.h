/* SPDX-License-Identifier: MIT */
/*
 * The Cache Pirate (Eklov et al., ../shared/papers/speedup-stacks.txt §3):
 * a co-runner on another CPU that keeps a working set of a chosen size
 * resident in the shared cache, so the program beside it gets the rest.
 *
 * The pirate walks its set as a random cyclic pointer chase (no
 * prefetcher follows it) with four cursors spread over the cycle (four
 * misses in flight: the walk is quick enough to keep its lines recent),
 * and checks, interval by interval, that the set really stays resident:
 *   - with a PMU, by its fetch ratio: last-level misses counted on the
 *     pirate's own thread over its loads (it knows them exactly); the
 *     paper's test, held while at most SB_PIRATE_MAX_FETCH_COUNTED;
 *   - without one, by its own load latency: an interval's time per load
 *     between the calibrated cache hit and DRAM latencies gives the share
 *     of loads that went to memory, (t − hit) / (miss − hit), held while
 *     at most SB_PIRATE_MAX_FETCH_LATENCY (wider: a VM's timer and
 *     neighbours move a latency by a few ns).
 * A measurement beside a pirate that did not hold its set is discarded
 * by the caller (the program got more cache than it was meant to).
 *
 * The pirate measures only while on (resumed): the profiled-thread
 * framework (profiled.c) turns it on while the profiled thread runs alone
 * and off while the others catch up, warming the set before each turn.
 */
#ifndef SB_PIRATE_H
#define SB_PIRATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define SB_PIRATE_MAX_FETCH_COUNTED 0.02
#define SB_PIRATE_MAX_FETCH_LATENCY 0.10
#define SB_PIRATE_CURSORS 4

/* The share of an interval's loads served by memory, from its time per
 * load and the calibrated latencies of a cache hit and of DRAM: clamped
 * to 0..1; -1 when the latencies cannot tell (miss ≤ hit, or unknown). */
double sb_pirate_fetch_ratio_latency(double load_ns, double hit_ns, double miss_ns);

/* Whether an interval of fetch ratio f held the set (counted: from the
 * PMU's misses, else from latency). */
int sb_pirate_interval_held(double f, int counted);

struct sb_pirate_stats {
	uint64_t bytes;            /* the set */
	int cpu;                   /* where it ran; -1: not pinned */
	int counted;               /* fetch ratios from PMU misses, else latency */
	uint64_t intervals;        /* measured while on */
	uint64_t intervals_held;
	uint64_t loads;            /* measured loads */
	double load_ns;            /* mean time per load, measured intervals */
	double fetch_mean;         /* loads-weighted mean fetch ratio */
	double fetch_max;          /* of one interval */
	uint64_t warmups;          /* turns started (each warmed first) */
};

/* Held over a run: measured at all and the mean fetch ratio within the
 * limit (a few slow intervals are the timer's; a mean is the set's). */
int sb_pirate_held(const struct sb_pirate_stats *s);

typedef int (*sb_pirate_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				   void *);

struct sb_pirate_opts {
	uint64_t bytes;            /* the set to hold; at least one line per cursor */
	uint32_t line;             /* 0: 64 */
	int cpu;                   /* pin here; -1: not pinned */
	double hit_ns, miss_ns;    /* calibrated (the latency check); 0: unknown */
	int no_pmu;                /* do not try the PMU (tests of the latency path) */
	sb_pirate_create_fn create;/* NULL: pthread_create (an interposer passes
				    * the real one) */
};

struct sb_pirate;

/* Allocates and builds the set, starts the thread (off).  0 or -errno
 * with err. */
int sb_pirate_alloc(struct sb_pirate **pp, const struct sb_pirate_opts *o, char *err,
		    size_t len);
/* Stops the thread, frees.  NULL is fine. */
void sb_pirate_free(struct sb_pirate *p);
/* Turns it on: returns once one full walk has warmed the set. */
void sb_pirate_resume(struct sb_pirate *p);
/* Turns it off: returns once the walk has stopped (nothing measured
 * after). */
void sb_pirate_pause(struct sb_pirate *p);
void sb_pirate_stats(struct sb_pirate *p, struct sb_pirate_stats *s);

#endif
