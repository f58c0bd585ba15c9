// SPDX-License-Identifier: MIT
/*
 * Where a cause is shown (causes_priv.h): LIME names a leader block; a
 * reader needs the line that decides, which for a loop is its latch and
 * for sampled work the branch that sends threads into it.
 */
#include "causes_priv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "causes_loops.h"
#include "cfg/cfg.h"

/*
 * The profile location of a cause, from the block event whose start or
 * last instruction is the cause's (tagged) address.  A control-flow cause
 * is shown at the block's last instruction, the branch that decides; an
 * undetermined or hardware one where its time goes, the block's most
 * sampled instruction.
 */

void sb_causes_locate_insn(const struct sb_profile *p, uint64_t tagged, struct sb_cause *c)
{
	uint32_t slot = SB_CFG_SLOT(tagged);
	uint64_t vaddr = SB_CFG_UNTAG(tagged);
	bool at_branch = c->kind == SB_CAUSE_BRANCH || c->kind == SB_CAUSE_LOOP ||
			 c->kind == SB_CAUSE_CALL;

	c->binary = slot < p->nbinaries ? (int32_t)slot : -1;
	c->addr = vaddr;
	c->loc = -1;
	for (size_t i = 0; i < p->nevents; i++) {
		const struct sb_event_def *d = &p->events[i];

		if (d->binary != c->binary)
			continue;
		/* an instruction's own event: an LBR edge's branch, a load */
		if (d->kind == SB_EVK_EDGE || d->kind == SB_EVK_HW) {
			if (d->vaddr == vaddr && d->loc >= 0) {
				c->addr = vaddr;
				c->loc = d->loc;
				return;
			}
			continue;
		}
		if (d->vaddr != vaddr && d->vaddr2 != vaddr)
			continue;
		c->addr = at_branch ? d->vaddr2 : d->hot ? d->hot : d->vaddr;
		c->loc = at_branch ? d->loc2 : d->loc_hot >= 0 ? d->loc_hot : d->loc;
		/* an exact count's event of the block has no hot instruction:
		 * its samples' event, if any, follows */
		if (at_branch || d->loc_hot >= 0)
			return;
	}
}

/*
 * A loop whose trip count differs is decided where it repeats: the latch,
 * the source of the back edge into the leader (its header), shown at the
 * latch's branch.  A rotated loop's header holds its body, whose line is
 * not the loop's.
 */
bool sb_causes_locate_latch(const struct sb_profile *p, const struct sb_cfg *g, uint32_t head,
			    struct sb_cause *c)
{
	uint32_t f = g->blocks[head].func;
	uint8_t *body = malloc(g->funcs[f].nblocks ? g->funcs[f].nblocks : 1);
	long latch = sb_cfg_latch(g, head), test = latch;

	/* a latch that only falls into the header: the loop's test decides */
	if (body && latch >= 0 && sb_causes_loop_of(g, head, body) == (long)head)
		test = sb_causes_latch_test(g, (uint32_t)latch, f, body);
	free(body);
	if (test == (long)head)
		test = latch;   /* a `while` tested at its top: its latch's jump */
	return sb_causes_locate_branch(p, g, test >= 0 ? test : latch, head, c);
}

bool sb_causes_locate_branch(const struct sb_profile *p, const struct sb_cfg *g, long b,
			     uint32_t head, struct sb_cause *c)
{
	/* Compilers give the increment-and-jump of a latch line 0 at times:
	 * then the block before it in the loop, up to the exit test. */
	for (int steps = 0; b >= 0 && (uint32_t)b != head && steps < 8; steps++) {
		struct sb_cause at = *c;

		at.kind = SB_CAUSE_LOOP;   /* at the block's branch */
		sb_causes_locate_insn(p, g->blocks[b].last_insn, &at);
		if (at.loc >= 0 && p->locs[at.loc].line) {
			c->loc = at.loc;
			c->addr = at.addr;
			return true;
		}
		b = sb_cfg_nin(g, (uint32_t)b) == 1 ? (long)g->edges[g->in_edges[g->in_start[b]]].src
						    : -1;
	}
	return false;
}

