// SPDX-License-Identifier: MIT
/* The section builder against constructed timelines with known answers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loc_test.h"
#include "profile/profile.h"
#include "sections/sections.h"
#include "sect_helpers.h"


static const struct sb_section *find_section(const struct sb_profile *p, uint32_t kind)
{
	for (size_t i = 0; i < p->nsections; i++)
		if (p->sections[i].kind == kind)
			return &p->sections[i];
	return NULL;
}

/* 4 threads, busy 1:2:3:4 ms per iteration, 3 iterations, events pushed in
 * a shuffled order: one barrier section, 37.5 % imbalance. */
static void test_barrier_ratio(void)
{
	struct sb_builder *b = sb_builder_alloc(2);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_event evs[64];
	struct sb_builder_stats st;
	uint64_t oncpu[4] = { 0 }, t0 = 1000 * MS;
	size_t n = 0;

	for (uint32_t t = 0; t < 4; t++)
		evs[n++] = ev(t0, 100 + t, SB_EV_THREAD_START, 0, 0, 1, 0);
	for (int it = 0; it < 3; it++) {
		uint64_t start = t0 + (uint64_t)it * 10 * MS;

		for (uint32_t t = 0; t < 4; t++) {
			oncpu[t] += (t + 1) * MS;
			evs[n++] = ev(start + (t + 1) * MS, 100 + t, SB_EV_SYNC_ENTER,
				      SB_PRIM_BARRIER, 0x401000, 0xbeef, oncpu[t]);
			evs[n++] = ev(start + 4 * MS + 10 + t, 100 + t, SB_EV_SYNC_EXIT,
				      SB_PRIM_BARRIER, 0, 0, oncpu[t]);
		}
	}
	/* Reverse each adjacent pair: out of order within the window. */
	for (size_t i = 0; i + 1 < n; i += 2) {
		struct sb_event x = evs[i];

		evs[i] = evs[i + 1];
		evs[i + 1] = x;
	}
	for (size_t i = 0; i < n; i++)
		CHECK(sb_builder_add(b, &evs[i]) == 0, "add %zu", i);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	sb_builder_get_stats(b, &st);
	CHECK(st.instances == 3, "instances %llu", (unsigned long long)st.instances);
	CHECK(st.stored_instances == 2, "stored limited to 2: %llu",
	      (unsigned long long)st.stored_instances);
	CHECK(p->nsections == 1, "sections %zu", p->nsections);
	CHECK(p->ninstances == 2, "instances in profile %zu", p->ninstances);
	if (p->nsections == 1) {
		const struct sb_section *s = &p->sections[0];

		CHECK(s->kind == SB_SECT_BARRIER, "kind %u", s->kind);
		CHECK(p->locs[s->loc].addr == 0x401000, "site");
		CHECK(s->ninstances == 3, "ninstances");
		CHECK(s->nthreads == 4, "nthreads %u", s->nthreads);
		for (uint32_t t = 0; t < s->nthreads && t < 4; t++) {
			CHECK(s->per_thread[t].tid == 100 + t, "sorted by tid");
			CHECK(s->per_thread[t].busy_ns == 3 * (t + 1) * MS, "busy t%u", t);
			/* Everyone leaves ~4 ms in: waited (4 - (t+1)) ms. */
			CHECK_NEAR(s->per_thread[t].wait_ns, 3 * (3 - t) * MS, 3 * 20);
		}
		CHECK(s->lost_ns == 3 * (3 + 2 + 1) * MS, "lost %llu",
		      (unsigned long long)s->lost_ns);
		CHECK_NEAR(100.0 * s->lost_ns / s->capacity_ns, 37.5, 1e-9);
	}
	if (p->ninstances >= 2) {
		CHECK(p->instances[1].seq == 1, "seq");
		CHECK(p->instances[0].start_ns == t0, "first instance starts at thread start");
	}
	/* Barrier waits aggregate by site and object. */
	CHECK(p->nwaits == 1 && p->waits[0].count == 12 && p->waits[0].object == 0xbeef,
	      "waits %zu", p->nwaits);
	sb_profile_free(p);
	sb_builder_free(b);
}

/* An OpenMP region with an explicit barrier: busy before the barrier
 * 1:2, after it equal; the region end is balanced. */
