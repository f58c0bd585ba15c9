// SPDX-License-Identifier: MIT
/*
 * LIME on small instances with known answers: the Figure 4 example
 * rebuilt exactly (leader 0.82 x beta 0.91 = 0.7462), a loop led by its
 * header through the back-edge rule, an if (me == 0) branch, block
 * samples with identical control flow, and the robustness rules.
 * Stage-level checks are in test_lime_stages.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lime/lime.h"

#define MAXT 64
#define MAXE 16

/* One function, blocks 0x10 apart, each ending in an instruction at +0xc. */
static struct sb_cfg *mkcfg(int nblocks, const int (*ed)[3], int nedges)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "f", 0x1000, 0x1000 + 0x10 * (uint64_t)nblocks);
	for (int b = 0; b < nblocks; b++)
		sb_cfg_add_block(g, 0, 0x1000 + 0x10 * (uint64_t)b, 0x1010 + 0x10 * (uint64_t)b,
				 0x100c + 0x10 * (uint64_t)b);
	for (int i = 0; i < nedges; i++)
		sb_cfg_add_edge(g, (uint32_t)ed[i][0], (uint32_t)ed[i][1], (uint16_t)ed[i][2]);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	return g;
}

/* Edge indices change in sb_cfg_finalize (sorted): look them up. */
static uint32_t edge_id(const struct sb_cfg *g, uint32_t src, uint32_t dst)
{
	for (size_t i = 0; i < g->nedges; i++)
		if (g->edges[i].src == src && g->edges[i].dst == dst)
			return (uint32_t)i;
	return UINT32_MAX;
}

static uint64_t last_insn(int b)
{
	return 0x100c + 0x10 * (uint64_t)b;
}

struct inst {
	double counts[MAXE][MAXT];
	double time[MAXT];
	struct sb_lime_event ev[MAXE];
	struct sb_lime_instance in;
};

static int add_event(struct inst *x, uint16_t kind, uint32_t id, const double *counts)
{
	int e = (int)x->in.nevents++;

	memcpy(x->counts[e], counts, x->in.nthreads * sizeof(double));
	x->ev[e] = (struct sb_lime_event){ .kind = kind, .id = id, .superior = -1,
					   .counts = x->counts[e] };
	return e;
}

static void init(struct inst *x, uint32_t n)
{
	memset(x, 0, sizeof(*x));
	x->in.nthreads = n;
	x->in.time = x->time;
	x->in.events = x->ev;
	x->in.imbalance = 0.1;
}

static void fill(double *v, uint32_t n, double c)
{
	for (uint32_t t = 0; t < n; t++)
		v[t] = c;
}

/* k orthonormal centered vectors in R^n, deterministic. */
static void basis(uint32_t n, int k, double *q)
{
	uint64_t s = 0x5eed;

	for (int i = 0; i < k; i++) {
		double *v = q + (size_t)i * n, mean = 0, norm = 0;

		for (uint32_t t = 0; t < n; t++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			v[t] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
			mean += v[t] / n;
		}
		for (uint32_t t = 0; t < n; t++)
			v[t] -= mean;
		for (int pass = 0; pass < 2; pass++)
			for (int j = 0; j < i; j++) {
				double d = 0;

				for (uint32_t t = 0; t < n; t++)
					d += v[t] * q[(size_t)j * n + t];
				for (uint32_t t = 0; t < n; t++)
					v[t] -= d * q[(size_t)j * n + t];
			}
		for (uint32_t t = 0; t < n; t++)
			norm += v[t] * v[t];
		for (uint32_t t = 0; t < n; t++)
			v[t] /= sqrt(norm);
	}
}

/* counts = base + scale * (a q_i + b q_j) */
static void combo(double *out, uint32_t n, double base, double scale, const double *qi,
		  double a, const double *qj, double b)
{
	for (uint32_t t = 0; t < n; t++)
		out[t] = base + scale * (a * qi[t] + (qj ? b * qj[t] : 0));
}

static void check_finite(const struct sb_lime_result *r)
{
	for (size_t i = 0; i < r->ncauses; i++)
		CHECK(isfinite(r->causes[i].score) && isfinite(r->causes[i].beta) &&
		      isfinite(r->causes[i].leader_score), "cause %zu finite", i);
}

