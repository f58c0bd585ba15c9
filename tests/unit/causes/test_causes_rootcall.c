// SPDX-License-Identifier: MIT
/*
 * Sampled mode: root-only work in an OpenMP region whose master is the
 * main thread (`if (0 == id) run_part(n);` then the region's barrier).
 * Thread 0 (tid = pid) does nothing in the section but that call, so the
 * call holds all of its samples, as its enclosing frame _start does
 * (causes_frames.c); the other threads run a little common code.  Known
 * answer: the cause is the guard `if (0 == id)` (line 62); not do_block's
 * loop (line 18), whose trips are the same in every call.  The call is no
 * frame: its callee never reaches the barrier that closes the section.
 * (Taken for a frame, the call and run_part's call were skipped and the
 * loop inside the callee led.)  When do_block also calls out of the
 * graph (a library, a pointer: where it leads nobody knows) the call
 * holding all of the main thread's samples stays a frame, as main's
 * `worker(0)` in a join section must.
 *
 *   _start: S0 (call __libc_start_main@plt) -> S1.
 *   body:   B0 (id != 0?) -fall-> B1 (call run_part) -> B2 (call the
 *           barrier@plt, the section's sync); B0 -taken-> B2.
 *   run_part: R0 (call do_block) -> R1 return.
 *   do_block: D0 (loop, back to itself) -> D1 return (leaves: D1 calls
 *   out@plt, no CALL edge, and returns to D2).
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

#define NT 6
#define NI 16

static struct sb_cfg *graph(int leaves)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_CALL_RETURN },                            /* _start */
		{ 2, 3, SB_EDGE_FALLTHROUGH }, { 2, 4, SB_EDGE_TAKEN },   /* body */
		{ 3, 6, SB_EDGE_CALL }, { 3, 4, SB_EDGE_CALL_RETURN },
		{ 4, 5, SB_EDGE_CALL_RETURN },
		{ 6, 8, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },    /* run_part */
		{ 8, 8, SB_EDGE_TAKEN }, { 8, 9, SB_EDGE_FALLTHROUGH },   /* do_block */
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "_start", 0x1000, 0x1020);
	sbt_add_blocks(g, 0, 0x1000, 2);
	sb_cfg_add_func(g, "body", 0x1100, 0x1140);
	sbt_add_blocks(g, 1, 0x1100, 4);
	sb_cfg_add_func(g, "run_part", 0x1200, 0x1220);
	sbt_add_blocks(g, 2, 0x1200, 2);
	sb_cfg_add_func(g, "do_block", 0x1300, 0x1330);
	sbt_add_blocks(g, 3, 0x1300, 3);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_add_edge(g, 9, 10, leaves ? SB_EDGE_CALL_RETURN : SB_EDGE_SEQUENTIAL);
	sb_cfg_finalize(g);
	return g;
}

/* the sampled blocks: start, line (their branch on the same line) */
static const struct { uint64_t at; unsigned line; } blk[] = {
	{ 0x1000, 5 }, { 0x1100, 62 }, { 0x1110, 63 }, { 0x1200, 37 }, { 0x1300, 18 },
};
#define NB (sizeof(blk) / sizeof(blk[0]))

/* Samples of instance i, thread t: the root's work, everyone's common code. */
static uint64_t work(int i, uint32_t t)
{
	return t == 0 ? 40 + (uint64_t)(i % 3) : 0;
}

static uint64_t common(int i, uint32_t t)
{
	return 2 + (uint64_t)((t + (uint32_t)i) % 2);
}

static struct sb_profile *profile(int leaves)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph(leaves));
	sb_profile_meta_set(p, "executable", "/bin/w");
	sb_profile_meta_set(p, "pid", "100");   /* thread 0 is the main thread */
	sec_loc = (uint32_t)sbt_loc(p, 0x1120, 65, "body", "w.c");
	for (size_t b = 0; b < NB; b++) {
		const char *fn = blk[b].at < 0x1100 ? "_start" : blk[b].at < 0x1200 ? "body"
			       : blk[b].at < 0x1300 ? "run_part" : "do_block";
		long l1 = sbt_loc(p, blk[b].at, blk[b].line, fn, "w.c");
		long l2 = sbt_loc(p, blk[b].at + 0xc, blk[b].line, fn, "w.c");

		sb_profile_add_event(p, &(struct sb_event_def){
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0, .vaddr = blk[b].at,
			.vaddr2 = blk[b].at + 0xc, .loc = (int32_t)l1, .loc2 = (int32_t)l2,
			.loc_hot = -1 });
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * (work(i, t) + (t ? common(i, t) : 0)) +
					3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < NB; e++) {
			uint64_t c[NT];

			/* _start holds the main thread's samples whose unwinds
			 * reached it, 9 in 10; B0 the others' common code; the
			 * call, run_part's call and the loop the root's work */
			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? (t == 0 ? work(i, t) - work(i, t) / 10 : 0)
				     : e == 1 ? (t ? common(i, t) : 0) : work(i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* Whether B1's call is skipped as the main thread's frame. */
static void frame(int leaves)
{
	struct sb_profile *p = profile(leaves);
	struct sb_causes_graph g;
	uint8_t skip[NB] = { 0 };
	char err[256] = "";
	int ret = sb_causes_graph_load(p, &g, err, sizeof(err));

	CHECK(ret == 0, "graph: %d %s", ret, err);
	ret = ret ? ret : sb_causes_sample_skips(p, &g, 0, skip);
	CHECK(ret == 0, "skips: %d", ret);
	CHECK(skip[0], "_start is the main thread's frame, though a tenth of the unwinds "
	      "stopped short of it");
	CHECK(skip[2] == leaves && skip[3] == leaves,
	      "the root's call and run_part's %s (%d %d)",
	      leaves ? "stay frames: do_block calls out of the graph" : "are section work",
	      skip[2], skip[3]);
	sb_causes_graph_free(&g, p->nbinaries);
	sb_profile_free(p);
}

int main(void)
{
	struct sb_profile *p = profile(0);
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));
	const struct sb_loc *l;

	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.block_samples && c.nsections_analyzed == 1, "block samples, one section");
	l = c.n && c.c[0].loc >= 0 ? &p->locs[c.c[0].loc] : NULL;
	CHECK(l && l->line == 62, "the root's guard first, line 62 (line %d, %zu causes)",
	      l ? (int)l->line : -1, c.n);
	for (size_t i = 0; i < c.n; i++) {
		l = c.c[i].loc >= 0 ? &p->locs[c.c[i].loc] : NULL;
		CHECK(!l || l->line != 5, "cause %zu not at the main thread's _start", i);
	}
	sb_causes_free(&c);
	sb_profile_free(p);
	frame(0);
	frame(1);
	return CHECK_DONE("test_causes_rootcall");
}
