// SPDX-License-Identifier: MIT
/*
 * LIME input from an exact-mode profile (causes_priv.h).  Exact block
 * counts become exact edge counts (cfg_flow.h), LIME's own events: the
 * leader rule and the cause kinds (branch, loop, call) then work as in the
 * paper.  The same run's cpu-clock samples per block measure time; each
 * becomes a hardware event whose superior is its block's exact count, so
 * Gram-Schmidt (§3.1) keeps only the time that executions do not explain:
 * identical control flow with slower iterations (cache misses) is then a
 * hardware cause at the load.  Sampled blocks without counts (libraries)
 * are hardware events with no superior.
 *
 * Observations are (instance, thread) pairs, each event and the busy time
 * centred within its instance.  Summing an instance's counts per thread
 * over all instances loses the signal wherever the surplus moves from
 * thread to thread (LU's (I+J) % P owners: per-thread totals over the run
 * are nearly equal).  LIME §3.6 analyses each instance alone and averages
 * the results; here an instance has only nthreads observations (the
 * F-test has n - 2 degrees of freedom, 2 with 4 threads) and a few samples
 * a thread, so the per-instance verdicts are noise.  Centred pairs keep
 * exactly what imbalance is, the differences among an instance's threads,
 * while every instance adds its evidence to one test (a fixed-effects
 * model: one degree of freedom per instance is given back, ngroups);
 * instances with more imbalance weigh more by their larger deviations,
 * as §3.6's weights do.  A cause that acts in some instances only still
 * stands out, in those instances' rows.  The work is bounded: at most
 * SB_EXACT_MAX_OBS pairs, from the instances that lost the most time
 * (a profile of 100k short instances is analysed on its worst ones).
 *
 * A sampled block that ends in a call into counted code is no hardware
 * event: the profile adds each sample to every call site on its stack, so
 * its samples are its callees' time, and an outer frame's (_start, main's
 * call of the thread function: the main thread only) is the whole
 * thread's time in the section, though that code is not the section's.  A
 * call into uncounted code (a library) is the other way round: its
 * samples stand for the library's, see hw_event_of().
 */
#include "causes_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg_flow.h"

#define SB_EXACT_MAX_OBS 1024
#define NONE SB_CFG_FLOW_NONE

struct pool {
	uint32_t ncols;
	uint32_t ninst, *inst, *off;  /* chosen instances, first column of each */
	uint32_t *tix, ntix;     /* column -> its thread, by tid */
	uint32_t *brow;          /* merged block -> row in bcount, or NONE */
	uint8_t *known;          /* merged blocks with exact counts */
	uint8_t *func_on;        /* functions with a counted execution */
	uint8_t *instr;          /* functions built with counters (any block
				  * calls the coverage callback) */
	uint8_t *cut;            /* blocks whose call closes a segment */
	uint8_t *ptr_counted;    /* blocks whose pointer call enters counted
				  * code (calls_counted_by_pointer) */
	double *bcount;          /* rows * ncols */
	size_t nbrows, capb;
	long *srow;              /* profile event -> sampled row, or -1 */
	uint32_t *sblock;        /* sampled row -> merged block */
	uint32_t *sevent;        /* sampled row -> profile event */
	double *scount;          /* sampled rows * ncols */
	size_t nsampled;
};

static void pool_free(struct pool *pl)
{
	free(pl->inst);
	free(pl->off);
	free(pl->tix);
	free(pl->brow);
	free(pl->known);
	free(pl->func_on);
	free(pl->instr);
	free(pl->cut);
	free(pl->ptr_counted);
	free(pl->bcount);
	free(pl->srow);
	free(pl->sblock);
	free(pl->sevent);
	free(pl->scount);
}

/* Each column's thread, the same tid in every instance. */
static int threads_of(const struct sb_profile *p, struct pool *pl)
{
	uint32_t *tids = malloc((pl->ncols ? pl->ncols : 1) * sizeof(*tids));

	pl->tix = malloc((pl->ncols ? pl->ncols : 1) * sizeof(*pl->tix));
	if (!tids || !pl->tix) {
		free(tids);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < pl->ninst; k++) {
		const struct sb_instance *in = &p->instances[pl->inst[k]];

		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++) {
			uint32_t x = 0;

			while (x < pl->ntix && tids[x] != in->per_thread[t].tid)
				x++;
			if (x == pl->ntix)
				tids[pl->ntix++] = in->per_thread[t].tid;
			pl->tix[pl->off[k] + t] = x;
		}
	}
	free(tids);
	return 0;
}

