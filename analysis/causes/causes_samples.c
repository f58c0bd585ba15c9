// SPDX-License-Identifier: MIT
/*
 * LIME input from cpu-clock block samples (causes_priv.h): the sampled
 * path, the one every machine has.
 *
 * Observations are (instance, thread) pairs, binned by rank.  LIME (§3.6)
 * analyses every instance alone and combines the results; a sampled
 * instance of a few milliseconds holds about one sample per thread, too
 * few for any correlation, so pairs must be pooled.  Summing them per
 * thread (tid) is right only when the same threads are the slow ones in
 * every instance; where the surplus rotates (LU's (I+J) % P owners: a
 * different thread is busiest at each K step), per-thread sums are all
 * about equal and the signal is summed away.
 *
 * The rule, one for both: pair (i, t) goes to column r, the rank of t's
 * busy time within instance i (busiest first; an instance of k < nt
 * threads spreads its ranks as quantiles, r * nt / k).  Column r sums
 * the busy times and the sample counts of the r-th busiest thread of
 * every instance.  Why this is sound:
 *  - every column holds exactly one pair of each instance, so what
 *    differs between instances (the K step's size) adds the same to
 *    every column and only the within-instance contrast remains, which
 *    is what LIME analyses per instance;
 *  - ranks come from busy time measured exactly (sched_switch), not
 *    from samples, so a block whose time is the same for every thread of
 *    an instance sums to the same expected count in every column (plain
 *    Poisson noise: dropped by LIME's dispersion test), while a block
 *    whose time makes a thread the busy one grows with the rank: ranking
 *    on exact time does not make sampling noise look like a cause;
 *  - every stored instance counts, with or without samples: an
 *    instance of a few microseconds rarely has one, and keeping only
 *    those that do would keep the ones whose busiest thread was sampled;
 *  - a section whose imbalance does not rotate keeps its busiest thread
 *    in column 0 in every instance, so the columns are its per-thread
 *    sums relabelled: nothing is lost where thread sums were right.
 * nt columns (<= SB_CAUSES_MAX_THREADS): LIME costs what it did with
 * per-thread sums, whatever the number of instances; pooling is one
 * sort of nt busy times per instance plus one pass over the vectors.
 *
 * Pooling the per-step sections of one loop nest (a K step's diagonal,
 * perimeter and interior barriers) was considered and not done: their
 * causes are different lines (each phase's own ownership test), and the
 * report names causes per section; one section's pairs already pool all
 * of its steps.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct by_busy {
	uint64_t busy;
	uint32_t tid;
	uint32_t slot;    /* index in the instance's per_thread */
};

static int busier(const void *a, const void *b)
{
	const struct by_busy *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

uint32_t sb_causes_rank_width(const struct sb_profile *p, uint32_t s, const size_t *ninst_vec)
{
	uint32_t nt = 0;

	(void)ninst_vec;    /* every stored instance counts (see above) */
	for (uint32_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].section == s && p->instances[i].nthreads > nt)
			nt = p->instances[i].nthreads;
	return nt < SB_CAUSES_MAX_THREADS ? nt : SB_CAUSES_MAX_THREADS;
}

void sb_causes_rank_columns(const struct sb_instance *in, uint32_t nt, uint32_t *col)
{
	struct by_busy b[SB_CAUSES_MAX_THREADS];
	uint32_t k = in->nthreads < SB_CAUSES_MAX_THREADS ? in->nthreads : SB_CAUSES_MAX_THREADS;

	for (uint32_t t = 0; t < k; t++) {
		b[t].busy = in->per_thread[t].busy_ns;
		b[t].tid = in->per_thread[t].tid;
		b[t].slot = t;
	}
	qsort(b, k, sizeof(*b), busier);
	for (uint32_t r = 0; r < k; r++)
		col[b[r].slot] = k ? (uint32_t)((uint64_t)r * nt / k) : 0;
}

/*
 * The call sites of the profile's synchronizations (every section's
 * closing call): a block holding one is sampled while a thread arrives
 * at or leaves the barrier, and the thread that arrives last, the busiest,
 * is the one that wakes the others.  Ranked by busy time, that wake-up
 * would line up with the busiest column though it follows the imbalance
 * rather than causing it: such blocks, and the blocks of the probed
 * synchronization functions themselves (libc's barrier, its futex
 * calls), are no LIME events.
 */
