// SPDX-License-Identifier: MIT
/* CFG model: dominators and back edges on graphs with known answers. */
#include <stdlib.h>

#include "cfg/cfg.h"
#include "check.h"

static int edge_back(const struct sb_cfg *g, uint32_t src, uint32_t dst)
{
	for (size_t i = 0; i < g->nedges; i++)
		if (g->edges[i].src == src && g->edges[i].dst == dst)
			return g->edges[i].back;
	return -1;
}

/*
 * f:  0 entry -> 1 loop header -> 2 body -> 3 inner header <-> 4 inner body
 *     3 -> 5 latch -> 1 (back);  1 -> 6 exit;  2 -> 5 (skip inner)
 * g:  7 -> 8, 7 -> 9, 8 -> 10, 9 -> 10 (a diamond); 11 unreachable -> 10
 */
static struct sb_cfg *build(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const uint32_t ed[][2] = {
		{ 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 3 }, { 3, 5 }, { 5, 1 },
		{ 1, 6 }, { 2, 5 },
		{ 7, 8 }, { 7, 9 }, { 8, 10 }, { 9, 10 }, { 11, 10 },
	};
	uint64_t a = 0x1000;

	CHECK(sb_cfg_add_func(g, "f", 0x1000, 0x1070) == 0, "func f");
	for (int i = 0; i < 7; i++, a += 0x10)
		CHECK(sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc) == i, "block %d", i);
	CHECK(sb_cfg_add_func(g, "g", 0x2000, 0x2050) == 1, "func g");
	a = 0x2000;
	for (int i = 7; i < 12; i++, a += 0x10)
		CHECK(sb_cfg_add_block(g, 1, a, a + 0x10, a + 0xc) == i, "block %d", i);
	/* Out of order and bad indices are refused. */
	CHECK(sb_cfg_add_block(g, 0, 0x1000, 0x1010, 0x100c) < 0, "f's blocks are closed");
	CHECK(sb_cfg_add_block(g, 1, 0x1000, 0x1010, 0x100c) < 0, "address order");
	CHECK(sb_cfg_add_edge(g, 0, 99, SB_EDGE_JUMP) < 0, "bad edge");
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], SB_EDGE_TAKEN);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	return g;
}

/*
 * Guards looked for through blocks that are only a `jmp` (J):
 *   0 `if` -> 1 J -> 2 call;  0 -> 2: 0 decides nothing about 2 (both its
 *   ways lead there);
 *   3 `if` -> 4 J -> 5 J -> 6;  3 -> 7: 3 alone decides 6;
 *   8 `if` -> 9 code; jmp -> 10;  8 -> 11: 9 is code, not looked through;
 *   12 `if` -> 13 preheader code -(straight line)-> 14 loop <-> 14: the
 *   loop is no decision of 12's (a loop body is its own cause), but 12
 *   is the branch that enters the loop past its preheader (loop_entry);
 *   15 `if` -> 17;  15 -> 18;  16 is padding nothing reaches, falling
 *   through into 17: no way in, so 15 alone guards 17.
 */
