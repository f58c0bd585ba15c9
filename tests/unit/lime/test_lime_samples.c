// SPDX-License-Identifier: MIT
/*
 * LIME on software block samples, with known answers: the Poisson
 * dispersion test on hand-computed values, a stray sample that must not
 * become a cause, and call sites whose inclusive samples account for a
 * callee's loop (directly called, and behind a tail-calling wrapper that
 * leaves no CALL edge), in the shapes of lime_root and lime_owner.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lime/lime_priv.h"

#define NT 4

/* Hand-computed: D = sum (d - mean)^2 / mean|d|, chi-square with 3 df. */
static void test_dispersion(void)
{
	static const double one[NT] = { 1, 0, 0, 0 };      /* D = 3, p = 0.39 */
	static const double three[NT] = { 3, 0, 0, 0 };    /* D = 9, p = 0.029 */
	static const double flat[NT] = { 363, 354, 370, 364 };     /* D = 0.36 */
	static const double callee[NT] = { 1466, 354, 370, 364 };
	static const double site[NT] = { 1103, 0, 0, 0 };
	static const double zero[NT] = { 0, 0, 0, 0 };

	CHECK(!sb_lime_overdispersed(one, NULL, NT, 0.05), "one sample is noise");
	CHECK(sb_lime_overdispersed(three, NULL, NT, 0.05), "p 0.029 < 0.05");
	CHECK(!sb_lime_overdispersed(three, NULL, NT, 0.02), "p 0.029 > 0.02");
	CHECK(!sb_lime_overdispersed(flat, NULL, NT, 0.05), "equal rates");
	CHECK(sb_lime_overdispersed(callee, NULL, NT, 1e-6), "thread 0 works 4x");
	CHECK(sb_lime_overdispersed(site, NULL, NT, 1e-6), "thread 0 only");
	CHECK(!sb_lime_overdispersed(callee, site, NT, 0.05), "callee - site is flat");
	CHECK(sb_lime_overdispersed(callee, flat, NT, 0.05), "callee - flat site is not");
	CHECK(!sb_lime_overdispersed(site, site, NT, 0.05), "x - x");
	CHECK(!sb_lime_overdispersed(zero, NULL, NT, 0.05), "no samples");
	CHECK(!sb_lime_overdispersed(three, NULL, 1, 0.05), "one thread");
}

/*
 * The directed test, hand-computed: S = sum (x - mean)(time - mean time),
 * S^2 / (mean x * sum (time - mean time)^2) chi-square with 1 df.
 *   - 28 columns, a busy one: x = 225 there, 152 elsewhere; time 228
 *     there, 153 elsewhere.  mean x = 154.607, S = 70.393 * 72.321 +
 *     27 * 2.607 * 2.679 = 5279.464 (exactly 27 * 73 * 75 / 28),
 *     sum (time - mean)^2 = 75^2 * 27 / 28 = 5424.107: z^2 = 33.24,
 *     p = 8e-9.  The index of dispersion, D = 73^2 * 27 / 28 / 154.607 =
 *     33.24 on 27 df, p = 0.19, misses it.
 *   - one stray sample in the slowest of 28 columns: mean 1/28, below
 *     the 5 samples a column the normal approximation needs: noise.
 *   - flat counts against rising time: S = 0.
 */
static void test_follows_time(void)
{
	double x[28], tm[28], one[28] = { 1 }, flat[28];

	for (int t = 0; t < 28; t++) {
		x[t] = t ? 152 : 225;
		tm[t] = t ? 153 : 228;
		flat[t] = 100;
	}
	CHECK(sb_lime_follows_time(x, tm, 28, 1e-7), "the busy column, p 8e-9 < 1e-7");
	CHECK(!sb_lime_follows_time(x, tm, 28, 1e-9), "p 8e-9 > 1e-9");
	CHECK(!sb_lime_overdispersed(x, NULL, 28, 0.05), "the omnibus misses it (p 0.19)");
	CHECK(!sb_lime_follows_time(one, tm, 28, 0.05), "one stray sample is noise");
	CHECK(!sb_lime_follows_time(flat, tm, 28, 0.05), "flat counts");
	CHECK(!sb_lime_follows_time(x, NULL, 28, 0.05), "no time");
	CHECK(!sb_lime_follows_time(x, flat, 28, 0.05), "time that does not vary");
}

