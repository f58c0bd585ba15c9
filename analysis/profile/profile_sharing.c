// SPDX-License-Identifier: MIT
/*
 * The optional SHARING chunk: cache-line sharing rows (struct sb_sharing,
 * made by analysis/coherence/).  Record layout (version 1):
 *
 *   SHARING  kind u32, mode u32, addr u64, loc i32, loc2 i32, tid u32,
 *            name str, refs 4 x i32, nv u32, nv x u64 values
 *
 * Values beyond those this reader knows are skipped, missing ones read 0:
 * a later writer may add counts at the end.
 */
#include "profile_priv.h"

#include <inttypes.h>
#include <stdio.h>

void sb_pfmt_enc_sharing(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_sharing *s = &p->sharing[i];

	sb_bytes_put_u32(b, s->kind);
	sb_bytes_put_u32(b, s->mode);
	sb_bytes_put_u64(b, s->addr);
	sb_bytes_put_u32(b, (uint32_t)s->loc);
	sb_bytes_put_u32(b, (uint32_t)s->loc2);
	sb_bytes_put_u32(b, s->tid);
	sb_bytes_put_str(b, s->name);
	for (size_t k = 0; k < 4; k++)
		sb_bytes_put_u32(b, (uint32_t)s->refs[k]);
	sb_bytes_put_u32(b, SB_SHV_MAX);
	for (size_t k = 0; k < SB_SHV_MAX; k++)
		sb_bytes_put_u64(b, s->v[k]);
}

void sb_pfmt_dec_sharing(struct sb_bytes_cur *c, void *elem)
{
	struct sb_sharing *s = elem;
	uint32_t nv;

	s->kind = sb_bytes_get_u32(c);
	s->mode = sb_bytes_get_u32(c);
	s->addr = sb_bytes_get_u64(c);
	s->loc = (int32_t)sb_bytes_get_u32(c);
	s->loc2 = (int32_t)sb_bytes_get_u32(c);
	s->tid = sb_bytes_get_u32(c);
	s->name = sb_bytes_get_str(c, 1);
	for (size_t k = 0; k < 4; k++)
		s->refs[k] = (int32_t)sb_bytes_get_u32(c);
	nv = sb_bytes_get_u32(c);
	if (nv > sb_bytes_left(c) / 8) {
		c->bad = 1;
		return;
	}
	for (uint32_t k = 0; k < nv; k++) {
		uint64_t v = sb_bytes_get_u64(c);

		if (k < SB_SHV_MAX)
			s->v[k] = v;
	}
}

static bool loc_ok(const struct sb_profile *p, int32_t l)
{
	return l >= -1 && (l < 0 || (uint64_t)l < p->nlocs);
}

uint32_t sb_pfmt_check_sharing(const struct sb_profile *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];
		bool refs = true;

		for (size_t k = 0; k < 4; k++)
			refs = refs && loc_ok(p, s->refs[k]);
		if (!s->kind || s->kind >= SB_SHARING_KIND_MAX || !s->mode ||
		    s->mode >= SB_SHARING_MODE_MAX) {
			snprintf(why, len, "sharing row %zu has kind %" PRIu32 ", mode %" PRIu32,
				 i, s->kind, s->mode);
			return SB_CHUNK_SHARING;
		}
		if (!loc_ok(p, s->loc) || !loc_ok(p, s->loc2) || !refs) {
			snprintf(why, len, "sharing row %zu refers to a loc beyond %zu", i,
				 p->nlocs);
			return SB_CHUNK_SHARING;
		}
	}
	return 0;
}