/*
 * A sampled leader that heads a loop and ends in a call: its samples are
 * the callee's time, repeated by the loop (a call site's samples count
 * inclusively).  More iterations or slower calls cannot be told apart
 * from samples; the loop is the decision a thread makes, so the cause is
 * shown at its latch, like an exact loop cause.  A leader that does work
 * of its own (a load in a loop) stays where its time goes.
 */
bool sb_causes_repeats_call(const struct sb_cfg *g, long b)
{
	return b >= 0 && sb_cfg_latch(g, (uint32_t)b) >= 0 &&
	       sb_cfg_ends_in_call(g, (uint32_t)b);
}

/* Samples of block b (merged index) over the whole profile. */
uint64_t sb_causes_block_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
				 uint32_t b)
{
	uint64_t n = 0;

	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_event_def *d = &p->events[x->event];

		if (d->kind != SB_EVK_BLOCK_SAMPLES || sb_causes_event_block(p, g, d) != (long)b)
			continue;
		for (uint32_t t = 0; t < x->nthreads; t++)
			n += x->counts[t];
	}
	return n;
}

/*
 * The decision that sends threads into a sampled leader's work: the
 * branch guarding its block (sb_cfg_guards), shown at the branch if the
 * profile symbolized it.  Several guards on one source line are one test
 * the compiler duplicated (clang's 32/64-bit `div` fast path under a `%`
 * copies the comparison after it): the cause goes to that line, at the
 * copy that ran most (the one whose path the threads took).  Guards on
 * different lines are different decisions: the cause stays at the block.
 */
/*
 * sb_cfg_guards() with one more case: a path into b from a block nothing
 * reaches (the alignment padding a compiler leaves after a `jmp`, a `nop`
 * the CFG keeps as a block falling through into b) is no path.  When every
 * other way into b is a conditional branch's edge, those branches guard it.
 */
long sb_causes_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs)
{
	long n = sb_cfg_guards(g, b, gs, SB_CFG_MAX_GUARDS);

	if (n >= 0)
		return n;
	n = 0;
	for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++) {
		const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];
		uint32_t src = e->src;

		if (e->back || sb_cfg_from_padding(g, e))
			continue;
		if ((e->kind != SB_EDGE_TAKEN && e->kind != SB_EDGE_FALLTHROUGH) ||
		    n >= SB_CFG_MAX_GUARDS)
			return -1;
		gs[n++] = src;
	}
	return n ? n : -1;
}

bool sb_causes_locate_guard(const struct sb_profile *p, const struct sb_causes_graph *g,
			    uint32_t blk, struct sb_cause *c)
{
	uint32_t gs[SB_CFG_MAX_GUARDS], b0 = sb_causes_unrolled_first(g->merged, blk);
	long n = sb_causes_guards(g->merged, b0, gs);
	const struct sb_loc *first = NULL;
	struct sb_cause best = *c;
	uint64_t best_n = 0;

	if (n < 0)      /* a run of calls entered at several of them */
		n = sb_causes_run_guards(g->merged, b0, gs);

	for (long i = 0; i < n; i++) {
		struct sb_cause at = *c;
		const struct sb_loc *l;
		uint64_t ns;

		at.kind = SB_CAUSE_BRANCH;   /* at the block's branch */
		sb_causes_locate_insn(p, g->merged->blocks[gs[i]].last_insn, &at);
		if (at.loc < 0 || !p->locs[at.loc].line)
			return false;
		l = &p->locs[at.loc];
		if (first && (l->line != first->line || l->binary != first->binary ||
			      !l->file != !first->file || (l->file && strcmp(l->file, first->file))))
			return false;
		first = first ? first : l;
		ns = n > 1 ? sb_causes_block_samples(p, g, gs[i]) : 0;
		if (!i || ns > best_n || (ns == best_n && at.addr < best.addr)) {
			best = at;
			best_n = ns;
		}
	}
	if (first) {
		c->loc = best.loc;
		c->addr = best.addr;
	}
	return first != NULL;
}