/*
 * Figure 4 / §3.5.  E -> A; A -> B (taken) -> X; A -> G (fall-through);
 * G -> H (taken) -> X; G -> X.  Cluster C1 = {A->B, B->X} (vector x1),
 * C2 = {G->H, H->X} (x2).  With orthonormal q0..q4 and
 *	x2 = q0, x1 = r12 q0 + sqrt(1 - r12^2) q1,
 *	time = b1 x1 + b2 x2 + sqrt(1 - R^2) q2
 * the standardized betas are exactly b1 = 0.3, b2 = 0.91, and r(x2, T) =
 * b2 + b1 r12 = 0.92.  G's in-edge A->G is built with r = 0.1 and no part
 * along the residual q2; G->X is q4 (r = 0).  So s_G = 0.92 - 0.1 = 0.82
 * and fs_G = 0.82 * 0.91 = 0.7462.  A leads C1: s_A = r(x1, T) - 0.
 */
static void test_figure4(void)
{
	enum { E, A, B, G, H, X };
	static const int ed[][3] = {
		{ E, A, SB_EDGE_SEQUENTIAL }, { A, B, SB_EDGE_TAKEN },
		{ A, G, SB_EDGE_FALLTHROUGH }, { B, X, SB_EDGE_JUMP },
		{ G, H, SB_EDGE_TAKEN }, { G, X, SB_EDGE_FALLTHROUGH }, { H, X, SB_EDGE_JUMP },
	};
	const uint32_t n = 16;
	const double b1 = 0.3, b2 = 0.91, r12 = 1.0 / 30;
	const double r2y = b2 + b1 * r12, r1y = b1 + b2 * r12;
	const double rsq = b1 * b1 + b2 * b2 + 2 * b1 * b2 * r12, c = 0.1 / r2y;
	struct sb_cfg *g = mkcfg(6, ed, 7);
	static struct inst x;
	double q[5 * 16], x1[16], y[16], v[16];
	struct sb_lime_result *r = NULL;
	int eAB, eGH;

	basis(n, 5, q);
	init(&x, n);
	combo(x1, n, 0, 1, q, r12, q + n, sqrt(1 - r12 * r12));
	for (uint32_t t = 0; t < n; t++)
		y[t] = b1 * x1[t] + b2 * q[t] + sqrt(1 - rsq) * q[2 * n + t];
	combo(x.time, n, 1e9, 1e7, y, 1, NULL, 0);
	fill(v, n, 1000);
	add_event(&x, SB_LIME_EDGE, edge_id(g, E, A), v);
	combo(v, n, 1000, 100, x1, 1, NULL, 0);
	eAB = add_event(&x, SB_LIME_EDGE, edge_id(g, A, B), v);
	combo(v, n, 500, 200, x1, 1, NULL, 0);
	add_event(&x, SB_LIME_EDGE, edge_id(g, B, X), v);
	combo(v, n, 1000, 100, q, c, q + 3 * n, sqrt(1 - c * c));
	add_event(&x, SB_LIME_EDGE, edge_id(g, A, G), v);
	combo(v, n, 1000, 100, q, 1, NULL, 0);
	eGH = add_event(&x, SB_LIME_EDGE, edge_id(g, G, H), v);
	combo(v, n, 3000, 300, q, 1, NULL, 0);
	add_event(&x, SB_LIME_EDGE, edge_id(g, H, X), v);
	combo(v, n, 1000, 100, q + 4 * n, 1, NULL, 0);
	add_event(&x, SB_LIME_EDGE, edge_id(g, G, X), v);

	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r, "analyze");
	if (r && r->ncauses == 2) {
		const struct sb_lime_cause *cg = &r->causes[0], *ca = &r->causes[1];

		CHECK(cg->addr == last_insn(G) && cg->kind == SB_CAUSE_BRANCH, "G is top");
		CHECK(cg->event == (uint32_t)eGH, "G named by G->H");
		CHECK_NEAR(cg->leader_score, 0.82, 1e-9);
		CHECK_NEAR(cg->beta, 0.91, 1e-9);
		CHECK_NEAR(cg->score, 0.7462, 1e-9);
		CHECK(ca->addr == last_insn(A) && ca->kind == SB_CAUSE_BRANCH, "A second");
		CHECK(ca->event == (uint32_t)eAB, "A named by A->B");
		CHECK_NEAR(ca->leader_score, r1y, 1e-9);
		CHECK_NEAR(ca->beta, 0.3, 1e-9);
		CHECK_NEAR(ca->score, 0.3 * r1y, 1e-9);
	} else {
		CHECK(0, "want 2 causes, got %zu", r ? r->ncauses : 0);
	}
	if (r) {
		CHECK(r->nclusters == 4, "C1, C2, {A->G}, {G->X}: %zu", r->nclusters);
		CHECK(r->cluster_of[0] == SB_LIME_NO_CLUSTER, "constant E->A left out");
		CHECK(r->cluster_of[1] == r->cluster_of[2], "A->B with B->X");
		CHECK(r->cluster_of[4] == r->cluster_of[5], "G->H with H->X");
		CHECK(r->cluster_of[1] != r->cluster_of[4], "C1 != C2");
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/* while loop: E -> H; H -> B (taken) -> L -> H (back); H -> X.  Trip
 * counts drive time.  Only the back-edge exception lets H lead. */
static void test_loop(void)
{
	enum { E, H, B, L, X };
	static const int ed[][3] = {
		{ E, H, SB_EDGE_SEQUENTIAL }, { H, B, SB_EDGE_TAKEN },
		{ H, X, SB_EDGE_FALLTHROUGH }, { B, L, SB_EDGE_SEQUENTIAL },
		{ L, H, SB_EDGE_JUMP },
	};
	static const double iters[8] = { 100, 140, 90, 210, 120, 95, 180, 130 };
	static const double jitter[8] = { 3, -2, 5, 0, -4, 1, -3, 2 };
	struct sb_cfg *g = mkcfg(5, ed, 5);
	static struct inst x;
	struct sb_lime_result *r = NULL;
	double one[8];
	int eHB, eBL, eLH;

	init(&x, 8);
	fill(one, 8, 1);
	for (int t = 0; t < 8; t++)
		x.time[t] = 1e6 + 1e4 * iters[t] + 1e3 * jitter[t];
	add_event(&x, SB_LIME_EDGE, edge_id(g, E, H), one);
	eHB = add_event(&x, SB_LIME_EDGE, edge_id(g, H, B), iters);
	eBL = add_event(&x, SB_LIME_EDGE, edge_id(g, B, L), iters);
	eLH = add_event(&x, SB_LIME_EDGE, edge_id(g, L, H), iters);
	add_event(&x, SB_LIME_EDGE, edge_id(g, H, X), one);
	CHECK(g->edges[edge_id(g, L, H)].back == 1, "L->H is a back edge");
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r, "analyze");
	if (!r)
		return;
	CHECK(r->cluster_of[eHB] == r->cluster_of[eBL] && r->cluster_of[eBL] == r->cluster_of[eLH],
	      "the loop's edges are one cluster");
	CHECK(r->ncauses == 1, "one leader: %zu", r->ncauses);
	if (r->ncauses) {
		CHECK(r->causes[0].kind == SB_CAUSE_LOOP, "kind %u", r->causes[0].kind);
		CHECK(r->causes[0].addr == last_insn(H), "header's branch");
		CHECK(r->causes[0].event == (uint32_t)eHB, "named by H->B");
		CHECK(r->causes[0].score > 0.9, "score %g", r->causes[0].score);
	}
	check_finite(r);
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/*
 * if (me == 0) { C } on top of a loop whose trip counts vary a little:
 * E -> B; B -> C (taken) -> D; B -> D; D -> H; H -> K (taken) -> H (back);
 * H -> X.  Thread 0 takes the extra path, which dominates time.
 */
static void test_branch(void)
{
	enum { E, B, C, D, H, K, X };
	static const int ed[][3] = {
		{ E, B, SB_EDGE_SEQUENTIAL }, { B, C, SB_EDGE_TAKEN },
		{ B, D, SB_EDGE_FALLTHROUGH }, { C, D, SB_EDGE_JUMP },
		{ D, H, SB_EDGE_SEQUENTIAL }, { H, K, SB_EDGE_TAKEN },
		{ H, X, SB_EDGE_FALLTHROUGH }, { K, H, SB_EDGE_JUMP },
	};
	static const double iters[8] = { 100, 104, 98, 101, 99, 103, 100, 97 };
	static const double jitter[8] = { 1, -2, 0, 3, -1, 2, -3, 1 };
	struct sb_cfg *g = mkcfg(7, ed, 8);
	static struct inst x;
	struct sb_lime_result *r = NULL;
	double one[8], me0[8], rest[8];

	init(&x, 8);
	fill(one, 8, 1);
	for (int t = 0; t < 8; t++) {
		me0[t] = t == 0;
		rest[t] = t != 0;
		x.time[t] = 1e6 + 8e5 * me0[t] + 1e3 * (iters[t] - 100) + 1e2 * jitter[t];
	}
	add_event(&x, SB_LIME_EDGE, edge_id(g, E, B), one);
	add_event(&x, SB_LIME_EDGE, edge_id(g, B, D), rest);   /* the mirror first */
	add_event(&x, SB_LIME_EDGE, edge_id(g, B, C), me0);
	add_event(&x, SB_LIME_EDGE, edge_id(g, C, D), me0);
	add_event(&x, SB_LIME_EDGE, edge_id(g, D, H), one);
	add_event(&x, SB_LIME_EDGE, edge_id(g, H, K), iters);
	add_event(&x, SB_LIME_EDGE, edge_id(g, K, H), iters);
	add_event(&x, SB_LIME_EDGE, edge_id(g, H, X), one);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r, "analyze");
	if (!r)
		return;
	CHECK(r->cluster_of[1] != r->cluster_of[2], "taken and not-taken apart (r = -1)");
	CHECK(r->ncauses >= 1, "a cause");
	if (r->ncauses) {
		CHECK(r->causes[0].kind == SB_CAUSE_BRANCH, "kind %u", r->causes[0].kind);
		CHECK(r->causes[0].addr == last_insn(B), "at the if: %#llx",
		      (unsigned long long)r->causes[0].addr);
		CHECK(r->causes[0].event == 2, "named by the taken edge B->C");
		CHECK(r->causes[0].beta > 0 && r->causes[0].score > 0.9, "positive, %g",
		      r->causes[0].score);
	}
	for (size_t i = 1; i < r->ncauses; i++)
		CHECK(r->causes[i].score < r->causes[0].score, "the branch is on top");
	check_finite(r);
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/*
 * Software sampling: E -> H; H -> B (taken) -> H (back); H -> X.  Every
 * thread runs the same iterations, but B's samples follow time (a working
 * set that misses in the cache for some threads).  The cause is at B and
 * must not claim a control-flow kind.
 */
static void test_block_cache(void)
{
	enum { E, H, B, X };
	static const int ed[][3] = {
		{ E, H, SB_EDGE_SEQUENTIAL }, { H, B, SB_EDGE_TAKEN },
		{ H, X, SB_EDGE_FALLTHROUGH }, { B, H, SB_EDGE_JUMP },
	};
	static const double tm[8] = { 1.0, 1.3, 1.05, 1.6, 1.1, 1.2, 1.45, 1.0 };
	static const double se[8] = { 5, 6, 5, 4, 5, 6, 5, 5 };
	static const double sh[8] = { 52, 51, 52, 51, 50, 49, 52, 51 };   /* r = 0 */
	static const double sx[8] = { 3, 3, 4, 3, 2, 3, 4, 3 };
	static const double dither[8] = { 2, -1, 0, 1, -2, 1, 0, -1 };
	struct sb_cfg *g = mkcfg(4, ed, 4);
	static struct inst x;
	struct sb_lime_result *r = NULL;
	double sb[8];
	int eB;

	init(&x, 8);
	for (int t = 0; t < 8; t++) {
		x.time[t] = 1e9 * tm[t];
		sb[t] = 1000 * tm[t] + dither[t];
	}
	add_event(&x, SB_LIME_BLOCK, E, se);
	add_event(&x, SB_LIME_BLOCK, H, sh);
	eB = add_event(&x, SB_LIME_BLOCK, B, sb);
	add_event(&x, SB_LIME_BLOCK, X, sx);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r, "analyze");
	if (!r)
		return;
	CHECK(r->ncauses >= 1, "a cause");
	if (r->ncauses) {
		CHECK(r->causes[0].kind == SB_CAUSE_UNDETERMINED, "kind %u", r->causes[0].kind);
		CHECK(r->causes[0].addr == last_insn(B), "at B");
		CHECK(sb_cfg_block_at(g, r->causes[0].addr) == B, "inside block B");
		CHECK(r->causes[0].event == (uint32_t)eB, "named by B's samples");
		CHECK(r->causes[0].score > 0.9, "score %g", r->causes[0].score);
	}
	for (size_t i = 0; i < r->ncauses; i++)
		CHECK(r->causes[i].kind == SB_CAUSE_UNDETERMINED, "samples never claim a kind");
	check_finite(r);
	sb_lime_result_free(r);

	/* More iterations instead, seen through samples: H and B both follow
	 * time; H leads (B comes back by the back edge), still undetermined.
	 * (H's samples must vary beyond Poisson noise: 500 per thread, not
	 * 50, whose spread from 50 to 80 chance alone gives one time in 15.) */
	for (int t = 0; t < 8; t++)
		x.counts[1][t] = 500 * tm[t] + dither[(t + 3) % 8];
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && r->ncauses, "analyze");
	if (r && r->ncauses) {
		CHECK(r->cluster_of[1] == r->cluster_of[2], "H with B");
		CHECK(r->causes[0].addr == last_insn(H), "the loop's header");
		CHECK(r->causes[0].kind == SB_CAUSE_UNDETERMINED, "kind %u", r->causes[0].kind);
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/* Fewer than 3 threads, constant time, no events, bad input, and counts
 * near the ends of the double range. */
static void test_robust(void)
{
	enum { E, H, B, X };
	static const int ed[][3] = {
		{ E, H, SB_EDGE_SEQUENTIAL }, { H, B, SB_EDGE_TAKEN },
		{ H, X, SB_EDGE_FALLTHROUGH }, { B, H, SB_EDGE_JUMP },
	};
	static const double it[8] = { 10, 14, 9, 21, 12, 9, 18, 13 };
	struct sb_cfg *g = mkcfg(4, ed, 4);
	static struct inst x;
	struct sb_lime_result *r = NULL, *big = NULL;
	struct sb_lime_opts o;

	init(&x, 8);
	for (int t = 0; t < 8; t++)
		x.time[t] = 100 * it[t] + (t % 3);
	add_event(&x, SB_LIME_EDGE, edge_id(g, H, B), it);
	add_event(&x, SB_LIME_EDGE, edge_id(g, B, H), it);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && r->ncauses == 1, "baseline");

	/* The same instance scaled to 1e300 and 1e-300 gives the same answer. */
	for (int t = 0; t < 8; t++) {
		x.counts[0][t] *= 1e300;
		x.counts[1][t] *= 1e-300;
		x.time[t] *= 1e300;
	}
	CHECK(sb_lime_analyze(g, &x.in, NULL, &big) == 0 && big && big->ncauses == 1, "huge");
	if (r && big && r->ncauses == 1 && big->ncauses == 1)
		CHECK_NEAR(big->causes[0].score, r->causes[0].score, 1e-9);
	sb_lime_result_free(big);
	sb_lime_result_free(r);

	x.in.nthreads = 2;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && !r->ncauses && !r->nclusters &&
	      r->cluster_of[0] == SB_LIME_NO_CLUSTER, "2 threads: nothing, no error");
	sb_lime_result_free(r);
	x.in.nthreads = 8;
	fill(x.time, 8, 5e6);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && !r->ncauses &&
	      r->nclusters == 1, "constant time: clusters, no causes");
	sb_lime_result_free(r);
	x.time[3] = NAN;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL && !r, "NaN time");
	x.time[3] = 5e6;
	x.counts[1][2] = INFINITY;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL, "infinite count");
	x.counts[1][2] = 1;
	CHECK(sb_lime_analyze(NULL, &x.in, NULL, &r) == -EINVAL, "edges need a CFG");
	x.ev[1].id = 99;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL, "edge out of range");
	x.ev[1].id = 0;
	x.ev[1].kind = 9;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL, "unknown kind");
	x.ev[1].kind = SB_LIME_HW;
	x.ev[1].superior = 1;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL, "its own superior");
	x.ev[1].superior = 2;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == -EINVAL, "superior out of range");
	x.ev[1].superior = -1;
	sb_lime_opts_default(&o);
	o.cluster_threshold = NAN;
	CHECK(sb_lime_analyze(g, &x.in, &o, &r) == -EINVAL, "NaN threshold");
	sb_lime_opts_default(&o);
	o.f_alpha = 1;
	CHECK(sb_lime_analyze(g, &x.in, &o, &r) == -EINVAL, "alpha 1");
	CHECK(sb_lime_analyze(g, NULL, NULL, &r) == -EINVAL, "no instance");
	x.in.nevents = 0;
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && !r->ncauses, "no events");
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

int main(void)
{
	test_figure4();
	test_loop();
	test_branch();
	test_block_cache();
	test_robust();
	return CHECK_DONE("test_lime");
}
