// SPDX-License-Identifier: MIT
/* The section builder under thread churn: tids the kernel reuses, rounds
 * of short threads, threads whose creator is unknown. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "loc_test.h"
#include "profile/profile.h"
#include "sections/sections.h"
#include "sect_helpers.h"


/*
 * R rounds: main (7) creates 3 threads, which meet at a barrier and exit;
 * main joins them.  Every round's threads get tids 8, 9, 10 again (pid_max
 * wrapped, or tids were freed and handed out again).  Truth: R join and R
 * barrier instances of 3 threads each, 3R threads in each section (one
 * per-thread row each, though only three tids), and each thread's busy
 * time its own.
 */
static void test_reused_tids(void)
{
	enum { R = 5 };
	struct sb_builder *b = sb_builder_alloc(100);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_builder_stats st;
	uint64_t t = 1;

	sb_builder_add(b, &(struct sb_event){ .ts = 0, .tid = 7, .kind = SB_EV_THREAD_START });
	for (int r = 0; r < R; r++) {
		struct sb_event e;

		for (uint32_t c = 8; c <= 10; c++) {
			e = ev(t++, c, SB_EV_THREAD_START, 0, 0, 7, 0);
			sb_builder_add(b, &e);
		}
		e = ev(t++, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0);
		sb_builder_add(b, &e);
		/* busy 1, 2, 3 ms (+ r) up to the barrier, which all leave at once */
		for (uint32_t c = 8; c <= 10; c++) {
			e = ev(t + (c - 7 + r) * MS, c, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x777,
			       0xb, (c - 7 + r) * MS);
			sb_builder_add(b, &e);
		}
		t += 20 * MS;
		for (uint32_t c = 8; c <= 10; c++) {
			e = ev(t, c, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0, 10 * MS);
			sb_builder_add(b, &e);
			e = ev(t + c, c, SB_EV_THREAD_EXIT, 0, 0, 0, 10 * MS + c);
			sb_builder_add(b, &e);
		}
		t += 1 * MS;
		e = ev(t++, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0);
		sb_builder_add(b, &e);
		for (uint32_t c = 0; c < 2; c++) {   /* the other two joins */
			e = ev(t++, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0);
			sb_builder_add(b, &e);
			e = ev(t++, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0);
			sb_builder_add(b, &e);
		}
	}
	CHECK(sb_builder_finish(b) == 0, "finish");
	CHECK(test_emit(b, p, NULL) == 0, "emit");
	sb_builder_get_stats(b, &st);
	CHECK(st.instances == 2 * R, "instances %llu", (unsigned long long)st.instances);
	CHECK(st.tids_reused == 3 * (R - 1), "tids reused %llu",
	      (unsigned long long)st.tids_reused);
	CHECK(st.exits_unjoined == 0, "no unjoined exit");
	CHECK(p->nsections == 2, "two sections, %zu", p->nsections);
	for (size_t i = 0; i < p->nsections; i++) {
		const struct sb_section *s = &p->sections[i];
		uint64_t busy = 0, n8 = 0;

		CHECK(s->ninstances == R, "section %zu: %llu instances", i,
		      (unsigned long long)s->ninstances);
		CHECK(s->nthreads == 3 * R, "section %zu: %u threads, not 3 tids", i,
		      s->nthreads);
		for (uint32_t k = 0; k < s->nthreads; k++) {
			n8 += s->per_thread[k].tid == 8;
			if (s->kind == SB_SECT_BARRIER)
				busy += s->per_thread[k].busy_ns;
		}
		CHECK(n8 == R, "section %zu: tid 8 is %llu threads", i, (unsigned long long)n8);
		if (s->kind == SB_SECT_BARRIER)   /* sum over r of (1+2+3 + 3r) ms */
			CHECK(busy == (6 * R + 3 * R * (R - 1) / 2) * MS, "barrier busy %llu",
			      (unsigned long long)busy);
	}
	for (size_t i = 0; i < p->ninstances; i++)
		CHECK(p->instances[i].nthreads == 3, "instance %zu: 3 threads", i);
	sb_profile_free(p);
	sb_builder_free(b);
}

/*
 * Attached while threads ran: threads 8 and 9 existed before recording
 * (seen, creator unknown) and exit; 7 is the process's initial thread
 * (obj 1), whose exit joins nothing.  Their exits are in no join instance:
 * counted, not silently left out.
 */
