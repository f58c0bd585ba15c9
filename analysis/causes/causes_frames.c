// SPDX-License-Identifier: MIT
/*
 * Which sampled blocks are no LIME events (causes_priv.h), the sampled
 * path's counterpart of causes_exact.c's hw_event_of().  A cause is shown
 * where a reader acts: a line of the program.  A cpu-clock sample counts
 * for its own block and for every call site on its stack (a call site's
 * block holds its callees' time), so time spent elsewhere is already
 * counted where the program chose to spend it; these blocks would only
 * compete with that choice, and being deeper, win ties wrongly.
 *
 * Library code.  A block of a library (any binary but the profile's
 * executable) is the library's work, done because the program called it:
 * those samples are the program's call's (qsort's merge loop is no place
 * to act; the call, or the loop that repeats it, is).  A library's blocks
 * also hold every sample of the threads it starts (libgomp's, libc's
 * start_thread: an outer frame), which follows whatever the threads do.
 * A program that keeps its own work in its own shared library has it
 * shown at its calls into it.
 *
 * Enclosing frames.  Some threads' stacks have program frames below the
 * section's code: the main thread's _start and main's call into the
 * OpenMP runtime that runs the parallel region on it.  Such a frame holds
 * all of that thread's samples and none of the other threads', so it
 * follows "is the main thread" (which busy time often does: the master
 * does the region's serial parts) and is no decision in the section.  A
 * block is one when, for every thread whose stacks hold it, it holds
 * about all that thread's samples in the section (ENCLOSES of the largest
 * block count, the thread's outermost frame; a few unwinds stop short of
 * it), and some thread with samples never has it.  A call a thread's own
 * decision makes (the root's extra work) shares its thread's time with
 * the code every thread runs, so it holds clearly less.  A thread that
 * does nothing in the section but that call (`if (id == 0) run_part(n)`
 * in an OpenMP region whose master is the main thread) holds it whole,
 * though: what tells the two apart is the section's sync.  A frame
 * encloses the section, so its callee leads to the sync that closes it;
 * a call into the program's own function whose calls stay in the graph
 * and never reach the sync's function (CALL edges, SYNC_DEPTH deep) is
 * work inside the section, never a frame.  A call whose callees leave the
 * graph (into the OpenMP runtime that runs a region, a library's barrier,
 * a pointer: main's `worker(0)` in a join section) cannot be followed:
 * the share decides.  Except in the sync's own function, inside a loop
 * that holds the sync: such a call runs between the syncs of every
 * instance (`if (!rank) work_fn(n)` in an OpenMP region's loop), and a
 * frame around the section is never there.
 *
 * Callbacks.  A program function no call edge of the program enters (a
 * pointer calls it: qsort's comparator, called by the library) whose
 * samples never exceed, in any (instance, thread) pair, those of one of
 * the program's calls that leave the program's graph (into a library or
 * through a pointer), in another function, ran under that call: each of
 * its samples counted at the call too (a sample counts for every call
 * site on its stack).  Its time is the call's, as the library's own is,
 * and the decision that chose how often to run it is the call's loop or
 * guard; shown as a cause of its own it would rank a callee's insides
 * above that decision (qsort's comparator was shown above the loop
 * around qsort).  "Never exceed" allows CALLBACK_SLACK of its samples
 * over (unwinds that stop short of the call), and never holds for a
 * thread function (the threads' stacks do not hold one same call) or an
 * OpenMP region's body (its workers' stacks do not hold main's call).
 * And the call must do work of its own beyond the callback, the library's
 * (the callback holds at most CALLBACK_SHARE of the call's samples): a
 * call through a pointer straight into a program function is that
 * function's work entire, which LIME's call-site rule already ties to the
 * call (lime_leader.c: v - A within noise) and whose insides may hold the
 * decision (a search's early exit); it stays.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "causes_loops.h"

/* share of a thread's samples an enclosing frame holds (unwinds that stop
 * short of _start lose a few: the recorder counts them, unwind_stop_*) */
#define ENCLOSES 0.95
#define CALLBACK_SLACK 0.05
#define CALLBACK_SHARE 0.75
#define SYNC_DEPTH 8

/* Section s's samples per (event, thread): sum[e * nt + k], thread k of
 * tids (first seen first). */