static void guards(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	uint32_t gs[SB_CFG_MAX_GUARDS];
	static const uint32_t ed[][3] = {
		{ 0, 1, SB_EDGE_FALLTHROUGH }, { 0, 2, SB_EDGE_TAKEN }, { 1, 2, SB_EDGE_JUMP },
		{ 2, 3, SB_EDGE_CALL_RETURN }, { 3, 4, SB_EDGE_FALLTHROUGH },
		{ 3, 7, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_JUMP }, { 5, 6, SB_EDGE_JUMP },
		{ 6, 7, SB_EDGE_SEQUENTIAL }, { 7, 8, SB_EDGE_SEQUENTIAL },
		{ 8, 9, SB_EDGE_FALLTHROUGH }, { 8, 11, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_JUMP },
		{ 10, 11, SB_EDGE_SEQUENTIAL }, { 11, 12, SB_EDGE_SEQUENTIAL },
		{ 12, 13, SB_EDGE_FALLTHROUGH }, { 12, 15, SB_EDGE_TAKEN },
		{ 13, 14, SB_EDGE_SEQUENTIAL }, { 14, 14, SB_EDGE_TAKEN },
		{ 14, 15, SB_EDGE_FALLTHROUGH }, { 15, 17, SB_EDGE_TAKEN },
		{ 15, 18, SB_EDGE_FALLTHROUGH }, { 16, 17, SB_EDGE_SEQUENTIAL },
	};

	sb_cfg_add_func(g, "h", 0x3000, 0x3130);
	for (uint64_t i = 0; i < 19; i++) {
		bool jmp_only = i == 1 || i == 4 || i == 5;
		uint64_t a = 0x3000 + 0x10 * i;

		sb_cfg_add_block(g, 0, a, a + 0x10, jmp_only ? a : a + 0xc);
	}
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize guards graph");
	CHECK(sb_cfg_guards(g, 2, gs, SB_CFG_MAX_GUARDS) == -1 &&
	      sb_cfg_conditional_pred(g, 2) == -1, "a branch both of whose ways lead on decides nothing");
	CHECK(sb_cfg_conditional_pred(g, 1) == 0, "the `if` guards its then-block");
	CHECK(sb_cfg_guards(g, 6, gs, SB_CFG_MAX_GUARDS) == 1 && gs[0] == 3 &&
	      sb_cfg_conditional_pred(g, 6) == 3, "guard found through two jmp blocks");
	CHECK(sb_cfg_guards(g, 10, gs, SB_CFG_MAX_GUARDS) == -1, "a block with code is no jmp");
	CHECK(sb_cfg_guards(g, 14, gs, SB_CFG_MAX_GUARDS) == -1 &&
	      sb_cfg_conditional_pred(g, 13) == 12, "a loop entered from its preheader: unguarded");
	CHECK(sb_cfg_loop_entry(g, 14) == 13 && sb_cfg_guards(g, 13, gs, SB_CFG_MAX_GUARDS) == 1 &&
	      gs[0] == 12, "the loop is entered by 12's edge into its preheader");
	CHECK(sb_cfg_loop_entry(g, 13) == -1 && sb_cfg_loop_entry(g, 7) == -1,
	      "no loop entry for blocks that neither head nor close a loop");
	CHECK(sb_cfg_guards(g, 17, gs, SB_CFG_MAX_GUARDS) == 1 && gs[0] == 15,
	      "padding nothing reaches is no way in");
	CHECK(sb_cfg_guards(g, 3, gs, SB_CFG_MAX_GUARDS) == -1, "entered by a call's return");
	CHECK(sb_cfg_guards(g, 0, gs, SB_CFG_MAX_GUARDS) == -1, "function entry: no guard");
	sb_cfg_free(g);
}

/*
 * Loop entries with more than one way in (sb_cfg_loop_entry):
 *   k (gcc -O3, an irreducible loop round a test it copied): 0 `if` -fall->
 *   1 call -> 2 `if` -taken-> 1;  0 -taken-> 3;  2 -fall-> 3 preheader ->
 *   4 loop call -> 5 latch -taken-> 4;  5 -fall-> 6 jmp -> 2.  Both ways
 *   into 3 are branches, neither a back edge: 3 is the entry, 0 and 2 its
 *   guards.
 *   j: 7 `if` -fall-> 8 preheader -> 9 loop <-> 9 -fall-> 10 call ->
 *   11 outer latch -taken-> 8 (back);  7, 11 -> 12.  The outer loop's back
 *   edge repeats 9's loop, no test of whether it runs: no entry.
 */
