// SPDX-License-Identifier: MIT
/*
 * Whether a sampled loop was entered (causes_priv.h).
 *
 * Samples measure time, so a thread with more samples in a loop either
 * went round it more often or entered it more often, and samples alone
 * cannot tell which: the loop's latch is then where the cause is shown
 * (its trip count, the decision every thread makes).  One thing samples
 * do tell: whether a thread ran the loop at all.  When some threads of
 * the section have no sample in the loop while the threads that have
 * some have so many that none at all would be implausible had those
 * threads entered it too, the threads differ in whether they entered,
 * and the decision is the branch that enters it: the guard above the
 * loop's preheader (`if (rank == 0) { ...; for (...) }`), which the
 * guard walk of sb_cfg_guards() does not pass, since a preheader has code
 * of its own (loop setup) and, in general, is no decision.  The entering
 * edge is sb_cfg_loop_entry()'s.  A loop around a call (a library's
 * memcpy) is judged the same way: a call site holds its callee's samples.
 * A thread that reached the loop with zero trips passed its zero-trip
 * test, which is then the entering branch found: the loop's own line,
 * the trip count, as before.
 *
 * The test.  Thread t appears in n_t of the section's stored instances
 * and has S_t samples in the loop's blocks over them.  Of the threads
 * with samples, the least busy sets the rate an entering thread shows at
 * least, r = min S_t / n_t samples per instance: the loop's samples per
 * entry, taken from the thread that entered least (a loop whose trip
 * count varies gives its shortest runner the smallest rate, so zero
 * trips by chance are judged against the least work any thread did, not
 * the average).  Samples of a thread in a loop it ran are Poisson in its
 * time there, so a thread that entered at rate r has none in n_t
 * instances with probability exp(-r n_t).  The threads without samples
 * did not enter when that is below ENTERED_ALPHA for every one of them:
 * r n_t >= ln(1 / ENTERED_ALPHA), about 6.9 samples expected where none
 * came.  A loop every thread sampled (more or fewer trips: a trip-count
 * cause) never passes: there is no thread without samples.  Threads are
 * matched across instances by tid, so a decision that picks a different
 * thread in each instance (a rotating owner) sums to samples in every
 * thread and is left to the existing placements.  A stray sample (skid
 * into the loop) in a thread that skipped it lowers r to nearly nothing:
 * the test then fails, and the cause stays where it was, never worse.
 *
 * A loop entered straight from other code (after a call returns) has no
 * branch of its own that enters it; when the same threads never entered
 * the loop around it either, the walk climbs to that loop (gcc and clang
 * -O3 unswitch `if (rank == 0)` out of the loop around the work: one
 * copy of that loop per outcome, each thread running one), and from its
 * entering block back through the straight setup code the compiler puts
 * before a copy to the block the test's edge enters.  Never past a loop
 * that repeats the section (it holds the section's sync, or calls the
 * barrier function that does): every thread
 * runs it once per instance, however few samples waiting threads leave
 * in it, so entering it decides nothing.
 */
#include "causes_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "causes_loops.h"

#define ENTERED_ALPHA 1e-3
#define ENTERED_DEPTH 4     /* loops around climbed for an entering branch */

/* Threads seen in section s: tids[], their instance counts n[] and their
 * samples in the body's blocks S[].  Returns how many (at most max). */
uint32_t sb_causes_body_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
				uint32_t s, uint32_t f, const uint8_t *body, uint32_t *tids,
				double *n, double *S, uint32_t max)
{
	/* exact counts where the profile has them: its cpu-clock samples,
	 * kept beside them for the hardware test, would let one skidded
	 * sample make a thread that ran none of the blocks look like it did */
	uint32_t kind = SB_EVK_BLOCK_SAMPLES;

	for (size_t e = 0; e < p->nevents && kind == SB_EVK_BLOCK_SAMPLES; e++)
		if (p->events[e].kind == SB_EVK_BLOCK_COUNT)
			kind = SB_EVK_BLOCK_COUNT;

	const struct sb_cfg *m = g->merged;
	uint32_t nt = 0, lo = m->funcs[f].first_block;

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s)
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++) {
			uint32_t k = 0;

			while (k < nt && tids[k] != in->per_thread[t].tid)
				k++;
			if (k == nt) {
				if (nt == max)
					continue;
				tids[nt] = in->per_thread[t].tid;
				n[nt] = S[nt] = 0;
				nt++;
			}
			n[k] += 1;
		}
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];
		const struct sb_event_def *d = &p->events[x->event];
		long b;

		if (in->section != s || d->kind != kind)
			continue;
		b = sb_causes_event_block(p, g, d);
		if (b < 0 || m->blocks[b].func != f || !body[b - lo])
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++) {
			uint32_t k = 0;

			while (k < nt && tids[k] != in->per_thread[t].tid)
				k++;
			if (k < nt)
				S[k] += (double)x->counts[t];
		}
	}
	return nt;
}