/* The instances analysed: 3 threads or more, most time lost first, at
 * most SB_EXACT_MAX_OBS (instance, thread) pairs. */
static int choose(const struct sb_profile *p, uint32_t s, const size_t *ninst_vec,
		  struct pool *pl)
{
	uint32_t n = 0;

	pl->inst = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*pl->inst));
	pl->off = malloc((p->ninstances ? p->ninstances : 1) * sizeof(*pl->off));
	if (!pl->inst || !pl->off)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].section == s && ninst_vec[i] && p->instances[i].nthreads >= 3)
			pl->inst[n++] = i;
	sb_causes_sort_by_lost(p, pl->inst, n);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t nt = p->instances[pl->inst[k]].nthreads;

		if (nt > SB_CAUSES_MAX_THREADS)
			nt = SB_CAUSES_MAX_THREADS;
		if (k && pl->ncols + nt > SB_EXACT_MAX_OBS)
			break;
		pl->off[k] = pl->ncols;
		pl->ncols += nt;
		pl->ninst = k + 1;
	}
	return threads_of(p, pl);
}

/* A zeroed row for block b, or NONE on ENOMEM. */
static uint32_t block_row(struct pool *pl, uint32_t b)
{
	if (pl->brow[b] != NONE)
		return pl->brow[b];
	if (pl->nbrows == pl->capb) {
		size_t cap = pl->capb ? 2 * pl->capb : 64;
		double *v = realloc(pl->bcount, cap * pl->ncols * sizeof(*v));

		if (!v)
			return NONE;
		pl->bcount = v;
		pl->capb = cap;
	}
	memset(&pl->bcount[pl->nbrows * pl->ncols], 0, pl->ncols * sizeof(double));
	pl->known[b] = 1;
	return pl->brow[b] = (uint32_t)pl->nbrows++;
}

/* The entry block of the function named name, or NONE. */
static uint32_t func_entry(const struct sb_cfg *m, const char *name)
{
	for (size_t f = 0; f < m->nfuncs; f++)
		if (m->funcs[f].name && !strcmp(m->funcs[f].name, name) && m->funcs[f].nblocks)
			return m->funcs[f].first_block;
	return NONE;
}

static bool calls_block(const struct sb_cfg *m, uint32_t b, uint32_t entry)
{
	for (uint32_t k = m->out_start[b]; entry != NONE && k < m->out_start[b + 1]; k++)
		if (m->edges[k].kind == SB_EDGE_CALL && m->edges[k].dst == entry)
			return true;
	return false;
}

/*
 * What the program's code says beyond the counts: a block holding the
 * coverage callback's call is counted, so absent from an instance it ran
 * 0 times there; a call into a function that flushes the counts (the
 * runtime's sync wrappers) closes a segment.
 */
static int from_code(const struct sb_cfg *m, struct pool *pl)
{
	uint32_t guard = func_entry(m, "__sanitizer_cov_trace_pc_guard");
	/* sb_exact_sync: the wrappers' since trace builds name each sync;
	 * sb_exact_flush: theirs before (and the runtime's own calls) */
	uint32_t flush = func_entry(m, "sb_exact_flush");
	uint32_t sync = func_entry(m, "sb_exact_sync");
	uint32_t done = func_entry(m, "sb_exact_thread_done");
	uint8_t *closes = calloc(m->nfuncs ? m->nfuncs : 1, 1);

	if (!closes)
		return -ENOMEM;
	pl->instr = calloc(m->nfuncs ? m->nfuncs : 1, 1);
	if (!pl->instr) {
		free(closes);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < m->nblocks; b++) {
		if (calls_block(m, b, flush) || calls_block(m, b, sync) || calls_block(m, b, done))
			closes[m->blocks[b].func] = 1;
		if (calls_block(m, b, guard))
			pl->instr[m->blocks[b].func] = 1;
	}
	for (uint32_t b = 0; b < m->nblocks; b++) {
		if (!pl->func_on[m->blocks[b].func])
			continue;
		if (calls_block(m, b, guard) && block_row(pl, b) == NONE) {
			free(closes);
			return -ENOMEM;
		}
		for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
			if (m->edges[k].kind == SB_EDGE_CALL && closes[m->blocks[m->edges[k].dst].func])
				pl->cut[b] = 1;
	}
	free(closes);
	return 0;
}

