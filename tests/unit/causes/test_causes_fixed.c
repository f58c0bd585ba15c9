// SPDX-License-Identifier: MIT
/*
 * Sampled mode, a loop of fixed trips (causes_locate.c, locate_fixed_trips):
 * `for (r = 0; r < 1549; r++) work` inside a loop or behind a test whose
 * count differs between threads.  Samples of the work grow with how often
 * the fixed loop is entered; only its latch's constant bound
 * (SB_BLOCK_CONST_BOUND) says that its own trips are not what differs.
 *
 *   nest:  B0 entry -> B1 iteration header (72) -> B2 outer header (75)
 *          -> B3 work (79; or a call of copy, B10) -> B4 inner latch (76,
 *          back to B3) -> B5 outer latch (75, back to B2) -> B6 barrier
 *          call (84, B9) -> B7 iteration latch (72, back to B1) -> B8.
 *   guard: the same, but B2 is a test (75) that enters the fixed loop or
 *          jumps to B5, and B5 (83) is straight code, no latch.
 *   alone: no outer loop, no test: B2 and B5 straight code.
 *
 * Known answers.  nest: thread t goes round the outer loop 2 or 7 times
 * (t % 4 == 1), one sample of work each: with B4 flagged the cause is
 * the outer latch's branch (0x105c), without the flag the inner latch's
 * (0x104c), as before.  guard: every thread enters in some instances
 * (so causes_entered.c's "never entered" does not apply), odd threads in
 * all: flagged, the cause is the test's branch (0x102c).  alone: every
 * thread enters once, its call takes longer in higher threads: flagged,
 * the cause is the call (0x103c), not the latch; without the
 * flag a loop around a call stays at its latch (pure work without the
 * flag already went to its guard, sb_cfg_guards of its header).
 * search: alone, but the callee is a search (find: B10 compares and
 * leaves at its key, B11 goes round or leaves at the end, B12 returns):
 * its data decides where it stops, so the cause is inside it, in find
 * (0x2010-0x2040), not at the call (blind seed W p018: a fixed loop of
 * calls through a pointer to a search).
 * unrolled: the search unrolled four times, as clang -O2 makes `for` +
 * `break` (B10, B11, B12 compare and leave, B13 compares, steps and goes
 * round, B14 returns): each block holds a quarter of the search's
 * samples, no block near half of the call's variation, the loop all of
 * it: the cause is in find (0x2010-0x2060), not at the call (blind seed
 * AB p051, 20 samples per thread).
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100
#define NB 9
#define OUTER_LATCH 0x105c
#define INNER_LATCH 0x104c
#define TEST_BRANCH 0x102c
#define WORK_CALL 0x103c

static struct sb_cfg *graph(int guard, int call, int fixed)
{
	static const struct sbt_edge edges[] = {
		{ 6, 9, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },
		{ 7, 1, SB_EDGE_TAKEN }, { 7, 8, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	g->has_flags = true;
	sb_cfg_add_func(g, "barrier", 0x2000, 0x2010);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x200c);
	if (call >= 2) {
		sb_cfg_add_func(g, "find", 0x2010, call == 3 ? 0x2060 : 0x2040);
		sbt_add_blocks(g, 2, 0x2010, call == 3 ? 5 : 3);
	} else {
		sb_cfg_add_func(g, "copy", 0x2010, 0x2020);
		sb_cfg_add_block(g, 2, 0x2010, 0x2020, 0x201c);
	}
	if (fixed)
		g->blocks[4].flags = SB_BLOCK_CONST_BOUND;
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_SEQUENTIAL);
	if (guard == 1) {
		sb_cfg_add_edge(g, 2, 3, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, 2, 5, SB_EDGE_TAKEN);
	} else {
		sb_cfg_add_edge(g, 2, 3, SB_EDGE_SEQUENTIAL);
	}
	if (call) {
		sb_cfg_add_edge(g, 3, 10, SB_EDGE_CALL);
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_CALL_RETURN);
	} else {
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_SEQUENTIAL);
	}
	sb_cfg_add_edge(g, 4, 3, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 4, 5, SB_EDGE_FALLTHROUGH);
	if (guard) {
		sb_cfg_add_edge(g, 5, 6, SB_EDGE_SEQUENTIAL);
	} else {
		sb_cfg_add_edge(g, 5, 2, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, 5, 6, SB_EDGE_FALLTHROUGH);
	}
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (call == 2) {
		sb_cfg_add_edge(g, 10, 12, SB_EDGE_TAKEN);       /* found */
		sb_cfg_add_edge(g, 10, 11, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, 11, 10, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, 11, 12, SB_EDGE_FALLTHROUGH);
	}
	for (uint32_t b = 10; call == 3 && b < 14; b++) {   /* unrolled four times */
		sb_cfg_add_edge(g, b, b < 13 ? 14 : 10, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, b, b < 13 ? b + 1 : 14, SB_EDGE_FALLTHROUGH);
	}
	sb_cfg_finalize(g);
	return g;
}

