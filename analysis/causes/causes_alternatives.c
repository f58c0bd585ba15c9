// SPDX-License-Identifier: MIT
/*
 * The other decisions a sampled cause may be (causes_priv.h).
 *
 * Block samples measure time.  A thread with more time in a loop, or in
 * a call inside one, went round the loop more often (or made slower
 * calls), or was sent into it more often by a decision around it: a loop
 * that encloses it, or a branch that enters it.  Samples alone cannot
 * tell these apart; exact counts (`scalebpf cc`) can.  causes_locate.c
 * shows the cause at one of them: where the time is, unless the code
 * shows it decides nothing (fixed trips, causes_locate.c) or some threads
 * never entered it (causes_entered.c).  This walk names the others, the
 * nearest first, so that the report lists every line the samples allow
 * and says the line is not settled, instead of naming one of several
 * lines as if the samples had chosen it.
 *
 * The walk starts at the loop that holds the cause's block:
 *  - the loop's own latch, when the cause is shown at a call inside it
 *    (the call's time, or how often the loop makes it);
 *  - every latch of the loop on another line than the cause's, not of
 *    fixed trips: its own (a cause shown at a load in the loop: slower
 *    loads, or more trips), and the other loop's when loops share one
 *    header, which makes them one natural loop (gcc -O1 jumps from an
 *    outer loop's end straight to the inner one's header);
 *  - the branch that enters the loop (sb_cfg_loop_entry's guards), unless
 *    it is the loop's own zero-trip test (on the latch's line): an
 *    `if (owns(i, j))` decides how much the loop runs as much as the
 *    loop's trip count does;
 *  - the loop around it, at its latch, unless its trips are fixed
 *    (SB_BLOCK_CONST_BOUND: it repeats the inner loop the same number of
 *    times on every thread, which decides nothing; the walk goes on past
 *    it) or it repeats the section (it holds the section's sync: once
 *    per instance, the walk ends).
 * A cause shown at a branch that enters work (a guard, no latch) is that
 * branch's decision and gets no walk.
 *
 * One test of the samples settles a loop around: its own blocks, those
 * not in the loop inside it, run once per trip of it.  Were its trips
 * alike on every thread, their samples would be alike per instance
 * (flat: rate lambda n_t, n_t the thread's instances); were its trips
 * what differs, they would follow the inner loop's samples W_t
 * (proportional: rate mu W_t).  Poisson log-likelihoods of both with
 * their rates fitted; a ratio beyond NEST_LR for "flat", with flat
 * fitting by itself (its deviance; a loop's own blocks can cost what no
 * trip count says, a store to a line every thread writes), ends the walk
 * there: the loops outside repeat the work alike, what is listed so far
 * is all the samples allow.  Otherwise (proportional, or too few samples
 * in the loop's own blocks to tell, the usual case: a loop's control is
 * cheap beside its work) the loop around is listed.
 */
#include "causes_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "causes.h"
#include "causes_loops.h"

#define NEST_LR 20.0     /* likelihood ratio that settles "flat" */
#define NEST_FIT_ALPHA 0.01 /* the flat model's deviance test */
#define NEST_FLOOR 0.5   /* samples added to W_t: a thread with no inner
			  * sample may still have run the loop's control */

/* The outer loop's own blocks (outer minus inner) sampled alike on every
 * thread per instance, rather than following the inner loop's samples. */
static int trips_alike(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
		       uint32_t f, const uint8_t *outer, const uint8_t *inner, uint32_t nb)
{
	uint32_t *tids = malloc(2 * SB_CAUSES_MAX_THREADS * sizeof(*tids));
	double *n = malloc(4 * SB_CAUSES_MAX_THREADS * sizeof(*n));
	uint8_t *own = malloc(nb ? nb : 1);
	double *O, *n2, *W;
	double sO = 0, sN = 0, sW = 0, ll_flat = 0, ll_prop = 0, dev = 0;
	uint32_t nt, nt2, k = 0;
	int alike = -ENOMEM;

	if (!tids || !n || !own)
		goto out;
	O = n + SB_CAUSES_MAX_THREADS;
	n2 = O + SB_CAUSES_MAX_THREADS;
	W = n2 + SB_CAUSES_MAX_THREADS;
	for (uint32_t b = 0; b < nb; b++)
		own[b] = outer[b] && !inner[b];
	nt = sb_causes_body_samples(p, g, s, f, own, tids, n, O, SB_CAUSES_MAX_THREADS);
	nt2 = sb_causes_body_samples(p, g, s, f, inner, tids + SB_CAUSES_MAX_THREADS, n2, W,
				     SB_CAUSES_MAX_THREADS);
	alike = 0;
	if (nt != nt2 || memcmp(tids, tids + SB_CAUSES_MAX_THREADS, nt * sizeof(*tids)))
		goto out;   /* (both walk the instances alike: never) */
	for (uint32_t t = 0; t < nt; t++) {
		sO += O[t];
		sN += n[t];
		sW += W[t] + NEST_FLOOR;
	}
	if (!(sO > 0) || !(sN > 0))
		goto out;   /* nothing to tell by */
	for (uint32_t t = 0; t < nt; t++) {
		double rf = sO / sN * n[t], rp = sO / sW * (W[t] + NEST_FLOOR);

		if (!(n[t] > 0))
			continue;
		ll_flat += (O[t] > 0 ? O[t] * log(rf) : 0) - rf;
		ll_prop += (O[t] > 0 ? O[t] * log(rp) : 0) - rp;
		dev += 2 * ((O[t] > 0 ? O[t] * log(O[t] / rf) : 0) - (O[t] - rf));
		k++;
	}
	/* flat must beat proportional and fit itself: the loop's own blocks
	 * can cost what no trip count says (a store to a line every thread
	 * writes), which neither model explains */
	alike = ll_flat - ll_prop > log(NEST_LR) &&
		(k < 2 || gsl_cdf_chisq_Q(dev, k - 1) > NEST_FIT_ALPHA);
out:
	free(tids);
	free(n);
	free(own);
	return alike;
}

