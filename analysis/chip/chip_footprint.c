// SPDX-License-Identifier: MIT
/* Footprint probes to a footprint curve and DRAM demand (chip_footprint.h). */
#include "chip_footprint.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const uint64_t sb_chip_fp_window_ns[SB_CHIP_FP_WINDOWS] = {
	100000, 200000, 500000, 1000000, 2000000, 5000000, 10000000, 20000000,
};

/*
 * Slopes made nonincreasing and nonnegative: pool adjacent violators,
 * each pool's slope its total rise over its total length (so a pool
 * keeps the curve's height at its ends).
 */
static void concave(const double *dt, double *slope, unsigned n)
{
	double rise[SB_CHIP_FP_WINDOWS], len[SB_CHIP_FP_WINDOWS];
	unsigned start[SB_CHIP_FP_WINDOWS + 1], np = 0;

	for (unsigned i = 0; i < n; i++) {
		rise[np] = slope[i] * dt[i];
		len[np] = dt[i];
		start[np++] = i;
		while (np > 1 && rise[np - 1] / len[np - 1] > rise[np - 2] / len[np - 2]) {
			rise[np - 2] += rise[np - 1];
			len[np - 2] += len[np - 1];
			np--;
		}
	}
	start[np] = n;
	for (unsigned k = 0; k < np; k++) {
		double s = rise[k] / len[k];

		for (unsigned i = start[k]; i < start[k + 1]; i++)
			slope[i] = s > 0 ? s : 0;
	}
}

void sb_chip_fp_ascend(const uint64_t *probes, const uint64_t *touched, const uint64_t *len_ns,
		       const uint64_t *watched, struct sb_chip_fp *f)
{
	unsigned n = 0;

	memset(f->window_ns, 0, sizeof(f->window_ns));
	memset(f->probes, 0, sizeof(f->probes));
	memset(f->touched, 0, sizeof(f->touched));
	for (unsigned w = 0; w < SB_CHIP_FP_WINDOWS; w++) {
		if (!probes[w])
			continue;
		f->window_ns[n] = watched[w] ? len_ns[w] / watched[w] : sb_chip_fp_window_ns[w];
		f->probes[n] = probes[w];
		f->touched[n++] = touched[w] <= probes[w] ? touched[w] : probes[w];
		/* a merge lowers the mean: it may fall below the one before */
		while (n > 1 && f->window_ns[n - 1] <= f->window_ns[n - 2]) {
			double a = (double)f->probes[n - 2], b = (double)f->probes[n - 1];

			f->window_ns[n - 2] = (uint64_t)(((double)f->window_ns[n - 2] * a +
							  (double)f->window_ns[n - 1] * b) / (a + b));
			f->probes[n - 2] += f->probes[n - 1];
			f->touched[n - 2] += f->touched[n - 1];
			f->window_ns[n - 1] = f->probes[n - 1] = f->touched[n - 1] = 0;
			n--;
		}
	}
}

int sb_chip_fp_curve(const struct sb_chip_fp *f, struct sb_chip_fp_curve *c)
{
	double dt[SB_CHIP_FP_WINDOWS], slope[SB_CHIP_FP_WINDOWS], prev_t = 0, prev_f = 0;

	memset(c, 0, sizeof(*c));
	if (!(f->universe > 0))
		return -EINVAL;
	for (unsigned w = 0; w < SB_CHIP_FP_WINDOWS; w++) {
		double p;

		if (!f->probes[w] || f->touched[w] > f->probes[w] || !f->window_ns[w] ||
		    (c->n && (double)f->window_ns[w] / 1e9 <= c->t[c->n - 1]))
			continue;
		p = (double)f->touched[w] / (double)f->probes[w];
		c->t[c->n] = (double)f->window_ns[w] / 1e9;
		c->bytes[c->n] = f->universe * p;
		c->err[c->n] = f->universe * sqrt(p * (1 - p) / (double)f->probes[w]);
		c->probes += f->probes[w];
		c->n++;
	}
	if (!c->n)
		return -EINVAL;
	for (unsigned i = 0; i < c->n; i++) {
		dt[i] = c->t[i] - prev_t;
		slope[i] = (c->bytes[i] - prev_f) / dt[i];
		prev_t = c->t[i];
		prev_f = c->bytes[i];
	}
	concave(dt, slope, c->n);
	prev_f = 0;
	for (unsigned i = 0; i < c->n; i++)
		c->fit[i] = prev_f += slope[i] * dt[i];
	return 0;
}

