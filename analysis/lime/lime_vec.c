// SPDX-License-Identifier: MIT
/*
 * Unit vectors of event counts, and LIME §3.1: hardware events lose the
 * part of their variation their superior events explain (Gram-Schmidt).
 */
#include "lime_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/* Variation below this fraction of the largest |count| (per sqrt(thread))
 * is rounding of a constant, not behaviour. */
#define CONST_TOL 1e-12
/* A Gram-Schmidt residual shorter than this (the input has norm 1) is
 * fully explained by its superiors. */
#define RESIDUAL_TOL 1e-9

bool sb_lime_unit(const double *x, uint32_t n, double *u)
{
	double mx = 0, mean = 0, norm;
	bool varies = false;

	for (uint32_t t = 0; t < n; t++) {
		mx = fmax(mx, fabs(x[t]));
		varies |= x[t] != x[0];
	}
	if (!varies || !(mx > 0))
		goto constant;
	/* Scaling by the largest |count| first keeps every sum in range
	 * for counts up to DBL_MAX and down to subnormals. */
	for (uint32_t t = 0; t < n; t++)
		mean += x[t] / mx;
	mean /= n;
	for (uint32_t t = 0; t < n; t++)
		u[t] = x[t] / mx - mean;
	norm = sqrt(sb_lime_dot(u, u, n));
	if (!(norm > CONST_TOL * sqrt((double)n)))
		goto constant;
	for (uint32_t t = 0; t < n; t++)
		u[t] /= norm;
	return true;
constant:
	memset(u, 0, n * sizeof(*u));
	return false;
}

/*
 * Sampled counts are Poisson: a block that runs equally long in every
 * thread still gets different sample counts, and with few samples those
 * differences can line up with time perfectly (one sample, in the slowest
 * thread, has r = 1).  The index of dispersion sum (d_t - mean)^2 / mean
 * of equal-rate Poisson counts is chi-square with n - 1 degrees of
 * freedom; d = x - y tests whether x varies beyond y (y NULL: beyond
 * nothing).  The variance of x - y, when y's samples are a subset of x's
 * or the other way round, is that of the samples in one and not the
 * other, about mean |d|.
 */
bool sb_lime_overdispersed(const double *x, const double *y, uint32_t n, double alpha)
{
	double mean = 0, var = 0, d2 = 0;

	if (n < 2)
		return false;
	for (uint32_t t = 0; t < n; t++) {
		double d = x[t] - (y ? y[t] : 0);

		mean += d / n;
		var += fabs(d) / n;
	}
	if (!(var > 0))
		return false;       /* every difference is 0 */
	for (uint32_t t = 0; t < n; t++) {
		double d = x[t] - (y ? y[t] : 0) - mean;

		d2 += d * d;
	}
	return gsl_cdf_chisq_Q(d2 / var, n - 1) < alpha;
}

/*
 * x's counts follow the time columns beyond Poisson noise: the 1-dof test
 * of the covariance S = sum (x_t - mean)(time_t - mean time), whose
 * variance under equal-rate Poisson counts is mean x * sum (time_t - mean
 * time)^2, so S^2 over it is chi-square with 1 degree of freedom.  The
 * index of dispersion spreads its power over n - 1 directions; this one
 * looks where LIME does, and sees what the omnibus dilutes: one busy
 * column of 28 with 225 samples against 152 elsewhere (D = 33, p = 0.2;
 * here p = 1e-8).  Pooled columns hold fractions of (instance, thread)
 * pairs, whose variance is at most the mean, so the test stays
 * conservative.  Only with SB_LIME_DIRECTED_MIN_MEAN samples a column on
 * average, where the normal approximation holds: one stray sample in the
 * slowest thread is a huge z from a tiny mean, and stays noise.  Two-
 * sided, as a noise filter should be: counts that go against time vary
 * too (the clusters and the regression judge the direction).
 */
bool sb_lime_follows_time(const double *x, const double *time, uint32_t n, double alpha)
{
	double mx = 0, mt = 0, sxt = 0, stt = 0;

	if (n < 2 || !time)
		return false;
	for (uint32_t t = 0; t < n; t++) {
		mx += x[t] / n;
		mt += time[t] / n;
	}
	if (!(mx >= SB_LIME_DIRECTED_MIN_MEAN))
		return false;
	for (uint32_t t = 0; t < n; t++) {
		sxt += (x[t] - mx) * (time[t] - mt);
		stt += (time[t] - mt) * (time[t] - mt);
	}
	if (!(stt > 0))
		return false;
	return gsl_cdf_chisq_Q(sxt * sxt / (mx * stt), 1) < alpha;
}

