// SPDX-License-Identifier: MIT
/* The section builder: see sections.h for the model. */
#include "sections.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "evqueue.h"

#define SYNC_STACK 8

struct arrival {
	uint32_t tid;
	bool departed;
	uint64_t site, seg_start, arrive, depart, busy;
};

/* One dynamic instance in the making. */
struct inst {
	struct inst *prev, *next;   /* the builder's live list owns instances */
	uint16_t prim;
	uint64_t obj;
	bool partial;          /* some thread's segment began before recording */
	uint32_t n, cap, ndeparted;
	struct arrival *a;
};

struct region {
	uint64_t id, fn, site;
	uint32_t master;
	struct inst *end;
	struct region *next;
};

struct bthread {
	uint32_t tid, parent;
	bool seg_valid;
	uint64_t seg_ts, seg_oncpu;
	struct inst *pending;        /* instance it arrived in, not departed */
	uint64_t region;             /* id of the region whose task it runs */
	uint64_t join_site;          /* last pthread_join call site */
	uint32_t live_children;
	int nsync;
	struct { uint16_t prim; uint64_t site, obj, ts; } sync[SYNC_STACK];
};

struct bsection {
	size_t index;          /* creation order = index among emitted sections */
	uint16_t kind;
	uint64_t site;
	uint64_t ninst, stored, lost, capacity;
	uint32_t npt, cappt;
	struct sb_thread_time *pt;
};

struct stored {
	struct bsection *sec;
	uint64_t seq, start, end;
	uint32_t n;
	struct sb_thread_time *pt;
};

struct bwait {
	uint16_t prim;
	uint64_t site, obj, count, wait;
};

struct sb_builder {
	uint64_t max_instances;
	struct sb_evqueue *queue;
	struct sb_idmap *threads;    /* tid -> bthread */
	struct sb_idmap *syncobjs;   /* (prim, obj) -> current inst */
	struct sb_idmap *sections;   /* (kind, site) -> bsection */
	struct sb_idmap *waits;      /* (prim|site, obj) -> bwait */
	struct region *regions;      /* active, most recent first */
	struct inst *live;           /* every instance not yet finalized */
	uint64_t next_region;
	struct stored *stored;
	size_t nstored, capstored;
	struct bsection **secorder;  /* creation order, for stable output */
	size_t nsec, capsec;
	struct sb_builder_stats st;
	int err;
};

static uint16_t kind_of_prim(uint16_t prim)
{
	switch (prim) {
	case SB_PRIM_BARRIER: return SB_SECT_BARRIER;
	case SB_PRIM_USER_BARRIER: return SB_SECT_USER_BARRIER;
	case SB_PRIM_OMP_BARRIER: return SB_SECT_OMP_BARRIER;
	case SB_PRIM_OMP_REGION_END: return SB_SECT_OMP_REGION;
	case SB_PRIM_JOIN: return SB_SECT_JOIN;
	default: return 0;
	}
}

static bool grow(void **arr, size_t elem, size_t need, size_t *cap)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static struct bthread *thread_get(struct sb_builder *b, uint32_t tid)
{
	void **slot = sb_idmap_slot(b->threads, tid, 0, true);

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	if (!*slot) {
		struct bthread *t = calloc(1, sizeof(*t));

		if (!t) {
			b->err = SB_ERR_NOMEM;
			return NULL;
		}
		t->tid = tid;
		*slot = t;
	}
	return *slot;
}

static void wait_add(struct sb_builder *b, uint16_t prim, uint64_t site,
		     uint64_t obj, uint64_t dur)
{
	void **slot = sb_idmap_slot(b->waits, (site << 5) | prim, obj, true);
	struct bwait *w;

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	if (!*slot) {
		*slot = calloc(1, sizeof(struct bwait));
		if (!*slot) {
			b->err = SB_ERR_NOMEM;
			return;
		}
	}
	w = *slot;
	w->prim = prim;
	w->site = site;
	w->obj = obj;
	w->count++;
	w->wait += dur;
}

