// SPDX-License-Identifier: MIT
/*
 * Descending from a sampled call site into its callee (causes_priv.h): a
 * call site's samples are its callees' time, so where a call site leads
 * and the call itself decides nothing, the decision is inside the callee.
 */
#include "causes_priv.h"

#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes.h"
#include "causes_loops.h"

/*
 * A sampled leader that is a plain call site (no loop repeats it, no
 * branch guards it: every thread runs it once per pass) decides nothing:
 * its samples are its callee's, counted at the call because a call site
 * holds its callees' samples.  LIME's leader is the cluster's dominator,
 * so the caller leads; the decision is inside the callee, where the
 * samples that differ were taken.  The block that stands in for the call
 * is one where samples are taken (it calls nothing), in another function
 * of the same binary (a library's code is no place a reader acts on),
 * whose within-instance covariance with the call explains most of the
 * call's variation, and at least half of it: the callee's own leader,
 * found by its samples rather than by call edges, which a tail call (a
 * jump) or a function pointer does not leave in the CFG.  It is then
 * placed by the same rules (its loop, its guard).  The blocks of one
 * loop count together: clang unrolls a search's `for` + `break` four
 * times into five blocks, each with a fifth of the loop's samples (AB
 * p051: 20 samples per thread, no block near half), and the loop's block
 * that carries most of it stands in.  Straight-line code in a function no
 * call edge leads into never does (loop_top: a library's callback; so is
 * a region's body or a thread's start, which no call of the program
 * reaches either).  Returns its tagged address, or 0: no single block or
 * loop carries the variation.
 *
 * Covariances are over section s's (instance, thread) pairs, each pair
 * centred on its instance's mean (what LIME compares, whichever thread
 * is the busy one in which instance).  With dx the call's centred counts,
 * cov(x, y) = sum dx * y (dx sums to 0 per instance), so one pass over
 * the vectors gives every candidate's: O(vectors x threads).
 */
#define DESCEND_SHARE 0.5

/* Each candidate event's group: its block's innermost loop (the header),
 * or the block itself outside loops.  Straight-line code outside loops in
 * a function no call edge leads into is no candidate (-1): a callback
 * (qsort's comparator) takes as long each time, so its samples differ
 * by how often the library called it, which the call's own loops or the
 * library decided, not the callback (blind seed AA p052).  The event with
 * the most covariance in the group with the most, that group's sum in
 * *sum; -1 for none.  evblk[] is rewritten with the groups. */
static long loop_top(const struct sb_cfg *m, long *evblk, const double *cov, size_t nev,
		     double *sum)
{
	double *group = calloc(m->nblocks ? m->nblocks : 1, sizeof(*group)), best = 0;
	uint8_t *body = NULL;
	uint32_t cap = 0;
	long top = -1;

	if (!group)
		return -1;
	/* each candidate's group, its covariance summed into it */
	for (size_t e = 0; e < nev; e++) {
		uint32_t f;
		long h;

		if (evblk[e] < 0 || cov[e] <= 0)
			continue;
		f = m->blocks[evblk[e]].func;
		if (m->funcs[f].nblocks > cap) {
			uint8_t *more = realloc(body, m->funcs[f].nblocks);

			if (!more)
				goto out;
			body = more;
			cap = m->funcs[f].nblocks;
		}
		h = sb_causes_loop_of(m, (uint32_t)evblk[e], body);
		evblk[e] = h >= 0 ? h : sb_cfg_uncalled(m, f) ? -1 : evblk[e];
		if (evblk[e] >= 0)
			group[evblk[e]] += cov[e];
	}
	for (size_t e = 0; e < nev; e++) {
		double g;

		if (evblk[e] < 0 || cov[e] <= 0)
			continue;
		g = group[evblk[e]];
		if (top < 0 || g > best || (g == best && cov[e] > cov[top])) {
			best = g;
			top = (long)e;
		}
	}
	*sum = best;
out:
	free(body);
	free(group);
	return top;
}