static double *thread_sums(const struct sb_profile *p, uint32_t s, uint32_t *tids,
			   uint32_t *ntp)
{
	uint32_t nt = 0, col[SB_CAUSES_MAX_THREADS], *cols = NULL;
	size_t *first, npairs = 0;
	double *sum;

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s)
			continue;
		sb_causes_columns(in, tids, nt, col);
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			if (col[t] >= nt && nt < SB_CAUSES_MAX_THREADS)
				tids[nt++] = in->per_thread[t].tid;
	}
	/* each instance's columns once (a linear search per thread), not per
	 * vector: O(instances x threads x nt + vectors x threads) */
	sum = calloc((p->nevents ? p->nevents : 1) * (nt ? nt : 1), sizeof(*sum));
	first = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*first));
	for (uint32_t i = 0; first && i < p->ninstances; i++) {
		first[i] = npairs;
		npairs += p->instances[i].section == s ? p->instances[i].nthreads : 0;
	}
	cols = first ? malloc((npairs ? npairs : 1) * sizeof(*cols)) : NULL;
	if (!sum || !cols) {
		free(sum);
		free(first);
		free(cols);
		return NULL;
	}
	for (uint32_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].section == s) {
			sb_causes_columns(&p->instances[i], tids, nt, col);
			for (uint32_t t = 0; t < p->instances[i].nthreads; t++)
				cols[first[i] + t] = t < SB_CAUSES_MAX_THREADS ? col[t] : nt;
		}
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];
		const uint32_t *c = &cols[first[x->instance]];

		if (in->section != s || p->events[x->event].kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads; t++)
			if (c[t] < nt)
				sum[(size_t)x->event * nt + c[t]] += (double)x->counts[t];
	}
	free(first);
	free(cols);
	*ntp = nt;
	return sum;
}

bool sb_causes_calls_reach(const struct sb_cfg *m, uint32_t f, uint32_t to, int depth,
			   bool unknown, uint8_t *left)
{
	const struct sb_cfg_func *fn = &m->funcs[f];

	if (f == to)
		return true;
	if (depth <= 0)
		return unknown;
	if (left[f] >= depth)
		return false;           /* looked at with as much depth or more */
	left[f] = (uint8_t)depth;
	for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++) {
		bool call = false;

		for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
			const char *name = m->funcs[m->blocks[m->edges[k].dst].func].name;

			if (m->edges[k].kind != SB_EDGE_CALL)
				continue;
			call = true;
			/* (`scalebpf cc`'s counting callback is bookkeeping) */
			if (name && !strncmp(name, "__sanitizer_cov_", 16))
				continue;
			if (sb_causes_calls_reach(m, m->blocks[m->edges[k].dst].func, to, depth - 1,
						  unknown, left))
				return true;
		}
		if (unknown && !call && sb_cfg_ends_in_call(m, b))
			return true;    /* out of the graph: anywhere */
	}
	return false;
}

/* Block b calls a function of the program whose calls, all inside the
 * program's graph, never reach the function holding section s's sync:
 * section code, no frame around it. */
static bool calls_inside(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t s, uint32_t b, uint8_t *left)
{
	const struct sb_cfg *m = g->merged;
	long sb = sb_causes_loc_block(p, g, p->sections[s].loc);

	if (sb < 0)
		return false;
	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
		if (m->edges[k].kind != SB_EDGE_CALL)
			continue;
		memset(left, 0, m->nfuncs);
		return !sb_causes_calls_reach(m, m->blocks[m->edges[k].dst].func,
					      m->blocks[sb].func, SYNC_DEPTH, true, left);
	}
	return false;
}

/* Block b lies in the function holding section s's sync, in a loop of it
 * that holds the sync too: it runs between the syncs of every instance,
 * section code (a call through a pointer under `if (!rank)` in an OpenMP
 * region's loop), however much of one thread's samples it holds. */
static bool in_section_loop(const struct sb_profile *p, const struct sb_causes_graph *g,
			    uint32_t s, uint32_t b)
{
	const struct sb_cfg *m = g->merged;
	long sb = sb_causes_loc_block(p, g, p->sections[s].loc), h;
	uint32_t f = m->blocks[b].func, nb = m->funcs[f].nblocks, lo = m->funcs[f].first_block;
	uint8_t *body, *outer;

	if (sb < 0 || m->blocks[sb].func != f)
		return false;
	body = malloc(nb ? nb : 1);
	outer = malloc(nb ? nb : 1);
	h = body && outer ? sb_causes_loop_of(m, b, body) : -1;
	while (h >= 0 && !body[sb - lo]) {
		h = sb_causes_loop_around(m, (uint32_t)h, body, outer);
		memcpy(body, outer, nb);
	}
	free(body);
	free(outer);
	return h >= 0;
}