/* Samples of thread t in the work block B3 in instance i. */
static uint64_t work(int guard, int i, uint32_t t)
{
	if (guard == 2)
		return 2 + t;
	if (guard)
		return t % 2 || i % 3 == 0 ? 3 : 0;
	return t % 4 == 1 ? 7 : 2;
}

static struct sb_profile *profile(int guard, int call, int fixed)
{
	const unsigned line[NB + 6] = { 40, 72, 75, 79, 76, guard ? 83 : 75, 84, 72, 90, 60,
					70, 70, 70, 69, 71 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph(guard, call, fixed);
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events with samples: B3 (the work or its call), B6 (the barrier
	 * call), the callee's B10 (with a call; unrolled: B10 to B13 share
	 * its samples); named without samples: B2, B4, B5 (unrolled: B14) */
	static const int blk[6] = { 3, 6, 10, 2, 4, 5 }, unrolled[10] = { 3, 6, 10, 11, 12, 13,
									   2, 4, 5, 14 };
	const int *ev = call == 3 ? unrolled : blk, nev = call == 3 ? 10 : 6;
	const int nsampled = call == 3 ? 6 : 3;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x106c, 84);
	for (int e = 0; e < nev; e++) {
		uint64_t b = (uint64_t)ev[e];

		sbt_add_sampled_block(p, sbt_block_addr(b, NB), line[b], line[b], e < nsampled);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a sample of work, 0.2 ms the rest, a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * work(guard, i, t) + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < (uint32_t)(call ? nsampled : 2); e++) {
			uint64_t c[NT];

			/* unrolled: block k of the search gets (w + k) / 4 of
			 * its w samples, which sum to w */
			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 1 ? (t + (uint32_t)i) % 3 == 0
				       : call == 3 && e >= 2 ? (work(guard, i, t) + e - 2) / 4
				       : work(guard, i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* The address of the top cause, 0 when none. */
static unsigned long long top(int guard, int call, int fixed)
{
	struct sb_profile *p = profile(guard, call, fixed);
	unsigned long long a = 0;
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	sb_profile_free(p);
	CHECK(ret == 0, "compute (guard %d call %d fixed %d): %s", guard, call, fixed, err);
	if (ret)
		return 0;
	CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
	if (c.n)
		a = c.c[0].addr;
	sb_causes_free(&c);
	return a;
}

int main(void)
{
	unsigned long long a;

	for (int call = 0; call < 2; call++) {
		a = top(0, call, 1);
		CHECK(a == OUTER_LATCH, "nest (call %d), fixed inner loop: at the outer latch, %#llx",
		      call, a);
		a = top(1, call, 1);
		CHECK(a == TEST_BRANCH, "guard (call %d), fixed inner loop: at the test, %#llx",
		      call, a);
	}
	a = top(2, 1, 1);
	CHECK(a == WORK_CALL, "alone (call), fixed loop: at the call, %#llx", a);
	a = top(2, 2, 1);
	CHECK(a >= 0x2010 && a < 0x2040, "alone (call of a search), fixed loop: in the search, "
	      "%#llx", a);
	a = top(2, 3, 1);
	CHECK(a >= 0x2010 && a < 0x2060, "alone (call of an unrolled search), fixed loop: in "
	      "the search, %#llx", a);
	a = top(2, 1, 0);
	CHECK(a == INNER_LATCH, "alone (call), no flag: at the latch, %#llx", a);
	/* without the flag (a profile recorded before it), a loop around a
	 * call stays at its own latch, as before */
	a = top(0, 1, 0);
	CHECK(a == INNER_LATCH, "nest (call), no flag: at the inner latch, %#llx", a);
	a = top(1, 1, 0);
	CHECK(a == INNER_LATCH, "guard (call), no flag: at the inner latch, %#llx", a);
	return CHECK_DONE("test_causes_fixed");
}
