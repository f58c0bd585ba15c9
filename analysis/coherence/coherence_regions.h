/* SPDX-License-Identifier: MIT */
/*
 * Private to analysis/coherence/: the runs of the traced threads and the
 * regions they make (coherence_regions.c states the model).  Pass 1 of
 * the trace driver feeds each thread's records in order: a thread, then
 * its RESUMEs, counted records and SYNCs, then its end.
 */
#ifndef SB_COHERENCE_REGIONS_H
#define SB_COHERENCE_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/idmap.h"

struct sb_coh_sync {
	uint64_t time, obj;
	uint32_t thread, kind;     /* enum sb_trace_sync */
	uint64_t k;                /* the thread's k-th wait on obj (episodes) */
};

struct sb_coh_run {
	uint64_t start, end;       /* ns: when it could begin, its SYNC's time */
	uint64_t resume;           /* the RESUME after the SYNC before, or MAX */
	uint64_t last;             /* the thread's records up to its end */
	uint64_t region;
	uint64_t nrec;             /* loads, stores and lock records in it */
	long prev;                 /* the SYNC before it (index), -1: none */
	uint32_t thread;
	bool closed;               /* ends in a SYNC */
};

struct sb_coh_runs {
	struct sb_coh_run *runs;
	size_t nruns, caprun;
	struct sb_coh_sync *syncs;
	size_t nsyncs, capsync;
	struct sb_idmap *counts;   /* (obj, thread << 8 | kind) -> waits so far */
};

void sb_coh_runs_free(struct sb_coh_runs *rs);
/* A thread's first run begins; 0 or -ENOMEM. */
int sb_coh_runs_thread(struct sb_coh_runs *rs, uint32_t t);
void sb_coh_runs_resume(struct sb_coh_runs *rs, uint64_t ns);
void sb_coh_runs_record(struct sb_coh_runs *rs);
/* A SYNC, the thread's records-th: its run ends, the next begins. */
int sb_coh_runs_sync(struct sb_coh_runs *rs, uint64_t ns, uint32_t kind, uint64_t obj,
		     uint64_t records);
/* The thread's file ended after records records. */
void sb_coh_runs_end_thread(struct sb_coh_runs *rs, uint64_t records);
/* Every run's start and region, the runs then in (thread, record) order;
 * *nregions.  0 or -ENOMEM. */
int sb_coh_runs_regions(struct sb_coh_runs *rs, uint64_t *nregions);

#endif
