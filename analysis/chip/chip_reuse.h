/* SPDX-License-Identifier: MIT */
/*
 * Sampled cache hit profiles: a hit-ratio curve from sampled reuses, for
 * recordings that cannot see every access (chip.h is the exact profile).
 *
 * A reuse sample is one sampled access and how long until its line (or
 * word: the caller's granule) is accessed again: in accesses (a PMU
 * counting memory operations between a sample and a watchpoint's trap,
 * RDX-style), or in nanoseconds (a watchpoint's trap time, no PMU).  A
 * sample that saw no reuse within its window is censored: longer than
 * the window, by how much unknown.  Samples go into log-spaced buckets
 * (16 exact, then 8 per power of two).
 *
 * StatStack (Eklöv & Hagersten, ISPASS'10), lengths in accesses: with
 * S(x) = P(reuse length > x), a reuse of length d has stack distance
 * SD(d) = ∫_1^d S(x) dx lines (the distinct lines the accesses in
 * between touch, each access i of them counting when its own next reuse
 * lies beyond d), and an LRU cache of C lines hits it iff SD(d) < C:
 * hit(C) = 1 - S(d_C), SD(d_C) = C.
 *
 * Time, no access count (HOTL: Xiang et al., ASPLOS'13): SD needs the
 * access rate, which a machine without a PMU cannot measure; the average
 * footprint F(t), the distinct granules touched in a window of length t,
 * replaces it: hit(C) = 1 - S(t_C), F(t_C) = C.  F is measured, not
 * assumed: granules drawn uniformly from a universe of U (the mapped
 * data), each watched from a random time until its first touch, give
 * F(t) = U × P(first touch <= t), unbiased.
 *
 * Where the windows are too short to reach a size (SD or F at the window
 * is under C), the point is unresolved and only a lower bound, 1 - S at
 * the window, is given.  Each point carries its standard error: the
 * reuse samples' binomial error, and the footprint's, carried through
 * the curve's slope.  Pure computation.
 */
#ifndef SB_CHIP_REUSE_H
#define SB_CHIP_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SB_CHIP_REUSE_BUCKETS 496   /* 16 exact, then 8 per power of two to 2^64 */

struct sb_chip_reuse {
	uint64_t n[SB_CHIP_REUSE_BUCKETS];  /* samples by bucket of their length */
	uint64_t censored;                  /* no reuse within the window */
	uint64_t window;                    /* the shortest window watched: lengths
					     * beyond it are not all seen */
};

/* The bucket of a length and a bucket's lowest length. */
unsigned sb_chip_reuse_bucket(uint64_t len);
uint64_t sb_chip_reuse_bucket_lo(unsigned b);

/* A sample: its reuse length (>= 1), or none within a window of len.
 * The histogram's window is the shortest any sample had. */
void sb_chip_reuse_add(struct sb_chip_reuse *r, uint64_t len);
void sb_chip_reuse_censor(struct sb_chip_reuse *r, uint64_t window);
uint64_t sb_chip_reuse_samples(const struct sb_chip_reuse *r);

struct sb_chip_reuse_point {
	double hit;        /* the estimate; unresolved: its lower bound */
	double stderr_;    /* its standard error (0 unresolved) */
	bool resolved;
};

/* StatStack: hit ratios at n cache sizes (lines) from reuse lengths in
 * accesses.  -EINVAL without samples. */
int sb_chip_statstack(const struct sb_chip_reuse *reuse, const double *lines, size_t n,
		      struct sb_chip_reuse_point *out);

/* HOTL in time: hit ratios at n cache sizes (granules) from reuse times
 * and footprint probes' first-touch times (same unit), the probes drawn
 * from a universe of `universe` granules.  -EINVAL without samples. */
int sb_chip_hotl(const struct sb_chip_reuse *reuse, const struct sb_chip_reuse *first_touch,
		 double universe, const double *granules, size_t n,
		 struct sb_chip_reuse_point *out);

