// SPDX-License-Identifier: MIT
/*
 * The order of causes of about equal score (causes_priv.h): which of two
 * leaders that vary alike a reader should look at first.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "causes_loops.h"
#include "cfg/cfg.h"

/* Function fa calls function fb: a CALL edge from one of its blocks (only
 * its tail calls when tail_only), or into a function that tail-calls fb
 * (`dispatch(n) { return work(n); }`: the call is work's), up to depth. */
static bool func_calls(const struct sb_cfg *g, uint32_t fa, uint32_t fb, bool tail_only,
		       int depth)
{
	const struct sb_cfg_func *f = &g->funcs[fa];

	for (uint32_t x = f->first_block; x < f->first_block + f->nblocks; x++) {
		if (tail_only && !(g->blocks[x].flags & SB_BLOCK_TAIL_CALL))
			continue;
		for (uint32_t k = g->out_start[x]; k < g->out_start[x + 1]; k++) {
			uint32_t fc = g->blocks[g->edges[k].dst].func;

			if (g->edges[k].kind == SB_EDGE_CALL &&
			    (fc == fb || (depth > 0 && fc != fa &&
					  func_calls(g, fc, fb, true, depth - 1))))
				return true;
		}
	}
	return false;
}

/* True when the function that holds block a calls (a CALL edge from any
 * of its blocks, or through tail calls) the other function that holds b.
 * The function, not the block: a leader of the caller is often a decision
 * beside the call (a loop copy chosen by a hoisted test, a branch whose
 * then-path calls), not the call's own block. */
static bool calls_into(const struct sb_cfg *g, uint64_t a_tagged, uint64_t b_tagged)
{
	long a = sb_cfg_block_at(g, a_tagged), b = sb_cfg_block_at(g, b_tagged);

	if (a < 0 || b < 0 || g->blocks[a].func == g->blocks[b].func)
		return false;
	return func_calls(g, g->blocks[a].func, g->blocks[b].func, false, 2);
}

/*
 * Block a's way on reaches block b (want_call: a block with a CALL edge
 * into b's function) within a's function, by forward flow (no back edge,
 * no call), in at most REACH_MAX blocks.  a itself counts.
 */
#define REACH_MAX 256
static bool leads_to(const struct sb_cfg *g, long a, long b, bool want_call)
{
	uint32_t stack[REACH_MAX], seen[REACH_MAX], ns = 0, sp = 0;

	if (a < 0 || b < 0)
		return false;
	stack[sp++] = seen[ns++] = (uint32_t)a;
	while (sp) {
		uint32_t u = stack[--sp];

		if (!want_call && u == (uint32_t)b)
			return true;
		for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++) {
			const struct sb_cfg_edge *e = &g->edges[k];
			uint32_t w = e->dst, i;

			if (e->kind == SB_EDGE_CALL) {
				if (want_call && g->blocks[w].func == g->blocks[b].func)
					return true;
				continue;
			}
			if (e->back || g->blocks[w].func != g->blocks[a].func)
				continue;
			for (i = 0; i < ns && seen[i] != w; i++)
				;
			if (i < ns || ns == REACH_MAX)
				continue;
			stack[sp++] = seen[ns++] = w;
		}
	}
	return false;
}

/* Cause y (control flow) comes before x: x is a function's entry (a CALL
 * leader at its first block, which runs as often as its callers call)
 * and y a decision in a caller from which a call into it is reached (the
 * decision that chose how often to call it: the rule holds at any
 * score); or, of about equal score (1%), y leads to x's block in one
 * function and x does not lead back (the test before the loop it guards,
 * as collapse_ties orders exact ties). */
static bool decides_before(const struct sb_cfg *g, const struct sb_lime_cause *x,
			   const struct sb_lime_cause *y)
{
	long bx = sb_cfg_block_at(g, x->addr), by = sb_cfg_block_at(g, y->addr);

	if (bx < 0 || by < 0 || (y->kind != SB_CAUSE_BRANCH && y->kind != SB_CAUSE_LOOP))
		return false;
	if (x->kind == SB_CAUSE_CALL && g->funcs[g->blocks[bx].func].first_block == (uint32_t)bx &&
	    g->blocks[by].func != g->blocks[bx].func && leads_to(g, by, bx, true))
		return true;
	return x->kind != SB_CAUSE_HW && x->score - y->score <= 0.01 * x->score &&
	       g->blocks[by].func == g->blocks[bx].func && leads_to(g, by, bx, false) &&
	       !leads_to(g, bx, by, false);
}

