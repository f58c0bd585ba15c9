// SPDX-License-Identifier: MIT
/*
 * addrs.c - the bounded reservoir of sampled data accesses and its
 * counts, stored into the profile.  See addrs.h; the ADDRS chunk's codec
 * is the profile's (profile/profile_addrs.c).
 */
#include "addrs.h"
#include "util/rng.h"
#include "util/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sb_addrs {
	struct sb_addr *rec;
	size_t cap, n;
	uint64_t rng;
	struct sb_addrs_counts c;
};

struct sb_addrs *sb_addrs_alloc(size_t cap, uint64_t seed)
{
	struct sb_addrs *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cap = cap ? cap : SB_ADDRS_DEFAULT_CAP;
	r->rec = calloc(r->cap, sizeof(*r->rec));
	if (!r->rec) {
		free(r);
		return NULL;
	}
	r->rng = seed;
	r->c.capacity = r->cap;
	return r;
}

void sb_addrs_free(struct sb_addrs *r)
{
	if (!r)
		return;
	free(r->rec);
	free(r);
}

/* Uniform in [0, bound): rejection removes the modulo bias, which would
 * otherwise favour low slots once bound nears 2^64 / cap.  The fixed seed
 * gives the same kept set on the same stream, so a recording's reservoir
 * can be reproduced in tests. */
static uint64_t uniform(struct sb_addrs *r, uint64_t bound)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % bound, x;

	do
		x = sb_rng_next(&r->rng);
	while (x >= lim);
	return x % bound;
}

void sb_addrs_count(struct sb_addrs *r, enum sb_addrs_class c)
{
	r->c.samples++;
	switch (c) {
	case SB_ADDRS_DECODED:      /* only through sb_addrs_offer */
	case SB_ADDRS_UNDECODABLE:
	case SB_ADDRS_NCLASS:
		r->c.undecodable++;
		break;
	case SB_ADDRS_NO_ACCESS:
		r->c.no_access++;
		break;
	case SB_ADDRS_NO_CODE:
		r->c.no_code++;
		break;
	}
}

/* Algorithm R: the k-th decoded access (1-based) replaces a random slot
 * with probability cap / k, so after any number of offers every offered
 * record is kept with the same probability. */
void sb_addrs_offer(struct sb_addrs *r, const struct sb_addr *a)
{
	uint64_t k = ++r->c.decoded;

	r->c.samples++;
	r->c.skid += (a->flags & SB_ADDR_SKID) != 0;
	if (r->n < r->cap) {
		r->rec[r->n++] = *a;
	} else {
		uint64_t j = uniform(r, k);

		if (j < r->cap)
			r->rec[j] = *a;
	}
	r->c.kept = r->n;
}

void sb_addrs_get_counts(const struct sb_addrs *r, struct sb_addrs_counts *c)
{
	*c = r->c;
}

const struct sb_addr *sb_addrs_kept(const struct sb_addrs *r, size_t *n)
{
	*n = r->n;
	return r->rec;
}

/* ---- into and out of the profile ---- */

static const struct {
	const char *key;
	size_t off;
} count_keys[] = {
	{ "addr_samples", offsetof(struct sb_addrs_counts, samples) },
	{ "addr_decoded", offsetof(struct sb_addrs_counts, decoded) },
	{ "addr_undecodable", offsetof(struct sb_addrs_counts, undecodable) },
	{ "addr_no_memory_access", offsetof(struct sb_addrs_counts, no_access) },
	{ "addr_no_code", offsetof(struct sb_addrs_counts, no_code) },
	{ "addr_skid_corrected", offsetof(struct sb_addrs_counts, skid) },
	{ "addr_kept", offsetof(struct sb_addrs_counts, kept) },
	{ "addr_capacity", offsetof(struct sb_addrs_counts, capacity) },
};
#define NKEYS (sizeof(count_keys) / sizeof(count_keys[0]))

static int by_time(const void *a, const void *b)
{
	const struct sb_addr *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int sb_addrs_store(const struct sb_addrs *r, struct sb_profile *p)
{
	struct sb_addr *arr = NULL;

	if (p->naddrs) {
		errno = EINVAL;
		return -1;
	}
	if (r->n) {
		/* The profile's arrays grow in sb_bytes_cap_for steps. */
		arr = calloc(sb_bytes_cap_for(r->n), sizeof(*arr));
		if (!arr)
			return -1;
		memcpy(arr, r->rec, r->n * sizeof(*arr));
		qsort(arr, r->n, sizeof(*arr), by_time);
	}
	for (size_t i = 0; i < NKEYS; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&r->c + count_keys[i].off, sizeof(v));
		if (sb_profile_meta_set_u64(p, count_keys[i].key, v) < 0) {
			free(arr);
			return -1;
		}
	}
	p->addrs = arr;
	p->naddrs = r->n;
	return 0;
}

int sb_addrs_counts_read(const struct sb_profile *p, struct sb_addrs_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NKEYS; i++) {
		const char *s = sb_profile_meta_get(p, count_keys[i].key);
		char *end;
		uint64_t v;

		if (!s || !*s)
			return -1;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (*end || errno)
			return -1;
		memcpy((char *)c + count_keys[i].off, &v, sizeof(v));
	}
	return 0;
}

/* ---- section instances ---- */

int sb_addrs_assign_instances(struct sb_profile *p)
{
	struct sb_instance_index *x;

	for (size_t a = 0; a < p->naddrs; a++)
		p->addrs[a].instance = -1;
	if (!p->ninstances || !p->naddrs)
		return 0;
	if (!(x = sb_instance_index_alloc(p)))
		return -1;
	for (size_t a = 0; a < p->naddrs; a++)
		p->addrs[a].instance = sb_instance_index_find(x, p->addrs[a].tid, p->addrs[a].ts);
	sb_instance_index_free(x);
	return 0;
}
