// SPDX-License-Identifier: MIT
/*
 * Regions of ccSIM (§II-C: the execution between two successive
 * barriers) from the traces' sync records.
 *
 * A thread's run is what it records between two SYNCs.  A SYNC is an
 * arrival; when the thread went on is not recorded (the wrappers
 * tail-call), so each run's start is derived from what its SYNC waited
 * for, the earliest moment the thread could have left:
 *   barrier (pthread or an OpenMP region's), an OpenMP region's end:
 *       the k-th wait of every thread on one object is one episode, left
 *       when its last thread arrived;
 *   condvar wait: the first broadcast on the condvar at or after it;
 *   join: the end of the joined thread;
 *   the rest (create, fork, a task's start, a broadcast): the SYNC itself,
 *       it does not wait; traces without kinds: the RESUME after it.
 * Time alone would not do: with more threads than cores, a thread that
 * runs after another finished its round overlaps it in no instant, yet
 * both are in one region.  Runs that record nothing (a worker idle
 * between OpenMP regions) take no part: they would span every boundary.  A region boundary is the end of an episode (or a fork)
 * that no run recording something spans: every thread then was held
 * there.  A thread's first run starts when it does, yet belongs to the
 * region it shares with the others: boundaries, not overlaps, cut them.
 */
#include "coherence_regions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf_trace.h"

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;
	size_t c;

	if (n < *cap)
		return p;
	c = *cap ? 2 * *cap : 256;
	q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

void sb_coh_runs_free(struct sb_coh_runs *rs)
{
	free(rs->runs);
	free(rs->syncs);
	sb_idmap_free(rs->counts);
	memset(rs, 0, sizeof(*rs));
}

int sb_coh_runs_thread(struct sb_coh_runs *rs, uint32_t t)
{
	struct sb_coh_run *r;

	if (!rs->counts && !(rs->counts = sb_idmap_alloc()))
		return -ENOMEM;
	r = grow(rs->runs, &rs->caprun, rs->nruns, sizeof(*r));
	if (!r)
		return -ENOMEM;
	rs->runs = r;
	r = &rs->runs[rs->nruns++];
	memset(r, 0, sizeof(*r));
	r->thread = t;
	r->prev = -1;
	r->resume = UINT64_MAX;
	return 0;
}

void sb_coh_runs_resume(struct sb_coh_runs *rs, uint64_t ns)
{
	struct sb_coh_run *r = &rs->runs[rs->nruns - 1];

	if (r->resume == UINT64_MAX)
		r->resume = ns;
}

void sb_coh_runs_record(struct sb_coh_runs *rs)
{
	rs->runs[rs->nruns - 1].nrec++;
}

/* The k of a thread's k-th wait on an object of a kind that has
 * episodes; 0 for the others. */
static long episode(struct sb_coh_runs *rs, uint32_t t, uint32_t kind, uint64_t obj)
{
	void **slot;

	if (kind != SB_TSYNC_BARRIER && kind != SB_TSYNC_OMP_BARRIER &&
	    kind != SB_TSYNC_OMP_TASK_END)
		return 0;
	slot = sb_idmap_slot(rs->counts, obj, (uint64_t)t << 8 | kind, true);
	if (!slot)
		return -1;
	*slot = (void *)((uintptr_t)*slot + 1);
	return (long)(uintptr_t)*slot - 1;
}

int sb_coh_runs_sync(struct sb_coh_runs *rs, uint64_t ns, uint32_t kind, uint64_t obj,
		     uint64_t records)
{
	struct sb_coh_run *r = &rs->runs[rs->nruns - 1];
	struct sb_coh_sync *s = grow(rs->syncs, &rs->capsync, rs->nsyncs, sizeof(*s));
	long k;

	if (!s)
		return -ENOMEM;
	rs->syncs = s;
	k = episode(rs, r->thread, kind, obj);
	if (k < 0)
		return -ENOMEM;
	rs->syncs[rs->nsyncs] = (struct sb_coh_sync){ .time = ns, .obj = obj, .thread = r->thread,
						      .kind = kind, .k = (uint64_t)k };
	r->end = ns;
	r->last = records;
	r->closed = true;
	/* the next run follows this SYNC */
	if (sb_coh_runs_thread(rs, r->thread))
		return -ENOMEM;
	rs->runs[rs->nruns - 1].prev = (long)rs->nsyncs++;
	return 0;
}

void sb_coh_runs_end_thread(struct sb_coh_runs *rs, uint64_t records)
{
	struct sb_coh_run *r = &rs->runs[rs->nruns - 1];

	/* An open run: cut short (a crash), it lasts to the end of time. */
	r->end = UINT64_MAX;
	r->last = records;
}

