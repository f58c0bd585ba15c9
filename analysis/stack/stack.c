// SPDX-License-Identifier: MIT
/* Speedup stacks from a phase's times (stack.h). */
#include "stack.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "chip/chip.h"

static double clamp0(double v)
{
	return v > 0 ? v : 0;
}

int sb_stack_compute(const struct sb_stack_times *t, struct sb_stack *s)
{
	double T = t->threads, wait, lock, imb, bar;

	memset(s, 0, sizeof(*s));
	if (!t->threads || !t->base_ns || !t->time_ns || !t->free_ns)
		return -EINVAL;
	s->perfect = T;
	s->measured = (double)t->base_ns / (double)t->time_ns;
	s->free_est = (double)t->base_ns / (double)t->free_ns;
	/* a real pirate's may come out below 1 (the profiled thread's share
	 * ran faster than a one-thread run's per-thread part): cache 0 */
	s->cache_known = t->pirate != SB_STACK_PIRATE_NONE && t->slowdown > 0;
	s->pirate_est = s->cache_known ? T / t->slowdown : NAN;
	s->sync = clamp0(s->free_est - s->measured);
	if (s->cache_known) {
		/* a pirate above perfect (the share ran faster than its part
		 * of the one-thread run) loses nothing to the cache and
		 * leaves memory no more than perfect − free */
		s->cache = clamp0(T - s->pirate_est);
		s->memory = clamp0((s->pirate_est < T ? s->pirate_est : T) - s->free_est);
	} else {
		/* no pirate: cache and memory together, as "memory" */
		s->memory = clamp0(T - s->free_est);
	}
	s->residual = (T - s->measured) - (s->cache + s->memory + s->sync);
	/* the synchronization's parts in proportion to their times */
	lock = clamp0((double)t->nolock_ns - (double)t->free_ns);
	imb = clamp0((double)t->imbalance_ns);
	bar = clamp0((double)t->time_ns - (double)t->nolock_ns - imb);
	wait = lock + imb + bar;
	if (wait > 0) {
		s->lock = s->sync * lock / wait;
		s->imbalance = s->sync * imb / wait;
		s->barrier = s->sync * bar / wait;
	}
	return 0;
}

/* A thread's time blocked inside the phase (not at its closing
 * synchronization, not working): locks, condition variables, waiting
 * for a CPU. */
static uint64_t blocked(const struct sb_thread_time *x)
{
	uint64_t used = x->busy_ns + x->wait_ns;

	return x->wall_ns > used ? x->wall_ns - used : 0;
}

/* Threads whose lock-code share is taken (the rest count busy as work) */
#define STACK_MAX_SHARES 256

