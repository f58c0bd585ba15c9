// SPDX-License-Identifier: MIT
/* Cutting the section builder (sb_builder_cut, `record --rotate`): a
 * history cut anywhere -- between instances, in the middle of one, twice
 * in a row -- gives cuts whose instances, per-thread times, lost time and
 * waits add up exactly to the same history never cut; an instance lands
 * in the cut taken after it ends.  The cuts are added with the profile
 * merge (analysis/merge/), as `report -i DIR` adds rotated files. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loc_test.h"
#include "merge/merge.h"
#include "sect_helpers.h"

#define THREADS 4
#define ITERS 6

/* barrier_ratio's history: thread t works (t + 1) ms a round, then waits
 * at one barrier; rounds 10 ms apart; a mutex wait in every round. */
static size_t history(struct sb_event *e)
{
	uint64_t oncpu[THREADS] = { 0 }, t0 = 1000 * MS;
	size_t n = 0;

	for (uint32_t t = 0; t < THREADS; t++)
		e[n++] = ev(t0, 100 + t, SB_EV_THREAD_START, 0, 0, 1, 0);
	for (int it = 0; it < ITERS; it++) {
		uint64_t start = t0 + (uint64_t)it * 10 * MS;

		for (uint32_t t = 0; t < THREADS; t++) {
			oncpu[t] += (t + 1) * MS;
			e[n++] = ev(start + (t + 1) * MS, 100 + t, SB_EV_SYNC_ENTER,
				    SB_PRIM_BARRIER, 0x401000, 0xbeef, oncpu[t]);
		}
		e[n] = ev(start + 4 * MS + 5, 100, SB_EV_WAIT, SB_PRIM_MUTEX, 0x402000, 0x10,
			  oncpu[0]);
		e[n++].dur = 3000;
		for (uint32_t t = 0; t < THREADS; t++)
			e[n++] = ev(start + 4 * MS + 10 + t, 100 + t, SB_EV_SYNC_EXIT,
				    SB_PRIM_BARRIER, 0, 0, oncpu[t]);
	}
	return n;
}

/* The profile of a builder's (or a cut's) result. */
static struct sb_profile *emitted(struct sb_builder *b)
{
	struct sb_profile *p = sb_profile_alloc();

	CHECK(p && test_emit(b, p, NULL) == 0, "emit");
	return p;
}

/* e[0..n) fed with a cut before each event index in cuts[0..ncuts)
 * (ascending; the watermark is that event's time - 1), the rest finished;
 * the merge of every cut and the finish. */
static size_t mutex_waits(const struct sb_profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nwaits; i++)
		n += p->waits[i].prim == SB_PRIM_MUTEX ? p->waits[i].count : 0;
	return n;
}

static size_t waits_per_cut[8];

static struct sb_profile *cut_at(const struct sb_event *e, size_t n, const size_t *cuts,
				 size_t ncuts, size_t *instances_per_cut)
{
	struct sb_builder *b = sb_builder_alloc(100), *c;
	struct sb_merge *m = sb_merge_alloc(NULL);
	struct sb_profile *p, *out;
	struct sb_builder_stats st;
	size_t k = 0;
	char err[128];

	for (size_t i = 0; i <= n; i++) {
		while (k < ncuts && cuts[k] == i) {
			CHECK(sb_builder_cut(b, e[i < n ? i : n - 1].ts - 1, &c) == 0, "cut");
			sb_builder_get_stats(c, &st);
			instances_per_cut[k] = st.instances;
			p = emitted(c);
			waits_per_cut[k] = mutex_waits(p);
			CHECK(sb_merge_add(m, p, "cut", err, sizeof(err)) == 0, "%s", err);
			sb_profile_free(p);
			sb_builder_free(c);
			k++;
		}
		if (i < n)
			sb_builder_add(b, &e[i]);
	}
	CHECK(sb_builder_finish(b) == 0, "finish");
	p = emitted(b);
	waits_per_cut[ncuts] = mutex_waits(p);
	sb_builder_get_stats(b, &st);
	instances_per_cut[ncuts] = st.instances;
	CHECK(sb_merge_add(m, p, "last", err, sizeof(err)) == 0, "%s", err);
	out = sb_merge_finish(m);
	sb_profile_free(p);
	sb_merge_free(m);
	sb_builder_free(b);
	return out;
}

