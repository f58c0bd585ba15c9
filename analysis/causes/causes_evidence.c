// SPDX-License-Identifier: MIT
/*
 * What each section's verdict rests on (causes.h: sb_causes_evidence):
 * filled after every section's causes are known.
 *
 * Samples per thread.  Block samples are pooled into rank columns
 * (causes_samples.c): column c sums the busy time T_c and the samples of
 * the c-th busiest thread of every instance.  S, the samples per thread,
 * is the section's block samples over its n columns, each sample counted
 * once (a call site's block holds its callees' samples too: not those).
 *
 * When are S samples enough?  The first test a block event must pass in
 * LIME (lime_vec.c) is the index of dispersion: D = sum_c (x_c - xbar)^2
 * / xbar, against chi-square with n - 1 degrees of freedom at level
 * alpha / 2m (Bonferroni over the section's m block events, and the
 * directed test below).  Counts are
 * Poisson; the event that best explains the imbalance is one whose time
 * follows the threads' busy time, x_c ~ Poisson(lambda_c) with lambda_c
 * = S T_c / Tbar (the busy times are measured exactly, sched_switch,
 * so this takes the imbalance as measured, not as sampled).  Then D is
 * noncentral chi-square (n - 1, delta) with
 *     delta = sum_c (lambda_c - lambdabar)^2 / lambdabar = S n CV^2,
 * CV^2 = sum_c (T_c - Tbar)^2 / (n Tbar^2), the squared coefficient of
 * variation of the column busy times.  The cause is found with power P
 * (0.8) when delta >= delta*, the noncentrality at which
 *     Pr[chi'^2(n - 1, delta*) > chi^2_{1 - alpha/2m}(n - 1)] = P,
 * so the samples needed per thread are S* = delta* / (n CV^2).  A cause
 * whose block holds only part of the section's time (a share f of its
 * samples, all of the variation) has delta = S n CV^2 / f, easier; one
 * whose variation is spread over k blocks has about delta / k, harder:
 * S* is the need of a single block holding the section's time, the
 * cluster LIME reports as one cause.
 *
 * LIME also passes an event on a directed test, the covariance of x with
 * the busy time (lime_vec.c: 1 degree of freedom; each test at alpha /
 * 2m).  Its noncentrality is delta too, and one degree of freedom needs
 * less, but S* stays the dispersion test's: a conservative need.  Taken
 * at the directed test's, it turned three wrong causes of 186-354
 * samples on 22 kept accuracy seeds from low evidence to confident, and
 * named no right one more.
 *
 * The regression's F-test follows (1 and n - 2 degrees of freedom, level
 * alpha).  The same event has r^2 = delta / (delta + n) with time, Cohen's
 * f^2 = r^2 / (1 - r^2) = delta / n, so the F statistic's noncentrality
 * is f^2 n = delta too: noncentral F(1, n - 2, delta).  With many
 * columns it needs less than the dispersion test (32 columns: 7.9 against
 * 39 at m = 20); with 4 it needs more (2 degrees of freedom: delta 31
 * against 10.9).  delta* is the larger of the two.
 *
 * Ranked sections (a rotating imbalance, causes_samples.c) rank pairs
 * the samples could have reordered within strata of equal sample count,
 * so that what a sample costs its thread cannot reorder them; those
 * instances say where the samples fell but not how many, and the
 * derivation above does not hold for them.  The power rests on the
 * samples of the instances ranked whole (every group of the ranking one
 * stratum: no pair spread away from its rank), S_w per thread: the verdict
 * compares S_w with S*, and they accrue at the rate below times S_w / S.
 * (For a section pooled per thread, S_w = S.)
 *
 * More time.  Samples per thread accrue at H * share per second of the
 * run, H the sampling rate (Hz, from the profile) and share = Tbar_s /
 * duration the section's busy seconds per thread over the run's
 * seconds.  A section without a cause and with S < S* is FEW_SAMPLES,
 * more_seconds = (S* - S_w) / (H * share * S_w / S); with S_w = 0 (no
 * instance yet ranked whole) the rate S_w / S is unknown and H * share
 * gives a lower bound, said as such.  A section without a
 * cause and S_w >= S* is NONE: samples enough, no event explains it.  CV = 0 (every
 * column equally busy) needs no cause: NONE.
 *
 * A section with causes and S_w < S* is CAUSES_LOW: its top cause passed
 * the tests, but at a power below P a wrong leader (a tie of the noise,
 * a block that follows the busy thread by chance) passes about as often,
 * so the causes are shown marked as low evidence, with the time to add,
 * never as a confident answer.
 *
 * Exact mode (scalebpf cc).  Counts are exact: a control-flow cause
 * (branch, loop, call) that explains the imbalance (a top score of at
 * least FLOW_EXPLAINS) needs no samples, CAUSES.  Where the counts explain
 * little or none of it the one explanation left is time per execution
 * (cache misses), which only the cpu-clock samples measure, through the hardware
 * test of causes_exact.c: a hardware event is its thread's mean sampled
 * time less what its executions explain, tested between the n threads
 * against their mean busy time, F(1, n - 2) at level 0.05 / m (m its
 * varying hardware events).  The event that best explains the imbalance
 * holds the section's time and follows the threads' busy time, N_t ~
 * Poisson(S T_t / Tbar) over the pooled instances (T_t thread t's busy
 * time there, S the hardware events' samples per thread); its F statistic
 * is noncentral F(1, n - 2, delta) with delta = sum_t (T_t - Tbar)^2 S /
 * Tbar^2 = S n CV^2 as above, CV over threads, not instances: the test
 * sees what persists in a thread.  So S* = delta*_F / (n CV^2), delta*_F
 * the F-test's noncentrality of power P at level 0.05 / m.  No cause and
 * S < S*: FEW_SAMPLES (the samples could not have shown a hardware cause;
 * "no event explains it" would be a guess); no cause and S >= S*: NONE;
 * hardware causes, or a control-flow cause that explains little, and
 * S < S*: CAUSES_LOW, as above (which of the hardware events leads, or
 * whether one would lead the weak flow cause, rests on those few
 * samples).
 *
 * The samples accrue at S / duration per second (the pooled instances are
 * the section's, all of them while the pool has room), so more_seconds =
 * duration (S* - S) / S; with S = 0, at most H Tbar / duration (every
 * sample a hardware event's): a lower bound.  causes_exact.c pools at most
 * a bound of (instance, thread) pairs: when instances were left out, or S
 * times the room left stays below S*, a longer run adds no samples the
 * test can use and more_seconds is infinite (raise -F).
 */
