// SPDX-License-Identifier: MIT
/*
 * Exact mode, a loop nest whose inner loop the compiler rotated into the
 * outer one (lime_latch.c): `for (j = 0; j < J_t; j++) for (r = 0; r <
 * K; r++) work();`, the outer latch jumping straight into the inner body,
 * so both loops share the header B3.  Thread t runs J_t = t outer
 * iterations (a triangular split), K = 5 inner ones each.  Known answer:
 * the outer loop's test B5 decides (its exit leaves the cluster); the
 * inner test B4 exits once per entry whatever J_t is, so the shared
 * header's loop cause is shown at B5's branch, not at the header.
 *
 *   B0 -> B1 (J > 0?) -(taken)-> B8 return;  B1 -(fall)-> B2 -> B3 H
 *   B3 -> B4 inner test -(taken)-> B7 -> B3 (back);  B4 -(fall)-> B5
 *   B5 outer test -(fall)-> B6 -> B3 (back);  B5 -(taken)-> B8
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 8
#define NI 12
#define NB 9
#define K 5

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 8, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_JUMP },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 4, 7, SB_EDGE_TAKEN }, { 5, 6, SB_EDGE_FALLTHROUGH },
		{ 5, 8, SB_EDGE_TAKEN }, { 6, 3, SB_EDGE_JUMP },
		{ 7, 3, SB_EDGE_JUMP },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* Block b's executions on a thread of J outer iterations. */
static uint64_t runs(int b, uint64_t j)
{
	switch (b) {
	case 0: case 1: case 8: return 1;
	case 2: return j > 0;
	case 3: case 4: return j * K;
	case 7: return j * (K - 1);
	case 5: return j;
	default: return j ? j - 1 : 0;   /* 6 */
	}
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int b = 0; b < NB; b++) {
		struct sb_event_def d = sbt_block_event(SB_EVK_BLOCK_COUNT,
							0x1000 + 0x10 * (uint64_t)b, -1, -1);

		d.loc = (int32_t)sbt_wloc(p, d.vaddr, 10 + 2 * (unsigned)b);
		d.loc2 = (int32_t)sbt_wloc(p, d.vaddr2, 11 + 2 * (unsigned)b);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 20 us an inner iteration, a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 20000 * t * K + 1000 + 300 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < NB; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = runs((int)e, t);
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
	if (c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->kind == SB_CAUSE_LOOP, "a loop (%u)", top->kind);
		CHECK(top->addr == 0x105c, "at the outer test's branch: %#llx",
		      (unsigned long long)top->addr);
	}
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].addr != 0x103c && c.c[i].addr != 0x104c,
		      "not at the shared header or the inner test: %#llx",
		      (unsigned long long)c.c[i].addr);
	sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_nest");
}
