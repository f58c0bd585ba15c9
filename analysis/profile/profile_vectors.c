// SPDX-License-Identifier: MIT
/*
 * The optional chunks: per-thread event vectors and the CFGs they refer
 * to.  Record layouts (version 1):
 *
 *   EVENTS   kind u32, binary i32, vaddr u64, vaddr2 u64, loc i32, loc2 i32,
 *            hot u64, loc_hot i32[, stmt_line u32: absent in older files, 0]
 *   VECTORS  instance u32, event u32, n u32, n x count u64
 *   CFGS     binary i32, len u64, len bytes (cfg_io.h format)
 */
#include "profile_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_pfmt_enc_event(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_event_def *e = &p->events[i];

	sb_bytes_put_u32(b, e->kind);
	sb_bytes_put_u32(b, (uint32_t)e->binary);
	sb_bytes_put_u64(b, e->vaddr);
	sb_bytes_put_u64(b, e->vaddr2);
	sb_bytes_put_u32(b, (uint32_t)e->loc);
	sb_bytes_put_u32(b, (uint32_t)e->loc2);
	sb_bytes_put_u64(b, e->hot);
	sb_bytes_put_u32(b, (uint32_t)e->loc_hot);
	sb_bytes_put_u32(b, e->stmt_line);
}

void sb_pfmt_dec_event(struct sb_bytes_cur *c, void *elem)
{
	struct sb_event_def *e = elem;

	e->kind = sb_bytes_get_u32(c);
	e->binary = (int32_t)sb_bytes_get_u32(c);
	e->vaddr = sb_bytes_get_u64(c);
	e->vaddr2 = sb_bytes_get_u64(c);
	e->loc = (int32_t)sb_bytes_get_u32(c);
	e->loc2 = (int32_t)sb_bytes_get_u32(c);
	e->hot = sb_bytes_get_u64(c);
	e->loc_hot = (int32_t)sb_bytes_get_u32(c);
	/* records are length-framed: a file written before the field has
	 * none, and a reader before it skips it */
	e->stmt_line = sb_bytes_left(c) >= 4 ? sb_bytes_get_u32(c) : 0;
}

void sb_pfmt_enc_vector(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_vector *v = &p->vectors[i];

	sb_bytes_put_u32(b, v->instance);
	sb_bytes_put_u32(b, v->event);
	sb_bytes_put_u32(b, v->nthreads);
	for (uint32_t t = 0; t < v->nthreads; t++)
		sb_bytes_put_u64(b, v->counts[t]);
}

void sb_pfmt_dec_vector(struct sb_bytes_cur *c, void *elem)
{
	struct sb_vector *v = elem;
	uint32_t n;

	v->instance = sb_bytes_get_u32(c);
	v->event = sb_bytes_get_u32(c);
	n = sb_bytes_get_u32(c);
	if (c->bad || n == 0)
		return;
	/* Checked before allocating: garbage cannot ask for a huge block. */
	if ((uint64_t)n * 8 > sb_bytes_left(c)) {
		c->bad = 1;
		return;
	}
	v->counts = malloc((size_t)n * sizeof(*v->counts));
	if (!v->counts) {
		c->nomem = 1;
		return;
	}
	v->nthreads = n;
	for (uint32_t t = 0; t < n; t++)
		v->counts[t] = sb_bytes_get_u64(c);
}

void sb_pfmt_enc_cfg(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_cfg_blob *g = &p->cfgs[i];

	sb_bytes_put_u32(b, (uint32_t)g->binary);
	sb_bytes_put_u64(b, g->len);
	sb_bytes_put_bytes(b, g->data, g->len);
}

void sb_pfmt_dec_cfg(struct sb_bytes_cur *c, void *elem)
{
	struct sb_cfg_blob *g = elem;
	struct sb_bytes_cur sub;

	g->binary = (int32_t)sb_bytes_get_u32(c);
	g->len = sb_bytes_get_u64(c);
	if (c->bad || g->len == 0)
		return;
	sb_bytes_take(c, g->len, &sub);
	if (c->bad)
		return;
	g->data = malloc(g->len);
	if (!g->data) {
		c->nomem = 1;
		return;
	}
	memcpy(g->data, sub.p + sub.pos, g->len);
}

uint32_t sb_pfmt_check_vector_refs(const struct sb_profile *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->nevents; i++) {
		const struct sb_event_def *e = &p->events[i];

		if (e->binary < -1 || (e->binary >= 0 && (uint64_t)e->binary >= p->nbinaries) ||
		    e->loc < -1 || (e->loc >= 0 && (uint64_t)e->loc >= p->nlocs) ||
		    e->loc2 < -1 || (e->loc2 >= 0 && (uint64_t)e->loc2 >= p->nlocs) ||
		    e->loc_hot < -1 || (e->loc_hot >= 0 && (uint64_t)e->loc_hot >= p->nlocs)) {
			snprintf(why, len, "event %zu refers to binary %" PRId32 " / loc %"
				 PRId32, i, e->binary, e->loc);
			return SB_CHUNK_EVENTS;
		}
	}
	for (size_t i = 0; i < p->nvectors; i++) {
		const struct sb_vector *v = &p->vectors[i];

		if (v->instance >= p->ninstances || v->event >= p->nevents ||
		    v->nthreads != p->instances[v->instance].nthreads) {
			snprintf(why, len, "vector %zu refers to instance %" PRIu32 " / event %"
				 PRIu32 " with %" PRIu32 " threads", i, v->instance, v->event,
				 v->nthreads);
			return SB_CHUNK_VECTORS;
		}
	}
	for (size_t i = 0; i < p->ncfgs; i++) {
		int32_t b = p->cfgs[i].binary;

		if (b < 0 || (uint64_t)b >= p->nbinaries) {
			snprintf(why, len, "cfg %zu refers to binary %" PRId32, i, b);
			return SB_CHUNK_CFGS;
		}
	}
	return 0;
}
