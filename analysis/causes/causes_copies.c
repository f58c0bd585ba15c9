// SPDX-License-Identifier: MIT
/*
 * Exact mode: a cause LIME names at a function's entry is its callers'
 * decision (causes_priv.h, sb_causes_copies_caller).
 *
 * A function's entry runs as often as its callers decide to call it.
 * LIME names the entry as a CALL leader when no single edge into it
 * varies as it does: the CFG shows no caller (a call through a pointer, a
 * wrapper's tail `jmp`), or the call is one decision the compiler copied
 * (an unrolled `if (owns(b)) work(b)` is 11 guarded calls, each taken 0 or
 * 1 times per thread, whose sum only is the entry's count).  No copy
 * correlates with time alone, so the copies never join the entry's
 * cluster and the callee's `{` is shown, a line that decides nothing.
 *
 * Copies of one decision keep its source line.  So the caller is found by
 * the counts, not by the CFG: the counted blocks of other functions are
 * summed per source line, and the line whose summed counts equal the
 * entry's, pair by pair ((instance, thread) pairs centred on their
 * instance, what LIME compares), runs the calls.  "Equal" is a squared
 * distance within MATCH_TOL of the entry's variance: exact counts leave
 * no noise, and a caller line that runs once per pass (a constant count,
 * p036's unconditional call beside the guarded ones) centres to 0 and
 * changes nothing.  A line qualifies only if one of its blocks goes on,
 * without a decision between, to a call into the entry's function, or to
 * a transfer the CFG does not resolve (a call through a pointer; a jump
 * out of the function, a tail call): the callee's own callees (whose
 * entries repeat its count just as well) and its own code are excluded,
 * the first by the CFG's direct calls, the rest by that test.
 *
 * Several lines can match: a direct call into the function ranks first,
 * then a call the CFG cannot resolve, then a jump out (a tail call, or a
 * return of a function that runs once per call, whose caller is then
 * found one step up).  A caller line whose own function's entry runs
 * exactly as often (run_part's `if (n) smooth(n)`, a wrapper that always
 * calls on) is no decision either: the search repeats from that
 * function's entry, at most MAX_UP times.  The result is the most
 * executed copy on the line found; causes_locate.c shows the cause at its
 * guard.  Work: one pass over the vectors per candidate line.
 */
#include "causes_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"

#define MATCH_TOL 0.1
#define MAX_UP 4
#define WALK 32

struct pairs {
	const struct sb_profile *p;
	uint32_t s;
	size_t n;        /* (instance, thread) pairs of section s */
	size_t *first;   /* per profile instance: its first pair */
	long *evblk;     /* per event: a count event's merged block, or -1 */
};

/* v = the summed counts of the events sel marks, centred per instance. */
static void series(const struct pairs *pr, const uint8_t *sel, double *v)
{
	const struct sb_profile *p = pr->p;

	memset(v, 0, (pr->n ? pr->n : 1) * sizeof(*v));
	for (size_t k = 0; k < p->nvectors; k++) {
		const struct sb_vector *x = &p->vectors[k];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section != pr->s || !sel[x->event])
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++)
			v[pr->first[x->instance] + t] += (double)x->counts[t];
	}
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		double mean = 0;

		if (in->section != pr->s || !in->nthreads)
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++)
			mean += v[pr->first[i] + t];
		mean /= in->nthreads;
		for (uint32_t t = 0; t < in->nthreads; t++)
			v[pr->first[i] + t] -= mean;
	}
}

static double dist2(const double *a, const double *b, size_t n)
{
	double d = 0;

	for (size_t k = 0; k < n; k++)
		d += (a[k] - b[k]) * (a[k] - b[k]);
	return d;
}

/* The one way on from b that is no decision (a call's return, straight
 * on, a jump), or -1. */
static long straight_on(const struct sb_cfg *m, uint32_t b)
{
	long next = -1;

	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
		const struct sb_cfg_edge *e = &m->edges[k];

		if (e->kind == SB_EDGE_CALL)
			continue;
		if (next >= 0 || e->back || (e->kind != SB_EDGE_CALL_RETURN &&
					     e->kind != SB_EDGE_SEQUENTIAL && e->kind != SB_EDGE_JUMP))
			return -1;
		next = e->dst;
	}
	return next;
}

