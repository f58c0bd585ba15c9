// SPDX-License-Identifier: MIT
/* The probes' outcomes by section (chip_probes.h). */
#include "chip_probes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/rng.h"

struct sb_chip_plog {
	size_t cap, n, alloc;
	uint64_t seen, rng;
	struct sb_chip_pout *v;
};

struct sb_chip_plog *sb_chip_plog_alloc(size_t cap, uint64_t seed)
{
	struct sb_chip_plog *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->cap = cap ? cap : SB_CHIP_PLOG_CAP;
	l->rng = seed;
	return l;
}

void sb_chip_plog_free(struct sb_chip_plog *l)
{
	if (l)
		free(l->v);
	free(l);
}

int sb_chip_plog_add(struct sb_chip_plog *l, const struct sb_chip_pout *o)
{
	uint64_t j;

	l->seen++;
	if (l->n < l->cap) {
		if (l->n == l->alloc) {
			size_t a = l->alloc ? 2 * l->alloc : 256;
			struct sb_chip_pout *v;

			if (a > l->cap)
				a = l->cap;
			if (!(v = realloc(l->v, a * sizeof(*v))))
				return -ENOMEM;
			l->v = v;
			l->alloc = a;
		}
		l->v[l->n++] = *o;
		return 0;
	}
	/* algorithm R: the seen-th outcome replaces a kept one with
	 * probability cap / seen */
	j = sb_rng_next(&l->rng) % l->seen;
	if (j < l->cap)
		l->v[j] = *o;
	return 0;
}

const struct sb_chip_pout *sb_chip_plog_kept(const struct sb_chip_plog *l, size_t *n)
{
	*n = l ? l->n : 0;
	return l ? l->v : NULL;
}

uint64_t sb_chip_plog_seen(const struct sb_chip_plog *l)
{
	return l ? l->seen : 0;
}