bool sb_causes_conditional(const struct sb_cfg *g, uint32_t b, bool *latch)
{
	bool cond = false;

	*latch = false;
	for (uint32_t k = g->out_start[b]; k < g->out_start[b + 1]; k++) {
		cond |= g->edges[k].kind == SB_EDGE_TAKEN || g->edges[k].kind == SB_EDGE_FALLTHROUGH;
		*latch |= g->edges[k].back;
	}
	return cond;
}

static bool same_function(const struct sb_loc *a, const struct sb_loc *b)
{
	return a->function && b->function && !strcmp(a->function, b->function);
}

/*
 * A sampled leader inside inlined code (its line's function is not the
 * function whose CFG holds it: the compiler inlined a callee, LU's
 * lu_mod) is the callee's work; its loops run as often as the caller
 * decides to run it, and the same time per call cannot tell "more
 * iterations" from "more calls".  The decision is the caller's: the
 * nearest conditional branch that dominates the leader and belongs to
 * another function than the leader's line (the callee's own zero-trip
 * tests are passed over).  Not across a call (the dominating code then
 * is a different phase, a barrier's other side), nor at a latch (a loop
 * of the caller repeats the call: the trip count is not a decision to
 * enter; the existing placements handle it).  True when c moved.
 */
static bool locate_inlined_caller(const struct sb_profile *p, const struct sb_causes_graph *gr,
				  uint32_t blk, struct sb_cause *c)
{
	const struct sb_cfg *g = gr->merged;
	const struct sb_loc *l = c->loc >= 0 ? &p->locs[c->loc] : NULL;
	uint32_t f = g->blocks[blk].func, *idom;
	bool moved = false;

	if (!l || !l->function || !g->funcs[f].name || !strcmp(l->function, g->funcs[f].name))
		return false;
	idom = malloc(g->nblocks * sizeof(*idom));
	if (!idom || sb_cfg_dominators(g, f, idom)) {
		free(idom);
		return false;
	}
	for (uint32_t b = blk, steps = 0; steps < 64; steps++) {
		uint32_t d = idom[b];
		bool latch;

		if (d >= g->nblocks || d == b || g->blocks[d].func != f ||
		    sb_cfg_ends_in_call(g, d))
			break;
		b = d;
		if (!sb_causes_conditional(g, b, &latch))
			continue;
		{
			struct sb_cause at = *c;

			at.kind = SB_CAUSE_BRANCH;   /* at the block's branch */
			sb_causes_locate_insn(p, g->blocks[b].last_insn, &at);
			if (at.loc < 0 || !p->locs[at.loc].line) {
				/* unsampled: the nearest line inside it, if any
				 * (whose function tells whose test it is) */
				at.loc = sb_causes_block_line(p, gr, b);
				at.addr = SB_CFG_UNTAG(g->blocks[b].last_insn);
			}
			if (at.loc < 0)
				continue;  /* whose test, unknown: a callee's
					    * unsampled zero-trip test, mostly */
			if (same_function(&p->locs[at.loc], l))
				continue;
			if (!latch) {
				c->loc = at.loc;
				c->addr = at.addr;
				moved = true;
			}
			break;
		}
	}
	free(idom);
	return moved;
}


/* Block b is a call every pass runs: it heads no loop, and it is entered
 * only straight on (after the code before it, a call's return, or as a
 * function's entry), never by a branch (a guard, one of the copies an
 * unrolled guarded call becomes). */
static bool plain_call(const struct sb_cfg *g, long b)
{
	if (b < 0 || !sb_cfg_ends_in_call(g, (uint32_t)b) || sb_cfg_latch(g, (uint32_t)b) >= 0)
		return false;
	for (uint32_t k = g->in_start[b]; k < g->in_start[b + 1]; k++) {
		uint16_t kind = g->edges[g->in_edges[k]].kind;

		if (kind != SB_EDGE_SEQUENTIAL && kind != SB_EDGE_CALL_RETURN && kind != SB_EDGE_CALL)
			return false;
	}
	return true;
}