bool sb_causes_not_entered(const double *n, const double *S, uint32_t nt)
{
	double r = INFINITY;
	uint32_t zero = 0;

	for (uint32_t t = 0; t < nt; t++)
		if (S[t] > 0 && n[t] > 0 && S[t] / n[t] < r)
			r = S[t] / n[t];
	if (!isfinite(r))
		return false;             /* no thread sampled it */
	for (uint32_t t = 0; t < nt; t++) {
		if (S[t] > 0)
			continue;
		zero++;
		if (r * n[t] < log(1 / ENTERED_ALPHA))
			return false;     /* zero by chance is plausible */
	}
	return zero > 0;
}

/*
 * The block a guard enters before loop header h's entering block at: at
 * itself when a conditional branch guards it, else back through the
 * straight setup code a compiler puts before a loop it copied (`xor
 * %r14d,%r14d; movabs $K,%rbx; jmp header`: one way in, one way out,
 * no call), which the guard walk of sb_cfg_guards() does not pass.
 */
static uint32_t guarded_setup(const struct sb_cfg *m, uint32_t at, uint32_t h)
{
	uint32_t gs[SB_CFG_MAX_GUARDS], b = at;

	for (int steps = 0; steps < 4; steps++) {
		const struct sb_cfg_edge *in = NULL;

		if (sb_cfg_guards(m, b, gs, SB_CFG_MAX_GUARDS) > 0)
			return b;
		for (uint32_t k = m->in_start[b]; k < m->in_start[b + 1]; k++) {
			const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];

			if (b == h && e->back)
				continue;
			if (in)
				return at;        /* two ways in */
			in = e;
		}
		if (!in || (in->kind != SB_EDGE_JUMP && in->kind != SB_EDGE_SEQUENTIAL) ||
		    sb_cfg_nout(m, in->src) != 1 || in->src == h)
			return at;
		b = in->src;
	}
	return at;
}

/* The loop of header h (body, a byte per block of its function f) holds
 * a section's sync, or calls the function that does (a barrier function:
 * `rendezvous(&team)`): it repeats the section. */
static bool holds_sync(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t f,
		       long h, const uint8_t *body)
{
	const struct sb_cfg *m = g->merged;
	uint32_t lo = m->funcs[f].first_block;

	if (sb_causes_repeats_sections(p, g, h))
		return true;
	for (size_t s = 0; s < p->nsections; s++) {
		long sb = sb_causes_loc_block(p, g, p->sections[s].loc);

		if (sb < 0 || m->blocks[sb].func == f)
			continue;
		for (uint32_t b = lo; b < lo + m->funcs[f].nblocks; b++) {
			if (!body[b - lo])
				continue;
			for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
				if (m->edges[k].kind == SB_EDGE_CALL &&
				    m->blocks[m->edges[k].dst].func == m->blocks[sb].func)
					return true;
		}
	}
	return false;
}