static void add_counts(const struct sb_vector *vec, const struct sb_instance *in,
		       uint32_t off, double *dst)
{
	for (uint32_t t = 0; t < vec->nthreads && t < in->nthreads && t < SB_CAUSES_MAX_THREADS;
	     t++)
		dst[off + t] += (double)vec->counts[t];
}

/* The chosen instances' vectors: exact counts by block, samples by event. */
static int pool_fill(const struct sb_profile *p, const struct sb_causes_graph *g,
		     size_t **by_inst, const size_t *ninst_vec, struct pool *pl)
{
	const struct sb_cfg *m = g->merged;
	size_t nb = m->nblocks ? m->nblocks : 1, ne = p->nevents ? p->nevents : 1;

	pl->brow = malloc(nb * sizeof(*pl->brow));
	pl->known = calloc(nb, 1);
	pl->cut = calloc(nb, 1);
	pl->func_on = calloc(m->nfuncs ? m->nfuncs : 1, 1);
	pl->srow = malloc(ne * sizeof(long));
	pl->sblock = malloc(ne * sizeof(uint32_t));
	pl->sevent = malloc(ne * sizeof(uint32_t));
	pl->scount = calloc(ne * pl->ncols, sizeof(double));
	if (!pl->brow || !pl->known || !pl->cut || !pl->func_on || !pl->srow || !pl->sblock ||
	    !pl->sevent || !pl->scount)
		return -ENOMEM;
	for (size_t b = 0; b < m->nblocks; b++)
		pl->brow[b] = NONE;
	for (size_t e = 0; e < p->nevents; e++)
		pl->srow[e] = -1;
	for (uint32_t k = 0; k < pl->ninst; k++) {
		uint32_t i = pl->inst[k];

		for (size_t v = 0; v < ninst_vec[i]; v++) {
			const struct sb_vector *vec = &p->vectors[by_inst[i][v]];
			const struct sb_event_def *d = &p->events[vec->event];
			long b = sb_causes_event_block(p, g, d);
			uint32_t r;

			if (b < 0)
				continue;
			if (d->kind == SB_EVK_BLOCK_COUNT) {
				if ((r = block_row(pl, (uint32_t)b)) == NONE)
					return -ENOMEM;
				pl->func_on[m->blocks[b].func] = 1;
				add_counts(vec, &p->instances[i], pl->off[k],
					   &pl->bcount[(size_t)r * pl->ncols]);
			} else if (d->kind == SB_EVK_BLOCK_SAMPLES) {
				if (pl->srow[vec->event] < 0) {
					pl->sblock[pl->nsampled] = (uint32_t)b;
					pl->sevent[pl->nsampled] = vec->event;
					pl->srow[vec->event] = (long)pl->nsampled++;
				}
				add_counts(vec, &p->instances[i], pl->off[k],
					   &pl->scount[(size_t)pl->srow[vec->event] * pl->ncols]);
			}
		}
	}
	return from_code(m, pl);
}

static struct sb_causes_cols cols_of(const struct pool *pl)
{
	return (struct sb_causes_cols){ .ncols = pl->ncols, .ntix = pl->ntix, .tix = pl->tix,
					.ninst = pl->ninst, .off = pl->off };
}

/*
 * Which sampled blocks become hardware events.  The profile adds a sample
 * to every call site on its stack, so a call site's samples are its
 * callees' time: an outer frame's (see the header comment), the sync's
 * that closes the segment (spinning before it sleeps), or a counted
 * callee's, whose blocks have samples of their own, which would count
 * twice and show the callee's time at its caller.  Those are dropped.
 *
 * Code without counts (a library: memcpy, qsort, strtod) is the other
 * way round.  Its blocks have no executions to explain their samples by,
 * so every difference in how often the program calls it looks like a
 * hardware cause deep inside it (memmove's loop), at a line in no code of
 * the section's.  What the program decides is the call: how often and
 * with what argument, and a slower library call (a larger working set
 * copied) is slower at that call.  So a library's samples are taken at
 * the program's call into it (the call site's samples hold them), whose
 * exact count is their superior: the calls explain what more calls take,
 * the rest is a hardware cause at the call's line.  Library blocks are
 * not events of their own.
 */
