// SPDX-License-Identifier: MIT
/*
 * Exact mode, a loop nest clang -O3 rotates into one header
 * (causes.c, sb_causes_rotated_outer): `for (h < T) for (r < N) work`
 * under a lock, T = 2 or 5 by thread (the planted hold time), N fixed.
 * Both back edges enter the inner body: the inner loop's by its test,
 * the outer's by a `jmp` after the outer test, as blind seed W p010
 * and L p019 compiled.  The inner test's count is N x T, the outer's T:
 * perfectly correlated, and the inner test runs first and falls into the
 * outer's, so "the decision comes first" showed the inner line.
 *
 *   B0 entry (50) -> B1 lock call (53, out) -> B2 `jmp` (53) -> B4.
 *   B3 (55) -> B4 body (57) -> B5 inner test (55) -(taken)-> B3,
 *   -(fall)-> B6 outer test (54) -(taken)-> B8, -(fall)-> B7 `jmp` (54)
 *   -> B4 (back).  B8 unlock and barrier call (63, out) -> B9 return.
 *
 * Known answers:
 *   - the predicate: B6 is the outer test of B5's rotated nest (both
 *     latch tests of header B4, B6's other way leaves the loop, B5's
 *     stays); not the other way round; and in a plain nest (the inner
 *     loop with a header of its own) no two tests share a header;
 *   - the analysis: the outer loop, B6's branch (0x106c, line 54), a loop
 *     cause; the inner test (B5, line 55), if listed, kept under it.
 *     (Exact flow here resolves every edge, so the inner test is no
 *     leader of its own; in W p010 the body's library calls left its
 *     incoming edges without counts, it led too, and came first.)
 */
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "causes/causes_loops.h"
#include "check.h"

#define NT 6
#define NI 40
#define NB 10
#define N 8

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_CALL_RETURN }, { 2, 4, SB_EDGE_JUMP },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 5, SB_EDGE_SEQUENTIAL },
		{ 5, 3, SB_EDGE_TAKEN }, { 5, 6, SB_EDGE_FALLTHROUGH },
		{ 6, 8, SB_EDGE_TAKEN }, { 6, 7, SB_EDGE_FALLTHROUGH }, { 7, 4, SB_EDGE_JUMP },
		{ 8, 9, SB_EDGE_CALL_RETURN },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static uint64_t trips(uint32_t t)
{
	return t % 2 ? 5 : 2;
}

/* block b's count in an instance, for outer trips T */
static uint64_t count(uint32_t b, uint64_t T)
{
	switch (b) {
	case 3: return (N - 1) * T;
	case 4:
	case 5: return N * T;
	case 6: return T;
	case 7: return T - 1;
	default: return 1;
	}
}

static struct sb_profile *profile(void)
{
	static const unsigned line[NB] = { 50, 53, 53, 55, 57, 55, 54, 54, 63, 65 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph());
	sec_loc = (uint32_t)sbt_wloc(p, 0x108c, 63);
	for (uint32_t b = 0; b < NB; b++) {
		struct sb_event_def d = sbt_block_event(SB_EVK_BLOCK_COUNT, 0x1000 + 0x10 * (uint64_t)b,
							-1, -1);

		d.loc = (int32_t)sbt_wloc(p, d.vaddr, line[b]);
		d.loc2 = (int32_t)sbt_wloc(p, d.vaddr2, line[b]);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 100000 * N * trips(t) + 1000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t b = 0; b < NB; b++) {
			uint64_t c[NT];

			if (b == 2 || b == 4 || b == 5 || b == 6)
				continue;   /* no counter (clang's guards) */
			for (uint32_t t = 0; t < NT; t++)
				c[t] = count(b, trips(t));
			sbt_add_vector(p, i, b, NT, c);
		}
	}
	return p;
}

/* The plain nest: B3 the inner header (line 55) entered from B2, B4
 * body, B5 inner test -(taken, back)-> B3, -(fall)-> B6 outer test
 * -(fall)-> B7 `jmp` -> B1 (back: the outer header), -(taken)-> B8. */
static struct sb_cfg *plain_graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_SEQUENTIAL }, { 2, 3, SB_EDGE_SEQUENTIAL },
		{ 3, 4, SB_EDGE_SEQUENTIAL }, { 4, 5, SB_EDGE_SEQUENTIAL },
		{ 5, 3, SB_EDGE_TAKEN }, { 5, 6, SB_EDGE_FALLTHROUGH },
		{ 6, 8, SB_EDGE_TAKEN }, { 6, 7, SB_EDGE_FALLTHROUGH }, { 7, 1, SB_EDGE_JUMP },
		{ 8, 9, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static void test_predicate(void)
{
	struct sb_cfg *g = graph(), *pl = plain_graph();

	CHECK(sb_causes_rotated_outer(g, 6, 5), "B6 is the outer test of B5's rotated nest");
	CHECK(!sb_causes_rotated_outer(g, 5, 6), "not the other way round");
	CHECK(!sb_causes_rotated_outer(g, 6, 6) && !sb_causes_rotated_outer(g, 6, 4),
	      "a block with itself, or with one that tests nothing");
	CHECK(!sb_causes_rotated_outer(pl, 6, 5) && !sb_causes_rotated_outer(pl, 5, 6),
	      "a plain nest: each loop its own header");
	sb_cfg_free(g);
	sb_cfg_free(pl);
}

int main(void)
{
	struct sb_profile *p;

	test_predicate();
	p = profile();
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));

	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	if (!ret && c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->addr == 0x106c && top->kind == SB_CAUSE_LOOP &&
		      top->loc >= 0 && p->locs[top->loc].line == 54,
		      "the outer loop's test (0x106c, line 54, loop), not %#llx (line %u, kind %u)",
		      (unsigned long long)top->addr, top->loc >= 0 ? p->locs[top->loc].line : 0,
		      top->kind);
		for (size_t k = 1; k < c.n; k++)
			CHECK(c.c[k].addr != 0x105c || c.c[k].same_cluster == 1,
			      "the inner test is kept under it (#%zu)", k + 1);
	} else {
		CHECK(0, "a cause found");
	}
	if (!ret)
		sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_nestrot");
}