/*
 * A sampled leader in a loop of pure computation (it calls nothing) that
 * only a loop around it repeats (the blocks of the outer loop call nothing
 * and decide nothing but whether to go round again): the inner loop is
 * the work, the outer one how often it is done.  Samples cannot tell
 * more trips of either loop from the other; the outer loop is the
 * decision that chose how often to run the work, exactly as a loop around
 * a call to the same work would be shown (at its latch), so the cause
 * goes there.  An inner loop with an early exit (a
 * search: two or more blocks leave it) ends where its data says, which no
 * outer loop decides: it stays.  An inner loop that calls is a loop
 * around a call, shown at its own latch (the callee is the work).  True
 * when c moved.
 */
static bool locate_repeated_loop(const struct sb_profile *p, const struct sb_causes_graph *gr,
				 uint32_t blk, struct sb_cause *c)
{
	const struct sb_cfg *g = gr->merged;
	uint32_t f = g->blocks[blk].func, nb = g->funcs[f].nblocks;
	uint8_t *inner = malloc(nb ? nb : 1), *outer = malloc(nb ? nb : 1);
	struct sb_cause at = *c;
	bool moved = false;
	long l, e;

	if (inner && outer && (l = sb_causes_loop_of(g, blk, inner)) >= 0 &&
	    sb_causes_loop_exits(g, f, inner) == 1 && !sb_causes_loop_calls(g, f, inner) &&
	    (e = sb_causes_loop_around(g, (uint32_t)l, inner, outer)) >= 0 &&
	    sb_causes_loop_only_repeats(g, f, outer, inner) &&
	    sb_causes_locate_latch(p, g, (uint32_t)e, &at)) {
		c->loc = at.loc;
		c->addr = at.addr;
		moved = true;
	}
	free(inner);
	free(outer);
	return moved;
}

/*
 * A sampled leader in a loop of fixed trips (sb_causes_loop_fixed_trips:
 * its latch compares its counter with a constant, nothing else leaves it)
 * -- a loop repeating a call (`for (r = 0; r < 1549; r++) qsort(...)`) or
 * pure computation.  Samples cannot tell more trips of a loop from more
 * trips of the loop around it, but the machine code can: a loop that runs
 * the same number of trips every time it is entered decides nothing, so
 * threads whose samples there differ entered it a different number of
 * times.  The decision is the loop around it when its other blocks only
 * repeat it (sb_causes_loop_only_repeats: they call nothing and decide
 * nothing else), shown at that loop's latch; with no such loop, the
 * branch that enters the fixed loop (the guards of sb_cfg_loop_entry, as
 * causes_entered.c finds them), if the profile names it.  With neither,
 * a fixed loop around a call entered alike by every thread differs in
 * the time of its call (the callee's work: a longer string to strlen),
 * never in its trip count: the cause is shown at the call, not at the
 * latch, unless the program's own callee holds the variation in a loop
 * with an early exit (a search, called directly, through a pointer or a
 * tail call, found by its samples: sb_causes_callee_leader): its data
 * decides where it stops, and its address is left in *descend for the
 * caller to place.  Otherwise (pure work) the placement is left to the rules
 * below.  Profiles recorded without block flags have no fixed loop: they
 * report as before.  True when c moved, or when *descend was set.
 */
