// SPDX-License-Identifier: MIT
/*
 * LIME §3.5: forward-selection multiple regression of per-thread time on
 * cluster scores, partial F-test for each entering cluster, standardized
 * coefficients.
 *
 * Everything arrives as unit vectors (centered, norm 1): time y and the
 * candidates x_c (a cluster's averaged Z-score, re-standardized).  The
 * coefficients of a regression of unit vectors on unit vectors are the
 * standardized betas (both sides scaled by the same sqrt(n - 1) give the
 * same fit), and no intercept is needed because everything is centered.
 *
 * Selection keeps an orthonormal basis Q of the entered columns and the
 * residual e = y - Q Q'y.  Entering c reduces the residual sum of squares
 * by (e.x_c)^2 / |x_c - Q Q'x_c|^2, and |x_c - Q Q'x_c|^2 = 1 - sum_q
 * (q.x_c)^2 is updated with one dot product per step, so a step costs
 * O(k n) for k candidates rather than a refit per candidate.
 */
#include "lime_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#define COLLINEAR 1e-8          /* |part of x_c outside Q|^2 below: redundant */
#define PERFECT 1e-12           /* residual SS (of 1) below: all explained */
#define TIE 1e-3                /* relative: equal reductions */
#define MIRROR 0.99             /* cosine below -MIRROR: mirror images */

struct fsel {
	const double *x, *y;
	size_t k;
	uint32_t n;
	uint32_t lost;          /* degrees of freedom taken by centring in groups */
	double *e;              /* residual, n */
	double *q;              /* entered basis, maxp x n */
	double *edot;           /* e . x_c */
	double *proj2;          /* sum over Q of (q . x_c)^2 */
	uint8_t *out;           /* entered, or dropped as collinear */
	size_t p;
};

/*
 * The candidate with the largest reduction.  A cluster and its mirror
 * image (the taken and not-taken edges of one branch: Z-score columns
 * pointing in opposite directions) explain the same variation, so between
 * the two the one that grows with time is taken, so that beta comes out
 * positive, whichever reduces a little more: an edge or two that joined
 * one side's cluster at r >= 0.9 moves its reduction, by ~1e-4 with
 * steady times and by more with noisy ones, and must not hand the choice
 * to the side that shrinks with time (a branch reported with beta -1).
 * Other candidates within TIE of each other are equal too.
 */
static bool mirrors(const struct fsel *s, size_t a, size_t b)
{
	const double *xa = s->x + a * s->n, *xb = s->x + b * s->n;
	double na = sb_lime_dot(xa, xa, s->n), nb = sb_lime_dot(xb, xb, s->n);

	return na > 0 && nb > 0 && sb_lime_dot(xa, xb, s->n) < -MIRROR * sqrt(na * nb);
}

static long pick(const struct fsel *s, double *red)
{
	long best = -1;

	*red = 0;
	for (size_t c = 0; c < s->k; c++) {
		double w2 = 1 - s->proj2[c], r;
		bool grows;

		if (s->out[c] || w2 < COLLINEAR)
			continue;
		r = s->edot[c] * s->edot[c] / w2;
		grows = s->edot[c] > 0 && (best < 0 || s->edot[best] <= 0);
		if (best >= 0 && mirrors(s, c, (size_t)best)) {
			if (grows) {
				best = (long)c;
				*red = r;
			}
			continue;
		}
		if (best < 0 || r > *red * (1 + TIE) || (r >= *red * (1 - TIE) && grows)) {
			best = (long)c;
			*red = r;
		}
	}
	return best;
}

/* p-value of the partial F-test for entering a column that reduces the
 * residual SS from rss by red, as the p-th predictor. */
static double partial_p(double rss, double red, uint32_t n, uint32_t lost, size_t p)
{
	double df2 = (double)n - (double)lost - (double)p - 1, rest = rss - red;

	if (!(df2 >= 1))
		return 1;

	if (rest <= PERFECT)
		return 0;   /* the model explains time exactly */
	return gsl_cdf_fdist_Q(red / (rest / df2), 1, df2);
}

/* Orthogonalize x_c against Q (twice: one pass loses orthogonality when
 * x_c is nearly inside Q) and append it; false if nothing is left. */
static bool enter(struct fsel *s, size_t c)
{
	double *q = s->q + s->p * s->n, norm;
	const double *x = s->x + c * s->n;

	memcpy(q, x, s->n * sizeof(*q));
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < s->p; j++) {
			const double *b = s->q + j * s->n;
			double d = sb_lime_dot(q, b, s->n);

			for (uint32_t t = 0; t < s->n; t++)
				q[t] -= d * b[t];
		}
	norm = sqrt(sb_lime_dot(q, q, s->n));
	s->out[c] = 1;
	if (!(norm * norm >= COLLINEAR))
		return false;
	for (uint32_t t = 0; t < s->n; t++)
		q[t] /= norm;
	s->p++;
	return true;
}