/* The first counted block on function f's straight way from its entry
 * (the coverage callback sits in the entry, after any prologue), or -1. */
static long counted_entry(const struct sb_cfg *m, const uint8_t *counted, uint32_t f)
{
	long b = m->funcs[f].nblocks ? (long)m->funcs[f].first_block : -1;

	for (int steps = 0; b >= 0 && steps < WALK; steps++) {
		if (counted[b])
			return b;
		b = straight_on(m, (uint32_t)b);
	}
	return -1;
}

/* How block b hands control to function f, going on without a decision:
 * 3 a direct call into f, 2 a call the CFG does not resolve (through a
 * pointer), 1 out of its function (a tail `jmp`, whose CALL edge in a
 * version 4 graph is no call: nothing returns to b; a return), 0 none of
 * these. */
static int hands_to(const struct sb_cfg *m, uint32_t b, uint32_t f)
{
	int best = 0;

	for (int steps = 0; steps < WALK; steps++) {
		bool direct = false;
		long next;

		bool tail = (m->blocks[b].flags & SB_BLOCK_TAIL_CALL) != 0;

		for (uint32_t k = m->out_start[b]; !tail && k < m->out_start[b + 1]; k++)
			if (m->edges[k].kind == SB_EDGE_CALL) {
				direct = true;
				if (m->blocks[m->edges[k].dst].func == f)
					return 3;
			}
		if (!direct && sb_cfg_ends_in_call(m, b))
			best = best > 2 ? best : 2;
		if (!sb_cfg_nout(m, b) || tail)
			return best > 1 ? best : 1;
		if ((next = straight_on(m, b)) < 0 || m->blocks[next].func != m->blocks[b].func)
			return best;
		b = (uint32_t)next;
	}
	return best;
}

/* Marks f and every function its direct calls reach (bounded). */
static void mark_callees(const struct sb_cfg *m, uint32_t f, uint8_t *fmark, uint32_t *stack)
{
	size_t sp = 0, steps = 0;

	if (fmark[f])
		return;
	fmark[f] = 1;
	stack[sp++] = f;
	while (sp && steps++ < 4096) {
		const struct sb_cfg_func *fn = &m->funcs[stack[--sp]];

		for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++)
			for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
				uint32_t g = m->blocks[m->edges[k].dst].func;

				if (m->edges[k].kind == SB_EDGE_CALL && !fmark[g]) {
					fmark[g] = 1;
					stack[sp++] = g;
				}
			}
	}
}

struct work {
	struct pairs pr;
	const struct sb_cfg *m;
	uint8_t *counted;   /* per merged block */
	uint8_t *fmark;     /* per function: the callee chain and its callees */
	uint32_t *stack;
	long *group;        /* per event: its line's group, or -1 */
	size_t ngroups;
	long *rep;          /* per group: an event naming its line */
	double *cov, *gcov; /* per event, per group */
	uint8_t *sel;       /* per event */
	double *x, *y;      /* per pair */
};

static void work_free(struct work *w)
{
	free(w->pr.first);
	free(w->pr.evblk);
	free(w->counted);
	free(w->fmark);
	free(w->stack);
	free(w->group);
	free(w->rep);
	free(w->cov);
	free(w->gcov);
	free(w->sel);
	free(w->x);
	free(w->y);
}

static int work_init(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
		     struct work *w)
{
	const struct sb_cfg *m = g->merged;
	size_t ne = p->nevents ? p->nevents : 1, n = 0;

