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
 * mean d), decides: R >= 1/2, the imbalance stays with its threads and
 * pairs are pooled per thread as before (a column is a tid whatever the
 * samples; with I < 8 instances R must reach 4/I, four times what chance
 * gives a rotation); below, it rotates, and each instance
 * deals its pairs to columns by busy rank: the busiest thread's pair to
 * the first column, and so on (k < nt threads spread as quantiles; exact
 * ties share their columns).  Every column then holds one pair's worth of
 * every instance, so what differs between instances (the K step's size)
 * adds the same to every column and only the within-instance contrast
 * remains, which is what LIME analyses per instance.  Every stored
 * instance counts, with or without samples.
 *
 * Ranking must not follow the samples.  A sample costs its thread CPU
 * time (interrupt, BPF program, stack copy: 25-35 us each on this
 * project's KVM guest, as much as one of LU's block updates; measured as
 * the within-instance slope of busy time on samples in balanced
 * sections), so in a balanced instance the sampled thread ranks first
 * and every sampled block would line up with the rank.  But where one
 * thread's lead is more than its extra samples could have cost it, the
 * samples did not make the order, and it must stay: with one hot block
 * (an owner test guarding the one loop every thread runs: LU's blocks,
 * about one sample a pair) "how many" samples is all the signal there
 * is.  So an instance, busiest first, is cut into groups: a cut where
 * every pair above it is busier than every pair below by more than
 * SAMPLE_COST_MAX per sample it has more (busy less SAMPLE_COST_MAX x
 * samples: the least above beats the most below), so above and below are
 * the true order whatever the samples cost (up to SAMPLE_COST_MAX).  A
 * group holds the ranks [g0, g1] and gets their columns; inside it the
 * samples may have made the order, so it is ranked within strata of
 * equal sample count: inside a stratum the samples cost every pair the
 * same, and each stratum spreads its members over all the group's
 * columns (the j-th busiest of m over the group's [j w / m, (j + 1) w /
 * m)), so no column of the group gets more samples for being sampled;
 * which block the samples fell in, and the busy times, carry the signal.
 * The bound is the cost itself, not a margin above it: a sampled pair's
 * lower key joins it to the group below where the gap is under the bound
 * less its true cost, spreading it over lower columns than its unsampled
 * peers (a bias against the samples, the safe direction, that a larger
 * bound would make large: 27 threads in tiers of equal trip counts
 * 95 us apart merged into one group).  An instance whose every group is
 * one stratum (its pairs alone, or with as many samples) is "whole": its
 * samples count how much (causes_evidence.c's power).
 *
 * nt columns (<= SB_CAUSES_MAX_THREADS): LIME costs what it did with
 * per-thread sums, whatever the number of instances; pooling is a sort of
 * nt keys per instance and passes over the vectors, a difference array
 * spreading each pair over its columns.
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
	double smp;       /* the pair's samples: its stratum */
	double key;
	uint32_t tid;
	uint32_t slot;    /* index in the instance's per_thread */
};

/* The most CPU time one sample has been seen to cost its thread (the
 * interrupt, the BPF program, the stack copy: 25-35 us on this
 * project's KVM guest, as much as one of LU's block updates). */
#define SAMPLE_COST_MAX 50000.0