/*
 * Worker W:  W0 calls G (every thread, same work); W1 tests me == 0;
 *            W2 calls the wrapper F (thread 0 only); W3 the barrier.
 * Wrapper F: F0 `jmp G` (a tail call: no edge in the CFG), or F0 calls
 *            G and returns to F1 (a real frame, a CALL edge).
 * Shared G:  G0 entry, G1 the loop (back edge to itself), G2 return.
 * Stray X:   X0, somewhere in libc.
 */
enum { W0, W1, W2, W3, F0, F1, G0, G1, G2, X0, NB };

static struct sb_cfg *graph(int tail)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const int fn[NB] = { 0, 0, 0, 0, 1, 1, 2, 2, 2, 3 };
	static const char *names[] = { "worker", "wrapper", "shared", "stray" };
	static const int first[] = { W0, F0, G0, X0, NB };

	for (int f = 0; f < 4; f++)
		sb_cfg_add_func(g, names[f], 0x1000 + 0x10 * (uint64_t)first[f],
				0x1000 + 0x10 * (uint64_t)first[f + 1]);
	for (int b = 0; b < NB; b++)
		sb_cfg_add_block(g, (uint32_t)fn[b], 0x1000 + 0x10 * (uint64_t)b,
				 0x1010 + 0x10 * (uint64_t)b, 0x100c + 0x10 * (uint64_t)b);
	sb_cfg_add_edge(g, W0, G0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, W0, W1, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, W1, W2, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, W1, W3, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, W2, F0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, W2, W3, SB_EDGE_CALL_RETURN);
	if (!tail) {
		sb_cfg_add_edge(g, F0, G0, SB_EDGE_CALL);
		sb_cfg_add_edge(g, F0, F1, SB_EDGE_CALL_RETURN);
	}
	sb_cfg_add_edge(g, G0, G1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, G1, G1, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, G1, G2, SB_EDGE_FALLTHROUGH);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	return g;
}

static uint64_t last_insn(int b)
{
	return 0x100c + 0x10 * (uint64_t)b;
}

struct inst {
	double counts[NB][NT];
	double time[NT];
	struct sb_lime_event ev[NB];
	struct sb_lime_instance in;
	int of_block[NB];       /* event of each block, or -1 */
};

static void add(struct inst *x, int b, const double *c)
{
	int e = (int)x->in.nevents++;

	memcpy(x->counts[e], c, sizeof(x->counts[e]));
	x->ev[e] = (struct sb_lime_event){ .kind = SB_LIME_BLOCK, .id = (uint32_t)b,
					   .superior = -1, .counts = x->counts[e] };
	x->of_block[b] = e;
}

/* lime_root's pooled samples (a recorded run): 1103 samples under W2 in
 * thread 0, the shared call W0 the same in every thread, G1 the sum. */
static void root_samples(struct inst *x, int stray)
{
	static const double tm[NT] = { 1464, 366, 368, 364 };
	static const double w0[NT] = { 363, 354, 370, 364 };
	static const double w2[NT] = { 1103, 0, 0, 0 };
	static const double one[NT] = { 1, 0, 0, 0 };
	static const double bar[NT] = { 4, 2, 1, 1 };
	double g1[NT];

	memset(x, 0, sizeof(*x));
	for (int b = 0; b < NB; b++)
		x->of_block[b] = -1;
	x->in = (struct sb_lime_instance){ .nthreads = NT, .time = x->time, .imbalance = 0.56,
					   .events = x->ev };
	for (int t = 0; t < NT; t++) {
		x->time[t] = tm[t] * 1e6;
		g1[t] = w0[t] + w2[t];
	}
	add(x, W0, w0);
	add(x, W1, one);        /* the test itself: one sample, by chance in thread 0 */
	add(x, W2, w2);
	add(x, W3, bar);
	add(x, G1, g1);
	if (stray)
		add(x, X0, one);
}