	memset(w, 0, sizeof(*w));
	w->m = m;
	w->pr.p = p;
	w->pr.s = s;
	w->pr.first = malloc((p->ninstances ? p->ninstances : 1) * sizeof(size_t));
	w->pr.evblk = malloc(ne * sizeof(long));
	w->counted = calloc(m->nblocks ? m->nblocks : 1, 1);
	w->fmark = calloc(m->nfuncs ? m->nfuncs : 1, 1);
	w->stack = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof(uint32_t));
	w->group = malloc(ne * sizeof(long));
	w->rep = malloc(ne * sizeof(long));
	w->cov = malloc(ne * sizeof(double));
	w->gcov = malloc(ne * sizeof(double));
	w->sel = malloc(ne);
	if (!w->pr.first || !w->pr.evblk || !w->counted || !w->fmark || !w->stack || !w->group ||
	    !w->rep || !w->cov || !w->gcov || !w->sel)
		return -1;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		w->pr.first[i] = n;
		n += p->instances[i].section == s ? p->instances[i].nthreads : 0;
	}
	w->pr.n = n;
	w->x = malloc((n ? n : 1) * sizeof(double));
	w->y = malloc((n ? n : 1) * sizeof(double));
	if (!w->x || !w->y)
		return -1;
	for (size_t e = 0; e < p->nevents; e++) {
		const struct sb_event_def *d = &p->events[e];
		long b = d->kind == SB_EVK_BLOCK_COUNT ? sb_causes_event_block(p, g, d) : -1;

		w->pr.evblk[e] = b;
	}
	/* counted: with vectors (the profile names every block of a counted
	 * function, those without counts of their own without a vector) */
	for (size_t k = 0; k < p->nvectors; k++)
		if (p->instances[p->vectors[k].instance].section == s &&
		    w->pr.evblk[p->vectors[k].event] >= 0)
			w->counted[w->pr.evblk[p->vectors[k].event]] = 1;
	return 0;
}

/* w->x = function f's entry count series; its variance (0: none). */
static double entry_series(struct work *w, uint32_t f)
{
	long b = counted_entry(w->m, w->counted, f);
	double var = 0;

	if (b < 0)
		return 0;
	for (size_t e = 0; e < w->pr.p->nevents; e++)
		w->sel[e] = w->pr.evblk[e] == b;
	series(&w->pr, w->sel, w->x);
	for (size_t k = 0; k < w->pr.n; k++)
		var += w->x[k] * w->x[k];
	return var;
}

/* Groups the count events of unmarked functions by source line and sums
 * each group's covariance with w->x (cov(x, y) = sum x * y: x is centred). */
static int by_line(const void *a, const void *b, void *ctx)
{
	const struct sb_profile *p = ctx;
	long ea = *(const long *)a, eb = *(const long *)b;
	const struct sb_loc *x = &p->locs[p->events[ea].loc], *y = &p->locs[p->events[eb].loc];
	int c;

	if (x->binary != y->binary)
		return x->binary < y->binary ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (!x->file != !y->file)
		return !x->file ? -1 : 1;
	if (x->file && (c = strcmp(x->file, y->file)))
		return c;
	return ea < eb ? -1 : ea > eb;
}

static void group_lines(struct work *w)
{
	const struct sb_profile *p = w->pr.p;
	size_t n = 0;

	/* the counted blocks of other functions, sorted by line: O(E log E) */
	for (size_t e = 0; e < p->nevents; e++) {
		long b = w->pr.evblk[e];
		int32_t l = p->events[e].loc;

		w->group[e] = -1;
		w->cov[e] = 0;
		if (b >= 0 && w->counted[b] && !w->fmark[w->m->blocks[b].func] && l >= 0 &&
		    p->locs[l].line)
			w->rep[n++] = (long)e;
	}
	qsort_r(w->rep, n, sizeof(*w->rep), by_line, (void *)p);
	w->ngroups = 0;
	for (size_t k = 0; k < n; k++) {
		long e = w->rep[k];

		if (!w->ngroups || !sb_causes_same_line(&p->locs[p->events[w->rep[w->ngroups - 1]].loc],
					      &p->locs[p->events[e].loc])) {
			w->rep[w->ngroups] = e;   /* k >= ngroups: not yet read */
			w->gcov[w->ngroups++] = 0;
		}
		w->group[e] = (long)w->ngroups - 1;
	}
	for (size_t k = 0; k < p->nvectors; k++) {
		const struct sb_vector *x = &p->vectors[k];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section != w->pr.s || w->group[x->event] < 0)
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++)
			w->cov[x->event] += w->x[w->pr.first[x->instance] + t] * (double)x->counts[t];
	}
	for (size_t e = 0; e < p->nevents; e++)
		if (w->group[e] >= 0)
			w->gcov[w->group[e]] += w->cov[e];
}