/* Block b is in the executable's entry point, _start. */
static bool is_start(const struct sb_cfg *m, uint32_t b)
{
	const char *name = m->funcs[m->blocks[b].func].name;

	return name && !strcmp(name, "_start");
}

/* Marks the enclosing frames (see the header) among the program's blocks:
 * call sites (a frame is a call on the stack) in the main thread only. */
static void enclosing(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
		      const double *sum, const uint32_t *tids, uint32_t nt, const uint8_t *lib,
		      uint8_t *skip)
{
	double *most = calloc(nt ? nt : 1, sizeof(*most));
	uint8_t *left = malloc(g->merged->nfuncs ? g->merged->nfuncs : 1);
	const char *pid = sb_profile_meta_get(p, "pid");
	uint32_t main_tid = pid ? (uint32_t)strtoul(pid, NULL, 10) : 0;

	if (!most || !left) {
		free(most);
		free(left);
		return;
	}
	for (size_t e = 0; e < p->nevents; e++)
		for (uint32_t k = 0; k < nt; k++)
			if (sum[e * nt + k] > most[k])
				most[k] = sum[e * nt + k];
	for (size_t e = 0; e < p->nevents; e++) {
		bool holds = false, frame = true, absent = false;

		long b = sb_causes_event_block(p, g, &p->events[e]);

		if (skip[e] || lib[e] || b < 0 || !sb_cfg_ends_in_call(g->merged, (uint32_t)b))
			continue;
		/* the program's entry point encloses all there is, whatever
		 * share of a thread's samples the unwinds that reached it hold
		 * (a few stop short; with 100 samples that is more than 5%) */
		if (is_start(g->merged, (uint32_t)b)) {
			skip[e] = 1;
			continue;
		}
		for (uint32_t k = 0; k < nt && frame; k++) {
			double x = sum[e * nt + k];

			if (x > 0 && tids[k] != main_tid) {
				frame = false;
			} else if (x > 0) {
				holds = true;
				frame = x >= ENCLOSES * most[k];
			} else if (most[k] > 0) {
				absent = true;
			}
		}
		if (holds && frame && absent && !calls_inside(p, g, s, (uint32_t)b, left) &&
		    !in_section_loop(p, g, s, (uint32_t)b))
			skip[e] = 1;
	}
	free(most);
	free(left);
}

/* Block b leaves the program's graph with a call: it ends in a call and
 * no CALL edge names the callee (a library's PLT stub, a pointer). */
static bool calls_out(const struct sb_cfg *m, uint32_t b)
{
	if (!sb_cfg_ends_in_call(m, b))
		return false;
	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
		if (m->edges[k].kind == SB_EDGE_CALL)
			return false;
	return true;
}