static int busier(const void *a, const void *b)
{
	const struct by_busy *x = a, *y = b;

	if (x->smp != y->smp)
		return x->smp < y->smp ? -1 : 1;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Busiest first (exact ties by tid). */
static int by_key(const void *a, const void *b)
{
	const struct by_busy *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * Columns [lo, hi) of an instance's k pairs b[] among nt (header): busiest
 * first, cut into groups where the samples cannot have made the order,
 * each group spread by strata over its own columns.  True when every
 * group is one stratum: the samples then count how much, not only where.
 */
static bool rank_instance(struct by_busy *b, uint32_t k, uint32_t nt, double *lo, double *hi)
{
	bool whole = true;

	double low[SB_CAUSES_MAX_THREADS], high[SB_CAUSES_MAX_THREADS + 1];

	qsort(b, k, sizeof(*b), by_key);
	/* busy less the most its samples can cost: every pair above a cut
	 * stays above every pair below it whatever the samples cost */
	for (uint32_t q = 0; q < k; q++) {
		double x = b[q].key - SAMPLE_COST_MAX * b[q].smp;

		low[q] = q ? fmin(low[q - 1], x) : x;
	}
	high[k] = -INFINITY;
	for (uint32_t q = k; q > 0; q--)
		high[q - 1] = fmax(high[q], b[q - 1].key - SAMPLE_COST_MAX * b[q - 1].smp);
	for (uint32_t g0 = 0; g0 < k;) {
		uint32_t g1 = g0;
		double base, w;

		while (g1 + 1 < k && !(low[g1] > high[g1 + 1]))
			g1++;
		/* the group's ranks' columns, as a real interval: every
		 * column then holds as much pair as every other (integer
		 * bounds would give some columns half a pair, others a
		 * third, and every block's count and the busy time would
		 * follow that, in step) */
		base = (double)g0 * nt / k;
		w = (double)(g1 + 1) * nt / k - base;
		qsort(b + g0, g1 - g0 + 1, sizeof(*b), busier);
		for (uint32_t q0 = g0; q0 <= g1;) {
			uint32_t q1 = q0;

			while (q1 + 1 <= g1 && b[q1 + 1].smp == b[q0].smp)
				q1++;
			whole = whole && q0 == g0 && q1 == g1;
			/* stratum q0..q1 (m pairs): the j-th busiest spreads
			 * over the group's [j w / m, (j + 1) w / m), exact
			 * ties over their joint range */
			for (uint32_t q = q0, m = q1 - q0 + 1; q <= q1;) {
				uint32_t e = q;

				while (e + 1 <= q1 && b[e + 1].key == b[q].key)
					e++;
				for (uint32_t x = q; x <= e; x++) {
					lo[b[x].slot] = base + (double)(q - q0) * w / m;
					hi[b[x].slot] = base + (double)(e - q0 + 1) * w / m;
				}
				q = e + 1;
			}
			q0 = q1 + 1;
		}
		g0 = g1 + 1;
	}
	return whole;
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

/* sb_causes_columns, in O(threads) when instances list their threads in
 * the same order (they do: first seen first), else by scanning. */
static void columns(const struct sb_instance *in, const uint32_t *tids, uint32_t nt,
		    uint32_t *col)
{
	for (uint32_t t = 0, guess = 0; t < width(in); t++) {
		uint32_t tid = in->per_thread[t].tid;

		if (guess < nt && tids[guess] == tid)
			col[t] = guess;
		else if (t < nt && tids[t] == tid)
			col[t] = t;
		else
			for (col[t] = 0; col[t] < nt && tids[col[t]] != tid; col[t]++)
				;
		guess = col[t] + 1;
	}
}

/* Section s's threads, first seen first (at most SB_CAUSES_MAX_THREADS). */
static uint32_t section_tids(const struct sb_profile *p, uint32_t s, uint32_t *tids)
{
	uint32_t nt = 0, col[SB_CAUSES_MAX_THREADS];

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s)
			continue;
		uint32_t known = nt;

		columns(in, tids, known, col);
		for (uint32_t t = 0; t < width(in); t++)
			if (col[t] >= known && nt < SB_CAUSES_MAX_THREADS)
				tids[nt++] = in->per_thread[t].tid;
	}
	return nt;
}

/* The share of the within-instance variance of busy time that thread
 * identity explains (1: the same threads are busy in every instance),
 * and in *ninst the instances it rests on. */
static double thread_share(const struct sb_profile *p, uint32_t s, const uint32_t *tids,
			   uint32_t ntid, uint32_t *ninst)
{
	double dev[SB_CAUSES_MAX_THREADS] = { 0 }, within = 0, between = 0;
	size_t cnt[SB_CAUSES_MAX_THREADS] = { 0 };

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t k = width(in), col[SB_CAUSES_MAX_THREADS];
		double mb = 0;

		if (in->section != s || k < 2)
			continue;
		++*ninst;
		columns(in, tids, ntid, col);
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
	uint32_t tids[SB_CAUSES_MAX_THREADS], ntid = 0, ninst = 0;
	double *smp;
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
	r->whole = calloc(p->ninstances ? p->ninstances : 1, 1);
	if (!r->lo || !r->hi || !r->whole)
		goto nomem;
	ntid = section_tids(p, s, tids);
	r->share = thread_share(p, s, tids, ntid, &ninst);
	/* Thread means over I instances keep 1/I of a rotating imbalance's
	 * variance by chance (E[R] ~ 1/I without any thread effect), so with
	 * few instances R alone would often read a rotation as persistent:
	 * per-thread pooling wants R well above that, 4/I.  (One instance:
	 * R = 1, and ranks and tids are the same columns.) */
	r->ranked = ninst >= 2 ? r->share < fmax(0.5, 4.0 / ninst) : r->share < 0.5;
	r->nt = r->ranked ? sb_causes_rank_width(p, s) : ntid;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		struct by_busy b[SB_CAUSES_MAX_THREADS];
		uint32_t k = width(in), col[SB_CAUSES_MAX_THREADS];
		double *lo = r->lo + r->first[i], *hi = r->hi + r->first[i];

		if (r->first[i] == SIZE_MAX)
			continue;
		if (!r->ranked) {
			columns(in, tids, ntid, col);
			for (uint32_t t = 0; t < k; t++) {
				lo[t] = col[t];     /* col >= nt: a thread past the columns */
				hi[t] = (double)col[t] + 1;
			}
			r->whole[i] = 1;
			continue;
		}
		for (uint32_t t = 0; t < k; t++) {
			b[t].smp = smp[pf[i] + t];
			b[t].key = (double)in->per_thread[t].busy_ns;
			b[t].tid = in->per_thread[t].tid;
			b[t].slot = t;
		}
		/* samples count how much (evidence) where every group is one
		 * stratum: no pair's samples were spread away from its rank */
		r->whole[i] = rank_instance(b, k, r->nt, lo, hi);
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
	const double *lo = r->lo + r->first[i], *hi = r->hi + r->first[i];
	double d[SB_CAUSES_MAX_THREADS + 1] = { 0 }, run = 0;

	/* each pair's value spread evenly over its interval: the columns
	 * it covers whole through a difference array, its two partly
	 * covered ends directly; O(threads + columns) */
	for (uint32_t t = 0; t < width(in); t++) {
		double a = lo[t], b = fmin(hi[t], (double)r->nt), dens;
		uint32_t ca, cb;

		if (!(a < b) || !v[t])
			continue;
		dens = v[t] / (hi[t] - a);
		ca = (uint32_t)a;
		cb = (uint32_t)ceil(b) - 1;      /* the last column touched */
		if (ca == cb) {
			cols[ca] += dens * (b - a);
			continue;
		}
		cols[ca] += dens * ((double)ca + 1 - a);
		cols[cb] += dens * (b - (double)cb);
		d[ca + 1] += dens;
		d[cb] -= dens;
	}
	for (uint32_t x = 0; x < r->nt; x++) {
		run += d[x];
		cols[x] += run;
	}
}

void sb_causes_rank_free(struct sb_causes_ranks *r)
{
	free(r->first);
	free(r->whole);
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
 * calls), are no LIME events.  Nor are the blocks causes_frames.c names
 * (a library's code, the main thread's enclosing frames, callbacks run
 * under a library call): their samples are already the program's calls'.
 */
/* Function name f is one of the recorder's probed synchronizations in a
 * library, "lib.so:name+off,..." in the profile's "probes", leading
 * underscores aside (libc's ___pthread_barrier_wait is
 * pthread_barrier_wait). */
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
		const char *e = b, *so;

		if (!((b == pr || b[-1] == ':') && (at[n] == '+' || at[n] == ',' || !at[n])))
			continue;
		/* the entry's binary, "lib.so...:" before the name: only a
		 * library's synchronization; a probed function of the
		 * program is its own code (an OpenMP region's body) */
		while (e > pr && e[-1] != ',')
			e--;
		so = strstr(e, ".so");
		if (so && so < b)
			return true;
	}
	return false;
}

static bool at_sync(const struct sb_profile *p, const struct sb_causes_graph *g, long blk)
{
	const struct sb_cfg *m = g->merged;

	if (blk >= 0 && (size_t)blk < m->nblocks && probed(p, m->funcs[m->blocks[blk].func].name))
		return true;
	for (size_t s = 0; s < p->nsections; s++)
		if (blk >= 0 && sb_causes_loc_block(p, g, p->sections[s].loc) == blk)
			return true;
	return false;
}

int sb_causes_pool_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			   struct sb_causes_pooled *li)
{
	struct sb_causes_ranks rk;
	long *row = calloc(p->nevents ? p->nevents : 1, sizeof(*row));
	uint8_t *skip = calloc(p->nevents ? p->nevents : 1, 1);
	size_t nrows = 0, total = 0;
	uint32_t nt;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	if (!row || !skip || sb_causes_sample_skips(p, g, s, skip)) {
		free(row);
		free(skip);
		return -ENOMEM;
	}
	if (sb_causes_rank_plan(p, s, &rk)) {
		free(row);
		free(skip);
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
				row[ev] = skip[ev] || at_sync(p, g, sb_causes_event_block(p, g, d)) ? -2
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
	free(skip);
	return ret;
}
