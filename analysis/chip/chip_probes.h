/* SPDX-License-Identifier: MIT */
/*
 * Which section a sampled probe measured (the recorder's footprint and
 * reuse probes: chip_footprint.h, chip_reuse.h), so that a recording
 * gives a cache profile per section and not only one for the whole run.
 *
 * A probe watches one thread for a window of wall time [start, end].  It
 * belongs to a section when one stored instance of that section held its
 * thread at both ends (profile.h, sb_instance_index_find: the innermost
 * when sections nest); a window that crosses a section's boundary
 * measured two regions at once, and one outside every stored instance
 * (serial code, or an instance beyond --max-instances) measured none:
 * both stay in the whole run's profile only.  The rule costs a section
 * its windows longer than its instances, which is right: it never runs
 * that long.
 *
 * The recorder cannot know a probe's section while it runs (sections are
 * known at their joins, some only from the whole history), so it keeps
 * the probes' outcomes and they are grouped at the end.  To bound memory
 * on long runs the log is a reservoir: a uniform sample of at most cap
 * outcomes (Vitter's algorithm R), each weighted by how many it stands
 * for.  Outcomes are exchangeable, so a section's counts from the kept
 * ones are its share, unbiased; the whole run keeps its exact sums.
 * Pure computation: no clock, no I/O.
 */
#ifndef SB_CHIP_PROBES_H
#define SB_CHIP_PROBES_H

#include <stddef.h>
#include <stdint.h>

#define SB_CHIP_PLOG_CAP (1u << 17)  /* outcomes kept: ~22 min at 100/s */

/* One outcome: what it means is the prober's. */
struct sb_chip_pout {
	uint64_t start, end;  /* the window, ns on the profile's clock */
	uint32_t tid;
	uint32_t tag;         /* the prober's: its outcome's kind */
	uint64_t value;       /* the prober's: a length */
	double weight;        /* the prober's: a size, a period */
};

struct sb_chip_plog;

/* cap: outcomes kept at most (0: SB_CHIP_PLOG_CAP); seed: the
 * reservoir's.  NULL: no memory. */
struct sb_chip_plog *sb_chip_plog_alloc(size_t cap, uint64_t seed);
void sb_chip_plog_free(struct sb_chip_plog *l);

/* An outcome, kept or not (the reservoir's draw); -ENOMEM when the log
 * could not grow (the outcome is counted, not kept). */
int sb_chip_plog_add(struct sb_chip_plog *l, const struct sb_chip_pout *o);

/* The kept outcomes, in no order; seen: all added. */
const struct sb_chip_pout *sb_chip_plog_kept(const struct sb_chip_plog *l, size_t *n);
uint64_t sb_chip_plog_seen(const struct sb_chip_plog *l);

struct sb_profile;
/* The section of each kept outcome (section_of[n], n as kept), or
 * UINT32_MAX when none held it.  0, or -ENOMEM. */
int sb_chip_plog_sections(const struct sb_chip_plog *l, const struct sb_profile *p,
			  uint32_t *section_of);

/* A --region function's outermost call in a thread, [start, end]
 * (region: its index among the functions). */
struct sb_chip_span {
	uint32_t tid, region;
	uint64_t start, end;
};

/*
 * The kept outcomes grouped by region: group k is kind[k]'s
 * (SB_CHIP_KIND_SECTION: id[k] a section; _FUNCTION: a --region
 * function's index), order[first[k] .. first[k + 1]) the indices of its
 * outcomes, which came from threads[k] distinct threads; groups ascend by
 * (kind, id).  A function's outcomes are those whose window lay inside
 * one of its calls in their thread (spans), so an outcome may be in a
 * section and in functions.  in, out: kept outcomes in some section, in
 * none.
 */
struct sb_chip_groups {
	size_t n;
	uint32_t *kind, *id, *threads;
	size_t *first, *order;
	uint64_t in, out;
};

/* A region's row needs this many probes: fewer say little with the
 * errors of a handful (the whole run's row has them anyway). */
#define SB_CHIP_REGION_MIN_PROBES 40

/* spans: the functions' calls (n 0: none).  0, or -ENOMEM (g then
 * empty). */
int sb_chip_groups_build(struct sb_chip_groups *g, const struct sb_chip_plog *l,
			 const struct sb_profile *p, const struct sb_chip_span *spans, size_t n);
void sb_chip_groups_free(struct sb_chip_groups *g);
/* The weight of another log's outcomes (the sampled accesses) by g's
 * groups, each a share of all of it: share[k] for group k (outcomes in
 * no region: in no share).  0, or -ENOMEM. */
int sb_chip_groups_weights(const struct sb_chip_groups *g, const struct sb_chip_plog *l,
			   const struct sb_profile *p, const struct sb_chip_span *spans, size_t n,
			   double *share);
struct sb_chip_row;
/* Group k's region into a row: kind, section or region. */
void sb_chip_groups_row(const struct sb_chip_groups *g, size_t k, struct sb_chip_row *row);
/* <prefix>_section_probes, _section_probes_none (kept outcomes in a
 * section, in none) and _probes_kept ("kept/seen") into the metadata. */
void sb_chip_groups_meta(const struct sb_chip_groups *g, const struct sb_chip_plog *l,
			 const char *prefix, struct sb_profile *p);

#endif
