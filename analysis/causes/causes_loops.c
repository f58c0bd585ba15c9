// SPDX-License-Identifier: MIT
/*
 * Natural loops (causes_loops.h): the body of a loop is its header and
 * every block that reaches one of its latches (sources of back edges into
 * the header) without passing the header, within the function.  Found on
 * demand for the few leaders a section reports, so nothing is cached.
 */
#include "causes_loops.h"

#include <stdlib.h>
#include <string.h>

/* The body of the loop headed by h (0 when h heads none). */
static uint32_t body_of(const struct sb_cfg *g, uint32_t h, uint8_t *body, uint32_t *stack)
{
	const struct sb_cfg_func *fn = &g->funcs[g->blocks[h].func];
	uint32_t n = 0, sp = 0, lo = fn->first_block;

	if (sb_cfg_latch(g, h) < 0)
		return 0;       /* heads no loop: most blocks, skipped cheaply */
	memset(body, 0, fn->nblocks);
	for (uint32_t k = g->in_start[h]; k < g->in_start[h + 1]; k++) {
		const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];

		if (!e->back || g->blocks[e->src].func != g->blocks[h].func)
			continue;
		if (!n) {
			body[h - lo] = 1;
			n = 1;
		}
		if (!body[e->src - lo]) {
			body[e->src - lo] = 1;
			n++;
			stack[sp++] = e->src;
		}
	}
	while (sp) {
		uint32_t u = stack[--sp];

		for (uint32_t k = g->in_start[u]; k < g->in_start[u + 1]; k++) {
			const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];

			if (e->kind == SB_EDGE_CALL || g->blocks[e->src].func != g->blocks[u].func ||
			    body[e->src - lo])
				continue;
			body[e->src - lo] = 1;
			n++;
			stack[sp++] = e->src;
		}
	}
	return n;
}

/* The innermost loop of b's function whose body holds block `in` and,
 * when strict, is larger than min blocks: its header, body in best. */
static long innermost(const struct sb_cfg *g, uint32_t in, uint32_t min, uint8_t *best)
{
	const struct sb_cfg_func *fn = &g->funcs[g->blocks[in].func];
	uint8_t *body = malloc(fn->nblocks ? fn->nblocks : 1);
	uint32_t *stack = malloc((fn->nblocks ? fn->nblocks : 1) * sizeof(*stack));
	uint32_t best_n = UINT32_MAX;
	long hdr = -1;

	if (!body || !stack)
		goto out;
	for (uint32_t h = fn->first_block; h < fn->first_block + fn->nblocks; h++) {
		uint32_t n = body_of(g, h, body, stack);

		if (n > min && n < best_n && body[in - fn->first_block]) {
			best_n = n;
			hdr = h;
			memcpy(best, body, fn->nblocks);
		}
	}
out:
	free(body);
	free(stack);
	return hdr;
}

long sb_causes_loop_of(const struct sb_cfg *g, uint32_t b, uint8_t *body)
{
	return innermost(g, b, 0, body);
}

long sb_causes_loop_around(const struct sb_cfg *g, uint32_t h, const uint8_t *inner,
			   uint8_t *outer)
{
	const struct sb_cfg_func *fn = &g->funcs[g->blocks[h].func];
	uint32_t n = 0;

	for (uint32_t i = 0; i < fn->nblocks; i++)
		n += inner[i] != 0;
	return innermost(g, h, n, outer);
}

/* Block b of the loop (body, over function f's blocks) leaves it: an
 * edge to a block of f outside the body. */
static bool leaves(const struct sb_cfg *g, uint32_t f, const uint8_t *body, uint32_t b)
{
	uint32_t lo = g->funcs[f].first_block;

	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++) {
		uint32_t d = g->edges[k].dst;

		if (g->edges[k].kind != SB_EDGE_CALL && g->blocks[d].func == f && !body[d - lo])
			return true;
	}
	return false;
}

uint32_t sb_causes_loop_exits(const struct sb_cfg *g, uint32_t f, const uint8_t *body)
{
	const struct sb_cfg_func *fn = &g->funcs[f];
	uint32_t n = 0;

	for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++)
		n += body[b - fn->first_block] && leaves(g, f, body, b);
	return n;
}