static int by_time(const void *a, const void *b)
{
	const struct sb_coh_sync *x = *(const struct sb_coh_sync *const *)a,
				 *y = *(const struct sb_coh_sync *const *)b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* The syncs of one kind, by (object, time). */
static const struct sb_coh_sync **of_kind(const struct sb_coh_runs *rs, uint32_t kind, size_t *n)
{
	const struct sb_coh_sync **v = malloc((rs->nsyncs + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < rs->nsyncs; i++)
		if (rs->syncs[i].kind == kind)
			v[(*n)++] = &rs->syncs[i];
	qsort(v, *n, sizeof(*v), by_time);
	return v;
}

/* The index of the first of v (by object, time) at or after (obj, t). */
static size_t first_index(const struct sb_coh_sync **v, size_t n, uint64_t obj, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid]->obj < obj || (v[mid]->obj == obj && v[mid]->time < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Episode ends: (obj, kind << 32 | k) -> the last arrival. */
static int episodes(const struct sb_coh_runs *rs, struct sb_idmap *ends)
{
	for (size_t i = 0; i < rs->nsyncs; i++) {
		const struct sb_coh_sync *s = &rs->syncs[i];
		void **slot;

		if (s->kind != SB_TSYNC_BARRIER && s->kind != SB_TSYNC_OMP_BARRIER &&
		    s->kind != SB_TSYNC_OMP_TASK_END)
			continue;
		slot = sb_idmap_slot(ends, s->obj, (uint64_t)s->kind << 32 | s->k, true);
		if (!slot)
			return -ENOMEM;
		if ((uintptr_t)*slot < s->time)
			*slot = (void *)(uintptr_t)s->time;
	}
	return 0;
}

/* When the run after sync s could begin; resume: the RESUME after s (an
 * upper bound of its return), UINT64_MAX if none. */
static uint64_t left_at(const struct sb_coh_sync *s, uint64_t resume, struct sb_idmap *ends,
			const struct sb_coh_sync **wakes, size_t nwakes,
			const struct sb_coh_sync **exits, size_t nexits)
{
	void **slot;
	size_t i;

	switch (s->kind) {
	case SB_TSYNC_BARRIER:
	case SB_TSYNC_OMP_BARRIER:
	case SB_TSYNC_OMP_TASK_END:
		slot = sb_idmap_slot(ends, s->obj, (uint64_t)s->kind << 32 | s->k, false);
		return slot ? (uint64_t)(uintptr_t)*slot : s->time;
	case SB_TSYNC_COND_WAIT:
		i = first_index(wakes, nwakes, s->obj, s->time);
		if (i < nwakes && wakes[i]->obj == s->obj)
			return wakes[i]->time;
		return resume != UINT64_MAX ? resume : s->time;
	case SB_TSYNC_JOIN:
		/* the end of the joined thread: of the threads that had that
		 * pthread_t (reused after a join), the last to end before the
		 * join returned */
		i = first_index(exits, nexits, s->obj, resume == UINT64_MAX ? UINT64_MAX : resume + 1);
		if (i > 0 && exits[i - 1]->obj == s->obj && exits[i - 1]->time > s->time)
			return exits[i - 1]->time;
		return s->time;
	case SB_TSYNC_OTHER:
		return resume != UINT64_MAX ? resume : s->time;
	default:
		return s->time;
	}
}

static int by_thread_last(const void *a, const void *b)
{
	const struct sb_coh_run *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->last < y->last ? -1 : x->last > y->last;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The index of the first of b[0..n) above t (strict) or at or above it. */
static size_t upper(const uint64_t *b, size_t n, uint64_t t, bool strict)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strict ? b[mid] <= t : b[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A create is a boundary only when its creator is the one thread alive
 * (a program's set-up before its first thread, or between phases whose
 * threads all ended): a thread created while others run joins their
 * region, which is what a barrier round of workers created one by one
 * is (the first may finish its round before the last is created).
 */
static bool alone(const struct sb_coh_runs *rs, const struct sb_coh_sync *s)
{
	/* each other thread's life: its first RESUME to its last SYNC
	 * (waits in between included: a worker held at a barrier lives) */
	for (size_t i = 0; i < rs->nruns;) {
		uint32_t t = rs->runs[i].thread;
		uint64_t born = UINT64_MAX, gone = 0;

		for (; i < rs->nruns && rs->runs[i].thread == t; i++) {
			const struct sb_coh_run *r = &rs->runs[i];

			if (r->resume < born)
				born = r->resume;
			if ((r->closed || r->nrec) && r->end > gone)
				gone = r->end;
		}
		if (t != s->thread && born < s->time && gone > s->time)
			return false;
	}
	return true;
}

static size_t sort_unique(uint64_t *c, size_t n)
{
	size_t k = 0;

	if (n)
		qsort(c, n, sizeof(*c), by_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || c[k - 1] != c[i])
			c[k++] = c[i];
	return k;
}

/* Drops the candidates c[0..n) a recording run spans; returns how many
 * are left. */
static int unspanned(const struct sb_coh_runs *rs, uint64_t *c, size_t *n)
{
	long *diff = calloc(*n + 1, sizeof(*diff));
	size_t k = 0;

	if (!diff)
		return -ENOMEM;
	for (size_t i = 0; i < rs->nruns; i++) {
		const struct sb_coh_run *r = &rs->runs[i];
		size_t lo, hi;

		if (!r->nrec || r->start >= r->end)
			continue;
		lo = upper(c, *n, r->start, true);
		hi = upper(c, *n, r->end, false);
		if (lo < hi) {
			diff[lo]++;
			diff[hi]--;
		}
	}
	for (size_t i = 0, inside = 0; i < *n; i++) {
		inside += (size_t)diff[i];
		if (!inside)
			c[k++] = c[i];
	}
	free(diff);
	*n = k;
	return 0;
}

/*
 * Region boundaries, sorted, in *b and their number in *nb: the ends of
 * episodes (barrier rounds, OpenMP regions' ends), forks and a lone
 * creator's creates; and where joins and condvar waits let a thread go
 * on, when no run that records something spans the moment (else that
 * thread was not held there: another group of threads, a master busy
 * through it).
 */
static int boundaries(const struct sb_coh_runs *rs, struct sb_idmap *ends, uint64_t **b,
		      size_t *nb)
{
	size_t it = 0, n = 0, nw = 0;
	uint64_t k1, k2, *c = malloc((sb_idmap_count(ends) + rs->nsyncs + rs->nruns + 1) *
				     sizeof(*c)), *w = malloc((rs->nruns + 1) * sizeof(*w));
	void *v;

	if (!c || !w) {
		free(c);
		free(w);
		return -ENOMEM;
	}
	/* Barriers every thread of a round waits at, forks, and a lone
	 * creator's creates: always boundaries.  A run of a thread that is
	 * in none of them (a creator between its creates and its joins)
	 * may span one: its records go to the region it starts in. */
	while (sb_idmap_next(ends, &it, &k1, &k2, &v))
		c[n++] = (uint64_t)(uintptr_t)v;
	for (size_t i = 0; i < rs->nsyncs; i++)
		if (rs->syncs[i].kind == SB_TSYNC_OMP_FORK ||
		    (rs->syncs[i].kind == SB_TSYNC_CREATE && alone(rs, &rs->syncs[i])))
			c[n++] = rs->syncs[i].time;
	/* Where a join or a condvar wait let a thread go on (after the
	 * joined thread's end, after the wake): boundaries when no thread
	 * that records runs through them (a mutex + condvar barrier's
	 * rounds, results read after the last join). */
	for (size_t i = 0; i < rs->nruns; i++) {
		const struct sb_coh_run *r = &rs->runs[i];

		if (r->prev >= 0 && (rs->syncs[r->prev].kind == SB_TSYNC_JOIN ||
				     rs->syncs[r->prev].kind == SB_TSYNC_COND_WAIT))
			w[nw++] = r->start;
	}
	nw = sort_unique(w, nw);
	if (unspanned(rs, w, &nw)) {
		free(c);
		free(w);
		return -ENOMEM;
	}
	memcpy(c + n, w, nw * sizeof(*w));
	free(w);
	*nb = sort_unique(c, n + nw);
	*b = c;
	return 0;
}

int sb_coh_runs_regions(struct sb_coh_runs *rs, uint64_t *nregions)
{
	struct sb_idmap *ends = sb_idmap_alloc();
	size_t nw = 0, ne = 0, nb = 0;
	const struct sb_coh_sync **wakes = of_kind(rs, SB_TSYNC_COND_WAKE, &nw);
	const struct sb_coh_sync **exits = of_kind(rs, SB_TSYNC_THREAD_END, &ne);
	uint64_t *b = NULL, top = 0;
	bool any = false;
	int err = -ENOMEM;

	if (!ends || !wakes || !exits || episodes(rs, ends))
		goto out;
	for (size_t i = 0; i < rs->nruns; i++) {
		struct sb_coh_run *r = &rs->runs[i];

		if (r->prev < 0)
			r->start = r->resume != UINT64_MAX ? r->resume : r->end;
		else
			r->start = left_at(&rs->syncs[r->prev], r->resume, ends, wakes, nw, exits,
					   ne);
		/* its RESUME, the first record after it, is never before it
		 * left (a wait woken by an unrecorded signal, a reused object) */
		if (r->resume < r->start)
			r->start = r->resume;
		if (r->start > r->end)
			r->start = r->end;
	}
	if (boundaries(rs, ends, &b, &nb))
		goto out;
	/* A run's region: the boundaries at or before its start (none lies
	 * inside it).  The runs go back to (thread, record) order; a run
	 * that records nothing takes its predecessor's region, and no run's
	 * region goes back. */
	qsort(rs->runs, rs->nruns, sizeof(*rs->runs), by_thread_last);
	for (size_t i = 0; i < rs->nruns; i++) {
		struct sb_coh_run *r = &rs->runs[i];
		bool first = !i || rs->runs[i - 1].thread != r->thread;

		if (r->nrec)
			r->region = upper(b, nb, r->start, true);
		else
			r->region = first ? 0 : rs->runs[i - 1].region;
		if (!first && r->region < rs->runs[i - 1].region)
			r->region = rs->runs[i - 1].region;
		if (r->nrec && (!any || r->region > top))
			top = r->region;
		any = any || r->nrec;
	}
	*nregions = any ? top + 1 : 0;
	err = 0;
out:
	free(b);
	sb_idmap_free(ends);
	free(wakes);
	free(exits);
	return err;
}
