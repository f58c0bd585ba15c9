// SPDX-License-Identifier: MIT
/* Comparing two profiles (diff.h). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "summary/summary.h"
#include "diff.h"

struct sb_diff {
	const struct sb_profile *a, *b;
	double sec_a, sec_b;
	struct sb_diff_section *s;
	size_t ns;
	struct sb_diff_cause *c;
	size_t nc, capc;
	struct sb_diff_wait w[SB_PRIM_MAX];
	size_t nw;
};

static double seconds(const struct sb_profile *p)
{
	return (double)sb_profile_meta_get_u64(p, "duration_ns") / 1e9;
}

static void side(const struct sb_profile *p, long i, double sec, struct sb_diff_side *out)
{
	const struct sb_section *s = &p->sections[i];

	out->instances = s->ninstances;
	out->lost_ns = s->lost_ns;
	out->imbalance_pct = sb_summary_imbalance_pct(s);
	out->lost_per_s = sec > 0 ? (double)s->lost_ns / 1e9 / sec : 0;
}

static int by_change(const void *x, const void *y)
{
	const struct sb_diff_section *a = x, *b = y;
	int ga = a->a < 0 ? 1 : a->b < 0 ? 2 : 0, gb = b->a < 0 ? 1 : b->b < 0 ? 2 : 0;
	double da = fabs(a->sb.lost_per_s - a->sa.lost_per_s);
	double db = fabs(b->sb.lost_per_s - b->sa.lost_per_s);

	if (ga != gb)
		return ga - gb;
	if (da != db)
		return da < db ? 1 : -1;
	/* stable: B's order, then A's */
	return a->b != b->b ? (a->b < b->b ? -1 : 1) : (a->a < b->a ? -1 : a->a > b->a);
}

/* A cause of p and one of q at the same place in the code. */
static bool cause_same(const struct sb_profile *p, const struct sb_cause *x,
		       const struct sb_profile *q, const struct sb_cause *y)
{
	const struct sb_loc *l, *m;

	if (x->loc < 0 || y->loc < 0 || (size_t)x->loc >= p->nlocs || (size_t)y->loc >= q->nlocs)
		return x->loc < 0 && y->loc < 0 && x->addr == y->addr;
	l = &p->locs[x->loc];
	m = &q->locs[y->loc];
	return l->line == m->line && l->function && m->function &&
	       !strcmp(l->function, m->function) &&
	       !strcmp(sb_base_name(l->file), sb_base_name(m->file));
}

static bool leader(const struct sb_cause *c)
{
	return !c->same_cluster && !c->alternative_of;
}

/* Leading causes of section s in p's first `top`, not anywhere in q's
 * section t, into d as change. */
static int causes_new(struct sb_diff *d, size_t row, uint32_t change,
		      const struct sb_profile *p, const struct sb_causes *cp, long s,
		      const struct sb_profile *q, const struct sb_causes *cq, long t)
{
	size_t shown = 0;

	for (size_t i = 0; cp && i < cp->n; i++) {
		const struct sb_cause *x = &cp->c[i];
		bool found = false;

		if ((long)x->section != s || !leader(x))
			continue;
		if (shown++ >= SB_DIFF_TOP)
			break;
		for (size_t j = 0; cq && j < cq->n && !found; j++)
			found = (long)cq->c[j].section == t && cause_same(p, x, q, &cq->c[j]);
		if (found)
			continue;
		if (d->nc == d->capc) {
			size_t cap = d->capc ? d->capc * 2 : 16;
			struct sb_diff_cause *a = realloc(d->c, cap * sizeof(*a));

			if (!a)
				return -1;
			d->c = a;
			d->capc = cap;
		}
		d->c[d->nc++] = (struct sb_diff_cause){ row, change, x };
	}
	return 0;
}

