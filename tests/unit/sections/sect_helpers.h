// SPDX-License-Identifier: MIT
/* Helpers the section builder's unit tests share: one spelling of an
 * event, one way to feed a history. */
#ifndef SB_TEST_SECT_HELPERS_H
#define SB_TEST_SECT_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "sections/sections.h"

#define MS 1000000ull

static inline struct sb_event ev(uint64_t ts, uint32_t tid, uint16_t kind, uint16_t prim,
				 uint64_t site, uint64_t obj, uint64_t oncpu)
{
	struct sb_event e = { .ts = ts, .tid = tid, .kind = kind, .prim = prim,
			      .site = site, .obj = obj, .oncpu = oncpu };
	return e;
}

/* Adds e[0..n) in order; returns sb_builder_finish's result. */
static inline int feed(struct sb_builder *b, const struct sb_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_builder_add(b, &e[i]);
	return sb_builder_finish(b);
}

/* A builder fed e[0..n) and finished, its statistics in *st; returns
 * sb_builder_finish's result (-1 if no builder). */
static inline int feed_stats(const struct sb_event *e, size_t n, struct sb_builder_stats *st)
{
	struct sb_builder *b = sb_builder_alloc(100);
	int rc;

	if (!b)
		return -1;
	rc = feed(b, e, n);
	sb_builder_get_stats(b, st);
	sb_builder_free(b);
	return rc;
}

#endif
