// SPDX-License-Identifier: MIT
/* Merging profiles (merge.h): the parts that point into the others --
 * waits at call sites, events at code, vectors of instances and events,
 * CFGs of binaries, addresses in instances -- through the input's maps
 * (merge.c fills them first). */
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"
#include "merge_priv.h"

/* src's index i mapped through map (n entries); -1 stays -1, and one out
 * of range marks the input corrupt. */
long sb_merge_mapped(struct sb_merge *m, const long *map, size_t n, int64_t i)
{
	if (i < 0)
		return -1;
	if ((uint64_t)i >= n) {
		m->err = SB_ERR_CORRUPT;
		return -1;
	}
	return map[i];
}

int sb_merge_waits(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nwaits; i++) {
		struct sb_wait w = src->waits[i];
		void **slot = NULL;

		w.loc = (int32_t)sb_merge_mapped(m, m->loc, src->nlocs, w.loc);
		if (!(slot = sb_idmap_slot(m->waits, ((uint64_t)w.prim << 32) | (uint32_t)w.loc,
					   w.object, true)))
			return SB_ERR_NOMEM;
		if (*slot) {
			struct sb_wait *d = &m->p->waits[(uintptr_t)*slot - 1];

			d->count += w.count;
			d->wait_ns += w.wait_ns;
		} else {
			long k = sb_profile_add_wait(m->p, &w);

			if (k < 0)
				return SB_ERR_NOMEM;
			*slot = (void *)(uintptr_t)(k + 1);
		}
	}
	return m->err;
}

struct ev_ctx {
	const struct sb_profile *p;
	const struct sb_event_def *e;
};

static bool ev_same(const void *ctx, long i)
{
	const struct ev_ctx *c = ctx;
	const struct sb_event_def *a = &c->p->events[i];

	return a->kind == c->e->kind && a->binary == c->e->binary && a->vaddr == c->e->vaddr &&
	       a->vaddr2 == c->e->vaddr2;
}

int sb_merge_events(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nevents; i++) {
		struct sb_event_def e = src->events[i];
		struct ev_ctx c = { m->p, &e };
		uint64_t h;
		void **slot = NULL;
		long k;

		e.binary = (int32_t)sb_merge_mapped(m, m->bin, src->nbinaries, e.binary);
		e.loc = (int32_t)sb_merge_mapped(m, m->loc, src->nlocs, e.loc);
		e.loc2 = (int32_t)sb_merge_mapped(m, m->loc, src->nlocs, e.loc2);
		e.loc_hot = (int32_t)sb_merge_mapped(m, m->loc, src->nlocs, e.loc_hot);
		h = sb_merge_hash(SB_MERGE_HASH0, &e.kind, sizeof(e.kind));
		h = sb_merge_hash(h, &e.binary, sizeof(e.binary));
		h = sb_merge_hash(h, &e.vaddr, sizeof(e.vaddr));
		h = sb_merge_hash(h, &e.vaddr2, sizeof(e.vaddr2));
		if ((k = sb_merge_find(m->events, h, ev_same, &c, &slot)) < 0) {
			if (!slot || (k = sb_profile_add_event(m->p, &e)) < 0)
				return SB_ERR_NOMEM;
			*slot = (void *)(uintptr_t)(k + 1);
		}
		m->ev[i] = k;
	}
	return m->err;
}

int sb_merge_vectors(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nvectors; i++) {
		struct sb_vector v = src->vectors[i];
		long in = sb_merge_mapped(m, m->inst, src->ninstances, v.instance);
		long ev = sb_merge_mapped(m, m->ev, src->nevents, v.event);

		if (m->err || ev < 0)
			return SB_ERR_CORRUPT;
		if (in < 0) {
			m->st.vectors_dropped++;
			continue;
		}
		v.instance = (uint32_t)in;
		v.event = (uint32_t)ev;
		if (sb_profile_add_vector(m->p, &v) < 0)
			return SB_ERR_NOMEM;
	}
	return 0;
}

int sb_merge_cfgs(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->ncfgs; i++) {
		const struct sb_cfg_blob *g = &src->cfgs[i];
		long b = sb_merge_mapped(m, m->bin, src->nbinaries, g->binary);
		void **slot = NULL;

		if (b < 0)
			return SB_ERR_CORRUPT;
		/* one binary (path and build-id): one CFG, the first */
		if (!(slot = sb_idmap_slot(m->cfgs, (uint64_t)b, 0, true)))
			return SB_ERR_NOMEM;
		if (*slot)
			continue;
		if (sb_profile_add_cfg(m->p, (int32_t)b, g->data, g->len) < 0)
			return SB_ERR_NOMEM;
		*slot = (void *)1;
	}
	return 0;
}

int sb_merge_addrs(struct sb_merge *m, const struct sb_profile *src)
{
	size_t room = m->o.max_addrs > m->p->naddrs ? m->o.max_addrs - m->p->naddrs : 0;
	size_t n = src->naddrs < room ? src->naddrs : room;
	struct sb_addr *a;

	m->st.addrs_dropped += src->naddrs - n;
	if (!n)
		return 0;
	if (!(a = realloc(m->p->addrs, (m->p->naddrs + n) * sizeof(*a))))
		return SB_ERR_NOMEM;
	m->p->addrs = a;
	for (size_t i = 0; i < n; i++) {
		struct sb_addr x = src->addrs[i];

		x.loc = (int32_t)sb_merge_mapped(m, m->loc, src->nlocs, x.loc);
		x.instance = (int32_t)sb_merge_mapped(m, m->inst, src->ninstances, x.instance);
		a[m->p->naddrs++] = x;
	}
	return m->err;
}
