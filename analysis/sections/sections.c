// SPDX-License-Identifier: MIT
/* The section builder: see sections.h for the model. */
#include "sections_priv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"


static struct sb_sect_thread *thread_get(struct sb_builder *b, uint32_t tid)
{
	void **slot = sb_idmap_slot(b->threads, tid, 0, true);

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	if (!*slot) {
		struct sb_sect_thread *t = calloc(1, sizeof(*t));

		if (!t) {
			b->err = SB_ERR_NOMEM;
			return NULL;
		}
		t->tid = tid;
		*slot = t;
	}
	return *slot;
}

static void first_join_decide(struct sb_builder *b, struct sb_sect_thread *p);

/* The tid of a thread that exited names a new thread: none of the old
 * one's state is its own.  The old one's held first join instance is
 * decided now, as at its exit: dropped here, it would only show as
 * unfinished. */
static void thread_renew(struct sb_builder *b, struct sb_sect_thread *t)
{
	uint32_t tid = t->tid;

	first_join_decide(b, t);
	sb_counts_free(t->seg_counts);
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	b->st.tids_reused++;
}

static struct sb_sect_inst *inst_new(struct sb_builder *b, uint16_t prim, uint64_t obj)
{
	struct sb_sect_inst *in = calloc(1, sizeof(*in));

	if (!in)
		b->err = SB_ERR_NOMEM;
	else {
		in->prim = prim;
		in->obj = obj;
		in->next = b->live;
		if (b->live)
			b->live->prev = in;
		b->live = in;
	}
	return in;
}

static void inst_arrive(struct sb_builder *b, struct sb_sect_inst *in, struct sb_sect_thread *t,
			uint64_t site, uint64_t ts, uint64_t oncpu)
{
	size_t cap = in->cap;
	struct sb_sect_arrival *a;

	if (!sb_sect_grow((void **)&in->a, sizeof(*in->a), in->n + 1, &cap)) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	in->cap = cap;
	a = &in->a[in->n++];
	memset(a, 0, sizeof(*a));
	a->tid = t->tid;
	a->life = t->life;
	a->site = site;
	a->arrive = ts;
	a->seg_start = t->seg_valid ? t->seg_ts : ts;
	a->busy = t->seg_valid && oncpu > t->seg_oncpu ? oncpu - t->seg_oncpu : 0;
	a->counts = t->seg_counts;   /* the segment's vector goes with it */
	t->seg_counts = NULL;
	if (!t->seg_valid)
		in->partial = true;
}

/* Marks the thread (tid, life) departed from in; returns true when
 * everyone has left. */
static bool inst_depart(struct sb_builder *b, struct sb_sect_inst *in, uint32_t tid,
			uint32_t life, uint64_t ts)
{
	for (uint32_t i = 0; i < in->n; i++) {
		struct sb_sect_arrival *a = &in->a[i];

		if (a->tid != tid || a->life != life || a->departed)
			continue;
		a->departed = true;
		a->depart = ts > a->arrive ? ts : a->arrive;
		in->ndeparted++;
		/* After its exit a thread does not wait: join idle is not a wait. */
		if (in->prim != SB_PRIM_JOIN)
			sb_sect_wait_add(b, in->prim, a->site, in->obj, a->depart - a->arrive);
		break;
	}
	return in->ndeparted == in->n;
}

static void seg_restart(struct sb_sect_thread *t, uint64_t ts, uint64_t oncpu)
{
	/* Counted while waiting at the sync: not work of any segment. */
	sb_counts_free(t->seg_counts);
	t->seg_counts = NULL;
	t->seg_valid = true;
	t->seg_ts = ts;
	t->seg_oncpu = oncpu;
}

static uint64_t barrier_key(struct sb_builder *b, const struct sb_sect_thread *t,
			    const struct sb_event *ev)
{
	(void)b;
	/* An OpenMP barrier has no argument: the team (region) is the object. */
	return ev->prim == SB_PRIM_OMP_BARRIER ? t->region : ev->obj;
}

static void barrier_arrive(struct sb_builder *b, struct sb_sect_thread *t,
			   const struct sb_event *ev)
{
	uint64_t obj = barrier_key(b, t, ev);
	void **slot = sb_idmap_slot(b->syncobjs, ev->prim, obj, true);
	struct sb_sect_inst *cur;
	bool again = false;

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	cur = *slot;
	if (cur)
		for (uint32_t i = 0; i < cur->n; i++)
			again |= cur->a[i].tid == t->tid && cur->a[i].life == t->life;
	/* Departures close an instance to arrivals; so does a thread coming
	 * back, which means its departure was lost. */
	if (!cur || cur->ndeparted || again) {
		cur = inst_new(b, ev->prim, obj);
		if (!cur)
			return;
		*slot = cur;
	}
	inst_arrive(b, cur, t, ev->site, ev->ts, ev->oncpu);
	t->pending = cur;
}

