// SPDX-License-Identifier: MIT
/*
 * Sampled work reached through tail calls (causes_priv.h).
 *
 * `if (rank == 0) dispatch(n);` last in a function compiles to a `jmp
 * dispatch`, and `dispatch(n) { if (!n) return; work(n); }` to a `jmp
 * work`: while work runs, neither frame is on the stack, so no sample
 * counts for the block that chose to go there, and the work's own loop
 * is all the samples show.  The graph knows the way in (cfg.h,
 * SB_BLOCK_TAIL_CALL: a CALL edge from each tail-calling block): when
 * every caller of the work's function is one tail call, climb it, and
 * through functions that are entered the same way and pass the call on
 * from their first block (dispatch's `jmp`), to the first tail-calling
 * block a branch guards.  That branch is the decision when the threads
 * without samples anywhere in the work's function did not run it (the
 * test of causes_entered.c: the others have so many samples there that
 * none at all would be implausible had these run it too).  They may
 * also have run it with nothing to do (a zero-trip loop), which samples
 * cannot tell: the caller keeps the work's own placement as an
 * alternative, not settled.  Graphs of profiles recorded before tail
 * calls were looked for have no such edge: nothing changes for them.
 *
 * A work function shared by a direct call every thread makes and one
 * tail call (`common(n); if (rank == 0) return common(2n);` ends in
 * `jmp common`): the direct call's site holds its own share of the
 * work's samples (a sample counts for every call site on its stack); what
 * the work has beyond its direct callers' sites is the tail path's.  The
 * threads with none of that did not take it, by the same test, and the
 * tail call's guard decides.
 *
 * Work reached through a pointer (`if (rank == 5) work_fn(n);` last in an
 * OpenMP region's body, `mov work_fn(%rip),%rax; jmp *%rax`): no edge
 * says where the jump goes (SB_BLOCK_TAIL_INDIRECT).  When the work's
 * function has no caller at all in the graph (it is only ever reached
 * through its address) and its binary has one such jump, in a function
 * that has no caller either (entered by a runtime or a thread's start
 * through its address, as a region's body is), that jump is taken for
 * the way in: what a reader would follow.  Two such jumps, or a caller,
 * and nothing is assumed.
 */
#include "causes_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "causes.h"

#define TAIL_DEPTH 4    /* tail calls climbed at most */

/* Function f's one tail-calling caller, its other callers calling it
 * directly (CALL edges from blocks that are no tail calls), or -1. */
static long one_tail_caller(const struct sb_cfg *m, uint32_t f)
{
	uint32_t entry = m->funcs[f].first_block;
	long t = -1;

	for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++) {
		const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];

		if (e->kind != SB_EDGE_CALL || !(m->blocks[e->src].flags & SB_BLOCK_TAIL_CALL))
			continue;
		if (t >= 0 && t != e->src)
			return -1;
		t = e->src;
	}
	return t;
}

/* S[] less the samples at every direct (non-tail) call site of function
 * f, per thread (the same threads, in the same order, as
 * sb_causes_body_samples gives S): what f ran outside those calls. */
static int less_direct_calls(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, uint32_t f, double *S, uint32_t nt)
{
	const struct sb_cfg *m = g->merged;
	uint32_t entry = m->funcs[f].first_block, tids[SB_CAUSES_MAX_THREADS], n2;
	double n[SB_CAUSES_MAX_THREADS], C[SB_CAUSES_MAX_THREADS];

	for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++) {
		const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];
		uint32_t cf = m->blocks[e->src].func, nb = m->funcs[cf].nblocks;
		uint8_t *one;

		if (e->kind != SB_EDGE_CALL || (m->blocks[e->src].flags & SB_BLOCK_TAIL_CALL))
			continue;
		if (!(one = calloc(nb ? nb : 1, 1)))
			return -ENOMEM;
		one[e->src - m->funcs[cf].first_block] = 1;
		n2 = sb_causes_body_samples(p, g, s, cf, one, tids, n, C, SB_CAUSES_MAX_THREADS);
		free(one);
		for (uint32_t t = 0; t < nt && t < n2; t++)
			S[t] = fmax(0, S[t] - C[t]);
	}
	return 0;
}

