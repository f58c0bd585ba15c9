// SPDX-License-Identifier: MIT
/* Exact edge counts from exact block counts, on graphs with known flow. */
#include <stdlib.h>

#include "cfg/cfg.h"
#include "check.h"
#include "cfg/cfg_flow.h"

#define NT 2

/*
 * f: 0 entry (if) -> 1 then -> 3 join;  0 -> 2 else -> 3;  3 calls g (CALL
 *    to 4), then 3 -> 8 after the call, which returns.
 * g: 4 entry -> 5 loop body;  5 -> 6 split back edge -> 5 (back);
 *    5 -> 7 exit, returns.
 * Counted (callback blocks): 0, 1, 4, 5, 6.  Per thread: f runs 10 and
 * 20 times, takes `then` 3 and 15 times; g's loop runs 7 and 2 times per
 * call in total (body = calls + back edges).
 */
static struct sb_cfg *build(long *e)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const struct { uint32_t s, d; uint16_t k; } ed[] = {
		{ 0, 1, SB_EDGE_TAKEN }, { 0, 2, SB_EDGE_FALLTHROUGH }, { 1, 3, SB_EDGE_JUMP },
		{ 2, 3, SB_EDGE_SEQUENTIAL }, { 3, 4, SB_EDGE_CALL }, { 3, 8, SB_EDGE_CALL_RETURN },
		{ 4, 5, SB_EDGE_SEQUENTIAL }, { 5, 6, SB_EDGE_TAKEN }, { 6, 5, SB_EDGE_JUMP },
		{ 5, 7, SB_EDGE_FALLTHROUGH },
	};
	uint64_t a = 0x1000;

	sb_cfg_add_func(g, "f", 0x1000, 0x1040);
	for (int i = 0; i < 4; i++, a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	sb_cfg_add_func(g, "g", 0x2000, 0x2040);
	a = 0x2000;
	for (int i = 4; i < 8; i++, a += 0x10)
		sb_cfg_add_block(g, 1, a, a + 0x10, a + 0xc);
	/* block 8 belongs to f but lies after g: give f a second function */
	sb_cfg_add_func(g, "f.part", 0x3000, 0x3010);
	sb_cfg_add_block(g, 2, 0x3000, 0x3010, 0x300c);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i].s, ed[i].d, ed[i].k);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++) {
		e[i] = -1;
		for (size_t k = 0; k < g->nedges; k++)
			if (g->edges[k].src == ed[i].s && g->edges[k].dst == ed[i].d)
				e[i] = (long)k;
	}
	return g;
}

static void expect_edge(const struct sb_cfg_flow *f, long e, double t0, double t1,
			const char *what)
{
	CHECK(e >= 0 && f->edge_known[e], "%s: edge determined", what);
	if (e < 0 || !f->edge_known[e])
		return;
	CHECK_NEAR(sb_cfg_flow_edge(f, (uint32_t)e)[0], t0, 0);
	CHECK_NEAR(sb_cfg_flow_edge(f, (uint32_t)e)[1], t1, 0);
}

/*
 * Alignment padding after a jump falls into a branch target in a linear
 * sweep: block 2 below.  It never runs, so the taken edge 1 -> 3 is still
 * determined by block 3's count.
 *   h: 0 entry -> 1 (cond): taken -> 3, fall-through -> 4; 2 (padding)
 *      -> 3; 3 -> 5; 4 -> 5; 5 returns.  Counted: 0 and 3.
 */
