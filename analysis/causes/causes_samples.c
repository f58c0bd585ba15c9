// SPDX-License-Identifier: MIT
/*
 * LIME input from cpu-clock block samples (causes_priv.h): the sampled
 * path, the one every machine has.
 *
 * Observations are (instance, thread) pairs, pooled into columns.  LIME
 * (§3.6) analyses every instance alone and combines the results; a
 * sampled instance of a few milliseconds holds about one sample per
 * thread, too few for any correlation, so pairs must be pooled.  Summing
 * them per thread (tid) is right only when the same threads are the slow
 * ones in every instance; where the surplus rotates (LU's (I+J) % P
 * owners: a different thread is busiest at each K step), per-thread sums
 * are all about equal and the signal is summed away.
 *
 * The rule.  Thread identity's share of the within-instance variance of
 * busy time, R = sum_t n_t Dbar_t^2 / sum_(i,t) d_it^2 (d_it: thread t's
 * busy time in instance i minus the instance's mean; Dbar_t: thread t's
 * mean d), says which: R >= 1/2, the imbalance stays with its threads,
 * and pairs are pooled per thread as before (unbiased: a column is a
 * tid whatever the samples); R < 1/2, it rotates (or there is none), and
 * pair (i, t) goes to column r, the rank of t within instance i
 * (busiest first; an instance of k < nt threads spreads its ranks as
 * quantiles, r * nt / k; exact ties share their columns).  Column r then
 * sums the busy times and samples of the r-th busiest thread of every
 * instance:
 *  - every column holds exactly one pair of each instance, so what
 *    differs between instances (the K step's size) adds the same to
 *    every column and only the within-instance contrast remains, which
 *    is what LIME analyses per instance;
 *  - every stored instance counts, with or without samples: keeping only
 *    instances with a sample would keep those whose busy thread was hit;
 *  - ranking must not follow the samples.  A sample costs its thread
 *    CPU time (interrupt, BPF, stack copy: 25-35 us each on this
 *    project's KVM guest, as much as one of LU's block updates), so the
 *    sampled thread of a balanced instance ranks first and any sampled
 *    block would line up with the rank.  The key is busy time minus c
 *    per sample of the pair, c estimated from the profile (the smallest
 *    within-instance slope of busy time on samples among its sections,
 *    sample_cost(): an over-estimate where a section's imbalance adds the
 *    natural association, which errs towards finding nothing).
 * nt columns (<= SB_CAUSES_MAX_THREADS): LIME costs what it did with
 * per-thread sums, whatever the number of instances; pooling is a sort
 * of nt keys per instance plus passes over the vectors.
 *
 * Pooling the per-step sections of one loop nest (a K step's diagonal,
 * perimeter and interior barriers) was considered and not done: their
 * causes are different lines (each phase's own ownership test), and the
 * report names causes per section; one section's pairs already pool all
 * of its steps.
 */
#include "causes_priv.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct by_busy {
	double key;
	uint32_t tid;
	uint32_t slot;    /* index in the instance's per_thread */
};

static int busier(const void *a, const void *b)
{
	const struct by_busy *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

uint32_t sb_causes_rank_width(const struct sb_profile *p, uint32_t s)
{
	uint32_t nt = 0;

	for (uint32_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].section == s && p->instances[i].nthreads > nt)
			nt = p->instances[i].nthreads;
	return nt < SB_CAUSES_MAX_THREADS ? nt : SB_CAUSES_MAX_THREADS;
}

static uint32_t width(const struct sb_instance *in)
{
	return in->nthreads < SB_CAUSES_MAX_THREADS ? in->nthreads : SB_CAUSES_MAX_THREADS;
}

/* Each thread's samples in each instance of the profile: its largest
 * block count (a call site holds its callees' samples, so the outermost
 * frame's holds about all of them); smp[first[i] + t]. */
static double *pair_samples(const struct sb_profile *p, size_t **firstp)
{
	size_t n = 0, *first = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*first));
	double *smp;

	if (!first)
		return NULL;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		first[i] = n;
		n += width(&p->instances[i]);
	}
	smp = calloc(n ? n : 1, sizeof(*smp));
	if (!smp) {
		free(first);
		return NULL;
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		size_t f = first[x->instance];

		if (p->events[x->event].kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < width(&p->instances[x->instance]); t++)
			if ((double)x->counts[t] > smp[f + t])
				smp[f + t] = (double)x->counts[t];
	}
	*firstp = first;
	return smp;
}

