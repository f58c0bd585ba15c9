// SPDX-License-Identifier: MIT
/*
 * test_coherence_regions: regions from sync records (coherence_regions.c)
 * on hand-made thread histories: rounds that never overlap in time (more
 * threads than cores) are still one region per barrier round; a barrier
 * cuts even where a thread that never waits runs through it, a condvar
 * wake that such a thread runs through does not; an
 * OpenMP region's fork and end cut, its idle workers do not; a condvar
 * wait is left at the broadcast, a join at the joined thread's end, and
 * both cut regions (create, join; a mutex + condvar barrier's rounds).
 */
#include <string.h>

#include "check.h"
#include "coherence/coherence_regions.h"
#include "sbpf_trace.h"

/* A thread's history: 'r' resume at t, 'a' a record, 's' a sync (kind,
 * obj) at t; records counted as the driver counts them. */
struct ev {
	char what;
	uint64_t t;
	uint32_t kind;
	uint64_t obj;
};

static void feed(struct sb_coh_runs *rs, uint32_t thread, const struct ev *e, size_t n)
{
	uint64_t recs = 0;

	CHECK(sb_coh_runs_thread(rs, thread) == 0, "thread");
	for (size_t i = 0; i < n; i++) {
		recs++;
		if (e[i].what == 'r')
			sb_coh_runs_resume(rs, e[i].t);
		else if (e[i].what == 'a')
			sb_coh_runs_record(rs);
		else
			CHECK(sb_coh_runs_sync(rs, e[i].t, e[i].kind, e[i].obj, recs) == 0, "sync");
	}
	sb_coh_runs_end_thread(rs, recs);
}

/* The region of thread t's run that ends with its record number last. */
static long region_of(const struct sb_coh_runs *rs, uint32_t t, uint64_t last)
{
	for (size_t i = 0; i < rs->nruns; i++)
		if (rs->runs[i].thread == t && rs->runs[i].last == last)
			return (long)rs->runs[i].region;
	return -1;
}

#define R(t) { 'r', t, 0, 0 }
#define A { 'a', 0, 0, 0 }
#define S(t, k, o) { 's', t, k, o }
#define B(t) S(t, SB_TSYNC_BARRIER, 0xb)
#define END(t) S(t, SB_TSYNC_THREAD_END, 0)

static void sequential_rounds(void)
{
	/* 2 CPUs, 3 threads: thread 2's round 0 starts after thread 0 and 1
	 * arrived; the barrier is left at 30 (thread 2's arrival), round 1
	 * runs one thread after another again. */
	const struct ev t0[] = { R(1), A, B(10), R(31), A, B(40), END(60) };
	const struct ev t1[] = { R(2), A, B(12), R(41), A, B(50), END(61) };
	const struct ev t2[] = { R(20), A, B(30), R(51), A, B(55), END(62) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, t0, 7);
	feed(&rs, 1, t1, 7);
	feed(&rs, 2, t2, 7);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0, "regions");
	CHECK(n == 2, "%lu regions, want 2 (the ends record nothing)", (unsigned long)n);
	for (uint32_t t = 0; t < 3; t++) {
		CHECK(region_of(&rs, t, 3) == 0, "thread %u round 0: region %ld", t,
		      region_of(&rs, t, 3));
		CHECK(region_of(&rs, t, 6) == 1, "thread %u round 1: region %ld", t,
		      region_of(&rs, t, 6));
	}
	sb_coh_runs_free(&rs);
}

static void spanned_barrier(void)
{
	/* threads 0 and 1 meet at barrier 0xb at 10 and 12; thread 2 records
	 * from 5 to 30 without waiting: the barrier still cuts (thread 2's
	 * run goes to the region it starts in), as it must for a creator
	 * descheduled between its last create and its join while the
	 * workers go through their rounds. */
	const struct ev t0[] = { R(1), A, B(10), R(13), A, END(20) };
	const struct ev t1[] = { R(2), A, B(12), R(14), A, END(21) };
	const struct ev t2[] = { R(5), A, A, END(30) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, t0, 6);
	feed(&rs, 1, t1, 6);
	feed(&rs, 2, t2, 4);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0 && n == 2, "%lu regions, want 2", (unsigned long)n);
	CHECK(region_of(&rs, 0, 3) == 0 && region_of(&rs, 1, 6) == 1 && region_of(&rs, 2, 4) == 0,
	      "rounds 0 and 1, the unsynchronized run in 0: %ld %ld %ld", region_of(&rs, 0, 3),
	      region_of(&rs, 1, 6), region_of(&rs, 2, 4));
	sb_coh_runs_free(&rs);
}

