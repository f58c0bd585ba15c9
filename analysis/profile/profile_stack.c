// SPDX-License-Identifier: MIT
/*
 * The optional STACK chunk: a speedup stack's times per phase and thread
 * count (struct sb_stack_row, made by `scalebpf stack`).  Record layout
 * (version 1):
 *
 *   STACK  section u32, threads u32, pirate u32, held u32, base_ns u64,
 *          time_ns u64, nolock_ns u64, free_ns u64, imbalance_ns u64,
 *          pirate_bytes u64, slowdown_ppm u64
 *
 * Fields a later version appends are skipped by this reader.
 */
#include "profile_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void sb_pfmt_enc_stack(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_stack_row *r = &p->stack[i];

	sb_bytes_put_u32(b, r->section);
	sb_bytes_put_u32(b, r->threads);
	sb_bytes_put_u32(b, r->pirate);
	sb_bytes_put_u32(b, r->held);
	sb_bytes_put_u64(b, r->base_ns);
	sb_bytes_put_u64(b, r->time_ns);
	sb_bytes_put_u64(b, r->nolock_ns);
	sb_bytes_put_u64(b, r->free_ns);
	sb_bytes_put_u64(b, r->imbalance_ns);
	sb_bytes_put_u64(b, r->pirate_bytes);
	sb_bytes_put_u64(b, r->slowdown_ppm);
}

void sb_pfmt_dec_stack(struct sb_bytes_cur *c, void *elem)
{
	struct sb_stack_row *r = elem;

	r->section = sb_bytes_get_u32(c);
	r->threads = sb_bytes_get_u32(c);
	r->pirate = sb_bytes_get_u32(c);
	r->held = sb_bytes_get_u32(c);
	r->base_ns = sb_bytes_get_u64(c);
	r->time_ns = sb_bytes_get_u64(c);
	r->nolock_ns = sb_bytes_get_u64(c);
	r->free_ns = sb_bytes_get_u64(c);
	r->imbalance_ns = sb_bytes_get_u64(c);
	r->pirate_bytes = sb_bytes_get_u64(c);
	r->slowdown_ppm = sb_bytes_get_u64(c);
}

/* 3: the pirate kinds this reader knows (none, virtual, real) */
uint32_t sb_pfmt_check_stack(const struct sb_profile *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->nstack; i++) {
		const struct sb_stack_row *r = &p->stack[i];

		if (r->section >= p->nsections || !r->threads || r->pirate >= 3) {
			snprintf(why, len, "stack row %zu: section %" PRIu32 " of %zu, %" PRIu32
				 " threads, pirate kind %" PRIu32, i, r->section, p->nsections,
				 r->threads, r->pirate);
			return SB_CHUNK_STACK;
		}
	}
	return 0;
}

int sb_profile_stack_append(struct sb_profile *p, const struct sb_stack_row *row)
{
	struct sb_stack_row *v = realloc(p->stack, (p->nstack + 1) * sizeof(*v));

	if (!v)
		return -1;
	p->stack = v;
	p->stack[p->nstack++] = *row;
	return 0;
}
