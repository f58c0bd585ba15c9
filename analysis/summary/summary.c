// SPDX-License-Identifier: MIT
#include "summary.h"

#include <stdlib.h>

double sb_summary_imbalance_pct(const struct sb_section *s)
{
	return s->capacity_ns ? 100.0 * (double)s->lost_ns / (double)s->capacity_ns : 0.0;
}

static const struct sb_profile *rank_profile;

static int by_lost(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t lx = rank_profile->sections[x].lost_ns, ly = rank_profile->sections[y].lost_ns;

	if (lx != ly)
		return lx < ly ? 1 : -1;
	return (x > y) - (x < y);
}

size_t *sb_summary_sections_ranked(const struct sb_profile *p)
{
	size_t *order;

	if (!p->nsections)
		return NULL;
	order = malloc(p->nsections * sizeof(*order));
	if (!order)
		return NULL;
	for (size_t i = 0; i < p->nsections; i++)
		order[i] = i;
	rank_profile = p;
	qsort(order, p->nsections, sizeof(*order), by_lost);
	return order;
}

static int by_wait(const void *a, const void *b)
{
	const struct sb_summary_prim_total *x = a, *y = b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return (x->prim > y->prim) - (x->prim < y->prim);
}

size_t sb_summary_waits_by_prim(const struct sb_profile *p, struct sb_summary_prim_total *out)
{
	struct sb_summary_prim_total all[SB_PRIM_MAX] = { { 0, 0, 0 } };
	size_t n = 0;

	for (size_t i = 0; i < p->nwaits; i++) {
		const struct sb_wait *w = &p->waits[i];

		if (w->prim >= SB_PRIM_MAX)
			continue;
		all[w->prim].count += w->count;
		all[w->prim].wait_ns += w->wait_ns;
	}
	for (uint32_t k = 0; k < SB_PRIM_MAX; k++) {
		if (!all[k].count)
			continue;
		all[k].prim = k;
		out[n++] = all[k];
	}
	qsort(out, n, sizeof(*out), by_wait);
	return n;
}

int sb_summary_prim_is_lock(uint32_t prim)
{
	switch (prim) {
	case SB_PRIM_MUTEX:
	case SB_PRIM_COND:
	case SB_PRIM_SEM:
	case SB_PRIM_SPIN:
	case SB_PRIM_RWLOCK:
	case SB_PRIM_OMP_CRITICAL:
	case SB_PRIM_OMP_LOCK:
		return 1;
	default:
		return 0;
	}
}

static int lock_by_wait(const void *a, const void *b)
{
	const struct sb_summary_lock_total *x = a, *y = b;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	if (x->loc != y->loc)
		return (x->loc > y->loc) - (x->loc < y->loc);
	return (x->prim > y->prim) - (x->prim < y->prim);
}

long sb_summary_locks_ranked(const struct sb_profile *p, struct sb_summary_lock_total **out)
{
	struct sb_summary_lock_total *t = malloc((p->nwaits ? p->nwaits : 1) * sizeof(*t));
	size_t n = 0;

	*out = NULL;
	if (!t)
		return -1;
	for (size_t i = 0; i < p->nwaits; i++) {
		const struct sb_wait *w = &p->waits[i];
		size_t k;

		if (!sb_summary_prim_is_lock(w->prim))
			continue;
		for (k = 0; k < n; k++)
			if (t[k].loc == w->loc && t[k].prim == w->prim)
				break;
		if (k == n) {
			t[n].loc = w->loc;
			t[n].prim = w->prim;
			t[n].contentions = 0;
			t[n].wait_ns = 0;
			n++;
		}
		t[k].contentions += w->count;
		t[k].wait_ns += w->wait_ns;
	}
	qsort(t, n, sizeof(*t), lock_by_wait);
	*out = t;
	return (long)n;
}
