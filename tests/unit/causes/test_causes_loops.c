// SPDX-License-Identifier: MIT
/*
 * Natural loops for placing sampled causes (causes_loops.h) on small
 * hand-built CFGs whose loops are known:
 *
 *   rep:    B0 -> B1 (outer) -> B2 (inner, pure work, back to itself)
 *           -> B3 (outer latch, back to B1) -> B4.  The outer loop only
 *           repeats the inner one.
 *   search: B5 -> B6 (a[k] == key? exit) -> B7 (k < n? back to B6) -> B8:
 *           two blocks leave the loop (an early exit).
 *   guard:  B9 -> B10 (outer header: a test inside the outer loop sends
 *           to B11 or B12) -> B11 (inner, back to itself) -> B12 (latch,
 *           back to B10) -> B13: the outer loop decides, it does not
 *           only repeat.
 *   calls:  B14 -> B15 (calls, back to itself) -> B16.
 *   rotated: gcc -O3's loop entered by a jump: B17 jumps to B19 (calls),
 *           B20 tests (back to B18, out to B21), B18 reloads and falls into
 *           B19.  B19 heads it; its latch B18 decides nothing, B20 does.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_loops.h"
#include "cfg/cfg.h"
#include "check.h"

static void block(struct sb_cfg *g, uint32_t f, uint32_t b)
{
	sb_cfg_add_block(g, f, 0x1000 + 0x10 * (uint64_t)b, 0x1010 + 0x10 * (uint64_t)b,
			 0x100c + 0x10 * (uint64_t)b);
}

static struct sb_cfg *graph(void)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "rep", 0x1000, 0x1050);
	for (uint32_t b = 0; b < 5; b++)
		block(g, 0, b);
	sb_cfg_add_func(g, "search", 0x1050, 0x1090);
	for (uint32_t b = 5; b < 9; b++)
		block(g, 1, b);
	sb_cfg_add_func(g, "guard", 0x1090, 0x10e0);
	for (uint32_t b = 9; b < 14; b++)
		block(g, 2, b);
	sb_cfg_add_func(g, "calls", 0x10e0, 0x1110);
	for (uint32_t b = 14; b < 17; b++)
		block(g, 3, b);
	sb_cfg_add_func(g, "rotated", 0x1110, 0x1160);
	for (uint32_t b = 17; b < 22; b++)
		block(g, 4, b);
	/* rep */
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 2, 2, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 2, 3, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 3, 1, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 3, 4, SB_EDGE_FALLTHROUGH);
	/* search */
	sb_cfg_add_edge(g, 5, 6, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 6, 8, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 6, 7, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 7, 6, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 7, 8, SB_EDGE_FALLTHROUGH);
	/* guard */
	sb_cfg_add_edge(g, 9, 10, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 10, 11, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 10, 12, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 11, 11, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 11, 12, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 12, 10, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 12, 13, SB_EDGE_FALLTHROUGH);
	/* calls: B15 calls rep, returns to itself round the loop */
	sb_cfg_add_edge(g, 14, 15, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 15, 0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, 15, 16, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, 16, 15, SB_EDGE_TAKEN);
	/* rotated */
	sb_cfg_add_edge(g, 17, 19, SB_EDGE_JUMP);
	sb_cfg_add_edge(g, 18, 19, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 19, 0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, 19, 20, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, 20, 18, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 20, 21, SB_EDGE_FALLTHROUGH);
	return g;
}

