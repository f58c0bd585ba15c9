/* SPDX-License-Identifier: MIT */
/*
 * The footprint curve of a recording without a PMU, and the DRAM demand
 * it implies (HOTL: Xiang et al., ASPLOS'13; chip_reuse.h has the
 * sampled-reuse side).
 *
 * A footprint probe: a granule (32 bytes: four 8-byte watchpoints, half
 * a line) drawn uniformly from the bytes of the program's writable
 * memory, in a thread that was just seen running, watched for a window
 * of w; touched or not.  F(w) = U × P(touched within w) is the average
 * footprint of windows of length w, unbiased (U: the memory's bytes).
 * For an LRU cache of C bytes, HOTL's F'(t_C), F(t_C) = C, is its miss
 * traffic: bytes/s fetched from DRAM, with no access count needed (the
 * hit ratio would need one: a PMU's).  Granules are half lines: a line
 * touched in one word shows half its bytes, so F and the demand are
 * lower bounds within a factor 2 (exact for dense data).
 *
 * The curve: each window's F with its binomial error; made nondecreasing
 * and concave (F' is an access rate times a survival function) by pool-
 * adjacent-violators on the slopes, weighted by the windows' lengths;
 * F(0) = 0.  The demand at C: the slope of the segment where F crosses
 * C; a C beyond the longest window's F is unresolved (its demand is at
 * most the last slope).  Pure computation.
 */
#ifndef SB_CHIP_FOOTPRINT_H
#define SB_CHIP_FOOTPRINT_H

#include <stdbool.h>
#include <stdint.h>

#define SB_CHIP_FP_WINDOWS 8
#define SB_CHIP_FP_GRANULE 32   /* bytes a probe watches */

/* The recorder's windows: 0.1, 0.2, 0.5, 1, 2, 5, 10, 20 ms */
extern const uint64_t sb_chip_fp_window_ns[SB_CHIP_FP_WINDOWS];

struct sb_chip_fp {
	uint64_t window_ns[SB_CHIP_FP_WINDOWS];   /* ascending; 0: unused */
	uint64_t probes[SB_CHIP_FP_WINDOWS];
	uint64_t touched[SB_CHIP_FP_WINDOWS];
	double universe;          /* bytes probes were drawn from (mean) */
};

struct sb_chip_fp_curve {
	unsigned n;                             /* windows with probes */
	double t[SB_CHIP_FP_WINDOWS];           /* s */
	double bytes[SB_CHIP_FP_WINDOWS];       /* measured F(t) */
	double err[SB_CHIP_FP_WINDOWS];         /* its standard error */
	double fit[SB_CHIP_FP_WINDOWS];         /* nondecreasing, concave */
	uint64_t probes;
};

/*
 * The windows of probes by the windows asked: each at its probes' mean
 * length (len_ns[w] summed over watched[w] probes; as asked when none
 * was watched), merged where they do not ascend (the recorder woke late:
 * a 0.1 ms window lasted 1 ms, longer than the 0.2 ms one) into their
 * probe-weighted mean, until they strictly ascend, empty ones left out.
 * Into f (its universe untouched): the windows a profile row stores.
 */
void sb_chip_fp_ascend(const uint64_t *probes, const uint64_t *touched, const uint64_t *len_ns,
		       const uint64_t *watched, struct sb_chip_fp *f);

/* The curve; -EINVAL without probes or universe. */
int sb_chip_fp_curve(const struct sb_chip_fp *f, struct sb_chip_fp_curve *c);
/* DRAM bytes/s a cache of `bytes` lets through; *resolved false beyond
 * the longest window's footprint (then the last slope, an upper bound). */
double sb_chip_fp_demand(const struct sb_chip_fp_curve *c, double bytes, bool *resolved);

#endif
