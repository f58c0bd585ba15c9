// SPDX-License-Identifier: MIT
/*
 * Order of causes of about equal score (causes_ties.c), with known answers.
 *
 * A program of three functions: worker (blocks 0-3: setup, the planted
 * test at line 62, its then-path that calls work, the barrier call), bar,
 * the condvar barrier the section closes in (blocks 4-5: the last
 * arriver's test `if (++count == n)` at line 24, the wait at line 30), and
 * work (blocks 6-7, entered at line 16).  The last thread to arrive is the
 * busiest, so the barrier's test follows busy time as well as the planted
 * test, here a little better (score 1.00 against 0.98).
 *
 *  - section closed in bar (a user barrier, bar called by worker): the
 *    barrier's test ranks after the planted one, and each cause comes back
 *    placed at its line;
 *  - the same section as a pthread barrier: no reordering (a library's
 *    barrier runs no code of the program's);
 *  - bar not called by anything (a thread's start routine, where an inline
 *    barrier macro sits beside the work): no reordering;
 *  - bar inlined into worker (the section's location in worker's machine
 *    code, its source function "bar"): reordered;
 *  - a leader at work's entry (0.995) just above a leader in worker that is
 *    not the calling block (1.0 vs 0.995, within 1%): worker ranks first,
 *    the function that calls work decides how often it runs;
 *  - work's entry as a CALL cause above worker's test that leads to the
 *    call: the test first at any score; a block after the call does not;
 *  - within one function, of nearly equal score (1%), the test before the
 *    block it leads to; 3% apart, LIME's order;
 *  - work reached only through a pointer (no CALL edge: a comparator the
 *    library calls back), its entry a CALL cause at 0.72 above the planted
 *    test at 0.05: the test first, the callback's entry after it; called
 *    directly, sink_sync keeps LIME's order (the tie rules decide there).
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes.h"
#include "causes/causes_priv.h"
#include "cfg/cfg.h"
#include "check.h"

#define NB 8
enum { CALLED, PTHREAD, UNCALLED, INLINED, PTRCALL };

static const unsigned line_of[NB] = { 58, 62, 63, 66, 24, 30, 16, 18 };
static const int func_of[NB] = { 0, 0, 0, 0, 1, 1, 2, 2 };

static uint64_t start(int b) { return 0x1000 + 0x10 * (uint64_t)b; }
static uint64_t last(int b) { return start(b) + 0xc; }

static struct sb_cfg *graph(int mode)
{
	struct sb_cfg *g = sb_cfg_alloc();
	const char *names[3] = { "worker", mode == INLINED ? "worker" : "bar", "work" };

	/* inlined: bar's blocks are worker's (one function of 6 blocks) */
	if (mode == INLINED) {
		sb_cfg_add_func(g, names[0], start(0), start(6));
		sb_cfg_add_func(g, names[2], start(6), start(8));
	} else {
		sb_cfg_add_func(g, names[0], start(0), start(4));
		sb_cfg_add_func(g, names[1], start(4), start(6));
		sb_cfg_add_func(g, names[2], start(6), start(8));
	}
	for (int b = 0; b < NB; b++) {
		uint32_t f = mode == INLINED ? (b < 6 ? 0 : 1) : (uint32_t)func_of[b];

		sb_cfg_add_block(g, f, start(b), start(b) + 0x10, last(b));
	}
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 1, 3, SB_EDGE_TAKEN);
	if (mode != PTRCALL)      /* (through a pointer: no CALL edge) */
		sb_cfg_add_edge(g, 2, 6, SB_EDGE_CALL);
	sb_cfg_add_edge(g, 2, 3, SB_EDGE_CALL_RETURN);
	if (mode == INLINED) {
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_SEQUENTIAL);
	} else if (mode != UNCALLED) {
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_CALL);
	}
	sb_cfg_add_edge(g, 4, 5, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 6, 7, SB_EDGE_SEQUENTIAL);
	sb_cfg_finalize(g);
	return g;
}

struct fix {
	struct sb_profile *p;
	struct sb_causes_graph g;
	struct sb_cfg *cfg;
	uint32_t off[1];
};

static void setup(struct fix *x, int mode)
{
	struct sb_section sec = { .kind = mode == PTHREAD ? SB_SECT_BARRIER : SB_SECT_USER_BARRIER };
	static const char *fn[3] = { "worker", "bar", "work" };

	memset(x, 0, sizeof(*x));
	x->p = sb_profile_alloc();
	sb_profile_add_binary(x->p, "/bin/t", "ab");
	for (int b = 0; b < NB; b++) {
		struct sb_loc l = { .addr = last(b), .offset = last(b), .binary = 0,
				    .line = line_of[b], .function = (char *)fn[func_of[b]],
				    .file = "t.c" };
		struct sb_loc s0 = l;
		struct sb_event_def d = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
					  .vaddr = start(b), .vaddr2 = last(b), .loc_hot = -1 };

		s0.addr = s0.offset = start(b);
		d.loc = (int32_t)sb_profile_add_loc(x->p, &s0);
		d.loc2 = (int32_t)sb_profile_add_loc(x->p, &l);
		sb_profile_add_event(x->p, &d);
		if (b == 5)       /* the section closes at bar's wait */
			sec.loc = (uint32_t)d.loc2;
	}
	sb_profile_add_section(x->p, &sec);
	x->cfg = graph(mode);
	x->g.per_bin = &x->cfg;
	x->g.offset = x->off;
	x->g.merged = sb_cfg_merge(&x->cfg, 1, x->off);
}

