// SPDX-License-Identifier: MIT
/*
 * Leaders and the calls that decide how often a callee runs, with known
 * answers: a loop that calls a function through a pointer (the CFG has no
 * CALL edge to the callee) is led by the loop, never by the callee's
 * entry block, which runs exactly as often as the loop decides.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lime/lime.h"

#define NT 8

/* f: E -> H; H -> C (taken); H -> X (fall-through); C ends in `call *%rax`
 * (CALL_RETURN to L, no CALL edge); L -> H (back).  g: G -> G2 -> G3. */
enum { E, H, C, L, X, G, G2, G3, NB };

static struct sb_cfg *mkcfg(void)
{
	static const int ed[][3] = {
		{ E, H, SB_EDGE_SEQUENTIAL }, { H, C, SB_EDGE_TAKEN },
		{ H, X, SB_EDGE_FALLTHROUGH }, { C, L, SB_EDGE_CALL_RETURN },
		{ L, H, SB_EDGE_JUMP }, { G, G2, SB_EDGE_SEQUENTIAL },
		{ G2, G3, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "f", 0x1000, 0x1050);
	sb_cfg_add_func(g, "g", 0x2000, 0x2030);
	for (int b = 0; b < NB; b++) {
		uint64_t a = b < G ? 0x1000 + 0x10 * (uint64_t)b : 0x2000 + 0x10 * (uint64_t)(b - G);

		sb_cfg_add_block(g, b < G ? 0 : 1, a, a + 0x10, a + 0xc);
	}
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, (uint32_t)ed[i][0], (uint32_t)ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	return g;
}

static uint32_t edge_id(const struct sb_cfg *g, uint32_t src, uint32_t dst)
{
	for (size_t i = 0; i < g->nedges; i++)
		if (g->edges[i].src == src && g->edges[i].dst == dst)
			return (uint32_t)i;
	return UINT32_MAX;
}

static void test_pointer_call(void)
{
	static const double iters[NT] = { 3, 12, 21, 30, 39, 48, 57, 66 }; /* triangular */
	static const double jitter[NT] = { 3, -2, 5, 0, -4, 1, -3, 2 };
	double cnt[6][NT], one[NT], time[NT];
	struct sb_lime_event ev[6];
	struct sb_cfg *g = mkcfg();
	struct sb_lime_instance in = { .nthreads = NT, .time = time, .events = ev,
				       .imbalance = 0.3 };
	static const uint32_t src[6] = { E, H, C, L, G, G2 }, dst[6] = { H, C, L, H, G2, G3 };
	struct sb_lime_result *r = NULL;

	for (int t = 0; t < NT; t++) {
		one[t] = 1;
		time[t] = 1e5 + 1e4 * iters[t] + 1e2 * jitter[t];
	}
	for (int e = 0; e < 6; e++) {
		memcpy(cnt[e], e == 0 ? one : iters, sizeof(one));
		ev[e] = (struct sb_lime_event){ .kind = SB_LIME_EDGE, .superior = -1,
						.id = edge_id(g, src[e], dst[e]), .counts = cnt[e] };
		CHECK(ev[e].id != UINT32_MAX, "edge %d", e);
	}
	in.nevents = 6;
	CHECK(sb_lime_analyze(g, &in, NULL, &r) == 0 && r, "analyze");
	if (r) {
		CHECK(r->ncauses >= 1, "a cause");
		for (size_t k = 0; k < r->ncauses; k++)
			CHECK(r->causes[k].addr != g->blocks[G].last_insn,
			      "the callee's entry is no leader (cause %zu)", k);
		if (r->ncauses) {
			CHECK(r->causes[0].kind == SB_CAUSE_LOOP, "loop, kind %u", r->causes[0].kind);
			CHECK(r->causes[0].addr == g->blocks[H].last_insn, "at the loop's header");
			CHECK(r->causes[0].score > 0.9, "score %g", r->causes[0].score);
		}
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

int main(void)
{
	test_pointer_call();
	return CHECK_DONE("test_lime_callers");
}
