// SPDX-License-Identifier: MIT
/*
 * Sampled mode, the decisions a cause's samples cannot be told from
 * (causes_alternatives.c).  The work is a call inside a loop (`for (r)
 * work()`, trips not known fixed: no SB_BLOCK_CONST_BOUND) which is
 * itself inside an outer loop, or behind a test:
 *
 *   nest:  B0 entry -> B1 iteration header (72) -> B2 outer header (75)
 *          -> B3 call of work (79, callee B10) -> B4 inner latch (76, back
 *          to B3) -> B5 outer latch (75, back to B2) -> B6 barrier call
 *          (84, B9) -> B7 iteration latch (72, back to B1) -> B8.
 *   guard: B2 a test (75) that enters the loop or jumps to B5, and B5
 *          (83) straight code.
 *
 * Thread t's call samples per instance: 7 or 2 (t % 4 == 1).  Samples
 * cannot tell more trips of the inner loop from more trips of the outer
 * one (or more entries through the test): the cause stays at the inner
 * latch (0x104c) and the other decision follows as its alternative, the
 * outer latch's branch (0x105c) or the test's (0x102c).  The outer
 * loop's own blocks settle it where they are sampled: B5 with one sample
 * per instance on every thread (flat: the outer loop runs alike, the
 * inner one differs) leaves the cause alone, settled; B5 with one sample
 * per outer trip (following the work: the outer loop differs) keeps the
 * alternative.  Known answers all.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100
#define NB 9
#define INNER_LATCH 0x104c
#define OUTER_LATCH 0x105c
#define TEST_BRANCH 0x102c

enum outer_samples { OUTER_NONE, OUTER_FLAT, OUTER_FOLLOWS };

static struct sb_cfg *graph(int guard)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_SEQUENTIAL },
		{ 3, 10, SB_EDGE_CALL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 3, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 6, 9, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },
		{ 7, 1, SB_EDGE_TAKEN }, { 7, 8, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	g->has_flags = true;
	sbt_add_leaf(g, 1, "barrier", 0x2000);
	sbt_add_leaf(g, 2, "work", 0x2010);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (guard) {
		sb_cfg_add_edge(g, 2, 3, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, 2, 5, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, 5, 6, SB_EDGE_SEQUENTIAL);
	} else {
		sb_cfg_add_edge(g, 2, 3, SB_EDGE_SEQUENTIAL);
		sb_cfg_add_edge(g, 5, 2, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, 5, 6, SB_EDGE_FALLTHROUGH);
	}
	sb_cfg_finalize(g);
	return g;
}

/* Call samples of thread t per instance; also its outer trips. */
static uint64_t work(uint32_t t)
{
	return t % 4 == 1 ? 7 : 2;
}

static struct sb_profile *profile(int guard, enum outer_samples outer)
{
	const unsigned line[NB + 2] = { 40, 72, 75, 79, 76, guard ? 83 : 75, 84, 72, 90, 60, 70 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events with samples: B3 (the call), B6 (the barrier call), work's
	 * B10, B5 (the outer latch); named without samples: B2, B4 */
	static const int blk[6] = { 3, 6, 10, 5, 2, 4 };
	uint32_t nvec = outer == OUTER_NONE ? 3 : 4;

	sbt_add_binary_cfg(p, graph(guard));
	sec_loc = (uint32_t)sbt_wloc(p, 0x106c, 84);
	for (int e = 0; e < 6; e++) {
		uint64_t b = (uint64_t)blk[e];

		sbt_add_sampled_block(p, sbt_block_addr(b, NB), line[b], line[b], e < 3);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * work(t) + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < nvec; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 1 ? (t + (uint32_t)i) % 3 == 0
				     : e == 3 ? (outer == OUTER_FLAT ? 1 : work(t))
					      : work(t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* The first cause of the one section, and the cause right after it. */
static int compute(int guard, enum outer_samples outer, struct sb_cause *first,
		   struct sb_cause *second)
{
	struct sb_profile *p = profile(guard, outer);
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));

	sb_profile_free(p);
	CHECK(ret == 0, "compute (guard %d outer %d): %s", guard, (int)outer, err);
	if (ret)
		return -1;
	CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
	memset(first, 0, sizeof(*first));
	memset(second, 0, sizeof(*second));
	if (c.n)
		*first = c.c[0];
	if (c.n > 1)
		*second = c.c[1];
	sb_causes_free(&c);
	return 0;
}

int main(void)
{
	struct sb_cause a, b;

	if (!compute(0, OUTER_NONE, &a, &b)) {
		CHECK(a.addr == INNER_LATCH && a.nalternatives == 1 && !a.alternative_of,
		      "nest, outer loop unsampled: at the inner latch, one alternative (%#llx, %u)",
		      (unsigned long long)a.addr, a.nalternatives);
		CHECK(b.addr == OUTER_LATCH && b.alternative_of == a.rank && b.rank == a.rank + 1 &&
		      b.score == a.score && !b.same_cluster,
		      "nest: the outer latch is its alternative, ranked next (%#llx of %u)",
		      (unsigned long long)b.addr, b.alternative_of);
	}
	if (!compute(0, OUTER_FOLLOWS, &a, &b)) {
		CHECK(a.addr == INNER_LATCH && a.nalternatives == 1,
		      "nest, outer latch samples follow the work: not settled (%#llx, %u)",
		      (unsigned long long)a.addr, a.nalternatives);
		CHECK(b.addr == OUTER_LATCH && b.alternative_of == a.rank,
		      "nest, follows: the outer latch listed (%#llx)", (unsigned long long)b.addr);
	}
	if (!compute(0, OUTER_FLAT, &a, &b)) {
		CHECK(a.addr == INNER_LATCH && a.nalternatives == 0,
		      "nest, outer latch samples alike on every thread: settled at the inner "
		      "latch (%#llx, %u)", (unsigned long long)a.addr, a.nalternatives);
		CHECK(!b.alternative_of, "nest, flat: no alternative listed");
	}
	if (!compute(1, OUTER_NONE, &a, &b)) {
		CHECK(a.addr == INNER_LATCH && a.nalternatives == 1,
		      "guard: at the inner latch, one alternative (%#llx, %u)",
		      (unsigned long long)a.addr, a.nalternatives);
		CHECK(b.addr == TEST_BRANCH && b.alternative_of == a.rank,
		      "guard: the entering test is its alternative (%#llx)",
		      (unsigned long long)b.addr);
	}
	return CHECK_DONE("test_causes_alternatives");
}
