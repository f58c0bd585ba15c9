// SPDX-License-Identifier: MIT
/*
 * Sampled mode, root-only work reached through a pointer in a tail call
 * (causes_tail.c): `#pragma omp parallel { local(); if (rank == 5)
 * work_fn(n); }` compiles (clang -O2, gcc -O2) the call last in the
 * region's body into `mov work_fn(%rip),%rax; jmp *%rax`: no graph edge
 * says where it goes, and no sample's stack holds the body's frame.
 *
 *   worker (the region's body, no caller: the runtime enters it through
 *   its address): B0 entry -> B1 call local (55, B5) -> B2 test (58)
 *     -(taken)-> B4 return (60);  B2 -(fall)-> B3 `jmp *%rax` (59,
 *     SB_BLOCK_TAIL_INDIRECT, no edge).
 *   local: B5.  work (no caller either): B6 loop header (18) -> B7 body
 *     and latch (19, back to B6) -> B8 return.
 *
 * Thread 5 alone runs work (6 samples per instance), every thread
 * samples local.  Known answer: the test, B2's branch (0x102c), shown
 * first, work's loop its alternative.  Known non-answers, the cause left
 * in work: a graph whose pointer jumps were not looked for (cfg_io
 * version 4, where the flag cannot be written); a second such jump in
 * another function nothing calls (which one went to work is not known);
 * work called directly from two places (callers the stack would have
 * shown).
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 8
#define NI 100
#define NW 5
#define ROOT 5

enum variant { V_ONE, V_UNKNOWN, V_TWO, V_CALLED, V_N };

static const char *const vname[V_N] = { "one pointer jump", "pointer jumps not looked for",
					"two pointer jumps", "work called directly" };

static struct sb_cfg *graph(enum variant v)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 5, SB_EDGE_CALL }, { 1, 2, SB_EDGE_CALL_RETURN },
		{ 2, 4, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_FALLTHROUGH },
		{ 6, 7, SB_EDGE_SEQUENTIAL }, { 7, 6, SB_EDGE_TAKEN },
		{ 7, 8, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NW);

	g->has_flags = g->has_tail_calls = true;
	g->has_indirect_tails = v != V_UNKNOWN;
	sbt_add_leaf(g, 1, "local", 0x2000);
	sb_cfg_add_func(g, "work", 0x2010, 0x2040);
	sbt_add_blocks(g, 2, 0x2010, 3);
	/* V_TWO: another function nothing calls ends in a pointer jump;
	 * V_CALLED: it calls work */
	sb_cfg_add_func(g, "other", 0x2040, 0x2050);
	sbt_add_blocks(g, 3, 0x2040, 1);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (g->has_indirect_tails)
		g->blocks[3].flags = SB_BLOCK_TAIL_INDIRECT;
	if (v == V_TWO)
		g->blocks[9].flags = SB_BLOCK_TAIL_INDIRECT;
	if (v == V_CALLED) {   /* two callers: no one caller decides either */
		sb_cfg_add_edge(g, 9, 6, SB_EDGE_CALL);
		sb_cfg_add_edge(g, 0, 6, SB_EDGE_CALL);
	}
	sb_cfg_finalize(g);
	return g;
}

static struct sb_profile *profile(enum variant v)
{
	/* sampled: local's B5, work's body B7; named without samples: the
	 * rest of worker and work */
	static const int ev[2] = { 5, 7 };
	static const unsigned ln[10] = { 53, 55, 58, 59, 60, 40, 18, 19, 21, 70 };
	static const int named[6] = { 0, 1, 2, 3, 4, 6 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph(v));
	sec_loc = (uint32_t)sbt_wloc(p, 0x104c, 60);
	for (int e = 0; e < 2; e++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)ev[e], NW), ln[ev[e]], ln[ev[e]],
				      true);
	for (int k = 0; k < 6; k++)
		sbt_add_sampled_block(p, sbt_block_addr((uint64_t)named[k], NW), ln[named[k]],
				      ln[named[k]], false);
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = (t == ROOT ? 8000000 : 2000000) + 10000 * ((t + (uint32_t)i) % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 2; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 2 : (t == ROOT ? 6 : 0);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	for (int v = 0; v < V_N; v++) {
		struct sb_profile *p = profile((enum variant)v);
		struct sb_causes c;
		char err[256] = "";
		int ret = sbt_compute(p, &c, err, sizeof(err));

		sb_profile_free(p);
		CHECK(ret == 0, "compute (%s): %s", vname[v], err);
		if (ret)
			continue;
		CHECK(c.n >= 1 && !c.exact_counts, "samples, causes (%s)", vname[v]);
		if (c.n >= 1 && v == V_ONE) {
			CHECK(c.c[0].addr == 0x102c && c.c[0].nalternatives == 1,
			      "%s: the test that takes it (B2's branch), one alternative "
			      "(%#llx, %u)", vname[v], (unsigned long long)c.c[0].addr,
			      c.c[0].nalternatives);
			CHECK(c.n >= 2 && c.c[1].alternative_of == c.c[0].rank &&
			      c.c[1].addr >= 0x2010 && c.c[1].addr < 0x2040,
			      "%s: work's own placement is the alternative (%#llx)", vname[v],
			      c.n >= 2 ? (unsigned long long)c.c[1].addr : 0ULL);
		} else if (c.n >= 1) {
			CHECK(c.c[0].addr >= 0x2010 && c.c[0].addr < 0x2040,
			      "%s: the cause stays in work (%#llx)", vname[v],
			      (unsigned long long)c.c[0].addr);
		}
		sb_causes_free(&c);
	}
	return CHECK_DONE("test_causes_ptrtail");
}
