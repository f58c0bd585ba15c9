// SPDX-License-Identifier: MIT
/*
 * LIME for one dynamic instance of a section (lime.h): validation and the
 * pipeline; the stages live in lime_vec.c (§3.1), lime_cluster.c (§3.2,
 * §5.6), lime_regress.c (§3.5) and lime_leader.c (§3.3-§3.4), the result
 * type in lime_result.c.  The driver calls the stages, never the other
 * way; §3.6 (lime_combine.c) is a second entry point beside this one.
 *
 * Events whose per-thread counts do not vary (a block's samples: not
 * beyond Poisson noise, lime_vec.c; a hardware event: not beyond what
 * its superior events explain) say nothing about why threads differ: they
 * join no cluster (cluster_of SB_LIME_NO_CLUSTER) and count r = 0 where
 * eq. 1 asks for their correlation.
 *
 * Negative correlation: the distance is d = 1 - r, so events that vary
 * against each other (a branch's taken and not-taken edges) are as far
 * apart as can be and never share a cluster: LIME clusters events that
 * vary together, and averaging Z-scores of opposed events would cancel
 * them.  The mirror clusters then compete in the regression, which
 * prefers the one that grows with time (lime_regress.c).
 */
#include "lime_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

void sb_lime_opts_default(struct sb_lime_opts *o)
{
	o->cluster_threshold = 0.9;
	o->bulk_threshold = 0.99;
	o->f_alpha = 0.05;
}

static bool finite_all(const double *x, uint32_t n)
{
	for (uint32_t t = 0; t < n; t++)
		if (!isfinite(x[t]))
			return false;
	return true;
}

static bool valid_event(const struct sb_cfg *cfg, const struct sb_lime_instance *in, size_t e)
{
	const struct sb_lime_event *x = &in->events[e];
	bool graph = cfg && cfg->out_start && cfg->in_start;

	if (!x->counts || !finite_all(x->counts, in->nthreads))
		return false;
	switch (x->kind) {
	case SB_LIME_EDGE:
		return graph && x->id < cfg->nedges;
	case SB_LIME_BLOCK:
	case SB_LIME_COUNT:
		return graph && x->id < cfg->nblocks;
	case SB_LIME_HW:
		return x->superior >= -1 && (int64_t)x->superior < (int64_t)in->nevents &&
		       (size_t)(int64_t)x->superior != e;
	default:
		return false;
	}
}

static int validate(const struct sb_cfg *cfg, const struct sb_lime_instance *in,
		    const struct sb_lime_opts *o)
{
	if (!(o->cluster_threshold > 0 && o->cluster_threshold <= 1) ||
	    !(o->bulk_threshold > 0 && o->bulk_threshold <= 1) ||
	    !(o->f_alpha > 0 && o->f_alpha < 1))
		return -EINVAL;
	if ((in->nthreads && !in->time) || (in->nevents && !in->events))
		return -EINVAL;
	if (in->nevents >= UINT32_MAX)
		return -EINVAL;     /* events are named by uint32_t */
	if (in->nthreads && !finite_all(in->time, in->nthreads))
		return -EINVAL;
	for (size_t e = 0; e < in->nevents; e++)
		if (!valid_event(cfg, in, e))
			return -EINVAL;
	if (in->nthreads && in->nevents > SIZE_MAX / sizeof(double) / in->nthreads)
		return -ENOMEM;
	return 0;
}

struct run {
	const struct sb_cfg *cfg;
	const struct sb_lime_instance *in;
	uint32_t n;
	double *u;              /* unit vectors; live rows compacted to the top */
	uint8_t *live;
	double *y;              /* time */
	double *ecorr;          /* per event: r with time */
	uint32_t *idx;          /* compacted row -> event */
	uint32_t *clus;         /* compacted row -> cluster */
	size_t m, nclus;
};

/* Drops the rows of events that do not vary; records r with time. */
static void compact(struct run *s)
{
	uint32_t n = s->n;

	s->m = 0;
	for (size_t e = 0; e < s->in->nevents; e++) {
		if (!s->live[e])
			continue;
		s->ecorr[e] = sb_lime_dot(s->u + e * n, s->y, n);
		if (s->m != e)
			memcpy(s->u + s->m * n, s->u + e * n, n * sizeof(*s->u));
		s->idx[s->m++] = (uint32_t)e;
	}
}

/*
 * Turns the rows of u into the cluster scores, in place: row c becomes
 * the normalized sum of cluster c's unit vectors (its averaged Z-score,
 * standardized).  Clusters are numbered by first member, so row c is
 * written only once every row <= c that it overwrites has been read.
 */
static void cluster_scores(struct run *s)
{
	uint32_t n = s->n;
	uint8_t *seen = s->live;        /* no longer needed: reused as flags */

	memset(seen, 0, s->nclus);
	for (size_t i = 0; i < s->m; i++) {
		double *x = s->u + (size_t)s->clus[i] * n;
		const double *v = s->u + i * n;

		if (!seen[s->clus[i]]) {
			seen[s->clus[i]] = 1;
			memmove(x, v, n * sizeof(*x));
		} else {
			for (uint32_t t = 0; t < n; t++)
				x[t] += v[t];
		}
	}
	for (size_t c = 0; c < s->nclus; c++) {
		double *x = s->u + c * n, norm = sqrt(sb_lime_dot(x, x, n));

		for (uint32_t t = 0; t < n; t++)
			x[t] = norm > 0 ? x[t] / norm : 0;
	}
}