static void waits(struct sb_diff *d)
{
	struct sb_summary_prim_total t[SB_PRIM_MAX];
	size_t n;

	for (int side_b = 0; side_b < 2; side_b++) {
		n = sb_summary_waits_by_prim(side_b ? d->b : d->a, t);
		for (size_t i = 0; i < n; i++) {
			size_t k = 0;

			while (k < d->nw && d->w[k].prim != t[i].prim)
				k++;
			if (k == d->nw)
				d->w[d->nw++] = (struct sb_diff_wait){ .prim = t[i].prim };
			if (side_b) {
				d->w[k].count_b = t[i].count;
				d->w[k].wait_b = t[i].wait_ns;
			} else {
				d->w[k].count_a = t[i].count;
				d->w[k].wait_a = t[i].wait_ns;
			}
		}
	}
	/* by wait in B, descending (insertion: at most SB_PRIM_MAX) */
	for (size_t i = 1; i < d->nw; i++)
		for (size_t j = i; j > 0 && d->w[j].wait_b > d->w[j - 1].wait_b; j--) {
			struct sb_diff_wait x = d->w[j];

			d->w[j] = d->w[j - 1];
			d->w[j - 1] = x;
		}
}

struct sb_diff *sb_diff_alloc(const struct sb_profile *a, const struct sb_causes *ca,
			      const struct sb_profile *b, const struct sb_causes *cb)
{
	struct sb_diff *d = calloc(1, sizeof(*d));
	bool *seen = calloc(a->nsections + 1, sizeof(*seen));

	if (!d || !seen ||
	    !(d->s = calloc(a->nsections + b->nsections + 1, sizeof(*d->s))))
		goto fail;
	d->a = a;
	d->b = b;
	d->sec_a = seconds(a);
	d->sec_b = seconds(b);
	for (size_t j = 0; j < b->nsections; j++) {
		struct sb_diff_section *r = &d->s[d->ns++];
		long i = sb_section_match(b, j, a);

		*r = (struct sb_diff_section){ .a = i >= 0 && !seen[i] ? i : -1, .b = (long)j };
		side(b, r->b, d->sec_b, &r->sb);
		if (r->a >= 0) {
			seen[r->a] = true;
			side(a, r->a, d->sec_a, &r->sa);
		}
	}
	for (size_t i = 0; i < a->nsections; i++)
		if (!seen[i]) {
			struct sb_diff_section *r = &d->s[d->ns++];

			*r = (struct sb_diff_section){ .a = (long)i, .b = -1 };
			side(a, r->a, d->sec_a, &r->sa);
		}
	qsort(d->s, d->ns, sizeof(*d->s), by_change);
	for (size_t k = 0; k < d->ns; k++) {
		const struct sb_diff_section *r = &d->s[k];

		if (r->a < 0 || r->b < 0)
			continue;
		if (causes_new(d, k, SB_DIFF_APPEARED, b, cb, r->b, a, ca, r->a) ||
		    causes_new(d, k, SB_DIFF_VANISHED, a, ca, r->a, b, cb, r->b))
			goto fail;
	}
	waits(d);
	free(seen);
	return d;
fail:
	free(seen);
	sb_diff_free(d);
	return NULL;
}

void sb_diff_free(struct sb_diff *d)
{
	if (!d)
		return;
	free(d->s);
	free(d->c);
	free(d);
}

size_t sb_diff_nsections(const struct sb_diff *d)
{
	return d->ns;
}

const struct sb_diff_section *sb_diff_section(const struct sb_diff *d, size_t i)
{
	return i < d->ns ? &d->s[i] : NULL;
}

size_t sb_diff_ncauses(const struct sb_diff *d)
{
	return d->nc;
}

const struct sb_diff_cause *sb_diff_cause(const struct sb_diff *d, size_t i)
{
	return i < d->nc ? &d->c[i] : NULL;
}

size_t sb_diff_nwaits(const struct sb_diff *d)
{
	return d->nw;
}

const struct sb_diff_wait *sb_diff_wait(const struct sb_diff *d, size_t i)
{
	return i < d->nw ? &d->w[i] : NULL;
}

double sb_diff_seconds(const struct sb_diff *d, int side_b)
{
	return side_b ? d->sec_b : d->sec_a;
}