long sb_causes_entered(const struct sb_profile *p, const struct sb_causes_graph *g,
		       uint32_t s, uint32_t blk, int min_depth)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f = m->blocks[blk].func, nb = m->funcs[f].nblocks;
	uint32_t *tids = malloc(SB_CAUSES_MAX_THREADS * sizeof(*tids));
	double *n = malloc(SB_CAUSES_MAX_THREADS * sizeof(*n));
	double *S = malloc(SB_CAUSES_MAX_THREADS * sizeof(*S));
	uint8_t *body = malloc(nb ? nb : 1), *outer = malloc(nb ? nb : 1);
	long h, at = -1;
	int depth = 0;

	if (!tids || !n || !S || !body || !outer || (h = sb_causes_loop_of(m, blk, body)) < 0)
		goto out;
	/* A loop entered straight from other code (after a call returns) has
	 * no branch of its own that enters it: when the same threads never
	 * entered the loop around it either, that loop's entering branch is
	 * the decision (a compiler's copy of the loop around for the threads
	 * that take `if (rank == 0)`: gcc and clang -O3 unswitch the test
	 * out of it and run one copy per outcome). */
	for (; depth < ENTERED_DEPTH; depth++) {
		/* the loop around a section's sync runs once per instance on
		 * every thread: entering it decides nothing in the section,
		 * whatever few samples waiting threads leave in it */
		if (holds_sync(p, g, f, h, body)) {
			at = -1;
			break;
		}
		uint32_t nt = sb_causes_body_samples(p, g, s, f, body, tids, n, S,
						     SB_CAUSES_MAX_THREADS);

		if (!sb_causes_not_entered(n, S, nt) ||
		    (at = sb_cfg_loop_entry(m, (uint32_t)h)) >= 0 ||
		    (h = sb_causes_loop_around(m, (uint32_t)h, body, outer)) < 0)
			break;
		memcpy(body, outer, nb);
	}
	if (at >= 0 && depth < min_depth)
		at = -1;
	if (at >= 0)
		at = guarded_setup(m, (uint32_t)at, (uint32_t)h);
out:
	free(tids);
	free(n);
	free(S);
	free(body);
	free(outer);
	return at;
}

/*
 * The block a sampled loop's entering guard is found above, when the loop
 * is entered through a preheader and the guard can enter it more than
 * once per instance.  Samples measure time, and time in a loop is how
 * often it was entered times its trips.  Where the branch that enters the
 * loop runs once per instance (the loop around it is the one repeating
 * the section, or there is none), each thread entered at most once, a
 * thread that did not is told by causes_entered's test above, and the
 * samples of threads that did differ by trips: the loop is the cause.
 * Where that branch sits in a loop of its own inside the section (`for
 * (j) if (owns(j)) for (q < N) ...`), the threads' entry counts differ as
 * much as trips could, and the branch is the decision a leader heading a
 * loop entered straight from it is already shown at (the guard walk of
 * the leader's block).  A loop entered through straight-line setup code
 * (a preheader: the loop's constants, which clang -O1 puts in a block of
 * its own before the header) must be shown there too: the preheader runs
 * exactly as often as the loop is entered and decides nothing, so the
 * branch into it is the same decision.  Returns the preheader (the block
 * whose conditional in-edge enters the loop, sb_cfg_loop_entry) of the
 * loop that leader blk heads or closes, its header in *head; -1 when blk
 * heads no loop, the header is itself the entered block (its own guards
 * are the walk's), or no loop of the section repeats the preheader.  The
 * caller keeps the leader where it was when the guard found is the loop's
 * own zero-trip test (on the latch's line): the loop's time is then its
 * own trips or slower ones (a cache miss), shown where the time goes.
 */
long sb_causes_preheader(const struct sb_profile *p, const struct sb_causes_graph *gr,
			 uint32_t blk, uint32_t *head)
{
	const struct sb_cfg *g = gr->merged;
	uint32_t nb = g->funcs[g->blocks[blk].func].nblocks;
	long h = sb_cfg_latch(g, blk) >= 0 ? (long)blk : -1, at, outer;
	uint8_t *body;

	for (uint32_t k = g->out_start[blk]; h < 0 && k < g->out_start[blk + 1]; k++)
		if (g->edges[k].back)
			h = g->edges[k].dst;
	if (h < 0 || (at = sb_cfg_loop_entry(g, (uint32_t)h)) == h || at < 0)
		return -1;
	*head = (uint32_t)h;
	if (!(body = malloc(nb ? nb : 1)))
		return -1;
	outer = sb_causes_loop_of(g, (uint32_t)at, body);
	free(body);
	return outer >= 0 && !sb_causes_repeats_sections(p, gr, outer) ? at : -1;
}