/* Live events grouped by cluster (counting sort). */
static int members(const struct run *s, uint32_t **start, uint32_t **mem)
{
	*start = calloc(s->nclus + 2, sizeof(**start));
	*mem = malloc((s->m ? s->m : 1) * sizeof(**mem));
	if (!*start || !*mem)
		return -ENOMEM;
	for (size_t i = 0; i < s->m; i++)
		(*start)[s->clus[i] + 2]++;
	for (size_t c = 0; c < s->nclus; c++)
		(*start)[c + 2] += (*start)[c + 1];
	for (size_t i = 0; i < s->m; i++)
		(*mem)[(*start)[s->clus[i] + 1]++] = s->idx[i];
	return 0;
}

static int causes(const struct run *s, const uint32_t *sel, const double *beta, size_t p,
		  double alpha, struct sb_lime_result *r)
{
	struct sb_lime_causes out = { 0 };
	struct sb_lime_leaders *l = sb_lime_leaders_new(s->cfg, s->in, s->ecorr, r->cluster_of,
							alpha);
	uint32_t *start = NULL, *mem = NULL;
	int err = l ? members(s, &start, &mem) : -ENOMEM;

	for (size_t j = 0; j < p && !err; j++)
		err = sb_lime_cluster_causes(l, mem + start[sel[j]],
					     start[sel[j] + 1] - start[sel[j]], beta[j], &out);
	sb_lime_leaders_free(l);
	free(start);
	free(mem);
	if (err) {
		free(out.v);
		return err;
	}
	if (out.n)
		qsort(out.v, out.n, sizeof(*out.v), sb_lime_cause_cmp);
	r->causes = out.v;
	r->ncauses = out.n;
	return 0;
}

static int regress_and_lead(struct run *s, const struct sb_lime_opts *o,
			    struct sb_lime_result *r)
{
	uint32_t *sel = malloc((s->n - 2) * sizeof(*sel));
	double *beta = malloc((s->n - 2) * sizeof(*beta));
	long p = -ENOMEM;

	if (sel && beta) {
		cluster_scores(s);
		p = sb_lime_forward_groups(s->u, s->nclus, s->y, s->n, s->in->ngroups,
					   o->f_alpha, sel, beta);
	}
	if (p > 0)
		p = causes(s, sel, beta, (size_t)p, o->f_alpha, r);
	free(sel);
	free(beta);
	return p < 0 ? (int)p : 0;
}

static int run(struct run *s, const struct sb_lime_opts *o, struct sb_lime_result *r)
{
	struct sb_lime_cluster_params cp = {
		.threshold = o->cluster_threshold,
		.bulk = o->bulk_threshold,
	};
	size_t ne = s->in->nevents;
	bool time_varies;
	long nc;
	int err;

	s->u = malloc(ne * s->n * sizeof(*s->u));
	s->live = malloc(ne);
	s->y = malloc(s->n * sizeof(*s->y));
	s->ecorr = calloc(ne, sizeof(*s->ecorr));
	s->idx = malloc(ne * sizeof(*s->idx));
	s->clus = malloc(ne * sizeof(*s->clus));
	if (!s->u || !s->live || !s->y || !s->ecorr || !s->idx || !s->clus)
		return -ENOMEM;
	err = sb_lime_causal(s->in, o->f_alpha, s->u, s->live);
	if (err)
		return err;
	for (size_t e = 0; e < ne; e++)
		if (s->in->events[e].kind == SB_LIME_COUNT)
			s->live[e] = 0;   /* a superior only */
	time_varies = sb_lime_unit(s->in->time, s->n, s->y);
	compact(s);
	nc = sb_lime_cluster(s->u, s->m, s->n, &cp, s->clus, NULL);
	if (nc < 0)
		return (int)nc;
	s->nclus = (size_t)nc;
	r->nclusters = s->nclus;
	for (size_t i = 0; i < s->m; i++)
		r->cluster_of[s->idx[i]] = s->clus[i];
	/* Constant time: no imbalance to explain. */
	return time_varies && nc ? regress_and_lead(s, o, r) : 0;
}

int sb_lime_analyze(const struct sb_cfg *cfg, const struct sb_lime_instance *in,
		    const struct sb_lime_opts *o, struct sb_lime_result **out)
{
	struct sb_lime_opts def;
	struct sb_lime_result *r;
	struct run s = { .cfg = cfg, .in = in };
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!o) {
		sb_lime_opts_default(&def);
		o = &def;
	}
	if (!in)
		return -EINVAL;
	err = validate(cfg, in, o);
	if (err)
		return err;
	gsl_set_error_handler_off();
	r = sb_lime_result_new(in->nevents);
	if (!r)
		return -ENOMEM;
	/* Fewer than 3 threads leave no degrees of freedom for a test. */
	if (in->nthreads >= 3 && in->nevents) {
		s.n = in->nthreads;
		err = run(&s, o, r);
	}
	free(s.u);
	free(s.live);
	free(s.y);
	free(s.ecorr);
	free(s.idx);
	free(s.clus);
	if (err) {
		sb_lime_result_free(r);
		return err;
	}
	*out = r;
	return 0;
}