bool sb_causes_loop_only_repeats(const struct sb_cfg *g, uint32_t f, const uint8_t *outer,
				 const uint8_t *inner)
{
	const struct sb_cfg_func *fn = &g->funcs[f];

	for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++) {
		uint32_t cond = 0, stay = 0;

		if (!outer[b - fn->first_block] || inner[b - fn->first_block])
			continue;
		if (sb_cfg_ends_in_call(g, b))
			return false;
		for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++) {
			uint32_t d = g->edges[k].dst;

			if (g->edges[k].kind != SB_EDGE_TAKEN && g->edges[k].kind != SB_EDGE_FALLTHROUGH)
				continue;
			cond++;
			stay += g->blocks[d].func == f && outer[d - fn->first_block];
		}
		/* a branch that stays in the loop either way decides inside it */
		if (cond >= 2 && stay >= 2)
			return false;
	}
	return true;
}

bool sb_causes_loop_calls(const struct sb_cfg *g, uint32_t f, const uint8_t *body)
{
	const struct sb_cfg_func *fn = &g->funcs[f];

	for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++)
		if (body[b - fn->first_block] && sb_cfg_ends_in_call(g, b))
			return true;
	return false;
}

/* b ends in a decision: a conditional branch, not a fall or jump into
 * the next block. */
static bool decides(const struct sb_cfg *g, uint32_t b)
{
	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
		if (g->edges[k].kind == SB_EDGE_TAKEN || g->edges[k].kind == SB_EDGE_FALLTHROUGH)
			return true;
	return false;
}

long sb_causes_loop_test(const struct sb_cfg *g, uint32_t f, const uint8_t *body)
{
	const struct sb_cfg_func *fn = &g->funcs[f];
	long test = -1;

	for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++) {
		if (!body[b - fn->first_block] || !leaves(g, f, body, b))
			continue;
		if (test >= 0)
			return -1;
		test = b;
	}
	return test >= 0 && decides(g, (uint32_t)test) ? test : -1;
}

long sb_causes_latch_test(const struct sb_cfg *g, uint32_t latch, uint32_t f, const uint8_t *body)
{
	return decides(g, latch) ? (long)latch : sb_causes_loop_test(g, f, body);
}

bool sb_causes_loop_fixed_trips(const struct sb_cfg *g, uint32_t f, uint32_t h,
				const uint8_t *body)
{
	uint32_t nlatch = 0;

	for (uint32_t k = g->in_start[h]; k < g->in_start[h + 1]; k++) {
		const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];
		long test;

		if (!e->back || g->blocks[e->src].func != f)
			continue;
		test = sb_causes_latch_test(g, e->src, f, body);
		if (test < 0 || !(g->blocks[test].flags & SB_BLOCK_CONST_BOUND))
			return false;
		nlatch++;
	}
	return nlatch && sb_causes_loop_exits(g, f, body) == 1;
}

/* The header a back edge reaches from edge k straight on (through blocks
 * of one way on, calls aside: at most ROTATE_STEPS), or -1. */
#define ROTATE_STEPS 4
static long straight_back(const struct sb_cfg *g, uint32_t k)
{
	for (int steps = 0; steps < ROTATE_STEPS; steps++) {
		uint32_t u = g->edges[k].dst, n = 0;

		if (g->edges[k].back)
			return u;
		for (uint32_t j = g->out_start[u]; j < g->out_start[u + 1]; j++)
			if (g->edges[j].kind != SB_EDGE_CALL) {
				k = j;
				n++;
			}
		if (n != 1)
			return -1;
	}
	return -1;
}

/* Block b's branch is a latch test of the loop headed by *h: one of its
 * two ways leads straight to a back edge into *h; *leaves: its other way
 * leaves that loop. */
