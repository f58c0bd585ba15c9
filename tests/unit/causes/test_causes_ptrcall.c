// SPDX-License-Identifier: MIT
/*
 * Exact mode, work reached through a function pointer: the worker calls
 * `find` (counted code, an early-exit search) through a pointer, so the
 * CFG has no CALL edge from the call site B1, as for a library's PLT
 * stub.  The threads t % 3 == 0 search 3x as far.  The call site's
 * samples are find's time (a sample counts at every call site on its
 * stack), and find's blocks have their own; the odd threads also run 10%
 * slower throughout.  Known answer: the search's loop (B7, line 31) is
 * the first cause (its trips, or its slower steps); the call (line 21)
 * is no hardware cause, since find is entered, per thread, exactly as
 * often as the call runs (causes_exact.c, calls_counted_by_pointer).
 * Without that, the call's samples, with no count to explain them, made
 * a hardware cause at the call that outranked the search.
 *
 *   worker: B0 (guard call) -> B1 (call *find) -> B2 (guard call) ->
 *   B3 -(taken, back)-> B1; B3 -> B4 return.
 *   __sanitizer_cov_trace_pc_guard: B5.
 *   find: B6 (guard call) -> B7 (compare, back to itself) -> B8 return.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

#define NT 6
#define NI 12
#define M 20     /* calls per instance and thread */

static uint64_t trips(uint32_t t)
{
	return t % 3 == 0 ? 60 : 20;
}

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 5, SB_EDGE_CALL }, { 0, 1, SB_EDGE_CALL_RETURN },
		{ 1, 2, SB_EDGE_CALL_RETURN },     /* call *%rax */
		{ 2, 5, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 1, SB_EDGE_TAKEN }, { 3, 4, SB_EDGE_FALLTHROUGH },
		{ 6, 5, SB_EDGE_CALL }, { 6, 7, SB_EDGE_CALL_RETURN },
		{ 7, 7, SB_EDGE_TAKEN }, { 7, 8, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1050);
	sb_cfg_add_func(g, "__sanitizer_cov_trace_pc_guard", 0x1050, 0x1060);
	sb_cfg_add_func(g, "find", 0x1060, 0x1090);
	sbt_add_blocks(g, 0, 0x1000, 5);
	sbt_add_blocks(g, 1, 0x1050, 1);
	sbt_add_blocks(g, 2, 0x1060, 3);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static struct sb_profile *profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	/* events: counts of B0, B1, B2, B6, B7, B8; samples of B1 (find's
	 * time, at its caller) and of B7 (find's own) */
	static const int blk[8] = { 0, 1, 2, 6, 7, 8, 1, 7 };
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph());
	sb_profile_meta_set(p, "event_sources", "cpu-clock sampling: 1000 Hz");
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int e = 0; e < 8; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)blk[e];
		unsigned line = blk[e] < 5 ? 20 + (unsigned)blk[e] : 24 + (unsigned)blk[e];
		struct sb_event_def d = sbt_block_event(
			e < 6 ? SB_EVK_BLOCK_COUNT : SB_EVK_BLOCK_SAMPLES, a, -1, -1);

		d.loc = (int32_t)sbt_loc(p, a, line, blk[e] < 5 ? "worker" : "find", "w.c");
		d.loc2 = (int32_t)sbt_loc(p, a + 0xc, line, blk[e] < 5 ? "worker" : "find", "w.c");
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* M calls of trips(t) steps, 50 us a step, the odd threads 10%
		 * slower throughout; 1 ms a sample */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 50000 * M * trips(t) * (t % 2 ? 11 : 10) / 10 +
					3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 8; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++) {
				uint64_t steps = M * trips(t);

				c[t] = e == 0 ? 1 : e == 4 ? steps : e < 6 ? M
				       : (pt[t].busy_ns + 500000) / 1000000;   /* samples, both */
			}
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* The pooled events (causes_exact.c) of the section: B1, the pointer
 * call, is no hardware event (find's own B7 is an event, whether its
 * slower steps prove a cause or not). */
static void pooled(const struct sb_profile *p)
{
	struct sb_causes_graph g;
	struct sb_causes_pooled li = { 0 };
	size_t *by_inst[NI], nvec[NI] = { 0 };
	char err[256] = "";
	bool b1 = false, b7 = false;
	int ret = sb_causes_graph_load(p, &g, err, sizeof(err));

	CHECK(ret == 0, "graph: %d %s", ret, err);
	for (int i = 0; i < NI; i++)
		by_inst[i] = malloc(p->nvectors * sizeof(size_t));
	for (size_t v = 0; v < p->nvectors; v++) {
		uint32_t i = p->vectors[v].instance;

		by_inst[i][nvec[i]++] = v;
	}
	ret = ret ? ret : sb_causes_pool_exact(p, &g, 0, by_inst, nvec, &li, NULL);
	CHECK(ret == 0, "pool: %d", ret);
	for (size_t e = 0; !ret && e < li.in.nevents; e++) {
		bool varies = false;

		for (uint32_t t = 0; t < li.in.nthreads; t++)
			varies |= li.ev[e].counts[t] != 0;
		if (li.ev[e].kind != SB_LIME_HW)
			continue;
		b1 |= li.ev[e].id == 1 && varies;
		b7 |= li.ev[e].id == 7;
	}
	CHECK(!b1, "the pointer call's samples are find's: no hardware event at B1");
	CHECK(b7, "find's own samples are a hardware event");
	sb_causes_pooled_free(&li);
	for (int i = 0; i < NI; i++)
		free(by_inst[i]);
	sb_causes_graph_free(&g, p->nbinaries);
}

int main(void)
{
	struct sb_profile *p = profile();
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));

	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	CHECK(c.n >= 1 && c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 31,
	      "the search's loop first, line 31 (kind %d, line %d)",
	      c.n ? (int)c.c[0].kind : -1,
	      c.n && c.c[0].loc >= 0 ? (int)p->locs[c.c[0].loc].line : -1);
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].kind != SB_CAUSE_HW || c.c[i].loc < 0 ||
		      p->locs[c.c[i].loc].line != 21,
		      "cause %zu (score %.3f): no hardware cause at the pointer call", i,
		      c.c[i].score);
	sb_causes_free(&c);
	pooled(p);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_ptrcall");
}