#include "causes_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>

#include "causes.h"

#define POWER 0.8

double sb_causes_ncx2_sf(double x, double k, double delta)
{
	/* Poisson(delta / 2) mixture of central chi-squares with k + 2j
	 * degrees of freedom; summed over j around the mode until the
	 * weights are negligible. */
	double lam = delta / 2, sum = 0;
	long mode = (long)floor(lam);

	if (!(delta > 0))
		return gsl_cdf_chisq_Q(x, k);
	for (int dir = 0; dir < 2; dir++)
		for (long j = dir ? mode - 1 : mode; j >= 0; j += dir ? -1 : 1) {
			double w = exp(-lam + (double)j * log(lam) - gsl_sf_lngamma((double)j + 1));

			sum += w * gsl_cdf_chisq_Q(x, k + 2.0 * (double)j);
			if (w < 1e-14 && (dir ? j < mode : j > mode))
				break;
		}
	return sum;
}

double sb_causes_ncf1_sf(double x, double d2, double delta)
{
	/* F'(1, d2, delta) = (chi'^2(1, delta)) / (chi^2(d2) / d2); the
	 * noncentral numerator a Poisson(delta / 2) mixture of chi^2(1 + 2j):
	 * each term is a central F(1 + 2j, d2) beyond x / (1 + 2j) */
	double lam = delta / 2, sum = 0;
	long mode = (long)floor(lam);

	if (!(delta > 0))
		return gsl_cdf_fdist_Q(x, 1, d2);
	for (int dir = 0; dir < 2; dir++)
		for (long j = dir ? mode - 1 : mode; j >= 0; j += dir ? -1 : 1) {
			double w = exp(-lam + (double)j * log(lam) - gsl_sf_lngamma((double)j + 1));
			double k = 1 + 2.0 * (double)j;

			sum += w * gsl_cdf_fdist_Q(x / k, k, d2);
			if (w < 1e-14 && (dir ? j < mode : j > mode))
				break;
		}
	return sum;
}