/*
 * The busy time one sample adds to its thread (the interrupt, the BPF
 * program, the stack copy: 25-35 us measured on this project's KVM
 * guest).  Within an instance, busy time regressed on samples has slope
 * c plus the natural association (a busier thread gets more samples),
 * which is large where the imbalance is: the smallest slope among the
 * profile's sections with enough pairs is the estimate.
 */
static double sample_cost(const struct sb_profile *p, const double *smp, const size_t *first)
{
	double *num = calloc(p->nsections ? p->nsections : 1, sizeof(double));
	double *den = calloc(p->nsections ? p->nsections : 1, sizeof(double));
	size_t *np = calloc(p->nsections ? p->nsections : 1, sizeof(size_t));
	double c = -1;

	for (uint32_t i = 0; num && den && np && i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t k = width(in), sec = in->section;
		double mb = 0, ms = 0;

		if (k < 2 || sec >= p->nsections)
			continue;
		for (uint32_t t = 0; t < k; t++) {
			mb += (double)in->per_thread[t].busy_ns / k;
			ms += smp[first[i] + t] / k;
		}
		for (uint32_t t = 0; t < k; t++) {
			double ds = smp[first[i] + t] - ms;

			num[sec] += ((double)in->per_thread[t].busy_ns - mb) * ds;
			den[sec] += ds * ds;
		}
		np[sec] += k;
	}
	for (size_t sec = 0; num && den && np && sec < p->nsections; sec++)
		if (np[sec] >= 64 && den[sec] > 0 && num[sec] > 0 &&
		    (c < 0 || num[sec] / den[sec] < c))
			c = num[sec] / den[sec];
	free(num);
	free(den);
	free(np);
	return c > 0 ? c : 0;
}

/* The share of the within-instance variance of busy time that thread
 * identity explains (1: the same threads are busy in every instance). */
static double thread_share(const struct sb_profile *p, uint32_t s, const uint32_t *tids,
			   uint32_t ntid)
{
	double dev[SB_CAUSES_MAX_THREADS] = { 0 }, within = 0, between = 0;
	size_t cnt[SB_CAUSES_MAX_THREADS] = { 0 };

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t k = width(in), col[SB_CAUSES_MAX_THREADS];
		double mb = 0;

		if (in->section != s || k < 2)
			continue;
		sb_causes_columns(in, tids, ntid, col);
		for (uint32_t t = 0; t < k; t++)
			mb += (double)in->per_thread[t].busy_ns / k;
		for (uint32_t t = 0; t < k; t++) {
			double d = (double)in->per_thread[t].busy_ns - mb;

			within += d * d;
			if (col[t] < ntid) {
				dev[col[t]] += d;
				cnt[col[t]]++;
			}
		}
	}
	for (uint32_t t = 0; t < ntid; t++)
		if (cnt[t])
			between += dev[t] * dev[t] / (double)cnt[t];
	return within > 0 ? between / within : 1;
}