/* Executions of block b over section s's instances. */
static double block_total(const struct work *w, long b)
{
	const struct sb_profile *p = w->pr.p;
	double n = 0;

	for (size_t k = 0; k < p->nvectors; k++) {
		const struct sb_vector *x = &p->vectors[k];

		if (p->instances[x->instance].section != w->pr.s || w->pr.evblk[x->event] != b)
			continue;
		for (uint32_t t = 0; t < x->nthreads; t++)
			n += (double)x->counts[t];
	}
	return n;
}

/* The line whose summed counts match w->x (variance var), handing control
 * to f: its most executed block, and w->y its series; -1 when none. */
static long caller_copy(struct work *w, uint32_t f, double var)
{
	const struct sb_profile *p = w->pr.p;
	long best_g = -1, copy = -1;
	int best_rank = 0;
	double best_d = 0, most = -1;

	group_lines(w);
	for (size_t k = 0; k < w->ngroups; k++) {
		int rank = 0;
		double d;

		/* necessary for a match: |cov - var| = |<x, y - x>| <=
		 * sqrt(var * MATCH_TOL * var) (Cauchy-Schwarz) */
		if (fabs(w->gcov[k] - var) > sqrt(MATCH_TOL) * var)
			continue;
		for (size_t e = 0; e < p->nevents; e++)
			if (w->group[e] == (long)k) {
				int r = hands_to(w->m, (uint32_t)w->pr.evblk[e], f);

				rank = r > rank ? r : rank;
			}
		if (!rank || rank < best_rank)
			continue;
		for (size_t e = 0; e < p->nevents; e++)
			w->sel[e] = w->group[e] == (long)k;
		series(&w->pr, w->sel, w->y);
		d = dist2(w->y, w->x, w->pr.n);
		if (d > MATCH_TOL * var || (rank == best_rank && d >= best_d))
			continue;
		best_g = (long)k;
		best_rank = rank;
		best_d = d;
	}
	if (best_g < 0)
		return -1;
	for (size_t e = 0; e < p->nevents; e++) {
		long b = w->pr.evblk[e];
		double n;

		w->sel[e] = w->group[e] == best_g;
		if (!w->sel[e])
			continue;
		n = block_total(w, b);
		if (n > most || (n == most && b < copy)) {
			most = n;
			copy = b;
		}
	}
	series(&w->pr, w->sel, w->y);
	return copy;
}

long sb_causes_copies_caller(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, long blk)
{
	const struct sb_cfg *m = g->merged;
	struct work w;
	long copy = -1;
	uint32_t f;
	double var;

	memset(&w, 0, sizeof(w));
	if (blk < 0 || (size_t)blk >= m->nblocks)
		return -1;
	f = m->blocks[blk].func;
	if (m->funcs[f].first_block != (uint32_t)blk || work_init(p, g, s, &w))
		goto out;
	var = entry_series(&w, f);
	for (int up = 0; var > 0 && up <= MAX_UP; up++) {
		long c;

		mark_callees(m, f, w.fmark, w.stack);
		if ((c = caller_copy(&w, f, var)) < 0)
			break;
		copy = c;
		/* the caller's function runs as often as the line: its entry
		 * decides nothing new, so ask who calls it */
		f = m->blocks[c].func;
		if (w.fmark[f])
			break;
		{
			double *y = w.y, vy = 0;

			for (size_t k = 0; k < w.pr.n; k++)
				vy += y[k] * y[k];
			var = entry_series(&w, f);
			if (!(var > 0) || dist2(w.x, y, w.pr.n) > MATCH_TOL * vy)
				break;
		}
	}
out:
	work_free(&w);
	return copy;
}
