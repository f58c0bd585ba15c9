// SPDX-License-Identifier: MIT
/*
 * Exact mode: the edges by which a thread leaves a section at its sync and
 * comes back (causes_priv.h), which are no events.
 *
 * A barrier a program builds of a lock and a condition variable is code
 * of the section: `if (++count == n) broadcast; else while (gen == g)
 * wait;`.  Which way a thread goes is whether it arrived last, and the
 * thread that arrives last is the one with the most work: those edges
 * follow the imbalance perfectly (r = 1 with three threads, one slow) and
 * LIME names the barrier's test as the cause, or the releaser's way back.
 * They are its effect: neither way does any work, both end the thread's
 * part of the section at a call that closes its segment (the runtime's
 * sync wrappers, `cut`).
 *
 * The model.  A block is plain when it does no work of its own: it calls
 * nothing but the coverage guard, and heads and closes no loop (a loop of
 * arithmetic is work; only the waiters' re-wait, a back edge into a
 * closing call, is not).  (1) A plain block whose every way out leads,
 * through plain blocks, to closing calls only decides how the thread
 * leaves the section; its edges are left out, and the closing calls'.  A
 * branch with one way into work (a loop, a library call, a counted
 * function) is no such block and stays an event, so `if (who == 0)
 * memcpy(...)` before a barrier keeps its branch.  (2) After the sync,
 * the ways back from a closing call run plain blocks until they end; when
 * they all end at one block, the join, and another closing call's ways
 * back end there too (the releaser's return from broadcast, the waiters'
 * from wait and their re-check), which of them a thread took is again who
 * arrived last: their edges are left out.  Ways back that end at work or
 * at several places (`barrier(); if (who == 0) work();`, the loop's next
 * iteration) decide what the thread does next and are kept.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static bool plain(const struct sb_cfg *m, const uint8_t *cut, uint32_t b, uint32_t guard)
{
	bool call = sb_cfg_ends_in_call(m, b);

	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
		if (m->edges[k].back && !cut[m->edges[k].dst])
			return false;   /* closes a loop: work */
		if (m->edges[k].kind == SB_EDGE_CALL && m->edges[k].dst == guard)
			call = false;
	}
	for (uint32_t k = m->in_start[b]; k < m->in_start[b + 1]; k++)
		if (m->edges[m->in_edges[k]].back)
			return false;   /* heads a loop */
	return !call;
}

/* (1): blocks that reach closing calls only, through plain blocks. */
static void to_sync(const struct sb_cfg *m, const uint8_t *cut, uint32_t guard, uint8_t *leave)
{
	bool changed = true;

	for (uint32_t b = 0; b < m->nblocks; b++)
		leave[b] = cut[b];
	while (changed) {
		changed = false;
		for (uint32_t b = 0; b < m->nblocks; b++) {
			uint32_t n = 0, in = 0;

			if (leave[b] || !plain(m, cut, b, guard))
				continue;
			for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
				if (m->edges[k].kind == SB_EDGE_CALL)
					continue;
				n++;
				in += leave[m->edges[k].dst];
			}
			if (n && in == n)
				leave[b] = changed = true;
		}
	}
}

/*
 * Walks the plain blocks after closing call c (stamp c + 1 in seen) and
 * returns where every way out of them ends, the join: the one block not
 * plain they reach (closing calls aside), or NONE (none, or several: a
 * way into work).  With skip, marks the edges walked.
 */
static uint32_t walk_back(const struct sb_cfg *m, const uint8_t *cut, uint32_t guard,
			  uint32_t c, uint32_t *seen, uint32_t *stack, uint8_t *skip)
{
	uint32_t sp = 0, join = NONE;
	bool many = false;

	for (uint32_t k = m->out_start[c]; k < m->out_start[c + 1]; k++)
		if (m->edges[k].kind == SB_EDGE_CALL_RETURN && seen[m->edges[k].dst] != c + 1) {
			seen[m->edges[k].dst] = c + 1;
			stack[sp++] = m->edges[k].dst;
		}
	while (sp) {
		uint32_t b = stack[--sp], nout = 0;

		if (cut[b])
			continue;   /* waits again */
		if (plain(m, cut, b, guard))
			for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
				uint32_t d = m->edges[k].dst;

				if (m->edges[k].kind == SB_EDGE_CALL)
					continue;
				nout++;
				if (skip)
					skip[k] = 1;
				if (seen[d] != c + 1) {
					seen[d] = c + 1;
					stack[sp++] = d;
				}
			}
		if (nout)
			continue;
		many |= join != NONE && join != b;   /* work, or a return */
		join = b;
	}
	return many ? NONE : join;
}

int sb_causes_sync_edges(const struct sb_cfg *m, const uint8_t *cut, uint32_t guard,
			 uint8_t *skip)
{
	size_t nb = m->nblocks ? m->nblocks : 1;
	uint8_t *leave = malloc(nb), *joined = calloc(nb, 1);
	uint32_t *seen = malloc(nb * sizeof(*seen)), *first = malloc(nb * sizeof(*first));
	uint32_t *stack = malloc(nb * sizeof(*stack));
	int ret = -ENOMEM;

	if (!leave || !joined || !seen || !first || !stack)
		goto out;
	to_sync(m, cut, guard, leave);
	for (uint32_t b = 0; b < m->nblocks; b++)
		for (uint32_t k = m->out_start[b]; leave[b] && k < m->out_start[b + 1]; k++)
			skip[k] = 1;
	/* (2): closing calls whose ways back all end at one join, which
	 * another closing call's ways back end at too */
	for (uint32_t b = 0; b < m->nblocks; b++)
		seen[b] = NONE;
	for (uint32_t c = 0; c < m->nblocks; c++) {
		first[c] = cut[c] ? walk_back(m, cut, guard, c, seen, stack, NULL) : NONE;
		if (first[c] != NONE && joined[first[c]] < 2)
			joined[first[c]]++;
	}
	for (uint32_t c = 0; c < m->nblocks; c++)
		seen[c] = NONE;
	for (uint32_t c = 0; c < m->nblocks; c++)
		if (first[c] != NONE && joined[first[c]] >= 2)
			walk_back(m, cut, guard, c, seen, stack, skip);
	ret = 0;
out:
	free(leave);
	free(joined);
	free(seen);
	free(first);
	free(stack);
	return ret;
}