static bool has_superior(const struct sb_lime_event *ev)
{
	return ev->kind == SB_LIME_HW && ev->superior >= 0;
}

/*
 * Residual of event e against its chain of superiors.  Each superior's
 * row is already its own residual against the rest of the chain, so the
 * rows of a chain are mutually orthogonal and subtracting them one by one
 * (modified Gram-Schmidt) projects onto the span of the whole chain: an L2
 * miss loses what L1 misses and execution counts explain.
 */
static void residual(const struct sb_lime_instance *in, uint32_t e, double *u, uint8_t *live)
{
	uint32_t n = in->nthreads;
	double *r = u + (size_t)e * n, norm;

	if (!live[e])
		return;
	for (int32_t a = in->events[e].superior; a >= 0;
	     a = has_superior(&in->events[a]) ? in->events[a].superior : -1) {
		const double *q = u + (size_t)a * n;
		double c;

		if (!live[a])
			continue;
		c = sb_lime_dot(r, q, n);
		for (uint32_t t = 0; t < n; t++)
			r[t] -= c * q[t];
	}
	norm = sqrt(sb_lime_dot(r, r, n));
	if (!(norm > RESIDUAL_TOL)) {
		memset(r, 0, n * sizeof(*r));
		live[e] = 0;
		return;
	}
	for (uint32_t t = 0; t < n; t++)
		r[t] /= norm;
}

enum { RAW, ON_PATH, ADJUSTED };

/*
 * Adjusts e after all its superiors, without recursion (chains may be as
 * long as the instance): walk up to the first settled event, then settle
 * the path top-down.  stack holds nevents entries.
 */
static int settle(const struct sb_lime_instance *in, uint32_t e, double *u, uint8_t *live,
		  uint8_t *state, uint32_t *stack)
{
	size_t depth = 0;

	for (uint32_t a = e; state[a] != ADJUSTED;) {
		if (state[a] == ON_PATH)
			return -EINVAL;     /* a cycle of superiors */
		state[a] = ON_PATH;
		stack[depth++] = a;
		if (!has_superior(&in->events[a]))
			break;
		a = (uint32_t)in->events[a].superior;
	}
	while (depth) {
		uint32_t a = stack[--depth];

		if (has_superior(&in->events[a]))
			residual(in, a, u, live);
		state[a] = ADJUSTED;
	}
	return 0;
}

/*
 * Block samples vary across threads by chance: an event whose variation
 * is within Poisson noise (sb_lime_overdispersed, nor along the time
 * columns: sb_lime_follows_time) does not vary for LIME.
 * Done before §3.1, so no hardware event is adjusted by noise.  One test
 * per block event, so each runs at alpha / their number (Bonferroni): a
 * section has hundreds of rarely sampled blocks, and one
 * stray sample in the slowest thread would otherwise join the causes with
 * r = 1, or as a predecessor in the cluster take a true leader's place.
 */
static void drop_sampling_noise(const struct sb_lime_instance *in, double alpha, double *u,
				uint8_t *live)
{
	uint32_t n = in->nthreads;
	size_t m = 0;

	for (size_t e = 0; e < in->nevents; e++)
		m += live[e] && in->events[e].kind == SB_LIME_BLOCK;
	for (size_t e = 0; e < in->nevents; e++) {
		/* either test, each at half the level */
		if (!live[e] || in->events[e].kind != SB_LIME_BLOCK ||
		    sb_lime_overdispersed(in->events[e].counts, NULL, n, alpha / (2.0 * m)) ||
		    sb_lime_follows_time(in->events[e].counts, in->time, n, alpha / (2.0 * m)))
			continue;
		live[e] = 0;
		memset(u + e * n, 0, n * sizeof(*u));
	}
}

int sb_lime_causal(const struct sb_lime_instance *in, double alpha, double *u, uint8_t *live)
{
	uint32_t n = in->nthreads;
	uint8_t *state;
	uint32_t *stack;
	int err = 0;

	for (size_t e = 0; e < in->nevents; e++)
		live[e] = sb_lime_unit(in->events[e].counts, n, u + e * n);
	drop_sampling_noise(in, alpha, u, live);
	state = calloc(in->nevents ? in->nevents : 1, 1);
	stack = malloc((in->nevents ? in->nevents : 1) * sizeof(*stack));
	if (!state || !stack) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t e = 0; e < in->nevents && !err; e++)
		err = settle(in, (uint32_t)e, u, live, state, stack);
out:
	free(state);
	free(stack);
	return err;
}
