// SPDX-License-Identifier: MIT
/*
 * The optional ADDRS chunk: the kept records of software address
 * sampling (the reservoir that keeps them and the counts in the metadata
 * are analysis/addrs/).  Record layout (version 1):
 *
 *   ADDRS    ts u64, ip u64, addr u64, tid u32, loc i32, instance i32,
 *            size u32, flags u32 (SB_ADDR_REC_SIZE bytes)
 */
#include "profile_priv.h"

#include <inttypes.h>
#include <stdio.h>

void sb_pfmt_enc_addr(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_addr *a = &p->addrs[i];

	sb_bytes_put_u64(b, a->ts);
	sb_bytes_put_u64(b, a->ip);
	sb_bytes_put_u64(b, a->addr);
	sb_bytes_put_u32(b, a->tid);
	sb_bytes_put_u32(b, (uint32_t)a->loc);
	sb_bytes_put_u32(b, (uint32_t)a->instance);
	sb_bytes_put_u32(b, a->size);
	sb_bytes_put_u32(b, a->flags);
}

void sb_pfmt_dec_addr(struct sb_bytes_cur *c, void *elem)
{
	struct sb_addr *a = elem;
	uint32_t size, flags;

	a->ts = sb_bytes_get_u64(c);
	a->ip = sb_bytes_get_u64(c);
	a->addr = sb_bytes_get_u64(c);
	a->tid = sb_bytes_get_u32(c);
	a->loc = (int32_t)sb_bytes_get_u32(c);
	a->instance = (int32_t)sb_bytes_get_u32(c);
	size = sb_bytes_get_u32(c);
	flags = sb_bytes_get_u32(c);
	if (size > 255 || flags > 255)   /* wider than the fields: not ours */
		c->bad = 1;
	a->size = (uint8_t)size;
	a->flags = (uint8_t)flags;
}

uint32_t sb_pfmt_check_addr_refs(const struct sb_profile *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->naddrs; i++) {
		int32_t l = p->addrs[i].loc, in = p->addrs[i].instance;

		if (l < -1 || (l >= 0 && (uint64_t)l >= p->nlocs)) {
			snprintf(why, len, "address %zu refers to loc %" PRId32 " of %zu",
				 i, l, p->nlocs);
			return SB_CHUNK_ADDRS;
		}
		if (in < -1 || (in >= 0 && (uint64_t)in >= p->ninstances)) {
			snprintf(why, len, "address %zu refers to instance %" PRId32 " of %zu",
				 i, in, p->ninstances);
			return SB_CHUNK_ADDRS;
		}
	}
	return 0;
}
