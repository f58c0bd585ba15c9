// SPDX-License-Identifier: MIT
/*
 * Loop leaders whose loop is not what decides (lime_priv.h): a header
 * several loops share, and a loop copy the section never enters.
 *
 * A compiler may rotate an inner loop into its enclosing one: the outer
 * loop's latch jumps straight into the inner body, so both loops share one
 * header (clang lays `for (j < i) for (r < K) { memcpy; qsort; }` out so;
 * the body has no counted code of its own before the calls).  When the
 * outer trip count varies the inner loop's edges vary with it, one
 * cluster holds both back edges and their shared header leads it: the
 * cause would be shown at the inner loop, whose trip count per entry is
 * fixed.
 *
 * Which of the loops varies is decided at their latches.  Each back edge
 * into the header is reached from a conditional branch (its latch block,
 * or the guard a straight line of blocks - a counter call, a `jmp` -
 * leads back to).  A loop whose trip count per entry is fixed exits as
 * often as it is entered: its branch's exit edge varies with its
 * continuing edge, both in the cluster.  The loop whose trip count
 * varies is the one whose branch sends the cluster's flow back into the
 * loop and its exit outside the cluster: that branch is the decision.
 * When exactly one latch is so, the cause is its branch (a LOOP: the
 * loop it closes repeats a varying number of times); otherwise the
 * header stays the leader.
 *
 * A loop leader the section never enters.  A compiler unswitches an
 * invariant test out of a loop (`for (it...) { if (who == 0) work();
 * barrier(); }` at -O2/-O3): two copies of the loop, the test once before
 * them.  A section that runs from barrier to barrier is then one
 * iteration of whichever copy the thread runs, entered by its back edge
 * only: the copy with the work leads the cluster as a LOOP whose trip
 * count does not vary at all (one iteration an instance, or none).  What
 * decided is the test that chose the copy, before the first instance.
 * So when the header's one way in from outside the loop has no count in
 * the section (exact counts only: exact flow found none, it ran before,
 * in another segment; LBR leaves every fall-through edge without one)
 * and leads up from a conditional branch through blocks of one way in
 * that call nothing, that branch is the cause (a BRANCH, at its line).  A
 * loop the section enters keeps its leader: its entry edge has a count.
 */
#include "lime_priv.h"

/* The conditional block that decides whether edge e is taken, or
 * SB_LIME_NONE: e's source, or up through blocks of one way in (through
 * calls only when calls is set: a latch's counter call). */
static uint32_t latch_branch(const struct sb_cfg *g, uint32_t e, bool calls)
{
	uint32_t u = g->edges[e].src;

	for (int steps = 0; steps < 8; steps++) {
		const struct sb_cfg_edge *in;

		if (!calls && sb_cfg_ends_in_call(g, u))
			return SB_LIME_NONE;

		for (uint32_t i = g->out_start[u]; i < g->out_start[u + 1]; i++)
			if (g->edges[i].kind == SB_EDGE_TAKEN ||
			    g->edges[i].kind == SB_EDGE_FALLTHROUGH)
				return u;
		if (g->in_start[u + 1] - g->in_start[u] != 1)
			return SB_LIME_NONE;
		in = &g->edges[g->in_edges[g->in_start[u]]];
		if (in->back || in->kind == SB_EDGE_CALL)
			return SB_LIME_NONE;
		u = in->src;
	}
	return SB_LIME_NONE;
}

uint32_t sb_lime_varying_latch(const struct sb_cfg *g, uint32_t h, const uint32_t *ein,
			       uint32_t gen)
{
	uint32_t found = SB_LIME_NONE, nback = 0;

	for (uint32_t k = g->in_start[h]; k < g->in_start[h + 1]; k++) {
		uint32_t e = g->in_edges[k], d;
		bool in_out = false, out_out = false;

		if (!g->edges[e].back || ein[e] != gen)
			continue;
		nback++;
		d = latch_branch(g, e, true);
		if (d == SB_LIME_NONE)
			continue;
		for (uint32_t i = g->out_start[d]; i < g->out_start[d + 1]; i++) {
			if (g->edges[i].kind != SB_EDGE_TAKEN && g->edges[i].kind != SB_EDGE_FALLTHROUGH)
				continue;
			if (ein[i] == gen)
				in_out = true;
			else
				out_out = true;
		}
		if (!in_out || !out_out)
			continue;
		if (found != SB_LIME_NONE && found != d)
			return SB_LIME_NONE;   /* two varying loops: the header */
		found = d;
	}
	return nback >= 2 ? found : SB_LIME_NONE;
}

uint32_t sb_lime_copy_choice(const struct sb_cfg *g, uint32_t h, const uint32_t *edge_ev)
{
	uint32_t e = SB_LIME_NONE, n = 0;

	for (uint32_t k = g->in_start[h]; k < g->in_start[h + 1]; k++) {
		uint32_t i = g->in_edges[k];

		if (g->edges[i].back)
			continue;
		if (edge_ev[i] != SB_LIME_NONE)
			return SB_LIME_NONE;   /* entered within the section */
		e = i;
		n++;
	}
	return n == 1 ? latch_branch(g, e, false) : SB_LIME_NONE;
}