static void spanned_join(void)
{
	/* worker 0 waits on a condvar (5) that worker 1 wakes at 9, while
	 * thread 2 records from 1 to 20: the wake is no boundary. */
	const struct ev t0[] = { R(1), A, S(5, SB_TSYNC_COND_WAIT, 0xc), R(10), A, END(15) };
	const struct ev t1[] = { R(2), A, S(9, SB_TSYNC_COND_WAKE, 0xc), R(9), A, END(16) };
	const struct ev t2[] = { R(1), A, A, END(20) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, t0, 6);
	feed(&rs, 1, t1, 6);
	feed(&rs, 2, t2, 4);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0 && n == 1, "%lu regions, want 1", (unsigned long)n);
	sb_coh_runs_free(&rs);
}

static void omp_fork_and_end(void)
{
	/* master: serial (a), fork region 1 at 10, task 11..20, task end 20;
	 * worker: idle until its task 12..25, end 25; master then serial */
	const struct ev m[] = {
		R(1), A, S(10, SB_TSYNC_OMP_FORK, 1),
		R(11), S(11, SB_TSYNC_OMP_TASK, 1), R(11), A,
		S(20, SB_TSYNC_OMP_TASK_END, 1), R(26), A, END(40) };
	const struct ev w[] = {
		R(3), S(12, SB_TSYNC_OMP_TASK, 1), R(12), A,
		S(25, SB_TSYNC_OMP_TASK_END, 1) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, m, 11);
	feed(&rs, 1, w, 5);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0 && n == 3, "%lu regions, want 3", (unsigned long)n);
	CHECK(region_of(&rs, 0, 3) == 0 && region_of(&rs, 0, 8) == 1 && region_of(&rs, 1, 5) == 1 &&
	      region_of(&rs, 0, 11) == 2, "serial 0, region 1, serial 2: %ld %ld %ld %ld",
	      region_of(&rs, 0, 3), region_of(&rs, 0, 8), region_of(&rs, 1, 5),
	      region_of(&rs, 0, 11));
	sb_coh_runs_free(&rs);
}

static void cond_and_join(void)
{
	/* thread 1 waits on cond 0xc at 5, thread 0 broadcasts at 9: the
	 * wait is left at 9.  Thread 0 joins thread 1 (pthread_t 0x71) at
	 * 10, which ends at 30: the join is left at 30. */
	const struct ev t0[] = { R(1), A, S(9, SB_TSYNC_COND_WAKE, 0xc),
				 R(9), S(10, SB_TSYNC_JOIN, 0x71), R(31),
				 A, END(40) };
	const struct ev t1[] = { R(2), A, S(5, SB_TSYNC_COND_WAIT, 0xc),
				 R(15), A, S(30, SB_TSYNC_THREAD_END, 0x71) };
	struct sb_coh_runs rs;
	uint64_t n = 0;
	bool wait_left = false, join_left = false;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, t0, 8);
	feed(&rs, 1, t1, 6);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0, "regions");
	for (size_t i = 0; i < rs.nruns; i++) {
		wait_left |= rs.runs[i].thread == 1 && rs.runs[i].last == 6 && rs.runs[i].start == 9;
		join_left |= rs.runs[i].thread == 0 && rs.runs[i].last == 8 && rs.runs[i].start == 30;
	}
	CHECK(wait_left, "the condvar wait is left at the broadcast (9)");
	CHECK(join_left, "the join is left at the joined thread's end (30)");
	sb_coh_runs_free(&rs);
}

