// SPDX-License-Identifier: MIT
/* Inline condvar barriers (condbar.c) against constructed condvar
 * histories with known answers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loc_test.h"
#include "profile/profile.h"
#include "sections/sections.h"

#define MS 1000000ull
#define CV 0x7000ull          /* the condvar */
#define WSITE 0x401100ull     /* pthread_cond_wait call in the macro */
#define BSITE 0x4010f0ull     /* pthread_cond_broadcast call in the macro */
#define FN 0x401000ull        /* the function both are in */

struct hist {
	struct sb_event e[512];
	size_t n;
};

static void add(struct hist *h, uint64_t ts, uint32_t tid, uint16_t kind, uint16_t prim,
		uint64_t site, uint64_t obj, uint64_t oncpu, uint64_t dur)
{
	struct sb_event *e = &h->e[h->n++];

	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->tid = tid;
	e->kind = kind;
	e->prim = prim;
	e->site = site;
	e->obj = obj;
	e->oncpu = oncpu;
	e->dur = dur;
}

struct opts {
	int nthreads, episodes;
	bool spurious;        /* thread 1 returns early once per episode, waits again */
	bool signal;          /* the last one signals instead of broadcasting */
	uint64_t waker_fn;    /* the broadcaster's function */
	bool named;           /* the user named the wait site */
	bool attach;          /* thread 0 was waiting before the first episode was seen */
};

/*
 * nthreads threads, thread t busy (t + 1) ms per episode; the last
 * (highest) arrives last and broadcasts, the others wait in
 * pthread_cond_wait; each waiter's futex wait ends just before its return.
 */
static void history(struct hist *h, const struct opts *o)
{
	uint64_t oncpu[8] = { 0 }, t0 = 100 * MS;
	int n = o->nthreads, last = n - 1;

	h->n = 0;
	for (int t = 0; t < n; t++)
		add(h, t0, 10 + t, SB_EV_THREAD_START, 0, 0, 1, 0, 0);
	for (int ep = 0; ep < o->episodes; ep++) {
		uint64_t base = t0 + (uint64_t)ep * 10 * MS, rel = base + (uint64_t)n * MS;

		for (int t = 0; t < last; t++) {
			oncpu[t] += (t + 1) * MS;
			if (o->attach && ep == 0 && t == 0)
				continue;   /* its wait began before the probes */
			add(h, base + (t + 1) * MS, 10 + t, SB_EV_COND_WAIT,
			    o->named ? SB_PRIM_USER_BARRIER : SB_PRIM_COND, WSITE, CV, oncpu[t], FN);
			if (o->spurious && t == 1) {
				add(h, base + (t + 1) * MS + 100, 10 + t, SB_EV_COND_WOKEN, 0, 0, CV,
				    oncpu[t] + 10, 0);
				add(h, base + (t + 1) * MS + 200, 10 + t, SB_EV_COND_WAIT,
				    SB_PRIM_COND, WSITE, CV, oncpu[t] + 20, FN);
			}
		}
		oncpu[last] += n * MS;
		add(h, rel, 10 + last, o->signal ? SB_EV_COND_SIGNAL : SB_EV_COND_BROADCAST,
		    SB_PRIM_COND, BSITE, CV, oncpu[last], o->waker_fn);
		for (int t = 0; t < last; t++) {
			uint64_t out = rel + 1000 + (uint64_t)t * 100;

			if (o->attach && ep == 0 && t == 0)
				continue;
			add(h, out - 10, 10 + t, SB_EV_WAIT, SB_PRIM_COND, WSITE, CV, 0,
			    out - 10 - base - (t + 1) * MS);
			oncpu[t] += 30;
			add(h, out, 10 + t, SB_EV_COND_WOKEN, 0, 0, CV, oncpu[t], 0);
		}
	}
}

static struct sb_builder *build(const struct opts *o, struct sb_profile *p,
				struct sb_builder_stats *st)
{
	static struct hist h;
	struct sb_builder *b = sb_builder_alloc(100);

	history(&h, o);
	CHECK(sb_builder_keep_log(b, 100000, o->named) == 0, "keep_log");
	for (size_t i = 0; i < h.n; i++)
		CHECK(sb_builder_add(b, &h.e[i]) == 0, "add %zu", i);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	sb_builder_get_stats(b, st);
	return b;
}

static const struct sb_section *user_barrier(const struct sb_profile *p)
{
	for (size_t i = 0; i < p->nsections; i++)
		if (p->sections[i].kind == SB_SECT_USER_BARRIER)
			return &p->sections[i];
	return NULL;
}

