/* SPDX-License-Identifier: MIT */
/*
 * The regions CHiP profiles besides sections (analysis/profile/profile.h,
 * enum sb_chip_kind), summed while recording:
 *   - a --region function: its outermost calls in every thread (a call
 *     inside a call of the same function is the outer one's), their time
 *     from entry to return, and in a `scalebpf cc --chip` program the
 *     thread's CHiP counters at the return less those at the entry
 *     (sb_rec_region records).  A return is its call's by the stack
 *     pointer, so a lost inner return (the kernel keeps 64 uretprobes a
 *     thread; a full ring buffer) costs nothing, and a lost outer one
 *     (longjmp, exit) is counted as lost when the thread calls again or
 *     returns past its frame;
 *     Each outermost call's span is kept for `record --chip`'s probes;
 *   - the whole run: every --chip batch of every thread (a row of its
 *     own where no section was profiled: record_chip.c).
 * A call with no return by the end (the recording stopped inside it, or
 * the thread left by longjmp or exit) is counted as open, not summed.
 */
#ifndef SB_RECORD_REGION_H
#define SB_RECORD_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"

#define SB_REGION_MAX 32
#define SB_REGION_COUNTS (SB_CHIP_NDEPTH + 1)   /* depths, then accesses */

struct sb_region_total {
	uint64_t calls, busy_ns;
	uint64_t counts[SB_REGION_COUNTS];
	uint64_t counted;    /* calls whose counters were read at both ends */
	uint64_t unread;     /* ... at one end only, or going backwards */
	uint64_t unmatched;  /* returns without their entry (attached inside) */
	uint64_t lost;       /* calls whose return never came (longjmp, drops) */
	uint64_t uncounted;  /* calls without counters at either end: not a
			      * --chip program, or a thread that never said
			      * where its counters are (started before -p) */
	uint32_t threads;    /* threads with a call */
};

struct sb_idmap;
struct sb_chip_span;

#define SB_REGION_SPANS_MAX (1u << 19)   /* outermost calls kept: 12 MiB */

struct sb_regions {
	struct sb_region_total tot[SB_REGION_MAX];
	struct sb_region_total run;     /* every --chip batch; calls unused */
	struct sb_idmap *open;          /* (tid, region) -> struct open call */
	struct sb_idmap *seen;          /* (tid, region + 1; 0: run) -> 1 */
	uint64_t bad;                   /* a region index out of range */
	uint64_t nomem;                 /* marks or batches lost: no memory */
	/* the outermost calls, for `record --chip`'s probes by function
	 * (analysis/chip/chip_probes.h): kept when keep_spans, up to
	 * SB_REGION_SPANS_MAX; the later ones counted */
	bool keep_spans;
	struct sb_chip_span *spans;
	size_t nspans, spans_cap;
	uint64_t spans_dropped;
};

int sb_regions_init(struct sb_regions *g);
void sb_regions_fini(struct sb_regions *g);

/* Region idx's entry or return (rec->enter) in rec->hdr.tid.  -ENOMEM,
 * else 0. */
int sb_regions_mark(struct sb_regions *g, uint32_t idx, const struct sb_rec_region *rec);

/* A --chip batch that went into the sections: into the run too. */
int sb_regions_batch(struct sb_regions *g, uint32_t tid, const struct sb_chip_batch *b);

/* Calls still open (entered, not returned) of region idx. */
uint64_t sb_regions_open(const struct sb_regions *g, uint32_t idx);

#endif
