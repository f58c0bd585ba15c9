// SPDX-License-Identifier: MIT
/*
 * Exact mode, an unswitched loop (lime_latch.c): `for (it...) { if (who
 * == 0) work(); barrier(); }` with the invariant test hoisted out of the
 * loop by the compiler into two copies of the loop, one with the work
 * (thread 0's) and one without.  Each instance of the section is one
 * iteration between barriers: thread 0 only ever runs its copy's back
 * edge, the others theirs, and the test itself ran once, before the
 * first instance.  Known answer: the top cause is that test (B0, a
 * branch), not the work copy's loop header (B6), which only repeats.
 *
 *   B0 who test -(fall)-> B1 (guard) -> B2 others' header (calls the
 *   barrier) -> B3 latch -(fall)-> B4 -> B2 (back);  B3 -(taken)-> B15.
 *   B0 -(taken)-> B5 -> B6 thread 0's header -> B7 (calls a library) ->
 *   B8 test -(fall)-> B9 (guard) -> B10 -> B7 (back);  B8 -(taken)-> B11
 *   (calls the barrier) -> B12 latch -(fall)-> B13 (guard) -> B14 -> B6
 *   (back);  B12 -(taken)-> B15 return.  Barrier wrapper B16 (calls
 *   sb_exact_flush) -> B17; sb_exact_flush B18; guard B19.  Counted: the
 *   blocks that call the guard (B1, B9, B13) and the other copy's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 20
#define NB 20
#define K 50     /* thread 0's work loop per iteration */

static struct sb_cfg *graph(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const char *fn[4] = { "worker", "barrier_wrap", "sb_exact_flush",
				     "__sanitizer_cov_trace_pc_guard" };
	static const int fb[5] = { 0, 16, 18, 19, 20 };
	static const int ed[][3] = {
		{ 0, 1, SB_EDGE_FALLTHROUGH }, { 0, 5, SB_EDGE_TAKEN },
		{ 1, 19, SB_EDGE_CALL }, { 1, 2, SB_EDGE_CALL_RETURN },
		{ 2, 16, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 4, SB_EDGE_FALLTHROUGH }, { 3, 15, SB_EDGE_TAKEN }, { 4, 2, SB_EDGE_JUMP },
		{ 5, 6, SB_EDGE_SEQUENTIAL }, { 6, 7, SB_EDGE_SEQUENTIAL },
		{ 7, 8, SB_EDGE_CALL_RETURN },     /* the library, through its PLT */
		{ 8, 9, SB_EDGE_FALLTHROUGH }, { 8, 11, SB_EDGE_TAKEN },
		{ 9, 19, SB_EDGE_CALL }, { 9, 10, SB_EDGE_CALL_RETURN }, { 10, 7, SB_EDGE_JUMP },
		{ 11, 16, SB_EDGE_CALL }, { 11, 12, SB_EDGE_CALL_RETURN },
		{ 12, 13, SB_EDGE_FALLTHROUGH }, { 12, 15, SB_EDGE_TAKEN },
		{ 13, 19, SB_EDGE_CALL }, { 13, 14, SB_EDGE_CALL_RETURN }, { 14, 6, SB_EDGE_JUMP },
		{ 16, 18, SB_EDGE_CALL }, { 16, 17, SB_EDGE_CALL_RETURN },
	};

	for (int f = 0; f < 4; f++)
		sb_cfg_add_func(g, fn[f], 0x1000 + 0x10 * (uint64_t)fb[f],
				0x1000 + 0x10 * (uint64_t)fb[f + 1]);
	for (uint64_t b = 0; b < NB; b++)
		sb_cfg_add_block(g, b < 16 ? 0 : b < 18 ? 1 : b == 18 ? 2 : 3, 0x1000 + 0x10 * b,
				 0x1010 + 0x10 * b, 0x100c + 0x10 * b);
	for (size_t k = 0; k < sizeof(ed) / sizeof(ed[0]); k++)
		sb_cfg_add_edge(g, (uint32_t)ed[k][0], (uint32_t)ed[k][1], (uint16_t)ed[k][2]);
	sb_cfg_finalize(g);
	return g;
}

/* The counted blocks and their executions in one iteration. */
static const int counted[] = { 1, 2, 3, 4, 9, 13, 15 };
#define NC (sizeof(counted) / sizeof(counted[0]))

static uint64_t runs(int b, uint32_t t)
{
	switch (b) {
	case 2: case 3: case 4: return t != 0;
	case 9: return t == 0 ? K - 1 : 0;
	case 13: return t == 0;
	default: return 0;   /* 1: before the loop; 15 after it */
	}
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x10bc, 60);
	for (size_t e = 0; e < NC; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)counted[e];
		struct sb_event_def d = sbt_block_event(SB_EVK_BLOCK_COUNT, a, -1, -1);

		d.loc = (int32_t)sbt_wloc(p, a, 10 + 2 * (unsigned)counted[e]);
		d.loc2 = (int32_t)sbt_wloc(p, a + 0xc, 10 + 2 * (unsigned)counted[e]);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = (t == 0 ? 20000 * K : 0) + 5000 +
					300 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < NC; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = runs(counted[e], t);
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
		CHECK(c.c[0].kind == SB_CAUSE_BRANCH && c.c[0].addr == 0x100c,
		      "top: the hoisted test B0, a branch (kind %u at %#llx)", c.c[0].kind,
		      (unsigned long long)c.c[0].addr);
	sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_unswitch");
}