static bool calls_uncounted(const struct sb_cfg *m, const struct pool *pl, uint32_t b)
{
	/* no CALL edge: a PLT stub or a pointer, outside counted code */
	for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++)
		if (m->edges[k].kind == SB_EDGE_CALL && pl->instr[m->blocks[m->edges[k].dst].func])
			return false;   /* a counted callee */
	return true;
}

static bool hw_event_of(const struct sb_cfg *m, const struct pool *pl, uint32_t b)
{
	if (!pl->instr[m->blocks[b].func])
		return false;            /* uncounted code: taken at its call */
	if (!sb_cfg_ends_in_call(m, b))
		return true;
	return !pl->cut[b] && calls_uncounted(m, pl, b) && !pl->ptr_counted[b];
}

/*
 * A call through a pointer has no CALL edge, so calls_uncounted() takes
 * it for a library call, and its samples, its callee's time, become a
 * hardware event at the call on top of the callee's own blocks' (an
 * early-exit search reached by `find_fn(...)`: a "hardware" cause at the
 * call, 0.99, above the search's exit).  Exact counts say where it went:
 * the one counted function entered exactly as often as the call ran,
 * beyond its direct calls (entries through pointers), in every (instance,
 * thread) pair, is its callee.  Never a function that holds the call or
 * leads to it: an OpenMP region's body or a thread's start routine is
 * entered through a pointer once a pair too, and a library call made
 * once a pair there (a large memcpy) would match it.  Marks those call
 * blocks in pl->ptr_counted.  (A comparator libc's qsort calls is entered
 * far more often than the program calls qsort: no match, and qsort's time
 * stays at its call.)
 */
#define PTR_DEPTH 8

static int calls_counted_by_pointer(const struct sb_cfg *m, struct pool *pl,
				    const struct sb_cfg_flow *fl)
{
	size_t nc = pl->ncols ? pl->ncols : 1, nf = 0;
	uint32_t *fs = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof(*fs));
	long *fidx = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof(*fidx));
	uint8_t *left = malloc(m->nfuncs ? m->nfuncs : 1);
	double *entries = NULL;
	int ret = -ENOMEM;

	pl->ptr_counted = calloc(m->nblocks ? m->nblocks : 1, 1);
	if (!fs || !fidx || !left || !pl->ptr_counted)
		goto out;
	/* counted functions entered in the section: their entry counts */
	for (uint32_t f = 0; f < m->nfuncs; f++) {
		fidx[f] = -1;
		if (pl->instr[f] && m->funcs[f].nblocks &&
		    sb_cfg_flow_block(fl, m->funcs[f].first_block))
			fidx[f] = (long)nf, fs[nf++] = f;
	}
	if (!(entries = malloc((nf ? nf : 1) * nc * sizeof(*entries))))
		goto out;
	for (size_t i = 0; i < nf; i++)
		memcpy(&entries[i * nc], sb_cfg_flow_block(fl, m->funcs[fs[i]].first_block),
		       pl->ncols * sizeof(*entries));
	/* less their direct calls: what is left came through pointers */
	for (uint32_t b = 0; b < m->nblocks; b++)
		for (uint32_t k = m->out_start[b]; k < m->out_start[b + 1]; k++) {
			uint32_t f = m->blocks[m->edges[k].dst].func;
			const double *calls = sb_cfg_flow_block(fl, b);

			if (m->edges[k].kind != SB_EDGE_CALL || fidx[f] < 0 || !calls ||
			    m->edges[k].dst != m->funcs[f].first_block)
				continue;
			for (size_t c = 0; c < pl->ncols; c++)
				entries[(size_t)fidx[f] * nc + c] -= calls[c];
		}
	for (uint32_t b = 0; b < m->nblocks; b++) {
		const double *calls = sb_cfg_flow_block(fl, b);
		uint32_t fb = m->blocks[b].func, nmatch = 0;
		double any = 0;

		if (!pl->instr[fb] || !sb_cfg_ends_in_call(m, b) || pl->cut[b] ||
		    !calls_uncounted(m, pl, b) || !calls)
			continue;
		for (size_t c = 0; c < pl->ncols; c++)
			any += calls[c];
		for (size_t i = 0; any > 0 && i < nf && nmatch < 2; i++) {
			bool same = true;

			for (size_t c = 0; same && c < pl->ncols; c++)
				same = fabs(entries[i * nc + c] - calls[c]) < 0.5;
			if (!same)
				continue;
			memset(left, 0, m->nfuncs);
			nmatch += !sb_causes_calls_reach(m, fs[i], fb, PTR_DEPTH, false, left);
		}
		pl->ptr_counted[b] = nmatch == 1;
	}
	ret = 0;