static void multi_entry(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	uint32_t gs[SB_CFG_MAX_GUARDS];
	static const uint32_t ed[][3] = {
		{ 0, 1, SB_EDGE_FALLTHROUGH }, { 0, 3, SB_EDGE_TAKEN }, { 1, 2, SB_EDGE_CALL_RETURN },
		{ 2, 1, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_FALLTHROUGH }, { 3, 4, SB_EDGE_SEQUENTIAL },
		{ 4, 5, SB_EDGE_CALL_RETURN }, { 5, 4, SB_EDGE_TAKEN }, { 5, 6, SB_EDGE_FALLTHROUGH },
		{ 6, 2, SB_EDGE_JUMP },
		{ 7, 8, SB_EDGE_FALLTHROUGH }, { 7, 12, SB_EDGE_TAKEN }, { 8, 9, SB_EDGE_SEQUENTIAL },
		{ 9, 9, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_FALLTHROUGH },
		{ 10, 11, SB_EDGE_CALL_RETURN }, { 11, 8, SB_EDGE_TAKEN },
		{ 11, 12, SB_EDGE_FALLTHROUGH },
	};
	long n;

	sb_cfg_add_func(g, "k", 0x4000, 0x4070);
	for (uint64_t i = 0; i < 7; i++)
		sb_cfg_add_block(g, 0, 0x4000 + 0x10 * i, 0x4010 + 0x10 * i, 0x400c + 0x10 * i);
	sb_cfg_add_func(g, "j", 0x5000, 0x5060);
	for (uint64_t i = 0; i < 6; i++)
		sb_cfg_add_block(g, 1, 0x5000 + 0x10 * i, 0x5010 + 0x10 * i, 0x500c + 0x10 * i);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize multi-entry graph");
	CHECK(edge_back(g, 5, 4) == 1 && edge_back(g, 6, 2) == 0 && edge_back(g, 2, 1) == 0,
	      "k: only the inner loop is reducible");
	n = sb_cfg_guards(g, 3, gs, SB_CFG_MAX_GUARDS);
	CHECK(sb_cfg_loop_entry(g, 4) == 3 && n == 2 &&
	      ((gs[0] == 0 && gs[1] == 2) || (gs[0] == 2 && gs[1] == 0)),
	      "k: entered past 3, guarded by both copies of the test (%ld, %ld guards)",
	      sb_cfg_loop_entry(g, 4), n);
	CHECK(edge_back(g, 11, 8) == 1 && sb_cfg_loop_entry(g, 9) == -1,
	      "j: an enclosing loop's back edge into the preheader is no entry test (%ld)",
	      sb_cfg_loop_entry(g, 9));
	sb_cfg_free(g);
}

/*
 * A loop entered by a branch, with the alignment padding after a `ret`
 * falling into its header (gcc -O3 p036 of the accuracy suite): 0 `if`
 * -fall-> 1 `ret`, 0 -taken-> 3 header; 2 padding (nothing reaches it)
 * -> 3; 3 -> 4 latch -(back)-> 3, 4 -> 5.  The padding is no way in: 3
 * is entered by 0's branch.
 */
static void padding_entry(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const uint32_t ed[][3] = {
		{ 0, 1, SB_EDGE_FALLTHROUGH }, { 0, 3, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_SEQUENTIAL },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 3, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
	};

	sb_cfg_add_func(g, "p", 0x6000, 0x6060);
	for (uint64_t i = 0; i < 6; i++)
		sb_cfg_add_block(g, 0, 0x6000 + 0x10 * i, 0x6010 + 0x10 * i, 0x600c + 0x10 * i);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize padding graph");
	CHECK(edge_back(g, 4, 3) == 1 && sb_cfg_loop_entry(g, 3) == 3,
	      "padding falling into the header is no way in: entered at 3 (%ld)",
	      sb_cfg_loop_entry(g, 3));
	sb_cfg_free(g);
}

/*
 * Ways in through a `jmp`: 0 `if` -taken-> 2 preheader;  0 -fall-> 1, then
 * 1 -jmp-> 2;  2 -> 3 loop <-> 3 -> 4.  With 1 a lone `jmp` both ways into
 * 2 are 0's branch (2 is the entry); with code of its own before the `jmp`
 * 1 is straight-line work on one of them (no entry).
 */
static void jump_entry(bool lone)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const uint32_t ed[][3] = {
		{ 0, 2, SB_EDGE_TAKEN }, { 0, 1, SB_EDGE_FALLTHROUGH }, { 1, 2, SB_EDGE_JUMP },
		{ 2, 3, SB_EDGE_SEQUENTIAL }, { 3, 3, SB_EDGE_TAKEN }, { 3, 4, SB_EDGE_FALLTHROUGH },
	};

	sb_cfg_add_func(g, "q", 0x6000, 0x6050);
	for (uint64_t i = 0; i < 5; i++)
		sb_cfg_add_block(g, 0, 0x6000 + 0x10 * i, 0x6010 + 0x10 * i,
				 i == 1 && lone ? 0x6010 : 0x600c + 0x10 * i);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize jump-entry graph");
	CHECK(sb_cfg_loop_entry(g, 3) == (lone ? 2 : -1),
	      "q: a %s `jmp` into the preheader: entry %ld", lone ? "lone" : "code's",
	      sb_cfg_loop_entry(g, 3));
	sb_cfg_free(g);
}