/*
 * The recorder's reuse probes with a PMU (user/record/record_reuse.c), as
 * pure steps so the unit tests drive them with generated traces.
 *
 * A sampled load (PEBS) names a 32-byte half line, what x86's four
 * debug registers of 8 bytes can watch; the recorder can arm them only
 * tens of microseconds after the sample at best, 10^4-10^5 memory
 * operations on (RDX arms in the sampled thread's own signal handler; a
 * recorder outside the process cannot).  A reuse counted from the sample would be
 * wrong whenever the line came back inside that gap, with nothing to
 * tell those apart.  So a probe takes its reuse between the first two
 * traps after arming, both counted by one per-thread counter of retired
 * memory operations: the first access after arming stands for the
 * sampled one (the line still drawn in proportion to its accesses).
 * Where a line's accesses recur alike (loops, sweeps, random access: a
 * renewal process) that is the line's reuse, as StatStack wants.
 *
 * A line that is not touched again after arming has died inside the gap
 * (a stream's: its next words were read within it) or recurs beyond the
 * window.  PEBS' data source tells which for the sampled load: one the
 * private caches served (L1, fill buffer, L2: near) came back within the
 * L2's capacity, and its line's end inside the gap makes it a short
 * reuse, counted as length 1; any other is censored at the window.  (A
 * burst of k accesses to a line that then dies has k - 1 short reuses and
 * one that never ends: its near loads and its first, far one.)  A short
 * reuse counted as 1 is true for every cache from the L2's size on;
 * below it, sizes are not resolved.  A probe touched once and not again
 * within a window after that is censored there.  Without a data source
 * every untouched probe is censored: a stream's spatial hits are not
 * seen, and its curve is a lower bound.  An access to the line's other
 * half is not seen either: where a loop's accesses spread over whole
 * lines, the reuses measured are longer than the line's (up to twice,
 * for random words), and the hit ratios low.  The tests' traces are of
 * lines, so they hold the method, not this granularity.
 */
struct sb_chip_rdx_probe {
	uint64_t armed;      /* the thread's count of memory operations, armed */
	uint64_t first;      /* ... at the first trap */
	unsigned traps;
	bool near;           /* the sampled load was a near one */
};

struct sb_chip_rdx_sum {
	struct sb_chip_reuse reuse; /* the probes' reuses */
	uint64_t dead_near;         /* near probes untouched: short reuses */
	uint64_t near_bytes;        /* the private cache near loads hit in (0:
				     * no data source) */
};

void sb_chip_rdx_arm(struct sb_chip_rdx_probe *p, uint64_t count, bool near);
/* A trap at count.  true: the probe is done, its reuse added to s; a
 * second trap whose count did not advance is not one. */
bool sb_chip_rdx_trap(struct sb_chip_rdx_probe *p, struct sb_chip_rdx_sum *s, uint64_t count);
/* Its window closed at count with the probe not done: censored there,
 * or a short reuse (near and untouched). */
void sb_chip_rdx_close(struct sb_chip_rdx_probe *p, struct sb_chip_rdx_sum *s, uint64_t count);

/*
 * A CHIP row's depth counts (StatStack over the probes' reuses): depth[k]
 * for k < 16 the accesses that hit first in a cache of (k + 1) x
 * max_bytes / 16 (of line-byte lines), depth[16] the rest, summing to
 * accesses.  *resolved: bit k set when size k is measured: within the
 * windows' reach, and no smaller than near_bytes where short reuses were
 * counted (none, those counted and near_bytes 0); elsewhere the counts
 * give a lower bound.  The counts sum to accesses exactly.  -EINVAL
 * without samples.
 */
int sb_chip_rdx_depths(const struct sb_chip_rdx_sum *s, uint64_t accesses, uint64_t max_bytes,
		       uint32_t line, uint64_t depth[17], uint32_t *resolved);

#endif
