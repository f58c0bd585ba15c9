// SPDX-License-Identifier: MIT
#include "cfg.h"
#include "util/search.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct sb_cfg *sb_cfg_alloc(void)
{
	return calloc(1, sizeof(struct sb_cfg));
}

void sb_cfg_free(struct sb_cfg *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nfuncs; i++)
		free(g->funcs[i].name);
	free(g->funcs);
	free(g->blocks);
	free(g->edges);
	free(g->out_start);
	free(g->in_start);
	free(g->in_edges);
	free(g->build_id);
	free(g);
}

static bool reserve(void **arr, size_t elem, size_t n, size_t *cap)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

int sb_cfg_reserve(struct sb_cfg *g, size_t nfuncs, size_t nblocks, size_t nedges)
{
	/* at least one element: cfg.c never hands NULL to qsort() or memcpy() */
	g->funcs = calloc(nfuncs ? nfuncs : 1, sizeof(*g->funcs));
	g->blocks = calloc(nblocks ? nblocks : 1, sizeof(*g->blocks));
	g->edges = calloc(nedges ? nedges : 1, sizeof(*g->edges));
	g->cap_funcs = nfuncs;
	g->cap_blocks = nblocks;
	g->cap_edges = nedges;
	return g->funcs && g->blocks && g->edges ? 0 : -1;
}

long sb_cfg_add_func(struct sb_cfg *g, const char *name, uint64_t start, uint64_t end)
{
	struct sb_cfg_func *f;

	if (!reserve((void **)&g->funcs, sizeof(*f), g->nfuncs, &g->cap_funcs))
		return -1;
	f = &g->funcs[g->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name ? name : "");
	if (!f->name)
		return -1;
	f->start = start;
	f->end = end;
	f->first_block = (uint32_t)g->nblocks;
	return (long)g->nfuncs++;
}

long sb_cfg_add_block(struct sb_cfg *g, uint32_t func, uint64_t start, uint64_t end,
		      uint64_t last_insn)
{
	struct sb_cfg_block *b;
	struct sb_cfg_func *f;

	if (func >= g->nfuncs || end <= start)
		return -1;
	f = &g->funcs[func];
	/* All blocks in address order, a function's contiguous: block_at
	 * searches them as one sorted array. */
	if ((f->nblocks && f->first_block + f->nblocks != g->nblocks) ||
	    (g->nblocks && g->blocks[g->nblocks - 1].end > start))
		return -1;
	if (!reserve((void **)&g->blocks, sizeof(*b), g->nblocks, &g->cap_blocks))
		return -1;
	if (!f->nblocks)
		f->first_block = (uint32_t)g->nblocks;
	f->nblocks++;
	b = &g->blocks[g->nblocks];
	b->start = start;
	b->end = end;
	b->last_insn = last_insn;
	b->func = func;
	b->flags = 0;
	return (long)g->nblocks++;
}

long sb_cfg_add_edge(struct sb_cfg *g, uint32_t src, uint32_t dst, uint16_t kind)
{
	struct sb_cfg_edge *e;

	if (src >= g->nblocks || dst >= g->nblocks)
		return -1;
	if (!reserve((void **)&g->edges, sizeof(*e), g->nedges, &g->cap_edges))
		return -1;
	e = &g->edges[g->nedges];
	e->src = src;
	e->dst = dst;
	e->kind = kind;
	e->back = 0;
	return (long)g->nedges++;
}