/* Function name f is one of the recorder's probed synchronizations,
 * "lib.so:name+off,..." in the profile's "probes", leading underscores
 * aside (libc's ___pthread_barrier_wait is pthread_barrier_wait). */
static bool probed(const struct sb_profile *p, const char *f)
{
	const char *pr = sb_profile_meta_get(p, "probes");
	size_t n;

	if (!pr || !f)
		return false;
	while (*f == '_')
		f++;
	n = strlen(f);
	for (const char *at = pr; (at = strstr(at, f)); at += n) {
		const char *b = at;

		while (b > pr && b[-1] == '_')
			b--;
		if ((b == pr || b[-1] == ':') && (at[n] == '+' || at[n] == ',' || !at[n]))
			return true;
	}
	return false;
}

static bool at_sync(const struct sb_profile *p, const struct sb_causes_graph *g, long blk)
{
	const struct sb_cfg *m = g->merged;

	if (blk >= 0 && (size_t)blk < m->nblocks && probed(p, m->funcs[m->blocks[blk].func].name))
		return true;
	for (size_t s = 0; s < p->nsections; s++) {
		const struct sb_loc *l = p->sections[s].loc < p->nlocs ?
			&p->locs[p->sections[s].loc] : NULL;
		long b;

		if (!l || l->binary < 0 || (size_t)l->binary >= p->nbinaries ||
		    !g->per_bin[l->binary])
			continue;
		b = sb_cfg_block_at(g->per_bin[l->binary], l->offset);
		if (b >= 0 && (long)g->offset[l->binary] + b == blk)
			return true;
	}
	return false;
}

int sb_causes_pool_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			   struct sb_causes_pooled *li)
{
	uint32_t nt = sb_causes_rank_width(p, s, ninst_vec);
	long *row = calloc(p->nevents ? p->nevents : 1, sizeof(*row));
	size_t nrows = 0, total = 0;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	if (!row)
		return -ENOMEM;
	for (size_t e = 0; e < p->nevents; e++)
		row[e] = -1;
	/* the events with a CFG block */
	for (uint32_t i = 0; i < p->ninstances; i++) {
		if (p->instances[i].section != s || !ninst_vec[i])
			continue;
		for (size_t v = 0; v < ninst_vec[i]; v++) {
			uint32_t ev = p->vectors[by_inst[i][v]].event;
			const struct sb_event_def *d = &p->events[ev];

			if (row[ev] == -1 && d->kind == SB_EVK_BLOCK_SAMPLES &&
			    sb_causes_event_block(p, g, d) >= 0)
				row[ev] = at_sync(p, g, sb_causes_event_block(p, g, d)) ? -2
											: (long)nrows++;
		}
		total++;
	}
	li->time = calloc(nt ? nt : 1, sizeof(double));
	li->ev = calloc(nrows ? nrows : 1, sizeof(*li->ev));
	li->counts = calloc((nrows ? nrows : 1) * (nt ? nt : 1), sizeof(double));
	if (!li->ev || !li->counts || !li->time)
		goto out;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t col[SB_CAUSES_MAX_THREADS];

		if (in->section != s)
			continue;
		sb_causes_rank_columns(in, nt, col);
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			li->time[col[t]] += (double)in->per_thread[t].busy_ns;
		for (size_t v = 0; v < ninst_vec[i]; v++) {
			const struct sb_vector *vec = &p->vectors[by_inst[i][v]];
			long r = row[vec->event];

			for (uint32_t t = 0; r >= 0 && t < vec->nthreads && t < in->nthreads &&
					     t < SB_CAUSES_MAX_THREADS; t++)
				li->counts[(size_t)r * nt + col[t]] += (double)vec->counts[t];
		}
	}
	for (size_t e = 0; e < p->nevents; e++) {
		const struct sb_event_def *d = &p->events[e];
		long r = row[e];

		if (r < 0)
			continue;
		li->ev[r].kind = SB_LIME_BLOCK;
		li->ev[r].id = (uint32_t)sb_causes_event_block(p, g, d);
		li->ev[r].superior = -1;
		li->ev[r].addr = SB_CFG_TAG(d->binary, d->vaddr);
		li->ev[r].counts = &li->counts[(size_t)r * nt];
	}
	sb_causes_pooled_set(li, nt, nrows);
	ret = total ? 0 : -ENOENT;
out:
	free(row);
	return ret;
}