static bool latch_test_of(const struct sb_cfg *g, uint32_t b, long *h, bool *leaves)
{
	uint32_t way[2], n = 0, f = g->blocks[b].func, lo = g->funcs[f].first_block;

	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
		if (g->edges[k].kind == SB_EDGE_TAKEN || g->edges[k].kind == SB_EDGE_FALLTHROUGH) {
			if (n == 2)
				return false;
			way[n++] = k;
		}
	for (uint32_t i = 0; n == 2 && i < 2; i++) {
		long hh = straight_back(g, way[i]);
		uint8_t *body;
		bool ok;

		uint32_t other = g->edges[way[1 - i]].dst;

		if (hh < 0 || g->blocks[hh].func != f || g->blocks[other].func != f ||
		    !(body = malloc(g->funcs[f].nblocks)))
			continue;
		ok = sb_causes_loop_of(g, (uint32_t)hh, body) == hh;
		*leaves = ok && !body[other - lo];
		free(body);
		if (ok) {
			*h = hh;
			return true;
		}
	}
	return false;
}

bool sb_causes_rotated_outer(const struct sb_cfg *g, uint32_t x, uint32_t y)
{
	long hx = -1, hy = -1;
	bool lx = false, ly = false;

	return x != y && latch_test_of(g, x, &hx, &lx) && latch_test_of(g, y, &hy, &ly) &&
	       hx == hy && lx && !ly;
}

bool sb_causes_in_early_exit_loop(const struct sb_cfg *g, long b)
{
	uint32_t f;
	uint8_t *body;
	bool yes;

	if (b < 0)
		return false;
	f = g->blocks[b].func;
	if (!(body = malloc(g->funcs[f].nblocks ? g->funcs[f].nblocks : 1)))
		return false;
	yes = sb_causes_loop_of(g, (uint32_t)b, body) >= 0 && sb_causes_loop_exits(g, f, body) >= 2;
	free(body);
	return yes;
}

/* The function block b calls (its CALL edge), or -1. */
static long callee_of(const struct sb_cfg *g, uint32_t b)
{
	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++)
		if (g->edges[k].kind == SB_EDGE_CALL)
			return g->blocks[g->edges[k].dst].func;
	return -1;
}

/* Block b is one call instruction and nothing else. */
static bool only_call(const struct sb_cfg *g, uint32_t b)
{
	return g->blocks[b].start == g->blocks[b].last_insn && callee_of(g, b) >= 0;
}

#define UNROLLED_MAX 64

/* v added to set[*n] unless there; false when it is full. */
static bool add_once(uint32_t *set, uint32_t *n, uint32_t max, uint32_t v)
{
	uint32_t i = 0;

	while (i < *n && set[i] != v)
		i++;
	if (i < *n)
		return true;
	if (*n == max)
		return false;
	set[(*n)++] = v;
	return true;
}

long sb_causes_run_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs)
{
	long callee = only_call(g, b) ? callee_of(g, b) : -1;
	uint32_t run[UNROLLED_MAX], nrun = 1, n = 0;

	if (callee < 0)
		return -1;
	run[0] = b;
	for (uint32_t r = 0; r < nrun; r++) {
		uint32_t x = run[r];

		for (uint32_t k = g->in_start[x]; k < g->in_start[x + 1]; k++) {
			const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];
			bool call = e->kind == SB_EDGE_CALL_RETURN && only_call(g, e->src) &&
				    callee_of(g, e->src) == callee;

			if (sb_cfg_from_padding(g, e))
				continue;
			/* a loop's latch: the run is repeated, not entered */
			if (e->back || (!call && e->kind != SB_EDGE_TAKEN &&
					e->kind != SB_EDGE_FALLTHROUGH))
				return -1;
			if (call ? !add_once(run, &nrun, UNROLLED_MAX, e->src)
				 : !add_once(gs, &n, SB_CFG_MAX_GUARDS, e->src))
				return -1;
		}
	}
	return nrun >= 2 && n ? (long)n : -1;
}

uint32_t sb_causes_unrolled_first(const struct sb_cfg *g, uint32_t b)
{
	long callee = only_call(g, b) ? callee_of(g, b) : -1;

	for (int steps = 0; callee >= 0 && steps < UNROLLED_MAX && sb_cfg_nin(g, b) == 1; steps++) {
		const struct sb_cfg_edge *e = &g->edges[g->in_edges[g->in_start[b]]];

		if (e->kind != SB_EDGE_CALL_RETURN || !only_call(g, e->src) ||
		    callee_of(g, e->src) != callee)
			break;
		b = e->src;
	}
	return b;
}