/* Marks the blocks of callbacks (see the header). */
static int callbacks(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
		     const uint8_t *lib, uint8_t *skip)
{
	const struct sb_cfg *m = g->merged;
	long *fidx = malloc(m->nfuncs * sizeof(*fidx) + 1), *aidx = NULL;
	uint32_t *fn = NULL, *an = NULL, nf = 0, na = 0;
	size_t *ord = NULL, *start = NULL;
	double *sf = NULL, *sa = NULL, *over = NULL, *tot = NULL, *atot = NULL;
	int ret = -ENOMEM;

	if (!fidx || !(aidx = malloc(p->nevents * sizeof(*aidx) + 1)) ||
	    !(fn = malloc(p->nevents * sizeof(*fn) + 1)) || !(an = malloc(p->nevents * sizeof(*an) + 1)))
		goto out;
	for (size_t f = 0; f < m->nfuncs; f++)
		fidx[f] = -1;
	/* candidates: callbacks by function (fn[e]: the event's), calls out */
	for (size_t e = 0; e < p->nevents; e++) {
		long b = p->events[e].kind == SB_EVK_BLOCK_SAMPLES && !lib[e] && !skip[e] ?
			sb_causes_event_block(p, g, &p->events[e]) : -1;
		uint32_t f = b >= 0 ? m->blocks[b].func : 0;

		aidx[e] = -1;
		fn[e] = UINT32_MAX;
		if (b < 0)
			continue;
		if (sb_cfg_uncalled(m, f)) {
			if (fidx[f] < 0)
				fidx[f] = nf++;
			fn[e] = (uint32_t)fidx[f];
		}
		if (calls_out(m, (uint32_t)b)) {
			aidx[e] = na;
			an[na++] = f;
		}
	}
	ret = 0;
	if (!nf || !na)
		goto out;
	ret = -ENOMEM;
	/* the section's vectors by instance (counting sort) */
	if (!(start = calloc(p->ninstances + 1, sizeof(*start))) ||
	    !(ord = malloc(p->nvectors * sizeof(*ord) + 1)) ||
	    !(sf = malloc((size_t)nf * SB_CAUSES_MAX_THREADS * sizeof(*sf))) ||
	    !(sa = malloc((size_t)na * SB_CAUSES_MAX_THREADS * sizeof(*sa))) ||
	    !(over = calloc((size_t)nf * na, sizeof(*over))) || !(tot = calloc(nf, sizeof(*tot))) ||
	    !(atot = calloc(na, sizeof(*atot))))
		goto out;
	for (size_t v = 0; v < p->nvectors; v++)
		start[p->vectors[v].instance + 1]++;
	for (size_t i = 0; i < p->ninstances; i++)
		start[i + 1] += start[i];
	for (size_t v = 0; v < p->nvectors; v++) {
		uint32_t i = p->vectors[v].instance;

		ord[start[i]++] = v;
	}
	for (size_t i = p->ninstances; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint32_t k = in->nthreads < SB_CAUSES_MAX_THREADS ? in->nthreads
								 : SB_CAUSES_MAX_THREADS;

		if (in->section != s)
			continue;
		memset(sf, 0, (size_t)nf * k * sizeof(*sf));
		memset(sa, 0, (size_t)na * k * sizeof(*sa));
		for (size_t x = start[i]; x < start[i + 1]; x++) {
			const struct sb_vector *vec = &p->vectors[ord[x]];

			for (uint32_t t = 0; t < k && t < vec->nthreads; t++) {
				if (fn[vec->event] != UINT32_MAX)
					sf[(size_t)fn[vec->event] * k + t] += (double)vec->counts[t];
				if (aidx[vec->event] >= 0)
					sa[(size_t)aidx[vec->event] * k + t] = (double)vec->counts[t];
			}
		}
		for (uint32_t a = 0; a < na; a++)
			for (uint32_t t = 0; t < k; t++)
				atot[a] += sa[(size_t)a * k + t];
		for (uint32_t f = 0; f < nf; f++)
			for (uint32_t t = 0; t < k; t++) {
				double y = sf[(size_t)f * k + t];

				tot[f] += y;
				for (uint32_t a = 0; y > 0 && a < na; a++)
					if (y > sa[(size_t)a * k + t])
						over[(size_t)f * na + a] += y - sa[(size_t)a * k + t];
			}
	}
	for (size_t e = 0; e < p->nevents; e++) {
		uint32_t f = fn[e];
		long b = f == UINT32_MAX ? -1 : sb_causes_event_block(p, g, &p->events[e]);

		for (uint32_t a = 0; b >= 0 && a < na && !skip[e]; a++)
			if (an[a] != m->blocks[b].func && tot[f] > 0 &&
			    over[(size_t)f * na + a] <= CALLBACK_SLACK * tot[f] &&
			    tot[f] <= CALLBACK_SHARE * atot[a])
				skip[e] = 1;
	}
	ret = 0;
out:
	free(fidx);
	free(aidx);
	free(fn);
	free(an);
	free(start);
	free(ord);
	free(sf);
	free(sa);
	free(over);
	free(tot);
	free(atot);
	return ret;
}

int sb_causes_sample_skips(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, uint8_t *skip)
{
	uint32_t tids[SB_CAUSES_MAX_THREADS], nt = 0;
	int ret;
	uint8_t *lib = calloc(p->nevents ? p->nevents : 1, 1);
	double *sum = lib ? thread_sums(p, s, tids, &nt) : NULL;

	if (!sum) {
		free(lib);
		return -ENOMEM;
	}
	for (size_t e = 0; e < p->nevents; e++)
		lib[e] = p->events[e].kind == SB_EVK_BLOCK_SAMPLES &&
			 sb_profile_library(p, p->events[e].binary);
	enclosing(p, g, s, sum, tids, nt, lib, skip);
	ret = callbacks(p, g, s, lib, skip);
	for (size_t e = 0; e < p->nevents; e++)
		skip[e] |= lib[e];
	free(sum);
	free(lib);
	return ret;
}