/* The noncentrality at which the regression's F-test of one cluster
 * (1 and n - 2 degrees of freedom, level alpha) has the given power. */
static double delta_f(uint32_t n, double alpha, double power)
{
	double d2 = (double)n - 2, c, lo = 0, hi = 1;

	if (n < 3)
		return INFINITY;
	c = gsl_cdf_fdist_Qinv(alpha, 1, d2);
	while (sb_causes_ncf1_sf(c, d2, hi) < power && hi < 1e9)
		hi *= 2;
	for (int it = 0; it < 100 && hi - lo > 1e-6 * hi; it++) {
		double mid = (lo + hi) / 2;

		if (sb_causes_ncf1_sf(c, d2, mid) < power)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

double sb_causes_delta_needed(uint32_t n, double alpha, double power)
{
	double k = (double)n - 1, c, lo = 0, hi = 1;

	if (n < 2)
		return INFINITY;
	gsl_set_error_handler_off();
	c = gsl_cdf_chisq_Qinv(alpha, k);
	while (sb_causes_ncx2_sf(c, k, hi) < power && hi < 1e9)
		hi *= 2;
	for (int it = 0; it < 100 && hi - lo > 1e-6 * hi; it++) {
		double mid = (lo + hi) / 2;

		if (sb_causes_ncx2_sf(c, k, mid) < power)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

double sb_causes_samples_needed(const double *time, uint32_t n, size_t m, double alpha)
{
	double mean = 0, ss = 0, cv2;

	for (uint32_t c = 0; c < n; c++)
		mean += time[c] / n;
	for (uint32_t c = 0; c < n; c++)
		ss += (time[c] - mean) * (time[c] - mean);
	if (n < 2 || !(mean > 0))
		return INFINITY;
	cv2 = ss / ((double)n * mean * mean);
	if (!(cv2 > 1e-12))
		return INFINITY;
	/* LIME runs the dispersion test at half the level (lime_vec.c) */
	return fmax(sb_causes_delta_needed(n, alpha / (2.0 * (double)(m ? m : 1)), POWER),
		    delta_f(n, alpha, POWER)) / ((double)n * cv2);
}

/* "... cpu-clock sampling: 999 Hz ..." in the profile's event_sources. */
double sb_causes_sample_hz(const struct sb_profile *p)
{
	const char *s = sb_profile_meta_get(p, "event_sources"), *at;
	unsigned hz;

	if (!s || !(at = strstr(s, "sampling: ")) || sscanf(at, "sampling: %u Hz", &hz) != 1)
		return 0;
	return hz;
}

static bool has_cause(const struct sb_causes *out, uint32_t s)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->c[i].section == s)
			return true;
	return false;
}

/* The section's top cause is one exact counts decide (branch, loop,
 * call), not sampled time, and it explains at least FLOW_EXPLAINS of the
 * imbalance (its score): what is left may be time per execution, which
 * only the hardware test can see. */
#define FLOW_EXPLAINS 0.5
static bool flow_cause_explains(const struct sb_causes *out, uint32_t s)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->c[i].section == s && out->c[i].rank == 1)
			return out->c[i].kind != SB_CAUSE_HW && out->c[i].score >= FLOW_EXPLAINS;
	return false;
}

/* Exact mode's S* (see the header): the hardware test's delta* over
 * n CV^2 of the threads' busy times; INFINITY when they are equal. */
static double exact_needed(const struct sb_causes_exact_hw *hw)
{
	double mean = 0, ss = 0, n = hw->nthreads;

	for (uint32_t t = 0; t < hw->nthreads; t++)
		mean += hw->time[t] / n;
	for (uint32_t t = 0; t < hw->nthreads; t++)
		ss += (hw->time[t] - mean) * (hw->time[t] - mean);
	if (hw->nthreads < 3 || !(mean > 0) || !(ss / (n * mean * mean) > 1e-12))
		return INFINITY;
	return delta_f(hw->nthreads, hw->level, POWER) / (ss / (mean * mean));
}