static uint64_t cond_waits(const struct sb_profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nwaits; i++)
		n += p->waits[i].prim == SB_PRIM_COND ? p->waits[i].count : 0;
	return n;
}

/* Splash-3 style: one section at the wait site, exact busy, no cond waits. */
static void check_barrier(const struct opts *o, const char *what)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_builder_stats st;
	struct sb_builder *b = build(o, p, &st);
	const struct sb_section *s = user_barrier(p);
	int n = o->nthreads;

	CHECK(st.cond_barriers == 1, "%s: barriers %llu", what,
	      (unsigned long long)st.cond_barriers);
	CHECK(st.cond_episodes == (uint64_t)o->episodes, "%s: episodes %llu", what,
	      (unsigned long long)st.cond_episodes);
	CHECK(s != NULL, "%s: a user barrier section", what);
	if (s) {
		CHECK(p->locs[s->loc].addr == WSITE, "%s: at the wait site", what);
		CHECK(s->ninstances == (uint64_t)o->episodes, "%s: instances %llu", what,
		      (unsigned long long)s->ninstances);
		CHECK(s->nthreads == (uint32_t)n, "%s: threads %u", what, s->nthreads);
		for (uint32_t t = 0; t < s->nthreads; t++)
			CHECK_NEAR(s->per_thread[t].busy_ns,
				   (double)o->episodes * (t + 1) * MS, o->episodes * 100.0);
		/* 1 - (n + 1) / (2n) */
		CHECK_NEAR(100.0 * s->lost_ns / s->capacity_ns,
			   100.0 * (1 - (n + 1.0) / (2.0 * n)), 0.1);
	}
	CHECK(cond_waits(p) == 0, "%s: the futex waits are the barrier's", what);
	sb_profile_free(p);
	sb_builder_free(b);
}

static void check_not_barrier(const struct opts *o, const char *what)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_builder_stats st;
	struct sb_builder *b = build(o, p, &st);

	CHECK(st.cond_barriers == 0, "%s: no barrier", what);
	CHECK(user_barrier(p) == NULL, "%s: no section", what);
	CHECK(cond_waits(p) == (uint64_t)(o->nthreads - 1) * o->episodes,
	      "%s: cond waits kept: %llu", what, (unsigned long long)cond_waits(p));
	sb_profile_free(p);
	sb_builder_free(b);
}

int main(void)
{
	struct opts o = { .nthreads = 4, .episodes = 5, .waker_fn = FN };

	check_barrier(&o, "splash 4 threads");
	o.nthreads = 8;
	check_barrier(&o, "splash 8 threads");
	o.nthreads = 4;
	o.spurious = true;
	check_barrier(&o, "parsec loop, spurious return");
	o.spurious = false;
	o.signal = true;
	check_not_barrier(&o, "signalled");
	o.signal = false;
	o.waker_fn = FN + 0x1000;
	check_not_barrier(&o, "woken from other code");
	o.named = true;
	check_barrier(&o, "named site, other code");
	o.named = false;
	o.waker_fn = FN;
	o.attach = true;
	{
		struct sb_profile *p = sb_profile_alloc();
		struct sb_builder_stats st;
		struct sb_builder *b = build(&o, p, &st);

		CHECK(st.cond_barriers == 1, "attached mid-episode: still a barrier");
		sb_profile_free(p);
		sb_builder_free(b);
	}
	o.attach = false;
	{
		/* A log that keeps 10 events: detection skipped, every event
		 * past the limit counted (sections.h), not just the first. */
		static struct hist h;
		struct sb_builder *b = sb_builder_alloc(100);
		struct sb_builder_stats st;

		history(&h, &o);
		CHECK(sb_builder_keep_log(b, 10, false) == 0, "keep_log 10");
		for (size_t i = 0; i < h.n; i++)
			CHECK(sb_builder_add(b, &h.e[i]) == 0, "add %zu", i);
		CHECK(sb_builder_finish(b) == 0, "finish");
		sb_builder_get_stats(b, &st);
		CHECK(st.cond_log_full == h.n - 10 && st.cond_barriers == 0,
		      "log full: %llu events past the limit of 10 (of %zu), %llu barriers",
		      (unsigned long long)st.cond_log_full, h.n,
		      (unsigned long long)st.cond_barriers);
		sb_builder_free(b);
	}
	o.episodes = 1;
	check_not_barrier(&o, "one episode");
	return CHECK_DONE("test_condbar");
}