static int by_src_dst(const void *a, const void *b)
{
	const struct sb_cfg_edge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static int build_adjacency(struct sb_cfg *g)
{
	uint32_t *fill;

	if (g->nedges)   /* qsort(NULL, 0, ...) is undefined */
		qsort(g->edges, g->nedges, sizeof(*g->edges), by_src_dst);
	free(g->out_start);
	free(g->in_start);
	free(g->in_edges);
	g->out_start = calloc(g->nblocks + 1, sizeof(uint32_t));
	g->in_start = calloc(g->nblocks + 1, sizeof(uint32_t));
	g->in_edges = malloc((g->nedges ? g->nedges : 1) * sizeof(uint32_t));
	fill = calloc(g->nblocks + 1, sizeof(uint32_t));
	if (!g->out_start || !g->in_start || !g->in_edges || !fill) {
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < g->nedges; i++) {
		g->out_start[g->edges[i].src + 1]++;
		g->in_start[g->edges[i].dst + 1]++;
	}
	for (size_t b = 0; b < g->nblocks; b++) {
		g->out_start[b + 1] += g->out_start[b];
		g->in_start[b + 1] += g->in_start[b];
	}
	for (size_t i = 0; i < g->nedges; i++) {
		uint32_t d = g->edges[i].dst;

		g->in_edges[g->in_start[d] + fill[d]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

/* Reverse postorder of the blocks of f reachable from its entry, by an
 * explicit-stack DFS.  Returns how many were reached. */
static size_t reverse_postorder(const struct sb_cfg *g, uint32_t f, uint32_t *order,
				uint32_t *stack, uint32_t *next_edge, uint8_t *seen)
{
	const struct sb_cfg_func *fn = &g->funcs[f];
	size_t n = 0, sp = 0, post = fn->nblocks;

	if (!fn->nblocks)
		return 0;
	stack[sp++] = fn->first_block;
	seen[0] = 1;
	next_edge[0] = g->out_start[fn->first_block];
	while (sp) {
		uint32_t b = stack[sp - 1], k = b - fn->first_block;

		if (next_edge[k] < g->out_start[b + 1]) {
			uint32_t d = g->edges[next_edge[k]++].dst, dk = d - fn->first_block;

			if (g->blocks[d].func != f || seen[dk])
				continue;
			seen[dk] = 1;
			next_edge[dk] = g->out_start[d];
			stack[sp++] = d;
			continue;
		}
		order[--post] = b;   /* post-order, filled from the back */
		n++;
		sp--;
	}
	memmove(order, order + post, n * sizeof(*order));
	return n;
}

int sb_cfg_dominators(const struct sb_cfg *g, uint32_t f, uint32_t *idom)
{
	const struct sb_cfg_func *fn = &g->funcs[f];
	uint32_t nb = fn->nblocks, *order, *stack, *next_edge, *rpo_index;
	uint8_t *seen;
	bool changed = true;
	size_t n;
	int ret = -1;

	if (!nb)
		return 0;
	order = malloc(nb * sizeof(*order));
	stack = malloc(nb * sizeof(*stack));
	next_edge = malloc(nb * sizeof(*next_edge));
	rpo_index = malloc(nb * sizeof(*rpo_index));
	seen = calloc(nb, 1);
	if (!order || !stack || !next_edge || !rpo_index || !seen)
		goto out;
	n = reverse_postorder(g, f, order, stack, next_edge, seen);
	for (uint32_t k = 0; k < nb; k++) {
		idom[fn->first_block + k] = NONE;
		rpo_index[k] = NONE;
	}
	for (size_t i = 0; i < n; i++)
		rpo_index[order[i] - fn->first_block] = (uint32_t)i;
	idom[fn->first_block] = fn->first_block;
	while (changed) {
		changed = false;
		for (size_t i = 1; i < n; i++) {
			uint32_t b = order[i], new_idom = NONE;

			for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++) {
				uint32_t p = g->edges[g->in_edges[k]].src, a, c;

				if (g->blocks[p].func != f || idom[p] == NONE)
					continue;
				if (new_idom == NONE) {
					new_idom = p;
					continue;
				}
				/* intersect: walk up until the fingers meet */
				a = p;
				c = new_idom;
				while (a != c) {
					while (rpo_index[a - fn->first_block] >
					       rpo_index[c - fn->first_block])
						a = idom[a];
					while (rpo_index[c - fn->first_block] >
					       rpo_index[a - fn->first_block])
						c = idom[c];
				}
				new_idom = a;
			}
			if (new_idom != NONE && idom[b] != new_idom) {
				idom[b] = new_idom;
				changed = true;
			}
		}
	}
	ret = 0;
out:
	free(order);
	free(stack);
	free(next_edge);
	free(rpo_index);
	free(seen);
	return ret;
}

static bool dominates(const struct sb_cfg *g, const uint32_t *idom, uint32_t d, uint32_t b)
{
	uint32_t entry = g->funcs[g->blocks[b].func].first_block;

	if (idom[b] == NONE)
		return false;   /* unreachable: dominated by nothing */
	for (;;) {
		if (b == d)
			return true;
		if (b == entry)
			return false;
		b = idom[b];
	}
}

int sb_cfg_finalize(struct sb_cfg *g)
{
	uint32_t *idom;

	if (build_adjacency(g))
		return -1;
	idom = malloc((g->nblocks ? g->nblocks : 1) * sizeof(*idom));
	if (!idom)
		return -1;
	for (uint32_t f = 0; f < g->nfuncs; f++)
		if (sb_cfg_dominators(g, f, idom)) {
			free(idom);
			return -1;
		}
	for (size_t i = 0; i < g->nedges; i++) {
		struct sb_cfg_edge *e = &g->edges[i];

		/* A call is not a loop, even a recursive one. */
		e->back = e->kind != SB_EDGE_CALL &&
			  g->blocks[e->src].func == g->blocks[e->dst].func &&
			  dominates(g, idom, e->dst, e->src);
	}
	free(idom);
	return 0;
}

long sb_cfg_block_at(const struct sb_cfg *g, uint64_t vaddr)
{
	/* Blocks are in address order within each function, and functions
	 * are added in address order by the builder. */
	size_t lo = SB_SEARCH_STARTS(g->blocks, g->nblocks, start, vaddr);

	if (!lo || vaddr >= g->blocks[lo - 1].end)
		return -1;
	return (long)(lo - 1);
}

struct sb_cfg *sb_cfg_merge(struct sb_cfg *const *g, size_t n, uint32_t *block_offset)
{
	struct sb_cfg *m = sb_cfg_alloc();
	size_t nf = 0, nb = 0, ne = 0;

	if (!m)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		nf += g[i] ? g[i]->nfuncs : 0;
		nb += g[i] ? g[i]->nblocks : 0;
		ne += g[i] ? g[i]->nedges : 0;
	}
	if (sb_cfg_reserve(m, nf, nb, ne))
		goto fail;
	m->has_flags = true;    /* blocks keep their own; known if all are */
	m->has_tail_calls = true;
	m->has_indirect_tails = true;
	for (size_t i = 0; i < n; i++) {
		uint32_t foff = (uint32_t)m->nfuncs, boff = (uint32_t)m->nblocks;

		block_offset[i] = boff;
		if (!g[i])
			continue;
		m->has_flags &= g[i]->has_flags;
		m->has_tail_calls &= g[i]->has_tail_calls;
		m->has_indirect_tails &= g[i]->has_indirect_tails;
		for (size_t f = 0; f < g[i]->nfuncs; f++) {
			struct sb_cfg_func *d = &m->funcs[m->nfuncs++];

			*d = g[i]->funcs[f];
			d->name = strdup(d->name ? d->name : "");
			if (!d->name)
				goto fail;
			d->start = SB_CFG_TAG(i, d->start);
			d->end = SB_CFG_TAG(i, d->end);
			d->first_block += boff;
		}
		for (size_t b = 0; b < g[i]->nblocks; b++) {
			struct sb_cfg_block *d = &m->blocks[m->nblocks++];

			*d = g[i]->blocks[b];
			d->start = SB_CFG_TAG(i, d->start);
			d->end = SB_CFG_TAG(i, d->end);
			d->last_insn = SB_CFG_TAG(i, d->last_insn);
			d->func += foff;
		}
		for (size_t e = 0; e < g[i]->nedges; e++) {
			struct sb_cfg_edge *d = &m->edges[m->nedges++];

			*d = g[i]->edges[e];
			d->src += boff;
			d->dst += boff;
		}
	}
	if (sb_cfg_finalize(m))
		goto fail;
	return m;
fail:
	sb_cfg_free(m);
	return NULL;
}

long sb_cfg_latch(const struct sb_cfg *g, uint32_t b)
{
	for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++)
		if (g->edges[g->in_edges[k]].back)
			return g->edges[g->in_edges[k]].src;
	return -1;
}

/* Straight blocks walked back from a loop's header to its entering branch. */
#define ENTRY_STEPS 4

/* Block b is only an unconditional `jmp` (its one instruction). */
static bool lone_jump(const struct sb_cfg *g, uint32_t b)
{
	return g->blocks[b].start == g->blocks[b].last_insn && sb_cfg_nout(g, b) == 1;
}

long sb_cfg_loop_entry(const struct sb_cfg *g, uint32_t b)
{
	uint32_t h = b;

	if (sb_cfg_latch(g, b) < 0) {
		long hh = -1;

		for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
			if (g->edges[k].back)
				hh = g->edges[k].dst;
		if (hh < 0)
			return -1;
		h = b = (uint32_t)hh;
	}
	for (int steps = 0; steps <= ENTRY_STEPS; steps++) {
		const struct sb_cfg_edge *in = NULL;
		uint32_t src, nin = 0, branched = 0;

		for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++) {
			const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];

			if (e->kind == SB_EDGE_CALL || (b == h && e->back))
				continue;
			if (sb_cfg_from_padding(g, e))
				continue;
			nin++;
			/* (an enclosing loop's back edge repeats the loop: no
			 * test of whether it runs; a `jmp` after code of its
			 * own is straight-line code) */
			branched += !e->back && (e->kind == SB_EDGE_TAKEN ||
						 e->kind == SB_EDGE_FALLTHROUGH ||
						 (e->kind == SB_EDGE_JUMP && lone_jump(g, e->src)));
			in = e;
		}
		if (!in)
			return -1;                /* a function's entry */
		if (nin == 1 && (in->kind == SB_EDGE_TAKEN || in->kind == SB_EDGE_FALLTHROUGH ||
				 in->kind == SB_EDGE_JUMP))
			return b;
		/* several ways in, each a branch: copies of one test that gcc
		 * -O3 placed on each way round an irreducible loop
		 * (sb_cfg_guards finds them all) */
		if (nin > 1)
			return branched == nin ? (long)b : -1;
		if (in->kind != SB_EDGE_SEQUENTIAL)
			return -1;                /* a call's return */
		src = in->src;
		if (sb_cfg_nout(g, src) != 1 || src == h)
			return -1;
		b = src;
	}
	return -1;
}

