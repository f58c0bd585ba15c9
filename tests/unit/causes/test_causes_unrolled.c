// SPDX-License-Identifier: MIT
/*
 * Sampled mode, a lock-hold loop of calls that gcc -O3 unrolled whole
 * (causes_loops.c, sb_causes_unrolled_first; blind seed Y p024):
 * `for (h < 1 + (odd ? 3 : 0)) relax(83)` became one call for the even
 * threads and three calls in a row for the odd ones, chosen by one test.
 *
 *   worker: B0 entry (46) -> B1 test (49) -(fall)-> B2 call relax (50)
 *           -> B3 barrier call (53, out) -> B4 return;
 *           B1 -(taken)-> B5 call relax (50) -> B6 call relax (50) -> B7
 *           call relax (50) -> B8 `jmp` (49) -> B3.
 *   relax:  B9 (its loop, back to itself) -> B10 return.
 *
 * Known answers: the run B5-B7 starts at B5 (from B7 and B6), B2 is a run
 * of its own, B3 (another callee) is none; and the analysis names the
 * test's branch (B1, 0x101c, line 49), not a call of the run (line 50).
 * (Here the leader LIME picks is already guarded; in Y p024 it was the
 * run's last call, whose guard only the run's start has: that placement
 * is the predicate's, checked above.)
 *
 * Split: B0 is a second test on line 49 that jumps into the run's middle
 * (B6), as gcc -O3 threads `for (i) for (j) if ((i + j) % n != who)
 * continue; run_part();` into chains of calls entered at several places
 * (causes_loops.c, sb_causes_run_guards; blind seed AC p029).  B6 then
 * has no guard of its own (B5's return enters it too): the run's guards
 * are B0 and B1, and the cause is on their line, 49.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "causes/causes_loops.h"
#include "check.h"

#define NT 6
#define NI 80
#define NW 9

static uint64_t addr[NW + 2];   /* each block's start */