static void teardown(struct fix *x)
{
	sb_cfg_free(x->g.merged);
	sb_cfg_free(x->cfg);
	sb_profile_free(x->p);
}

static struct sb_lime_cause branch(int b, double score)
{
	return (struct sb_lime_cause){ .kind = SB_CAUSE_BRANCH, .addr = SB_CFG_TAG(0, last(b)),
				       .score = score, .leader_score = 1, .beta = score };
}

/* The lines of r's causes after sb_causes_sink_sync, through at[]. */
static void sink(int mode, unsigned *first, unsigned *second)
{
	struct fix x;
	struct sb_lime_cause cs[2] = { branch(4, 1.0), branch(1, 0.98) };
	struct sb_lime_result r = { .causes = cs, .ncauses = 2 };
	struct sb_cause at[2];

	setup(&x, mode);
	CHECK(sb_causes_sink_sync(x.p, &x.g, 0, &r, at) == 0, "sink_sync: returns 0");
	*first = at[0].loc >= 0 ? x.p->locs[at[0].loc].line : 0;
	*second = at[1].loc >= 0 ? x.p->locs[at[1].loc].line : 0;
	CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(*first == 62 ? 1 : 4)),
	      "sink_sync: the causes and their placements move together");
	teardown(&x);
}

/* A callback's entry (work, block 6) as a CALL cause above the test. */
static void callback(int mode, unsigned *first, unsigned *second)
{
	struct fix x;
	struct sb_lime_cause cs[2] = {
		{ .kind = SB_CAUSE_CALL, .addr = SB_CFG_TAG(0, last(6)), .score = 0.72,
		  .leader_score = 1, .beta = 0.72 },
		branch(1, 0.05),
	};
	struct sb_lime_result r = { .causes = cs, .ncauses = 2 };
	struct sb_cause at[2];

	setup(&x, mode);
	CHECK(sb_causes_sink_sync(x.p, &x.g, 0, &r, at) == 0, "sink_sync: returns 0");
	*first = at[0].loc >= 0 ? x.p->locs[at[0].loc].line : 0;
	*second = at[1].loc >= 0 ? x.p->locs[at[1].loc].line : 0;
	teardown(&x);
}

int main(void)
{
	unsigned a, b;

	callback(PTRCALL, &a, &b);
	CHECK(a == 62 && b == 16, "a callback's entry ranks after the planted test (%u, %u)", a, b);
	callback(CALLED, &a, &b);
	CHECK(a == 16 && b == 62, "a directly called function's entry: LIME's order (%u, %u)", a, b);

	sink(CALLED, &a, &b);
	CHECK(a == 62 && b == 24, "called barrier function: planted test first (%u, %u)", a, b);
	sink(PTHREAD, &a, &b);
	CHECK(a == 24 && b == 62, "pthread barrier section: LIME's order kept (%u, %u)", a, b);
	sink(UNCALLED, &a, &b);
	CHECK(a == 24 && b == 62, "section in an uncalled function: LIME's order kept (%u, %u)",
	      a, b);
	sink(INLINED, &a, &b);
	CHECK(a == 62 && b == 24, "barrier inlined into its caller: planted test first (%u, %u)",
	      a, b);

	{
		struct fix x;
		struct sb_lime_cause cs[2] = { branch(6, 1.0), branch(1, 0.995) };
		struct sb_lime_result r = { .causes = cs, .ncauses = 2 };

		setup(&x, CALLED);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(1)),
		      "ties: the caller's test ranks before the callee's entry");
		r.causes[0] = branch(6, 1.0);
		r.causes[1] = branch(1, 0.97);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(6)),
		      "ties: 3%% apart is no tie, LIME's order kept");
		/* work's entry as a CALL cause: the test in worker that leads to
		 * the call ranks first at any score (10% apart here) */
		r.causes[0] = (struct sb_lime_cause){ .kind = SB_CAUSE_CALL,
			.addr = SB_CFG_TAG(0, last(6)), .score = 1.0 };
		r.causes[1] = branch(1, 0.90);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(1)),
		      "a callee's entry ranks after the caller's test that leads to the call");
		/* block 3 (after the call) leads to no call of work: no swap */
		r.causes[0] = (struct sb_lime_cause){ .kind = SB_CAUSE_CALL,
			.addr = SB_CFG_TAG(0, last(6)), .score = 1.0 };
		r.causes[1] = branch(3, 0.90);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(6)),
		      "a caller's block that leads to no call of work does not move up");
		/* one function, within 1%: the test (block 1) before the block it
		 * leads to (2); 3% apart, LIME's order */
		r.causes[0] = branch(2, 1.0);
		r.causes[1] = branch(1, 0.995);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(1)),
		      "near tie in one function: the test before the block it leads to");
		r.causes[0] = branch(2, 1.0);
		r.causes[1] = branch(1, 0.97);
		sb_causes_order_ties(x.g.merged, &r);
		CHECK(r.causes[0].addr == SB_CFG_TAG(0, last(2)),
		      "3%% apart in one function: LIME's order kept");
		teardown(&x);
	}
	return CHECK_DONE("test_causes_sink");
}