static void test_omp_region(void)
{
	struct sb_builder *b = sb_builder_alloc(100);
	struct sb_profile *p = sb_profile_alloc();
	const uint64_t fn = 0x4011a0, site = 0x401300, bsite = 0x401200;
	const struct sb_section *sb, *sr;
	struct sb_event e[] = {
		ev(1 * MS, 1, SB_EV_REGION_ENTER, 0, site, fn, 0),
		ev(1 * MS + 1, 1, SB_EV_TASK_ENTER, 0, 0, fn, 0),
		ev(1 * MS + 2, 2, SB_EV_TASK_ENTER, 0, 0, fn, 50 * MS),
		ev(2 * MS, 1, SB_EV_SYNC_ENTER, SB_PRIM_OMP_BARRIER, bsite, 0, 1 * MS),
		ev(3 * MS, 2, SB_EV_SYNC_ENTER, SB_PRIM_OMP_BARRIER, bsite, 0, 52 * MS),
		ev(3 * MS + 5, 2, SB_EV_SYNC_EXIT, SB_PRIM_OMP_BARRIER, 0, 0, 52 * MS),
		ev(3 * MS + 6, 1, SB_EV_SYNC_EXIT, SB_PRIM_OMP_BARRIER, 0, 0, 1 * MS + 100),
		ev(4 * MS, 1, SB_EV_TASK_EXIT, 0, 0, fn, 2 * MS + 100),
		ev(4 * MS + 10, 2, SB_EV_TASK_EXIT, 0, 0, fn, 53 * MS),
		ev(4 * MS + 20, 1, SB_EV_REGION_EXIT, 0, 0, 0, 2 * MS + 120),
	};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	CHECK(p->nsections == 2, "sections %zu", p->nsections);
	sb = find_section(p, SB_SECT_OMP_BARRIER);
	sr = find_section(p, SB_SECT_OMP_REGION);
	CHECK(sb && sr, "both kinds");
	if (sb && sr) {
		CHECK(p->locs[sb->loc].addr == bsite, "barrier site");
		CHECK(p->locs[sr->loc].addr == site, "region site is the fork call");
		CHECK(sb->per_thread[0].busy_ns == 1 * MS && sb->per_thread[1].busy_ns == 2 * MS,
		      "barrier busy %llu %llu", (unsigned long long)sb->per_thread[0].busy_ns,
		      (unsigned long long)sb->per_thread[1].busy_ns);
		CHECK_NEAR(100.0 * sb->lost_ns / sb->capacity_ns, 25.0, 1e-9);
		CHECK(sr->per_thread[0].busy_ns == 1 * MS && sr->per_thread[1].busy_ns == 1 * MS,
		      "region busy");
		CHECK(sr->lost_ns == 0, "balanced region end");
		CHECK(sr->per_thread[0].wait_ns == 20 && sr->per_thread[1].wait_ns == 10,
		      "wait from task end to region end");
	}
	sb_profile_free(p);
	sb_builder_free(b);
}