static void same(const struct sb_profile *a, const struct sb_profile *b, const char *what)
{
	CHECK(a->nsections == 1 && b->nsections == 1, "%s: one section", what);
	if (a->nsections != 1 || b->nsections != 1)
		return;
	const struct sb_section *x = &a->sections[0], *y = &b->sections[0];

	CHECK(x->ninstances == y->ninstances && x->lost_ns == y->lost_ns &&
	      x->capacity_ns == y->capacity_ns && x->nthreads == y->nthreads,
	      "%s: instances %llu/%llu, lost %llu/%llu", what, (unsigned long long)x->ninstances,
	      (unsigned long long)y->ninstances, (unsigned long long)x->lost_ns,
	      (unsigned long long)y->lost_ns);
	for (uint32_t i = 0; i < x->nthreads && i < y->nthreads; i++)
		CHECK(x->per_thread[i].tid == y->per_thread[i].tid &&
		      x->per_thread[i].busy_ns == y->per_thread[i].busy_ns &&
		      x->per_thread[i].wait_ns == y->per_thread[i].wait_ns &&
		      x->per_thread[i].wall_ns == y->per_thread[i].wall_ns,
		      "%s: thread %u's times", what, x->per_thread[i].tid);
	CHECK(a->ninstances == b->ninstances, "%s: stored %zu/%zu", what, a->ninstances,
	      b->ninstances);
	for (size_t i = 0; i < a->ninstances && i < b->ninstances; i++)
		CHECK(a->instances[i].seq == b->instances[i].seq &&
		      a->instances[i].start_ns == b->instances[i].start_ns &&
		      a->instances[i].end_ns == b->instances[i].end_ns,
		      "%s: instance %zu numbered and timed alike", what, i);
	CHECK(a->nwaits == b->nwaits, "%s: waits %zu/%zu", what, a->nwaits, b->nwaits);
	for (size_t i = 0; i < a->nwaits && i < b->nwaits; i++)
		CHECK(a->waits[i].count == b->waits[i].count &&
		      a->waits[i].wait_ns == b->waits[i].wait_ns, "%s: wait %zu", what, i);
}

/* Thread churn cut every round: each cut holds its round's join
 * instance, the round's two ended children leave the builder's table at
 * the next cut, and the cuts still add up to the uncut history. */
static void test_churn_evicted(void)
{
	enum { ROUNDS = 5 };
	struct sb_event e[4 + ROUNDS * 8];
	struct sb_builder *b = sb_builder_alloc(100), *c, *w = sb_builder_alloc(100);
	struct sb_merge *m = sb_merge_alloc(NULL);
	struct sb_profile *p, *whole, *merged;
	struct sb_builder_stats st;
	uint64_t evicted = 0, ts = 1 * MS;
	size_t n = 0, round_end[ROUNDS];
	bool each = true;
	char err[128];

	e[n++] = ev(0, 7, SB_EV_THREAD_START, 0, 0, 0, 0);
	for (int r = 0; r < ROUNDS; r++) {
		uint32_t k1 = 100 + 2 * (uint32_t)r, k2 = k1 + 1;

		e[n++] = ev(ts, k1, SB_EV_THREAD_START, 0, 0, 7, 0);
		e[n++] = ev(ts + 1, k2, SB_EV_THREAD_START, 0, 0, 7, 0);
		e[n++] = ev(ts + 2, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0);
		e[n++] = ev(ts + 3 * MS, k1, SB_EV_THREAD_EXIT, 0, 0, 0, 3 * MS);
		e[n++] = ev(ts + 5 * MS, k2, SB_EV_THREAD_EXIT, 0, 0, 0, 5 * MS);
		e[n++] = ev(ts + 5 * MS + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0);
		round_end[r] = n;
		ts += 10 * MS;
	}
	for (size_t i = 0; i < n; i++)
		sb_builder_add(w, &e[i]);
	sb_builder_finish(w);
	whole = emitted(w);
	for (size_t i = 0, r = 0; i < n; i++) {
		sb_builder_add(b, &e[i]);
		if (r < ROUNDS && i + 1 == round_end[r]) {
			CHECK(sb_builder_cut(b, e[i].ts, &c) == 0, "cut");
			sb_builder_get_stats(c, &st);
			/* the round's children ended and were joined */
			each &= st.instances == 1 && st.threads_evicted == 2;
			evicted += st.threads_evicted;
			p = emitted(c);
			sb_merge_add(m, p, "cut", err, sizeof(err));
			sb_profile_free(p);
			sb_builder_free(c);
			r++;
		}
	}
	sb_builder_finish(b);
	p = emitted(b);
	sb_merge_add(m, p, "last", err, sizeof(err));
	merged = sb_merge_finish(m);
	CHECK(each, "each round's cut: its join instance, its two ended children evicted");
	CHECK(evicted == 2 * ROUNDS, "every child evicted once: %llu",
	      (unsigned long long)evicted);
	if (merged)
		same(whole, merged, "churn cut every round");
	sb_profile_free(p);
	sb_profile_free(merged);
	sb_profile_free(whole);
	sb_merge_free(m);
	sb_builder_free(b);
	sb_builder_free(w);
}

