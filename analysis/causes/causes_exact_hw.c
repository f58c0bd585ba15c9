// SPDX-License-Identifier: MIT
/*
 * Exact mode's hardware test (causes_exact.c pools the events): which
 * blocks' sampled time, beyond what their executions explain, is a cause
 * of imbalance.  Columns are (instance, thread) pairs (struct
 * sb_causes_cols); the tests between threads use each thread's mean over
 * its columns, the test of persistence the pairs themselves.
 */
#include "causes_priv.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/*
 * Sampled time is kept as a hardware cause only where it is a thread's
 * own: each pair's value becomes its thread's mean over the instances.
 * Samples measure the very time they are tested against, so a thread
 * that ran slower in one instance by chance (preempted, its cache
 * flushed by a neighbour: 16 threads on 2 cores) correlates with time
 * in that instance at every block it sampled; hardware behaviour that
 * belongs to the code (a larger working set) repeats in every instance.
 * Control flow is not averaged: which thread gets the extra work may
 * change from instance to instance (LU's owners), and counts are exact.
 */
void sb_causes_thread_means(const struct sb_causes_cols *pl, double *x, double *sum, uint32_t *cnt)
{
	memset(sum, 0, pl->ntix * sizeof(*sum));
	memset(cnt, 0, pl->ntix * sizeof(*cnt));
	for (uint32_t c = 0; c < pl->ncols; c++) {
		sum[pl->tix[c]] += x[c];
		cnt[pl->tix[c]]++;
	}
	for (uint32_t c = 0; c < pl->ncols; c++)
		x[c] = sum[pl->tix[c]] / cnt[pl->tix[c]];
}

/*
 * A hardware event is its thread's mean (sb_causes_thread_means): one value per
 * thread, ntix - 1 degrees of freedom, however many (instance, thread)
 * pairs repeat it.  LIME's regression tests it over the pairs, hundreds of
 * columns, where a thread's time is as persistent as the event: a block
 * whose few samples fell by chance in the busier threads (Poisson noise
 * at 1-5 samples a thread, a thread a little slower throughout) then
 * passes at r = 0.2, and a cache cause is named where there is none.
 * The test that fits the model is between threads: the event's part its
 * superior (its executions) does not explain against the threads' mean
 * times, F(1, ntix - 2), at LIME's level over the section's m hardware
 * events (Bonferroni, as lime_vec.c tests sampled blocks).  An event that
 * fails is no evidence of hardware behaviour: its row is zeroed, which
 * LIME reads as constant.
 *
 * Two more conditions, since significance alone is not a cause:
 * - Size.  Samples are time (one per 1/H s on CPU), so the event's part
 *   accounts for share = (x . t) / (t . t) * 1e9 / H of the threads' time
 *   differences t.  A block whose few extra samples follow the busy threads
 *   exactly (a balanced loop next to a cache-missing one: 0.03 samples an
 *   instance against 15, r^2 = 1 with 4 threads) is significant and says
 *   nothing; below SB_EXACT_HW_SHARE it is dropped.
 * - Not one thread beside a control-flow imbalance.  Where the threads'
 *   exact counts differ, the threads that finish early wait, and on an
 *   oversubscribed machine the one left running beside spinning or
 *   yielding team-mates (or on a vCPU the host steals from) runs slower
 *   throughout, in every instance (8 threads on 2 vCPUs: one thread 2x
 *   slower at the same loop as the others; 16 threads: 4x).  Its hot
 *   block then carries most of the time variance and passes at r^2 =
 *   0.75-0.85, outranking the decision that makes the imbalance: an
 *   effect of the imbalance taken for a cause.  Code that misses the
 *   cache does so in every thread that runs it with that data, so there,
 *   with 5 or more threads, the event must still pass without its most
 *   influential thread (largest x_t * t_t), re-centred and its superior's
 *   share fitted again on the others (the outlier bends that fit: the
 *   owners' extra work, which their counts explain, would be left in the
 *   residual and follow their time), F(1, ntix - 3)
 *   at SB_CAUSES_EXACT_HW_ALPHA (a second look at one event, not another
 *   family of tests: 3 big threads of 9 still pass with 2, p = 0.02).
 *   Where every thread runs the same code (no counted edge varies) there
 *   is no such effect to mistake, and one slow thread is the cause (the
 *   root's larger working set).  With 3 or 4 threads one thread is a
 *   third or half of the evidence: the test is kept as is.
 *
 * With 3 or 4 threads the test between threads has 1 or 2 degrees of
 * freedom: a cache-missing thread of 3 with 250 samples each (r^2 = 0.99)
 * is p = 0.06, no cause at any level, however long the run.  Where no
 * counted edge varies (every thread runs the same code, so nothing but
 * the hardware can make the time differ) an event also passes when the
 * threads' effect on it persists from instance to instance: the one-way
 * analysis of variance of its (instance, thread) pairs by thread,
 * F(ntix - 1, pairs - ntix - instances + 1), at the same level, its
 * threads' means following their time (x . t > 0).  A thread slower by
 * chance in some instances is within-thread variance there; it is the
 * persistence the pairs add, not their number.
 */
#define SB_EXACT_HW_SHARE 0.05

/* r^2 of x against t over the columns of every thread but skip (or all:
 * skip = UINT32_MAX), all re-centred over those columns; with a superior
 * sup, of what x has beyond sup's share, fitted on those columns too. */
static double r2_without(const struct sb_causes_cols *pl, const double *x, const double *sup,
			 const double *t, uint32_t skip)
{
	double mx = 0, ms = 0, mt = 0, xy = 0, xx = 0, yy = 0, xs = 0, ss = 0, sy = 0, b;
	size_t n = 0;

	for (uint32_t c = 0; c < pl->ncols; c++)
		if (pl->tix[c] != skip) {
			mx += x[c];
			ms += sup ? sup[c] : 0;
			mt += t[c];
			n++;
		}
	if (!n)
		return 0;
	mx /= (double)n;
	ms /= (double)n;
	mt /= (double)n;
	for (uint32_t c = 0; c < pl->ncols; c++)
		if (pl->tix[c] != skip) {
			double dx = x[c] - mx, ds = sup ? sup[c] - ms : 0, dt = t[c] - mt;

			xy += dx * dt;
			xx += dx * dx;
			yy += dt * dt;
			xs += dx * ds;
			ss += ds * ds;
			sy += ds * dt;
		}
	/* residual r = x - b s: r.t = xy - b sy, r.r = xx - b xs */
	b = ss > 0 ? xs / ss : 0;
	xy -= b * sy;
	xx -= b * xs;
	return xx > 1e-12 * (xx + b * xs) && yy > 0 ? xy * xy / (xx * yy) : 0;
}

/* Thread k's value in x (a row of thread means: any of its columns). */
static double thread_value(const struct sb_causes_cols *pl, const double *x, uint32_t k)
{
	for (uint32_t c = 0; c < pl->ncols; c++)
		if (pl->tix[c] == k)
			return x[c];
	return 0;
}

/*
 * One thread's disturbance (the one-thread-out test failed) at a block
 * where that thread ran no more than the average: its sampled time there
 * beyond its executions, x at 1e9 / hz ns a sample, is no decision's, and
 * left in the time the regression explains it dwarfs the decision's
 * (8 threads on 2 vCPUs: one non-owner 13 ms an instance slower, the
 * owners' extra work 1 ms): it is taken out.  A thread that ran more
 * there (the root's extra work) keeps its time: whatever it spent, its
 * decision's.
 */
static void disturbed(const struct sb_causes_cols *pl, const double *x, double hz, double *time)
{
	for (uint32_t c = 0; c < pl->ncols; c++)
		time[c] -= x[c] * 1e9 / hz;
}

static bool f_passes(double r2, double df, double level)
{
	return df >= 1 && (r2 >= 1 || gsl_cdf_fdist_Q(r2 * df / (1 - r2), 1, df) < level);
}

/* The thread whose columns add most to x . t. */
static uint32_t most_influential(const struct sb_causes_cols *pl, const double *x, const double *t,
				 double *per_thread)
{
	uint32_t best = 0;

	memset(per_thread, 0, pl->ntix * sizeof(*per_thread));
	for (uint32_t c = 0; c < pl->ncols; c++)
		per_thread[pl->tix[c]] += x[c] * t[c];
	for (uint32_t k = 1; k < pl->ntix; k++)
		if (per_thread[k] > per_thread[best])
			best = k;
	return best;
}

void sb_causes_centre(const struct sb_causes_cols *pl, double *x)
{
	for (uint32_t k = 0; k < pl->ninst; k++) {
		uint32_t lo = pl->off[k], hi = k + 1 < pl->ninst ? pl->off[k + 1] : pl->ncols;
		double mean = 0;

		for (uint32_t c = lo; c < hi; c++)
			mean += x[c];
		mean /= (double)(hi - lo);
		for (uint32_t c = lo; c < hi; c++)
			x[c] -= mean;
	}
}

/* The p-value of the threads' effect on v, per-pair values centred per
 * instance: one-way analysis of variance by thread, the instances' own
 * centring taken from the error's degrees of freedom. */
static double thread_effect_p(const struct sb_causes_cols *pl, const double *v, double *sum,
			      uint32_t *cnt)
{
	double between = 0, within = 0, df1 = (double)pl->ntix - 1;
	double df2 = (double)pl->ncols - (double)pl->ntix - (double)pl->ninst + 1;

	memset(sum, 0, pl->ntix * sizeof(*sum));
	memset(cnt, 0, pl->ntix * sizeof(*cnt));
	for (uint32_t c = 0; c < pl->ncols; c++) {
		sum[pl->tix[c]] += v[c];
		cnt[pl->tix[c]]++;
	}
	for (uint32_t t = 0; t < pl->ntix; t++)
		between += cnt[t] ? sum[t] * sum[t] / cnt[t] : 0;
	for (uint32_t c = 0; c < pl->ncols; c++) {
		double d = v[c] - sum[pl->tix[c]] / cnt[pl->tix[c]];

		within += d * d;
	}
	if (df1 < 1 || df2 < 1 || !(between > 0))
		return 1;
	if (!(within > 0))
		return 0;
	return gsl_cdf_fdist_Q(between / df1 / (within / df2), df1, df2);
}

long sb_causes_drop_unproven_hw(const struct sb_causes_cols *pl, struct sb_causes_pooled *li,
				size_t n, double hz, double *ty, double *x, double *sum, uint32_t *cnt)
{
	size_t nt = pl->ncols, m = 0;
	double df = (double)pl->ntix - 2;
	double *persist = malloc((n ? n : 1) * sizeof(*persist));
	bool flow_varies = false;

	if (!persist)
		return -1;
	memcpy(ty, li->time, nt * sizeof(*ty));
	sb_causes_thread_means(pl, ty, sum, cnt);
	/* counts (an edge's, or a block's whose edges flow could not split)
	 * that differ between an instance's threads: centred, not zero */
	for (size_t r = 0; r < n && !flow_varies; r++)
		for (size_t c = 0; c < nt && li->ev[r].kind != SB_LIME_HW; c++)
			flow_varies |= li->counts[r * nt + c] != 0;
	for (size_t r = 0; r < n; r++) {
		double *v = &li->counts[r * nt];

		/* (read only where no flow varies, with 3 or 4 threads) */
		persist[r] = li->ev[r].kind == SB_LIME_HW && !flow_varies && pl->ntix < 5
			     ? thread_effect_p(pl, v, sum, cnt) : 1;
		if (li->ev[r].kind != SB_LIME_EDGE) {
			sb_causes_thread_means(pl, v, sum, cnt);
			sb_causes_centre(pl, v);
		}
	}
	for (size_t r = 0; r < n; r++) {
		const double *v = &li->counts[r * nt];
		bool varies = false;

		for (size_t c = 1; c < nt && li->ev[r].kind == SB_LIME_HW; c++)
			varies |= v[c] != v[0];
		m += varies;
	}
	for (size_t r = 0; r < n; r++) {
		double *v = &li->counts[r * nt], xy = 0, yy = 0;
		double level = m ? SB_CAUSES_EXACT_HW_ALPHA / (double)m : 0;
		bool keep;

		if (li->ev[r].kind != SB_LIME_HW)
			continue;
		memcpy(x, v, nt * sizeof(*x));
		if (li->ev[r].superior >= 0) {
			const double *s = &li->counts[(size_t)li->ev[r].superior * nt];
			double xs = 0, ss = 0;

			for (size_t c = 0; c < nt; c++) {
				xs += x[c] * s[c];
				ss += s[c] * s[c];
			}
			for (size_t c = 0; ss > 0 && c < nt; c++)
				x[c] -= xs / ss * s[c];
		}
		for (size_t c = 0; c < nt; c++) {
			xy += x[c] * ty[c];
			yy += ty[c] * ty[c];
		}
		/* (a cause adds time: more of it on the busier threads) */
		keep = xy > 0 && (f_passes(r2_without(pl, x, NULL, ty, UINT32_MAX), df, level) ||
				  (!flow_varies && pl->ntix < 5 && persist[r] < level));
		if (keep && hz > 0 && yy > 0)
			keep = xy / yy * 1e9 / hz >= SB_EXACT_HW_SHARE;
		if (keep && flow_varies && pl->ntix >= 5) {
			const double *sup = li->ev[r].superior >= 0 ?
				&li->counts[(size_t)li->ev[r].superior * nt] : NULL;
			uint32_t k = most_influential(pl, x, ty, sum);

			keep = f_passes(r2_without(pl, v, sup, ty, k), df - 1,
					SB_CAUSES_EXACT_HW_ALPHA);
			if (!keep && sup && hz > 0 && !(thread_value(pl, sup, k) > 0))
				disturbed(pl, x, hz, li->time);
		}
		if (!keep)
			memset(v, 0, nt * sizeof(*v));
	}
	free(persist);
	return (long)m;
}

