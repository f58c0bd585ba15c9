// SPDX-License-Identifier: MIT
/*
 * Inline mutex + condition variable barriers: SPLASH's BARRIER macro
 * (Splash-3's one pthread_cond_wait, PARSEC's `while (Cycle == cycle)`
 * loop), written into the program's own functions.  There is no barrier
 * function to probe; what shows is the condvar's history:
 *
 *   lock; if (++count == N) { count = 0; broadcast; } else wait; unlock
 *
 * An episode is the broadcast and the waiters it releases: those in
 * pthread_cond_wait on that condvar and not yet released by an earlier
 * broadcast (the mutex orders their entry before the broadcast).  A
 * condvar is a barrier when, in every episode, the broadcaster is not
 * itself waiting, the same set of threads takes part (waiters plus
 * broadcaster), the broadcast and the waits are made by the same function
 * (one macro expansion), there are at least two episodes and it is never
 * signalled where signals are seen (`record` does not probe
 * pthread_cond_signal, a per-item fast path in producer/consumer code).
 * A producer/consumer condvar fails this: the number of waiters varies,
 * or the waker is a thread that never waits there in code of its own, or
 * it is signalled.  A site the user named (--barrier
 * FILE:LINE) makes its condvar a barrier without the test.
 *
 * In the rebuild the waits of a barrier condvar become barrier arrivals
 * (at pthread_cond_wait's entry, departing at its return once released;
 * a return before the release is spurious and PARSEC's loop waits again:
 * still the same arrival), the broadcaster arrives and departs at its
 * broadcast (it is the last to arrive: nobody waits for it), with the
 * waiters' site, and the futex waits inside those pthread_cond_wait calls
 * (the condvar's and the mutex's retaking) are the barrier wait itself.
 */
#include "sections_priv.h"

#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"

struct cb_waiter {
	uint32_t tid;
	bool released;
	uint64_t func;
};

struct cb_obj {
	bool bad, forced;
	uint32_t episodes;
	struct cb_waiter *w;         /* in pthread_cond_wait on it now */
	size_t nw, capw;
	uint32_t *set;               /* the last episode's threads, sorted */
	size_t nset, capset;
	uint64_t ep_site;            /* rebuild: the current episode's wait site */
};

struct cb_thread {
	uint64_t obj;                /* rebuild: the barrier condvar it waits on */
	bool released;
};

static void obj_free(void *p)
{
	struct cb_obj *o = p;

	if (o) {
		free(o->w);
		free(o->set);
	}
	free(o);
}

static struct cb_obj *obj_get(struct sb_idmap *m, uint64_t obj)
{
	void **slot = sb_idmap_slot(m, obj, 0, true);

	if (slot && !*slot)
		*slot = calloc(1, sizeof(struct cb_obj));
	return slot ? *slot : NULL;
}

static struct cb_waiter *waiter_find(struct cb_obj *o, uint32_t tid)
{
	for (size_t i = 0; i < o->nw; i++)
		if (o->w[i].tid == tid)
			return &o->w[i];
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether sorted a[0..na) is within sorted b[0..nb). */
static bool subset(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
	size_t j = 0;

	for (size_t i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		if (j == nb || b[j] != a[i])
			return false;
	}
	return true;
}

/* One broadcast: the episode of the waiters not yet released.  -1 on ENOMEM. */
static int on_broadcast(struct cb_obj *o, const struct sb_event *ev)
{
	uint32_t *set;
	size_t n = 0, cap = 0;
	bool same;

	for (size_t i = 0; i < o->nw; i++)
		n += !o->w[i].released;
	if (!n)
		return 0;   /* nobody to release: no episode */
	set = NULL;
	if (!sb_sect_grow((void **)&set, sizeof(*set), n + 1, &cap))
		return -1;
	n = 0;
	for (size_t i = 0; i < o->nw; i++) {
		struct cb_waiter *w = &o->w[i];

		if (w->released)
			continue;
		w->released = true;
		if (w->tid == ev->tid)
			o->bad = true;       /* a waiter waking itself: not a barrier */
		if (w->func && ev->dur && w->func != ev->dur)
			o->bad = true;       /* waker and waiter in different code */
		set[n++] = w->tid;
	}
	set[n++] = ev->tid;
	qsort(set, n, sizeof(*set), cmp_u32);
	/* Attached mid-run (-p), the first episode may miss threads already
	 * waiting: it may be a part of the second, never differ otherwise. */
	same = o->episodes == 0 || (n == o->nset && !memcmp(set, o->set, n * sizeof(*set))) ||
	       (o->episodes == 1 && subset(o->set, o->nset, set, n));
	if (!same)
		o->bad = true;
	free(o->set);
	o->set = set;
	o->nset = n;
	o->capset = cap;
	o->episodes++;
	return 0;
}

/* The condvar history, replayed: which condvars are barriers. */
static int detect(struct sb_builder *b, struct sb_idmap *objs)
{
	for (size_t i = 0; i < b->nlog; i++) {
		const struct sb_event *ev = &b->log[i];
		struct cb_waiter *w;
		struct cb_obj *o;

		if (ev->kind < SB_EV_COND_WAIT || ev->kind > SB_EV_COND_SIGNAL)
			continue;
		if (!(o = obj_get(objs, ev->obj)))
			return SB_ERR_NOMEM;
		switch (ev->kind) {
		case SB_EV_COND_WAIT:
			o->forced |= ev->prim == SB_PRIM_USER_BARRIER;
			w = waiter_find(o, ev->tid);
			if (w && !w->released)
				break;   /* again after a spurious return: same wait */
			if (!w) {
				size_t cap = o->capw;

				if (!sb_sect_grow((void **)&o->w, sizeof(*o->w), o->nw + 1, &cap))
					return SB_ERR_NOMEM;
				o->capw = cap;
				w = &o->w[o->nw++];
			}
			w->tid = ev->tid;
			w->released = false;   /* a lost return: a new wait anyway */
			w->func = ev->dur;
			break;
		case SB_EV_COND_WOKEN:
			w = waiter_find(o, ev->tid);
			if (w && w->released)
				*w = o->w[--o->nw];
			break;
		case SB_EV_COND_BROADCAST:
			if (on_broadcast(o, ev))
				return SB_ERR_NOMEM;
			break;
		case SB_EV_COND_SIGNAL:
			o->bad = true;
			break;
		}
	}
	return 0;
}

static bool is_barrier(const struct sb_builder *b, const struct cb_obj *o)
{
	return o && (o->forced || (!b->named_only && !o->bad && o->episodes >= 2));
}

static struct cb_thread *thread_of(struct sb_idmap *m, uint32_t tid)
{
	void **slot = sb_idmap_slot(m, tid, 0, true);