/* a's line is c's or one of alt[0..n)'s. */
static bool listed(const struct sb_profile *p, const struct sb_cause *c,
		   const struct sb_cause *alt, size_t n, const struct sb_cause *a)
{
	if (a->loc < 0 || !p->locs[a->loc].line ||
	    (c->loc >= 0 && sb_causes_same_line(&p->locs[a->loc], &p->locs[c->loc])))
		return true;
	for (size_t i = 0; i < n; i++)
		if (alt[i].loc >= 0 && sb_causes_same_line(&p->locs[a->loc], &p->locs[alt[i].loc]))
			return true;
	return false;
}

/* The line of loop h's latch branch (-1 when none). */
static int32_t latch_loc(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t h, const struct sb_cause *c)
{
	struct sb_cause at = *c;

	return sb_causes_locate_latch(p, g->merged, h, &at) ? at.loc : -1;
}

long sb_causes_alternatives(const struct sb_profile *p, const struct sb_causes_graph *g,
				 uint32_t s, const struct sb_cause *c, struct sb_cause *alt,
				 size_t max)
{
	const struct sb_cfg *m = g->merged;
	long blk = sb_causes_cause_block(p, g, c);
	uint32_t f, nb;
	uint8_t *inner = NULL, *outer = NULL;
	long h, e, in, n = 0;
	bool latch;

	if (blk < 0 || !max ||
	    (sb_causes_conditional(m, (uint32_t)blk, &latch) && !latch))
		return 0;       /* a guard: that branch's decision, no walk */
	f = m->blocks[blk].func;
	nb = m->funcs[f].nblocks;
	inner = malloc(nb ? nb : 1);
	outer = malloc(nb ? nb : 1);
	if (!inner || !outer) {
		n = -ENOMEM;
		goto out;
	}
	if ((h = sb_causes_loop_of(m, (uint32_t)blk, inner)) < 0 ||
	    sb_causes_repeats_sections(p, g, h))
		goto out;
	/* a call inside the loop: its time, or the loop's trips */
	if (sb_cfg_ends_in_call(m, (uint32_t)blk) &&
	    !sb_causes_loop_fixed_trips(m, f, (uint32_t)h, inner)) {
		struct sb_cause a = *c;

		a.kind = SB_CAUSE_UNDETERMINED;
		if (sb_causes_locate_latch(p, m, (uint32_t)h, &a) &&
		    !listed(p, c, alt, (size_t)n, &a))
			alt[n++] = a;
	}
	while ((size_t)n < max) {
		int32_t ll = latch_loc(p, g, (uint32_t)h, c);
		struct sb_cause a;

		/* loops that share one header are one natural loop with a latch
		 * each (gcc -O1 jumps from an outer loop's end straight to the
		 * inner one's header): a latch on another line whose trips are
		 * not fixed is the other loop's decision */
		for (uint32_t k = m->in_start[h]; k < m->in_start[h + 1] && (size_t)n < max; k++) {
			const struct sb_cfg_edge *be = &m->edges[m->in_edges[k]];
			/* (a latch that only falls into the header: the loop's test) */
			long t = be->back ? sb_causes_latch_test(m, be->src, f, inner) : -1;

			t = t >= 0 && t != h ? t : (long)be->src;   /* (a `while`: its jump) */
			a = *c;
			a.kind = SB_CAUSE_UNDETERMINED;
			if (be->back && !(m->blocks[t].flags & SB_BLOCK_CONST_BOUND) &&
			    sb_causes_locate_branch(p, m, t, (uint32_t)h, &a) &&
			    !listed(p, c, alt, (size_t)n, &a))
				alt[n++] = a;
		}
		a = *c;
		a.kind = SB_CAUSE_UNDETERMINED;
		/* the branch entering the loop, unless its own zero-trip test */
		if ((size_t)n < max && (in = sb_cfg_loop_entry(m, (uint32_t)h)) >= 0 &&
		    sb_causes_locate_guard(p, g, (uint32_t)in, &a) &&
		    !(ll >= 0 && sb_causes_same_line(&p->locs[ll], &p->locs[a.loc])) &&
		    !listed(p, c, alt, (size_t)n, &a))
			alt[n++] = a;
		e = sb_causes_loop_around(m, (uint32_t)h, inner, outer);
		if ((size_t)n >= max || e < 0 || sb_causes_repeats_sections(p, g, e))
			break;
		if (!sb_causes_loop_fixed_trips(m, f, (uint32_t)e, outer)) {
			int alike = trips_alike(p, g, s, f, outer, inner, nb);

			if (alike < 0) {
				n = alike;
				goto out;
			}
			if (alike)
				break;
			a = *c;
			a.kind = SB_CAUSE_UNDETERMINED;
			if (sb_causes_locate_latch(p, m, (uint32_t)e, &a) &&
			    !listed(p, c, alt, (size_t)n, &a))
				alt[n++] = a;
		}
		h = e;
		memcpy(inner, outer, nb);
	}
out:
	free(inner);
	free(outer);
	return n;
}