/*
 * The demand: F' where F = C.  F between windows is a monotone cubic
 * (Fritsch-Butland) in u = ln t: windows are log-spaced, and F over
 * log time is a smooth rise, where a chord would put t_C late and its
 * slope low (-25% at a quarter of the data left, on the analytic test).
 * F' = dF/du / t.  Below the first window: the chord from (0, 0).
 */
static void pchip_slopes(const double *u, const double *y, unsigned n, double *d)
{
	for (unsigned k = 0; k < n; k++) {
		double h0 = k ? u[k] - u[k - 1] : 0, h1 = k + 1 < n ? u[k + 1] - u[k] : 0;
		double s0 = k ? (y[k] - y[k - 1]) / h0 : 0, s1 = k + 1 < n ? (y[k + 1] - y[k]) / h1 : 0;

		if (!k)
			d[k] = s1;
		else if (k + 1 == n)
			d[k] = s0;
		else if (s0 * s1 <= 0)
			d[k] = 0;
		else {
			double w1 = 2 * h1 + h0, w2 = h1 + 2 * h0;

			d[k] = (w1 + w2) / (w1 / s0 + w2 / s1);
		}
	}
}

/* The Hermite cubic on [u0, u0 + h] at x in [0, 1]: its value, and its
 * derivative in u. */
static double hermite(double y0, double y1, double d0, double d1, double h, double x,
		      double *dy)
{
	double x2 = x * x, x3 = x2 * x;

	*dy = ((6 * x2 - 6 * x) * y0 + (3 * x2 - 4 * x + 1) * h * d0 + (-6 * x2 + 6 * x) * y1 +
	       (3 * x2 - 2 * x) * h * d1) / h;
	return (2 * x3 - 3 * x2 + 1) * y0 + (x3 - 2 * x2 + x) * h * d0 + (-2 * x3 + 3 * x2) * y1 +
	       (x3 - x2) * h * d1;
}

double sb_chip_fp_demand(const struct sb_chip_fp_curve *c, double bytes, bool *resolved)
{
	double u[SB_CHIP_FP_WINDOWS], d[SB_CHIP_FP_WINDOWS], lo = 0, hi = 1, dy = 0;
	unsigned k;

	*resolved = false;
	if (!c->n)
		return 0;
	if (bytes > c->fit[c->n - 1] || !(c->fit[c->n - 1] > 0)) {
		/* beyond the footprint the windows show: at most the last
		 * chord's slope */
		unsigned i = c->n - 1;

		return i ? (c->fit[i] - c->fit[i - 1]) / (c->t[i] - c->t[i - 1]) : c->fit[0] / c->t[0];
	}
	*resolved = true;
	if (bytes <= c->fit[0] || c->n == 1)
		return c->fit[0] / c->t[0];
	for (k = 0; k < c->n; k++)
		u[k] = log(c->t[k]);
	pchip_slopes(u, c->fit, c->n, d);
	for (k = 1; k < c->n && c->fit[k] < bytes; k++)
		;
	k--;   /* fit[k] < bytes <= fit[k + 1] */
	for (int it = 0; it < 60; it++) {   /* monotone on the interval */
		double x = (lo + hi) / 2;

		if (hermite(c->fit[k], c->fit[k + 1], d[k], d[k + 1], u[k + 1] - u[k], x, &dy) < bytes)
			lo = x;
		else
			hi = x;
	}
	hermite(c->fit[k], c->fit[k + 1], d[k], d[k + 1], u[k + 1] - u[k], (lo + hi) / 2, &dy);
	return dy > 0 ? dy / exp(u[k] + (lo + hi) / 2 * (u[k + 1] - u[k])) : 0;
}
