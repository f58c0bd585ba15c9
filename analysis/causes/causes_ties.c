// SPDX-License-Identifier: MIT
/*
 * The order of causes of about equal score (causes_priv.h): which of two
 * leaders that vary alike a reader should look at first.
 */
#include "causes_priv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "causes_loops.h"
#include "cfg/cfg.h"

/* True when block a calls (a CALL edge) the function that holds b. */
static bool calls_into(const struct sb_cfg *g, uint64_t a_tagged, uint64_t b_tagged)
{
	long a = sb_cfg_block_at(g, a_tagged), b = sb_cfg_block_at(g, b_tagged);

	if (a < 0 || b < 0)
		return false;
	for (uint32_t k = g->out_start[a]; k < g->out_start[a + 1]; k++)
		if (g->edges[k].kind == SB_EDGE_CALL &&
		    g->blocks[g->edges[k].dst].func == g->blocks[b].func)
			return true;
	return false;
}

/* Block b (merged) lies in a loop with an early exit: two or more of the
 * loop's blocks leave it (a search's `&&` test or `break`), so its trip
 * count is its data's by construction. */
static bool in_early_exit_loop(const struct sb_cfg *g, long b)
{
	uint32_t f, nb;
	uint8_t *body;
	bool yes = false;

	if (b < 0)
		return false;
	f = g->blocks[b].func;
	nb = g->funcs[f].nblocks;
	if (!(body = malloc(nb ? nb : 1)))
		return false;
	yes = sb_causes_loop_of(g, (uint32_t)b, body) >= 0 && sb_causes_loop_exits(g, f, body) >= 2;
	free(body);
	return yes;
}

/*
 * Causes of about equal score (one cluster, several leaders, whose eq. 1
 * estimates from block samples differ in the noise: within 1%): a leader
 * inside a function that another leader's block calls ranks after it,
 * since the caller's decision is what multiplies the callee's work.
 *
 * One exception, from what a loop's shape says.  A sampled leader that
 * is a loop repeating a call, and another of nearly its score (within
 * EARLY_EXIT_TOL: the two vary alike, the callee's samples are the call's)
 * in another function, in a loop with an early exit: samples cannot tell
 * more calls from longer ones, but the callee's loop ends where its data
 * says (a search stops at its key) while the caller's may well repeat a
 * fixed number of times; the early-exit loop is the decision that
 * differs, and ranks first.  (Through a function pointer the CFG has no
 * call edge, so the callee is known by its score and shape only.)  Only
 * within one binary: a library's loops (strtod's, strlen's) are no place
 * a reader acts on; the program's call to them stays.
 */
#define EARLY_EXIT_TOL 0.10
void sb_causes_order_ties(const struct sb_cfg *g, struct sb_lime_result *r)
{
	for (size_t i = 1; i < r->ncauses; i++)
		for (size_t j = i; j > 0; j--) {
			struct sb_lime_cause *x = &r->causes[j - 1], *y = &r->causes[j], t;

			if (x->score - y->score > 0.01 * x->score || !calls_into(g, y->addr, x->addr))
				break;
			t = *x;
			*x = *y;
			*y = t;
		}
	for (size_t i = 0; i < r->ncauses; i++) {
		const struct sb_lime_cause *x = &r->causes[i];
		long bx = sb_cfg_block_at(g, x->addr);

		if (x->kind != SB_CAUSE_UNDETERMINED || !sb_causes_repeats_call(g, bx))
			continue;
		for (size_t j = i + 1; j < r->ncauses; j++) {
			struct sb_lime_cause y = r->causes[j];
			long by = sb_cfg_block_at(g, y.addr);

			if (r->causes[i].score - y.score > EARLY_EXIT_TOL * r->causes[i].score)
				break;
			if (y.kind != SB_CAUSE_UNDETERMINED || by < 0 ||
			    SB_CFG_SLOT(y.addr) != SB_CFG_SLOT(x->addr) ||
			    g->blocks[by].func == g->blocks[bx].func || !in_early_exit_loop(g, by))
				continue;
			memmove(&r->causes[i + 1], &r->causes[i], (j - i) * sizeof(y));
			r->causes[i] = y;
			i++;    /* x moved to i + 1: past it */
			break;
		}
	}
}