bool sb_cfg_from_padding(const struct sb_cfg *g, const struct sb_cfg_edge *e)
{
	return e->kind == SB_EDGE_SEQUENTIAL && !sb_cfg_nin(g, e->src) &&
	       g->funcs[g->blocks[e->src].func].first_block != e->src;
}

bool sb_cfg_ends_in_call(const struct sb_cfg *g, uint32_t b)
{
	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
		if (g->edges[k].kind == SB_EDGE_CALL_RETURN)
			return true;
	return false;
}

bool sb_cfg_uncalled(const struct sb_cfg *g, uint32_t f)
{
	uint32_t e = g->funcs[f].first_block;

	for (uint32_t k = g->in_start[e]; k < g->in_start[e + 1]; k++)
		if (g->edges[g->in_edges[k]].kind == SB_EDGE_CALL)
			return false;
	return true;
}

/*
 * Collects into gs the conditional branches guarding block b, walking back
 * through blocks that are only an unconditional jump (a lone `jmp`, as
 * compilers leave where a duplicated path rejoins): such a block does
 * nothing but lead on to b, so what decides it decides b.  Blocks with
 * code of their own are not looked through, even when they only run on
 * into b: a loop's preheader is no decision, and the loop body it enters
 * may be a cause of its own (time spent, not a branch taken).  One guard
 * is a (block, out edge) pair; a branch reaching b by both of its edges
 * decides nothing, and a path into b that is no branch (a call's return,
 * straight-line code, a function's entry, a back edge on the way) means b
 * runs unguarded.  A block nothing reaches (padding) is no path.
 */
