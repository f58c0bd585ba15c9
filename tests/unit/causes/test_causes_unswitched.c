// SPDX-License-Identifier: MIT
/*
 * Sampled mode, root-only work whose entering branch is outside the
 * work's own loop (causes_entered.c).
 *
 * copies: gcc and clang -O3 unswitch `for (it) { common(); if (rank ==
 * 0) for (q) work; barrier; }`: the test runs once, before two copies of
 * the loop, and the work loop is entered after common() returns, by no
 * branch of its own.
 *   B0 entry -> B1 test (line 60) -(fall)-> B2;  B1 -(taken)-> B6 setup
 *   of copy two (58: `xor; jmp`) -(jump)-> B7.
 *   copy one: B2 call common (59) -> B3 barrier call (70) -> B4 latch
 *   (58, back to B2) -> B5 `jmp` -> B11 return.
 *   copy two: B7 call common (59) -> B8 work loop (63, back to itself)
 *   -> B9 barrier call (70) -> B10 latch (58, back to B7) -> B11.
 *   common: B12, barrier: B13.
 * Thread 0 runs copy two, the others copy one.  Known answer: the test,
 * at B1's branch (0x101c): the work loop has no entering branch, the
 * copy around it was never entered by the others either, and its entry
 * is the setup block the test's taken edge leads to.
 *
 * region: copies as an OpenMP region's body (gcc -O3, p003 of the
 * accuracy suite): worker is run through a pointer (no call edge enters
 * it), on thread 0 under main's call into the runtime, B15 (line 49,
 * holding all of thread 0's samples), the only thread with any (the
 * others wait off CPU).  Main's B14 calls for the thread count on the
 * same line, with no samples in the section.  Known answer: still the
 * test (B1), not main's line: one call on a line is no set of copies of
 * a call (causes_callee.c), whatever other calls the line has.
 *   main: B14 call out -> B15 call out -> B16 return.
 *
 * inloop: the guard inside the loop that repeats the section (`for (it)
 * { if (!self) run_part(); barrier; }`, gcc -O2 entering at the test).
 *   B0 entry test (48) -(taken)-> B7 return;  -(fall)-> B1 `jmp` -> B4.
 *   B2 barrier call (52) -> B3 latch (48) -(taken)-> B7, -(fall, back)->
 *   B4 test (49) -(taken)-> B2;  -(fall)-> B5 call run_part (50, B8) ->
 *   B6 `jmp` -> B2.
 * Thread 0 alone samples the loop (the others wait at the barrier, off
 * CPU).  The loop repeats the section: no thread "did not enter" it.
 * Known answer: the test at B4's branch (0x104c), never the entry test
 * before the loop (B0, line 48).  The same when the section closes inside
 * the barrier function B2 calls (a condvar barrier `rendezvous()`: the
 * section's sync is in B9, not in the loop, which calls it).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100

static struct sb_cfg *copies_graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL },
		{ 1, 2, SB_EDGE_FALLTHROUGH }, { 1, 6, SB_EDGE_TAKEN },
		{ 2, 12, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 13, SB_EDGE_CALL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 2, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH }, { 5, 11, SB_EDGE_JUMP },
		{ 6, 7, SB_EDGE_JUMP },
		{ 7, 12, SB_EDGE_CALL }, { 7, 8, SB_EDGE_CALL_RETURN },
		{ 8, 8, SB_EDGE_TAKEN }, { 8, 9, SB_EDGE_FALLTHROUGH },
		{ 9, 13, SB_EDGE_CALL }, { 9, 10, SB_EDGE_CALL_RETURN },
		{ 10, 7, SB_EDGE_TAKEN }, { 10, 11, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	g->has_flags = true;
	sb_cfg_add_func(g, "worker", 0x1000, 0x10c0);
	sbt_add_blocks(g, 0, 0x1000, 12);
	sbt_add_leaf(g, 1, "common", 0x2000);
	sbt_add_leaf(g, 2, "barrier", 0x2010);
	sb_cfg_add_func(g, "main", 0x2020, 0x2050);
	sbt_add_blocks(g, 3, 0x2020, 3);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_add_edge(g, 14, 15, SB_EDGE_CALL_RETURN);     /* omp_get_max_threads@plt */
	sb_cfg_add_edge(g, 15, 16, SB_EDGE_CALL_RETURN);     /* GOMP_parallel@plt */
	sb_cfg_finalize(g);
	return g;
}

static struct sb_cfg *inloop_graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 7, SB_EDGE_TAKEN }, { 0, 1, SB_EDGE_FALLTHROUGH }, { 1, 4, SB_EDGE_JUMP },
		{ 2, 9, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 7, SB_EDGE_TAKEN }, { 3, 4, SB_EDGE_FALLTHROUGH },
		{ 4, 2, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 5, 8, SB_EDGE_CALL }, { 5, 6, SB_EDGE_CALL_RETURN }, { 6, 2, SB_EDGE_JUMP },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	g->has_flags = true;
	sb_cfg_add_func(g, "worker", 0x1000, 0x1080);
	sbt_add_blocks(g, 0, 0x1000, 8);
	sbt_add_leaf(g, 1, "run_part", 0x2000);
	sbt_add_leaf(g, 2, "barrier", 0x2010);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* A sampled block of worker or of the callees at 0x2000. */