/*
 * Causes of about equal score (one cluster, several leaders, whose eq. 1
 * estimates from block samples differ in the noise: within 1%): a leader
 * inside a function that another leader's function calls ranks after it,
 * since the caller's decision is what multiplies the callee's work; and a
 * decision ranks before what it leads to (decides_before: a callee's
 * entry at any score, a block of its own function within 1%).
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

			if ((x->score - y->score > 0.01 * x->score || !calls_into(g, y->addr, x->addr)) &&
			    !decides_before(g, x, y))
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
			    g->blocks[by].func == g->blocks[bx].func || !sb_causes_in_early_exit_loop(g, by))
				continue;
			memmove(&r->causes[i + 1], &r->causes[i], (j - i) * sizeof(y));
			r->causes[i] = y;
			i++;    /* x moved to i + 1: past it */
			break;
		}
	}
}

/*
 * The code of the synchronization that closes a section is no cause.  In
 * a barrier written with a mutex and a condition variable (a function the
 * section closes in, or a macro expanded at the section's line), the
 * thread that arrives last takes the release path (`if (++count == n)
 * broadcast`), the others the wait: which one is last is what imbalance
 * is, so that branch follows busy time as closely as the decision that
 * caused it, and may even lead it.  It is the effect: such causes rank
 * after every other cause of the section (kept, not hidden: a reader who
 * wrote the barrier sees it).  Only for barriers written as code (user
 * barrier sections: a library's barrier, pthread's or OpenMP's, runs no
 * counted code, and an OpenMP worksharing loop's implicit barrier has the
 * loop's own line, whose schedule may well be the cause): causes in the
 * barrier's function (the section's location is inside it, a function the
 * program calls or the compiler inlined), or at the section's own line (an
 * inline barrier macro's code has the line of its use).
 */
/* The section's location lies in a function the program calls directly
 * (a barrier function) or one the compiler inlined into its caller (the
 * source's function is not the machine code's), not in one started
 * through a pointer (a thread's start routine, an OpenMP outlined body,
 * where an inline barrier macro's code sits beside the work). */
static bool in_called_function(const struct sb_profile *p, const struct sb_causes_graph *g,
			       uint32_t loc)
{
	const struct sb_cfg *m = g->merged;
	const struct sb_loc *l = &p->locs[loc];
	long b = sb_causes_loc_block(p, g, loc);
	uint32_t entry, f;

	if (b < 0)
		return false;
	f = m->blocks[b].func;
	/* inlined into its caller: the source's function is another's */
	if (l->function && m->funcs[f].name && strcmp(l->function, m->funcs[f].name))
		return true;
	entry = m->funcs[f].first_block;
	for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++)
		if (m->edges[m->in_edges[k]].kind == SB_EDGE_CALL)
			return true;
	return false;
}

static bool in_sync_code(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
			 const struct sb_cause *c)
{
	const struct sb_section *sec = &p->sections[s];
	const struct sb_loc *a, *b;

	if (c->loc < 0 || (size_t)c->loc >= p->nlocs || sec->loc >= p->nlocs)
		return false;
	a = &p->locs[c->loc];
	b = &p->locs[sec->loc];
	if (a->binary != b->binary || !a->file != !b->file || (a->file && strcmp(a->file, b->file)))
		return false;
	if (a->line && a->line == b->line)
		return true;
	return a->function && b->function &&
	       !strcmp(a->function, b->function) && in_called_function(p, g, sec->loc);
}

/* Leader block b (merged) holds code of the section's own line: an inline
 * barrier macro's release path, which the placement may have moved off
 * that line (a call in a loop is shown at the loop's latch: the broadcast
 * in a compiler's copy of the loop only the last thread runs). */
