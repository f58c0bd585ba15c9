// SPDX-License-Identifier: MIT
/*
 * Sampled mode, a library calling the program back (causes_callee.c,
 * sb_causes_callee_leader): `for (h = 0; h < 2 + (me % 3 == 1 ? 5 : 0);
 * h++) for (r = 0; r < 1636; r++) { memcpy(q, t, 160); qsort(q, 40, 4,
 * cmp_u); }` (blind seed AA p052, clang -O3).  The qsort call leads (its
 * block holds the library's samples and the comparator's); cmp_u,
 * straight-line code no call edge leads into, carries most of its
 * variation.  A comparator takes as long each time: its samples differ by
 * how often qsort was called, which the loops around the call decided.
 *
 *   worker: B0 entry (70) -> B1 iteration header (72) -> B2 hold loop
 *   header (74) -> B3 memcpy call (76, a library: no CALL edge; the
 *   fixed loop's header) -> B4 qsort call (77, entered by B3's return)
 *   -> B5 fixed latch (75, SB_BLOCK_CONST_BOUND, back to B3) -> B6 hold
 *   latch (74, back to B2) -> B7 barrier call (82, B10) -> B8 iteration
 *   latch (72, back to B1) -> B9 return (85).
 *   barrier: B10.  cmp_u: B11 (57); with `loop`, a loop of its own
 *   (B11 -> B12 back to B11, a search the library calls: the callback's
 *   data decides how long it runs).
 *
 * Thread t goes round the hold loop 2 or 7 times (t % 3 == 1): two
 * samples of cmp_u and one of qsort's own each time.  Known answers: the
 * hold loop's latch, B6's branch (0x106c), not cmp_u; with cmp_u a loop,
 * the callee's loop (0x2010-0x2030), as a call through a pointer to a
 * search is placed.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 4
#define NI 100
#define NW 10
#define HOLD_LATCH 0x106c

static struct sb_cfg *graph(bool loop)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_SEQUENTIAL },
		{ 2, 3, SB_EDGE_SEQUENTIAL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 5, SB_EDGE_CALL_RETURN },
		{ 5, 3, SB_EDGE_TAKEN }, { 5, 6, SB_EDGE_FALLTHROUGH },
		{ 6, 2, SB_EDGE_TAKEN }, { 6, 7, SB_EDGE_FALLTHROUGH },
		{ 7, 10, SB_EDGE_CALL }, { 7, 8, SB_EDGE_CALL_RETURN },
		{ 8, 1, SB_EDGE_TAKEN }, { 8, 9, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NW);

	g->has_flags = g->has_tail_calls = g->has_indirect_tails = true;
	sbt_add_leaf(g, 1, "barrier", 0x2000);
	if (loop) {
		sb_cfg_add_func(g, "cmp_u", 0x2010, 0x2030);
		sbt_add_blocks(g, 2, 0x2010, 2);
	} else {
		sbt_add_leaf(g, 2, "cmp_u", 0x2010);
	}
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (loop) {
		sb_cfg_add_edge(g, 11, 12, SB_EDGE_SEQUENTIAL);
		sb_cfg_add_edge(g, 12, 11, SB_EDGE_TAKEN);
	}
	g->blocks[5].flags = SB_BLOCK_CONST_BOUND;
	sb_cfg_finalize(g);
	return g;
}

static unsigned trips(uint32_t t)
{
	return t % 3 == 1 ? 7 : 2;
}

static struct sb_profile *profile(bool loop)
{
	/* sampled: the qsort call B4, cmp_u's B11, the barrier call B7, the
	 * memcpy call B3; named without samples: the rest of worker */
	static const int ev[4] = { 4, 11, 7, 3 }, named[6] = { 1, 2, 5, 6, 8, 9 };
	static const unsigned ln[13] = { 70, 72, 74, 76, 77, 75, 74, 82, 72, 85, 30, 57, 58 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph(loop));
	sec_loc = (uint32_t)sbt_wloc(p, 0x107c, 82);
	for (int e = 0; e < 4; e++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)ev[e], NW), ln[ev[e]], ln[ev[e]],
				      true);
	for (int k = 0; k < 6; k++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)named[k], NW), ln[named[k]],
				      ln[named[k]], false);
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 3000000ull * trips(t) + 10000 * ((t + (uint32_t)i) % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 4; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 3 * trips(t) : e == 1 ? 2 * trips(t)
				       : e == 2 ? (t + (uint32_t)i) % 4 == 0 : (t + (uint32_t)i) % 2;
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	for (int loop = 0; loop < 2; loop++) {
		struct sb_profile *p = profile(loop);
		struct sb_causes c;
		char err[256] = "";
		int ret = sbt_compute(p, &c, err, sizeof(err));

		sb_profile_free(p);
		CHECK(ret == 0, "compute (loop %d): %s", loop, err);
		if (ret)
			continue;
		CHECK(c.n >= 1 && !c.exact_counts, "samples, causes (loop %d)", loop);
		if (c.n >= 1 && !loop)
			CHECK(c.c[0].addr == HOLD_LATCH,
			      "a comparator's time: at the hold loop around the library call, "
			      "not in the comparator (%#llx)", (unsigned long long)c.c[0].addr);
		else if (c.n >= 1)
			CHECK(c.c[0].addr >= 0x2010 && c.c[0].addr < 0x2030,
			      "a callback with a loop of its own: in it (%#llx)",
			      (unsigned long long)c.c[0].addr);
		sb_causes_free(&c);
	}
	return CHECK_DONE("test_causes_callback");
}
