// SPDX-License-Identifier: MIT
/*
 * Leaders and the calls that decide how often a callee runs, with known
 * answers: a loop that calls a function through a pointer (the CFG has no
 * CALL edge to the callee) is led by the loop, never by the callee's
 * entry block, which runs exactly as often as the loop decides; so is a
 * loop whose call reaches the callee through a wrapper's tail `jmp` (no
 * edge at all); and a then-path whose entering edges exact flow could not
 * count is shown at the branch that guards it; and an outer loop whose
 * header's edges flow could not count leads the loop nested in it.
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

/* Blocks 0x10 apart in functions of the given first blocks. */
static struct sb_cfg *mkcfg2(int nb, const int *fstart, int nf, const int (*ed)[3], int ne)
{
	struct sb_cfg *g = sb_cfg_alloc();

	for (int f = 0; f < nf; f++) {
		int end = f + 1 < nf ? fstart[f + 1] : nb;

		sb_cfg_add_func(g, f ? "callee" : "f", 0x1000 + 0x10 * (uint64_t)fstart[f],
				0x1000 + 0x10 * (uint64_t)end);
	}
	for (int b = 0, f = 0; b < nb; b++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)b;

		while (f + 1 < nf && b >= fstart[f + 1])
			f++;
		sb_cfg_add_block(g, (uint32_t)f, a, a + 0x10, a + 0xc);
	}
	for (int i = 0; i < ne; i++)
		sb_cfg_add_edge(g, (uint32_t)ed[i][0], (uint32_t)ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	return g;
}

/* Runs LIME on edges (src, dst, which count vector) and returns the result. */
static struct sb_lime_result *run_edges(const struct sb_cfg *g, const uint32_t (*e)[3], int ne,
					const double (*vec)[NT], const double *time)
{
	static double cnt[16][NT];
	static struct sb_lime_event ev[16];
	struct sb_lime_instance in = { .nthreads = NT, .time = time, .events = ev,
				       .imbalance = 0.3, .nevents = (size_t)ne };
	struct sb_lime_result *r = NULL;

	for (int k = 0; k < ne; k++) {
		memcpy(cnt[k], vec[e[k][2]], sizeof(cnt[k]));
		ev[k] = (struct sb_lime_event){ .kind = SB_LIME_EDGE, .superior = -1,
						.id = edge_id(g, e[k][0], e[k][1]), .counts = cnt[k] };
		CHECK(ev[k].id != UINT32_MAX, "edge %d", k);
	}
	CHECK(sb_lime_analyze(g, &in, NULL, &r) == 0 && r, "analyze");
	return r;
}

/* The loop's call goes to wrapper W, which tail-jumps to G: no edge
 * reaches G.  f: E H C L X | W | G G2 G3. */
