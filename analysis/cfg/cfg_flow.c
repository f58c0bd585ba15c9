// SPDX-License-Identifier: MIT
/* Exact edge counts from exact block counts: see cfg_flow.h. */
#include "cfg_flow.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* An unknown: flow from node a to node b.  Nodes: 2 lb (a block's way
 * in), 2 lb + 1 (its way out), and `outside`. */
struct var {
	uint32_t a, b;
	uint32_t block;      /* the block whose count it is, or NONE */
	uint32_t edge;       /* the CFG edge whose count it is, or NONE */
};

struct solver {
	const struct sb_cfg *g;
	struct sb_cfg_flow *f;
	uint8_t *active;     /* per block: its function has a known block */
	uint8_t *zero;       /* per block: never runs (padding) */
	uint32_t *lb;        /* block -> local index, or NONE */
	uint32_t nab, outside;
	struct var *v;
	size_t nv, capv;
	uint8_t *bridge;     /* per var */
	uint32_t *comp;      /* per node */
	uint32_t ncomp;
};

#define NONE SB_CFG_FLOW_NONE

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
	return &s->f->block[(size_t)s->f->brow[b] * s->f->nt];
}

static double *evec(struct solver *s, uint32_t e)
{
	return &s->f->edge[(size_t)s->f->erow[e] * s->f->nt];
}

static int add_var(struct solver *s, uint32_t a, uint32_t b, uint32_t block, uint32_t edge)
{
	if (s->nv == s->capv) {
		size_t cap = s->capv ? 2 * s->capv : 256;
		struct var *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->capv = cap;
	}
	s->v[s->nv++] = (struct var){ a, b, block, edge };
	return 0;
}

/*
 * A block neither the function's entry nor any counted block reaches by
 * flow edges never runs: alignment padding after a jump, which a linear
 * sweep makes a block falling into the next one.  Its count is 0, so it
 * does not hide the true predecessor of that next block.  (Counted blocks
 * are roots too: a jump table's targets have no edges in.)
 */
static int zero_unreachable(struct solver *s, const uint8_t *known)
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
		if (s->active[b] && (known[b] || is_entry(g, b))) {
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
	for (uint32_t b = 0; b < g->nblocks; b++)
		s->zero[b] = s->active[b] && !seen[b];
	free(stack);
	free(seen);
	return 0;
}

/* The unknowns of the solved functions (see the header). */
static int build_vars(struct solver *s, const uint8_t *known, const uint8_t *cut)
{
	const struct sb_cfg *g = s->g;
	int err = 0;

	for (uint32_t b = 0; b < g->nblocks && !err; b++) {
		uint32_t l = s->lb[b], nin = 0, nout = 0;

		if (l == NONE || s->zero[b])
			continue;
		if (!known[b])
			err = add_var(s, 2 * l, 2 * l + 1, b, NONE);
		for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++)
			nin += flow(&g->edges[g->in_edges[k]]);
		for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
			nout += flow(&g->edges[k]);
		/* calls enter a function's entry; a block with no way in is
		 * entered some way the graph does not show (a jump table) */
		if (!err && (is_entry(g, b) || !nin))
			err = add_var(s, s->outside, 2 * l, NONE, NONE);
		if (!err && !nout)
			err = add_var(s, 2 * l + 1, s->outside, NONE, NONE);
	}
	for (uint32_t e = 0; e < g->nedges && !err; e++) {
		const struct sb_cfg_edge *ed = &g->edges[e];
		uint32_t ls = s->lb[ed->src], ld = s->lb[ed->dst];

		if (!flow(ed) || (ls == NONE && ld == NONE))
			continue;
		if (ls != NONE && s->zero[ed->src])
			continue;   /* known 0 */
		if (ls != NONE && ld != NONE && !(cut && cut[ed->src] &&
						  ed->kind == SB_EDGE_CALL_RETURN)) {
			err = add_var(s, 2 * ls + 1, 2 * ld, NONE, e);
			continue;
		}
		/* the counts stop at one side: each side meets the outside */
		if (ls != NONE)
			err = add_var(s, 2 * ls + 1, s->outside, NONE, NONE);
		if (!err && ld != NONE && !s->zero[ed->dst])
			err = add_var(s, s->outside, 2 * ld, NONE, NONE);
	}
	return err;
}

/* Bridges of the unknowns' graph (Tarjan, iterative, by var so that
 * parallel unknowns are a cycle), then its components without them. */