out:
	free(fs);
	free(fidx);
	free(left);
	free(entries);
	return ret;
}

static int make_events(const struct sb_profile *p, const struct sb_cfg *m,
		       const struct pool *pl, const struct sb_cfg_flow *fl,
		       struct sb_causes_pooled *li)
{
	const struct sb_causes_cols cols = cols_of(pl);
	size_t n = 0, cap = pl->nsampled * 2, nt = pl->ncols;
	long *count_ev = malloc((m->nblocks ? m->nblocks : 1) * sizeof(long));
	uint8_t *skip = calloc(m->nedges ? m->nedges : 1, 1);

	for (size_t e = 0; e < m->nedges; e++)
		cap += fl->edge_known[e];
	li->ev = calloc(cap ? cap : 1, sizeof(*li->ev));
	li->counts = calloc((cap ? cap : 1) * (nt ? nt : 1), sizeof(double));
	if (!li->ev || !count_ev || !li->counts || !skip ||
	    sb_causes_sync_edges(m, pl->cut, func_entry(m, "__sanitizer_cov_trace_pc_guard"),
				 skip)) {
		free(count_ev);
		free(skip);
		return -ENOMEM;
	}
	for (size_t e = 0; e < m->nedges; e++) {
		/* how a thread leaves at the sync: who arrived last */
		if (!fl->edge_known[e] || skip[e])
			continue;
		memcpy(&li->counts[n * nt], sb_cfg_flow_edge(fl, (uint32_t)e), nt * sizeof(double));
		li->ev[n] = (struct sb_lime_event){ .kind = SB_LIME_EDGE, .id = (uint32_t)e,
						    .superior = -1 };
		n++;
	}
	free(skip);
	for (size_t b = 0; b < m->nblocks; b++)
		count_ev[b] = -1;
	for (size_t r = 0; r < pl->nsampled; r++) {
		uint32_t b = pl->sblock[r];
		const struct sb_event_def *d = &p->events[pl->sevent[r]];

		if (!hw_event_of(m, pl, pl->sblock[r]))
			continue;
		if (fl->block_known[b] && count_ev[b] < 0) {
			memcpy(&li->counts[n * nt], sb_cfg_flow_block(fl, b), nt * sizeof(double));
			li->ev[n] = (struct sb_lime_event){ .kind = SB_LIME_COUNT, .id = b,
							    .superior = -1 };
			count_ev[b] = (long)n++;
		}
		memcpy(&li->counts[n * nt], &pl->scount[r * nt], nt * sizeof(double));
		li->ev[n] = (struct sb_lime_event){
			.kind = SB_LIME_HW, .id = b,
			.superior = fl->block_known[b] ? (int32_t)count_ev[b] : -1,
			.addr = SB_CFG_TAG(d->binary, d->vaddr),
		};
		n++;
	}
	/* (HW and COUNT rows become thread means in the hardware test) */
	for (size_t r = 0; r < n; r++) {
		li->ev[r].counts = &li->counts[r * nt];
		sb_causes_centre(&cols, &li->counts[r * nt]);
	}
	li->in.nevents = n;
	free(count_ev);
	return 0;
}

