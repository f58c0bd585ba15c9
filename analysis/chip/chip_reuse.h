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

#endif