static int find_bridges(struct solver *s)
{
	uint32_t nn = s->outside + 1;
	uint32_t *start = calloc(nn + 1, sizeof(*start)), *adj = NULL;
	uint32_t *disc = NULL, *low = NULL, *stk = NULL, *it = NULL, *pvar = NULL;
	uint32_t time = 0;
	int err = -ENOMEM;

	s->bridge = calloc(s->nv ? s->nv : 1, 1);
	s->comp = malloc(nn * sizeof(*s->comp));
	adj = malloc((2 * s->nv + 1) * sizeof(*adj));
	disc = calloc(nn, sizeof(*disc));
	low = malloc(nn * sizeof(*low));
	stk = malloc(nn * sizeof(*stk));
	it = malloc(nn * sizeof(*it));
	pvar = malloc(nn * sizeof(*pvar));
	if (!start || !s->bridge || !s->comp || !adj || !disc || !low || !stk || !it || !pvar)
		goto out;
	for (size_t i = 0; i < s->nv; i++) {
		start[s->v[i].a + 1]++;
		start[s->v[i].b + 1]++;
	}
	for (uint32_t n = 0; n < nn; n++)
		start[n + 1] += start[n];
	memcpy(it, start, nn * sizeof(*it));
	for (size_t i = 0; i < s->nv; i++) {
		adj[it[s->v[i].a]++] = (uint32_t)i;
		adj[it[s->v[i].b]++] = (uint32_t)i;
	}
	for (uint32_t r = 0; r < nn; r++) {
		size_t sp = 0;

		if (disc[r])
			continue;
		disc[r] = low[r] = ++time;
		it[r] = start[r];
		pvar[r] = NONE;
		stk[sp++] = r;
		while (sp) {
			uint32_t u = stk[sp - 1];

			if (it[u] < start[u + 1]) {
				uint32_t vi = adj[it[u]++];
				uint32_t w = s->v[vi].a == u ? s->v[vi].b : s->v[vi].a;

				if (vi == pvar[u])
					continue;
				if (!disc[w]) {
					disc[w] = low[w] = ++time;
					it[w] = start[w];
					pvar[w] = vi;
					stk[sp++] = w;
				} else if (disc[w] < low[u]) {
					low[u] = disc[w];
				}
				continue;
			}
			sp--;
			if (pvar[u] != NONE) {
				const struct var *pv = &s->v[pvar[u]];
				uint32_t p = pv->a == u ? pv->b : pv->a;

				if (low[u] < low[p])
					low[p] = low[u];
				if (low[u] > disc[p])
					s->bridge[pvar[u]] = 1;
			}
		}
	}
	/* components joined by the unknowns that are not bridges */
	for (uint32_t n = 0; n < nn; n++)
		s->comp[n] = NONE;
	s->ncomp = 0;
	for (uint32_t r = 0; r < nn; r++) {
		size_t sp = 0;

		if (s->comp[r] != NONE)
			continue;
		s->comp[r] = s->ncomp;
		stk[sp++] = r;
		while (sp) {
			uint32_t u = stk[--sp];

			for (uint32_t k = start[u]; k < start[u + 1]; k++) {
				const struct var *x = &s->v[adj[k]];
				uint32_t w = x->a == u ? x->b : x->a;

				if (!s->bridge[adj[k]] && s->comp[w] == NONE) {
					s->comp[w] = s->ncomp;
					stk[sp++] = w;
				}
			}
		}
		s->ncomp++;
	}
	err = 0;
out:
	free(start);
	free(adj);
	free(disc);
	free(low);
	free(stk);
	free(it);
	free(pvar);
	return err;
}

/* Stores a solved unknown's value where it belongs. */
static void store(struct solver *s, const struct var *x, const double *val)
{
	uint32_t nt = s->f->nt;

	if (x->block != NONE) {
		memcpy(bvec(s, x->block), val, nt * sizeof(double));
		s->f->block_known[x->block] = 1;
	}
	if (x->edge != NONE) {
		memcpy(evec(s, x->edge), val, nt * sizeof(double));
		s->f->edge_known[x->edge] = 1;
	}
}

/*
 * Each component's known net inflow K (known in - known out, summed over
 * its nodes: the unknowns inside cancel); a leaf of the bridge tree then
 * balances with its one bridge: x = -K entering it, K leaving it.
 */
