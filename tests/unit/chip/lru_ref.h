/* SPDX-License-Identifier: MIT */
/*
 * The truth CHiP is held to (test-only): a fully associative LRU stack of
 * unbounded depth, the stack-distance algorithm.  A reference's distance
 * is the number of distinct lines touched since the line's previous
 * reference, counted in O(log n) with a Fenwick tree over time holding a
 * 1 at each line's latest reference (Bennett & Kruskal).  The hit ratio
 * of a cache of C lines is the share of references with distance < C.
 */
#ifndef SB_TEST_LRU_REF_H
#define SB_TEST_LRU_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lru_ref {
	uint32_t *bit;          /* Fenwick tree over times 1..n */
	size_t n, t;
	uint64_t *keys;         /* open addressing: line + 1 -> last time */
	uint32_t *last;
	size_t cap;
	uint64_t *hist;         /* distances 0..maxd-1; hist[maxd]: farther or cold */
	size_t maxd;
};

static inline int lru_ref_init(struct lru_ref *r, size_t refs, size_t lines, size_t maxd)
{
	memset(r, 0, sizeof(*r));
	r->n = refs;
	for (r->cap = 1024; r->cap < 2 * lines; r->cap *= 2)
		;
	r->bit = calloc(refs + 1, sizeof(*r->bit));
	r->keys = calloc(r->cap, sizeof(*r->keys));
	r->last = calloc(r->cap, sizeof(*r->last));
	r->maxd = maxd;
	r->hist = calloc(maxd + 1, sizeof(*r->hist));
	return r->bit && r->keys && r->last && r->hist ? 0 : -1;
}

static inline void lru_ref_free(struct lru_ref *r)
{
	free(r->bit);
	free(r->keys);
	free(r->last);
	free(r->hist);
}

static inline void lru_bit_add(struct lru_ref *r, size_t i, int v)
{
	for (; i <= r->n; i += i & -i)
		r->bit[i] += (uint32_t)v;
}

static inline uint64_t lru_bit_sum(const struct lru_ref *r, size_t i)
{
	uint64_t s = 0;

	for (; i; i -= i & -i)
		s += r->bit[i];
	return s;
}

/* One reference to line (a line number); at most n of them.  Its
 * distance, UINT64_MAX for a first touch. */
static inline uint64_t lru_ref_access(struct lru_ref *r, uint64_t line)
{
	size_t i = (size_t)((line * 0x9e3779b97f4a7c15ull) >> 20) & (r->cap - 1);
	uint64_t d = UINT64_MAX;

	if (r->t >= r->n)
		return d;
	r->t++;
	while (r->keys[i] && r->keys[i] != line + 1)
		i = (i + 1) & (r->cap - 1);
	if (r->keys[i]) {
		uint32_t prev = r->last[i];

		d = lru_bit_sum(r, r->t - 1) - lru_bit_sum(r, prev);
		lru_bit_add(r, prev, -1);
		r->hist[d < r->maxd ? d : r->maxd]++;
	} else {
		r->keys[i] = line + 1;
		r->hist[r->maxd]++;
	}
	r->last[i] = (uint32_t)r->t;
	lru_bit_add(r, r->t, 1);
	return d;
}

/* Hit ratio of a cache of c lines (c <= maxd). */
static inline double lru_ref_hit_ratio(const struct lru_ref *r, size_t c)
{
	uint64_t h = 0;

	for (size_t d = 0; d < c && d < r->maxd; d++)
		h += r->hist[d];
	return r->t ? (double)h / (double)r->t : 0;
}

#endif