int main(void)
{
	struct sb_cfg *g = graph();
	uint8_t in[8], out[8];
	long h, e;

	CHECK(g && sb_cfg_finalize(g) == 0, "finalize");

	h = sb_causes_loop_of(g, 2, in);
	CHECK(h == 2, "B2 is its own loop (%ld)", h);
	CHECK(in[2] && !in[1] && !in[3], "inner body {B2}");
	CHECK(sb_causes_loop_exits(g, 0, in) == 1, "a counted loop leaves once");
	CHECK(!sb_causes_loop_calls(g, 0, in), "pure work");
	e = sb_causes_loop_around(g, 2, in, out);
	CHECK(e == 1, "the outer loop heads at B1 (%ld)", e);
	CHECK(out[1] && out[2] && out[3] && !out[0] && !out[4], "outer body {B1, B2, B3}");
	CHECK(sb_causes_loop_only_repeats(g, 0, out, in), "the outer loop only repeats");
	h = sb_causes_loop_of(g, 2, in);
	CHECK(!sb_causes_loop_fixed_trips(g, 0, 2, in), "no flag: trips not known fixed");
	g->blocks[2].flags = SB_BLOCK_CONST_BOUND;
	CHECK(sb_causes_loop_fixed_trips(g, 0, 2, in), "latch on a constant bound: fixed trips");
	g->blocks[7].flags = SB_BLOCK_CONST_BOUND;
	h = sb_causes_loop_of(g, 7, in);
	CHECK(!sb_causes_loop_fixed_trips(g, 1, 6, in), "a search's early exit: not fixed");
	g->blocks[7].flags = 0;
	CHECK(sb_causes_loop_around(g, 1, out, in) == -1, "nothing around the outer loop");
	CHECK(sb_causes_loop_of(g, 0, in) == -1, "B0 is in no loop");

	h = sb_causes_loop_of(g, 7, in);
	CHECK(h == 6, "search loop heads at B6 (%ld)", h);
	CHECK(in[6 - 5] && in[7 - 5] && !in[8 - 5], "search body {B6, B7}");
	CHECK(sb_causes_loop_exits(g, 1, in) == 2, "a search leaves twice (%u)",
	      sb_causes_loop_exits(g, 1, in));

	h = sb_causes_loop_of(g, 11, in);
	e = sb_causes_loop_around(g, 11, in, out);
	CHECK(h == 11 && e == 10, "guard: inner B11 (%ld), outer B10 (%ld)", h, e);
	CHECK(!sb_causes_loop_only_repeats(g, 2, out, in), "a test inside the outer loop decides");

	h = sb_causes_loop_of(g, 15, in);
	CHECK(h == 15 && sb_causes_loop_calls(g, 3, in), "a loop around a call calls (%ld)", h);

	h = sb_causes_loop_of(g, 20, in);
	CHECK(h == 19 && in[18 - 17] && in[19 - 17] && in[20 - 17] && !in[21 - 17],
	      "rotated: heads at B19, body {B18, B19, B20} (%ld)", h);
	CHECK(sb_cfg_latch(g, 19) == 18, "rotated: B18's fall into B19 is the back edge (%ld)",
	      sb_cfg_latch(g, 19));
	CHECK(sb_causes_loop_test(g, 4, in) == 20 && sb_causes_latch_test(g, 18, 4, in) == 20,
	      "rotated: B20 tests for the latch that decides nothing (%ld)",
	      sb_causes_latch_test(g, 18, 4, in));
	CHECK(!sb_causes_loop_fixed_trips(g, 4, 19, in), "rotated, no flag: not known fixed");
	g->blocks[20].flags = SB_BLOCK_CONST_BOUND;
	CHECK(sb_causes_loop_fixed_trips(g, 4, 19, in),
	      "rotated: its test on a constant bound: fixed trips");
	g->blocks[18].flags = SB_BLOCK_CONST_BOUND;   /* a latch's own flag is not its test's */
	g->blocks[20].flags = 0;
	CHECK(!sb_causes_loop_fixed_trips(g, 4, 19, in), "rotated: the test decides, not B18");
	h = sb_causes_loop_of(g, 7, in);
	CHECK(sb_causes_loop_test(g, 1, in) == -1, "a search has two tests: none is the loop's");

	sb_cfg_free(g);
	return CHECK_DONE("test_causes_loops");
}