static void test_tail_call(void)
{
	enum { E2, H2, C2, L2, X2, W2, Gt, Gt2, Gt3, NB2 };
	static const int fs[3] = { E2, W2, Gt };
	static const int ed[][3] = {
		{ E2, H2, SB_EDGE_SEQUENTIAL }, { H2, C2, SB_EDGE_TAKEN },
		{ H2, X2, SB_EDGE_FALLTHROUGH }, { C2, L2, SB_EDGE_CALL_RETURN },
		{ C2, W2, SB_EDGE_CALL }, { L2, H2, SB_EDGE_JUMP },
		{ Gt, Gt2, SB_EDGE_SEQUENTIAL }, { Gt2, Gt3, SB_EDGE_SEQUENTIAL },
	};
	static const uint32_t ev[][3] = {
		{ E2, H2, 0 }, { H2, C2, 1 }, { C2, L2, 1 }, { L2, H2, 1 }, { Gt, Gt2, 1 },
		{ Gt2, Gt3, 1 },
	};
	static const double vec[2][NT] = { { 1, 1, 1, 1, 1, 1, 1, 1 },
					   { 5, 9, 2, 14, 7, 3, 11, 6 } };
	double time[NT];
	struct sb_cfg *g = mkcfg2(NB2, fs, 3, ed, 8);
	struct sb_lime_result *r;

	for (int t = 0; t < NT; t++)
		time[t] = 1e5 + 1e4 * vec[1][t] + 50.0 * (t % 3);
	r = run_edges(g, ev, 6, vec, time);
	if (r) {
		for (size_t k = 0; k < r->ncauses; k++)
			CHECK(r->causes[k].addr != g->blocks[Gt].last_insn,
			      "the tail-called function's entry is no leader (cause %zu)", k);
		CHECK(r->ncauses && r->causes[0].kind == SB_CAUSE_LOOP &&
		      r->causes[0].addr == g->blocks[H2].last_insn, "the loop leads");
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/* if (!rank) work();  E -> B; B -> T (taken, no event: flow could not
 * split T's count); B -> P (fall-through); P (padding) -> T (sequential,
 * constant); T ends in a call (-> X).  The cause is B's branch. */
static void test_unseen_guard(void)
{
	enum { E3, B3, P3, T3, X3, NB3 };
	static const int fs[1] = { E3 };
	static const int ed[][3] = {
		{ E3, B3, SB_EDGE_SEQUENTIAL }, { B3, T3, SB_EDGE_TAKEN },
		{ B3, P3, SB_EDGE_FALLTHROUGH }, { P3, T3, SB_EDGE_SEQUENTIAL },
		{ T3, X3, SB_EDGE_CALL_RETURN },
	};
	static const uint32_t ev[][3] = { { E3, B3, 0 }, { P3, T3, 2 }, { T3, X3, 1 } };
	static const double vec[3][NT] = { { 1, 1, 1, 1, 1, 1, 1, 1 },
					   { 40, 0, 0, 0, 0, 0, 0, 0 },
					   { 0, 0, 0, 0, 0, 0, 0, 0 } };
	double time[NT];
	struct sb_cfg *g = mkcfg2(NB3, fs, 1, ed, 5);
	struct sb_lime_result *r;

	for (int t = 0; t < NT; t++)
		time[t] = 1e5 + 1e4 * vec[1][t] + 50.0 * (t % 3);
	r = run_edges(g, ev, 3, vec, time);
	if (r) {
		CHECK(r->ncauses >= 1, "a cause");
		if (r->ncauses) {
			CHECK(r->causes[0].kind == SB_CAUSE_BRANCH, "branch, kind %u", r->causes[0].kind);
			CHECK(r->causes[0].addr == g->blocks[B3].last_insn, "at the guard");
			CHECK(r->causes[0].own_addr == g->blocks[T3].last_insn,
			      "the leader's own block kept (for a guard with no line)");
		}
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/* for (h < trips) { for (q < 62) ...; }: E -> H (uncounted); H -> I
 * (uncounted); I -> J (taken) -> I (back); I -> L (fall-through,
 * uncounted); L -> H (taken, back); L -> X.  Only the inner loop's edges
 * and the outer back edge are counted.  The outer loop leads. */
static void test_unknown_header(void)
{
	enum { E4, H4, I4, J4, L4, X4, NB4 };
	static const int fs[1] = { E4 };
	static const int ed[][3] = {
		{ E4, H4, SB_EDGE_SEQUENTIAL }, { H4, I4, SB_EDGE_SEQUENTIAL },
		{ I4, J4, SB_EDGE_TAKEN }, { J4, I4, SB_EDGE_JUMP },
		{ I4, L4, SB_EDGE_FALLTHROUGH }, { L4, H4, SB_EDGE_TAKEN },
		{ L4, X4, SB_EDGE_FALLTHROUGH },
	};
	static const uint32_t ev[][3] = {
		{ I4, J4, 1 }, { J4, I4, 1 }, { L4, H4, 2 }, { L4, X4, 0 },
	};
	static const double trips[NT] = { 2, 7, 2, 7, 2, 7, 2, 7 };
	double vec[3][NT], time[NT];
	struct sb_cfg *g = mkcfg2(NB4, fs, 1, ed, 7);
	struct sb_lime_result *r;

	for (int t = 0; t < NT; t++) {
		vec[0][t] = 1;
		vec[1][t] = 62 * trips[t];
		vec[2][t] = trips[t] - 1;
		time[t] = 1e5 + 1e4 * trips[t] + 50.0 * (t % 3);
	}
	CHECK(g->edges[edge_id(g, L4, H4)].back && g->edges[edge_id(g, J4, I4)].back,
	      "back edges");
	r = run_edges(g, ev, 4, (const double (*)[NT])vec, time);
	if (r) {
		CHECK(r->ncauses >= 1, "a cause");
		if (r->ncauses) {
			CHECK(r->causes[0].kind == SB_CAUSE_LOOP, "loop, kind %u", r->causes[0].kind);
			CHECK(r->causes[0].addr == g->blocks[H4].last_insn,
			      "the outer loop's header, not the inner one's");
		}
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/* if (tid == 17) { loop }: E -> B; B -> Q (fall-through) -> T
 * (sequential: Q is alignment padding run through, one way in and out);
 * B -> X (taken); T ends in a call (-> X).  Only T's edge is counted.
 * The cause is B's branch. */
static void test_guard_through_padding(void)
{
	enum { E5, B5, Q5, T5, X5, NB5 };
	static const int fs[1] = { E5 };
	static const int ed[][3] = {
		{ E5, B5, SB_EDGE_SEQUENTIAL }, { B5, Q5, SB_EDGE_FALLTHROUGH },
		{ B5, X5, SB_EDGE_TAKEN }, { Q5, T5, SB_EDGE_SEQUENTIAL },
		{ T5, X5, SB_EDGE_CALL_RETURN },
	};
	static const uint32_t ev[][3] = { { E5, B5, 0 }, { T5, X5, 1 } };
	static const double vec[2][NT] = { { 1, 1, 1, 1, 1, 1, 1, 1 },
					   { 0, 0, 0, 0, 0, 30, 0, 0 } };
	double time[NT];
	struct sb_cfg *g = mkcfg2(NB5, fs, 1, ed, 5);
	struct sb_lime_result *r;

	for (int t = 0; t < NT; t++)
		time[t] = 1e5 + 1e4 * vec[1][t] + 50.0 * (t % 3);
	r = run_edges(g, ev, 2, vec, time);
	if (r) {
		CHECK(r->ncauses >= 1, "a cause");
		if (r->ncauses) {
			CHECK(r->causes[0].kind == SB_CAUSE_BRANCH, "branch, kind %u", r->causes[0].kind);
			CHECK(r->causes[0].addr == g->blocks[B5].last_insn, "at the guard, through Q");
		}
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

int main(void)
{
	test_guard_through_padding();
	test_unknown_header();
	test_pointer_call();
	test_tail_call();
	test_unseen_guard();
	return CHECK_DONE("test_lime_callers");
}
