// SPDX-License-Identifier: MIT
#include "vectors.h"

#include <stdlib.h>
#include <string.h>

#include "sbpf_keys.h"
#include "util/idmap.h"

static int is_total(uint64_t key)
{
	return key >= SB_KEY_TOTAL && key < SB_KEY_TOTAL + SB_KEY_TOTALS;
}

struct sb_counts {
	struct sb_idmap *map;   /* key -> count, stored in the pointer */
};

struct sb_counts *sb_counts_alloc(void)
{
	struct sb_counts *c = calloc(1, sizeof(*c));

	if (c && !(c->map = sb_idmap_alloc())) {
		free(c);
		c = NULL;
	}
	return c;
}

void sb_counts_free(struct sb_counts *c)
{
	if (!c)
		return;
	sb_idmap_free(c->map);
	free(c);
}

int sb_counts_add(struct sb_counts *c, uint64_t key, uint64_t n)
{
	void **slot = sb_idmap_slot(c->map, key, 0, true);

	if (!slot)
		return -1;
	*slot = (void *)((uintptr_t)*slot + (uintptr_t)n);
	return 0;
}

size_t sb_counts_size(const struct sb_counts *c)
{
	return c ? sb_idmap_count(c->map) : 0;
}

uint64_t sb_counts_get(const struct sb_counts *c, uint64_t key)
{
	void **slot = c ? sb_idmap_slot(c->map, key, 0, false) : NULL;

	return slot ? (uint64_t)(uintptr_t)*slot : 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static long find_key(const uint64_t *keys, size_t n, uint64_t key)
{
	const uint64_t *k = bsearch(&key, keys, n, sizeof(*keys), by_u64);

	return k ? (long)(k - keys) : -1;
}

int sb_vecset_build(struct sb_counts *const *per_thread, uint32_t nthreads,
		    struct sb_vecset *out)
{
	size_t total = 0, n = 0;
	uint64_t key;
	void *val;

	memset(out, 0, sizeof(*out));
	out->nthreads = nthreads;
	for (uint32_t t = 0; t < nthreads; t++)
		total += sb_counts_size(per_thread[t]);
	if (!total)
		return 0;
	out->keys = malloc(total * sizeof(*out->keys));
	if (!out->keys)
		return -1;
	for (uint32_t t = 0; t < nthreads; t++) {
		size_t it = 0;

		while (per_thread[t] && sb_idmap_next(per_thread[t]->map, &it, &key, NULL, NULL))
			if (!is_total(key))
				out->keys[n++] = key;
	}
	qsort(out->keys, n, sizeof(*out->keys), by_u64);
	if (!n) {               /* totals only */
		free(out->keys);
		out->keys = NULL;
		return 0;
	}
	total = n;
	n = 0;
	for (size_t i = 0; i < total; i++)   /* unique */
		if (!n || out->keys[n - 1] != out->keys[i])
			out->keys[n++] = out->keys[i];
	out->nkeys = (uint32_t)n;
	out->counts = calloc(n * nthreads, sizeof(*out->counts));
	if (!out->counts) {
		sb_vecset_free(out);
		return -1;
	}
	for (uint32_t t = 0; t < nthreads; t++) {
		size_t it = 0;

		while (per_thread[t] && sb_idmap_next(per_thread[t]->map, &it, &key, NULL, &val))
			if (!is_total(key))
				out->counts[(size_t)find_key(out->keys, n, key) * nthreads + t] =
					(uint64_t)(uintptr_t)val;
	}
	return 0;
}

void sb_vecset_free(struct sb_vecset *v)
{
	free(v->keys);
	free(v->counts);
	memset(v, 0, sizeof(*v));
}