int sb_chip_plog_sections(const struct sb_chip_plog *l, const struct sb_profile *p,
			  uint32_t *section_of)
{
	struct sb_instance_index *x;
	size_t n;
	const struct sb_chip_pout *v = sb_chip_plog_kept(l, &n);

	for (size_t i = 0; i < n; i++)
		section_of[i] = UINT32_MAX;
	if (!n || !p->ninstances)
		return 0;
	if (!(x = sb_instance_index_alloc(p)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int32_t a = sb_instance_index_find(x, v[i].tid, v[i].start);

		if (a >= 0 && v[i].end >= v[i].start &&
		    sb_instance_index_find(x, v[i].tid, v[i].end) == a &&
		    (size_t)a < p->ninstances && p->instances[a].section < p->nsections)
			section_of[i] = p->instances[a].section;
	}
	sb_instance_index_free(x);
	return 0;
}

/* An outcome's membership of a region: sorted by region, then thread */
struct keyed {
	uint32_t kind, id, tid;
	size_t i;
};

static int by_region_tid(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int by_span(const void *a, const void *b)
{
	const struct sb_chip_span *x = a, *y = b;

	if (x->region != y->region)
		return x->region < y->region ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Whether [start, end] of tid lies in one of s[0..n)'s calls (one
 * region's, sorted): a function's outermost calls in a thread do not
 * overlap, so only the last one starting by `start` can hold it. */
static bool inside(const struct sb_chip_span *s, size_t n, uint32_t tid, uint64_t start,
		   uint64_t end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {   /* the first span after (tid, start) */
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].tid < tid || (s[mid].tid == tid && s[mid].start <= start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && s[lo - 1].tid == tid && s[lo - 1].end >= end && end >= start;
}

/* A membership: counted (pass 0) or stored (pass 1). */
static void add(struct keyed *e, size_t *m, int pass, size_t *cap, uint32_t kind, uint32_t id,
		uint32_t tid, size_t i)
{
	if (pass)
		e[(*m)++] = (struct keyed){ kind, id, tid, i };
	else
		(*cap)++;
}

/*
 * Every region membership of l's kept outcomes, sorted (*e, *m); *in:
 * the outcomes in a section.  -ENOMEM.
 */
static int memberships(const struct sb_chip_plog *l, const struct sb_profile *p,
		       const struct sb_chip_span *spans, size_t nspans, struct keyed **e,
		       size_t *m, uint64_t *in)
{
	size_t n, cap;
	const struct sb_chip_pout *v = sb_chip_plog_kept(l, &n);
	uint32_t *sec = malloc((n ? n : 1) * sizeof(*sec));
	struct sb_chip_span *s = malloc((nspans ? nspans : 1) * sizeof(*s));

	*e = NULL;
	*m = *in = 0;
	if (!sec || !s || sb_chip_plog_sections(l, p, sec))
		goto nomem;
	if (nspans) {
		memcpy(s, spans, nspans * sizeof(*s));
		qsort(s, nspans, sizeof(*s), by_span);
	}
	/* counted first: outcomes times functions would be too many */
	cap = 0;
	for (int pass = 0; pass < 2; pass++) {
		if (pass && !(*e = malloc((cap ? cap : 1) * sizeof(**e))))
			goto nomem;
		for (size_t i = 0; i < n; i++)
			if (sec[i] != UINT32_MAX)
				add(*e, m, pass, &cap, SB_CHIP_KIND_SECTION, sec[i], v[i].tid, i);
		*in = pass ? *m : cap;
		for (size_t a = 0, b; a < nspans; a = b) {   /* region by region */
			for (b = a + 1; b < nspans && s[b].region == s[a].region; b++)
				;
			for (size_t i = 0; i < n; i++)
				if (inside(s + a, b - a, v[i].tid, v[i].start, v[i].end))
					add(*e, m, pass, &cap, SB_CHIP_KIND_FUNCTION, s[a].region,
					    v[i].tid, i);
		}
	}
	if (*m)
		qsort(*e, *m, sizeof(**e), by_region_tid);
	free(sec);
	free(s);
	return 0;
nomem:
	free(sec);
	free(s);
	free(*e);
	*e = NULL;
	return -ENOMEM;
}

void sb_chip_groups_free(struct sb_chip_groups *g)
{
	free(g->kind);
	free(g->id);
	free(g->threads);
	free(g->first);
	free(g->order);
	memset(g, 0, sizeof(*g));
}

static bool same_region(const struct keyed *x, const struct keyed *y)
{
	return x->kind == y->kind && x->id == y->id;
}

int sb_chip_groups_build(struct sb_chip_groups *g, const struct sb_chip_plog *l,
			 const struct sb_profile *p, const struct sb_chip_span *spans, size_t n)
{
	struct keyed *e;
	size_t m, k = 0, kept;

	memset(g, 0, sizeof(*g));
	sb_chip_plog_kept(l, &kept);
	if (memberships(l, p, spans, n, &e, &m, &g->in))
		return -ENOMEM;
	g->out = kept - g->in;
	for (size_t i = 0; i < m; i++)
		g->n += !i || !same_region(&e[i], &e[i - 1]);
	g->kind = calloc(g->n + 1, sizeof(*g->kind));
	g->id = calloc(g->n + 1, sizeof(*g->id));
	g->threads = calloc(g->n + 1, sizeof(*g->threads));
	g->first = calloc(g->n + 1, sizeof(*g->first));
	g->order = calloc(m + 1, sizeof(*g->order));
	if (!g->kind || !g->id || !g->threads || !g->first || !g->order) {
		free(e);
		sb_chip_groups_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m; i++) {
		bool next = !i || !same_region(&e[i], &e[i - 1]);

		if (i && next)
			k++;
		if (next) {
			g->kind[k] = e[i].kind;
			g->id[k] = e[i].id;
			g->first[k] = i;
		}
		g->threads[k] += next || e[i].tid != e[i - 1].tid;
		g->order[i] = e[i].i;
	}
	g->first[g->n] = m;
	free(e);
	return 0;
}

int sb_chip_groups_weights(const struct sb_chip_groups *g, const struct sb_chip_plog *l,
			   const struct sb_profile *p, const struct sb_chip_span *spans, size_t n,
			   double *share)
{
	size_t kept, m;
	const struct sb_chip_pout *v = sb_chip_plog_kept(l, &kept);
	struct keyed *e;
	uint64_t in;
	double all = 0;

	if (memberships(l, p, spans, n, &e, &m, &in))
		return -ENOMEM;
	for (size_t k = 0; k < g->n; k++)
		share[k] = 0;
	for (size_t i = 0; i < kept; i++)
		all += v[i].weight;
	for (size_t i = 0; i < m; i++) {
		size_t lo = 0, hi = g->n;

		while (lo < hi) {   /* g's groups ascend by (kind, id) */
			size_t mid = lo + (hi - lo) / 2;

			if (g->kind[mid] < e[i].kind ||
			    (g->kind[mid] == e[i].kind && g->id[mid] < e[i].id))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < g->n && g->kind[lo] == e[i].kind && g->id[lo] == e[i].id)
			share[lo] += v[e[i].i].weight;
	}
	for (size_t k = 0; k < g->n; k++)
		share[k] = all > 0 ? share[k] / all : 0;
	free(e);
	return 0;
}

void sb_chip_groups_meta(const struct sb_chip_groups *g, const struct sb_chip_plog *l,
			 const char *prefix, struct sb_profile *p)
{
	char key[64], v[64];
	size_t n;

	sb_chip_plog_kept(l, &n);
	snprintf(key, sizeof(key), "%s_section_probes", prefix);
	sb_profile_meta_set_u64(p, key, g->in);
	snprintf(key, sizeof(key), "%s_section_probes_none", prefix);
	sb_profile_meta_set_u64(p, key, g->out);
	snprintf(key, sizeof(key), "%s_probes_kept", prefix);
	snprintf(v, sizeof(v), "%zu/%llu", n, (unsigned long long)sb_chip_plog_seen(l));
	sb_profile_meta_set(p, key, v);
}

void sb_chip_groups_row(const struct sb_chip_groups *g, size_t k, struct sb_chip_row *row)
{
	row->kind = g->kind[k];
	row->region = 0;
	row->section = g->id[k];
	if (g->kind[k] == SB_CHIP_KIND_FUNCTION) {
		row->region = g->id[k];
		/* out of every range an older reader knows, as an exact
		 * function row's: it refuses the row */
		row->section = UINT32_MAX;
	}
}