/* Section s's hardware test inputs (causes_exact.c), pooled as causes.c
 * pools it; *npool: the instances it could pool.  0, -ENOENT, -ENOMEM. */
static int exact_hw(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
		    struct sb_causes_exact_hw *hw, uint32_t *npool)
{
	size_t *nvec = calloc(p->ninstances ? p->ninstances : 1, sizeof(*nvec));
	size_t **by = calloc(p->ninstances ? p->ninstances : 1, sizeof(*by));
	struct sb_causes_pooled li;
	int ret = -ENOMEM;

	if (!nvec || !by)
		goto out;
	for (size_t v = 0; v < p->nvectors; v++)
		nvec[p->vectors[v].instance]++;
	*npool = 0;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		if (p->instances[i].section != s || !nvec[i])
			continue;
		*npool += p->instances[i].nthreads >= 3;
		if (!(by[i] = malloc(nvec[i] * sizeof(**by))))
			goto out;
		nvec[i] = 0;
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		uint32_t i = p->vectors[v].instance;

		if (by[i])
			by[i][nvec[i]++] = v;
		else
			nvec[i] = 0;
	}
	ret = sb_causes_pool_exact(p, g, s, by, nvec, &li, hw);
	sb_causes_pooled_free(&li);
out:
	for (uint32_t i = 0; by && i < p->ninstances; i++)
		free(by[i]);
	free(by);
	free(nvec);
	return ret;
}

/* Exact mode's verdict for section s (see the header).  0 or -ENOMEM. */
static int exact_verdict(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
			 double dur, double hz, const struct sb_causes *out,
			 struct sb_causes_evidence *e)
{
	struct sb_causes_exact_hw hw;
	double sbar = 0, tbar = 0, need;
	uint32_t npool = 0;
	bool any = has_cause(out, s);
	int ret;

	e->verdict = any ? SB_VERDICT_CAUSES : SB_VERDICT_NONE;
	/* counts are exact: a control-flow cause that explains the imbalance
	 * needs no samples */
	if (flow_cause_explains(out, s) || !g)
		return 0;
	if ((ret = exact_hw(p, g, s, &hw, &npool)))
		return ret == -ENOMEM ? ret : 0;
	for (uint32_t t = 0; t < hw.nthreads; t++) {
		sbar += hw.samples[t] / hw.nthreads;
		tbar += hw.time[t] / hw.nthreads;
	}
	e->samples_per_thread = e->counted_per_thread = sbar;
	need = exact_needed(&hw);
	if (!isfinite(need) || sbar >= need)
		return 0;
	e->verdict = any ? SB_VERDICT_CAUSES_LOW : SB_VERDICT_FEW_SAMPLES;
	e->more_seconds = INFINITY;
	if (hw.ninst < npool || (sbar > 0 && need > sbar * hw.room) || !(dur > 0))
		return 0;       /* longer adds no pair to the test: raise -F */
	if (sbar > 0) {
		e->more_seconds = dur * (need - sbar) / sbar;
	} else if (hz > 0 && tbar > 0) {
		/* none sampled yet: every sample a hardware event's */
		e->more_seconds = need / (hz * tbar / dur);
		e->more_at_least = 1;
	}
	return 0;
}

static bool is_call_site(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t e)
{
	long b = g ? sb_causes_event_block(p, g, &p->events[e]) : -1;

	return b >= 0 && sb_cfg_ends_in_call(g->merged, (uint32_t)b);
}

/* Section s's rank columns (busy seconds), block samples and block
 * events; the instances with vectors. */
