// SPDX-License-Identifier: MIT
/*
 * causes.c on a constructed profile whose deciding test the compiler
 * duplicated, as clang -O2 does for `if ((bi + bj) % n == me) work();`
 * (tests/workloads/demo.c): a 32/64-bit `div` fast path, each path with
 * its own copy of the comparison.  One copy falls through into the call,
 * the other reaches it through a block that is only a `jmp`.
 *
 *   B0 entry -> B1 `shr; je` (line 44) -> B2 64-bit div, cmp, jne (:69)
 *   B2 -> B3 `jmp` (:69) -> B5 call work (:70) -> B6 join (:68)
 *   B1 -> B4 32-bit div, cmp, jne (:69) -> B5;  B2, B4 -> B6 (not mine)
 *
 * Thread 0 owns more and calls work more: the leader is B5.  Known
 * answer: the cause is shown at the test's line 69, at the copy that ran
 * (B4: the 64-bit path never does).  With the two copies on different
 * lines they are two decisions, and the cause stays at the call (:70).
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NB 7
static const uint64_t start[NB] = { 0x1000, 0x1010, 0x1020, 0x1030, 0x1040, 0x1050, 0x1060 };
static const uint64_t last[NB] = { 0x100c, 0x101c, 0x102c, 0x1030, 0x104c, 0x1050, 0x106c };
static const uint64_t endb[NB] = { 0x1010, 0x1020, 0x1030, 0x1035, 0x1050, 0x1055, 0x1070 };

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 4, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_FALLTHROUGH },
		{ 2, 6, SB_EDGE_TAKEN }, { 3, 5, SB_EDGE_JUMP },
		{ 4, 5, SB_EDGE_FALLTHROUGH }, { 4, 6, SB_EDGE_TAKEN },
		{ 5, 6, SB_EDGE_CALL_RETURN },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1070);
	for (int b = 0; b < NB; b++)
		sb_cfg_add_block(g, 0, start[b], endb[b], last[b]);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* b2_line: the line of B2's (the 64-bit copy's) branch */
static struct sb_profile *profile(unsigned b2_line)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	const unsigned first_line[NB] = { 61, 44, 44, 69, 44, 70, 68 };
	const unsigned branch_line[NB] = { 64, 44, b2_line, 69, 69, 70, 68 };
	/* per-thread busy (ms); B5's samples (the call's, inclusive) carry
	 * thread 0's extra work, B4 runs equally often everywhere, B2 never */
	static const double busy[2][4] = { { 40, 10, 11, 10 }, { 39, 10, 10, 11 } };
	static const uint64_t extra[2][4] = { { 30, 1, 0, 1 }, { 29, 0, 1, 0 } };
	struct sb_thread_time pt[4];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 71);
	for (int b = 0; b < NB; b++) {
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
			.vaddr = start[b], .vaddr2 = last[b], .loc_hot = -1,
		};

		d.loc = (int32_t)sbt_wloc(p, d.vaddr, first_line[b]);
		d.loc2 = (int32_t)sbt_wloc(p, d.vaddr2, branch_line[b]);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, 4, pt);
	for (int i = 0; i < 2; i++) {
		for (uint32_t t = 0; t < 4; t++)
			pt[t].busy_ns = (uint64_t)(busy[i][t] * 1e6);
		sbt_add_instance(p, i, 4, pt);
		for (uint32_t e = 0; e < NB; e++) {
			uint64_t c[4];

			if (e == 2 || e == 3)
				continue;   /* the 64-bit path never runs: no samples */
			for (uint32_t t = 0; t < 4; t++)
				c[t] = e == 5 ? extra[i][t] : 5 + (t + (uint32_t)i) % 2;
			sbt_add_vector(p, i, e, 4, c);
		}
	}
	return p;
}

/* The top cause's line and address, 0 when none. */
static unsigned top_line(unsigned b2_line, uint64_t *addr)
{
	struct sb_profile *p = profile(b2_line);
	struct sb_causes c;
	char err[256] = "";
	unsigned line = 0;
	int ret;

	*addr = 0;
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	if (!ret && c.n >= 1) {
		CHECK(c.c[0].kind == SB_CAUSE_UNDETERMINED && c.c[0].score > 0.8,
		      "block samples: undetermined, strong (%u, %.3f)", c.c[0].kind, c.c[0].score);
		line = c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0;
		*addr = c.c[0].addr;
	}
	if (!ret)
		sb_causes_free(&c);
	sb_profile_free(p);
	return line;
}

int main(void)
{
	struct sb_cfg *g = graph();
	uint32_t gs[SB_CFG_MAX_GUARDS];
	uint64_t addr;
	unsigned line;

	/* the CFG: B5's guards are B4 directly and B2 through the jmp */
	CHECK(sb_cfg_guards(g, 5, gs, SB_CFG_MAX_GUARDS) == 2 &&
	      ((gs[0] == 2 && gs[1] == 4) || (gs[0] == 4 && gs[1] == 2)), "two guards of B5");
	CHECK(sb_cfg_guards(g, 5, gs, 1) == -1, "more guards than room: none");
	CHECK(sb_cfg_conditional_pred(g, 5) == -1, "no single conditional predecessor");
	CHECK(sb_cfg_conditional_pred(g, 3) == 2, "the jmp block's one guard");
	/* B6 is reached by the call's return: runs unguarded */
	CHECK(sb_cfg_guards(g, 6, gs, SB_CFG_MAX_GUARDS) == -1, "join: no guard");
	sb_cfg_free(g);

	line = top_line(69, &addr);
	CHECK(line == 69 && addr == 0x104c,
	      "duplicated test: shown at its line 69 at the copy that ran (line %u addr %#llx)",
	      line, (unsigned long long)addr);
	line = top_line(75, &addr);
	CHECK(line == 70 && addr == 0x1050,
	      "two tests on different lines: stays at the call (line %u addr %#llx)",
	      line, (unsigned long long)addr);
	return CHECK_DONE("test_causes_dup");
}
