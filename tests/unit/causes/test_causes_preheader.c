/*
 * Sampled mode, a loop entered through a preheader by a guard that a loop
 * inside the section repeats (causes_entered.c, sb_causes_preheader):
 * `for (j) if (owns(j)) { x = K; for (q < N) work; }`, as clang -O1
 * compiles p046 of the accuracy suite: the owner test's fall-through
 * enters a block of loop constants (the preheader), which falls into a
 * one-block loop of pure computation.  Every thread enters the loop, some
 * more often than others: samples measure time, entries times trips, and
 * the guard that the j loop repeats is the decision, as it is for a loop
 * entered straight from its guard.
 *
 *   B0 entry (40) -> B1 j = 0 (41) -> B2 owner test (42) -(fall)-> B3
 *   preheader (44) -> B4 work (46; its branch 45, back to B4) -(fall)->
 *   B5 j latch (43, back to B2);  B2 -(taken)-> B5;  B5 -(fall)-> B6
 *   barrier call (52, B9) -> B7 section loop latch (41, back to B1) ->
 *   B8 return.
 *
 * Known answers.  Thread t samples the work 1 + t/2 times per instance
 * (more owned blocks): the cause is the owner test, at B2's branch
 * (0x102c), not the work block.  The same with the test on the work
 * loop's own line (its zero-trip test, `for (q < n)` compiled as a guard
 * and a latch): the loop's time is its own, and the cause stays at the
 * work's hot instruction (0x1044).  Without a j loop (the test runs once
 * per instance) test_causes_entered's TRIP case keeps it in the loop.
 */
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100
#define NB 9
#define TEST_BRANCH 0x102c
#define WORK_HOT 0x1044

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_SEQUENTIAL },
		{ 2, 3, SB_EDGE_FALLTHROUGH }, { 2, 5, SB_EDGE_TAKEN },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 4, SB_EDGE_TAKEN },
		{ 4, 5, SB_EDGE_FALLTHROUGH }, { 5, 2, SB_EDGE_TAKEN },
		{ 5, 6, SB_EDGE_FALLTHROUGH }, { 6, 9, SB_EDGE_CALL },
		{ 6, 7, SB_EDGE_CALL_RETURN }, { 7, 1, SB_EDGE_TAKEN },
		{ 7, 8, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sb_cfg_add_func(g, "barrier", 0x2000, 0x2010);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x200c);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* Samples of thread t in the work block B4 in instance i. */
static uint64_t work(int i, uint32_t t)
{
	return 2 + t / 2 + (uint64_t)((i + (int)t) % 2);
}

/* zero_trip: the owner test is on the work loop's own line (45). */
static struct sb_profile *profile(int zero_trip)
{
	unsigned line[NB + 1] = { 40, 41, 42, 44, 46, 43, 52, 41, 55, 60 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events: samples of B4 (the work) and B6 (the barrier call); the
	 * rest of worker's blocks named by the recorder, no samples */
	static const int blk[7] = { 4, 6, 1, 2, 3, 5, 7 };

	if (zero_trip)
		line[2] = 45;
	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x106c, 52);
	for (int e = 0; e < 7; e++) {
		uint64_t b = (uint64_t)blk[e];

		/* the work loop's branch is its latch's line */
		sbt_add_sampled_block(p, 0x1000 + 0x10 * b, line[b], b == 4 ? 45 : line[b], e < 2);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * work(i, t) + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 2; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? work(i, t) : (t + (uint32_t)i) % 3 == 0;
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

static uint64_t top_addr(int zero_trip)
{
	struct sb_profile *p = profile(zero_trip);
	struct sb_causes c;
	char err[256] = "";
	uint64_t a = 0;
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	sb_profile_free(p);
	CHECK(ret == 0, "compute: %d %s", ret, err);
	if (ret)
		return 0;
	CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
	CHECK(c.n > 0, "a cause found (zero_trip %d)", zero_trip);
	if (c.n)
		a = c.c[0].addr;
	sb_causes_free(&c);
	return a;
}

int main(void)
{
	uint64_t a = top_addr(0);

	CHECK(a == TEST_BRANCH, "owner test repeated by j: at its branch, not the work: %#llx",
	      (unsigned long long)a);
	a = top_addr(1);
	CHECK(a == WORK_HOT, "the loop's own zero-trip test: the work stays: %#llx",
	      (unsigned long long)a);
	return CHECK_DONE("test_causes_preheader");
}
