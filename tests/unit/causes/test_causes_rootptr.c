// SPDX-License-Identifier: MIT
/*
 * Sampled mode, root-only work called through a function pointer inside
 * an OpenMP region's loop (causes_frames.c), as gcc -O2 builds
 * `for (it) { if (!rank) work_fn(n); #pragma omp barrier }` (accuracy
 * seed W, p045).  The master is the main thread and the only one with
 * work: the pointer call holds all of its samples and no other thread
 * has it, as an enclosing frame would (main's call into the runtime, the
 * other threads' stacks never hold it), and the call leaves the graph, so
 * no call edge says where it leads.  It is no frame: it sits in the
 * section's own function, in the loop that holds the section's barrier,
 * and runs between the barriers of every instance.
 *
 * Known answer: the `if (!rank)` test guarding the call, R1's branch (line
 * 57); not the zero-trip test inside the work function (W0, line 18),
 * which every thread that enters it passes the same way.
 *
 *   main:   M0 call GOMP_parallel (out) -> M1 return.
 *   region (no call edge enters it): R0 entry -> R1 test (57) -(fall)->
 *           R2 `call *%rax` (58, out) -> R3 barrier call (60, out) -> R4
 *           latch (56) -(taken, back)-> R1; R1 -(taken)-> R3; R4 -> R5.
 *   work (no call edge enters it): W0 zero-trip test (18) -(fall)-> W1
 *           loop (19, back to itself) -> W2 return; W0 -(taken)-> W2.
 *
 * Thread 0 (tid = pid) samples W1 and, through the stack, R2 and M0;
 * the others wait at the barrier, a sample there now and then.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 60

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_CALL_RETURN },
		{ 2, 3, SB_EDGE_SEQUENTIAL }, { 3, 4, SB_EDGE_FALLTHROUGH },
		{ 3, 5, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_CALL_RETURN },
		{ 5, 6, SB_EDGE_CALL_RETURN }, { 6, 3, SB_EDGE_TAKEN },
		{ 6, 7, SB_EDGE_FALLTHROUGH },
		{ 8, 9, SB_EDGE_FALLTHROUGH }, { 8, 10, SB_EDGE_TAKEN },
		{ 9, 9, SB_EDGE_TAKEN }, { 9, 10, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "main", 0x1000, 0x1020);
	sbt_add_blocks(g, 0, 0x1000, 2);
	sb_cfg_add_func(g, "main._omp_fn.0", 0x1100, 0x1160);
	sbt_add_blocks(g, 1, 0x1100, 6);
	sb_cfg_add_func(g, "work", 0x1200, 0x1230);
	sbt_add_blocks(g, 2, 0x1200, 3);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* the sampled and named blocks: address, line */
static const struct {
	uint64_t a;
	unsigned line;
} ev[] = {
	{ 0x1210, 19 },   /* 0: W1, the work loop */
	{ 0x1120, 58 },   /* 1: R2, the pointer call */
	{ 0x1000, 51 },   /* 2: M0, main's region call */
	{ 0x1130, 60 },   /* 3: R3, the barrier call */
	{ 0x1110, 57 },   /* 4: R1, the test, never sampled */
	{ 0x1200, 18 },   /* 5: W0, the zero-trip test, never sampled */
	{ 0x1140, 56 },   /* 6: R4, the latch, never sampled */
};

static uint64_t count(uint32_t e, uint32_t t, int i)
{
	if (e <= 2)
		return t ? 0 : 20 + (uint64_t)(i % 3);
	if (e == 3)
		return t && (i + (int)t) % 4 == 0;
	return 0;
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t nev = sizeof(ev) / sizeof(ev[0]);

	sbt_add_binary_cfg(p, graph());
	sb_profile_meta_set(p, "pid", "100");      /* thread 0 (tid 100): the main thread */
	sbt_add_section(p, (uint32_t)sbt_wloc(p, 0x113c, 60), NT, pt);
	for (uint32_t e = 0; e < nev; e++)
		sbt_add_sampled_block(p, ev[e].a, ev[e].line, ev[e].line, e < 3);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = t ? 1000000 + 1000 * (uint64_t)((i + (int)t) % 5)
					  : 20000000 + 1000000 * (uint64_t)(i % 3);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < nev; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = count(e, t, i);
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
	int ret = sbt_compute(p, &c, err, sizeof(err));

	CHECK(ret == 0, "compute: %d %s", ret, err);
	if (!ret) {
		CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
		CHECK(c.n >= 1 && c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 57 &&
		      c.c[0].addr == 0x111c,
		      "the root test guarding the pointer call (line 57, 0x111c), not line %u at "
		      "%#llx", c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0,
		      c.n ? (unsigned long long)c.c[0].addr : 0ULL);
		for (size_t k = 0; k < c.n; k++)
			CHECK(c.c[k].loc < 0 || (p->locs[c.c[k].loc].line != 18 &&
						 p->locs[c.c[k].loc].line != 51),
			      "no cause at the work's zero-trip test or main's region call "
			      "(#%zu: line %u)", k + 1, p->locs[c.c[k].loc].line);
		sb_causes_free(&c);
	}
	sb_profile_free(p);
	return CHECK_DONE("test_causes_rootptr");
}
