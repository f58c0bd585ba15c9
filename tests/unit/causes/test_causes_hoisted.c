// SPDX-License-Identifier: MIT
/*
 * Sampled mode, `for (it) { kernel(); if (me == 1) kernel2(); barrier; }`
 * as gcc -O3 unswitches it (blind seeds Y p020, Z p036): the test is
 * hoisted before two copies of the loop, each holding a barrier call, and
 * carries the loop's line (44) in the debug info; each copy keeps an
 * empty row of the `if` (line 46) at the code after its kernel() call,
 * which the recorder stores as those blocks' statement line
 * (sb_event_def.stmt_line) with a location of its own.
 *
 *   worker: B0 entry (42) -> B1 test (44) -(fall)-> B2 copy one: call
 *           kernel (45) -> B3 barrier call (49, stmt 46) -> B4 latch
 *           (44) -(back)-> B2; B4 -> B5 return.
 *           B1 -(taken)-> B6 copy two: call kernel (45) -> B7 call
 *           kernel2 (47, stmt 46) -> B8 barrier call (49) -> B9 latch
 *           (44) -(back)-> B6; B9 -> B10 `jmp` -> B5.
 *   kernel: B11, kernel2: B12.
 *
 * Thread 1 runs copy two, the others copy one.  Known answers: the cause
 * is the hoisted test, B1's branch (0x101c), not copy two's latch
 * (0x109c), shown at line 46, the `if`; without the statement rows, at
 * B1's own line, 44.  (The section's sync is copy one's barrier: copy
 * two's loop holds none of it, and is entered by the test.)
 */
#include <stdbool.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 60
#define NW 11

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH }, { 1, 6, SB_EDGE_TAKEN },
		{ 2, 11, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 2, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 6, 11, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },
		{ 7, 12, SB_EDGE_CALL }, { 7, 8, SB_EDGE_CALL_RETURN }, { 8, 9, SB_EDGE_CALL_RETURN },
		{ 9, 6, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_FALLTHROUGH }, { 10, 5, SB_EDGE_JUMP },
	};
	struct sb_cfg *g = sbt_worker_graph(NW);

	sbt_add_leaf(g, 1, "kernel", 0x2000);
	sbt_add_leaf(g, 2, "kernel2", 0x2010);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* the events: block, line, statement line; thread t's samples */
static const struct {
	int b;
	unsigned line, stmt;
} ev[] = {
	{ 2, 45, 0 }, { 6, 45, 0 }, { 7, 47, 46 }, { 11, 20, 0 }, { 12, 30, 0 },
	{ 3, 49, 46 }, { 1, 44, 0 }, { 4, 44, 0 }, { 8, 49, 0 }, { 9, 44, 0 },
};

static uint64_t count(uint32_t e, uint32_t t, int i)
{
	switch (e) {
	case 0: return t == 1 ? 0 : 2;
	case 1: return t == 1 ? 2 : 0;
	case 2:
	case 4: return t == 1 ? 4 : 0;
	case 3: return 2;
	case 5: return t != 1 && (t + (uint32_t)i) % 5 == 0;
	default: return 0;
	}
}

static struct sb_profile *profile(bool stmts, int sync_blk)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t nev = sizeof(ev) / sizeof(ev[0]);

	sbt_add_binary_cfg(p, graph());
	sbt_add_section(p, (uint32_t)sbt_wloc(p, sbt_block_addr((uint64_t)sync_blk, NW) + 0xc, 49),
			NT, pt);
	for (uint32_t e = 0; e < nev; e++) {
		uint64_t a = sbt_block_addr((uint64_t)ev[e].b, NW);
		long l1 = sbt_wloc(p, a, ev[e].line), l2 = sbt_wloc(p, a + 0xc, ev[e].line);
		struct sb_event_def d = sbt_block_event(SB_EVK_BLOCK_SAMPLES, a, l1, l2);

		if (e < 5) {
			d.hot = a + 4;
			d.loc_hot = (int32_t)sbt_wloc(p, d.hot, ev[e].line);
		}
		if (stmts && ev[e].stmt) {
			d.stmt_line = ev[e].stmt;
			sbt_wloc(p, a, ev[e].stmt);     /* the recorder's own location */
		}
		sb_profile_add_event(p, &d);
	}
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = (t == 1 ? 6000000 : 2000000) + 10000 * ((t + (uint32_t)i) % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < nev; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = count(e, t, i);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	for (int v = 0; v < 2; v++) {
		int stmts = v == 0, sync_blk = 3;
		struct sb_profile *p = profile(stmts, sync_blk);
		struct sb_causes c;
		char err[256] = "";
		int ret = sbt_compute(p, &c, err, sizeof(err));
		unsigned want = stmts ? 46 : 44;

		CHECK(ret == 0, "compute: %d %s", ret, err);
		if (!ret) {
			CHECK(c.n >= 1 && c.c[0].addr == 0x101c && c.c[0].loc >= 0 &&
			      p->locs[c.c[0].loc].line == want,
			      "statement rows %d, sync in B%d: the hoisted test (0x101c) at line %u, "
			      "not %#llx line %u", stmts, sync_blk, want, c.n ? (unsigned long long)c.c[0].addr : 0ULL,
			      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
			sb_causes_free(&c);
		}
		sb_profile_free(p);
	}
	return CHECK_DONE("test_causes_hoisted");
}
