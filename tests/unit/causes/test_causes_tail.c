// SPDX-License-Identifier: MIT
/*
 * Sampled mode, root-only work reached through tail calls
 * (causes_tail.c): clang -O2 compiles `for (it) { local(); if (self ==
 * 0) dispatch(n); barrier; }`, dispatch being `return work(n);`, into
 * tail jumps, so no sample's stack holds the test's side of the call.
 *
 *   worker: B0 entry -> B1 call local (59, B7) -> B2 test (63)
 *     -(taken)-> B6;  B2 -(fall)-> B3 barrier call (66, B9) -> B4 latch
 *     (61, back to B1) -> B5 return.  B6: `jmp dispatch` (64), a tail
 *     call (SB_BLOCK_TAIL_CALL, a CALL edge to B8, no other edge: the
 *     callee returns to worker's caller).
 *   local: B7.  dispatch: B8 `jmp work` (50), a tail call.
 *   work: B10 loop header (18) -> B11 body and latch (19, back to B10)
 *     -> B12 return.  barrier: B9.
 *
 * Thread 0 alone runs work (5 samples per instance), every thread
 * samples local.  Known answer: the test, B2's branch (0x102c), shown
 * first; work's own placement, its loop, listed as the alternative (it
 * may have run with nothing to do on the others: samples cannot tell),
 * not settled.  Without the tail-call edges (a graph of version 3, the
 * flag unknown) the cause stays in work, as before.
 *
 * Shared: B1 calls work itself (every thread, 2 samples each instance,
 * which B1's call site holds too) instead of local, and thread 0 runs it
 * again through the tail calls (5 more, which no call site holds).  Known
 * answer: the same, B2's branch first, work's loop its alternative.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100
#define NW 7

static struct sb_cfg *graph(bool tail, bool shared)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_CALL_RETURN },
		{ 2, 6, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_FALLTHROUGH },
		{ 3, 9, SB_EDGE_CALL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 1, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 10, 11, SB_EDGE_SEQUENTIAL }, { 11, 10, SB_EDGE_TAKEN },
		{ 11, 12, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NW);

	g->has_flags = true;
	g->has_tail_calls = tail;
	sbt_add_leaf(g, 1, "local", 0x2000);
	sbt_add_leaf(g, 2, "dispatch", 0x2010);
	sbt_add_leaf(g, 3, "barrier", 0x2020);
	sb_cfg_add_func(g, "work", 0x2030, 0x2060);
	sbt_add_blocks(g, 4, 0x2030, 3);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_add_edge(g, 1, shared ? 10 : 7, SB_EDGE_CALL);
	if (tail) {
		sb_cfg_add_edge(g, 6, 8, SB_EDGE_CALL);
		sb_cfg_add_edge(g, 8, 10, SB_EDGE_CALL);
		g->blocks[6].flags = g->blocks[8].flags = SB_BLOCK_TAIL_CALL;
	}
	sb_cfg_finalize(g);
	return g;
}

static struct sb_profile *profile(bool tail, bool shared)
{
	/* sampled: local's B7 (shared: B1, the direct call of work), work's
	 * body B11, the barrier call B3; named without samples: the rest of
	 * worker and work */
	const int ev[3] = { shared ? 1 : 7, 11, 3 };
	static const unsigned ln[13] = { 55, 59, 63, 66, 61, 70, 64, 40, 50, 90, 18, 19, 21 };
	const int named[8] = { 0, shared ? 7 : 1, 2, 4, 5, 6, 10, 12 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph(tail, shared));
	sec_loc = (uint32_t)sbt_wloc(p, 0x103c, 66);
	for (int e = 0; e < 3; e++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)ev[e], NW), ln[ev[e]], ln[ev[e]],
				      true);
	for (int k = 0; k < 8; k++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)named[k], NW), ln[named[k]],
				      ln[named[k]], false);
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = (t ? 2000000 : 7000000) + 10000 * ((t + (uint32_t)i) % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 3; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 2 : e == 1 ? (shared ? 2 : 0) + (t ? 0 : 5)
							   : (!t && i % 5 == 0);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	for (int run = 2; run >= 0; run--) {
		bool tail = run >= 1, shared = run == 2;
		struct sb_profile *p = profile(tail, shared);
		struct sb_causes c;
		char err[256] = "";
		int ret = sbt_compute(p, &c, err, sizeof(err));

		sb_profile_free(p);
		CHECK(ret == 0, "compute (tail %d): %s", tail, err);
		if (ret)
			continue;
		CHECK(c.n >= 1 && !c.exact_counts, "samples, causes (tail %d)", tail);
		if (c.n >= 1 && tail) {
			CHECK(c.c[0].addr == 0x102c && c.c[0].nalternatives == 1,
			      "tail calls: the test that enters them (B2's branch), one "
			      "alternative (%#llx, %u)", (unsigned long long)c.c[0].addr, c.c[0].nalternatives);
			CHECK(c.n >= 2 && c.c[1].alternative_of == c.c[0].rank &&
			      c.c[1].addr >= 0x2030 && c.c[1].addr < 0x2060,
			      "tail calls: work's own placement is the alternative (%#llx)",
			      c.n >= 2 ? (unsigned long long)c.c[1].addr : 0ULL);
		} else if (c.n >= 1) {
			CHECK(c.c[0].addr >= 0x2030 && c.c[0].addr < 0x2060,
			      "no tail-call edges: the cause stays in work (%#llx)",
			      (unsigned long long)c.c[0].addr);
		}
		sb_causes_free(&c);
	}
	return CHECK_DONE("test_causes_tail");
}