static void update(struct fsel *s)
{
	const double *q = s->q + (s->p - 1) * s->n;
	double d = sb_lime_dot(s->e, q, s->n);

	for (uint32_t t = 0; t < s->n; t++)
		s->e[t] -= d * q[t];
	for (size_t c = 0; c < s->k; c++) {
		const double *x = s->x + c * s->n;
		double t;

		if (s->out[c])
			continue;
		t = sb_lime_dot(q, x, s->n);
		s->proj2[c] += t * t;
		s->edot[c] = sb_lime_dot(s->e, x, s->n);
	}
}

/* At most n - 2 columns (less those centring took), and no more than
 * there are: the basis is allocated for this many. */
static size_t max_predictors(uint32_t n, uint32_t lost, size_t k)
{
	size_t m = n >= lost + 3 ? (size_t)(n - lost - 2) : 0;

	return m < k ? m : k;
}

static size_t select_forward(struct fsel *s, double alpha, uint32_t *sel)
{
	size_t maxp = max_predictors(s->n, s->lost, s->k);

	for (size_t c = 0; c < s->k; c++)
		s->edot[c] = sb_lime_dot(s->y, s->x + c * s->n, s->n);
	memcpy(s->e, s->y, s->n * sizeof(*s->e));
	while (s->p < maxp) {
		double rss = sb_lime_dot(s->e, s->e, s->n), red;
		long c;

		if (rss <= PERFECT)
			break;
		c = pick(s, &red);
		if (c < 0 || !(partial_p(rss, red, s->n, s->lost, s->p + 1) < alpha))
			break;
		if (!enter(s, (size_t)c))
			continue;   /* rounding hid a collinear column */
		sel[s->p - 1] = (uint32_t)c;
		update(s);
	}
	return s->p;
}

long sb_lime_forward(const double *x, size_t k, const double *y, uint32_t n, double alpha,
		     uint32_t *sel, double *beta)
{
	return sb_lime_forward_groups(x, k, y, n, 1, alpha, sel, beta);
}

long sb_lime_forward_groups(const double *x, size_t k, const double *y, uint32_t n,
			    uint32_t ngroups, double alpha, uint32_t *sel, double *beta)
{
	struct fsel s = { .x = x, .y = y, .k = k, .n = n,
			  .lost = ngroups > 1 ? ngroups - 1 : 0 };
	const double **cols = NULL;
	long ret = -ENOMEM;

	if (n < 3 || !k)
		return 0;
	s.e = malloc(n * sizeof(*s.e));
	s.q = malloc((max_predictors(n, s.lost, k) + 1) * n * sizeof(*s.q));
	s.edot = malloc(k * sizeof(*s.edot));
	s.proj2 = calloc(k, sizeof(*s.proj2));
	s.out = calloc(k, 1);
	if (!s.e || !s.q || !s.edot || !s.proj2 || !s.out)
		goto out;
	select_forward(&s, alpha, sel);
	cols = malloc((s.p ? s.p : 1) * sizeof(*cols));
	if (!cols)
		goto out;
	for (size_t j = 0; j < s.p; j++)
		cols[j] = x + (size_t)sel[j] * n;
	ret = s.p ? sb_lime_beta(cols, s.p, y, n, beta) : 0;
	if (!ret)
		ret = (long)s.p;
out:
	free(cols);
	free(s.e);
	free(s.q);
	free(s.edot);
	free(s.proj2);
	free(s.out);
	return ret;
}

int sb_lime_beta(const double *const *cols, size_t p, const double *y, uint32_t n,
		 double *beta)
{
	gsl_matrix *X = NULL, *cov = NULL;
	gsl_vector *Y = NULL, *c = NULL;
	gsl_multifit_linear_workspace *w = NULL;
	double chisq;
	int ret = -ENOMEM;

	if (!p)
		return 0;
	if (p >= n)
		return -EDOM;   /* no residual degrees of freedom */
	gsl_set_error_handler_off();
	X = gsl_matrix_alloc(n, p);
	cov = gsl_matrix_alloc(p, p);
	Y = gsl_vector_alloc(n);
	c = gsl_vector_alloc(p);
	w = gsl_multifit_linear_alloc(n, p);
	if (!X || !cov || !Y || !c || !w)
		goto out;
	for (uint32_t t = 0; t < n; t++) {
		gsl_vector_set(Y, t, y[t]);
		for (size_t j = 0; j < p; j++)
			gsl_matrix_set(X, t, j, cols[j][t]);
	}
	ret = gsl_multifit_linear(X, Y, c, cov, &chisq, w) ? -EDOM : 0;
	for (size_t j = 0; !ret && j < p; j++) {
		beta[j] = gsl_vector_get(c, j);
		if (!isfinite(beta[j]))
			ret = -EDOM;
	}
out:
	gsl_multifit_linear_free(w);
	gsl_vector_free(c);
	gsl_vector_free(Y);
	gsl_matrix_free(cov);
	gsl_matrix_free(X);
	return ret;
}