	if (slot && !*slot)
		*slot = calloc(1, sizeof(struct cb_thread));
	return slot ? *slot : NULL;
}

static void emit(struct sb_builder *nb, const struct sb_event *ev, uint16_t kind,
		 uint64_t site)
{
	struct sb_event e = *ev;

	e.kind = kind;
	e.prim = SB_PRIM_USER_BARRIER;
	e.site = kind == SB_EV_SYNC_ENTER ? site : 0;
	e.dur = 0;
	sb_sect_process(nb, &e);
}

/* The log again, into nb, with the barrier condvars' waits as barriers. */
static int rebuild(struct sb_builder *b, struct sb_builder *nb, struct sb_idmap *objs)
{
	struct sb_idmap *threads = sb_idmap_alloc();
	int err = 0;

	if (!threads)
		return SB_ERR_NOMEM;
	for (size_t i = 0; i < b->nlog && !err && !nb->err; i++) {
		const struct sb_event *ev = &b->log[i];
		struct cb_thread *t;
		struct cb_obj *o;
		size_t it = 0;
		void **slot;
		void *v;

		if (ev->kind < SB_EV_COND_WAIT || ev->kind > SB_EV_COND_SIGNAL) {
			if (ev->kind == SB_EV_WAIT && (t = thread_of(threads, ev->tid)) && t->obj)
				continue;   /* inside a barrier's pthread_cond_wait */
			sb_sect_process(nb, ev);
			continue;
		}
		slot = sb_idmap_slot(objs, ev->obj, 0, false);
		o = slot ? *slot : NULL;
		if (!is_barrier(b, o) || ev->kind == SB_EV_COND_SIGNAL)
			continue;
		if (!(t = thread_of(threads, ev->tid))) {
			err = SB_ERR_NOMEM;
			break;
		}
		switch (ev->kind) {
		case SB_EV_COND_WAIT:
			if (t->obj == ev->obj && !t->released)
				break;   /* PARSEC's loop after a spurious return */
			t->obj = ev->obj;
			t->released = false;
			if (!o->ep_site)
				o->ep_site = ev->site;
			emit(nb, ev, SB_EV_SYNC_ENTER, ev->site);
			break;
		case SB_EV_COND_WOKEN:
			if (t->obj != ev->obj || !t->released)
				break;   /* spurious: still waiting for the release */
			t->obj = 0;
			emit(nb, ev, SB_EV_SYNC_EXIT, 0);
			break;
		case SB_EV_COND_BROADCAST: {
			uint64_t released = 0;

			while (sb_idmap_next(threads, &it, NULL, NULL, &v)) {
				struct cb_thread *w = v;

				if (w->obj == ev->obj && !w->released) {
					w->released = true;
					released++;
				}
			}
			if (!released || t->obj == ev->obj)
				break;
			/* The last to arrive: it arrives and leaves at once. */
			emit(nb, ev, SB_EV_SYNC_ENTER, o->ep_site ? o->ep_site : ev->site);
			emit(nb, ev, SB_EV_SYNC_EXIT, 0);
			o->ep_site = 0;
			nb->st.cond_episodes++;
			break;
		}
		}
	}
	sb_idmap_free_with(threads, free);
	return err ? err : nb->err;
}

int sb_condbar_rebuild(struct sb_builder *b)
{
	struct sb_idmap *objs = sb_idmap_alloc();
	struct sb_builder *nb = NULL;
	uint64_t found = 0, full = b->st.cond_log_full;
	size_t it = 0;
	void *v;
	int err;

	if (!objs)
		return SB_ERR_NOMEM;
	err = detect(b, objs);
	while (!err && sb_idmap_next(objs, &it, NULL, NULL, &v))
		found += is_barrier(b, v);
	if (err || !found)
		goto out;
	if (!(nb = sb_builder_alloc(b->max_instances))) {
		err = SB_ERR_NOMEM;
		goto out;
	}
	nb->single_joins = b->single_joins;
	err = rebuild(b, nb, objs);
	if (err)
		goto out;
	sb_sect_finish_pass(nb);
	if ((err = nb->err))
		goto out;
	/* nb's result becomes b's; b's old state goes with nb. */
	{
		struct sb_builder tmp = *b;

		*b = *nb;
		*nb = tmp;
		/* The queue saw the recording: its late count stays. */
		nb->queue = b->queue;
		b->queue = tmp.queue;
	}
	b->st.cond_barriers = found;
	b->st.cond_log_full = full;
out:
	sb_builder_free(nb);
	sb_idmap_free_with(objs, obj_free);
	return err;
}