static struct bsection *section_get(struct sb_builder *b, uint16_t kind, uint64_t site)
{
	void **slot = sb_idmap_slot(b->sections, (site << 5) | kind, 0, true);
	struct bsection *s;

	if (!slot || (!*slot && !grow((void **)&b->secorder, sizeof(*b->secorder),
				      b->nsec + 1, &b->capsec))) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	if (*slot)
		return *slot;
	s = calloc(1, sizeof(*s));
	if (!s) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	s->index = b->nsec;
	s->kind = kind;
	s->site = site;
	*slot = s;
	b->secorder[b->nsec++] = s;
	return s;
}

/* The site most arrivals used: threads may reach one barrier from several. */
static uint64_t majority_site(const struct inst *in)
{
	uint64_t best = 0;
	uint32_t best_n = 0;

	for (uint32_t i = 0; i < in->n; i++) {
		uint32_t c = 0;

		for (uint32_t j = 0; j < in->n; j++)
			c += in->a[j].site == in->a[i].site;
		if (c > best_n || (c == best_n && in->a[i].site < best)) {
			best = in->a[i].site;
			best_n = c;
		}
	}
	return best;
}

static int cmp_tid(const void *x, const void *y)
{
	const struct sb_thread_time *a = x, *b = y;

	return (a->tid > b->tid) - (a->tid < b->tid);
}

static void section_account(struct sb_builder *b, struct bsection *s,
			    const struct sb_thread_time *pt, uint32_t n,
			    uint64_t start, uint64_t end)
{
	uint64_t maxbusy = 0;

	for (uint32_t i = 0; i < n; i++)
		if (pt[i].busy_ns > maxbusy)
			maxbusy = pt[i].busy_ns;
	for (uint32_t i = 0; i < n; i++) {
		struct sb_thread_time *agg = NULL;

		s->lost += maxbusy - pt[i].busy_ns;
		for (uint32_t j = 0; j < s->npt; j++)
			if (s->pt[j].tid == pt[i].tid)
				agg = &s->pt[j];
		if (!agg) {
			size_t cap = s->cappt;

			if (!grow((void **)&s->pt, sizeof(*s->pt), s->npt + 1, &cap)) {
				b->err = SB_ERR_NOMEM;
				return;
			}
			s->cappt = cap;
			agg = &s->pt[s->npt++];
			memset(agg, 0, sizeof(*agg));
			agg->tid = pt[i].tid;
		}
		agg->busy_ns += pt[i].busy_ns;
		agg->wait_ns += pt[i].wait_ns;
		agg->wall_ns += pt[i].wall_ns;
	}
	s->capacity += (uint64_t)n * maxbusy;
	if (s->stored < b->max_instances) {
		struct stored *st;

		if (!grow((void **)&b->stored, sizeof(*b->stored), b->nstored + 1,
			  &b->capstored)) {
			b->err = SB_ERR_NOMEM;
			return;
		}
		st = &b->stored[b->nstored];
		st->pt = malloc(n * sizeof(*pt));
		if (!st->pt) {
			b->err = SB_ERR_NOMEM;
			return;
		}
		memcpy(st->pt, pt, n * sizeof(*pt));
		st->sec = s;
		st->seq = s->ninst;
		st->start = start;
		st->end = end;
		st->n = n;
		b->nstored++;
		s->stored++;
		b->st.stored_instances++;
	}
	s->ninst++;
}

static void inst_unlink(struct sb_builder *b, struct inst *in)
{
	if (in->prev)
		in->prev->next = in->next;
	else
		b->live = in->next;
	if (in->next)
		in->next->prev = in->prev;
}

