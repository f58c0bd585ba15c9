/* SPDX-License-Identifier: MIT */
/*
 * LIME (Oh et al., ICSE 2011, §3): which code introduces load imbalance.
 * Per dynamic section instance: per-thread event vectors and per-thread
 * busy time -> causality for hardware events (§3.1, Gram-Schmidt),
 * hierarchical clustering (§3.2, UPGMA on 1 - Pearson, bulk merge §5.6),
 * cluster classes (§3.3), leader nodes on the CFG (§3.4, eq. 1),
 * forward-selection regression on averaged Z-scores (§3.5, eq. 2); then
 * instances of one static section combined weighted by imbalance (§3.6).
 *
 * Pure computation: no I/O, no libbpf; GSL with its abort handler off.
 */
#ifndef SB_LIME_H
#define SB_LIME_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"

enum sb_lime_event_kind {
	SB_LIME_EDGE = 1,   /* exact or LBR-sampled count of CFG edge `id` */
	SB_LIME_BLOCK,      /* sampled count of CFG block `id` (software path:
			     * samples measure time in the block, not executions;
			     * Poisson counts, tested against sampling noise, and
			     * a call site's include its callees' samples) */
	SB_LIME_HW,         /* a hardware event at instruction `addr` (misses,
			     * latency/stall time); `superior` names the event
			     * whose count it is subordinate to, or -1 */
	SB_LIME_COUNT,      /* the exact execution count of CFG block `id`:
			     * only a superior of HW events (§3.1: a load's
			     * misses against its executions); joins no
			     * cluster, since its block's edges stand for it */
};

struct sb_lime_event {
	uint16_t kind;       /* enum sb_lime_event_kind */
	uint32_t id;         /* edge or block index in the CFG (EDGE, BLOCK) */
	int32_t superior;    /* HW: index of its superior event in the instance */
	uint64_t addr;       /* HW: the instruction; else derived from the CFG */
	const double *counts; /* nthreads per-thread counts */
};

struct sb_lime_instance {
	uint32_t nthreads;
	const double *time;  /* per-thread busy time (on-CPU ns) */
	double imbalance;    /* weight in §3.6 (fraction, 0..1) */
	uint32_t ngroups;    /* 0 or 1; else the "threads" are (instance, thread)
			      * pairs of this many instances, every vector
			      * centred within its instance: the tests give
			      * back ngroups - 1 degrees of freedom */
	size_t nevents;
	const struct sb_lime_event *events;
	uint8_t counted_edges;  /* EDGE events are exact counts (exact mode):
				 * an edge without one is one exact flow found
				 * no count for here, not one left unsampled
				 * (LBR sees taken branches only) */
};

/* Block-sample columns averaging fewer samples than this are judged by
 * the index of dispersion alone: LIME's directed test (counts against
 * time, 1 degree of freedom) needs the normal approximation. */
#define SB_LIME_DIRECTED_MIN_MEAN 5.0

struct sb_lime_opts {
	double cluster_threshold;   /* §3.2 stop: correlation, default 0.9 */
	double bulk_threshold;      /* §5.6 bulk merge, default 0.99 */
	double f_alpha;             /* F-test significance, default 0.05 */
};

enum sb_cause_kind {
	SB_CAUSE_BRANCH = 1,        /* threads decide a branch differently */
	SB_CAUSE_LOOP,              /* loop trip counts differ */
	SB_CAUSE_CALL,              /* a call/edge taken different numbers of times */
	SB_CAUSE_HW,                /* hardware/cache behaviour at an instruction */
	SB_CAUSE_UNDETERMINED,      /* block samples: more iterations or slower ones */
};

struct sb_lime_cause {
	uint16_t kind;              /* enum sb_cause_kind */
	uint32_t event;             /* index of the leader/HW event in the instance */
	uint64_t addr;              /* code address to show (binary vaddr) */
	uint64_t own_addr;          /* 0, or the leader block's own last
				     * instruction when addr is its guard's
				     * branch (lime_leader.c): where to show
				     * the cause if the guard has no line */
	double leader_score;        /* eq. 1 (1.0 for hardware events) */
	double beta;                /* standardized regression coefficient */
	double score;               /* eq. 2: leader_score * beta, or beta */
};

struct sb_lime_result {
	size_t ncauses;
	struct sb_lime_cause *causes;   /* by score descending */
	size_t nclusters;               /* for reporting and tests */
	uint32_t *cluster_of;           /* per event: its cluster, or
					 * SB_LIME_NO_CLUSTER (NULL after
					 * sb_lime_combine) */
};

/* cluster_of of an event that joins no cluster: its counts do not vary
 * across threads (or its superiors explain all its variation), so it
 * carries no information about imbalance; also every event when the
 * instance has fewer than 3 threads. */
#define SB_LIME_NO_CLUSTER UINT32_MAX

void sb_lime_opts_default(struct sb_lime_opts *o);

/* One instance.  Returns 0, or a negative errno (-ENOMEM, -EINVAL for
 * inconsistent input); *out is malloc'd (sb_lime_result_free). */
int sb_lime_analyze(const struct sb_cfg *cfg, const struct sb_lime_instance *in,
		    const struct sb_lime_opts *o, struct sb_lime_result **out);
void sb_lime_result_free(struct sb_lime_result *r);

/*
 * §3.6: the causes of several instances of one static section, averaged
 * with each instance's imbalance as weight (a cause absent from an
 * instance counts 0 there), keyed by (kind, addr).  Sorted by score.
 */
int sb_lime_combine(const struct sb_lime_result *const *res, const double *weights,
		    size_t n, struct sb_lime_result **out);

#endif