static bool locate_fixed_trips(const struct sb_profile *p, const struct sb_causes_graph *gr,
			       uint32_t blk, struct sb_cause *c, uint64_t *descend)
{
	const struct sb_cfg *g = gr->merged;
	uint32_t f = g->blocks[blk].func, nb = g->funcs[f].nblocks;
	uint8_t *inner = malloc(nb ? nb : 1), *outer = malloc(nb ? nb : 1);
	struct sb_cause at = *c;
	bool moved = false;
	long l, e, in;

	if (!inner || !outer || (l = sb_causes_loop_of(g, blk, inner)) < 0 ||
	    !sb_causes_loop_fixed_trips(g, f, (uint32_t)l, inner))
		goto out;
	e = sb_causes_loop_around(g, (uint32_t)l, inner, outer);
	/* (an outer loop of constant trips too decides nothing either) */
	if (e >= 0 && sb_causes_loop_only_repeats(g, f, outer, inner) &&
	    !sb_causes_loop_fixed_trips(g, f, (uint32_t)e, outer))
		moved = sb_causes_locate_latch(p, g, (uint32_t)e, &at);
	else if ((in = sb_cfg_loop_entry(g, (uint32_t)l)) >= 0)
		moved = sb_causes_locate_guard(p, gr, (uint32_t)in, &at);
	if (!moved && sb_causes_repeats_call(g, blk)) {
		uint64_t callee = sb_causes_callee_leader(p, gr, c->section, blk);

		if (callee && sb_causes_in_early_exit_loop(g, sb_cfg_block_at(g, callee))) {
			*descend = callee;   /* the callee's search: the caller places it */
			moved = true;
		} else {
			/* entered as often by every thread: what differs is the
			 * time of a call, the callee's work (a longer string to
			 * strlen) */
			at.kind = SB_CAUSE_CALL;
			sb_causes_locate_insn(p, g->blocks[blk].last_insn, &at);
			moved = at.loc >= 0 && p->locs[at.loc].line;
		}
	}
	if (moved && !*descend) {
		c->loc = at.loc;
		c->addr = at.addr;
	}
out:
	free(inner);
	free(outer);
	return moved;
}

/* Threads that never entered the leader's loop (causes_entered.c): the
 * branch that enters it decides, before the latch a loop around a call
 * is otherwise shown at.  True when c moved. */
static bool locate_entered(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t blk, struct sb_cause *c, int min_depth)
{
	long in = sb_causes_entered(p, g, c->section, blk, min_depth);

	return in >= 0 && sb_causes_locate_guard(p, g, (uint32_t)in, c);
}

/* A function no call edge leads into, held by call copies on one line
 * (causes_callee.c): at the most sampled copy's guard, like
 * locate_call_copies.  True when c moved. */
static bool locate_held_calls(const struct sb_profile *p, const struct sb_causes_graph *g,
			      uint32_t blk, struct sb_cause *c)
{
	long cb = sb_causes_holding_calls(p, g, c->section, blk);
	struct sb_cause at = *c;

	if (cb < 0)
		return false;
	at.kind = SB_CAUSE_CALL;     /* at the call */
	sb_causes_locate_insn(p, g->merged->blocks[cb].last_insn, &at);
	c->loc = at.loc;
	c->addr = at.addr;
	sb_causes_locate_guard(p, g, (uint32_t)cb, c);
	return true;
}

/* A loop entered through a preheader: its entering guard, unless that is
 * the loop's own zero-trip test (causes_entered.c). */
static bool locate_preheader_guard(const struct sb_profile *p, const struct sb_causes_graph *g,
				   uint32_t blk, struct sb_cause *c)
{
	uint32_t head;
	long pre = sb_causes_preheader(p, g, blk, &head);
	struct sb_cause at = *c, ln = *c;

	if (pre < 0 || !sb_causes_locate_guard(p, g, (uint32_t)pre, &at))
		return false;
	ln.kind = SB_CAUSE_LOOP;     /* the latch's branch (header's own in a 1-block loop) */
	sb_causes_locate_insn(p, g->merged->blocks[sb_cfg_latch(g->merged, head)].last_insn, &ln);
	if (ln.loc >= 0 && p->locs[ln.loc].line == p->locs[at.loc].line)
		return false;
	*c = at;
	return true;
}

static void locate_at(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint64_t tagged, struct sb_cause *c, int depth);

void sb_causes_locate(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint64_t tagged, struct sb_cause *c)
{
	locate_at(p, g, tagged, c, 0);
	sb_causes_hoisted_line(p, g, c);
}