static bool has_prefix(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

/* Whether samples of event e were spent in a thread library's
 * synchronization code: a function of libc (libpthread) or an OpenMP
 * runtime whose name says lock, futex, condition, semaphore or barrier.
 * (Without the library's symbols its internal functions may read as a
 * neighbour's name: that time then counts as work.) */
static bool sync_event(const struct sb_profile *p, const struct sb_event_def *e)
{
	static const char *const libs[] = { "libc.so", "libpthread", "libgomp", "libomp",
					    "libiomp", NULL };
	static const char *const words[] = { "mutex", "lll_", "futex", "spin_lock", "spinlock",
					     "rwlock", "sem_wait", "sem_post", "cond_",
					     "barrier", "critical", "set_lock", NULL };
	const struct sb_loc *l;
	const char *bin, *base;
	bool lib = false;

	if (e->kind != SB_EVK_BLOCK_SAMPLES || e->loc < 0 || (size_t)e->loc >= p->nlocs)
		return false;
	l = &p->locs[e->loc];
	if (!l->function || l->binary < 0 || (size_t)l->binary >= p->nbinaries ||
	    !(bin = p->binaries[l->binary].path))
		return false;
	base = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
	for (int k = 0; libs[k] && !lib; k++)
		lib = has_prefix(base, libs[k]);
	for (int k = 0; lib && words[k]; k++)
		if (strstr(l->function, words[k]))
			return true;
	return false;
}

/*
 * Each of section i's threads' share of its samples spent in
 * synchronization code (sync_event), from the stored instances' vectors:
 * on-CPU time inside lock calls (the lock word's cache misses, the futex
 * system calls) that busy time holds but a synchronization-free run
 * would not spend.  share[k] for sec->per_thread[k], the first
 * STACK_MAX_SHARES threads (the others': none); 0 without samples.
 */
static void sync_shares(const struct sb_profile *p, size_t i, double *share)
{
	const struct sb_section *sec = &p->sections[i];
	double all[STACK_MAX_SHARES] = { 0 }, sync[STACK_MAX_SHARES] = { 0 };
	uint32_t n = sec->nthreads < STACK_MAX_SHARES ? sec->nthreads : STACK_MAX_SHARES;

	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *vec = &p->vectors[v];
		const struct sb_instance *in;
		const struct sb_event_def *e;
		bool is_sync;

		if (vec->instance >= p->ninstances || vec->event >= p->nevents ||
		    (in = &p->instances[vec->instance])->section != i ||
		    (e = &p->events[vec->event])->kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		is_sync = sync_event(p, e);
		for (uint32_t j = 0; j < vec->nthreads && j < in->nthreads; j++)
			for (uint32_t k = 0; k < n; k++)
				if (sec->per_thread[k].tid == in->per_thread[j].tid) {
					all[k] += (double)vec->counts[j];
					sync[k] += is_sync ? (double)vec->counts[j] : 0;
					break;
				}
	}
	for (uint32_t k = 0; k < n; k++)
		share[k] = all[k] > 0 ? sync[k] / all[k] : 0;
}

int sb_stack_section_times(const struct sb_profile *p, size_t i, struct sb_stack_times *t)
{
	const struct sb_section *sec;
	uint64_t stored = 0, span = 0, wall = 0;
	double crit = 0, scale;

	double share[STACK_MAX_SHARES] = { 0 };

	if (i >= p->nsections || !(sec = &p->sections[i])->nthreads)
		return -EINVAL;
	t->time_ns = t->nolock_ns = t->free_ns = t->imbalance_ns = 0;
	sync_shares(p, i, share);
	for (uint32_t k = 0; k < sec->nthreads; k++) {
		const struct sb_thread_time *x = &sec->per_thread[k];
		uint64_t nolock = x->busy_ns + blocked(x);
		/* its work: busy time less the part sampled in lock code */
		uint64_t work = (uint64_t)((double)x->busy_ns *
					   (1 - (k < STACK_MAX_SHARES ? share[k] : 0)));

		wall = x->wall_ns > wall ? x->wall_ns : wall;
		t->nolock_ns = nolock > t->nolock_ns ? nolock : t->nolock_ns;
		t->free_ns = work > t->free_ns ? work : t->free_ns;
	}
	/* the stored instances: their spans, and each one's slowest thread
	 * (busy and blocked) that the others waited for */
	for (size_t k = 0; k < p->ninstances; k++) {
		const struct sb_instance *in = &p->instances[k];
		uint64_t slowest = 0;

		if (in->section != i)
			continue;
		stored++;
		span += in->end_ns > in->start_ns ? in->end_ns - in->start_ns : 0;
		for (uint32_t j = 0; j < in->nthreads; j++) {
			uint64_t v = in->per_thread[j].busy_ns + blocked(&in->per_thread[j]);

			slowest = v > slowest ? v : slowest;
		}
		crit += (double)slowest;
	}
	scale = stored && sec->ninstances > stored ? (double)sec->ninstances / (double)stored : 1;
	/* the phase's time: its instances' spans, else its slowest thread's
	 * wall time */
	t->time_ns = stored && span ? (uint64_t)((double)span * scale) : wall;
	if (stored) {
		double imb = crit * scale - (double)t->nolock_ns;
		double room = (double)t->time_ns - (double)t->nolock_ns;

		t->imbalance_ns = (uint64_t)(imb > 0 ? (imb < room ? imb : clamp0(room)) : 0);
	}
	return t->time_ns ? 0 : -EINVAL;
}

int sb_stack_virtual_pirate(const struct sb_profile *p, size_t row, unsigned threads,
			    double *slowdown, uint64_t *bytes)
{
	struct sb_chip_summary s;
	double penalty, extra_s;
	unsigned share;

	if (!threads || sb_chip_summarize(p, row, threads, NULL, &s) || !s.machine.llc_bytes)
		return -EINVAL;
	share = sb_chip_sharers(&s.machine, threads);
	*bytes = s.machine.llc_bytes / (share ? share : 1);
	penalty = (s.machine.lat_miss - s.machine.lat_hit) * 1e-9;   /* s per miss */
	if (share <= 1) {   /* a cache of its own: nothing to steal */
		*slowdown = 1;
		return 0;
	}
	if (!(penalty > 0))
		return -EINVAL;
	if (s.sampled) {
		/* footprint probes: DRAM bytes per second of the thread's time
		 * at the whole cache and at its share */
		bool ok1, ok2;
		double line = s.line ? s.line : 64;
		double more = sb_chip_fp_demand(&s.fp, (double)*bytes, &ok1) -
			      sb_chip_fp_demand(&s.fp, (double)s.machine.llc_bytes, &ok2);

		if (s.fp.n == 0)
			return -EINVAL;
		extra_s = clamp0(more) / line * penalty;   /* per second */
		*slowdown = 1 + extra_s;
		return 0;
	}
	if (!(s.t_ser > 0))
		return -EINVAL;
	/* hit ratios: the misses a share adds, each a penalty, over the
	 * phase's serial time */
	extra_s = clamp0(sb_chip_hits(s.est, s.depth_llc) - sb_chip_hits(s.est, s.depth_llc / share)) *
		  penalty;
	*slowdown = 1 + extra_s / s.t_ser;
	return 0;
}

int sb_stack_real_pirate(const struct sb_profile *p, size_t i, const int32_t *tids, size_t ntids,
			 unsigned threads, uint64_t base_ns, double *slowdown)
{
	const struct sb_section *sec;
	uint64_t busy = 0;
	bool any = false;

	if (i >= p->nsections || !threads || !base_ns)
		return -EINVAL;
	sec = &p->sections[i];
	for (uint32_t k = 0; k < sec->nthreads; k++)
		for (size_t j = 0; j < ntids; j++)
			if ((int64_t)sec->per_thread[k].tid == (int64_t)tids[j]) {
				busy += sec->per_thread[k].busy_ns;
				any = true;
				break;
			}
	if (!any || !busy)
		return -EINVAL;
	*slowdown = (double)busy / ((double)base_ns / threads);
	return 0;
}