uint64_t sb_causes_callee_leader(const struct sb_profile *p, const struct sb_causes_graph *g,
				uint32_t s, uint32_t blk)
{
	const struct sb_cfg *m = g->merged;
	uint32_t slot = SB_CFG_SLOT(m->blocks[blk].start);
	long *evblk = malloc((p->nevents ? p->nevents : 1) * sizeof(*evblk));
	double *cov = calloc(p->nevents ? p->nevents : 1, sizeof(*cov)), *dx = NULL, va = 0;
	size_t n = 0, *first = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*first));
	uint64_t best = 0;
	double sum = 0;
	long top;

	if (!evblk || !cov || !first)
		goto out;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		first[i] = n;
		n += p->instances[i].section == s ? p->instances[i].nthreads : 0;
	}
	if (!(dx = calloc(n ? n : 1, sizeof(*dx))))
		goto out;
	for (size_t e = 0; e < p->nevents; e++) {
		long b = p->events[e].kind == SB_EVK_BLOCK_SAMPLES ?
			sb_causes_event_block(p, g, &p->events[e]) : -1;

		/* the call's own events: -2; candidates: their block */
		evblk[e] = b == (long)blk ? -2 : b < 0 || m->blocks[b].func == m->blocks[blk].func ||
			SB_CFG_SLOT(m->blocks[b].start) != slot || sb_cfg_ends_in_call(m, (uint32_t)b) ?
			-1 : b;
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section == s && evblk[x->event] == -2)
			for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++)
				dx[first[x->instance] + t] += (double)x->counts[t];
	}
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		double mx = 0;

		if (in->section != s || !in->nthreads)
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++)
			mx += dx[first[i] + t] / in->nthreads;
		for (uint32_t t = 0; t < in->nthreads; t++) {
			dx[first[i] + t] -= mx;
			va += dx[first[i] + t] * dx[first[i] + t];
		}
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section != s || evblk[x->event] < 0)
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++)
			cov[x->event] += dx[first[x->instance] + t] * (double)x->counts[t];
	}
	if ((top = loop_top(m, evblk, cov, p->nevents, &sum)) >= 0 && va > 0 &&
	    sum >= DESCEND_SHARE * va)
		best = SB_CFG_TAG(p->events[top].binary, p->events[top].vaddr);
out:
	free(evblk);
	free(cov);
	free(dx);
	free(first);
	return best;
}

/*
 * A loop that holds a section's closing synchronization repeats the
 * section: one trip per instance, for every thread alike.  Its trip count
 * is no decision inside the section, and a call it repeats runs once per
 * instance, a plain call of the section (whose decision is in the
 * callee).  True when block blk heads such a loop.
 */
bool sb_causes_repeats_sections(const struct sb_profile *p, const struct sb_causes_graph *g,
				long blk)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f, first, nb;
	uint8_t *body;
	bool r = false;

	if (blk < 0)
		return false;
	f = m->blocks[blk].func;
	first = m->funcs[f].first_block;
	nb = m->funcs[f].nblocks;
	body = malloc(nb ? nb : 1);
	if (body && sb_causes_loop_of(m, (uint32_t)blk, body) == blk)
		for (size_t s = 0; s < p->nsections && !r; s++) {
			long b = sb_causes_loc_block(p, g, p->sections[s].loc);

			r = b >= 0 && (uint32_t)b >= first && (uint32_t)b < first + nb &&
			    body[b - first];
		}
	free(body);
	return r;
}

/*
 * The call sites that hold a sampled leader's function when no call edge
 * leads into it: it is reached by a tail call (`dispatch(n) { if (!n)
 * return; do_block(n); }` compiled to a `jmp`, which the CFG keeps no
 * edge for, the target being outside dispatch) or through a pointer.  A
 * call site holds its callees' samples (every sample's stack has the
 * call's return address), including those a tail call's target took in
 * its caller's frame, so the program's call blocks whose samples contain
 * the function's, thread by thread, are its call sites, whatever the
 * edges say.  When they are two or more blocks on one source line, each
 * with samples in the section (one call the compiler copied, an unrolled
 * `for (j) if (owns(j)) dispatch()`; not main's region call beside its
 * thread-count query), no one site's samples carry the variation and LIME's
 * call-site rule could not lead from them, the same case as
 * locate_call_copies' direct calls: the decision is the caller's, at the
 * most sampled copy (its guard, placed by the caller).  Contain: on every
 * thread with samples in the function the line's call blocks have at
 * least HOLD_SHARE of them, and over all threads as many (an unwind that
 * failed loses a few).  Of several such lines the innermost holds the
 * fewest samples (an outer frame, main's call of the whole phase, holds
 * more).  Returns the copy's block, or -1.
 */