static int rank_of(const struct sb_lime_result *r, int b)
{
	for (size_t i = 0; i < r->ncauses; i++)
		if (r->causes[i].addr == last_insn(b))
			return (int)i;
	return -1;
}

static void test_root(int tail)
{
	struct sb_cfg *g = graph(tail);
	static struct inst x;
	struct sb_lime_result *r = NULL;

	root_samples(&x, 1);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && r->ncauses, "analyze");
	if (r && r->ncauses) {
		/* W2 is the call that only thread 0 makes; G1's variation is
		 * all under it, so G1 is its callee, not a second leader. */
		CHECK(rank_of(r, W2) == 0, "tail %d: W2 on top (at %d)", tail, rank_of(r, W2));
		CHECK(r->causes[0].score > 0.99, "tail %d: score %g", tail, r->causes[0].score);
		CHECK(rank_of(r, G1) < 0, "tail %d: the callee's loop is no leader (rank %d)",
		      tail, rank_of(r, G1));
		CHECK(rank_of(r, X0) < 0 && rank_of(r, W1) < 0, "tail %d: stray samples", tail);
		CHECK(r->cluster_of[x.of_block[X0]] == SB_LIME_NO_CLUSTER &&
		      r->cluster_of[x.of_block[W1]] == SB_LIME_NO_CLUSTER &&
		      r->cluster_of[x.of_block[W3]] == SB_LIME_NO_CLUSTER &&
		      r->cluster_of[x.of_block[W0]] == SB_LIME_NO_CLUSTER,
		      "tail %d: counts within Poisson noise join no cluster", tail);
		for (size_t i = 0; i < r->ncauses; i++)
			CHECK(r->causes[i].kind == SB_CAUSE_UNDETERMINED, "samples claim no kind");
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/*
 * A callee that no single call site accounts for: W0 and W2 both call G
 * with different, varying shares.  G1 - W0 and G1 - W2 both vary, so G1
 * keeps its own leadership (its sum follows time; neither site does).
 */
static void test_two_sites(void)
{
	static const double tm[NT] = { 1000, 1200, 1400, 1600 };
	static const double w0[NT] = { 200, 600, 300, 900 };
	static const double w2[NT] = { 800, 600, 1100, 700 };
	struct sb_cfg *g = graph(0);
	static struct inst x;
	struct sb_lime_result *r = NULL;
	double g1[NT];

	root_samples(&x, 0);
	x.in.nevents = 0;
	for (int t = 0; t < NT; t++) {
		x.time[t] = tm[t] * 1e6;
		g1[t] = w0[t] + w2[t];
	}
	add(&x, W0, w0);
	add(&x, W2, w2);
	add(&x, G1, g1);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && r->ncauses, "analyze");
	if (r && r->ncauses) {
		CHECK(rank_of(r, G1) == 0, "G1 leads (rank %d)", rank_of(r, G1));
		CHECK(r->causes[0].score > 0.99, "score %g", r->causes[0].score);
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/*
 * lime_owner's shape, a call chain W2 -> F0 -> G1 with equal inclusive
 * samples at every level: the outermost call site leads.  F0's samples
 * equal W2's, but W2 calls into F (a CALL edge): F0 is W2's callee and
 * cannot take W2's place.
 */
static void test_chain(void)
{
	static const double tm[NT] = { 1090, 906, 727, 545 };
	static const double w2[NT] = { 1086, 905, 720, 545 };
	struct sb_cfg *g = graph(0);
	static struct inst x;
	struct sb_lime_result *r = NULL;

	root_samples(&x, 0);
	x.in.nevents = 0;
	for (int t = 0; t < NT; t++)
		x.time[t] = tm[t] * 1e6;
	add(&x, G1, w2);
	add(&x, F0, w2);
	add(&x, W2, w2);
	CHECK(sb_lime_analyze(g, &x.in, NULL, &r) == 0 && r && r->ncauses, "analyze");
	if (r && r->ncauses) {
		CHECK(r->ncauses == 1 && rank_of(r, W2) == 0, "W2 alone leads (%zu causes, W2 at %d)",
		      r->ncauses, rank_of(r, W2));
		CHECK(r->causes[0].score > 0.99, "score %g", r->causes[0].score);
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

/*
 * Two levels of shared helpers (tests/integration/unwind.c cause2, as a
 * CFI unwind sees it): worker V0 calls S (every thread), V1 tests
 * me == 0, V2 calls E (thread 0 only); E0 calls S; S0 calls the loop
 * H1.  S0 and H1 hold the samples of both paths.  S0 - V2 is flat, but
 * S0 runs under V2 (V2 -> E -> S), with far more samples: it is V2's
 * callee, and taking it for V2's caller made a cycle without a leader
 * (the decision scored 0).  V2 must lead.
 */
static void test_two_levels(void)
{
	enum { V0, V1, V2, V3, E0, E1, S0, S1, H0, H1, H2, N2 };
	static const int fn[N2] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 3 };
	static const char *names[] = { "worker", "extra", "shared", "leaf" };
	static const int first[] = { V0, E0, S0, H0, N2 };
	static const double tm[NT] = { 1770, 415, 425, 410 };
	static const double v0[NT] = { 430, 413, 421, 403 };
	static const double v2[NT] = { 1327, 0, 0, 0 };
	static double counts[4][NT];
	static struct sb_lime_event ev[4];
	static const int blk[4] = { V0, V2, S0, H1 };
	double time[NT];
	struct sb_lime_instance in = { .nthreads = NT, .time = time, .imbalance = 0.56,
				       .events = ev, .nevents = 4 };
	struct sb_cfg *g = sb_cfg_alloc();
	struct sb_lime_result *r = NULL;

	for (int f = 0; f < 4; f++)
		sb_cfg_add_func(g, names[f], 0x1000 + 0x10 * (uint64_t)first[f],
				0x1000 + 0x10 * (uint64_t)first[f + 1]);
	for (int b = 0; b < N2; b++)
		sb_cfg_add_block(g, (uint32_t)fn[b], 0x1000 + 0x10 * (uint64_t)b,
				 0x1010 + 0x10 * (uint64_t)b, 0x100c + 0x10 * (uint64_t)b);
	sb_cfg_add_edge(g, V0, S0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, V0, V1, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, V1, V2, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, V1, V3, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, V2, E0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, V2, V3, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, E0, S0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, E0, E1, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, S0, H0, SB_EDGE_CALL);
	sb_cfg_add_edge(g, S0, S1, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, H0, H1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, H1, H1, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, H1, H2, SB_EDGE_FALLTHROUGH);
	CHECK(sb_cfg_finalize(g) == 0, "finalize");
	for (int t = 0; t < NT; t++) {
		time[t] = tm[t] * 1e6;
		counts[0][t] = v0[t];
		counts[1][t] = v2[t];
		counts[2][t] = counts[3][t] = v0[t] + v2[t];
	}
	for (int e = 0; e < 4; e++)
		ev[e] = (struct sb_lime_event){ .kind = SB_LIME_BLOCK, .id = (uint32_t)blk[e],
						.superior = -1, .counts = counts[e] };
	CHECK(sb_lime_analyze(g, &in, NULL, &r) == 0 && r && r->ncauses, "two levels: analyze");
	if (r && r->ncauses) {
		CHECK(r->causes[0].addr == last_insn(V2), "two levels: V2 on top (%#llx)",
		      (unsigned long long)r->causes[0].addr);
		CHECK(r->causes[0].score > 0.99, "two levels: score %g", r->causes[0].score);
		for (size_t i = 0; i < r->ncauses; i++)
			CHECK(r->causes[i].addr != last_insn(S0) && r->causes[i].addr != last_insn(H1),
			      "two levels: a helper is cause %zu", i);
	}
	sb_lime_result_free(r);
	sb_cfg_free(g);
}

int main(void)
{
	test_dispersion();
	test_follows_time();
	test_root(1);
	test_root(0);
	test_two_sites();
	test_chain();
	test_two_levels();
	return CHECK_DONE("test_lime_samples");
}
