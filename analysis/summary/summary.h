/* SPDX-License-Identifier: MIT */
/* Profile summaries the report shows: sections ranked by lost thread-time,
 * waits by primitive, contended locks by call site. */
#ifndef SB_SUMMARY_H
#define SB_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Duration-weighted mean imbalance of a section's instances, in %. */
double sb_summary_imbalance_pct(const struct sb_section *s);

/* Section indices by lost_ns descending (ties: lower index first).
 * Caller frees; NULL on ENOMEM or no sections. */
size_t *sb_summary_sections_ranked(const struct sb_profile *p);

struct sb_summary_prim_total {
	uint32_t prim;
	uint64_t count, wait_ns;
};

/* Totals per primitive with count > 0, by wait_ns descending.  out holds
 * SB_PRIM_MAX entries; returns how many are filled. */
size_t sb_summary_waits_by_prim(const struct sb_profile *p, struct sb_summary_prim_total *out);

/* True for primitives whose waits are contention on a lock or condition. */
int sb_summary_prim_is_lock(uint32_t prim);

struct sb_summary_lock_total {
	int32_t loc;          /* call site, -1 unknown */
	uint32_t prim;
	uint64_t contentions, wait_ns;
};

/* Lock and condition waits merged by (call site, primitive), by wait_ns
 * descending.  *out is malloc'd (caller frees); returns the count or -1. */
long sb_summary_locks_ranked(const struct sb_profile *p, struct sb_summary_lock_total **out);

#endif
