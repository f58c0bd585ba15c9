// SPDX-License-Identifier: MIT
/* Function and whole-run regions while recording (record_region.h). */
#include "record_region.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip_probes.h"
#include "util/idmap.h"

struct open_call {
	uint16_t counters;     /* the entry's: sb_rec_region.counters */
	uint64_t ts, sp;
	uint64_t snap[SB_REGION_COUNTS];
};

int sb_regions_init(struct sb_regions *g)
{
	uint64_t nomem = g->nomem;

	memset(g, 0, sizeof(*g));
	g->nomem = nomem;
	g->open = sb_idmap_alloc();
	g->seen = sb_idmap_alloc();
	if (!g->open || !g->seen) {
		sb_regions_fini(g);
		return -ENOMEM;
	}
	return 0;
}

void sb_regions_fini(struct sb_regions *g)
{
	sb_idmap_free_with(g->open, free);
	sb_idmap_free(g->seen);
	g->open = g->seen = NULL;
	free(g->spans);
	g->spans = NULL;
	g->nspans = g->spans_cap = 0;
}

/* A thread's first call of region k (k = 0: the run) counts it. */
static int thread_seen(struct sb_regions *g, uint32_t tid, uint64_t k, uint32_t *threads)
{
	void **slot = sb_idmap_slot(g->seen, tid, k, true);

	if (!slot)
		return -ENOMEM;
	if (!*slot) {
		*slot = (void *)1;
		(*threads)++;
	}
	return 0;
}

static void counters_of(const struct sb_rec_region *rec, uint64_t v[SB_REGION_COUNTS])
{
	memcpy(v, rec->depth, sizeof(rec->depth));
	v[SB_CHIP_NDEPTH] = rec->accesses;
}

static void close_call(struct sb_region_total *t, const struct open_call *c,
		       const struct sb_rec_region *rec)
{
	uint64_t now[SB_REGION_COUNTS];
	bool back = false;

	t->calls++;
	t->busy_ns += rec->hdr.ts > c->ts ? rec->hdr.ts - c->ts : 0;
	if (!c->counters && !rec->counters) {
		t->uncounted++;   /* not a --chip program, or an unknown thread */
		return;
	}
	if (rec->counters != 1 || c->counters == 2) {   /* one end unread */
		t->unread++;
		return;
	}
	/* a thread whose profile was made inside the call: from 0 */
	counters_of(rec, now);
	for (int i = 0; i < SB_REGION_COUNTS; i++)
		back |= c->counters && now[i] < c->snap[i];
	if (back) {   /* not one thread's counters: never summed */
		t->unread++;
		return;
	}
	for (int i = 0; i < SB_REGION_COUNTS; i++)
		t->counts[i] += now[i] - (c->counters ? c->snap[i] : 0);
	t->counted++;
}

static int open_call(struct sb_regions *g, struct sb_region_total *t, void **slot,
		     const struct sb_rec_region *rec, uint32_t idx)
{
	struct open_call *c = calloc(1, sizeof(*c));

	if (!c) {
		sb_idmap_remove(g->open, rec->hdr.tid, idx);
		return -ENOMEM;
	}
	c->ts = rec->hdr.ts;
	c->sp = rec->sp;
	c->counters = rec->counters;
	if (rec->counters == 1)
		counters_of(rec, c->snap);
	*slot = c;
	return thread_seen(g, rec->hdr.tid, idx + 1, &t->threads);
}

/* A closed outermost call's span, when kept; -ENOMEM. */
static int keep_span(struct sb_regions *g, uint32_t idx, uint32_t tid, uint64_t start,
		     uint64_t end)
{
	if (!g->keep_spans)
		return 0;
	if (g->nspans == SB_REGION_SPANS_MAX) {
		g->spans_dropped++;
		return 0;
	}
	if (g->nspans == g->spans_cap) {
		size_t n = g->spans_cap ? 2 * g->spans_cap : 256;
		struct sb_chip_span *v = realloc(g->spans, n * sizeof(*v));

		if (!v) {
			g->spans_dropped++;
			return -ENOMEM;
		}
		g->spans = v;
		g->spans_cap = n;
	}
	g->spans[g->nspans++] = (struct sb_chip_span){ tid, idx, start, end };
	return 0;
}

int sb_regions_mark(struct sb_regions *g, uint32_t idx, const struct sb_rec_region *rec)
{
	uint32_t tid = rec->hdr.tid;
	struct sb_region_total *t;
	struct open_call *c;
	void **slot;
	int ret = 0;

	if (idx >= SB_REGION_MAX) {
		g->bad++;
		return 0;
	}
	t = &g->tot[idx];
	slot = sb_idmap_slot(g->open, tid, idx, rec->enter);
	if (rec->enter) {
		if (!slot)
			return -ENOMEM;
		if ((c = *slot) && rec->sp < c->sp)
			return 0;   /* deeper: a recursive call, the outer one's */
		if (c) {      /* as deep or shallower: the open call never returned */
			t->lost++;
			free(c);
		}
		return open_call(g, t, slot, rec, idx);
	}
	if (!slot || !(c = *slot)) {
		t->unmatched++;
		return 0;
	}
	if (rec->sp < c->sp + 8)
		return 0;     /* an inner call's return */
	if (rec->sp == c->sp + 8) {
		close_call(t, c, rec);
		ret = keep_span(g, idx, tid, c->ts, rec->hdr.ts);
	} else {
		t->lost++;    /* returned past its frame: left by longjmp */
	}
	free(sb_idmap_remove(g->open, tid, idx));
	return ret;
}

int sb_regions_batch(struct sb_regions *g, uint32_t tid, const struct sb_chip_batch *b)
{
	for (int i = 0; i < SB_CHIP_NDEPTH; i++)
		g->run.counts[i] += b->depth[i];
	g->run.counts[SB_CHIP_NDEPTH] += b->accesses;
	g->run.counted++;
	return thread_seen(g, tid, 0, &g->run.threads);
}

uint64_t sb_regions_open(const struct sb_regions *g, uint32_t idx)
{
	uint64_t k1, k2, n = 0;
	size_t it = 0;
	void *v;

	while (sb_idmap_next(g->open, &it, &k1, &k2, &v))
		n += k2 == idx;
	return n;
}