int main(void)
{
	struct sb_cfg *g = build();
	uint32_t idom[12];
	static const uint32_t want_idom[] = { 0, 0, 1, 2, 3, 2, 1, 7, 7, 7, 7 };

	CHECK(sb_cfg_dominators(g, 0, idom) == 0 && sb_cfg_dominators(g, 1, idom) == 0,
	      "dominators");
	for (int b = 0; b < 11; b++)
		CHECK(idom[b] == want_idom[b], "idom[%d] = %u, want %u", b, idom[b], want_idom[b]);
	CHECK(idom[11] == UINT32_MAX, "unreachable block has no dominator");
	CHECK(edge_back(g, 5, 1) == 1, "outer latch -> header is a back edge");
	CHECK(edge_back(g, 4, 3) == 1, "inner body -> inner header is a back edge");
	CHECK(edge_back(g, 3, 4) == 0 && edge_back(g, 1, 2) == 0 && edge_back(g, 2, 5) == 0,
	      "forward edges are not back edges");
	CHECK(edge_back(g, 9, 10) == 0 && edge_back(g, 11, 10) == 0, "diamond join");
	CHECK(sb_cfg_nout(g, 1) == 2 && sb_cfg_nin(g, 1) == 2, "header degree");
	CHECK(sb_cfg_nin(g, 10) == 3 && sb_cfg_nout(g, 10) == 0, "join degree");
	for (uint32_t k = g->in_start[3]; k < g->in_start[4]; k++)
		CHECK(g->edges[g->in_edges[k]].dst == 3, "in_edges point at block 3");
	CHECK(sb_cfg_block_at(g, 0x1000) == 0 && sb_cfg_block_at(g, 0x103f) == 3 &&
	      sb_cfg_block_at(g, 0x2049) == 11, "block_at inside");
	/* 8 is entered only by 7's branch; the loop header only by 0's (its
	 * latch edge is a back edge); the join 10 by three blocks. */
	CHECK(sb_cfg_conditional_pred(g, 8) == 7 && sb_cfg_conditional_pred(g, 1) == 0,
	      "conditional predecessors");
	CHECK(sb_cfg_conditional_pred(g, 10) == -1 && sb_cfg_conditional_pred(g, 0) == -1,
	      "no single conditional predecessor");
	CHECK(sb_cfg_latch(g, 1) == 5 && sb_cfg_latch(g, 3) == 4, "latches of the two loops");
	CHECK(sb_cfg_latch(g, 2) == -1 && sb_cfg_latch(g, 10) == -1, "no loop, no latch");
	CHECK(!sb_cfg_ends_in_call(g, 1), "a branch block does not end in a call");
	CHECK(sb_cfg_block_at(g, 0xfff) == -1 && sb_cfg_block_at(g, 0x1070) == -1 &&
	      sb_cfg_block_at(g, 0x2050) == -1, "block_at outside");
	{
		struct sb_cfg *two[2] = { g, g }, *m;
		uint32_t off[2];

		m = sb_cfg_merge(two, 2, off);
		CHECK(m && off[0] == 0 && off[1] == 12 && m->nblocks == 24 && m->nfuncs == 4,
		      "merged sizes");
		if (m) {
			CHECK(m->blocks[12 + 3].start == SB_CFG_TAG(1, 0x1030) &&
			      SB_CFG_UNTAG(m->blocks[15].last_insn) == 0x103c &&
			      SB_CFG_SLOT(m->blocks[15].start) == 1, "tagged addresses");
			CHECK(sb_cfg_block_at(m, SB_CFG_TAG(1, 0x2049)) == 12 + 11 &&
			      sb_cfg_block_at(m, 0x2049) == 11, "block_at on merged");
			for (size_t i = 0; i < m->nedges; i++)
				if (m->edges[i].src == 12 + 5 && m->edges[i].dst == 12 + 1)
					CHECK(m->edges[i].back, "back edge kept in the copy");
		}
		sb_cfg_free(m);
	}
	sb_cfg_free(g);
	guards();
	multi_entry();
	padding_entry();
	jump_entry(true);
	jump_entry(false);
	return CHECK_DONE("test_cfg");
}
