// SPDX-License-Identifier: MIT
/*
 * Which stored instance a thread was in at a time (profile.h,
 * sb_instance_index_*): every (thread, instance) span sorted by thread and
 * start, with the latest end so far per thread, so a lookup is a binary
 * search for the last span starting at or before the time and a short
 * walk back that stops once no earlier span can still hold it: long
 * recordings with many instances stay cheap.  Nested instances (a section
 * inside another) give the latest-starting one.
 */
#include "profile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct span {
	uint32_t tid;
	uint64_t start, end;
	uint64_t max_end;   /* max end over this tid's spans up to here */
	int32_t instance;
};

struct sb_instance_index {
	size_t n;
	struct span s[];
};

static int by_tid_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

struct sb_instance_index *sb_instance_index_alloc(const struct sb_profile *p)
{
	struct sb_instance_index *x;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < p->ninstances; i++)
		n += p->instances[i].nthreads;
	if (!(x = malloc(sizeof(*x) + n * sizeof(x->s[0]))))
		return NULL;
	x->n = n;
	for (size_t i = 0; i < p->ninstances; i++)
		for (uint32_t t = 0; t < p->instances[i].nthreads; t++)
			x->s[k++] = (struct span){ .tid = p->instances[i].per_thread[t].tid,
						   .start = p->instances[i].start_ns,
						   .end = p->instances[i].end_ns,
						   .instance = (int32_t)i };
	if (n)
		qsort(x->s, n, sizeof(x->s[0]), by_tid_start);
	for (size_t i = 0; i < n; i++)
		x->s[i].max_end = i && x->s[i - 1].tid == x->s[i].tid &&
				  x->s[i - 1].max_end > x->s[i].end ? x->s[i - 1].max_end :
								       x->s[i].end;
	return x;
}

void sb_instance_index_free(struct sb_instance_index *x)
{
	free(x);
}

/* The last span of tid that starts at or before ts, or -1. */
static long last_before(const struct span *s, size_t n, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {       /* first span > (tid, ts) */
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].tid < tid || (s[mid].tid == tid && s[mid].start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && s[lo - 1].tid == tid ? (long)lo - 1 : -1;
}

int32_t sb_instance_index_find(const struct sb_instance_index *x, uint32_t tid, uint64_t ts)
{
	for (long j = last_before(x->s, x->n, tid, ts);
	     j >= 0 && x->s[j].tid == tid && x->s[j].max_end >= ts; j--)
		if (x->s[j].end >= ts)
			return x->s[j].instance;
	return -1;
}

const char *sb_base_name(const char *f)
{
	const char *b = f ? strrchr(f, '/') : NULL;

	return b ? b + 1 : f ? f : "";
}

static bool same_place(const struct sb_profile *a, const struct sb_section *x,
		       const struct sb_profile *b, const struct sb_section *y)
{
	const struct sb_loc *l = x->loc < a->nlocs ? &a->locs[x->loc] : NULL;
	const struct sb_loc *m = y->loc < b->nlocs ? &b->locs[y->loc] : NULL;

	return l && m && x->kind == y->kind && l->line && l->line == m->line &&
	       l->function && m->function && !strcmp(l->function, m->function) &&
	       !strcmp(sb_base_name(l->file), sb_base_name(m->file));
}

long sb_section_match(const struct sb_profile *p, size_t s, const struct sb_profile *q)
{
	size_t k = 0;

	if (s >= p->nsections)
		return -1;
	for (size_t i = 0; i < s; i++)
		k += same_place(p, &p->sections[i], p, &p->sections[s]);
	for (size_t j = 0; j < q->nsections; j++)
		if (same_place(p, &p->sections[s], q, &q->sections[j]) && !k--)
			return (long)j;
	return -1;
}