#define HOLD_SHARE 0.9
#define HOLD_LINES 64

struct holders {
	uint32_t nt, tids[SB_CAUSES_MAX_THREADS];
	double F[SB_CAUSES_MAX_THREADS];
	size_t nl;
	int32_t rep[HOLD_LINES];       /* a loc of each line */
	uint32_t nblk[HOLD_LINES];
	long best[HOLD_LINES];         /* the line's most sampled call block */
	double bestn[HOLD_LINES];
	double S[HOLD_LINES][SB_CAUSES_MAX_THREADS];
};

static uint32_t tid_col(struct holders *h, uint32_t tid)
{
	uint32_t k = 0;

	while (k < h->nt && h->tids[k] != tid)
		k++;
	if (k == h->nt && h->nt < SB_CAUSES_MAX_THREADS)
		h->tids[h->nt++] = tid;
	return k;
}

long sb_causes_holding_calls(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, uint32_t blk)
{
	const struct sb_cfg *m = g->merged;
	uint32_t f = m->blocks[blk].func, entry = m->funcs[f].first_block;
	uint32_t slot = SB_CFG_SLOT(m->blocks[blk].start);
	long *line = malloc((p->nevents ? p->nevents : 1) * sizeof(*line)), at = -1;
	double *per = malloc((p->nevents ? p->nevents : 1) * sizeof(*per)), least = INFINITY;
	struct holders *h = calloc(1, sizeof(*h));

	if (!line || !per || !h)
		goto out;
	for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++)
		if (m->edges[m->in_edges[k]].kind == SB_EDGE_CALL &&
		    !(m->blocks[m->edges[m->in_edges[k]].src].flags & SB_BLOCK_TAIL_CALL))
			goto out;         /* called directly: sb_causes_call_copies' */
	/* each event: -2 the function's own block, a line group, or -1 */
	for (size_t e = 0; e < p->nevents; e++) {
		const struct sb_event_def *d = &p->events[e];
		long b = d->kind == SB_EVK_BLOCK_SAMPLES ? sb_causes_event_block(p, g, d) : -1;
		size_t l;

		per[e] = 0;
		line[e] = -1;
		if (b < 0)
			continue;
		if (m->blocks[b].func == f) {
			line[e] = -2;
			continue;
		}
		if (SB_CFG_SLOT(m->blocks[b].start) != slot || !sb_cfg_ends_in_call(m, (uint32_t)b) ||
		    d->loc2 < 0 || !p->locs[d->loc2].line)
			continue;
		for (l = 0; l < h->nl && !sb_causes_same_line(&p->locs[h->rep[l]], &p->locs[d->loc2]); l++)
			;
		if (l == h->nl) {
			if (l == HOLD_LINES)
				continue;
			h->rep[h->nl++] = d->loc2;
			h->best[l] = -1;
		}
		line[e] = (long)l;
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];
		long l = line[x->event];

		if (in->section != s || l == -1)
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++) {
			uint32_t k = tid_col(h, in->per_thread[t].tid);

			if (k == SB_CAUSES_MAX_THREADS)
				continue;
			if (l == -2)
				h->F[k] += (double)x->counts[t];
			else
				h->S[l][k] += (double)x->counts[t];
			if (l >= 0)
				per[x->event] += (double)x->counts[t];
		}
	}
	for (size_t e = 0; e < p->nevents; e++) {
		long l = line[e];

		/* copies this section ran (another section's call on the
		 * line, main's region call beside its thread-count query, is
		 * none) */
		if (l >= 0 && per[e] > 0)
			h->nblk[l]++;
		if (l >= 0 && (h->best[l] < 0 || per[e] > h->bestn[l])) {
			h->best[l] = sb_causes_event_block(p, g, &p->events[e]);
			h->bestn[l] = per[e];
		}
	}
	for (size_t l = 0; l < h->nl; l++) {
		double sf = 0, ss = 0;
		bool holds = h->nblk[l] >= 2;

		for (uint32_t k = 0; k < h->nt && holds; k++) {
			holds = h->S[l][k] >= HOLD_SHARE * h->F[k];
			sf += h->F[k];
			ss += h->S[l][k];
		}
		if (holds && sf > 0 && ss >= HOLD_SHARE * sf && ss < least) {
			least = ss;
			at = h->best[l];
		}
	}
