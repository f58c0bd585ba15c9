// SPDX-License-Identifier: MIT
/* Exact edge counts from exact block counts: see cfg_flow.h. */
#include "cfg_flow.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct solver {
	const struct sb_cfg *g;
	struct sb_cfg_flow *f;
	uint8_t *active;     /* per block: its function has a known block */
	bool changed;
};

static bool flow(const struct sb_cfg_edge *e)
{
	return e->kind != SB_EDGE_CALL;
}

static bool is_entry(const struct sb_cfg *g, uint32_t b)
{
	return g->funcs[g->blocks[b].func].first_block == b;
}

static double *bvec(struct solver *s, uint32_t b)
{
	return &s->f->block[(size_t)b * s->f->nt];
}

static double *evec(struct solver *s, uint32_t e)
{
	return &s->f->edge[(size_t)e * s->f->nt];
}

static void set_block(struct solver *s, uint32_t b, const double *v)
{
	memcpy(bvec(s, b), v, s->f->nt * sizeof(double));
	s->f->block_known[b] = 1;
	s->changed = true;
}

static void set_edge(struct solver *s, uint32_t e, const double *v)
{
	memcpy(evec(s, e), v, s->f->nt * sizeof(double));
	s->f->edge_known[e] = 1;
	s->changed = true;
}

/*
 * One side of block b: its flow edges out (out) or in.  Knowing the block
 * and all edges but one gives that one; knowing all edges gives the block.
 */
static void balance(struct solver *s, uint32_t b, bool out, double *tmp)
{
	const struct sb_cfg *g = s->g;
	uint32_t lo = out ? g->out_start[b] : g->in_start[b];
	uint32_t hi = out ? g->out_start[b + 1] : g->in_start[b + 1];
	uint32_t nflow = 0, nunknown = 0, unknown = 0;

	for (uint32_t k = lo; k < hi; k++) {
		uint32_t e = out ? k : g->in_edges[k];

		if (!flow(&g->edges[e]) || !s->active[out ? g->edges[e].dst : g->edges[e].src])
			continue;
		nflow++;
		if (!s->f->edge_known[e]) {
			nunknown++;
			unknown = e;
		}
	}
	if (!nflow || (nunknown == 0 && s->f->block_known[b]) ||
	    (nunknown && !s->f->block_known[b]) || nunknown > 1)
		return;
	memset(tmp, 0, s->f->nt * sizeof(double));
	for (uint32_t k = lo; k < hi; k++) {
		uint32_t e = out ? k : g->in_edges[k];

		if (!flow(&g->edges[e]) || !s->active[out ? g->edges[e].dst : g->edges[e].src] ||
		    !s->f->edge_known[e])
			continue;
		for (uint32_t t = 0; t < s->f->nt; t++)
			tmp[t] += evec(s, e)[t];
	}
	if (!nunknown) {
		set_block(s, b, tmp);
		return;
	}
	for (uint32_t t = 0; t < s->f->nt; t++) {
		tmp[t] = bvec(s, b)[t] - tmp[t];
		if (tmp[t] < 0) {
			s->f->inconsistent++;
			tmp[t] = 0;
		}
	}
	set_edge(s, unknown, tmp);
}

static void solve(struct solver *s, double *tmp)
{
	const struct sb_cfg *g = s->g;

	do {
		s->changed = false;
		for (uint32_t b = 0; b < g->nblocks; b++) {
			if (!s->active[b])
				continue;
			balance(s, b, true, tmp);
			/* calls enter a function's entry too: its in-side does
			 * not balance */
			if (!is_entry(g, b))
				balance(s, b, false, tmp);
		}
	} while (s->changed);
	for (uint32_t e = 0; e < g->nedges; e++) {
		const struct sb_cfg_edge *ed = &g->edges[e];

		if (!flow(ed) && s->active[ed->src] && s->active[ed->dst] &&
		    s->f->block_known[ed->src] && !s->f->edge_known[e])
			set_edge(s, e, bvec(s, ed->src));
	}
}

/*
 * A block neither the function's entry nor any counted block reaches by
 * flow edges never runs: alignment padding after a jump, which a linear
 * sweep makes a block falling into the next one.  Its count is 0, so it
 * does not hide the true predecessor of that next block.  (Counted blocks
 * are roots too: a jump table's targets have no edges in.)
 */
static int zero_unreachable(struct solver *s, double *zero)
{
	const struct sb_cfg *g = s->g;
	uint32_t *stack = malloc((g->nblocks ? g->nblocks : 1) * sizeof(*stack));
	uint8_t *seen = calloc(g->nblocks ? g->nblocks : 1, 1);
	size_t sp = 0;

	if (!stack || !seen) {
		free(stack);
		free(seen);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (s->active[b] && (s->f->block_known[b] || is_entry(g, b))) {
			seen[b] = 1;
			stack[sp++] = b;
		}
	while (sp) {
		uint32_t b = stack[--sp];

		for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++) {
			uint32_t d = g->edges[k].dst;

			if (flow(&g->edges[k]) && s->active[d] && !seen[d]) {
				seen[d] = 1;
				stack[sp++] = d;
			}
		}
	}
	memset(zero, 0, s->f->nt * sizeof(double));
	for (uint32_t b = 0; b < g->nblocks; b++) {
		if (!s->active[b] || seen[b])
			continue;
		set_block(s, b, zero);
		for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
			if (flow(&g->edges[k]))
				set_edge(s, k, zero);
	}
	free(stack);
	free(seen);
	return 0;
}

int sb_cfg_flow_solve(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
			const double *counts, struct sb_cfg_flow *out)
{
	struct solver s = { .g = g, .f = out };
	uint8_t *func_on = calloc(g->nfuncs ? g->nfuncs : 1, 1);
	double *tmp = malloc((nt ? nt : 1) * sizeof(double));
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->nt = nt;
	out->block_known = calloc(g->nblocks ? g->nblocks : 1, 1);
	out->edge_known = calloc(g->nedges ? g->nedges : 1, 1);
	s.active = calloc(g->nblocks ? g->nblocks : 1, 1);
	if (!func_on || !tmp || !out->block_known || !out->edge_known || !s.active)
		goto out;
	/* Per-thread arrays for every block and edge: the graph is the
	 * profile's, which holds the binaries that were sampled. */
	out->block = calloc((g->nblocks ? g->nblocks : 1) * (size_t)nt, sizeof(double));
	out->edge = calloc((g->nedges ? g->nedges : 1) * (size_t)nt, sizeof(double));
	if (!out->block || !out->edge)
		goto out;
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (known[b]) {
			func_on[g->blocks[b].func] = 1;
			memcpy(bvec(&s, b), &counts[(size_t)b * nt], nt * sizeof(double));
			out->block_known[b] = 1;
		}
	for (uint32_t b = 0; b < g->nblocks; b++)
		s.active[b] = func_on[g->blocks[b].func];
	if (zero_unreachable(&s, tmp))
		goto out;
	solve(&s, tmp);
	ret = 0;
out:
	free(func_on);
	free(tmp);
	free(s.active);
	if (ret)
		sb_cfg_flow_free(out);
	return ret;
}

void sb_cfg_flow_free(struct sb_cfg_flow *f)
{
	free(f->block);
	free(f->edge);
	free(f->block_known);
	free(f->edge_known);
	memset(f, 0, sizeof(*f));
}
