// SPDX-License-Identifier: MIT
/*
 * LIME at scale: one instance of 100,000 events x 64 threads.  Prints the
 * elapsed time (goal < 2 s at -O2 on 2 cores) without asserting on it;
 * asserts that the planted causes come out on top.
 *
 * 400 planted groups, each a diamond B_g -> T_g -> J_g, B_g -> F_g -> J_g
 * in the CFG whose two taken-path edges vary with the group's per-thread
 * profile, plus ~200 hardware events per group that follow the same
 * profile with 5% noise (r ~ 0.997: bulk-merged).  10 loose groups of 300
 * events at r ~ 0.92 (clustered by UPGMA proper), 3,000 events of pure
 * noise, and ~10% constant events.  Events are interleaved across groups
 * so that neighbours do not help the bulk merge.  Time follows 3 groups.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "lime/lime.h"

enum {
	N = 64, M = 100000, GROUPS = 400, LOOSE = 10, LOOSE_PER = 300, NOISE = 3000,
	CONSTANT = 10000,
};

static uint64_t rng = 0xbe7c;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Diamond g: blocks 4g .. 4g + 3 = B, T, F, J; J -> next B. */
static struct sb_cfg *diamonds(void)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "f", 0x10000, 0x10000 + 0x40 * GROUPS);
	for (uint64_t b = 0; b < 4 * GROUPS; b++)
		sb_cfg_add_block(g, 0, 0x10000 + 0x10 * b, 0x10010 + 0x10 * b, 0x1000c + 0x10 * b);
	for (uint32_t d = 0; d < GROUPS; d++) {
		uint32_t b = 4 * d;

		sb_cfg_add_edge(g, b, b + 1, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, b, b + 2, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, b + 1, b + 3, SB_EDGE_JUMP);
		sb_cfg_add_edge(g, b + 2, b + 3, SB_EDGE_SEQUENTIAL);
		if (d + 1 < GROUPS)
			sb_cfg_add_edge(g, b + 3, b + 4, SB_EDGE_SEQUENTIAL);
	}
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

/* counts = scale * (profile + noise * U(-.5, .5)) + offset, kept >= 0 */
static void member(double *c, const double *profile, double noise)
{
	double scale = pow(10, 1 + 5 * uniform()), off = scale;

	for (int t = 0; t < N; t++)
		c[t] = scale * (profile[t] + noise * (uniform() - 0.5)) + off;
}

int main(void)
{
	static double prof[GROUPS + LOOSE][N], time_ns[N];
	static const int hot[3] = { 17, 211, 342 };
	double *counts = malloc(sizeof(double) * M * N);
	struct sb_lime_event *ev = calloc(M, sizeof(*ev));
	struct sb_cfg *g = diamonds();
	struct sb_lime_instance in = { .nthreads = N, .time = time_ns, .nevents = M,
				       .events = ev, .imbalance = 0.2 };
	struct sb_lime_result *r = NULL;
	struct timespec t0, t1;
	size_t e = 0;

	for (int k = 0; k < GROUPS + LOOSE; k++)
		for (int t = 0; t < N; t++)
			prof[k][t] = uniform();
	for (int t = 0; t < N; t++)
		time_ns[t] = 1e9 + 1e8 * (prof[hot[0]][t] + 0.7 * prof[hot[1]][t] +
					  0.5 * prof[hot[2]][t]) + 1e6 * uniform();
	/* The two taken-path edges of every diamond. */
	for (uint32_t d = 0; d < GROUPS; d++)
		for (int k = 0; k < 2; k++, e++) {
			double *c = counts + e * N;

			for (int t = 0; t < N; t++)
				c[t] = round(1000 * prof[d][t]);
			ev[e] = (struct sb_lime_event){
				.kind = SB_LIME_EDGE, .superior = -1, .counts = c,
				.id = edge_id(g, 4 * d + (uint32_t)k, 4 * d + 1 + 2 * (uint32_t)k),
			};
		}
	for (size_t i = 0; e < M; i++, e++) {
		double *c = counts + e * N;
		size_t slot = i % 10;

		ev[e] = (struct sb_lime_event){ .kind = SB_LIME_HW, .superior = -1,
						.addr = 0x900000 + e, .counts = c };
		if (slot == 0 && i / 10 < CONSTANT)
			for (int t = 0; t < N; t++)
				c[t] = 42;
		else if (slot == 1 && i / 10 < LOOSE * LOOSE_PER)
			member(c, prof[GROUPS + (i / 10) % LOOSE], 0.3);
		else if (slot == 2 && i / 10 < NOISE)
			for (int t = 0; t < N; t++)
				c[t] = 1e4 * uniform();
		else
			member(c, prof[i % GROUPS], 0.05);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = sb_lime_analyze(g, &in, NULL, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

	printf("lime bench: %d events x %d threads: %.3f s, %zu clusters, %zu causes\n", M, N,
	       secs, r ? r->nclusters : 0, r ? r->ncauses : 0);
	CHECK(err == 0 && r, "analyze: %d", err);
	CHECK(r && r->ncauses >= 3, "causes");
	for (int k = 0; r && k < 3 && (size_t)k < r->ncauses; k++) {
		uint64_t a = r->causes[k].addr;
		int found = 0;

		printf("  %d: kind %u addr %#llx score %.4f lead %.4f beta %.4f\n", k, r->causes[k].kind,
		       (unsigned long long)a, r->causes[k].score, r->causes[k].leader_score, r->causes[k].beta);
		for (int h = 0; h < 3; h++)
			found |= a == 0x1000c + 0x40 * (uint64_t)hot[h];
		CHECK(found && r->causes[k].kind == SB_CAUSE_BRANCH, "top 3 are the hot diamonds");
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
	free(counts);
	free(ev);
	return CHECK_DONE("test_lime_bench");
}