static int solve_bridges(struct solver *s)
{
	const struct sb_cfg *g = s->g;
	uint32_t nt = s->f->nt, nc = s->ncomp;
	double *K = calloc((size_t)(nc ? nc : 1) * nt, sizeof(double));
	double *x = malloc((nt ? nt : 1) * sizeof(double));
	uint32_t *deg = calloc(nc ? nc : 1, sizeof(*deg)), *cstart = calloc(nc + 2, sizeof(*cstart));
	uint32_t *cb = NULL, *queue = NULL;
	uint8_t *done = NULL;
	size_t nb = 0, qh = 0, qt = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < s->nv; i++)
		nb += s->bridge[i];
	cb = malloc((2 * nb + 1) * sizeof(*cb));
	queue = malloc((nc ? nc : 1) * sizeof(*queue));
	done = calloc(s->nv ? s->nv : 1, 1);
	if (!K || !x || !deg || !cstart || !cb || !queue || !done)
		goto out;
	for (uint32_t b = 0; b < g->nblocks; b++) {
		uint32_t l = s->lb[b];
		const double *c;

		if (l == NONE || s->zero[b] || !s->f->block_known[b])
			continue;
		c = bvec(s, b);
		for (uint32_t t = 0; t < nt; t++) {
			K[(size_t)s->comp[2 * l] * nt + t] -= c[t];
			K[(size_t)s->comp[2 * l + 1] * nt + t] += c[t];
		}
	}
	for (size_t i = 0; i < s->nv; i++)
		if (s->bridge[i]) {
			cstart[s->comp[s->v[i].a] + 2]++;
			cstart[s->comp[s->v[i].b] + 2]++;
		}
	for (uint32_t c = 0; c < nc; c++) {
		deg[c] = cstart[c + 2];
		cstart[c + 2] += cstart[c + 1];
	}
	for (size_t i = 0; i < s->nv; i++)
		if (s->bridge[i]) {
			cb[cstart[s->comp[s->v[i].a] + 1]++] = (uint32_t)i;
			cb[cstart[s->comp[s->v[i].b] + 1]++] = (uint32_t)i;
		}
	for (uint32_t c = 0; c < nc; c++)
		if (deg[c] == 1)
			queue[qt++] = c;
	while (qh < qt) {
		uint32_t c = queue[qh++], vi = NONE, other;
		bool enters;

		if (deg[c] != 1)
			continue;
		for (uint32_t k = cstart[c]; k < cstart[c + 1] && vi == NONE; k++)
			if (!done[cb[k]])
				vi = cb[k];
		if (vi == NONE)
			continue;
		done[vi] = 1;
		enters = s->comp[s->v[vi].b] == c;
		other = enters ? s->comp[s->v[vi].a] : s->comp[s->v[vi].b];
		for (uint32_t t = 0; t < nt; t++) {
			double k = K[(size_t)c * nt + t];

			x[t] = enters ? -k : k;
			/* a negative flow contradicts the counts: 0, and the
			 * component keeps what is left (counted below) */
			if (x[t] < 0)
				x[t] = 0;
			K[(size_t)other * nt + t] += enters ? -x[t] : x[t];
			K[(size_t)c * nt + t] += enters ? x[t] : -x[t];
		}
		store(s, &s->v[vi], x);
		deg[c]--;
		if (--deg[other] == 1)
			queue[qt++] = other;
	}
	/* with its bridges solved, a component balances (the unknowns inside
	 * cancel): what is left is counts that contradict each other */
	for (size_t i = 0; i < (size_t)nc * nt; i++)
		if (K[i] > 0.5 || K[i] < -0.5)
			s->f->inconsistent++;
	err = 0;
out:
	free(K);
	free(x);
	free(deg);
	free(cstart);
	free(cb);
	free(queue);
	free(done);
	return err;
}

/*
 * A counted block entered only by conditional edges whose counts stay
 * undetermined (a test the compiler duplicated): their sum is its count
 * minus its known ways in, kept on the edge from the first of those tests.
 */
static void decision_sums(struct solver *s)
{
	const struct sb_cfg *g = s->g;
	uint32_t nt = s->f->nt;

	for (uint32_t c = 0; c < g->nblocks; c++) {
		uint32_t rep = NONE, nunk = 0;
		bool ok = true;
		double *v;

		if (s->lb[c] == NONE || s->zero[c] || !s->f->block_known[c] || is_entry(g, c))
			continue;
		for (uint32_t k = g->in_start[c]; k < g->in_start[c + 1] && ok; k++) {
			uint32_t e = g->in_edges[k];
			const struct sb_cfg_edge *ed = &g->edges[e];

			if (!flow(ed))
				continue;
			if (s->lb[ed->src] == NONE)
				ok = false;
			else if (!s->f->edge_known[e]) {
				ok = !ed->back && (ed->kind == SB_EDGE_TAKEN ||
						   ed->kind == SB_EDGE_FALLTHROUGH);
				nunk++;
				if (rep == NONE || ed->src < g->edges[rep].src)
					rep = e;
			}
		}
		if (!ok || nunk < 2)
			continue;
		v = evec(s, rep);
		memcpy(v, bvec(s, c), nt * sizeof(double));
		for (uint32_t k = g->in_start[c]; k < g->in_start[c + 1]; k++) {
			uint32_t e = g->in_edges[k];

			if (flow(&g->edges[e]) && s->f->edge_known[e])
				for (uint32_t t = 0; t < nt; t++)
					v[t] -= evec(s, e)[t];
		}
		for (uint32_t t = 0; t < nt; t++)
			if (v[t] < 0)
				v[t] = 0;
		s->f->edge_sum[rep] = 1;
	}
	for (uint32_t e = 0; e < g->nedges; e++)
		if (s->f->edge_sum[e])
			s->f->edge_known[e] = 1;
}

