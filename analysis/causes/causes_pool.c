// SPDX-License-Identifier: MIT
/*
 * What the three ways of pooling a section's instances share
 * (causes_priv.h): the profile's CFGs as one graph, a profile event's
 * block in it, the section's threads as columns, and the LIME instance
 * they fill.  The driver (causes.c) and the pooling paths (causes.c for
 * block samples, causes_exact.c, causes_hw.c) call down into this file;
 * it calls none of them.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "cfg/cfg_io.h"

int sb_causes_graph_load(const struct sb_profile *p, struct sb_causes_graph *g,
			 char *err, size_t errlen)
{
	size_t nbin = p->nbinaries;

	memset(g, 0, sizeof(*g));
	g->per_bin = calloc(nbin ? nbin : 1, sizeof(*g->per_bin));
	g->offset = calloc(nbin ? nbin : 1, sizeof(*g->offset));
	if (!g->per_bin || !g->offset)
		return -ENOMEM;
	for (size_t i = 0; i < p->ncfgs; i++) {
		const struct sb_cfg_blob *b = &p->cfgs[i];
		char why[256];

		if (b->binary < 0 || (size_t)b->binary >= nbin || g->per_bin[b->binary])
			continue;
		if (sb_cfg_deserialize(b->data, b->len, &g->per_bin[b->binary], why,
				       sizeof(why))) {
			snprintf(err, errlen, "the CFG of %s in the profile cannot be read: %s",
				 p->binaries[b->binary].path, why);
			return -EINVAL;
		}
	}
	g->merged = sb_cfg_merge(g->per_bin, nbin, g->offset);
	return g->merged ? 0 : -ENOMEM;
}

void sb_causes_graph_free(struct sb_causes_graph *g, size_t nbin)
{
	for (size_t i = 0; g->per_bin && i < nbin; i++)
		sb_cfg_free(g->per_bin[i]);
	free(g->per_bin);
	free(g->offset);
	sb_cfg_free(g->merged);
}

long sb_causes_event_block(const struct sb_profile *p, const struct sb_causes_graph *g,
			   const struct sb_event_def *d)
{
	long b;

	if (d->binary < 0 || (size_t)d->binary >= p->nbinaries || !g->per_bin[d->binary])
		return -1;
	b = sb_cfg_block_at(g->per_bin[d->binary], d->vaddr);
	return b < 0 ? -1 : (long)g->offset[d->binary] + b;
}

bool sb_causes_same_line(const struct sb_loc *a, const struct sb_loc *b)
{
	return a->line == b->line && a->binary == b->binary && !a->file == !b->file &&
	       (!a->file || !strcmp(a->file, b->file));
}

long sb_causes_cause_block(const struct sb_profile *p, const struct sb_causes_graph *g,
			   const struct sb_cause *c)
{
	long b = c->binary >= 0 ? sb_cfg_block_at(g->merged, SB_CFG_TAG(c->binary, c->addr)) : -1;

	return b >= 0 ? b : c->loc >= 0 ? sb_causes_loc_block(p, g, (uint32_t)c->loc) : -1;
}

long sb_causes_loc_block(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t loc)
{
	const struct sb_loc *l = loc < p->nlocs ? &p->locs[loc] : NULL;
	long b;

	if (!l || l->binary < 0 || (size_t)l->binary >= p->nbinaries || !g->per_bin[l->binary])
		return -1;
	b = sb_cfg_block_at(g->per_bin[l->binary], l->offset);
	return b < 0 ? -1 : (long)g->offset[l->binary] + b;
}

uint32_t sb_causes_threads(const struct sb_profile *p, uint32_t s, const size_t *ninst_vec,
			   uint32_t *tids, double **time)
{
	uint32_t nt = 0;

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s || !ninst_vec[i])
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++) {
			uint32_t k = 0;

			while (k < nt && tids[k] != in->per_thread[t].tid)
				k++;
			if (k == nt && nt < SB_CAUSES_MAX_THREADS)
				tids[nt++] = in->per_thread[t].tid;
		}
	}
	*time = calloc(nt ? nt : 1, sizeof(double));
	for (uint32_t i = 0; *time && i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t col[SB_CAUSES_MAX_THREADS];

		if (in->section != s || !ninst_vec[i])
			continue;
		sb_causes_columns(in, tids, nt, col);
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			if (col[t] < nt)
				(*time)[col[t]] += (double)in->per_thread[t].busy_ns;
	}
	return nt;
}

void sb_causes_columns(const struct sb_instance *in, const uint32_t *tids, uint32_t nt,
		       uint32_t *col)
{
	for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
		for (col[t] = 0; col[t] < nt && tids[col[t]] != in->per_thread[t].tid; col[t]++)
			;
}

void sb_causes_pooled_set(struct sb_causes_pooled *li, uint32_t nt, size_t nevents)
{
	double max = 0, idle = 0;

	for (uint32_t t = 0; t < nt; t++)
		if (li->time[t] > max)
			max = li->time[t];
	for (uint32_t t = 0; max > 0 && t < nt; t++)
		idle += (max - li->time[t]) / max;
	li->in.nthreads = nt;
	li->in.time = li->time;
	li->in.imbalance = nt ? idle / nt : 0;
	li->in.nevents = nevents;
	li->in.events = li->ev;
}

void sb_causes_pooled_free(struct sb_causes_pooled *li)
{
	free(li->ev);
	free(li->counts);
	free(li->time);
}


double sb_causes_lost(const struct sb_instance *in)
{
	double mx = 0, lost = 0;

	for (uint32_t t = 0; t < in->nthreads; t++)
		if ((double)in->per_thread[t].busy_ns > mx)
			mx = (double)in->per_thread[t].busy_ns;
	for (uint32_t t = 0; t < in->nthreads; t++)
		lost += mx - (double)in->per_thread[t].busy_ns;
	return lost;
}

static int by_lost(const void *a, const void *b, void *ctx)
{
	const struct sb_profile *p = ctx;
	double x = sb_causes_lost(&p->instances[*(const uint32_t *)a]);
	double y = sb_causes_lost(&p->instances[*(const uint32_t *)b]);

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void sb_causes_sort_by_lost(const struct sb_profile *p, uint32_t *inst, size_t n)
{
	qsort_r(inst, n, sizeof(*inst), by_lost, (void *)p);
}

/*
 * The nearest line of block b (merged index) when no event names it (a
 * block no sample hit): of the profile's locations inside the block (any
 * sampled or unwound address), the last one with a line, nearest the
 * block's branch.  -1 when there is none.
 */
int32_t sb_causes_block_line(const struct sb_profile *p, const struct sb_causes_graph *g,
				     uint32_t b)
{
	uint64_t start = SB_CFG_UNTAG(g->merged->blocks[b].start);
	uint64_t end = SB_CFG_UNTAG(g->merged->blocks[b].end);
	uint32_t slot = SB_CFG_SLOT(g->merged->blocks[b].start);
	int32_t best = -1;

	for (size_t i = 0; i < p->nlocs; i++) {
		const struct sb_loc *l = &p->locs[i];

		if (l->binary != (int32_t)slot || l->offset < start || l->offset >= end || !l->line)
			continue;
		if (best < 0 || l->offset > p->locs[best].offset)
			best = (int32_t)i;
	}
	return best;
}