static void fork_join(void)
{
	/* main records, creates the worker at 10, joins it at 12 (the
	 * worker, pthread_t 0x71, records from 11 to its end at 30), then
	 * records again: three regions, in that order. */
	const struct ev m[] = { R(1), A, S(10, SB_TSYNC_CREATE, 0), R(10), S(12, SB_TSYNC_JOIN, 0x71),
				R(31), A, END(40) };
	const struct ev w[] = { R(11), A, S(30, SB_TSYNC_THREAD_END, 0x71) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, m, 8);
	feed(&rs, 1, w, 3);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0 && n == 3, "%lu regions, want 3", (unsigned long)n);
	CHECK(region_of(&rs, 0, 3) == 0 && region_of(&rs, 1, 3) == 1 && region_of(&rs, 0, 8) == 2,
	      "set-up 0, worker 1, after the join 2: %ld %ld %ld", region_of(&rs, 0, 3),
	      region_of(&rs, 1, 3), region_of(&rs, 0, 8));
	sb_coh_runs_free(&rs);
}

static void condvar_barrier(void)
{
	/* two threads, three rounds of a mutex + condvar barrier on 0xc:
	 * thread 0 arrives first and waits, thread 1 broadcasts */
	const struct ev t0[] = { R(1), A, S(5, SB_TSYNC_COND_WAIT, 0xc), R(11), A,
				 S(15, SB_TSYNC_COND_WAIT, 0xc), R(21), A,
				 S(25, SB_TSYNC_COND_WAIT, 0xc), R(31), END(32) };
	const struct ev t1[] = { R(2), A, S(10, SB_TSYNC_COND_WAKE, 0xc), R(10), A,
				 S(20, SB_TSYNC_COND_WAKE, 0xc), R(20), A,
				 S(30, SB_TSYNC_COND_WAKE, 0xc), R(30), END(33) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, t0, 11);
	feed(&rs, 1, t1, 11);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0 && n == 3, "%lu regions, want 3", (unsigned long)n);
	for (uint32_t t = 0; t < 2; t++)
		CHECK(region_of(&rs, t, 3) == 0 && region_of(&rs, t, 6) == 1 &&
		      region_of(&rs, t, 9) == 2, "thread %u: rounds in regions %ld %ld %ld", t,
		      region_of(&rs, t, 3), region_of(&rs, t, 6), region_of(&rs, t, 9));
	sb_coh_runs_free(&rs);
}

static void created_one_by_one(void)
{
	/* main sets up (region 0), creates worker 0 at 10 and worker 1 at
	 * 20; worker 0 ends its round at 12, before worker 1 exists: still
	 * one round, one region; the second create is no boundary. */
	const struct ev m[] = { R(1), A, S(10, SB_TSYNC_CREATE, 0), R(10),
				S(20, SB_TSYNC_CREATE, 0), R(20), S(21, SB_TSYNC_JOIN, 0x71), R(51),
				END(52) };
	const struct ev w0[] = { R(11), A, B(12), R(30), A, B(40), S(41, SB_TSYNC_THREAD_END, 0x71) };
	const struct ev w1[] = { R(21), A, B(30), R(31), A, B(45), S(46, SB_TSYNC_THREAD_END, 0x72) };
	struct sb_coh_runs rs;
	uint64_t n = 0;

	memset(&rs, 0, sizeof(rs));
	feed(&rs, 0, m, 9);
	feed(&rs, 1, w0, 7);
	feed(&rs, 2, w1, 7);
	CHECK(sb_coh_runs_regions(&rs, &n) == 0, "regions");
	CHECK(region_of(&rs, 0, 3) == 0 && region_of(&rs, 1, 3) == 1 && region_of(&rs, 2, 3) == 1 &&
	      region_of(&rs, 1, 6) == 2 && region_of(&rs, 2, 6) == 2,
	      "set-up 0, round 0 of both 1, round 1 of both 2: %ld %ld %ld %ld %ld",
	      region_of(&rs, 0, 3), region_of(&rs, 1, 3), region_of(&rs, 2, 3),
	      region_of(&rs, 1, 6), region_of(&rs, 2, 6));
	sb_coh_runs_free(&rs);
}

int main(void)
{
	created_one_by_one();
	fork_join();
	condvar_barrier();
	sequential_rounds();
	spanned_barrier();
	spanned_join();
	omp_fork_and_end();
	cond_and_join();
	return CHECK_DONE("test_coherence_regions");
}