static int alloc_rows(struct solver *s, const uint8_t *func_on)
{
	const struct sb_cfg *g = s->g;
	struct sb_cfg_flow *f = s->f;
	uint32_t nae = 0;

	for (uint32_t b = 0; b < g->nblocks; b++) {
		s->active[b] = func_on[g->blocks[b].func];
		s->lb[b] = f->brow[b] = s->active[b] ? s->nab++ : NONE;
	}
	for (uint32_t e = 0; e < g->nedges; e++) {
		const struct sb_cfg_edge *ed = &g->edges[e];

		f->erow[e] = s->active[ed->src] && s->active[ed->dst] ? nae++ : NONE;
	}
	s->outside = 2 * s->nab;
	f->block = calloc((size_t)(s->nab ? s->nab : 1) * f->nt, sizeof(double));
	f->edge = calloc((size_t)(nae ? nae : 1) * f->nt, sizeof(double));
	return f->block && f->edge ? 0 : -ENOMEM;
}

int sb_cfg_flow_solve_rows(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
			   const uint32_t *row, const double *counts, const uint8_t *cut,
			   struct sb_cfg_flow *out)
{
	struct solver s = { .g = g, .f = out };
	size_t nb = g->nblocks ? g->nblocks : 1, ne = g->nedges ? g->nedges : 1;
	uint8_t *func_on = calloc(g->nfuncs ? g->nfuncs : 1, 1);
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->nt = nt;
	out->block_known = calloc(nb, 1);
	out->edge_known = calloc(ne, 1);
	out->edge_sum = calloc(ne, 1);
	out->brow = malloc(nb * sizeof(*out->brow));
	out->erow = malloc(ne * sizeof(*out->erow));
	s.active = calloc(nb, 1);
	s.zero = calloc(nb, 1);
	s.lb = malloc(nb * sizeof(*s.lb));
	if (!func_on || !out->block_known || !out->edge_known || !out->edge_sum || !out->brow ||
	    !out->erow || !s.active || !s.zero || !s.lb)
		goto out;
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (known[b])
			func_on[g->blocks[b].func] = 1;
	if (alloc_rows(&s, func_on) || zero_unreachable(&s, known))
		goto out;
	for (uint32_t b = 0; b < g->nblocks; b++) {
		if (!s.active[b])
			continue;
		if (s.zero[b] || known[b]) {
			/* padding: 0 (rows are zeroed), with its edges out */
			if (!s.zero[b])
				memcpy(bvec(&s, b), &counts[(size_t)(row ? row[b] : b) * nt],
				       nt * sizeof(double));
			out->block_known[b] = 1;
		}
		for (uint32_t k = g->out_start[b]; s.zero[b] && k < g->out_start[b + 1]; k++)
			if (flow(&g->edges[k]) && out->erow[k] != NONE)
				out->edge_known[k] = 1;
	}
	if (build_vars(&s, known, cut) || find_bridges(&s) || solve_bridges(&s))
		goto out;
	/* a direct call carries its call block's count */
	for (uint32_t e = 0; e < g->nedges; e++) {
		const struct sb_cfg_edge *ed = &g->edges[e];

		if (!flow(ed) && out->erow[e] != NONE && out->block_known[ed->src] &&
		    !(cut && cut[ed->src])) {
			memcpy(evec(&s, e), bvec(&s, ed->src), nt * sizeof(double));
			out->edge_known[e] = 1;
		}
	}
	decision_sums(&s);
	ret = 0;
out:
	free(func_on);
	free(s.active);
	free(s.zero);
	free(s.lb);
	free(s.v);
	free(s.bridge);
	free(s.comp);
	if (ret)
		sb_cfg_flow_free(out);
	return ret;
}

int sb_cfg_flow_solve(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
		      const double *counts, struct sb_cfg_flow *out)
{
	return sb_cfg_flow_solve_rows(g, nt, known, NULL, counts, NULL, out);
}

void sb_cfg_flow_free(struct sb_cfg_flow *f)
{
	free(f->brow);
	free(f->erow);
	free(f->block);
	free(f->edge);
	free(f->block_known);
	free(f->edge_known);
	free(f->edge_sum);
	memset(f, 0, sizeof(*f));
}
