// SPDX-License-Identifier: MIT
/*
 * Exact mode on a constructed profile where the surplus rotates: in
 * instance i, 8 threads run 12 iterations of a loop whose
 * test sends iteration j to the work block when (i + j) % 8 == t, as LU's
 * (I+J) % P owners do.  Over the 16 instances every thread owns
 * the same total (checked), so only per-instance data shows the cause.  The test's
 * block runs m_i times on every thread; only its edges differ.  Known
 * answer: the top cause is that test, a branch, shown at B1's jump; the
 * work block it leads to is no cause of its own.
 *
 *   B0 entry -> B1 test -(fall)-> B2 work -> B4 latch;  B1 -(taken)-> B3
 *   -> B4;  B4 -(taken, back)-> B1;  B4 -> B5 return.  B4 is not counted.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 8
#define NI 16
#define NB 6

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 3, SB_EDGE_TAKEN }, { 2, 4, SB_EDGE_JUMP },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 1, SB_EDGE_TAKEN },
		{ 4, 5, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static unsigned owned(int i, uint32_t t)
{
	unsigned n = 0;

	for (int j = 0; j < 12; j++)
		n += (uint32_t)((i + j) % NT) == t;
	return n;
}

static struct sb_profile *profile(double *spread)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	double tot[NT] = { 0 }, lo = INFINITY, hi = 0;

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
		struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = NT,
					  .per_thread = pt };
		unsigned m = 12;

		/* 50 us a work block, 1 us an iteration, a little jitter */
		for (uint32_t t = 0; t < NT; t++) {
			pt[t].busy_ns = 1000 * (50 * owned(i, t) + m) + 300 * ((t * 7 + (uint32_t)i * 3) % 5);
			tot[t] += (double)owned(i, t);
		}
		sb_profile_add_instance(p, &in);
		for (uint32_t e = 0; e < NB; e++) {
			uint64_t c[NT];

			if (e == 4)
				continue;   /* the latch has no counter */
			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 || e == 5 ? 1 : e == 1 ? m : e == 2 ? owned(i, t)
									: m - owned(i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	for (uint32_t t = 0; t < NT; t++) {
		lo = fmin(lo, tot[t]);
		hi = fmax(hi, tot[t]);
	}
	*spread = (hi - lo) / hi;
	return p;
}

int main(void)
{
	double spread;
	struct sb_profile *p = profile(&spread);
	struct sb_causes c;
	char err[256] = "";
	int ret;

	CHECK(spread == 0, "per-thread totals equal: spread %.3f", spread);
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	CHECK(c.n >= 1, "a cause found");
	if (c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->rank == 1 && top->same_cluster == 0, "ranked first, shown");
		CHECK(top->kind == SB_CAUSE_BRANCH, "a branch (%u)", top->kind);
		CHECK(top->addr == 0x101c, "at the test's jump: %#llx", (unsigned long long)top->addr);
		CHECK(top->score > 0.8, "strong score %.3f", top->score);
	}
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].addr != 0x102c || c.c[i].same_cluster, "the work block is not a cause of its own");
	sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_rotate");
}