#define GUARD_DEPTH 8

static int collect_guards(const struct sb_cfg *g, uint32_t b, unsigned depth,
			  uint32_t *gs, uint32_t *via, size_t max, size_t *n)
{
	bool any = false;

	for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++) {
		uint32_t ei = g->in_edges[k];
		const struct sb_cfg_edge *e = &g->edges[ei];
		size_t i;

		if (e->kind == SB_EDGE_CALL)
			continue;
		if (e->back) {
			if (depth)   /* a loop through the walk: not one decision */
				return -1;
			continue;
		}
		if (sb_cfg_from_padding(g, e))
			continue;
		any = true;
		if (e->kind == SB_EDGE_JUMP) {
			if (depth >= GUARD_DEPTH || sb_cfg_nout(g, e->src) != 1 ||
			    g->blocks[e->src].start != g->blocks[e->src].last_insn ||
			    collect_guards(g, e->src, depth + 1, gs, via, max, n))
				return -1;
			continue;
		}
		if (e->kind != SB_EDGE_TAKEN && e->kind != SB_EDGE_FALLTHROUGH)
			return -1;
		for (i = 0; i < *n && gs[i] != e->src; i++)
			;
		if (i < *n) {
			if (via[i] != ei)
				return -1;   /* both ways lead to b */
			continue;
		}
		if (*n == max)
			return -1;
		gs[*n] = e->src;
		via[(*n)++] = ei;
	}
	return any ? 0 : -1;
}

long sb_cfg_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs, size_t max)
{
	uint32_t via[SB_CFG_MAX_GUARDS];
	size_t n = 0;

	if (max > SB_CFG_MAX_GUARDS)
		max = SB_CFG_MAX_GUARDS;
	if (collect_guards(g, b, 0, gs, via, max, &n) || !n)
		return -1;
	return (long)n;
}

long sb_cfg_conditional_pred(const struct sb_cfg *g, uint32_t b)
{
	uint32_t gs[SB_CFG_MAX_GUARDS];

	return sb_cfg_guards(g, b, gs, SB_CFG_MAX_GUARDS) == 1 ? (long)gs[0] : -1;
}