/* What the hardware test rests on, for causes_evidence.c's power. */
static void hw_inputs(const struct sb_profile *p, const struct sb_cfg *m, const struct pool *pl,
		      size_t nhw, struct sb_causes_exact_hw *hw)
{
	*hw = (struct sb_causes_exact_hw){ .nthreads = pl->ntix < SB_CAUSES_MAX_THREADS ? pl->ntix
								   : SB_CAUSES_MAX_THREADS,
		.m = nhw, .ninst = pl->ninst,
		.level = SB_CAUSES_EXACT_HW_ALPHA / (double)(nhw ? nhw : 1),
		.room = (double)SB_EXACT_MAX_OBS / (double)pl->ncols };
	for (uint32_t k = 0; k < pl->ninst; k++) {
		const struct sb_instance *in = &p->instances[pl->inst[k]];

		/* (threads made afresh each instance may number more than the
		 * arrays hold: the power estimate looks at the first ones) */
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			if (pl->tix[pl->off[k] + t] < SB_CAUSES_MAX_THREADS)
				hw->time[pl->tix[pl->off[k] + t]] +=
					(double)in->per_thread[t].busy_ns / 1e9;
	}
	for (uint32_t c = 0; c < pl->ncols; c++)
		for (size_t r = 0; r < pl->nsampled && pl->tix[c] < SB_CAUSES_MAX_THREADS; r++)
			if (hw_event_of(m, pl, pl->sblock[r]))
				hw->samples[pl->tix[c]] += pl->scount[r * pl->ncols + c];
}

int sb_causes_pool_exact(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			 struct sb_causes_pooled *li, struct sb_causes_exact_hw *hw)
{
	const struct sb_cfg *m = g->merged;
	struct pool pl = { 0 };
	struct sb_cfg_flow fl = { 0 };
	double imb = 0;
	size_t nhw = 0;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	if (choose(p, s, ninst_vec, &pl))
		goto out;
	if (!pl.ninst) {
		ret = -ENOENT;
		goto out;
	}
	li->time = calloc(pl.ncols, sizeof(double));
	if (!li->time || pool_fill(p, g, by_inst, ninst_vec, &pl))
		goto out;
	for (uint32_t k = 0; k < pl.ninst; k++) {
		const struct sb_instance *in = &p->instances[pl.inst[k]];
		double mx = 0;

		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++) {
			li->time[pl.off[k] + t] = (double)in->per_thread[t].busy_ns;
			if (li->time[pl.off[k] + t] > mx)
				mx = li->time[pl.off[k] + t];
		}
		imb += mx > 0 ? sb_causes_lost(in) / (mx * in->nthreads) : 0;
	}
	if (sb_cfg_flow_solve_rows(m, pl.ncols, pl.known, pl.brow, pl.bcount, pl.cut, &fl) ||
	    calls_counted_by_pointer(m, &pl, &fl) || make_events(p, m, &pl, &fl, li))
		goto out;
	{
		const struct sb_causes_cols cols = cols_of(&pl);

		sb_causes_centre(&cols, li->time);
	}
	{
		const struct sb_causes_cols cols = cols_of(&pl);
		double *ty = malloc(2 * pl.ncols * sizeof(*ty));
		double *sum = malloc((pl.ntix ? pl.ntix : 1) * sizeof(*sum));
		uint32_t *cnt = malloc((pl.ntix ? pl.ntix : 1) * sizeof(*cnt));
		bool ok = ty && sum && cnt;

		long nvary = ok ? sb_causes_drop_unproven_hw(&cols, li, li->in.nevents,
							     sb_causes_sample_hz(p), ty,
							     ty + pl.ncols, sum, cnt) : -1;

		ok = nvary >= 0;
		nhw = ok ? (size_t)nvary : 0;
		if (ok && hw)
			hw_inputs(p, m, &pl, nhw, hw);
		free(ty);
		free(sum);
		free(cnt);
		if (!ok)
			goto out;
	}
	li->in.nthreads = pl.ncols;
	li->in.time = li->time;
	li->in.events = li->ev;
	li->in.ngroups = pl.ninst;
	li->in.counted_edges = 1;
	li->in.imbalance = imb / pl.ninst;
	ret = 0;
out:
	sb_cfg_flow_free(&fl);
	pool_free(&pl);
	return ret;
}