static bool leader_on_sync_line(const struct sb_profile *p, const struct sb_causes_graph *g,
				uint32_t s, uint64_t tagged)
{
	const struct sb_cfg *m = g->merged;
	long b = sb_cfg_block_at(m, tagged);
	const struct sb_loc *sl;
	uint64_t lo, hi;

	if (b < 0 || p->sections[s].loc >= p->nlocs)
		return false;
	sl = &p->locs[p->sections[s].loc];
	lo = SB_CFG_UNTAG(m->blocks[b].start);
	hi = SB_CFG_UNTAG(m->blocks[b].end);
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct sb_loc *l = &p->locs[i];

		if (l->binary == (int32_t)SB_CFG_SLOT(m->blocks[b].start) && l->offset >= lo &&
		    l->offset < hi && l->line && sb_causes_same_line(l, sl))
			return true;
	}
	return false;
}

/*
 * Exact mode: a CALL leader at the entry of a function no call edge of
 * the program enters (a pointer calls it: qsort's comparator, called back
 * by the library; a function the program calls through a pointer) whose
 * own calls never lead to the section's sync.  Its entries vary as the
 * calls that run it do (more qsort calls, more comparisons); what decided
 * is the program's, around those calls, and the callee's entry ranked
 * above it would put a callee's insides above that decision (the
 * comparator at 0.72, the ownership test at 0.05).  It ranks after the
 * section's other causes, as sampled mode leaves such callbacks out
 * (causes_frames.c).  Not a thread's start routine or an OpenMP region's
 * body: their calls lead to the sync, or out of the graph.
 */
static bool callback_entry(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
			   const struct sb_lime_cause *c)
{
	const struct sb_cfg *m = g->merged;
	long b = sb_cfg_block_at(m, c->addr), sb;
	uint32_t f;
	uint8_t *left;
	bool yes;

	if (c->kind != SB_CAUSE_CALL || b < 0 || p->sections[s].loc >= p->nlocs ||
	    (sb = sb_causes_loc_block(p, g, p->sections[s].loc)) < 0)
		return false;
	f = m->blocks[b].func;
	if (m->funcs[f].first_block != (uint32_t)b || f == m->blocks[sb].func)
		return false;
	for (uint32_t k = m->in_start[b]; k < m->in_start[b + 1]; k++)
		if (m->edges[m->in_edges[k]].kind == SB_EDGE_CALL)
			return false;
	if (!(left = calloc(m->nfuncs ? m->nfuncs : 1, 1)))
		return false;
	yes = !sb_causes_calls_reach(m, f, m->blocks[sb].func, 8, true, left);
	free(left);
	return yes;
}

int sb_causes_sink_sync(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
			struct sb_lime_result *r, struct sb_cause *at)
{
	struct sb_lime_cause *tmp = malloc((r->ncauses ? r->ncauses : 1) * sizeof(*tmp));
	struct sb_cause *tat = malloc((r->ncauses ? r->ncauses : 1) * sizeof(*tat));
	uint8_t *sync = calloc(r->ncauses ? r->ncauses : 1, 1);
	size_t n = 0;
	int ret = -ENOMEM;

	if (!tmp || !tat || !sync)
		goto out;
	for (size_t k = 0; k < r->ncauses; k++) {
		memset(&at[k], 0, sizeof(at[k]));
		at[k].section = s;
		at[k].kind = r->causes[k].kind;
		at[k].loc = -1;
		/* causes of no positive score are never shown: not placed */
		if (!(r->causes[k].score > 0))
			continue;
		sb_causes_locate(p, g, r->causes[k].addr, &at[k]);
		sync[k] = (s < p->nsections && p->sections[s].kind == SB_SECT_USER_BARRIER &&
			   (in_sync_code(p, g, s, &at[k]) ||
			    leader_on_sync_line(p, g, s, r->causes[k].addr))) ||
			  (s < p->nsections && callback_entry(p, g, s, &r->causes[k]));
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < r->ncauses; k++)
			if (sync[k] == pass) {
				tat[n] = at[k];
				tmp[n++] = r->causes[k];
			}
	memcpy(r->causes, tmp, r->ncauses * sizeof(*tmp));
	memcpy(at, tat, r->ncauses * sizeof(*tat));
	ret = 0;
out:
	free(tmp);
	free(tat);
	free(sync);
	return ret;
}
