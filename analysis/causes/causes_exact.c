// SPDX-License-Identifier: MIT
/*
 * LIME input from an exact-mode profile (causes_priv.h).  Exact block
 * counts become exact edge counts (cfg_flow.h), LIME's own events: the
 * leader rule and the cause kinds (branch, loop, call) then work as in the
 * paper.  The same run's cpu-clock samples per block measure time; each
 * becomes a hardware event whose superior is its block's exact count, so
 * Gram-Schmidt (§3.1) keeps only the time that executions do not explain:
 * identical control flow with slower iterations (cache misses) is then a
 * hardware cause at the load.  Sampled blocks without counts (libraries)
 * are hardware events with no superior.
 *
 * Instances are pooled per thread, as for samples (causes.c): the sampled
 * events need it, and counts pooled over instances keep their exact ratios.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg_flow.h"

struct pool {
	uint32_t nt;
	uint32_t tids[SB_CAUSES_MAX_THREADS];
	uint8_t *known;          /* merged blocks with exact counts */
	double *bcount;          /* nblocks * nt */
	long *srow;              /* profile event -> sampled row, or -1 */
	uint32_t *sblock;        /* sampled row -> merged block */
	uint32_t *sevent;        /* sampled row -> profile event */
	double *scount;          /* sampled rows * nt */
	size_t nsampled;
};

static void pool_free(struct pool *pl)
{
	free(pl->known);
	free(pl->bcount);
	free(pl->srow);
	free(pl->sblock);
	free(pl->sevent);
	free(pl->scount);
}

/* Sums section s's vectors per thread: exact counts by block, samples by
 * event.  Returns the instances pooled, or -ENOMEM. */
static long pool_fill(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint32_t s, size_t **by_inst, const size_t *ninst_vec, struct pool *pl)
{
	size_t nb = g->merged->nblocks, nt = pl->nt;
	long total = 0;

	pl->known = calloc(nb ? nb : 1, 1);
	pl->bcount = calloc((nb ? nb : 1) * (nt ? nt : 1), sizeof(double));
	pl->srow = malloc((p->nevents ? p->nevents : 1) * sizeof(long));
	pl->sblock = malloc((p->nevents ? p->nevents : 1) * sizeof(uint32_t));
	pl->sevent = malloc((p->nevents ? p->nevents : 1) * sizeof(uint32_t));
	pl->scount = calloc((p->nevents ? p->nevents : 1) * (nt ? nt : 1), sizeof(double));
	if (!pl->known || !pl->bcount || !pl->srow || !pl->sblock || !pl->sevent || !pl->scount)
		return -ENOMEM;
	for (size_t e = 0; e < p->nevents; e++)
		pl->srow[e] = -1;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		uint32_t col[SB_CAUSES_MAX_THREADS];

		if (p->instances[i].section != s || !ninst_vec[i])
			continue;
		total++;
		sb_causes_columns(&p->instances[i], pl->tids, pl->nt, col);
		for (size_t v = 0; v < ninst_vec[i]; v++) {
			const struct sb_vector *vec = &p->vectors[by_inst[i][v]];
			const struct sb_event_def *d = &p->events[vec->event];
			long b = sb_causes_event_block(p, g, d);
			double *dst;

			if (b < 0)
				continue;
			if (d->kind == SB_EVK_BLOCK_COUNT) {
				pl->known[b] = 1;
				dst = &pl->bcount[(size_t)b * nt];
			} else if (d->kind == SB_EVK_BLOCK_SAMPLES) {
				if (pl->srow[vec->event] < 0) {
					pl->sblock[pl->nsampled] = (uint32_t)b;
					pl->sevent[pl->nsampled] = vec->event;
					pl->srow[vec->event] = (long)pl->nsampled++;
				}
				dst = &pl->scount[(size_t)pl->srow[vec->event] * nt];
			} else {
				continue;
			}
			for (uint32_t t = 0; t < vec->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
				if (col[t] < nt)
					dst[col[t]] += (double)vec->counts[t];
		}
	}
	return total;
}

int sb_causes_pool_exact(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			 struct sb_causes_pooled *li)
{
	const struct sb_cfg *m = g->merged;
	struct pool pl = { 0 };
	struct sb_cfg_flow fl = { 0 };
	size_t n = 0, cap, nt;
	long *count_ev = NULL, total;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	pl.nt = sb_causes_threads(p, s, ninst_vec, pl.tids, &li->time);
	nt = pl.nt;
	if (!li->time || (total = pool_fill(p, g, s, by_inst, ninst_vec, &pl)) < 0)
		goto out;
	if (sb_cfg_flow_solve(m, pl.nt, pl.known, pl.bcount, &fl))
		goto out;
	cap = pl.nsampled * 2;
	for (size_t e = 0; e < m->nedges; e++)
		cap += fl.edge_known[e];
	li->ev = calloc(cap ? cap : 1, sizeof(*li->ev));
	count_ev = malloc((m->nblocks ? m->nblocks : 1) * sizeof(long));
	/* the events point into counts: edges and block counts are copied */
	li->counts = calloc((cap ? cap : 1) * (nt ? nt : 1), sizeof(double));
	if (!li->ev || !count_ev || !li->counts)
		goto out;
	for (size_t e = 0; e < m->nedges; e++) {
		if (!fl.edge_known[e])
			continue;
		memcpy(&li->counts[n * nt], &fl.edge[e * nt], nt * sizeof(double));
		li->ev[n] = (struct sb_lime_event){ .kind = SB_LIME_EDGE, .id = (uint32_t)e,
						    .superior = -1, .counts = &li->counts[n * nt] };
		n++;
	}
	for (size_t b = 0; b < m->nblocks; b++)
		count_ev[b] = -1;
	for (size_t r = 0; r < pl.nsampled; r++) {
		uint32_t b = pl.sblock[r];
		const struct sb_event_def *d = &p->events[pl.sevent[r]];

		if (fl.block_known[b] && count_ev[b] < 0) {
			memcpy(&li->counts[n * nt], &fl.block[(size_t)b * nt], nt * sizeof(double));
			li->ev[n] = (struct sb_lime_event){ .kind = SB_LIME_COUNT, .id = b,
							    .superior = -1,
							    .counts = &li->counts[n * nt] };
			count_ev[b] = (long)n++;
		}
		memcpy(&li->counts[n * nt], &pl.scount[r * nt], nt * sizeof(double));
		li->ev[n] = (struct sb_lime_event){
			.kind = SB_LIME_HW, .id = b,
			.superior = fl.block_known[b] ? (int32_t)count_ev[b] : -1,
			.addr = SB_CFG_TAG(d->binary, d->vaddr),
			.counts = &li->counts[n * nt],
		};
		n++;
	}
	sb_causes_pooled_set(li, pl.nt, n);
	ret = total ? 0 : -ENOENT;
out:
	free(count_ev);
	sb_cfg_flow_free(&fl);
	pool_free(&pl);
	return ret;
}