int main(void)
{
	struct sb_event e[256];
	size_t n = history(e), per[8];
	size_t none[1] = { 0 };
	struct sb_builder *b = sb_builder_alloc(100), *c;
	struct sb_profile *whole, *p;
	/* events per round: 4 arrivals, a mutex wait, 4 departures; the
	 * first 4 start the threads */
	size_t between[1] = { 4 + 2 * 9 };       /* after round 2 */
	size_t inside[1] = { 4 + 2 * 9 + 2 };     /* round 3: 2 arrived */
	size_t twice[3] = { 4 + 9 + 6, 4 + 9 + 6, 4 + 4 * 9 + 1 };

	for (size_t i = 0; i < n; i++)
		sb_builder_add(b, &e[i]);
	sb_builder_finish(b);
	whole = emitted(b);
	sb_builder_free(b);
	CHECK(whole->nsections == 1 && whole->sections[0].ninstances == ITERS, "uncut: %d rounds",
	      ITERS);

	p = cut_at(e, n, none, 1, per);
	CHECK(p && per[0] == 0 && per[1] == ITERS, "a cut before anything is empty");
	if (p)
		same(whole, p, "cut at the start");
	sb_profile_free(p);

	p = cut_at(e, n, between, 1, per);
	CHECK(p && per[0] == 2 && per[1] == ITERS - 2, "cut after round 2: 2 + %d", ITERS - 2);
	CHECK(waits_per_cut[0] == 2 && waits_per_cut[1] == ITERS - 2,
	      "a finished wait is in the cut after it: %zu + %zu", waits_per_cut[0],
	      waits_per_cut[1]);
	if (p)
		same(whole, p, "cut between rounds");
	sb_profile_free(p);

	p = cut_at(e, n, inside, 1, per);
	CHECK(p && per[0] == 2 && per[1] == ITERS - 2,
	      "cut with round 3 half arrived: it goes to the later cut (%zu + %zu)", per[0], per[1]);
	if (p)
		same(whole, p, "cut inside a round");
	sb_profile_free(p);

	p = cut_at(e, n, twice, 3, per);
	CHECK(p && per[0] == 1 && per[1] == 0 && per[2] == 3 && per[3] == ITERS - 4,
	      "three cuts, two at once: 1, 0, 3, %d (%zu %zu %zu %zu)", ITERS - 4, per[0], per[1],
	      per[2], per[3]);
	if (p)
		same(whole, p, "three cuts");
	sb_profile_free(p);

	/* not with a log: inline barriers need the whole history */
	b = sb_builder_alloc(100);
	sb_builder_keep_log(b, 1000, false);
	CHECK(sb_builder_cut(b, 0, &c) == -1 && c == NULL, "refused with a log");
	sb_builder_free(b);
	sb_profile_free(whole);
	test_churn_evicted();
	return CHECK_DONE("test_cut");
}
