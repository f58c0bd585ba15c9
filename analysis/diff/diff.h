/* SPDX-License-Identifier: MIT */
/*
 * Comparing two profiles (`report --diff A B`): two intervals of a
 * service, two builds, two thread counts.  A is the baseline.
 *
 * The model.  Sections match by place (kind, function, file name, line:
 * sb_section_match), so A and B may come from different processes or
 * builds; a section without debug info has no place to match by and
 * shows as gone from A and new in B.  Intervals differ in length, so lost thread-time is compared as
 * a rate, per second recorded (duration_ns), and imbalance as itself (a
 * share, duration-weighted: lost / capacity); instances are shown as
 * counted.  Causes compare by place too (function, file name, line) among
 * each matched section's leading causes (neither "same cluster" nor an
 * alternative placement): one in B's first SB_DIFF_TOP and nowhere in A's
 * list has appeared; one in A's first SB_DIFF_TOP and nowhere in B's has
 * vanished.  Waits compare per primitive, as rates too.
 */
#ifndef SB_DIFF_H
#define SB_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "causes/causes.h"
#include "profile/profile.h"

#define SB_DIFF_TOP 5

struct sb_diff_side {
	uint64_t instances, lost_ns;
	double imbalance_pct;
	double lost_per_s;           /* lost thread-ns per ns recorded */
};

struct sb_diff_section {
	long a, b;                   /* index in A's and B's sections, -1 absent */
	struct sb_diff_side sa, sb;  /* zero on the absent side */
};

enum sb_diff_change { SB_DIFF_APPEARED = 1, SB_DIFF_VANISHED = 2 };

struct sb_diff_cause {
	size_t section;              /* index into the diff's sections */
	uint32_t change;             /* enum sb_diff_change */
	const struct sb_cause *cause; /* B's (appeared) or A's (vanished) */
};

struct sb_diff_wait {
	uint32_t prim;
	uint64_t count_a, count_b, wait_a, wait_b;
};

struct sb_diff;

/* ca, cb: the causes of a and b (sb_causes_compute); a, b and they must
 * outlive the diff.  NULL without memory. */
struct sb_diff *sb_diff_alloc(const struct sb_profile *a, const struct sb_causes *ca,
			      const struct sb_profile *b, const struct sb_causes *cb);
void sb_diff_free(struct sb_diff *d);

/* Sections, matched ones first by the change in lost rate (largest
 * first), then B's new ones, then A's gone ones. */
size_t sb_diff_nsections(const struct sb_diff *d);
const struct sb_diff_section *sb_diff_section(const struct sb_diff *d, size_t i);
size_t sb_diff_ncauses(const struct sb_diff *d);
const struct sb_diff_cause *sb_diff_cause(const struct sb_diff *d, size_t i);
/* Primitives with waits in A or B, by wait in B descending. */
size_t sb_diff_nwaits(const struct sb_diff *d);
const struct sb_diff_wait *sb_diff_wait(const struct sb_diff *d, size_t i);
/* The seconds each side recorded (duration_ns; 0 unknown). */
double sb_diff_seconds(const struct sb_diff *d, int side_b);

#endif