/*
 * The line of a test gcc hoisted out of a loop it copied: the compare
 * carries the loop's line in the debug info, and each copy keeps an empty
 * row of the test's own statement (sb_event_def.stmt_line) at the first
 * code after it.  When both ways out of the cause's branch reach, straight
 * on (through calls, HOISTED_STEPS blocks), two blocks with the same such
 * line, each in a loop of its own that holds neither the branch nor the
 * other (two copies, the test hoisted before them), the cause is shown at
 * that line: the `if` the reader wrote.
 */
#define HOISTED_STEPS 6

/* The statement line the straight path from edge k reaches, its location
 * in *loc; 0 none. */
static uint32_t path_stmt(const struct sb_profile *p, const struct sb_causes_graph *g,
			  uint32_t k, int32_t *loc, uint32_t *at)
{
	const struct sb_cfg *m = g->merged;
	uint32_t b = m->edges[k].dst, f = m->blocks[b].func;

	for (int steps = 0; steps < HOISTED_STEPS && m->blocks[b].func == f; steps++) {
		uint32_t next = UINT32_MAX, n = 0;

		for (size_t e = 0; e < p->nevents; e++) {
			const struct sb_event_def *d = &p->events[e];

			if (!d->stmt_line || d->kind != SB_EVK_BLOCK_SAMPLES ||
			    sb_causes_event_block(p, g, d) != (long)b)
				continue;
			for (size_t i = 0; i < p->nlocs; i++)
				if (p->locs[i].binary == d->binary && p->locs[i].offset == d->vaddr &&
				    p->locs[i].line == d->stmt_line) {
					*loc = (int32_t)i;
					*at = b;
					return d->stmt_line;
				}
		}
		for (uint32_t j = m->out_start[b]; j < m->out_start[b + 1]; j++)
			if (m->edges[j].kind != SB_EDGE_CALL && !m->edges[j].back) {
				next = m->edges[j].dst;
				n++;
			}
		if (n != 1)
			break;
		b = next;
	}
	return 0;
}

void sb_causes_hoisted_line(const struct sb_profile *p, const struct sb_causes_graph *g,
			    struct sb_cause *c)
{
	const struct sb_cfg *m = g->merged;
	long b = c->binary >= 0 ? sb_cfg_block_at(m, SB_CFG_TAG(c->binary, c->addr)) : -1;
	uint32_t way[2], n = 0, line[2], at[2] = { 0, 0 };
	int32_t loc[2] = { -1, -1 };
	uint8_t *body;
	bool copies = true;

	if (b < 0 || m->blocks[b].last_insn != SB_CFG_TAG(c->binary, c->addr) || c->loc < 0)
		return;
	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
		if ((m->edges[k].kind == SB_EDGE_TAKEN || m->edges[k].kind == SB_EDGE_FALLTHROUGH) &&
		    n < 2)
			way[n++] = k;
	if (n != 2)
		return;
	for (uint32_t i = 0; i < 2; i++)
		line[i] = path_stmt(p, g, way[i], &loc[i], &at[i]);
	if (!line[0] || line[0] != line[1] || at[0] == at[1] ||
	    m->blocks[at[0]].func != m->blocks[b].func || m->blocks[at[1]].func != m->blocks[b].func)
		return;
	/* two copies: each row in a loop of its own that does not hold the
	 * branch (a test hoisted before them), not one way's common code */
	if (!(body = malloc(m->funcs[m->blocks[b].func].nblocks)))
		return;
	for (uint32_t i = 0; i < 2 && copies; i++) {
		uint32_t lo = m->funcs[m->blocks[b].func].first_block;

		copies = sb_causes_loop_of(m, at[i], body) >= 0 && !body[b - lo] &&
			 !body[at[1 - i] - lo];
	}
	free(body);
	if (copies && line[0] != p->locs[c->loc].line &&
	    p->locs[loc[0]].binary == p->locs[c->loc].binary &&
	    !p->locs[loc[0]].file == !p->locs[c->loc].file &&
	    (!p->locs[c->loc].file || !strcmp(p->locs[loc[0]].file, p->locs[c->loc].file)))
		c->loc = loc[0];
}