out:
	free(line);
	free(per);
	free(h);
	return at;
}

/*
 * A sampled leader in a callee that the compiler called from several
 * copies of one call site (clang specializes a copy of a thread function
 * inlined where main calls it for thread 0): no single call site's
 * inclusive samples cover the callee's variation, so LIME's call-site
 * rule cannot lead from the caller and the callee's loop leads.  The
 * decision is the caller's: when every direct call into the leader's
 * function comes from blocks on one source line, and there are two or
 * more of them, the cause goes to the most sampled copy's guard (or, with
 * none, to the call's line).  One call site is left to LIME's rule, but a
 * function whose one caller calls it unguarded and outside any loop
 * (`run_part(n) { kernel(n); }`) passes the call on: its caller's copies
 * are looked at.  Calls from
 * several lines: the line with the most calls, two or more and more than
 * any other line (a single call elsewhere, `compute_tile(98)` of every
 * thread beside the owned copies, is a plain call of its own).
 * True when c moved.
 */
#define COPY_LINES 16    /* distinct calling lines looked at */

/* Block b lies in a loop of its function (a call it repeats decides). */
static bool in_loop(const struct sb_cfg *m, uint32_t b)
{
	uint32_t nb = m->funcs[m->blocks[b].func].nblocks;
	uint8_t *body = malloc(nb ? nb : 1);
	bool yes = !body || sb_causes_loop_of(m, b, body) >= 0;

	free(body);
	return yes;
}
bool sb_causes_call_copies(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t blk, struct sb_cause *c)
{
	const struct sb_cfg *m = g->merged;
	uint32_t entry = m->funcs[m->blocks[blk].func].first_block, best = 0;
	const struct sb_loc *lines[COPY_LINES];
	size_t count[COPY_LINES], nl = 0, top = 0;
	uint64_t best_n = 0;
	struct sb_cause at;
	uint32_t gs[SB_CFG_MAX_GUARDS];
	bool tie = false;
	long one;

	for (int depth = 0; depth < 3 &&
			    (one = sb_causes_only_caller(m, m->blocks[entry].func)) >= 0 &&
			    m->blocks[one].func != m->blocks[entry].func &&
			    sb_causes_guards(m, (uint32_t)one, gs) < 0 &&
			    !in_loop(m, (uint32_t)one);
	     depth++)
		entry = m->funcs[m->blocks[one].func].first_block;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = m->in_start[entry]; k < m->in_start[entry + 1]; k++) {
			const struct sb_cfg_edge *e = &m->edges[m->in_edges[k]];
			const struct sb_loc *l;
			size_t i = 0;
			uint64_t n;

			if (e->kind != SB_EDGE_CALL)
				continue;
			at = *c;
			at.kind = SB_CAUSE_CALL;     /* at the call */
			sb_causes_locate_insn(p, m->blocks[e->src].last_insn, &at);
			if (at.loc < 0 || !p->locs[at.loc].line)
				return false;        /* a call site of unknown line */
			l = &p->locs[at.loc];
			while (i < nl && !sb_causes_same_line(l, lines[i]))
				i++;
			if (!pass) {
				if (i == nl && nl == COPY_LINES)
					return false;
				if (i == nl) {
					lines[nl] = l;
					count[nl++] = 0;
				}
				count[i]++;
				continue;
			}
			if (i != top)
				continue;
			n = sb_causes_block_samples(p, g, e->src);
			if (!best_n || n > best_n) {
				best = e->src;
				best_n = n ? n : 1;
			}
		}
		if (pass)
			break;
		for (size_t i = 1; i < nl; i++)
			top = count[i] > count[top] ? i : top;
		for (size_t i = 0; i < nl; i++)
			tie |= i != top && count[i] == count[top];
		if (!nl || count[top] < 2 || tie)
			return false;
	}
	at = *c;
	at.kind = SB_CAUSE_CALL;
	sb_causes_locate_insn(p, m->blocks[best].last_insn, &at);
	c->loc = at.loc;
	c->addr = at.addr;
	sb_causes_locate_guard(p, g, best, c);
	return true;
}
