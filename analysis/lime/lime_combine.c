// SPDX-License-Identifier: MIT
/*
 * LIME §3.6: the causes of the dynamic instances of one static section,
 * reported per static code location.  A cause is keyed by (kind, addr);
 * its combined score is the weighted mean of its per-instance scores with
 * each instance's imbalance as weight, an instance that lacks it counting
 * 0.  Within one instance a key can appear twice (a node leading two
 * clusters, Figure 4's A): the instance's best score for it is taken, so
 * one location is not blamed twice for one instance's imbalance.
 * leader_score and beta are the weighted means over the instances that
 * have the cause (informational); event is that of the instance that
 * contributed most, meaningful only with that instance.
 */
#include "lime_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

struct entry {
	struct sb_lime_cause c;
	size_t inst;
};

static int by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->c.kind != y->c.kind)
		return x->c.kind < y->c.kind ? -1 : 1;
	if (x->c.addr != y->c.addr)
		return x->c.addr < y->c.addr ? -1 : 1;
	if (x->inst != y->inst)
		return x->inst < y->inst ? -1 : 1;
	return sb_lime_cause_cmp(&x->c, &y->c);     /* best score first */
}

/* Weights scaled to max 1 (huge weights cannot overflow the sum); all
 * zero falls back to equal weights rather than 0/0. */
static int weights_of(const double *weights, size_t n, double *w)
{
	double mx = 0;

	for (size_t i = 0; i < n; i++) {
		w[i] = weights ? weights[i] : 1;
		if (!(w[i] >= 0) || !isfinite(w[i]))
			return -EINVAL;
		mx = fmax(mx, w[i]);
	}
	for (size_t i = 0; i < n; i++)
		w[i] = mx > 0 ? w[i] / mx : 1;
	return 0;
}

/* Combines the entries [lo, hi) of one key into one cause. */
static struct sb_lime_cause fold(const struct entry *e, size_t lo, size_t hi, const double *w,
				 double wsum)
{
	struct sb_lime_cause c = e[lo].c;
	double score = 0, lead = 0, beta = 0, wp = 0, best = -INFINITY;
	size_t np = 0;

	for (size_t k = lo; k < hi; k++) {
		double wi = w[e[k].inst];

		if (k > lo && e[k].inst == e[k - 1].inst)
			continue;       /* a worse duplicate within one instance */
		score += wi * e[k].c.score;
		lead += wi * e[k].c.leader_score;
		beta += wi * e[k].c.beta;
		wp += wi;
		np++;
		if (wi * e[k].c.score > best) {
			best = wi * e[k].c.score;
			c.event = e[k].c.event;
		}
	}
	if (!(wp > 0)) {
		/* Present only where the weight is 0: plain means. */
		lead = beta = 0;
		for (size_t k = lo; k < hi; k++)
			if (k == lo || e[k].inst != e[k - 1].inst) {
				lead += e[k].c.leader_score;
				beta += e[k].c.beta;
			}
		wp = (double)np;
	}
	c.score = score / wsum;
	c.leader_score = lead / wp;
	c.beta = beta / wp;
	return c;
}

static int gather(const struct sb_lime_result *const *res, size_t n, struct entry **out,
		  size_t *total)
{
	size_t t = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!res[i] || (res[i]->ncauses && !res[i]->causes))
			return -EINVAL;
		t += res[i]->ncauses;
	}
	*out = malloc((t ? t : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < res[i]->ncauses; j++)
			(*out)[k++] = (struct entry){ .c = res[i]->causes[j], .inst = i };
	*total = t;
	return 0;
}

int sb_lime_combine(const struct sb_lime_result *const *res, const double *weights,
		    size_t n, struct sb_lime_result **out)
{
	struct sb_lime_result *r;
	struct entry *e = NULL;
	double *w, wsum = 0;
	size_t total = 0;
	int err;

	if (!out || (n && !res))
		return -EINVAL;
	*out = NULL;
	w = malloc((n ? n : 1) * sizeof(*w));
	r = calloc(1, sizeof(*r));
	err = !w || !r ? -ENOMEM : weights_of(weights, n, w);
	if (!err)
		err = gather(res, n, &e, &total);
	if (!err && !(r->causes = malloc((total ? total : 1) * sizeof(*r->causes))))
		err = -ENOMEM;
	if (err) {
		free(w);
		free(e);
		sb_lime_result_free(r);
		return err;
	}
	for (size_t i = 0; i < n; i++)
		wsum += w[i];
	if (total)
		qsort(e, total, sizeof(*e), by_key);
	for (size_t lo = 0, hi; lo < total; lo = hi) {
		for (hi = lo + 1; hi < total && e[hi].c.kind == e[lo].c.kind &&
				  e[hi].c.addr == e[lo].c.addr; hi++)
			;
		r->causes[r->ncauses++] = fold(e, lo, hi, w, wsum);
	}
	if (r->ncauses)
		qsort(r->causes, r->ncauses, sizeof(*r->causes), sb_lime_cause_cmp);
	free(w);
	free(e);
	*out = r;
	return 0;
}
