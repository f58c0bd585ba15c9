// SPDX-License-Identifier: MIT
/* The probes' outcomes by section (chip_probes.h). */
#include "chip_probes.h"

#include <errno.h>
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

/* (section, tid, index) triples sort by section then thread */
struct keyed {
	uint32_t section, tid;
	size_t i;
};

static int by_section_tid(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

void sb_chip_sections_free(struct sb_chip_sections *g)
{
	free(g->section);
	free(g->threads);
	free(g->first);
	free(g->order);
	memset(g, 0, sizeof(*g));
}

int sb_chip_sections_group(struct sb_chip_sections *g, const struct sb_chip_plog *l,
			   const struct sb_profile *p)
{
	size_t n, m = 0, k = 0;
	const struct sb_chip_pout *v = sb_chip_plog_kept(l, &n);
	uint32_t *sec = malloc((n ? n : 1) * sizeof(*sec));
	struct keyed *e = malloc((n ? n : 1) * sizeof(*e));

	memset(g, 0, sizeof(*g));
	if (!sec || !e || sb_chip_plog_sections(l, p, sec))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (sec[i] != UINT32_MAX)
			e[m++] = (struct keyed){ sec[i], v[i].tid, i };
	g->in = m;
	g->out = n - m;
	if (m)
		qsort(e, m, sizeof(*e), by_section_tid);
	for (size_t i = 0; i < m; i++)
		g->nsections += !i || e[i].section != e[i - 1].section;
	g->section = calloc(g->nsections + 1, sizeof(*g->section));
	g->threads = calloc(g->nsections + 1, sizeof(*g->threads));
	g->first = calloc(g->nsections + 1, sizeof(*g->first));
	g->order = calloc(m + 1, sizeof(*g->order));
	if (!g->section || !g->threads || !g->first || !g->order)
		goto nomem;
	for (size_t i = 0; i < m; i++) {
		if (i && e[i].section != e[i - 1].section)
			k++;
		if (!i || e[i].section != e[i - 1].section) {
			g->section[k] = e[i].section;
			g->first[k] = i;
		}
		g->threads[k] += !i || e[i].section != e[i - 1].section || e[i].tid != e[i - 1].tid;
		g->order[i] = e[i].i;
	}
	g->first[g->nsections] = m;
	free(sec);
	free(e);
	return 0;
nomem:
	free(sec);
	free(e);
	sb_chip_sections_free(g);
	return -ENOMEM;
}

void sb_chip_sections_meta(const struct sb_chip_sections *g, const struct sb_chip_plog *l,
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

int sb_chip_sections_weights(const struct sb_chip_sections *g, const struct sb_chip_plog *l,
			     const struct sb_profile *p, double *share)
{
	size_t n;
	const struct sb_chip_pout *v = sb_chip_plog_kept(l, &n);
	uint32_t *sec = malloc((n ? n : 1) * sizeof(*sec));
	double all = 0;

	if (!sec || sb_chip_plog_sections(l, p, sec)) {
		free(sec);
		return -ENOMEM;
	}
	for (size_t k = 0; k < g->nsections; k++)
		share[k] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = g->nsections;

		all += v[i].weight;
		while (lo < hi) {   /* g's sections ascend */
			size_t mid = lo + (hi - lo) / 2;

			if (g->section[mid] < sec[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (sec[i] != UINT32_MAX && lo < g->nsections && g->section[lo] == sec[i])
			share[lo] += v[i].weight;
	}
	for (size_t k = 0; k < g->nsections; k++)
		share[k] = all > 0 ? share[k] / all : 0;
	free(sec);
	return 0;
}