static void inst_finalize(struct sb_builder *b, struct inst *in, uint64_t site_hint)
{
	struct sb_thread_time *pt;
	uint64_t start = UINT64_MAX, end = 0, site;
	struct bsection *s;

	if (in->partial || in->n == 0 || (in->prim == SB_PRIM_JOIN && in->n < 2)) {
		if (in->partial)
			b->st.partial_instances++;
		goto out;
	}
	pt = calloc(in->n, sizeof(*pt));
	if (!pt) {
		b->err = SB_ERR_NOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < in->n; i++) {
		const struct arrival *a = &in->a[i];

		pt[i].tid = a->tid;
		pt[i].busy_ns = a->busy;
		pt[i].wait_ns = a->depart - a->arrive;
		pt[i].wall_ns = a->depart - a->seg_start;
		if (a->seg_start < start)
			start = a->seg_start;
		if (a->depart > end)
			end = a->depart;
	}
	qsort(pt, in->n, sizeof(*pt), cmp_tid);
	site = majority_site(in);
	if (!site)
		site = site_hint;
	s = section_get(b, kind_of_prim(in->prim), site);
	if (s)
		section_account(b, s, pt, in->n, start, end);
	b->st.instances++;
	free(pt);
out:
	inst_unlink(b, in);
	free(in->a);
	free(in);
}

