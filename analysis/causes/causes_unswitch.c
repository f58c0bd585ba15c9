// SPDX-License-Identifier: MIT
/*
 * Exact mode: a loop the compiler copied, and the test that chooses the
 * copy (causes_priv.h, sb_causes_copy_selector).
 *
 * A loop-invariant test inside a loop (`for (it...) { work(); if (!self)
 * extra(); barrier(); }`) is hoisted by loop unswitching (gcc and clang
 * at -O3): the test runs once, before the loop, and selects one of two
 * copies of the loop, with and without the extra work.  Inside a section
 * instance the test does not run at all; what differs between threads is
 * which copy's blocks run, so LIME's leader is an edge of one copy (its
 * back edge: a LOOP cause at the `for` line, or a branch of it), a line
 * that decides nothing: every thread goes round the loop once per
 * instance, in one copy or the other.
 *
 * The copies keep their source lines, so the counts show it: the counted
 * blocks of the leader's line in its function, summed over both copies,
 * are the same for every thread of an instance (the sum centred per
 * instance has almost no variance: at most SAME_TOL of the leader's
 * copy's), while the leader's copy alone varies.  The decision is then
 * the branch that led into the leader's copy: walking back from the
 * copy's loop header along its only way in (the preheader, straight-line
 * blocks), the first conditional branch, outside the loop.
 */
#include "causes_priv.h"

#include <stdlib.h>
#include <string.h>

#include "causes_loops.h"
#include "cfg/cfg.h"

#define SAME_TOL 0.05
#define WALK 16

static bool same_line(const struct sb_profile *p, int32_t a, int32_t b)
{
	const struct sb_loc *x, *y;

	if (a < 0 || b < 0 || (size_t)a >= p->nlocs || (size_t)b >= p->nlocs)
		return false;
	x = &p->locs[a];
	y = &p->locs[b];
	return x->line && x->line == y->line && x->binary == y->binary &&
	       !x->file == !y->file && (!x->file || !strcmp(x->file, y->file));
}

/* The conditional branch that leads into the loop headed by h: back along
 * the only way in that is no back edge, through straight-line blocks.
 * -1 when the way in is not one branch's edge. */
static long way_in(const struct sb_cfg *m, uint32_t h, const uint8_t *body)
{
	uint32_t cur = h, first = m->funcs[m->blocks[h].func].first_block;

	for (int steps = 0; steps < WALK; steps++) {
		const struct sb_cfg_edge *in = NULL;

		for (uint32_t k = m->in_start[cur]; k < m->in_start[cur + 1]; k++) {
			const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];

			if (e->back || e->kind == SB_EDGE_CALL)
				continue;
			if (in)
				return -1;       /* two ways in: a join, not one path */
			in = e;
		}
		if (!in || m->blocks[in->src].func != m->blocks[h].func || body[in->src - first])
			return -1;
		if (in->kind == SB_EDGE_TAKEN || in->kind == SB_EDGE_FALLTHROUGH)
			return sb_cfg_nout(m, in->src) >= 2 ? (long)in->src : -1;
		if (in->kind != SB_EDGE_SEQUENTIAL && in->kind != SB_EDGE_JUMP &&
		    in->kind != SB_EDGE_CALL_RETURN)
			return -1;
		cur = in->src;
	}
	return -1;
}

long sb_causes_copy_selector(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, uint32_t blk, int32_t line)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f = m->blocks[blk].func, first = m->funcs[f].first_block;
	uint32_t nb = m->funcs[f].nblocks;
	uint8_t *body = malloc(nb ? nb : 1), *sel = calloc(p->nevents ? p->nevents : 1, 1);
	size_t n = 0, *start = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*start));
	double *mine = NULL, *all = NULL, vm = 0, va = 0;
	bool inside = false, outside = false;
	long h, res = -1;

	if (!body || !sel || !start || (h = sb_causes_loop_of(m, blk, body)) < 0)
		goto out;
	/* the counted blocks of the line in this function: 1 in the leader's
	 * loop, 2 in another copy */
	for (size_t e = 0; e < p->nevents; e++) {
		const struct sb_event_def *d = &p->events[e];
		long b;

		if (d->kind != SB_EVK_BLOCK_COUNT || !same_line(p, d->loc2, line) ||
		    (b = sb_causes_event_block(p, g, d)) < 0 || m->blocks[b].func != f)
			continue;
		sel[e] = body[b - first] ? 1 : 2;
		inside |= sel[e] == 1;
		outside |= sel[e] == 2;
	}
	if (!inside || !outside)
		goto out;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		start[i] = n;
		n += p->instances[i].section == s ? p->instances[i].nthreads : 0;
	}
	mine = calloc(n ? n : 1, sizeof(*mine));
	all = calloc(n ? n : 1, sizeof(*all));
	if (!mine || !all)
		goto out;
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section != s || !sel[x->event])
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++) {
			all[start[x->instance] + t] += (double)x->counts[t];
			if (sel[x->event] == 1)
				mine[start[x->instance] + t] += (double)x->counts[t];
		}
	}
	/* variances of the pairs centred on their instance */
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		double mm = 0, ma = 0;

		if (in->section != s || !in->nthreads)
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++) {
			mm += mine[start[i] + t] / in->nthreads;
			ma += all[start[i] + t] / in->nthreads;
		}
		for (uint32_t t = 0; t < in->nthreads; t++) {
			vm += (mine[start[i] + t] - mm) * (mine[start[i] + t] - mm);
			va += (all[start[i] + t] - ma) * (all[start[i] + t] - ma);
		}
	}
	if (vm > 0 && va <= SAME_TOL * vm)
		res = way_in(m, (uint32_t)h, body);
out:
	free(body);
	free(sel);
	free(start);
	free(mine);
	free(all);
	return res;
}