/* Function f's way in through a pointer (see the top of this file), or -1. */
static long pointer_tail_caller(const struct sb_cfg *m, uint32_t f)
{
	uint32_t slot = SB_CFG_SLOT(m->funcs[f].start);
	long t = -1;

	if (!m->has_indirect_tails || !sb_cfg_uncalled(m, f))
		return -1;
	for (uint32_t b = 0; b < m->nblocks; b++) {
		uint32_t bf = m->blocks[b].func;

		if (!(m->blocks[b].flags & SB_BLOCK_TAIL_INDIRECT) || bf == f ||
		    SB_CFG_SLOT(m->funcs[bf].start) != slot || !sb_cfg_uncalled(m, bf))
			continue;
		if (t >= 0)
			return -1;
		t = b;
	}
	return t;
}

long sb_causes_only_caller(const struct sb_cfg *m, uint32_t f)
{
	uint32_t entry = m->funcs[f].first_block;
	long t = -1;

	for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++) {
		const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];

		if (e->kind != SB_EDGE_CALL)
			continue;
		if (t >= 0 && t != e->src)
			return -1;
		t = e->src;
	}
	return t;
}

bool sb_causes_tail_guard(const struct sb_profile *p, const struct sb_causes_graph *g,
			  uint32_t s, long blk, struct sb_cause *at)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f, nb, nt;
	uint32_t *tids = NULL;
	double *n = NULL, *S = NULL;
	uint8_t *body = NULL;
	bool found = false, tail = false;
	long t;

	bool shared = false;

	if (blk < 0 || !m->has_tail_calls)
		return false;
	if ((t = sb_causes_only_caller(m, m->blocks[blk].func)) < 0 &&
	    (t = pointer_tail_caller(m, m->blocks[blk].func)) < 0) {
		/* several callers: one tail call among direct ones */
		if ((t = one_tail_caller(m, m->blocks[blk].func)) < 0)
			return false;
		shared = true;
	}
	f = m->blocks[blk].func;
	nb = m->funcs[f].nblocks;
	tids = malloc(SB_CAUSES_MAX_THREADS * sizeof(*tids));
	n = malloc(SB_CAUSES_MAX_THREADS * sizeof(*n));
	S = malloc(SB_CAUSES_MAX_THREADS * sizeof(*S));
	body = malloc(nb ? nb : 1);
	if (!tids || !n || !S || !body)
		goto out;       /* (no memory: left where it was) */
	for (uint32_t b = 0; b < nb; b++)
		body[b] = 1;
	nt = sb_causes_body_samples(p, g, s, f, body, tids, n, S, SB_CAUSES_MAX_THREADS);
	if ((shared && less_direct_calls(p, g, s, f, S, nt)) || !sb_causes_not_entered(n, S, nt))
		goto out;
	for (int depth = 0; depth < TAIL_DEPTH && t >= 0 && !found; depth++) {
		struct sb_cause a = *at;

		tail |= (m->blocks[t].flags & (SB_BLOCK_TAIL_CALL | SB_BLOCK_TAIL_INDIRECT)) != 0;
		a.kind = SB_CAUSE_UNDETERMINED;
		if (sb_causes_locate_guard(p, g, (uint32_t)t, &a)) {
			/* with no tail call on the way, the samples already
			 * count at these call sites: their rules place it */
			if ((found = tail))
				*at = a;
			break;
		} else if (m->funcs[m->blocks[t].func].first_block == (uint32_t)t) {
			t = sb_causes_only_caller(m, m->blocks[t].func);   /* passed on */
		} else {
			break;
		}
	}
out:
	free(tids);
	free(n);
	free(S);
	free(body);
	return found;
}