int sb_causes_rank_plan(const struct sb_profile *p, uint32_t s, struct sb_causes_ranks *r)
{
	uint32_t tids[SB_CAUSES_MAX_THREADS], ntid = 0;
	double *smp, *tm = NULL;
	size_t *pf = NULL, n = 0;

	memset(r, 0, sizeof(*r));
	smp = pair_samples(p, &pf);
	r->first = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*r->first));
	if (!smp || !r->first)
		goto nomem;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		r->first[i] = p->instances[i].section == s ? n : SIZE_MAX;
		n += p->instances[i].section == s ? width(&p->instances[i]) : 0;
	}
	r->lo = malloc((n ? n : 1) * sizeof(*r->lo));
	r->hi = malloc((n ? n : 1) * sizeof(*r->hi));
	if (!r->lo || !r->hi)
		goto nomem;
	/* every stored instance counts: a vector count of 1 each */
	for (uint32_t i = 0; i < p->ninstances; i++)
		pf[i] = 1;
	ntid = sb_causes_threads(p, s, pf, tids, &tm);
	free(tm);
	for (uint32_t i = 0, f = 0; i < p->ninstances; i++) {
		pf[i] = f;
		f += width(&p->instances[i]);
	}
	r->share = thread_share(p, s, tids, ntid);
	r->ranked = r->share < 0.5;
	r->c = sample_cost(p, smp, pf);
	r->nt = r->ranked ? sb_causes_rank_width(p, s) : ntid;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		struct by_busy b[SB_CAUSES_MAX_THREADS];
		uint32_t k = width(in), col[SB_CAUSES_MAX_THREADS];
		uint32_t *lo = r->lo + r->first[i], *hi = r->hi + r->first[i];


		if (r->first[i] == SIZE_MAX)
			continue;
		if (!r->ranked) {
			sb_causes_columns(in, tids, ntid, col);
			for (uint32_t t = 0; t < k; t++)
				lo[t] = hi[t] = col[t];
			continue;
		}
		for (uint32_t t = 0; t < k; t++) {
			b[t].key = (double)in->per_thread[t].busy_ns - r->c * smp[pf[i] + t];
			b[t].tid = in->per_thread[t].tid;
			b[t].slot = t;
		}
		qsort(b, k, sizeof(*b), busier);
		for (uint32_t q = 0, g = 0; q < k; q++) {
			if (q && b[q - 1].key != b[q].key)
				g = q;
			lo[b[q].slot] = g;
			for (uint32_t x = g; x <= q; x++)
				hi[b[x].slot] = q;
		}
	}
	free(smp);
	free(pf);
	return 0;
nomem:
	free(smp);
	free(pf);
	sb_causes_rank_free(r);
	return -ENOMEM;
}

void sb_causes_rank_add(const struct sb_causes_ranks *r, const struct sb_profile *p, uint32_t i,
			const double *v, double *cols)
{
	const struct sb_instance *in = &p->instances[i];
	uint32_t k = width(in);
	const uint32_t *lo = r->lo + r->first[i], *hi = r->hi + r->first[i];
	double gs[SB_CAUSES_MAX_THREADS];
	uint32_t ge[SB_CAUSES_MAX_THREADS];

	if (!r->ranked) {
		for (uint32_t t = 0; t < k; t++)
			if (lo[t] < r->nt)
				cols[lo[t]] += v[t];
		return;
	}
	for (uint32_t q = 0; q < k; q++)
		gs[q] = 0;
	for (uint32_t t = 0; t < k; t++) {
		gs[lo[t]] += v[t];
		ge[lo[t]] = hi[t];
	}
	for (uint32_t q = 0; q < k; q++) {
		if (!gs[q])
			continue;
		for (uint32_t x = q; x <= ge[q]; x++)
			cols[(uint64_t)x * r->nt / k] += gs[q] / (double)(ge[q] - q + 1);
	}
}

void sb_causes_rank_free(struct sb_causes_ranks *r)
{
	free(r->first);
	free(r->lo);
	free(r->hi);
	memset(r, 0, sizeof(*r));
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
	struct sb_causes_ranks rk;
	long *row = calloc(p->nevents ? p->nevents : 1, sizeof(*row));
	size_t nrows = 0, total = 0;
	uint32_t nt;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	if (!row)
		return -ENOMEM;
	if (sb_causes_rank_plan(p, s, &rk)) {
		free(row);
		return -ENOMEM;
	}
	nt = rk.nt;
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
		double v[SB_CAUSES_MAX_THREADS];
		uint32_t k = in->nthreads < SB_CAUSES_MAX_THREADS ? in->nthreads
								  : SB_CAUSES_MAX_THREADS;

		if (in->section != s)
			continue;
		for (uint32_t t = 0; t < k; t++)
			v[t] = (double)in->per_thread[t].busy_ns;
		sb_causes_rank_add(&rk, p, i, v, li->time);
		for (size_t x = 0; x < ninst_vec[i]; x++) {
			const struct sb_vector *vec = &p->vectors[by_inst[i][x]];
			long r = row[vec->event];

			if (r < 0)
				continue;
			for (uint32_t t = 0; t < k; t++)
				v[t] = t < vec->nthreads ? (double)vec->counts[t] : 0;
			sb_causes_rank_add(&rk, p, i, v, &li->counts[(size_t)r * nt]);
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
	sb_causes_rank_free(&rk);
	free(row);
	return ret;
}
