/* SPDX-License-Identifier: MIT */
/*
 * Merging profiles: one profile from several (a directory of rotated
 * intervals of one service, or runs of one program), which every report
 * view and export then reads as if it had been one recording.
 *
 * The model.  Each input is complete for its interval: an instance is in
 * the interval where it ended, so intervals never share one and the merge
 * only sums.
 *   - Sections match by place: kind, function, file name and line, the
 *     k-th of several alike in a profile to the k-th in the merge (an
 *     unsymbolized one by binary and offset).  Their aggregates add;
 *     per-thread rows add by tid.
 *   - Stored instances are appended (numbered on after the section's
 *     earlier instances) up to max_instances per section; those beyond,
 *     with their vectors and addresses, are counted, never silently gone:
 *     the section's aggregates still count them, as a recording's do.
 *   - Waits add by primitive, call site and object; threads by tid
 *     (first start, last end, on-CPU time added).
 *   - Locations, binaries and events are shared where they read alike, so
 *     vectors of different inputs count the same code in the same event.
 *   - CHiP rows add where region, mode and shape are the same; sharing
 *     rows where kind, mode, address, locations and thread are; speedup
 *     stacks come from one run each and are kept from the newest input
 *     that has any (the others are counted).
 *   - Metadata: counts add (the duration too), the start is the first's,
 *     maxima stay maxima, a mean or rate is the newest input's; a setting
 *     is the newest input's, and one that differs between inputs is named
 *     in merge_differing (merge_meta.c has the rules).
 * The merged profile says what it is made of: merged_profiles, merged_from
 * (first and last input), merged_instances_dropped and the like.
 */
#ifndef SB_MERGE_H
#define SB_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Stored instances kept per section by default. */
#define SB_MERGE_MAX_INSTANCES 10000
/* Sampled addresses kept by default (a recording's reservoir size). */
#define SB_MERGE_MAX_ADDRS 65536

struct sb_merge_opts {
	uint64_t max_instances;     /* per section; 0: the default */
	uint64_t max_addrs;         /* 0: the default */
};

struct sb_merge_stats {
	uint64_t profiles;
	uint64_t instances_dropped;  /* stored in an input, over the limit here */
	uint64_t vectors_dropped;
	uint64_t addrs_dropped;
	uint64_t stack_rows_dropped; /* from inputs older than the one kept */
	uint64_t chip_rows_apart;    /* CHiP rows kept apart: a shape differed */
};

struct sb_merge;

/* opts may be NULL. NULL without memory. */
struct sb_merge *sb_merge_alloc(const struct sb_merge_opts *opts);
void sb_merge_free(struct sb_merge *m);

/*
 * Adds one input, oldest first; name (its file name) goes to merged_from.
 * 0, or SB_ERR_NOMEM / SB_ERR_CORRUPT (an index out of range) with why in
 * err; the merge is then unusable.
 */
int sb_merge_add(struct sb_merge *m, const struct sb_profile *src, const char *name,
		 char *err, size_t errlen);

/* The merged profile (the caller frees it; m keeps nothing of it), after
 * at least one input.  NULL without memory or without input. */
struct sb_profile *sb_merge_finish(struct sb_merge *m);

void sb_merge_get_stats(const struct sb_merge *m, struct sb_merge_stats *st);

/* A metadata key whose values add when profiles merge (a count over the
 * recording: drops, records, samples; merge_meta.c has the rules).  A
 * rotating recorder subtracts its last interval's from such a count. */
bool sb_merge_meta_adds(const char *key);

#endif