static uint32_t section_columns(const struct sb_profile *p, const struct sb_causes_graph *g,
				uint32_t s, double *time, double *samples, double *whole,
				size_t *nev, uint32_t *ninst)
{
	struct sb_causes_ranks rk;
	uint32_t nt;
	uint8_t *seen = calloc(p->nevents ? p->nevents : 1, 1);

	*samples = 0;
	*whole = 0;
	*nev = 0;
	*ninst = 0;
	memset(time, 0, SB_CAUSES_MAX_THREADS * sizeof(*time));
	/* the events no LIME event stands for (causes_frames.c: library
	 * blocks, enclosing frames, callbacks) are not tested: seen already */
	if (seen && g && sb_causes_sample_skips(p, g, s, seen)) {
		free(seen);
		return 0;
	}
	if (!seen || sb_causes_rank_plan(p, s, &rk)) {
		free(seen);
		return 0;
	}
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s)
			continue;
		double v[SB_CAUSES_MAX_THREADS];

		(*ninst)++;
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			v[t] = (double)in->per_thread[t].busy_ns / 1e9;
		sb_causes_rank_add(&rk, p, i, v, time);
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		double n = 0;

		if (p->instances[x->instance].section != s ||
		    p->events[x->event].kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		for (uint32_t t = 0; t < x->nthreads; t++)
			n += (double)x->counts[t];
		/* a call site's samples are its callees' too: counted
		 * once, where they were taken */
		if (!is_call_site(p, g, x->event)) {
			*samples += n;
			if (rk.whole[x->instance])
				*whole += n;
		}
		/* m: the events LIME tests (a sampled one; never sampled
		 * here, it is constant and not tested; a skipped one is no
		 * LIME event) */
		if (n > 0 && !seen[x->event]) {
			seen[x->event] = 1;
			(*nev)++;
		}
	}
	free(seen);
	if (!p->nvectors)
		*ninst = 0;
	nt = rk.nt;
	sb_causes_rank_free(&rk);
	return nt;
}

int sb_causes_evidence_fill(const struct sb_profile *p, const struct sb_causes_graph *g,
			    const struct sb_lime_opts *o, struct sb_causes *out)
{
	double dur = 0, hz = sb_causes_sample_hz(p), alpha = o->f_alpha;
	const char *d = sb_profile_meta_get(p, "duration_ns");
	int ret = -ENOMEM;

	if (d)
		dur = strtod(d, NULL) / 1e9;
	free(out->ev);
	out->ev = NULL;
	out->nev = 0;
	for (uint32_t s = 0; s < p->nsections; s++) {
		double time[SB_CAUSES_MAX_THREADS], samples, whole, tbar = 0, need, eff;
		struct sb_causes_evidence e = { .section = s }, *arr;
		size_t nev;
		uint32_t ninst, nt = section_columns(p, g, s, time, &samples,
					       &whole, &nev, &ninst);

		if (!ninst)
			continue;
		e.nthreads = nt;
		e.ninstances = ninst;
		for (uint32_t c = 0; c < nt; c++)
			tbar += time[c] / nt;
		if (out->block_samples)
			e.samples_per_thread = nt ? samples / nt : 0;
		/* the samples the test's power rests on (see above) */
		eff = nt ? whole / nt : 0;
		if (out->block_samples)
			e.counted_per_thread = eff;
		need = out->block_samples ? sb_causes_samples_needed(time, nt, nev, alpha) : INFINITY;
		if (nt < 3)
			e.verdict = SB_VERDICT_FEW_THREADS;
		else if (out->exact_counts) {
			if (exact_verdict(p, g, s, dur, hz, out, &e))
				goto out;
		} else if (!isfinite(need) || eff >= need)
			/* exact counts, equal columns, or power enough */
			e.verdict = has_cause(out, s) ? SB_VERDICT_CAUSES : SB_VERDICT_NONE;
		else {
			double rate = hz * (dur > 0 ? tbar / dur : 0);

			/* no rate known: the observed samples per run second */
			if (!(rate > 0) && dur > 0)
				rate = e.samples_per_thread / dur;
			/* of which the share that counts how much; none yet:
			 * all samples' rate, so a lower bound */
			if (whole > 0 && samples > 0)
				rate *= whole / samples;
			else
				e.more_at_least = 1;
			/* a cause found below the power rule is shown, but
			 * marked: its test passed, yet with this few samples
			 * a wrong leader passes it about as often */
			e.verdict = has_cause(out, s) ? SB_VERDICT_CAUSES_LOW
						      : SB_VERDICT_FEW_SAMPLES;
			e.more_seconds = rate > 0 ? (need - eff) / rate : INFINITY;
		}
		arr = realloc(out->ev, (out->nev + 1) * sizeof(*arr));
		if (!arr)
			goto out;
		out->ev = arr;
		out->ev[out->nev++] = e;
	}
	ret = 0;
out:
	return ret;
}
