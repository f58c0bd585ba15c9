// SPDX-License-Identifier: MIT
/*
 * causes.c on a constructed profile: one function whose `if` block (B1)
 * leads to extra work (B2) that thread 0 does more of, across two pooled
 * instances.  Known answer: the top cause is shown at B1's branch, kind
 * undetermined (block samples); a balanced event gets no cause.
 *
 *   B0 entry -> B1 if -> B2 extra work -> B3 join;  B1 -> B3
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 3, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1040);
	sb_cfg_add_block(g, 0, 0x1000, 0x1010, 0x100c);
	sb_cfg_add_block(g, 0, 0x1010, 0x1020, 0x101c);   /* B1: cmp; jne */
	sb_cfg_add_block(g, 0, 0x1020, 0x1030, 0x102c);   /* B2: the extra work */
	sb_cfg_add_block(g, 0, 0x1030, 0x1040, 0x103c);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	/* per-thread busy (ms) and samples: B2 carries thread 0's extra work,
	 * B0 and B3 are the same for everyone */
	static const double busy[2][4] = { { 40, 10, 11, 10 }, { 39, 10, 10, 11 } };
	static const uint64_t extra[2][4] = { { 30, 1, 0, 1 }, { 29, 0, 1, 0 } };
	struct sb_thread_time pt[4];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int b = 0; b < 4; b++) {
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
			.vaddr = 0x1000 + 0x10 * (uint64_t)b, .vaddr2 = 0x100c + 0x10 * (uint64_t)b,
			.loc_hot = -1,
		};

		d.loc = (int32_t)sbt_wloc(p, d.vaddr, 10 + 2 * (unsigned)b);
		d.loc2 = (int32_t)sbt_wloc(p, d.vaddr2, 11 + 2 * (unsigned)b);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, 4, pt);
	for (int i = 0; i < 2; i++) {
		for (uint32_t t = 0; t < 4; t++)
			pt[t].busy_ns = (uint64_t)(busy[i][t] * 1e6);
		sbt_add_instance(p, i, 4, pt);
		for (uint32_t e = 0; e < 4; e++) {
			uint64_t c[4];

			for (uint32_t t = 0; t < 4; t++)
				c[t] = e == 2 ? extra[i][t] : 5 + (t + (uint32_t)i) % 2;
			sbt_add_vector(p, i, e, 4, c);
		}
	}
	return p;
}

int main(void)
{
	struct sb_profile *p = profile();
	struct sb_lime_opts o;
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.nsections_analyzed == 1 && c.ninstances == 2, "one section, two instances pooled");
	CHECK(c.n >= 1, "a cause found");
	if (c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->rank == 1 && top->section == 0, "ranked in its section");
		CHECK(top->kind == SB_CAUSE_UNDETERMINED, "block samples: undetermined (%u)", top->kind);
		/* B2 is entered only by B1's branch: shown at that branch (line 13) */
		CHECK(top->loc >= 0 && p->locs[top->loc].line == 13 && top->addr == 0x101c,
		      "shown at the deciding branch: line %u addr %#llx",
		      top->loc >= 0 ? p->locs[top->loc].line : 0, (unsigned long long)top->addr);
		CHECK(top->score > 0.8, "strong score %.3f", top->score);
	}
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].addr != 0x1000 && c.c[i].addr != 0x103c, "balanced blocks are no cause");
	sb_causes_free(&c);

	/* A damaged CFG in the profile is an error, not a crash. */
	p->cfgs[0].data[p->cfgs[0].len / 2] ^= 0xff;
	ret = sb_causes_compute(p, &o, &c, err, sizeof(err));
	CHECK(ret < 0 && strstr(err, "cannot be read"), "damaged CFG: %d %s", ret, err);
	sb_profile_free(p);
	return CHECK_DONE("test_causes");
}
