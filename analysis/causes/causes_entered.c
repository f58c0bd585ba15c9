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
 */
#include "causes_priv.h"

#include <math.h>
#include <stdlib.h>

#include "causes_loops.h"

#define ENTERED_ALPHA 1e-3

/* Threads seen in section s: tids[], their instance counts n[] and their
 * samples in the loop's blocks S[].  Returns how many (at most max). */
static uint32_t loop_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, uint32_t f, const uint8_t *body, uint32_t *tids,
			     double *n, double *S, uint32_t max)
{
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

		if (in->section != s || d->kind != SB_EVK_BLOCK_SAMPLES)
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

/* Whether the threads without samples in the loop did not enter it. */
static bool not_entered(const double *n, const double *S, uint32_t nt)
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

long sb_causes_entered(const struct sb_profile *p, const struct sb_causes_graph *g,
		       uint32_t s, uint32_t blk)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f = m->blocks[blk].func, nb = m->funcs[f].nblocks, nt;
	uint32_t *tids = malloc(SB_CAUSES_MAX_THREADS * sizeof(*tids));
	double *n = malloc(SB_CAUSES_MAX_THREADS * sizeof(*n));
	double *S = malloc(SB_CAUSES_MAX_THREADS * sizeof(*S));
	uint8_t *body = malloc(nb ? nb : 1);
	long h, at = -1;

	if (!tids || !n || !S || !body || (h = sb_causes_loop_of(m, blk, body)) < 0 ||
	    (at = sb_cfg_loop_entry(m, (uint32_t)h)) < 0)
		goto out;
	nt = loop_samples(p, g, s, f, body, tids, n, S, SB_CAUSES_MAX_THREADS);
	if (!not_entered(n, S, nt))
		at = -1;
out:
	free(tids);
	free(n);
	free(S);
	free(body);
	return at;
}