static void locate_at(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint64_t tagged, struct sb_cause *c, int depth)
{
	uint64_t at, descend = 0;
	long blk, cb;
	bool per_inst;

	sb_causes_locate_insn(p, tagged, c);
	blk = sb_cfg_block_at(g->merged, tagged);
	/* a callee's entry: shown at its callers' decision (causes_copies.c) */
	if (c->kind == SB_CAUSE_CALL && (cb = sb_causes_copies_caller(p, g, c->section, blk)) >= 0) {
		sb_causes_locate_insn(p, g->merged->blocks[cb].last_insn, c);
		at = c->addr;
		sb_causes_locate_guard(p, g, (uint32_t)cb, c);
		c->kind = c->addr != at ? SB_CAUSE_BRANCH : SB_CAUSE_CALL;
		blk = cb;
	}
	/* a call repeated by the loop around a section's sync runs once per
	 * instance: a plain call of the section (causes_callee.c) */
	per_inst = c->kind == SB_CAUSE_UNDETERMINED && blk >= 0 &&
		   sb_cfg_ends_in_call(g->merged, (uint32_t)blk) &&
		   sb_causes_repeats_sections(p, g, blk);
	if (c->kind == SB_CAUSE_UNDETERMINED && depth < 8 &&
	    (plain_call(g->merged, blk) || per_inst)) {
		uint64_t in = sb_causes_callee_leader(p, g, c->section, (uint32_t)blk);

		if (in) {
			locate_at(p, g, in, c, depth + 1);
			return;
		}
	}
	if (c->kind == SB_CAUSE_UNDETERMINED && sb_causes_repeats_call(g->merged, blk) &&
	    locate_entered(p, g, (uint32_t)blk, c, 0))
		return;
	if (c->kind == SB_CAUSE_UNDETERMINED && !per_inst &&
	    sb_causes_repeats_call(g->merged, blk) &&
	    locate_fixed_trips(p, g, (uint32_t)blk, c, &descend) && !(descend && depth >= 8)) {
		if (descend)
			locate_at(p, g, descend, c, depth + 1);
		return;
	}
	descend = 0;
	/* exact: a loop entered straight after a call that some threads
	 * never entered (counts of zero), nor the loop around it (a
	 * compiler's copy for `if (rank == 0)`): the hoisted test decides */
	if (c->kind == SB_CAUSE_LOOP && blk >= 0 && locate_entered(p, g, (uint32_t)blk, c, 1)) {
		c->kind = SB_CAUSE_BRANCH;
		return;
	}
	if (((c->kind == SB_CAUSE_LOOP && blk >= 0) ||
	     (c->kind == SB_CAUSE_UNDETERMINED && !per_inst &&
	      sb_causes_repeats_call(g->merged, blk))) &&
	    sb_causes_locate_latch(p, g->merged, (uint32_t)blk, c))
		return;
	/* The decision that sends threads into the leader's work.  (Block
	 * samples only: with exact counts the leader is the decision itself.) */
	if (c->kind == SB_CAUSE_UNDETERMINED && c->loc >= 0 && blk >= 0 &&
	    !locate_inlined_caller(p, g, (uint32_t)blk, c) &&
	    !locate_fixed_trips(p, g, (uint32_t)blk, c, &descend) &&
	    !locate_repeated_loop(p, g, (uint32_t)blk, c) &&
	    !sb_causes_call_copies(p, g, (uint32_t)blk, c) &&
	    !locate_held_calls(p, g, (uint32_t)blk, c) &&
	    !locate_entered(p, g, (uint32_t)blk, c, 0) &&
	    !sb_causes_locate_guard(p, g, (uint32_t)blk, c))
		locate_preheader_guard(p, g, (uint32_t)blk, c);
	if (descend && depth < 8) {
		locate_at(p, g, descend, c, depth + 1);
		return;
	}
	/* Every cause gets a source line when any location inside its block
	 * has one: never a bare address where a line is known. */
	if (blk >= 0 && (c->loc < 0 || !p->locs[c->loc].line)) {
		int32_t l = sb_causes_block_line(p, g, (uint32_t)blk);

		if (l >= 0) {
			c->loc = l;
			c->addr = p->locs[l].offset;
		}
	}
}
