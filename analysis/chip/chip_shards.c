// SPDX-License-Identifier: MIT
/* The segmented LRU stack of SHARDS' sampled lines (chip_priv.h). */
#include "chip_priv.h"

#include <stdlib.h>
#include <string.h>

int chip_seglru_init(struct chip_seglru *l, uint64_t lines)
{
	uint64_t nb = 16;

	memset(l, 0, sizeof(*l));
	l->segcap = (uint32_t)((lines + SB_CHIP_DEPTH - 1) / SB_CHIP_DEPTH);
	if (!l->segcap)
		l->segcap = 1;
	l->cap = l->segcap * SB_CHIP_DEPTH;
	while (nb < 2ull * l->cap)
		nb *= 2;
	l->nbuckets = (uint32_t)nb;
	l->nodes = calloc(l->cap, sizeof(*l->nodes));
	l->buckets = malloc(nb * sizeof(*l->buckets));
	if (!l->nodes || !l->buckets) {
		chip_seglru_fini(l);
		return -1;
	}
	memset(l->buckets, 0xff, nb * sizeof(*l->buckets));
	for (int s = 0; s < SB_CHIP_DEPTH; s++)
		l->head[s] = l->tail[s] = CHIP_NIL;
	return 0;
}

void chip_seglru_fini(struct chip_seglru *l)
{
	free(l->nodes);
	free(l->buckets);
	memset(l, 0, sizeof(*l));
}

size_t chip_seglru_bytes(const struct chip_seglru *l)
{
	return (size_t)l->cap * sizeof(*l->nodes) + (size_t)l->nbuckets * sizeof(*l->buckets);
}

static void unlink_node(struct chip_seglru *l, uint32_t i)
{
	struct chip_seg_node *n = &l->nodes[i];

	if (n->prev != CHIP_NIL)
		l->nodes[n->prev].next = n->next;
	else
		l->head[n->seg] = n->next;
	if (n->next != CHIP_NIL)
		l->nodes[n->next].prev = n->prev;
	else
		l->tail[n->seg] = n->prev;
	l->count[n->seg]--;
}

static void push_front(struct chip_seglru *l, uint32_t i, uint8_t seg)
{
	struct chip_seg_node *n = &l->nodes[i];

	n->seg = seg;
	n->prev = CHIP_NIL;
	n->next = l->head[seg];
	if (n->next != CHIP_NIL)
		l->nodes[n->next].prev = i;
	else
		l->tail[seg] = i;
	l->head[seg] = i;
	l->count[seg]++;
}

static void hash_remove(struct chip_seglru *l, uint32_t i, uint64_t hash)
{
	uint32_t *p = &l->buckets[hash & (l->nbuckets - 1)];

	while (*p != CHIP_NIL && *p != i)
		p = &l->nodes[*p].hnext;
	if (*p == i)
		*p = l->nodes[i].hnext;
}

uint32_t chip_seglru_access(struct chip_seglru *l, uint64_t tag, uint64_t hash)
{
	uint32_t *chain = &l->buckets[hash & (l->nbuckets - 1)], i, found;

	for (i = *chain; i != CHIP_NIL && l->nodes[i].tag != tag; i = l->nodes[i].hnext)
		;
	if (i != CHIP_NIL) {
		found = l->nodes[i].seg;
		unlink_node(l, i);
	} else {
		found = SB_CHIP_DEPTH;
		if (l->used < l->cap) {
			i = l->used++;
		} else {   /* the least recent line leaves */
			i = l->tail[SB_CHIP_DEPTH - 1];
			unlink_node(l, i);
			hash_remove(l, i, chip_mix(l->nodes[i].tag - 1));
		}
		l->nodes[i].tag = tag;
		l->nodes[i].hnext = *chain;
		*chain = i;
	}
	push_front(l, i, 0);
	/* each segment before the one it left overflows by one */
	for (uint32_t s = 0; s + 1 < SB_CHIP_DEPTH && s < found; s++) {
		uint32_t t;

		if (l->count[s] <= l->segcap)
			break;
		t = l->tail[s];
		unlink_node(l, t);
		push_front(l, t, (uint8_t)(s + 1));
	}
	return found;
}
