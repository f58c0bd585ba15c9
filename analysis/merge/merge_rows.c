// SPDX-License-Identifier: MIT
/* Merging the analyses' rows (merge.h): CHiP rows and sharing rows add
 * where they profile the same thing the same way; speedup stacks are one
 * run's each, kept from the newest input that has any. */
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"
#include "merge_priv.h"

/* ---- CHiP ---- */

struct chip_ctx {
	const struct sb_profile *p;
	const struct sb_chip_row *r;
};

static bool chip_same(const void *ctx, long i)
{
	const struct sb_chip_row *a = &((const struct chip_ctx *)ctx)->p->chip[i];
	const struct sb_chip_row *b = ((const struct chip_ctx *)ctx)->r;

	return a->kind == b->kind && a->section == b->section && a->region == b->region &&
	       a->mode == b->mode && a->line == b->line && a->max_bytes == b->max_bytes &&
	       a->rate_t == b->rate_t;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The footprint windows of b into a: only when both probed the same
 * windows, and the weighted means stay ascending (the reader's rule);
 * false leaves a as it was. */
static bool fp_add(struct sb_chip_row *a, const struct sb_chip_row *b)
{
	struct sb_chip_row t = *a;
	uint64_t prev = 0, pa = 0, pb = 0;

	for (int k = 0; k < SB_CHIP_ROW_WINDOWS; k++) {
		double wa, wb;

		if (!a->fp_probes[k] != !b->fp_probes[k])
			return false;
		if (!a->fp_probes[k])
			continue;
		wa = (double)a->fp_probes[k];
		wb = (double)b->fp_probes[k];
		t.fp_window_ns[k] = (uint64_t)(((double)a->fp_window_ns[k] * wa +
						(double)b->fp_window_ns[k] * wb) / (wa + wb));
		if (t.fp_window_ns[k] <= prev)
			return false;
		prev = t.fp_window_ns[k];
		t.fp_probes[k] = sat_add(a->fp_probes[k], b->fp_probes[k]);
		t.fp_touched[k] = sat_add(a->fp_touched[k], b->fp_touched[k]);
		pa = sat_add(pa, a->fp_probes[k]);
		pb = sat_add(pb, b->fp_probes[k]);
	}
	if (pa + pb)
		t.fp_universe = (uint64_t)(((double)a->fp_universe * (double)pa +
					    (double)b->fp_universe * (double)pb) /
					   ((double)pa + (double)pb));
	*a = t;
	return true;
}

static int chip_add(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nchip; i++) {
		struct sb_chip_row r = src->chip[i];
		struct chip_ctx c = { m->p, &r };
		uint64_t h;
		void **slot = NULL;
		long k;

		if (r.kind == SB_CHIP_KIND_SECTION) {
			k = r.section < src->nsections ? m->sec[r.section] : -1;
			if (k < 0)
				return SB_ERR_CORRUPT;
			r.section = (uint32_t)k;
		}
		h = sb_merge_hash(SB_MERGE_HASH0, &r.kind, sizeof(r.kind));
		h = sb_merge_hash(h, &r.section, sizeof(r.section));
		h = sb_merge_hash(h, &r.region, sizeof(r.region));
		h = sb_merge_hash(h, &r.mode, sizeof(r.mode));
		if ((k = sb_merge_find(m->chip, h, chip_same, &c, &slot)) >= 0) {
			struct sb_chip_row *d = &m->p->chip[k];

			if (fp_add(d, &r)) {
				d->accesses = sat_add(d->accesses, r.accesses);
				for (int j = 0; j < SB_CHIP_ROW_DEPTHS; j++)
					d->depth[j] = sat_add(d->depth[j], r.depth[j]);
				d->busy_ns = sat_add(d->busy_ns, r.busy_ns);
				d->reuse_samples = sat_add(d->reuse_samples, r.reuse_samples);
				d->threads = r.threads > d->threads ? r.threads : d->threads;
				d->resolved &= r.resolved;
				continue;
			}
			m->st.chip_rows_apart++;
			slot = NULL;
		} else if (!slot) {
			return SB_ERR_NOMEM;
		}
		if (sb_profile_chip_append(m->p, &r))
			return SB_ERR_NOMEM;
		/* a row kept apart is not merged into again: the first stays
		 * the one found */
		if (slot)
			*slot = (void *)(uintptr_t)m->p->nchip;
	}
	return 0;
}

/* ---- sharing ---- */

struct sharing_ctx {
	const struct sb_profile *p;
	const struct sb_sharing *r;
};

static bool sharing_same(const void *ctx, long i)
{
	const struct sb_sharing *a = &((const struct sharing_ctx *)ctx)->p->sharing[i];
	const struct sb_sharing *b = ((const struct sharing_ctx *)ctx)->r;

	return a->kind == b->kind && a->mode == b->mode && a->addr == b->addr &&
	       a->loc == b->loc && a->loc2 == b->loc2 && a->tid == b->tid &&
	       !memcmp(a->refs, b->refs, sizeof(a->refs)) &&
	       (a->name == b->name || (a->name && b->name && !strcmp(a->name, b->name))) &&
	       a->v[SB_SHV_SECTION] == b->v[SB_SHV_SECTION];
}

static long map_loc(struct sb_merge *m, const struct sb_profile *src, int32_t l)
{
	return l >= 0 && (size_t)l < src->nlocs ? m->loc[l] : -1;
}

static void sharing_sum(struct sb_sharing *d, const struct sb_sharing *r)
{
	double wd = (double)d->v[SB_SHV_SAMPLES] + 1, wr = (double)r->v[SB_SHV_SAMPLES] + 1;
	uint64_t cost = (uint64_t)(((double)d->v[SB_SHV_COST_PPM] * wd +
				    (double)r->v[SB_SHV_COST_PPM] * wr) / (wd + wr) + 0.5);
	/* not counts: the threads that took part, bytes (a bit mask), a
	 * yes/no, a share (weighted by samples) */
	uint64_t threads = d->v[SB_SHV_THREADS] > r->v[SB_SHV_THREADS] ? d->v[SB_SHV_THREADS]
									: r->v[SB_SHV_THREADS];
	uint64_t bytes = d->v[SB_SHV_BYTES_TRUE] | r->v[SB_SHV_BYTES_TRUE];
	uint64_t footprint = d->v[SB_SHV_FOOTPRINT_TRUE] || r->v[SB_SHV_FOOTPRINT_TRUE];
	uint64_t section = d->v[SB_SHV_SECTION];

	for (int j = 0; j < SB_SHV_MAX; j++)
		d->v[j] = sat_add(d->v[j], r->v[j]);
	d->v[SB_SHV_THREADS] = threads;
	d->v[SB_SHV_BYTES_TRUE] = bytes;
	d->v[SB_SHV_FOOTPRINT_TRUE] = footprint;
	d->v[SB_SHV_COST_PPM] = cost > 1000000 ? 1000000 : cost;
	d->v[SB_SHV_SECTION] = section;
}

static int sharing_add(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nsharing; i++) {
		struct sb_sharing r = src->sharing[i], *a;
		struct sharing_ctx c = { m->p, &r };
		uint64_t h, sec = r.v[SB_SHV_SECTION];
		void **slot = NULL;
		long k;

		r.loc = (int32_t)map_loc(m, src, r.loc);
		r.loc2 = (int32_t)map_loc(m, src, r.loc2);
		for (int j = 0; j < 4; j++)
			r.refs[j] = (int32_t)map_loc(m, src, r.refs[j]);
		r.v[SB_SHV_SECTION] = sec && sec <= src->nsections && m->sec[sec - 1] >= 0
					      ? (uint64_t)m->sec[sec - 1] + 1 : 0;
		h = sb_merge_hash(SB_MERGE_HASH0, &r.kind, sizeof(r.kind));
		h = sb_merge_hash(h, &r.addr, sizeof(r.addr));
		h = sb_merge_hash(h, &r.loc, sizeof(r.loc));
		h = sb_merge_hash(h, &r.tid, sizeof(r.tid));
		if ((k = sb_merge_find(m->sharing, h, sharing_same, &c, &slot)) >= 0) {
			sharing_sum(&m->p->sharing[k], &r);
			continue;
		}
		if (!slot || !(a = realloc(m->p->sharing, (m->p->nsharing + 1) * sizeof(*a))))
			return SB_ERR_NOMEM;
		m->p->sharing = a;
		if (r.name && !(r.name = strdup(r.name)))
			return SB_ERR_NOMEM;
		a[m->p->nsharing++] = r;
		*slot = (void *)(uintptr_t)m->p->nsharing;
	}
	return 0;
}

/* ---- speedup stacks ---- */

static int stack_add(struct sb_merge *m, const struct sb_profile *src)
{
	if (!src->nstack)
		return 0;
	m->st.stack_rows_dropped += m->p->nstack;
	m->p->nstack = 0;
	for (size_t i = 0; i < src->nstack; i++) {
		struct sb_stack_row r = src->stack[i];

		if (r.section >= src->nsections || m->sec[r.section] < 0)
			return SB_ERR_CORRUPT;
		r.section = (uint32_t)m->sec[r.section];
		if (sb_profile_stack_append(m->p, &r))
			return SB_ERR_NOMEM;
	}
	return 0;
}

int sb_merge_rows(struct sb_merge *m, const struct sb_profile *src)
{
	int ret = chip_add(m, src);

	ret = ret ? ret : sharing_add(m, src);
	return ret ? ret : stack_add(m, src);
}