static struct sb_cfg *graph(bool split)
{
	static const struct sbt_edge edges[] = {
		{ 1, 2, SB_EDGE_FALLTHROUGH }, { 1, 5, SB_EDGE_TAKEN },
		{ 2, 9, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 5, 9, SB_EDGE_CALL }, { 5, 6, SB_EDGE_CALL_RETURN },
		{ 6, 9, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },
		{ 7, 9, SB_EDGE_CALL }, { 7, 8, SB_EDGE_CALL_RETURN }, { 8, 3, SB_EDGE_JUMP },
		{ 9, 9, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc();
	uint64_t a = 0x1000;

	/* B2 and B5-B7 are one 5-byte `call` each (start = last
	 * instruction), the others 16 bytes, their last instruction at +0xc */
	sb_cfg_add_func(g, "worker", 0x1000, 0x1000 + 5 * 0x10 + 4 * 5);
	for (uint32_t b = 0; b < NW; b++) {
		uint64_t len = b == 2 || (b >= 5 && b <= 7) ? 5 : 0x10;

		sb_cfg_add_block(g, 0, a, a + len, len == 5 ? a : a + 0xc);
		addr[b] = a;
		a += len;
	}
	sb_cfg_add_func(g, "relax", 0x2000, 0x2020);
	sbt_add_blocks(g, 1, 0x2000, 2);
	addr[9] = 0x2000;
	addr[10] = 0x2010;
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (split) {
		sb_cfg_add_edge(g, 0, 1, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, 0, 6, SB_EDGE_TAKEN);
	} else {
		sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	}
	sb_cfg_finalize(g);
	return g;
}

/* the sampled blocks: B2, B5, B6, B7, relax's B9; named: B1, B3, B0 */
static const struct {
	int b;
	unsigned line;
} ev[] = { { 2, 50 }, { 5, 50 }, { 6, 50 }, { 7, 50 }, { 9, 20 }, { 1, 49 }, { 3, 53 },
	   { 0, 49 } };

/* Samples of thread t in event e, instance i: the even threads one call
 * (3), the odd ones three; their last call's samples vary most between
 * them (the work's end, 3 to 5), so it alone follows busy time best and
 * leads, as in Y p024. */
static uint64_t count(int e, uint32_t t, int i)
{
	int odd = t % 2;
	uint64_t last = 3 + t / 2;

	switch (e) {
	case 0: return odd ? 0 : 3;
	case 1:
	case 2: return odd ? 3 : 0;
	case 3: return odd ? last : 0;
	case 4: return odd ? 6 + last : 3;
	case 6: return (t + (uint32_t)i) % 4 == 0;
	default: return 0;
	}
}

static struct sb_profile *profile(bool split)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t nev = sizeof(ev) / sizeof(ev[0]);

	sbt_add_binary_cfg(p, graph(split));
	sbt_add_section(p, (uint32_t)sbt_wloc(p, addr[3] + 0xc, 53), NT, pt);
	for (uint32_t e = 0; e < nev; e++)
		sbt_add_sampled_block(p, addr[ev[e].b], ev[e].line, ev[e].line, e < 5);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * count(4, t, i) + 10000 * ((t + (uint32_t)i) % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < nev; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = count((int)e, t, i);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	struct sb_cfg *g = graph(false);
	uint32_t gs[SB_CFG_MAX_GUARDS];
	struct sb_profile *p;
	struct sb_causes c;
	char err[256] = "";
	int ret;
	long n;

	CHECK(sb_causes_unrolled_first(g, 7) == 5 && sb_causes_unrolled_first(g, 6) == 5 &&
	      sb_causes_unrolled_first(g, 5) == 5, "the run B5-B7 starts at B5: %u %u %u",
	      sb_causes_unrolled_first(g, 7), sb_causes_unrolled_first(g, 6),
	      sb_causes_unrolled_first(g, 5));
	CHECK(sb_causes_unrolled_first(g, 2) == 2 && sb_causes_unrolled_first(g, 3) == 3 &&
	      sb_causes_unrolled_first(g, 1) == 1, "B2 alone, B3 and B1 no runs");
	n = sb_causes_run_guards(g, 7, gs);
	CHECK(n == 1 && gs[0] == 1, "run guards of B7: B1 alone (%ld)", n);
	CHECK(sb_causes_run_guards(g, 2, gs) < 0 && sb_causes_run_guards(g, 3, gs) < 0,
	      "no run guards for a lone call (B2) or no call (B3)");
	sb_cfg_free(g);
	g = graph(true);
	CHECK(sb_causes_unrolled_first(g, 7) == 6, "split: the run's start seen from B7 is B6 "
	      "(two ways in): %u", sb_causes_unrolled_first(g, 7));
	n = sb_causes_run_guards(g, 6, gs);
	CHECK(n == 2 && ((gs[0] == 0 && gs[1] == 1) || (gs[0] == 1 && gs[1] == 0)),
	      "split: the run's guards are B0 and B1 (%ld)", n);
	sb_cfg_free(g);
	p = profile(true);
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute (split): %d %s", ret, err);
	if (!ret) {
		CHECK(c.n >= 1 && (c.c[0].addr == 0x100c || c.c[0].addr == 0x101c) &&
		      c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 49,
		      "split: a test of line 49 (0x100c or 0x101c), not %#llx (line %u)",
		      c.n ? (unsigned long long)c.c[0].addr : 0ULL,
		      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
		sb_causes_free(&c);
	}
	sb_profile_free(p);
	p = profile(false);
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	if (!ret) {
		CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
		CHECK(c.n >= 1 && c.c[0].addr == 0x101c && c.c[0].loc >= 0 &&
		      p->locs[c.c[0].loc].line == 49,
		      "the test (0x101c, line 49), not %#llx (line %u)",
		      c.n ? (unsigned long long)c.c[0].addr : 0ULL,
		      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
		sb_causes_free(&c);
	}
	sb_profile_free(p);
	return CHECK_DONE("test_causes_unrolled");
}