static void test_padding(void)
{
	static const struct { uint32_t s, d; uint16_t k; } ed[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 3, SB_EDGE_TAKEN }, { 1, 4, SB_EDGE_FALLTHROUGH },
		{ 2, 3, SB_EDGE_SEQUENTIAL }, { 3, 5, SB_EDGE_JUMP }, { 4, 5, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();
	uint8_t known[6] = { 1, 0, 0, 1, 0, 0 };
	double counts[6 * NT] = { [0] = 5, 9, [3 * NT] = 2, 7 };
	struct sb_cfg_flow f;
	long e[6];

	sb_cfg_add_func(g, "h", 0x1000, 0x1060);
	for (uint64_t a = 0x1000; a < 0x1060; a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	for (size_t i = 0; i < 6; i++)
		sb_cfg_add_edge(g, ed[i].s, ed[i].d, ed[i].k);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	for (size_t i = 0; i < 6; i++) {
		e[i] = -1;
		for (size_t k = 0; k < g->nedges; k++)
			if (g->edges[k].src == ed[i].s && g->edges[k].dst == ed[i].d)
				e[i] = (long)k;
	}
	CHECK(sb_cfg_flow_solve(g, NT, known, counts, &f) == 0, "solve");
	CHECK(f.block_known[2] && sb_cfg_flow_block(&f, 2)[0] == 0, "padding never runs");
	expect_edge(&f, e[1], 2, 7, "taken edge past the padding");
	expect_edge(&f, e[2], 3, 2, "fall-through: the rest");
	expect_edge(&f, e[5], 3, 2, "4 -> 5");
	sb_cfg_flow_free(&f);
	sb_cfg_free(g);
}

/*
 * A test the compiler duplicated (clang's division fast path): 1 -> 2
 * (fast) or 3 (slow), each ends in the same compare: -> 4 (owner) or 5
 * (not).  4 runs a loop: 6 header, 7 body (counted), back to 6, exit 8
 * (counted); 5 (counted) and 8 join at 9, which returns.  Counted: 0, 5,
 * 7, 8.  The owner block's count comes through the loop (its entries are
 * its exits); the edges into 4 and 5 are known only as sums, kept on the
 * edges from block 2, the first of the two tests.
 */
static void test_duplicated(void)
{
	static const struct { uint32_t s, d; uint16_t k; } ed[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_TAKEN }, { 1, 3, SB_EDGE_FALLTHROUGH },
		{ 2, 4, SB_EDGE_TAKEN }, { 2, 5, SB_EDGE_FALLTHROUGH }, { 3, 4, SB_EDGE_TAKEN },
		{ 3, 5, SB_EDGE_FALLTHROUGH }, { 4, 6, SB_EDGE_SEQUENTIAL },
		{ 6, 7, SB_EDGE_FALLTHROUGH }, { 7, 6, SB_EDGE_JUMP }, { 6, 8, SB_EDGE_TAKEN },
		{ 8, 9, SB_EDGE_JUMP }, { 5, 9, SB_EDGE_JUMP },
	};
	enum { NE = sizeof(ed) / sizeof(ed[0]) };
	struct sb_cfg *g = sb_cfg_alloc();
	uint8_t known[10] = { [0] = 1, [5] = 1, [7] = 1, [8] = 1 };
	double counts[10 * NT] = {
		[0 * NT] = 10, 10, [5 * NT] = 7, 3, [7 * NT] = 30, 70, [8 * NT] = 3, 7,
	};
	struct sb_cfg_flow f;
	long e[NE];

	sb_cfg_add_func(g, "d", 0x1000, 0x10a0);
	for (uint64_t a = 0x1000; a < 0x10a0; a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	for (size_t i = 0; i < NE; i++)
		sb_cfg_add_edge(g, ed[i].s, ed[i].d, ed[i].k);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	for (size_t i = 0; i < NE; i++) {
		e[i] = -1;
		for (size_t k = 0; k < g->nedges; k++)
			if (g->edges[k].src == ed[i].s && g->edges[k].dst == ed[i].d)
				e[i] = (long)k;
	}
	CHECK(sb_cfg_flow_solve(g, NT, known, counts, &f) == 0, "solve");
	CHECK(f.block_known[4] && sb_cfg_flow_block(&f, 4)[0] == 3 &&
	      sb_cfg_flow_block(&f, 4)[1] == 7, "owner block: its loop's exits");
	expect_edge(&f, e[7], 3, 7, "owner -> loop header");
	expect_edge(&f, e[8], 30, 70, "header -> body");
	expect_edge(&f, e[3], 3, 7, "owner: the sum of both tests' edges");
	CHECK(f.edge_sum[e[3]] && !f.edge_sum[e[7]], "kept as a sum, on the first test");
	expect_edge(&f, e[4], 7, 3, "not owner: the sum");
	CHECK(!f.edge_known[e[5]] && !f.edge_known[e[6]] && !f.edge_known[e[1]],
	      "each test's own edges stay undetermined");
	CHECK(f.block_known[1] && sb_cfg_flow_block(&f, 1)[0] == 10, "head: the entry's flow");
	sb_cfg_flow_free(&f);
	sb_cfg_free(g);
}

/*
 * A segment starts where a sync call returns: block 0 calls the sync (its
 * count belongs to the segment that closed: 0 here), block 1 runs after
 * it returns, uncounted, and chooses 2 (counted) or 3 (counted); 4
 * returns.  With the call marked as a cut, block 1 is what 2 and 3 add up
 * to, not the call block's count.
 */
static void test_cut(void)
{
	static const struct { uint32_t s, d; uint16_t k; } ed[] = {
		{ 0, 1, SB_EDGE_CALL_RETURN }, { 1, 2, SB_EDGE_TAKEN }, { 1, 3, SB_EDGE_FALLTHROUGH },
		{ 2, 4, SB_EDGE_JUMP }, { 3, 4, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();
	uint8_t known[5] = { 1, 0, 1, 1, 0 }, cut[5] = { 1, 0, 0, 0, 0 };
	double counts[5 * NT] = { [2 * NT] = 3, 1, [3 * NT] = 2, 6 };
	struct sb_cfg_flow f;

	sb_cfg_add_func(g, "s", 0x1000, 0x1050);
	for (uint64_t a = 0x1000; a < 0x1050; a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i].s, ed[i].d, ed[i].k);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	CHECK(sb_cfg_flow_solve_rows(g, NT, known, NULL, counts, cut, &f) == 0, "solve");
	CHECK(f.block_known[1] && sb_cfg_flow_block(&f, 1)[0] == 5 && sb_cfg_flow_block(&f, 1)[1] == 7,
	      "the block after the sync: its ways out");
	CHECK(f.inconsistent == 0, "no conflict with the call block's 0");
	sb_cfg_flow_free(&f);
	CHECK(sb_cfg_flow_solve(g, NT, known, counts, &f) == 0, "solve without the cut");
	CHECK(f.inconsistent > 0, "without it the counts conflict");
	sb_cfg_flow_free(&f);
	sb_cfg_free(g);
}

int main(void)
{
	test_padding();
	test_duplicated();
	test_cut();
	long e[10];
	struct sb_cfg *g = build(e);
	uint8_t known[9] = { 1, 1, 0, 0, 1, 1, 1, 0, 0 };
	double counts[9 * NT] = {
		[0 * NT] = 10, 20,   /* f entry */
		[1 * NT] = 3, 15,    /* then */
		[4 * NT] = 10, 20,   /* g entry: one call per f run */
		[5 * NT] = 80, 60,   /* body: 10 + 70 back edges, 20 + 40 */
		[6 * NT] = 70, 40,   /* split back edge */
	};
	struct sb_cfg_flow f;

	CHECK(sb_cfg_flow_solve(g, NT, known, counts, &f) == 0, "solve");
	expect_edge(&f, e[0], 3, 15, "then edge (its block's only way in)");
	expect_edge(&f, e[1], 7, 5, "else edge (the rest of the entry's flow)");
	expect_edge(&f, e[2], 3, 15, "then -> join");
	expect_edge(&f, e[3], 7, 5, "else -> join");
	expect_edge(&f, e[6], 10, 20, "g entry -> body");
	expect_edge(&f, e[7], 70, 40, "body -> split back edge");
	expect_edge(&f, e[8], 70, 40, "the back edge");
	expect_edge(&f, e[9], 10, 20, "loop exit: body minus back edges");
	expect_edge(&f, e[4], 10, 20, "the call carries its block's count");
	CHECK(f.block_known[2] && sb_cfg_flow_block(&f, 2)[0] == 7 && sb_cfg_flow_block(&f, 2)[1] == 5,
	      "else block from its only in-edge");
	CHECK(f.block_known[3] && sb_cfg_flow_block(&f, 3)[0] == 10 && sb_cfg_flow_block(&f, 3)[1] == 20,
	      "join block = sum of its in-edges");
	/* f.part holds no counted block: not solved, so its edge stays unknown */
	CHECK(!f.block_known[8], "a function with no counted block is left alone");
	CHECK(e[5] >= 0 && !f.edge_known[e[5]], "call-return into an uncounted function");
	CHECK(f.inconsistent == 0, "consistent counts");
	CHECK(sb_cfg_ends_in_call(g, 3) && !sb_cfg_ends_in_call(g, 0), "3 ends in a call");
	CHECK(sb_cfg_latch(g, 5) == 6, "the split back edge's block is g's latch");
	sb_cfg_flow_free(&f);

	/* Inconsistent input (then > entry) is clamped and counted. */
	counts[1 * NT] = 12;
	CHECK(sb_cfg_flow_solve(g, NT, known, counts, &f) == 0, "solve again");
	CHECK(f.inconsistent > 0, "a negative rest is counted");
	CHECK(e[1] >= 0 && sb_cfg_flow_edge(&f, (uint32_t)e[1])[0] == 0, "and clamped to 0");
	sb_cfg_flow_free(&f);
	sb_cfg_free(g);
	return CHECK_DONE("test_cfg_flow");
}