static struct inst *inst_new(struct sb_builder *b, uint16_t prim, uint64_t obj)
{
	struct inst *in = calloc(1, sizeof(*in));

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

static void inst_arrive(struct sb_builder *b, struct inst *in, struct bthread *t,
			uint64_t site, uint64_t ts, uint64_t oncpu)
{
	size_t cap = in->cap;
	struct arrival *a;

	if (!grow((void **)&in->a, sizeof(*in->a), in->n + 1, &cap)) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	in->cap = cap;
	a = &in->a[in->n++];
	memset(a, 0, sizeof(*a));
	a->tid = t->tid;
	a->site = site;
	a->arrive = ts;
	a->seg_start = t->seg_valid ? t->seg_ts : ts;
	a->busy = t->seg_valid && oncpu > t->seg_oncpu ? oncpu - t->seg_oncpu : 0;
	if (!t->seg_valid)
		in->partial = true;
}

/* Marks t departed from in; returns true when everyone has left. */
static bool inst_depart(struct sb_builder *b, struct inst *in, uint32_t tid, uint64_t ts)
{
	for (uint32_t i = 0; i < in->n; i++) {
		struct arrival *a = &in->a[i];

		if (a->tid != tid || a->departed)
			continue;
		a->departed = true;
		a->depart = ts > a->arrive ? ts : a->arrive;
		in->ndeparted++;
		/* After its exit a thread does not wait: join idle is not a wait. */
		if (in->prim != SB_PRIM_JOIN)
			wait_add(b, in->prim, a->site, in->obj, a->depart - a->arrive);
		break;
	}
	return in->ndeparted == in->n;
}

static void seg_restart(struct bthread *t, uint64_t ts, uint64_t oncpu)
{
	t->seg_valid = true;
	t->seg_ts = ts;
	t->seg_oncpu = oncpu;
}

static uint64_t barrier_key(struct sb_builder *b, const struct bthread *t,
			    const struct sb_event *ev)
{
	(void)b;
	/* An OpenMP barrier has no argument: the team (region) is the object. */
	return ev->prim == SB_PRIM_OMP_BARRIER ? t->region : ev->obj;
}

static void barrier_arrive(struct sb_builder *b, struct bthread *t,
			   const struct sb_event *ev)
{
	uint64_t obj = barrier_key(b, t, ev);
	void **slot = sb_idmap_slot(b->syncobjs, ev->prim, obj, true);
	struct inst *cur;
	bool again = false;

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	cur = *slot;
	if (cur)
		for (uint32_t i = 0; i < cur->n; i++)
			again |= cur->a[i].tid == t->tid;
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

static void barrier_depart(struct sb_builder *b, struct bthread *t,
			   const struct sb_event *ev)
{
	struct inst *in = t->pending;
	void **slot;

	if (!in) {
		b->st.unmatched++;
		return;
	}
	t->pending = NULL;
	seg_restart(t, ev->ts, ev->oncpu);
	if (!inst_depart(b, in, t->tid, ev->ts))
		return;
	slot = sb_idmap_slot(b->syncobjs, in->prim, in->obj, false);
	if (slot && *slot == in)
		*slot = NULL;
	inst_finalize(b, in, 0);
}

static struct region *region_find(struct sb_builder *b, uint64_t id)
{
	for (struct region *r = b->regions; r; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

static void on_task(struct sb_builder *b, struct bthread *t, const struct sb_event *ev,
		    bool enter)
{
	struct region *r;

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

static void on_region(struct sb_builder *b, struct bthread *t, const struct sb_event *ev,
		      bool enter)
{
	struct region *r, **pp;

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
			inst_depart(b, r->end, r->end->a[i].tid, ev->ts);
	inst_finalize(b, r->end, r->site);
	free(r);
	seg_restart(t, ev->ts, ev->oncpu);
}

/* A thread's exit is its arrival at its creator's join. */
static void on_thread_exit(struct sb_builder *b, struct bthread *t,
			   const struct sb_event *ev)
{
	struct bthread *parent;
	struct inst *in;
	void **slot;

	if (!t->parent)
		return;
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
	inst_arrive(b, in, t, parent->join_site, ev->ts, ev->oncpu);
	if (parent->live_children)
		parent->live_children--;
	if (parent->live_children)
		return;
	/* The last child is gone: everyone "departs" when it exits. */
	for (uint32_t i = 0; i < in->n; i++)
		inst_depart(b, in, in->a[i].tid, ev->ts);
	*slot = NULL;
	inst_finalize(b, in, parent->join_site);
}

static void on_sync(struct sb_builder *b, struct bthread *t, const struct sb_event *ev,
		    bool enter)
{
	if (enter) {
		if (t->nsync < SYNC_STACK) {
			t->sync[t->nsync].prim = ev->prim;
			t->sync[t->nsync].site = ev->site;
			t->sync[t->nsync].obj = ev->obj;
			t->sync[t->nsync].ts = ev->ts;
		}
		t->nsync++;
		if (ev->prim == SB_PRIM_JOIN)
			t->join_site = ev->site;
		else
			barrier_arrive(b, t, ev);
		return;
	}
	if (t->nsync == 0) {
		b->st.unmatched++;
		return;
	}
	t->nsync--;
	if (t->nsync < SYNC_STACK && t->sync[t->nsync].prim == SB_PRIM_JOIN) {
		wait_add(b, SB_PRIM_JOIN, t->sync[t->nsync].site, 0,
			 ev->ts - t->sync[t->nsync].ts);
		seg_restart(t, ev->ts, ev->oncpu);
	} else {
		barrier_depart(b, t, ev);
	}
}

static void process(struct sb_builder *b, const struct sb_event *ev)
{
	struct bthread *t = thread_get(b, ev->tid);

	if (!t)
		return;
	b->st.events++;
	switch (ev->kind) {
	case SB_EV_THREAD_START: {
		struct bthread *parent = ev->obj ? thread_get(b, (uint32_t)ev->obj) : NULL;

		t->parent = (uint32_t)ev->obj;
		if (parent)
			parent->live_children++;
		seg_restart(t, ev->ts, ev->oncpu);
		break;
	}
	case SB_EV_THREAD_SEEN:
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
		wait_add(b, ev->prim, ev->site, ev->obj, ev->dur);
		break;
	default:
		b->st.unmatched++;
	}
}

struct sb_builder *sb_builder_alloc(uint64_t max_instances)
{
	struct sb_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->max_instances = max_instances;
	b->queue = sb_evqueue_alloc();
	b->threads = sb_idmap_alloc();
	b->syncobjs = sb_idmap_alloc();
	b->sections = sb_idmap_alloc();
	b->waits = sb_idmap_alloc();
	if (!b->queue || !b->threads || !b->syncobjs || !b->sections || !b->waits) {
		sb_builder_free(b);
		return NULL;
	}
	return b;
}

static void free_map_values(struct sb_idmap *m, void (*fn)(void *))
{
	size_t it = 0;
	void *v;

	if (!m)
		return;
	while (sb_idmap_next(m, &it, NULL, NULL, &v))
		fn(v);
	sb_idmap_free(m);
}

static void section_free(void *p)
{
	struct bsection *s = p;

	if (s)
		free(s->pt);
	free(s);
}

void sb_builder_free(struct sb_builder *b)
{
	if (!b)
		return;
	sb_evqueue_free(b->queue);
	while (b->live) {
		struct inst *in = b->live;

		b->live = in->next;
		free(in->a);
		free(in);
	}
	sb_idmap_free(b->syncobjs);
	free_map_values(b->threads, free);
	free_map_values(b->sections, section_free);
	free_map_values(b->waits, free);
	while (b->regions) {
		struct region *r = b->regions;

		b->regions = r->next;
		free(r);
	}
	for (size_t i = 0; i < b->nstored; i++)
		free(b->stored[i].pt);
	free(b->stored);
	free(b->secorder);
	free(b);
}

int sb_builder_add(struct sb_builder *b, const struct sb_event *ev)
{
	if (sb_evqueue_push(b->queue, ev))
		return SB_ERR_NOMEM;
	return 0;
}

int sb_builder_flush(struct sb_builder *b, uint64_t watermark)
{
	struct sb_event ev;

	while (sb_evqueue_pop_until(b->queue, watermark, &ev))
		process(b, &ev);
	return b->err;
}

int sb_builder_finish(struct sb_builder *b)
{
	sb_builder_flush(b, UINT64_MAX);
	/* Still open: threads stopped mid-barrier or mid-region at detach. */
	for (struct inst *in = b->live; in; in = in->next)
		b->st.unfinished_instances += in->n > 0;
	return b->err;
}

void sb_builder_get_stats(const struct sb_builder *b, struct sb_builder_stats *st)
{
	*st = b->st;
	st->sections = b->nsec;
	st->late_events = sb_evqueue_late(b->queue);
}

int sb_builder_emit(struct sb_builder *b, struct sb_profile *p,
		    sb_loc_fn loc_of, void *ctx)
{
	size_t base = p->nsections;
	size_t it = 0;
	void *v;

	for (size_t i = 0; i < b->nsec; i++) {
		struct bsection *s = b->secorder[i];
		struct sb_section out = {
			.kind = s->kind, .ninstances = s->ninst, .nthreads = s->npt,
			.per_thread = s->pt, .lost_ns = s->lost, .capacity_ns = s->capacity,
		};
		long loc = loc_of(ctx, s->site);

		if (loc < 0)
			return SB_ERR_NOMEM;
		out.loc = (uint32_t)loc;
		qsort(s->pt, s->npt, sizeof(*s->pt), cmp_tid);
		if (sb_profile_add_section(p, &out) < 0)
			return SB_ERR_NOMEM;
	}
	for (size_t i = 0; i < b->nstored; i++) {
		const struct stored *st = &b->stored[i];
		struct sb_instance out = {
			.seq = st->seq, .start_ns = st->start, .end_ns = st->end,
			.nthreads = st->n, .per_thread = st->pt,
		};

		out.section = (uint32_t)(base + st->sec->index);
		if (sb_profile_add_instance(p, &out) < 0)
			return SB_ERR_NOMEM;
	}
	while (sb_idmap_next(b->waits, &it, NULL, NULL, &v)) {
		const struct bwait *w = v;
		struct sb_wait out = {
			.prim = w->prim, .object = w->obj, .count = w->count,
			.wait_ns = w->wait,
		};

		out.loc = w->site ? (int32_t)loc_of(ctx, w->site) : -1;
		if (sb_profile_add_wait(p, &out) < 0)
			return SB_ERR_NOMEM;
	}
	return 0;
}
