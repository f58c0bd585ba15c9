// SPDX-License-Identifier: MIT
/*
 * LIME input from a hardware-path profile (`record --events hw`): LBR
 * taken-branch samples are sampled executions of CFG edges, LIME's own
 * events, so causes get kinds (branch, loop, call) as with exact counts;
 * PEBS load samples, weighted by their latency, are hardware events at
 * the load (§3.1: a load's cost against its executions).  Their superior
 * is the sampled flow through the load's block: LBR sees taken branches
 * only, so that flow is the larger of its sampled ways in and out, a
 * lower bound proportional to its executions.  Instances are pooled per
 * thread, as for the other paths (causes.c).
 *
 * An LBR edge maps to the CFG edge from the block whose last instruction
 * is its source to the block starting at its target; returns and jumps
 * into the middle of a block have none and are left out.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The CFG edge of an LBR (from, to) pair, or -1. */
static long lbr_edge(const struct sb_profile *p, const struct sb_causes_graph *g,
		     const struct sb_event_def *d)
{
	const struct sb_cfg *m = g->merged;
	long s, t;

	if (d->binary < 0 || (size_t)d->binary >= p->nbinaries)
		return -1;
	s = sb_cfg_block_at(m, SB_CFG_TAG(d->binary, d->vaddr));
	t = sb_cfg_block_at(m, SB_CFG_TAG(d->binary, d->vaddr2));
	if (s < 0 || t < 0 || SB_CFG_UNTAG(m->blocks[s].last_insn) != d->vaddr ||
	    SB_CFG_UNTAG(m->blocks[t].start) != d->vaddr2)
		return -1;
	for (uint32_t k = m->out_start[s]; k < m->out_start[s + 1]; k++)
		if (m->edges[k].dst == (uint32_t)t)
			return k;
	return -1;
}

/* Adds an instance's vector into dst, by the section's thread columns. */
static void add_vector(const struct sb_vector *v, const uint32_t *col, uint32_t nt, double *dst)
{
	for (uint32_t t = 0; t < v->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
		if (col[t] < nt)
			dst[col[t]] += (double)v->counts[t];
}

static void add_flow(double *dst, const double *src, uint32_t nt)
{
	for (uint32_t t = 0; t < nt; t++)
		dst[t] += src[t];
}

int sb_causes_pool_hw(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint32_t s, size_t **by_inst, const size_t *ninst_vec,
		      struct sb_causes_pooled *li)
{
	const struct sb_cfg *m = g->merged;
	uint32_t tids[SB_CAUSES_MAX_THREADS], nt;
	long *row = malloc((p->nevents ? p->nevents : 1) * sizeof(*row));
	long *edge_row = malloc((m->nedges ? m->nedges : 1) * sizeof(*edge_row));
	double *flow = NULL;
	size_t n = 0, total = 0;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	nt = sb_causes_threads(p, s, ninst_vec, tids, &li->time);
	/* at most: an event each, and a superior per load */
	li->ev = calloc(2 * (p->nevents ? p->nevents : 1), sizeof(*li->ev));
	li->counts = calloc(2 * (p->nevents ? p->nevents : 1) * (nt ? nt : 1), sizeof(double));
	if (!row || !edge_row || !li->time || !li->ev || !li->counts)
		goto out;
	for (size_t e = 0; e < p->nevents; e++)
		row[e] = -2;   /* not looked at yet */
	for (size_t e = 0; e < m->nedges; e++)
		edge_row[e] = -1;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		uint32_t col[SB_CAUSES_MAX_THREADS];

		if (p->instances[i].section != s || !ninst_vec[i])
			continue;
		total++;
		sb_causes_columns(&p->instances[i], tids, nt, col);
		for (size_t k = 0; k < ninst_vec[i]; k++) {
			const struct sb_vector *v = &p->vectors[by_inst[i][k]];
			const struct sb_event_def *d = &p->events[v->event];

			if (row[v->event] == -2) {
				row[v->event] = -1;
				if (d->kind == SB_EVK_EDGE) {
					long e = lbr_edge(p, g, d);

					if (e >= 0 && edge_row[e] < 0) {
						li->ev[n] = (struct sb_lime_event){
							.kind = SB_LIME_EDGE, .id = (uint32_t)e,
							.superior = -1 };
						edge_row[e] = (long)n++;
					}
					row[v->event] = e >= 0 ? edge_row[e] : -1;
				} else if (d->kind == SB_EVK_HW && d->binary >= 0 &&
					   sb_causes_event_block(p, g, d) >= 0) {
					li->ev[n] = (struct sb_lime_event){
						.kind = SB_LIME_HW,
						.id = (uint32_t)sb_causes_event_block(p, g, d),
						.superior = -1,
						.addr = SB_CFG_TAG(d->binary, d->vaddr) };
					row[v->event] = (long)n++;
				}
			}
			if (row[v->event] >= 0)
				add_vector(v, col, nt, &li->counts[(size_t)row[v->event] * nt]);
		}
	}
	/* superiors: the sampled flow through each load's block */
	flow = calloc(2 * (size_t)(nt ? nt : 1), sizeof(double));
	if (!flow)
		goto out;
	for (size_t r = 0, nr = n; r < nr; r++) {
		uint32_t b = li->ev[r].id;
		double *in = flow, *outf = flow + nt;

		if (li->ev[r].kind != SB_LIME_HW)
			continue;
		memset(flow, 0, 2 * nt * sizeof(double));
		for (uint32_t k = m->in_start[b]; k < m->in_start[b + 1]; k++)
			if (edge_row[m->in_edges[k]] >= 0)
				add_flow(in, &li->counts[(size_t)edge_row[m->in_edges[k]] * nt], nt);
		for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
			if (edge_row[k] >= 0)
				add_flow(outf, &li->counts[(size_t)edge_row[k] * nt], nt);
		for (uint32_t t = 0; t < nt; t++)
			li->counts[n * nt + t] = in[t] > outf[t] ? in[t] : outf[t];
		li->ev[n] = (struct sb_lime_event){ .kind = SB_LIME_COUNT, .id = b, .superior = -1 };
		li->ev[r].superior = (int32_t)n++;
	}
	for (size_t r = 0; r < n; r++)
		li->ev[r].counts = &li->counts[r * nt];
	sb_causes_pooled_set(li, nt, n);
	ret = total ? 0 : -ENOENT;
out:
	free(flow);
	free(row);
	free(edge_row);
	return ret;
}
