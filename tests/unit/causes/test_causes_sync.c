// SPDX-License-Identifier: MIT
/*
 * Exact mode, a barrier the program builds of a lock and a condition
 * variable (causes_sync.c): `work; lock; if (++count == n) broadcast;
 * else while (gen == g) wait; unlock`.  Thread 0's work is slower (a
 * cache-missing load: 8x the samples at the same count), so it arrives
 * last in every instance and is the one that broadcasts; the others wait
 * once each.  The barrier's test and the releaser's way back
 * follow the imbalance exactly, as its effect.  Known answer: the top
 * cause is a hardware cause at the work's load (B0, line 10); no cause at
 * the barrier's test (B2), its ways out or its ways back (B3-B8).
 *
 *   worker: B0 work -> B1 (call lock, PLT) -> B2 test -(fall)-> B3 guard
 *   -> B4 call broadcast -> B5 jmp -> B9;  B2 -(taken)-> B6 call wait ->
 *   B7 re-check -(fall)-> B8 jmp -> B6 (back);  B7 -(taken)-> B9 latch
 *   -(taken, back)-> B0;  B9 -> B10 return.
 *   guard B11; broadcast wrapper B12 (calls sb_exact_flush) -> B13; wait
 *   wrapper B14 (calls it too) -> B15; sb_exact_flush B16.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 20
#define NB 17
#define NW 11    /* worker's blocks, all counted */

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL },
		{ 1, 2, SB_EDGE_CALL_RETURN },     /* lock@plt */
		{ 2, 3, SB_EDGE_FALLTHROUGH }, { 2, 6, SB_EDGE_TAKEN },
		{ 3, 11, SB_EDGE_CALL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 12, SB_EDGE_CALL }, { 4, 5, SB_EDGE_CALL_RETURN },
		{ 5, 9, SB_EDGE_JUMP }, { 6, 14, SB_EDGE_CALL },
		{ 6, 7, SB_EDGE_CALL_RETURN }, { 7, 8, SB_EDGE_FALLTHROUGH },
		{ 7, 9, SB_EDGE_TAKEN }, { 8, 6, SB_EDGE_JUMP },
		{ 9, 0, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_FALLTHROUGH },
		{ 12, 16, SB_EDGE_CALL }, { 12, 13, SB_EDGE_CALL_RETURN },
		{ 14, 16, SB_EDGE_CALL }, { 14, 15, SB_EDGE_CALL_RETURN },
	};
	struct sb_cfg *g = sb_cfg_alloc();
	static const char *fn[6] = { "worker", "__sanitizer_cov_trace_pc_guard", "bcast_wrap",
				     "wait_wrap", "sb_exact_flush", NULL };
	static const int fb[6] = { 0, 11, 12, 14, 16, 17 };

	for (int f = 0; f < 5; f++)
		sb_cfg_add_func(g, fn[f], 0x1000 + 0x10 * (uint64_t)fb[f],
				0x1000 + 0x10 * (uint64_t)fb[f + 1]);
	for (uint64_t b = 0; b < NB; b++)
		sb_cfg_add_block(g, b < 11 ? 0 : b == 11 ? 1 : b < 14 ? 2 : b < 16 ? 3 : 4,
				 0x1000 + 0x10 * b, 0x1010 + 0x10 * b, 0x100c + 0x10 * b);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* Executions of worker's block b by a thread that arrives last or not. */
static uint64_t runs(uint32_t b, int last)
{
	switch (b) {
	case 0: case 1: case 2: case 9: return 1;
	case 3: case 4: case 5: return (uint64_t)last;
	case 6: case 7: return (uint64_t)!last;
	default: return 0;   /* 8, 10 */
	}
}

static uint64_t samples(int i, uint32_t t)
{
	return (t == 0 ? 40 : 5) + (uint64_t)((t * 5 + (uint32_t)i * 3) % 4);
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1068, 60);
	/* events 0..NW-1: worker's counts; NW: B0's samples */
	for (uint32_t e = 0; e <= NW; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)(e == NW ? 0 : e);
		struct sb_event_def d = sbt_block_event(
			e < NW ? SB_EVK_BLOCK_COUNT : SB_EVK_BLOCK_SAMPLES, a, -1, -1);

		d.loc = (int32_t)sbt_wloc(p, a, 10 + 2 * (unsigned)(a - 0x1000) / 0x10);
		d.loc2 = (int32_t)sbt_wloc(p, a + 0xc, 10 + 2 * (unsigned)(a - 0x1000) / 0x10);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * samples(i, t) + 3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e <= NW; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e < NW ? runs(e, t == 0) : samples(i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

int main(void)
{
	struct sb_profile *p = profile();
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	CHECK(c.n >= 1, "a cause found");
	if (c.n >= 1)
		CHECK(c.c[0].kind == SB_CAUSE_HW && c.c[0].loc >= 0 &&
		      p->locs[c.c[0].loc].line == 10,
		      "top: hardware at the work's load, line 10 (kind %u, line %u)", c.c[0].kind,
		      c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].addr < 0x1020 || c.c[i].addr >= 0x1090,
		      "cause %zu (kind %u, score %.3f) not in the barrier's code: %#llx", i,
		      c.c[i].kind, c.c[i].score, (unsigned long long)c.c[i].addr);
	sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_sync");
}