/* Three threads of one creator exit at 10, 20, 40 ms: one join instance. */
static void test_join_and_partial(void)
{
	struct sb_builder *b = sb_builder_alloc(100);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_builder_stats st;
	const struct sb_section *s;
	struct sb_event e[] = {
		ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(1, 8, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(2, 9, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(3, 10, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(5, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0),
		ev(10 * MS, 8, SB_EV_THREAD_EXIT, 0, 0, 0, 10 * MS),
		ev(20 * MS, 9, SB_EV_THREAD_EXIT, 0, 0, 0, 20 * MS),
		ev(40 * MS, 10, SB_EV_THREAD_EXIT, 0, 0, 0, 40 * MS),
		ev(40 * MS + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0),
		/* Thread 7 was running before recording: its first barrier
		 * instance cannot be timed and is skipped, not guessed. */
		ev(50 * MS, 7, SB_EV_WAIT, SB_PRIM_MUTEX, 0x777, 0xabc, 0),
		ev(60 * MS, 11, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(61 * MS, 11, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x999, 0x1, 5 * MS),
		ev(62 * MS, 11, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5 * MS),
		ev(63 * MS, 11, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5 * MS),
	};
	e[9].dur = 3 * MS;

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	sb_builder_get_stats(b, &st);
	CHECK(st.partial_instances == 1, "partial %llu", (unsigned long long)st.partial_instances);
	CHECK(st.unmatched == 1, "unmatched exit %llu", (unsigned long long)st.unmatched);
	s = find_section(p, SB_SECT_JOIN);
	CHECK(s != NULL && p->nsections == 1, "one join section");
	if (s) {
		CHECK(p->locs[s->loc].addr == 0x555, "join site");
		CHECK(s->nthreads == 3, "three threads");
		CHECK(s->per_thread[0].wait_ns == 30 * MS && s->per_thread[2].wait_ns == 0,
		      "idle after exit until the last exit");
		CHECK_NEAR(100.0 * s->lost_ns / s->capacity_ns, 100.0 * (30 + 20) / 120, 1e-9);
	}
	for (size_t i = 0; i < p->nwaits; i++) {
		if (p->waits[i].prim == SB_PRIM_MUTEX)
			CHECK(p->waits[i].wait_ns == 3 * MS && p->waits[i].object == 0xabc,
			      "mutex wait");
		if (p->waits[i].prim == SB_PRIM_JOIN)
			CHECK(p->waits[i].wait_ns == 40 * MS - 4, "join wait");
	}
	sb_profile_free(p);
	sb_builder_free(b);
}

/* One worker created and joined: no parallel section, unless the
 * builder keeps single joins (a speedup stack's one-thread run), then a
 * join section of that one thread with its busy time. */
static void test_single_join(void)
{
	for (int keep = 0; keep < 2; keep++) {
		struct sb_builder *b = sb_builder_alloc(100);
		struct sb_profile *p = sb_profile_alloc();
		const struct sb_section *s;
		struct sb_event e[] = {
			ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
			ev(1, 8, SB_EV_THREAD_START, 0, 0, 7, 0),
			ev(5, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0),
			ev(30 * MS, 8, SB_EV_THREAD_EXIT, 0, 0, 0, 25 * MS),
			ev(30 * MS + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0),
		};

		sb_builder_single_joins(b, keep);
		for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
			sb_builder_add(b, &e[i]);
		CHECK(sb_builder_finish(b) == 0 && test_emit(b, p, NULL) == 0, "finish, emit");
		s = find_section(p, SB_SECT_JOIN);
		CHECK(keep ? s && s->nthreads == 1 && s->per_thread[0].tid == 8 &&
			     s->per_thread[0].busy_ns == 25 * MS && s->ninstances == 1 : !s,
		      "%s", keep ? "kept: a join section of the one worker, its 25 ms busy"
				 : "one thread joined: no section by default");
		sb_profile_free(p);
		sb_builder_free(b);
	}
}

/* The children exit before their creator reaches pthread_join (it works
 * itself meanwhile), twice, at two join sites; in the first phase the
 * second child is created only after the first has exited.  Each phase is
 * one join section of both children at its own site, and a creator that
 * never joins leaves a section without a site. */
static void test_join_late(void)
{
	struct sb_builder *b = sb_builder_alloc(100);
	struct sb_profile *p = sb_profile_alloc();
	size_t found = 0;
	struct sb_event e[] = {
		ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(1, 8, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(10 * MS, 8, SB_EV_THREAD_EXIT, 0, 0, 0, 10 * MS),
		ev(11 * MS, 9, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(31 * MS, 9, SB_EV_THREAD_EXIT, 0, 0, 0, 20 * MS),
		ev(50 * MS, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0),
		ev(50 * MS + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0),
		ev(50 * MS + 2, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0),
		ev(50 * MS + 3, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0),
		ev(60 * MS, 10, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(60 * MS, 11, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(70 * MS, 10, SB_EV_THREAD_EXIT, 0, 0, 0, 10 * MS),
		ev(90 * MS, 11, SB_EV_THREAD_EXIT, 0, 0, 0, 30 * MS),
		ev(99 * MS, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x666, 0, 0),
		ev(99 * MS + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0),
		ev(100 * MS, 12, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(100 * MS, 13, SB_EV_THREAD_START, 0, 0, 7, 0),
		ev(110 * MS, 12, SB_EV_THREAD_EXIT, 0, 0, 0, 10 * MS),
		ev(120 * MS, 13, SB_EV_THREAD_EXIT, 0, 0, 0, 20 * MS),
	};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	for (size_t i = 0; i < p->nsections; i++) {
		const struct sb_section *s = &p->sections[i];
		uint64_t addr = s->loc < p->nlocs ? p->locs[s->loc].addr : 0;

		if (s->kind != SB_SECT_JOIN)
			continue;
		found++;
		CHECK(s->ninstances == 1 && s->nthreads == 2, "join at %llx: one instance of 2",
		      (unsigned long long)addr);
		if (addr == 0x555)
			CHECK(s->per_thread[0].wait_ns == 21 * MS && s->per_thread[1].wait_ns == 0,
			      "phase 1: idle from exit to the last exit");
		else if (addr == 0x666)
			CHECK(s->per_thread[0].wait_ns == 20 * MS, "phase 2 waits");
		else
			CHECK(addr == 0 && s->per_thread[0].wait_ns == 10 * MS,
			      "never joined: no site (%llx)", (unsigned long long)addr);
	}
	CHECK(found == 3, "three join sections, %zu", found);
	sb_profile_free(p);
	sb_builder_free(b);
}

/* A barrier instance left open at the end is counted, not stored. */
static void test_unfinished(void)
{
	struct sb_builder *b = sb_builder_alloc(100);
	struct sb_builder_stats st;
	struct sb_event e[] = {
		ev(1, 1, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(2, 2, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(10, 1, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 5),
		ev(11, 2, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 5),
		ev(12, 2, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5),
	};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	/* The watermark holds back what is newer than it. */
	sb_builder_flush(b, 10);
	sb_builder_get_stats(b, &st);
	CHECK(st.events == 3, "flushed up to the watermark: %llu", (unsigned long long)st.events);
	sb_builder_finish(b);
	sb_builder_get_stats(b, &st);
	CHECK(st.unfinished_instances == 1 && st.instances == 0, "unfinished");
	sb_builder_free(b);
}

/* Keys 0x10 and 0x11 are one event (two IPs of one block); 0x99 is dropped. */
static long event_of(uint64_t key)
{
	return key == 0x10 || key == 0x11 ? 0 : key == 0x20 ? 1 : -1;
}

/* Counters accumulate per thread segment and become instance vectors. */
static void test_vectors(void)
{
	struct sb_builder *b = sb_builder_alloc(10);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_event e[] = {
		ev(1, 6, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(2, 5, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(10, 5, SB_EV_COUNT, 0, 0, 0x10, 0),
		ev(11, 5, SB_EV_COUNT, 0, 0, 0x11, 0),
		ev(12, 6, SB_EV_COUNT, 0, 0, 0x20, 0),
		ev(13, 6, SB_EV_COUNT, 0, 0, 0x99, 0),
		ev(20, 5, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 5),
		ev(21, 5, SB_EV_COUNT, 0, 0, 0x20, 0),   /* while waiting: dropped */
		ev(30, 6, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 7),
		ev(31, 6, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 7),
		ev(32, 5, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5),
		/* second instance: only thread 6 counts */
		ev(40, 6, SB_EV_COUNT, 0, 0, 0x10, 0),
		ev(50, 5, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 6),
		ev(51, 6, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 9),
		ev(52, 6, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 9),
		ev(53, 5, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 6),
	};
	struct sb_event_def d = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = -1, .loc = -1,
				  .loc2 = -1, .loc_hot = -1 };

	e[2].dur = 3;
	e[3].dur = 4;
	e[4].dur = 2;
	e[5].dur = 1;
	e[7].dur = 100;
	e[11].dur = 8;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	sb_profile_add_event(p, &d);
	sb_profile_add_event(p, &d);
	CHECK(test_emit(b, p, event_of) == 0, "emit");
	CHECK(p->ninstances == 2, "two instances: %zu", p->ninstances);
	/* instance 0: event 0 = {tid5: 3+4, tid6: 0}, event 1 = {0, 2};
	 * instance 1: event 0 = {0, 8}.  Columns by tid: 5, 6. */
	CHECK(p->nvectors == 3, "vectors %zu", p->nvectors);
	for (size_t i = 0; i < p->nvectors; i++) {
		const struct sb_vector *v = &p->vectors[i];

		CHECK(v->nthreads == 2, "two columns");
		if (v->instance == 0 && v->event == 0)
			CHECK(v->counts[0] == 7 && v->counts[1] == 0, "merged keys %llu %llu",
			      (unsigned long long)v->counts[0], (unsigned long long)v->counts[1]);
		else if (v->instance == 0 && v->event == 1)
			CHECK(v->counts[0] == 0 && v->counts[1] == 2, "wait count dropped");
		else
			CHECK(v->instance == 1 && v->event == 0 && v->counts[0] == 0 &&
			      v->counts[1] == 8, "second instance");
	}
	if (p->ninstances == 2)
		CHECK(p->instances[0].per_thread[0].tid == 5, "columns follow per_thread");
	sb_profile_free(p);
	sb_builder_free(b);
}

/*
 * Exact counts flushed just after a task returned (SB_EV_COUNT_LAST) go to
 * the segment that task end closed, while the region is open; after it,
 * they are counted as unplaced.  Counts before the task end (SB_EV_COUNT)
 * go to the current segment as usual.
 */
static void test_count_last(void)
{
	struct sb_builder *b = sb_builder_alloc(10);
	struct sb_profile *p = sb_profile_alloc();
	const uint64_t fn = 0x4011a0;
	struct sb_event e[] = {
		ev(10, 5, SB_EV_REGION_ENTER, 0, 0x401300, fn, 0),
		ev(11, 5, SB_EV_TASK_ENTER, 0, 0, fn, 0),
		ev(12, 6, SB_EV_TASK_ENTER, 0, 0, fn, 0),
		ev(20, 5, SB_EV_COUNT, 0, 0, 0x10, 0),
		ev(30, 6, SB_EV_TASK_EXIT, 0, 0, fn, 18),
		ev(31, 6, SB_EV_COUNT_LAST, 0, 0, 0x10, 0),
		ev(32, 5, SB_EV_TASK_EXIT, 0, 0, fn, 21),
		ev(33, 5, SB_EV_COUNT_LAST, 0, 0, 0x20, 0),
		ev(40, 5, SB_EV_REGION_EXIT, 0, 0, 0, 22),
		ev(50, 6, SB_EV_COUNT_LAST, 0, 0, 0x20, 0),   /* region over */
	};
	struct sb_event_def d = { .kind = SB_EVK_BLOCK_COUNT, .binary = -1, .loc = -1,
				  .loc2 = -1, .loc_hot = -1 };
	struct sb_builder_stats st;
	int seen = 0;

	e[3].dur = 4;
	e[5].dur = 5;
	e[7].dur = 2;
	e[9].dur = 7;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	sb_builder_get_stats(b, &st);
	CHECK(st.counts_unplaced == 7, "counts after the region ended: %llu",
	      (unsigned long long)st.counts_unplaced);
	sb_profile_add_event(p, &d);
	sb_profile_add_event(p, &d);
	CHECK(test_emit(b, p, event_of) == 0, "emit");
	CHECK(p->ninstances == 1, "one region instance: %zu", p->ninstances);
	for (size_t i = 0; p->ninstances == 1 && i < p->nvectors; i++) {
		const struct sb_vector *v = &p->vectors[i];
		uint32_t c5 = p->instances[0].per_thread[0].tid == 5 ? 0 : 1;

		if (v->event == 0) {   /* 0x10: 4 in tid 5's segment, 5 flushed late by 6 */
			CHECK(v->counts[c5] == 4 && v->counts[1 - c5] == 5, "0x10: %llu %llu",
			      (unsigned long long)v->counts[c5], (unsigned long long)v->counts[1 - c5]);
			seen++;
		} else if (v->event == 1) {
			CHECK(v->counts[c5] == 2 && v->counts[1 - c5] == 0, "0x20: %llu %llu",
			      (unsigned long long)v->counts[c5], (unsigned long long)v->counts[1 - c5]);
			seen++;
		}
	}
	CHECK(seen == 2, "both events have vectors: %d", seen);
	sb_profile_free(p);
	sb_builder_free(b);
}

/*
 * Counts of work done (SB_COUNT_DONE: exact mode's flushed batches) that
 * come while the thread is inside a probed barrier function (flushed at
 * the pthread_cond_wait or broadcast in it) belong to the segment that
 * barrier closed; a sample there (no flag) is of the waiting: dropped.
 */
static void test_count_done(void)
{
	struct sb_builder *b = sb_builder_alloc(10);
	struct sb_profile *p = sb_profile_alloc();
	const uint16_t ub = SB_PRIM_USER_BARRIER;
	struct sb_event e[] = {
		ev(1, 5, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(2, 6, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(10, 5, SB_EV_COUNT, SB_COUNT_DONE, 0, 0x10, 0),
		ev(20, 5, SB_EV_SYNC_ENTER, ub, 0x1, 0x2, 5),
		ev(21, 5, SB_EV_COUNT, SB_COUNT_DONE, 0, 0x10, 0),  /* the waiter's flush */
		ev(22, 5, SB_EV_COUNT, 0, 0, 0x20, 0),              /* a sample: dropped */
		ev(30, 6, SB_EV_SYNC_ENTER, ub, 0x1, 0x2, 7),
		ev(31, 6, SB_EV_COUNT, SB_COUNT_DONE, 0, 0x20, 0),  /* the broadcaster's */
		ev(32, 6, SB_EV_SYNC_EXIT, ub, 0, 0, 7),
		ev(33, 5, SB_EV_SYNC_EXIT, ub, 0, 0, 5),
		ev(40, 5, SB_EV_COUNT, SB_COUNT_DONE, 0, 0x10, 0),  /* the next segment */
		ev(50, 5, SB_EV_SYNC_ENTER, ub, 0x1, 0x2, 6),
		ev(51, 6, SB_EV_SYNC_ENTER, ub, 0x1, 0x2, 9),
		ev(52, 6, SB_EV_SYNC_EXIT, ub, 0, 0, 9),
		ev(53, 5, SB_EV_SYNC_EXIT, ub, 0, 0, 6),
	};
	struct sb_event_def d = { .kind = SB_EVK_BLOCK_COUNT, .binary = -1, .loc = -1,
				  .loc2 = -1, .loc_hot = -1 };
	int seen = 0;

	e[2].dur = 3;
	e[4].dur = 4;
	e[5].dur = 1;
	e[7].dur = 6;
	e[10].dur = 2;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	sb_profile_add_event(p, &d);
	sb_profile_add_event(p, &d);
	CHECK(test_emit(b, p, event_of) == 0, "emit");
	CHECK(p->ninstances == 2, "two instances: %zu", p->ninstances);
	/* Columns by tid: 5, 6.  Instance 0: 0x10 = {3 + 4, 0}, 0x20 = {0, 6}
	 * (the sample dropped); instance 1: 0x10 = {2, 0}. */
	for (size_t i = 0; p->ninstances == 2 && i < p->nvectors; i++) {
		const struct sb_vector *v = &p->vectors[i];
		uint64_t c0 = v->counts[0], c1 = v->counts[1];

		CHECK(v->nthreads == 2, "two columns");
		if (v->instance == 0 && v->event == 0) {
			seen++;
			CHECK(c0 == 7 && c1 == 0, "waiter's flush: %llu %llu",
			      (unsigned long long)c0, (unsigned long long)c1);
		} else if (v->instance == 0 && v->event == 1) {
			seen++;
			CHECK(c0 == 0 && c1 == 6, "broadcaster's flush, no sample: %llu %llu",
			      (unsigned long long)c0, (unsigned long long)c1);
		} else if (v->instance == 1 && v->event == 0) {
			seen++;
			CHECK(c0 == 2 && c1 == 0, "next segment: %llu %llu",
			      (unsigned long long)c0, (unsigned long long)c1);
		} else {
			CHECK(0, "unexpected vector: instance %u event %u", (unsigned)v->instance,
			      (unsigned)v->event);
		}
	}
	CHECK(seen == 3, "three vectors: %d", seen);
	sb_profile_free(p);
	sb_builder_free(b);
}

/*
 * The keys phase lists what the caller names, first seen first: the
 * sections' sites, then per stored instance its keys (ascending), then
 * the waits' sites not listed yet (site 0 is none); a key's weight and
 * instance count add up over the stored instances.
 */
static void test_keys(void)
{
	struct sb_builder *b = sb_builder_alloc(10);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_event e[] = {
		ev(1, 5, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(2, 6, SB_EV_THREAD_START, 0, 0, 0, 0),
		ev(10, 5, SB_EV_COUNT, 0, 0, 0x30, 0),
		ev(11, 6, SB_EV_COUNT, 0, 0, 0x20, 0),
		ev(12, 5, SB_EV_COUNT, 0, 0, 0x20, 0),
		ev(20, 5, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 5),
		ev(21, 6, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 5),
		ev(22, 6, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5),
		ev(23, 5, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 5),
		/* second instance: 0x10 is new, 0x20 seen again */
		ev(30, 6, SB_EV_COUNT, 0, 0, 0x20, 0),
		ev(31, 6, SB_EV_COUNT, 0, 0, 0x10, 0),
		ev(40, 5, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 6),
		ev(41, 6, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x1, 0x2, 9),
		ev(42, 6, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 9),
		ev(43, 5, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 6),
		ev(50, 5, SB_EV_WAIT, SB_PRIM_MUTEX, 0x777, 0xabc, 0),
		ev(51, 5, SB_EV_WAIT, SB_PRIM_MUTEX, 0, 0xabd, 0),
	};
	struct sb_event_def d = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = -1, .loc = -1,
				  .loc2 = -1, .loc_hot = -1 };
	struct sb_sect_table t;
	bool unnamed = true;

	e[2].dur = 1;
	e[3].dur = 2;
	e[4].dur = 3;
	e[9].dur = 4;
	e[10].dur = 7;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		sb_builder_add(b, &e[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(sb_builder_keys(b, &t) == 0, "keys");
	CHECK(t.nsites == 2 && t.nsection_sites == 1 && t.sites[0] == 0x1 &&
	      t.sites[1] == 0x777, "sites: %zu, %zu of sections", t.nsites, t.nsection_sites);
	CHECK(t.nkeys == 3, "keys %zu", t.nkeys);
	if (t.nkeys == 3) {
		CHECK(t.keys[0].key == 0x20 && t.keys[1].key == 0x30 && t.keys[2].key == 0x10,
		      "first seen: %llx %llx %llx", (unsigned long long)t.keys[0].key,
		      (unsigned long long)t.keys[1].key, (unsigned long long)t.keys[2].key);
		CHECK(t.keys[0].weight == 2 + 3 + 4 && t.keys[1].weight == 1 &&
		      t.keys[2].weight == 7, "total weights");
		CHECK(t.keys[0].instances == 2 && t.keys[1].instances == 1 &&
		      t.keys[2].instances == 1, "instances");
	}
	for (size_t i = 0; i < t.nsites; i++)
		unnamed &= t.locs[i] == -1;
	for (size_t i = 0; i < t.nkeys; i++)
		unnamed &= t.keys[i].event == -1;
	CHECK(unnamed, "nothing named before the caller names it");
	/* Named: only 0x20 has an event; the mutex waits' sites as given. */
	for (size_t i = 0; i < t.nsites; i++)
		t.locs[i] = (int32_t)test_loc_of(p, t.sites[i]);
	if (t.nkeys == 3)
		t.keys[0].event = (int32_t)sb_profile_add_event(p, &d);
	CHECK(sb_builder_emit(b, p, &t) == 0, "emit");
	CHECK(p->nvectors == 2 && p->vectors[0].event == 0 && p->vectors[1].event == 0,
	      "one vector per instance: %zu", p->nvectors);
	for (size_t i = 0; i < p->nwaits; i++)
		if (p->waits[i].prim == SB_PRIM_MUTEX)
			CHECK(p->waits[i].object == 0xabc ? p->waits[i].loc >= 0 &&
			      p->locs[p->waits[i].loc].addr == 0x777 : p->waits[i].loc == -1,
			      "mutex wait at %llx", (unsigned long long)p->waits[i].object);
	sb_sect_table_free(&t);
	sb_profile_free(p);
	sb_builder_free(b);
}

int main(void)
{
	test_keys();
	test_vectors();
	test_count_last();
	test_count_done();
	test_barrier_ratio();
	test_omp_region();
	test_join_and_partial();
	test_join_late();
	test_single_join();
	test_unfinished();
	return CHECK_DONE("test_sections");
}