static void test_unjoined_exits(void)
{
	struct sb_builder_stats st;
	struct sb_event e[] = {
		ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 1, 0),
		ev(0, 8, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(0, 9, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(5 * MS, 8, SB_EV_THREAD_EXIT, 0, 0, 0, 5 * MS),
		ev(6 * MS, 9, SB_EV_THREAD_EXIT, 0, 0, 0, 6 * MS),
		ev(9 * MS, 7, SB_EV_THREAD_EXIT, 0, 0, 0, 9 * MS),
	};

	CHECK(feed_stats(e, sizeof(e) / sizeof(e[0]), &st) == 0, "finish");
	CHECK(st.exits_unjoined == 2, "unjoined exits %llu",
	      (unsigned long long)st.exits_unjoined);
	CHECK(st.instances == 0, "no instance");
}

/* Main (7) starts tids tid and tid + 1 at t0 + 1 and + 2 ms; they exit at
 * t0 + 4 and + 5 ms, each 1 ms on CPU. */
static size_t two_children(struct sb_event *e, size_t n, uint64_t t0, uint32_t tid)
{
	for (uint32_t i = 0; i < 2; i++)
		e[n++] = ev(t0 + (1 + i) * MS, tid + i, SB_EV_THREAD_START, 0, 0, 7, 0);
	for (uint32_t i = 0; i < 2; i++)
		e[n++] = ev(t0 + (4 + i) * MS, tid + i, SB_EV_THREAD_EXIT, 0, 0, 0, 1 * MS);
	return n;
}

/* ts of the join calls: each enters and returns. */
static size_t joins(struct sb_event *e, size_t n, uint64_t ts, int count)
{
	for (int i = 0; i < count; i++) {
		e[n++] = ev(ts + 2 * (uint64_t)i, 7, SB_EV_SYNC_ENTER, SB_PRIM_JOIN, 0x555, 0, 0);
		e[n++] = ev(ts + 2 * (uint64_t)i + 1, 7, SB_EV_SYNC_EXIT, SB_PRIM_JOIN, 0, 0, 0);
	}
	return n;
}

/*
 * Attached in the middle of a round of 4 children of main (7, the initial
 * thread): with seen_before, 8 and 9 were running at attach (seen, their
 * creator unknown); without, they started and ended within the attach,
 * never seen at all.  10 and 11 start after.  Main joins 4 threads: that
 * round's instance lacks 8 and 9, so it is partial (skipped, counted), not
 * a 2-thread instance.  The next round (12, 13: two joins) is whole.
 */
static void attach_mid_round(bool seen_before)
{
	struct sb_builder_stats st;
	struct sb_event e[40];
	size_t n = 0;

	e[n++] = ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 1, 0);
	if (seen_before) {
		e[n++] = ev(0, 8, SB_EV_THREAD_SEEN, 0, 0, 0, 0);
		e[n++] = ev(0, 9, SB_EV_THREAD_SEEN, 0, 0, 0, 0);
		e[n++] = ev(6 * MS, 8, SB_EV_THREAD_EXIT, 0, 0, 0, 1 * MS);
		e[n++] = ev(7 * MS, 9, SB_EV_THREAD_EXIT, 0, 0, 0, 1 * MS);
	}
	n = two_children(e, n, 0, 10);
	n = joins(e, n, 8 * MS, 4);
	n = two_children(e, n, 8 * MS, 12);
	n = joins(e, n, 14 * MS, 2);
	CHECK(feed_stats(e, n, &st) == 0, "finish");
	CHECK(st.instances == 1, "seen %d: one whole instance, %llu", seen_before,
	      (unsigned long long)st.instances);
	CHECK(st.partial_instances == 1, "seen %d: the round cut by the attach is partial, %llu",
	      seen_before, (unsigned long long)st.partial_instances);
	CHECK(st.exits_unjoined == (seen_before ? 2 : 0), "seen %d: unjoined exits %llu",
	      seen_before, (unsigned long long)st.exits_unjoined);
}

/*
 * Attached before main's first round: main joins as many as it made,
 * its first instance is whole (as with `record -p` on a program that
 * starts its threads later).  That instance is held until main's next
 * round, exit or the end (first_join_decide).  With renewed, main (7,
 * then not the initial thread) loses its exit record and a new thread
 * starts on tid 7: the held instance is decided then, whole, not left
 * to show as unfinished.
 */
static void attach_before_round(bool renewed)
{
	struct sb_builder_stats st;
	struct sb_event e[40];
	size_t n = 0;

	e[n++] = ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, renewed ? 0 : 1, 0);
	n = two_children(e, n, 0, 10);
	n = joins(e, n, 8 * MS, 2);
	if (renewed)
		e[n++] = ev(20 * MS, 7, SB_EV_THREAD_START, SB_START_TID_REUSED, 0, 5, 0);
	CHECK(feed_stats(e, n, &st) == 0, "finish");
	CHECK(st.instances == 1 && st.unfinished_instances == 0 && st.partial_instances == 0,
	      "renewed %d: whole first instance: instances %llu unfinished %llu partial %llu",
	      renewed, (unsigned long long)st.instances,
	      (unsigned long long)st.unfinished_instances,
	      (unsigned long long)st.partial_instances);
}

/*
 * Thread 8, seen at attach (no life), waits at a barrier; its exit record
 * is lost and a new thread starts on tid 8 (the recorder says so with
 * SB_START_TID_REUSED).  The new thread is not in the old one's barrier:
 * it is a reused tid, and the old sync stack is gone, so its barrier exit
 * matches nothing.
 */
static void test_seen_tid_reused(void)
{
	struct sb_builder_stats st;
	struct sb_event e[] = {
		ev(0, 7, SB_EV_THREAD_SEEN, 0, 0, 1, 0),
		ev(0, 8, SB_EV_THREAD_SEEN, 0, 0, 0, 0),
		ev(1 * MS, 8, SB_EV_SYNC_ENTER, SB_PRIM_BARRIER, 0x444, 0xb0, 0),
		ev(3 * MS, 8, SB_EV_THREAD_START, SB_START_TID_REUSED, 0, 7, 0),
		ev(4 * MS, 8, SB_EV_SYNC_EXIT, SB_PRIM_BARRIER, 0, 0xb0, 0),
	};

	CHECK(feed_stats(e, sizeof(e) / sizeof(e[0]), &st) == 0, "finish");
	CHECK(st.tids_reused == 1, "seen tid reused %llu", (unsigned long long)st.tids_reused);
	CHECK(st.unmatched == 1, "old barrier entry dropped, exit unmatched %llu",
	      (unsigned long long)st.unmatched);
}

int main(void)
{
	test_seen_tid_reused();
	attach_mid_round(true);
	attach_mid_round(false);
	attach_before_round(false);
	attach_before_round(true);
	test_reused_tids();
	test_unjoined_exits();
	return CHECK_DONE("test_churn");
}
