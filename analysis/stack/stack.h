/* SPDX-License-Identifier: MIT */
/*
 * Speedup stacks (Eklov, Nikoleris, Hagersten: ../shared/papers/
 * speedup-stacks.txt): how much of a parallel phase's perfect speedup T
 * at T threads is lost to shared-cache capacity, to memory bandwidth and
 * to synchronization.
 *
 * A phase is a section (fork to join, an OpenMP region, barrier to
 * barrier), matched by location across runs of the same program at 1 and
 * T threads.  From the runs:
 *   - measured: S = t(1) / t(T), t the phase's time: the slowest thread's
 *     wall time in it summed over its instances;
 *   - synchronization-free (§6.3): the slowest thread's time less its
 *     waits at locks and barriers, t_free = max over threads of its busy
 *     (on-CPU) time summed over the instances less the share of its
 *     samples in the thread libraries' lock code (the paper times each
 *     lock call; probing every call costs microseconds here, the samples
 *     are free); S_free = t(1) / t_free.  The time between is split: lock = max(busy + blocked
 *     inside the phase) − t_free; imbalance = what waiting for each
 *     instance's slowest thread adds over the slowest thread's total;
 *     barrier = the rest (the closing synchronization's own cost);
 *   - pirate (§6.1–6.2): S_pirate = T / slowdown, the slowdown of one
 *     thread left 1/T of the shared cache and all of the memory.  A real
 *     Cache Pirate measures it; a virtual one predicts it from the
 *     phase's CHiP profile: the extra misses at the cache's 1/T share
 *     times the calibrated miss penalty, over the phase's serial time.
 *     Where the machine's last-level cache is not shared (measured) a
 *     thread's share is the whole cache: nothing to steal, slowdown 1.
 * (A real pirate's slowdown may be below 1; any above 0 splits the
 * cache out.)
 * The program's serial part (outside every phase, at one thread) gives
 * Amdahl's limit, shown beside the program's measured speedup.
 * Components (speedup units): cache = T − S_pirate, memory = S_pirate −
 * S_free, sync = S_free − S; each negative one is 0 and the difference
 * shows as the residual, so the stack sums to T − S.  Pure computation.
 */
#ifndef SB_STACK_H
#define SB_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

enum sb_stack_pirate {
	SB_STACK_PIRATE_NONE = 0,     /* no cache profile: cache not split out */
	SB_STACK_PIRATE_VIRTUAL = 1,  /* predicted from the CHiP profile */
	SB_STACK_PIRATE_REAL = 2,     /* a Cache Pirate co-ran */
	SB_STACK_PIRATE_MAX
};

/* A phase's times at T threads (ns), and at one thread (base). */
struct sb_stack_times {
	uint32_t threads;
	uint64_t base_ns;       /* t(1) */
	uint64_t time_ns;       /* t(T) */
	uint64_t nolock_ns;     /* the slowest thread's busy + blocked inside */
	uint64_t free_ns;       /* the slowest thread's busy */
	uint64_t imbalance_ns;  /* of time − nolock: waiting for each
				 * instance's slowest thread */
	uint32_t pirate;        /* enum sb_stack_pirate */
	double slowdown;        /* the pirate's (>= 1; NONE: unused) */
};

struct sb_stack {
	double perfect, measured, free_est, pirate_est;   /* speedups */
	double cache, memory, sync, residual;             /* components */
	double lock, barrier, imbalance;                  /* sync, split */
	int cache_known;                                  /* pirate not NONE */
};

/* The stack of t; -EINVAL without times or threads. */
int sb_stack_compute(const struct sb_stack_times *t, struct sb_stack *s);

/* Section i's times in p (threads: the run's T; base and the pirate the
 * caller's): from its per-thread sums over every instance and, for the
 * imbalance, its stored instances scaled to all.  -EINVAL out of range
 * or without threads. */
int sb_stack_section_times(const struct sb_profile *p, size_t i, struct sb_stack_times *t);

/* The virtual pirate at `threads` from row `row` of p's CHiP profile
 * (the phase's, from a one-thread run): its slowdown and the cache it
 * leaves a thread (*bytes).  -EINVAL when the row cannot give one (no
 * machine latencies, no time). */
int sb_stack_virtual_pirate(const struct sb_profile *p, size_t row, unsigned threads,
			    double *slowdown, uint64_t *bytes);

/* A run's whole time (its threads' first start to last end) and the
 * part inside parallel phases: the union of its stored instances' spans
 * (nested sections counted once), plus each section's mean span for its
 * instances beyond the stored ones.  -EINVAL without threads, -ENOMEM. */
int sb_stack_program(const struct sb_profile *p, uint64_t *total_ns, uint64_t *parallel_ns);

/* Amdahl's speedup at `threads` of a program whose serial fraction (at
 * one thread) is `serial`: 1 / (s + (1 - s) / T); 0 out of range. */
double sb_stack_amdahl(double serial, unsigned threads);

/* The real pirate's slowdown at `threads` (§6.2): section i of p, a
 * run under the profiled-thread framework beside a Cache Pirate
 * (pirate/profiled.h), where the profiled threads `tids` ran alone with
 * the cache the pirate left them: their busy time in the section over
 * the one-thread time's per-thread part, base_ns / threads.  (Below 1
 * when the share ran faster than that: no cache lost.)  -EINVAL when
 * none of tids worked in the section. */
int sb_stack_real_pirate(const struct sb_profile *p, size_t i, const int32_t *tids, size_t ntids,
			 unsigned threads, uint64_t base_ns, double *slowdown);

/* A run under the profiled-thread framework at threads[k], for
 * sb_stack_rows: its profile (NULL: none at this count), the profiled
 * threads, the cache the pirate left them, and whether the pirate held
 * its set (if not, the measurement is discarded: the row says real, not
 * held, and the cache is not split out). */
/* The shortest per-thread share of a phase (base_ns / threads) a real
 * pirate's slowdown is taken for. */
#define SB_STACK_REAL_MIN_NS 1000000ull

struct sb_stack_site {       /* the framework's own time at a barrier site */
	uint64_t vaddr;             /* the call, as sb_loc.offset */
	const char *binary;         /* its path (compared by base name) */
	uint64_t busy_ns;           /* the profiled threads' on-CPU time */
};

struct sb_stack_real {
	const struct sb_profile *run;
	const int32_t *tids;
	size_t ntids;
	const struct sb_stack_site *sites;  /* preferred where the phase's
					     * location is one of them: the
					     * run's own barrier sections sit
					     * at the framework's call */
	size_t nsites;
	uint64_t bytes;
	int held;
};

/*
 * The STACK rows of a program's runs at threads[k] threads (runs[k]'s
 * profile; one of them at one thread): a row per phase of out (the run
 * with the most threads, whose sections name the phases) and run where
 * the phase is found in that run and in the one-thread run; the pirate
 * real where real (NULL, or n entries) has a framework run at that count
 * in which the phase is found (by its closing site among the
 * framework's, else by location) and its share is at least
 * SB_STACK_REAL_MIN_NS, else virtual where the one-thread run's
 * CHiP row of the phase can give one.  Appended to out->stack; *phases:
 * phases with rows.  0, -EINVAL without a one-thread run, -ENOMEM.
 */
int sb_stack_rows(struct sb_profile *out, const struct sb_profile *const *runs,
		  const unsigned *threads, size_t n, const struct sb_stack_real *real,
		  size_t *phases);

#endif
