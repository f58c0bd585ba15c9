// SPDX-License-Identifier: MIT
/*
 * Sampled mode, a rotating owner with one hot block (causes_samples.c's
 * groups): every thread runs the same work loop B2 for each unit it owns,
 * the owner of instance i (thread i % NT) 4 units, the others 3, each
 * unit 470 us (LU's blocks, the accuracy suite's owner programs: L p036).
 * All samples fall in B2, about 1.5 a pair at 999 Hz, and each sample
 * costs its thread 30 us of busy time (the interrupt, the BPF program,
 * the stack copy: what this project measured on its KVM guest).
 *
 * Known answers, from generated samples (Poisson, a fixed LCG seed, every
 * variant of four seeds):
 *   - owner: the owner test deciding how often B2 runs, B1's branch
 *     (line 13), is the top cause.  Ranked within strata of equal sample
 *     count over all columns, B2's counts say nothing (one block holds
 *     every sample: each stratum holds the same in every column) and the
 *     section read "no significant cause".  The owner's lead (470 us) is
 *     far more than its extra samples can cost (SAMPLE_COST_MAX each), so
 *     it keeps its own column.
 *   - balanced: every thread 3 units; busy times differ only by the
 *     samples' cost and 5 us of noise: no cause at all (the sampled
 *     thread is the busiest, but its rank must not follow its samples).
 *
 *   B0 entry -> B1 if -> B2 work -> B3 join;  B1 -> B3
 */
#include <math.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 5
#define NI 1500
#define UNIT_US 470.0
#define COST_US 30.0
#define HZ 999.0

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 3, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sbt_worker_graph(4);

	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

static double uniform(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

/* Knuth's product of uniforms: small means only */
static uint64_t poisson(uint64_t *s, double mean)
{
	double l = exp(-mean), p = 1;
	uint64_t k = 0;

	do {
		k++;
		p *= uniform(s);
	} while (p > l);
	return k - 1;
}

static struct sb_profile *profile(int owner, uint64_t seed)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, graph());
	sb_profile_meta_set(p, "event_sources", "uprobes: 1 functions; cpu-clock sampling: 999 Hz "
			    "(per-thread IP samples, spin waits)");
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int b = 0; b < 4; b++)
		sbt_add_sampled_block(p, 0x1000 + 0x10 * (uint64_t)b, 10 + 2 * (unsigned)b,
				      11 + 2 * (unsigned)b, b == 2);
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		uint64_t c[NT], none[NT] = { 0 };

		for (uint32_t t = 0; t < NT; t++) {
			double units = owner && t == (uint32_t)i % NT ? 4 : 3;

			c[t] = poisson(&seed, units * UNIT_US * 1e-6 * HZ);
			pt[t].busy_ns = (uint64_t)((units * UNIT_US + COST_US * (double)c[t] +
						    10 * uniform(&seed) - 5) * 1e3);
		}
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 4; e++)
			sbt_add_vector(p, i, e, NT, e == 2 ? c : none);
	}
	return p;
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 4; seed++)
		for (int owner = 1; owner >= 0; owner--) {
			struct sb_profile *p = profile(owner, seed * 0x9e3779b97f4a7c15ULL);
			struct sb_causes c;
			char err[256] = "";
			int ret = sbt_compute(p, &c, err, sizeof(err));

			CHECK(ret == 0, "compute: %d %s", ret, err);
			if (!ret && owner)
				CHECK(c.n >= 1 && c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 13,
				      "seed %llu: the owner test (line 13) leads, not %u (%zu causes)",
				      (unsigned long long)seed,
				      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0, c.n);
			if (!ret && !owner)
				CHECK(c.n == 0, "seed %llu, balanced: no cause from the samples' cost, "
				      "%zu (line %u)", (unsigned long long)seed, c.n,
				      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
			if (!ret)
				sb_causes_free(&c);
			sb_profile_free(p);
		}
	return CHECK_DONE("test_causes_onehot");
}
