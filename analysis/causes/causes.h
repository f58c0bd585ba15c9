/* SPDX-License-Identifier: MIT */
/*
 * The causes of load imbalance in a profile: LIME (lime.h) run on each
 * section's stored instances from the profile's vectors and CFGs, and
 * mapped back to profile locations.  Observations are (instance, thread)
 * pairs: exact counts centred on their instance (causes_exact.c), sampled
 * ones, too sparse alone, pooled into columns per thread or by busy rank
 * within each instance (causes_samples.c).
 */
#ifndef SB_CAUSES_H
#define SB_CAUSES_H

#include <stddef.h>
#include <stdint.h>

#include "lime/lime.h"
#include "profile/profile.h"

struct sb_cause {
	uint32_t section;      /* index into p->sections */
	uint32_t rank;         /* 1-based within its section */
	uint16_t kind;         /* enum sb_cause_kind */
	double score;          /* combined final score (eq. 2, §3.6) */
	int32_t loc;           /* where to look, index into p->locs, or -1 */
	int32_t binary;        /* index into p->binaries, or -1 */
	uint64_t addr;         /* the instruction, binary vaddr */
	uint32_t same_cluster; /* 0, or the rank of the cause this one is shown
				* under: a leader perfectly correlated with it
				* (one cluster), listed as "same cluster" */
	uint32_t alternative_of; /* 0, or the rank of the (sampled) cause this
				  * one is another placement of: a decision
				  * its samples cannot be told from (a loop
				  * around it, the branch entering it;
				  * causes_alternatives.c), ranked right after it */
	uint32_t nalternatives;  /* how many causes are alternative_of this one */
};

/* What a section's verdict rests on. */
enum sb_causes_verdict {
	SB_VERDICT_CAUSES,       /* causes listed */
	SB_VERDICT_NONE,         /* evidence enough, no event explains it */
	SB_VERDICT_FEW_SAMPLES,  /* too few samples for the imbalance seen */
	SB_VERDICT_FEW_THREADS,  /* fewer than 3 threads */
	SB_VERDICT_CAUSES_LOW,   /* causes listed, but the samples are fewer
				  * than the imbalance seen needs (the power
				  * rule of causes_evidence.c): the top cause
				  * may be wrong; more_seconds says how much
				  * longer to record */
};

struct sb_causes_evidence {
	uint32_t section;          /* index into p->sections */
	uint16_t verdict;          /* enum sb_causes_verdict */
	uint32_t nthreads;
	uint32_t ninstances;       /* instances with vectors */
	double samples_per_thread; /* block samples per thread (0: exact counts) */
	double counted_per_thread; /* of which the verdict's power rests on:
				    * instances that count how many samples
				    * fell (causes_evidence.c) */
	double more_seconds;       /* FEW_SAMPLES, CAUSES_LOW: record about this much longer
				    * at the same -F */
	uint8_t more_at_least;     /* more_seconds is a lower bound: no instance
				    * yet counted how many samples fell */
};

struct sb_causes {
	size_t n;
	struct sb_cause *c;        /* by section index, then rank */
	size_t nsections_analyzed; /* sections that had usable vectors */
	size_t ninstances;         /* instances pooled into the analyses */
	int block_samples;         /* causes come from block samples: kinds
				    * of control-flow causes are undetermined */
	int exact_counts;          /* ... from exact block counts (scalebpf cc);
				    * neither: from LBR-sampled edges */
	struct sb_causes_evidence *ev; /* one per section analysed or tried */
	size_t nev;
};

/* "branch", "loop", "call", "hardware", "undetermined" (JSON's kind). */
const char *sb_cause_kind_name(uint16_t kind);

/* 0, or a negative errno with err filled (-EINVAL: a damaged CFG). */
int sb_causes_compute(const struct sb_profile *p, const struct sb_lime_opts *o,
		      struct sb_causes *out, char *err, size_t errlen);
void sb_causes_free(struct sb_causes *c);

#endif