static void block(struct sb_profile *p, int b, unsigned line, int nworker)
{
	sbt_add_sampled_block(p, sbt_block_addr((uint64_t)b, (uint64_t)nworker), line, line, true);
}

/* The profile: events on blocks ev[] (lines ln[]), thread t's samples in
 * event e per instance from rate(e, t, i); the other blocks of worker
 * named without samples (lines wln[]), as the recorder names every block
 * of a sampled function. */
static struct sb_profile *profile(struct sb_cfg *g, int nworker, const unsigned *wln,
				  const int *ev, const unsigned *ln, uint32_t nev,
				  uint64_t sync_addr, unsigned sync_line,
				  uint64_t (*rate)(uint32_t, uint32_t, int))
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, sync_addr, sync_line);
	for (uint32_t e = 0; e < nev; e++)
		block(p, ev[e], ln[e], nworker);
	for (int b = 0; b < nworker; b++) {
		bool named = false;

		for (uint32_t e = 0; e < nev; e++)
			named |= ev[e] == b;
		if (!named)
			block(p, b, wln[b], nworker);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = t ? 2000000 + 10000 * ((t + (uint32_t)i) % 3) : 7000000;
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < nev; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = rate(e, t, i);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* copies: events B2 (copy one's common call), B7 (copy two's), B8 (the
 * work loop), common's B12 */
static uint64_t copies_rate(uint32_t e, uint32_t t, int i)
{
	switch (e) {
	case 0: return t ? 2 : 0;
	case 1: return t ? 0 : 2;
	case 2: return t ? 0 : 5;
	default: return 2 + (uint64_t)((t + (uint32_t)i) % 2);
	}
}

/* region: the events of copies, then main's B14 and B15; thread 0's
 * alone, B15 holding them all (B7's 2, common's inside them, B8's 5) */
static uint64_t region_rate(uint32_t e, uint32_t t, int i)
{
	if (t)
		return 0;
	switch (e) {
	case 0:
	case 4: return 0;
	case 5: return 7;
	default: return copies_rate(e, t, i);
	}
}

/* inloop: events B5 (the call of run_part), run_part's B8, B2 (the
 * barrier call: thread 0 arrives last and leaves at once, a rare sample;
 * the others wait off CPU, none) */
static uint64_t inloop_rate(uint32_t e, uint32_t t, int i)
{
	switch (e) {
	case 0:
	case 1: return t ? 0 : 5;
	default: return !t && i % 7 == 0;
	}
}

/* The first cause's address; *in_main (when asked): how many causes,
 * shown or kept under one, lie in main (0x2020..0x2050). */
static unsigned long long top(struct sb_profile *p, const char *what, int *in_main)
{
	unsigned long long a = 0;
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));

	sb_profile_free(p);
	CHECK(ret == 0, "%s: compute: %s", what, err);
	if (ret)
		return 0;
	CHECK(!c.exact_counts && c.nsections_analyzed == 1, "%s: samples, one section", what);
	if (c.n)
		a = c.c[0].addr;
	for (size_t k = 0; in_main && k < c.n; k++)
		*in_main += c.c[k].addr >= 0x2020 && c.c[k].addr < 0x2050;
	sb_causes_free(&c);
	return a;
}

int main(void)
{
	static const int cev[4] = { 2, 7, 8, 12 };
	static const unsigned cln[4] = { 59, 59, 63, 45 };
	static const unsigned cwln[12] = { 55, 60, 59, 70, 58, 58, 58, 59, 63, 70, 58, 72 };
	static const int rev[6] = { 2, 7, 8, 12, 14, 15 };
	static const unsigned rln[6] = { 59, 59, 63, 45, 49, 49 };
	static const int iev[3] = { 5, 8, 2 };
	static const unsigned iln[3] = { 50, 30, 52 };
	static const unsigned iwln[8] = { 48, 48, 52, 48, 49, 50, 50, 55 };
	unsigned long long a;
	int in_main = 0;

	a = top(profile(copies_graph(), 12, cwln, cev, cln, 4, 0x103c, 70, copies_rate), "copies",
		NULL);
	CHECK(a == 0x101c, "copies: the unswitched test enters the work (B1's branch), %#llx", a);
	a = top(profile(copies_graph(), 12, cwln, rev, rln, 6, 0x103c, 70, region_rate), "region",
		&in_main);
	CHECK(a == 0x101c && !in_main, "region: the unswitched test, and main's call into the "
	      "runtime on a line with another call nowhere: %#llx, %d in main", a, in_main);
	a = top(profile(inloop_graph(), 8, iwln, iev, iln, 3, 0x102c, 52, inloop_rate), "inloop",
		NULL);
	CHECK(a == 0x104c, "inloop: the test inside the section's loop (B4's branch), %#llx", a);
	a = top(profile(inloop_graph(), 8, iwln, iev, iln, 3, 0x201c, 31, inloop_rate), "infunc",
		NULL);
	CHECK(a == 0x104c, "inloop, the section's sync in the barrier function the loop calls: "
	      "the test inside the loop (B4's branch), %#llx", a);
	return CHECK_DONE("test_causes_unswitched");
}
