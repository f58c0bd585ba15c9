// SPDX-License-Identifier: MIT
#include "idmap.h"

#include <stdlib.h>

struct entry {
	uint64_t k1, k2;
	void *val;
	uint8_t state;   /* 0 empty, 1 used, 2 deleted */
};

struct sb_idmap {
	struct entry *e;
	size_t cap, used, live;  /* used counts tombstones too */
};

static uint64_t mix(uint64_t k1, uint64_t k2)
{
	uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

struct sb_idmap *sb_idmap_alloc(void)
{
	struct sb_idmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cap = 64;
	m->e = calloc(m->cap, sizeof(*m->e));
	if (!m->e) {
		free(m);
		return NULL;
	}
	return m;
}

void sb_idmap_free(struct sb_idmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

static struct entry *find(const struct sb_idmap *m, uint64_t k1, uint64_t k2,
			  struct entry **free_slot)
{
	size_t i = mix(k1, k2) & (m->cap - 1);

	*free_slot = NULL;
	for (size_t n = 0; n < m->cap; n++, i = (i + 1) & (m->cap - 1)) {
		struct entry *e = &m->e[i];

		if (e->state == 0) {
			if (!*free_slot)
				*free_slot = e;
			return NULL;
		}
		if (e->state == 2) {
			if (!*free_slot)
				*free_slot = e;
			continue;
		}
		if (e->k1 == k1 && e->k2 == k2)
			return e;
	}
	return NULL;
}

static int grow(struct sb_idmap *m)
{
	struct entry *old = m->e, *slot;
	size_t oldcap = m->cap;

	m->cap = m->live * 4 > oldcap ? oldcap * 2 : oldcap;
	m->e = calloc(m->cap, sizeof(*m->e));
	if (!m->e) {
		m->e = old;
		m->cap = oldcap;
		return -1;
	}
	m->used = m->live;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].state != 1)
			continue;
		find(m, old[i].k1, old[i].k2, &slot);
		*slot = old[i];
	}
	free(old);
	return 0;
}

void sb_idmap_free_with(struct sb_idmap *m, void (*free_value)(void *))
{
	size_t it = 0;
	void *v;

	/* A slot created for a value whose allocation then failed is NULL. */
	while (m && sb_idmap_next(m, &it, NULL, NULL, &v))
		if (v)
			free_value(v);
	sb_idmap_free(m);
}

void **sb_idmap_slot(struct sb_idmap *m, uint64_t k1, uint64_t k2, bool create)
{
	struct entry *slot, *e = find(m, k1, k2, &slot);

	if (e)
		return &e->val;
	if (!create)
		return NULL;
	if ((m->used + 1) * 4 > m->cap * 3) {
		if (grow(m))
			return NULL;
		find(m, k1, k2, &slot);
	}
	if (slot->state == 0)
		m->used++;
	slot->k1 = k1;
	slot->k2 = k2;
	slot->val = NULL;
	slot->state = 1;
	m->live++;
	return &slot->val;
}

void *sb_idmap_remove(struct sb_idmap *m, uint64_t k1, uint64_t k2)
{
	struct entry *slot, *e = find(m, k1, k2, &slot);
	void *val;

	if (!e)
		return NULL;
	val = e->val;
	e->state = 2;
	e->val = NULL;
	m->live--;
	return val;
}

size_t sb_idmap_count(const struct sb_idmap *m)
{
	return m->live;
}

bool sb_idmap_next(const struct sb_idmap *m, size_t *it, uint64_t *k1,
		   uint64_t *k2, void **val)
{
	for (; *it < m->cap; (*it)++) {
		const struct entry *e = &m->e[*it];

		if (e->state != 1)
			continue;
		if (k1)
			*k1 = e->k1;
		if (k2)
			*k2 = e->k2;
		if (val)
			*val = e->val;
		(*it)++;
		return true;
	}
	return false;
}