static void barrier_depart(struct sb_builder *b, struct sb_sect_thread *t,
			   const struct sb_event *ev)
{
	struct sb_sect_inst *in = t->pending;
	void **slot;

	if (!in) {
		b->st.unmatched++;
		return;
	}
	t->pending = NULL;
	seg_restart(t, ev->ts, ev->oncpu);
	if (!inst_depart(b, in, t->tid, t->life, ev->ts))
		return;
	slot = sb_idmap_slot(b->syncobjs, in->prim, in->obj, false);
	if (slot && *slot == in)
		*slot = NULL;
	sb_sect_finalize(b, in, 0);
}

static struct sb_sect_region *region_find(struct sb_builder *b, uint64_t id)
{
	for (struct sb_sect_region *r = b->regions; r; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

static void on_task(struct sb_builder *b, struct sb_sect_thread *t, const struct sb_event *ev,
		    bool enter)
{
	struct sb_sect_region *r;

	if (enter) {
		for (r = b->regions; r && r->fn != ev->obj; r = r->next)
			;
		if (!r)
			b->st.unmatched++;
		t->region = r ? r->id : 0;
		seg_restart(t, ev->ts, ev->oncpu);
		return;
	}
	r = region_find(b, t->region);
	if (!r) {
		b->st.unmatched++;
	} else {
		inst_arrive(b, r->end, t, r->site, ev->ts, ev->oncpu);
		/* The master's task may end in a nested call; keep the end site. */
	}
	t->region = 0;
	t->seg_valid = false;   /* idle in the runtime until its next task */
}

static void on_region(struct sb_builder *b, struct sb_sect_thread *t, const struct sb_event *ev,
		      bool enter)
{
	struct sb_sect_region *r, **pp;

	if (enter) {
		r = calloc(1, sizeof(*r));
		if (!r || !(r->end = inst_new(b, SB_PRIM_OMP_REGION_END, ev->obj))) {
			free(r);
			b->err = SB_ERR_NOMEM;
			return;
		}
		r->id = ++b->next_region;
		r->fn = ev->obj;
		r->site = ev->site;
		r->master = t->tid;
		r->next = b->regions;
		b->regions = r;
		return;
	}
	for (pp = &b->regions; *pp && (*pp)->master != t->tid; pp = &(*pp)->next)
		;
	if (!*pp) {
		b->st.unmatched++;
		return;
	}
	r = *pp;
	*pp = r->next;
	for (uint32_t i = 0; i < r->end->n; i++)
		if (!r->end->a[i].departed)
			inst_depart(b, r->end, r->end->a[i].tid, r->end->a[i].life, ev->ts);
	sb_sect_finalize(b, r->end, r->site);
	free(r);
	seg_restart(t, ev->ts, ev->oncpu);
}

static bool in_join(const struct sb_sect_thread *t)
{
	return t->nsync > 0 && t->nsync <= SB_SYNC_STACK &&
	       t->sync[t->nsync - 1].prim == SB_PRIM_JOIN;
}

/* Closes the parent's open join instance at the site where it joins:
 * everyone "departs" when the last child exits. */
static void join_close(struct sb_builder *b, uint32_t parent, uint64_t site)
{
	void **slot = sb_idmap_slot(b->syncobjs, SB_PRIM_JOIN, parent, false);
	void **pslot = sb_idmap_slot(b->threads, parent, 0, false);
	struct sb_sect_thread *p = pslot ? *pslot : NULL;
	struct sb_sect_inst *in = slot ? *slot : NULL;
	uint64_t last = 0;

	if (!in)
		return;
	*slot = NULL;
	for (uint32_t i = 0; i < in->n; i++)
		if (in->a[i].arrive > last)
			last = in->a[i].arrive;
	for (uint32_t i = 0; i < in->n; i++)
		inst_depart(b, in, in->a[i].tid, in->a[i].life, last);
	/* A creator that ran before recording may have made children whose
	 * start (and even exit) came before it: its first instance waits
	 * until its joins are known (first_join_decide). */
	if (p && !p->life && !p->joined_once) {
		p->joined_once = true;
		p->first_join = in;
		p->first_join_site = site;
		return;
	}
	if (p)
		p->joined_once = true;
	sb_sect_finalize(b, in, site);
}

/* Every pthread_join returns one thread that has exited: a creator that
 * joined more threads than its first instance gathered joined children we
 * never saw (started before recording; with -p some start and end within
 * the attach).  That instance is partial, skipped and counted.  Decided
 * when it starts its next child, exits, or recording ends. */
static void first_join_decide(struct sb_builder *b, struct sb_sect_thread *p)
{
	struct sb_sect_inst *in = p->first_join;

	if (!in)
		return;
	p->first_join = NULL;
	if (p->joins > in->n)
		in->partial = true;
	sb_sect_finalize(b, in, p->first_join_site);
}

/* A thread's exit is its arrival at its creator's join.  The instance
 * closes once no child is left and the creator is in pthread_join: children
 * often exit before their creator reaches the join (it worked itself, or
 * was descheduled while creating them), and then neither the join's site
 * nor the full set of children is known at the last exit. */
static void on_thread_exit(struct sb_builder *b, struct sb_sect_thread *t,
			   const struct sb_event *ev)
{
	struct sb_sect_thread *parent;
	struct sb_sect_inst *in;
	void **slot;

	t->exited = true;
	first_join_decide(b, t);
	if (!t->parent) {
		/* Its creator is unknown: it started before recording (the
		 * process's initial thread joins nothing). */
		if (!t->life && !t->initial)
			b->st.exits_unjoined++;
		return;
	}
	parent = thread_get(b, t->parent);
	slot = sb_idmap_slot(b->syncobjs, SB_PRIM_JOIN, t->parent, true);
	if (!parent || !slot) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	if (!*slot)
		*slot = inst_new(b, SB_PRIM_JOIN, t->parent);
	in = *slot;
	if (!in)
		return;
	/* No per-arrival site: the section is where the creator joins. */
	inst_arrive(b, in, t, 0, ev->ts, ev->oncpu);
	if (parent->live_children)
		parent->live_children--;
	if (!parent->live_children && in_join(parent))
		join_close(b, parent->tid, parent->join_site);
}

static void on_sync(struct sb_builder *b, struct sb_sect_thread *t, const struct sb_event *ev,
		    bool enter)
{
	if (enter) {
		if (t->nsync < SB_SYNC_STACK) {
			t->sync[t->nsync].prim = ev->prim;
			t->sync[t->nsync].site = ev->site;
			t->sync[t->nsync].obj = ev->obj;
			t->sync[t->nsync].ts = ev->ts;
		}
		t->nsync++;
		if (ev->prim == SB_PRIM_JOIN) {
			t->join_site = ev->site;
			if (!t->live_children)   /* its children exited before */
				join_close(b, t->tid, ev->site);
		} else
			barrier_arrive(b, t, ev);
		return;
	}
	if (t->nsync == 0) {
		b->st.unmatched++;
		return;
	}
	t->nsync--;
	if (t->nsync < SB_SYNC_STACK && t->sync[t->nsync].prim == SB_PRIM_JOIN) {
		t->joins++;
		sb_sect_wait_add(b, SB_PRIM_JOIN, t->sync[t->nsync].site, 0,
			 ev->ts - t->sync[t->nsync].ts);
		seg_restart(t, ev->ts, ev->oncpu);
	} else {
		barrier_depart(b, t, ev);
	}
}

static int counts_add(struct sb_counts **c, uint64_t key, uint64_t n)
{
	if (!*c && !(*c = sb_counts_alloc()))
		return SB_ERR_NOMEM;
	return sb_counts_add(*c, key, n) ? SB_ERR_NOMEM : 0;
}

/* Counts of the segment the thread's latest arrival closed, while its
 * instance is still open (the team waits for everyone at a region's end,
 * so a task's counts flushed as it returns find it open). */
static void count_last(struct sb_builder *b, struct sb_sect_thread *t, const struct sb_event *ev)
{
	struct sb_sect_arrival *best = NULL;

	for (struct sb_sect_inst *in = b->live; in; in = in->next)
		for (uint32_t i = 0; i < in->n; i++)
			if (in->a[i].tid == t->tid && in->a[i].life == t->life &&
			    in->a[i].arrive <= ev->ts &&
			    (!best || in->a[i].arrive > best->arrive))
				best = &in->a[i];
	if (!best) {
		/* (block counts: a section total, e.g. CHiP's, is no block) */
		if (ev->obj < SB_KEY_TOTAL || ev->obj >= SB_KEY_TOTAL + SB_KEY_TOTALS)
			b->st.counts_unplaced += ev->dur;
		return;
	}
	if (counts_add(&best->counts, ev->obj, ev->dur))
		b->err = SB_ERR_NOMEM;
}

/*
 * Counts of work done (SB_COUNT_DONE) while the thread is at a closing
 * sync, arrived and not departed, are the work of the segment that sync
 * closed: a barrier function the recorder probes (--barrier, or found by
 * its name) is entered before the exact runtime's flush, which comes at
 * the pthread_cond_wait or pthread_cond_broadcast inside it.  Dropped
 * with the waiting (seg_restart), as samples there are, they would be
 * lost.
 */
static void count_add(struct sb_builder *b, struct sb_sect_thread *t, const struct sb_event *ev)
{
	struct sb_sect_inst *in = ev->prim & SB_COUNT_DONE ? t->pending : NULL;
	struct sb_counts **c = &t->seg_counts;

	for (uint32_t i = 0; in && i < in->n; i++)
		if (in->a[i].tid == t->tid && in->a[i].life == t->life && !in->a[i].departed) {
			c = &in->a[i].counts;
			break;
		}
	if (counts_add(c, ev->obj, ev->dur))
		b->err = SB_ERR_NOMEM;
}

static void log_event(struct sb_builder *b, const struct sb_event *ev)
{
	size_t cap = b->caplog;

	if (b->nlog >= b->maxlog) {
		/* Detection needs the whole history: give up on it, say so. */
		b->st.cond_log_full++;
		free(b->log);
		b->log = NULL;
		b->nlog = b->caplog = 0;
		b->logging = false;
		b->log_over = true;
		return;
	}
	if (!sb_sect_grow((void **)&b->log, sizeof(*b->log), b->nlog + 1, &cap)) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	b->caplog = cap;
	b->log[b->nlog++] = *ev;
}

void sb_sect_process(struct sb_builder *b, const struct sb_event *ev)
{
	struct sb_sect_thread *t;

	if (b->logging)
		log_event(b, ev);
	else if (b->log_over)   /* every event past the limit (sections.h) */
		b->st.cond_log_full++;
	t = thread_get(b, ev->tid);
	if (!t)
		return;
	b->st.events++;
	switch (ev->kind) {
	case SB_EV_THREAD_START: {
		struct sb_sect_thread *parent;

		/* A new thread on the tid of one that ended, or whose exit
		 * was lost (counted in drops_thread): the recorder says which,
		 * for a thread seen at attach has no life to tell by. */
		if (t->exited || (ev->prim & SB_START_TID_REUSED))
			thread_renew(b, t);
		t->life = ++b->lives;
		parent = ev->obj ? thread_get(b, (uint32_t)ev->obj) : NULL;
		t->parent = (uint32_t)ev->obj;
		if (parent) {
			first_join_decide(b, parent);   /* its next round begins */
			parent->live_children++;
		}
		seg_restart(t, ev->ts, ev->oncpu);
		break;
	}
	case SB_EV_THREAD_SEEN:
		t->initial = ev->obj == 1;
		break;
	case SB_EV_THREAD_EXIT:
		on_thread_exit(b, t, ev);
		break;
	case SB_EV_SYNC_ENTER:
	case SB_EV_SYNC_EXIT:
		on_sync(b, t, ev, ev->kind == SB_EV_SYNC_ENTER);
		break;
	case SB_EV_REGION_ENTER:
	case SB_EV_REGION_EXIT:
		on_region(b, t, ev, ev->kind == SB_EV_REGION_ENTER);
		break;
	case SB_EV_TASK_ENTER:
	case SB_EV_TASK_EXIT:
		on_task(b, t, ev, ev->kind == SB_EV_TASK_ENTER);
		break;
	case SB_EV_WAIT:
		sb_sect_wait_add(b, ev->prim, ev->site, ev->obj, ev->dur);
		break;
	case SB_EV_COUNT:
		count_add(b, t, ev);
		break;
	case SB_EV_COUNT_LAST:
		count_last(b, t, ev);
		break;
	case SB_EV_COND_WAIT:
	case SB_EV_COND_WOKEN:
	case SB_EV_COND_BROADCAST:
	case SB_EV_COND_SIGNAL:
		break;   /* for condbar.c, from the log */
	default:
		b->st.unmatched++;
	}
}

void sb_sect_finish_pass(struct sb_builder *b)
{
	size_t it = 0;
	uint64_t tid;
	void *v;

	/* Children all gone, never joined (the creator exited without): the
	 * instance is complete, its site unknown. */
	while (sb_idmap_next(b->threads, &it, &tid, NULL, &v))
		if (!((struct sb_sect_thread *)v)->live_children)
			join_close(b, (uint32_t)tid, 0);
	it = 0;
	while (sb_idmap_next(b->threads, &it, NULL, NULL, &v))
		first_join_decide(b, v);
	/* Still open: threads stopped mid-barrier or mid-region at detach. */
	for (struct sb_sect_inst *in = b->live; in; in = in->next)
		b->st.unfinished_instances += in->n > 0;
}

int sb_builder_finish(struct sb_builder *b)
{
	sb_builder_flush(b, UINT64_MAX);
	sb_sect_finish_pass(b);
	b->logging = false;
	if (!b->err && b->log)
		return sb_condbar_rebuild(b);
	return b->err;
}
