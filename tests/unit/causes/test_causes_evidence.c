// SPDX-License-Identifier: MIT
/*
 * Issue 12's sampled-mode evidence and pooling, against answers derived
 * by hand (causes_evidence.c, causes_samples.c):
 *  - the noncentral chi-square tail and the power solve: with 1 degree
 *    of freedom chi'^2(1, delta) = (Z + sqrt(delta))^2, so the delta of
 *    power 0.8 at level 0.05 is (z_0.975 + z_0.8)^2 = 7.849;
 *  - samples needed = delta* / (n CV^2) for given busy times, delta* the
 *    larger of the dispersion test's and the F-test's (noncentral F(1,
 *    d2) -> chi'^2(1) as d2 grows);
 *  - a rotating imbalance (thread t busiest in instance t, 4 threads, 4
 *    instances: per-thread sums equal) is found by rank pooling, at the
 *    deciding branch;
 *  - a 10% rotating imbalance at 82 samples per thread is FEW_SAMPLES, with
 *    more_seconds = (S* - S) / (H * share) computed here from its parts.
 *
 *   B0 entry -> B1 if -> B2 extra work -> B3 join;  B1 -> B3
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 3, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1040);
	sb_cfg_add_block(g, 0, 0x1000, 0x1010, 0x100c);
	sb_cfg_add_block(g, 0, 0x1010, 0x1020, 0x101c);   /* B1: cmp; jne */
	sb_cfg_add_block(g, 0, 0x1020, 0x1030, 0x102c);   /* B2: the extra work */
	sb_cfg_add_block(g, 0, 0x1030, 0x1040, 0x103c);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

enum { NT = 4, NI = 8 };

/* Instance i: thread i % NT is busy 10 + x ms (B2: its extra work), the
 * others 10 ms.  Samples per ms of block time: `per_ms`.  B0 and B3 hold
 * 5 ms each and B2 x ms in the busy thread; or (all) B2 holds all of
 * every thread's time. */
static struct sb_profile *rotating(double per_ms, double x, int all)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	unsigned char *blob;
	size_t len;
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sb_profile_add_binary(p, "/bin/w", "ab");
	sb_profile_meta_set(p, "event_sources", "uprobes: 1 functions; cpu-clock sampling: 500 Hz "
			    "(per-thread IP samples, spin waits)");
	sb_profile_meta_set_u64(p, "duration_ns", 2000000000ull);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	sb_cfg_serialize(g, &blob, &len);
	sb_profile_add_cfg(p, 0, blob, len);
	free(blob);
	sb_cfg_free(g);
	for (int b = 0; b < 4; b++) {
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
			.vaddr = 0x1000 + 0x10 * (uint64_t)b, .vaddr2 = 0x100c + 0x10 * (uint64_t)b,
			.loc_hot = -1,
		};

		d.loc = (int32_t)sbt_wloc(p, d.vaddr, 10 + 2 * (unsigned)b);
		d.loc2 = (int32_t)sbt_wloc(p, d.vaddr2, 11 + 2 * (unsigned)b);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = (uint64_t)((t == (uint32_t)i % NT ? 10 + x : 10) * 1e6);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 4; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++) {
				double ms = e == 0 || e == 3 ? (all ? 0 : 5) : e != 2 ? 0 :
					    (all ? 10 : 0) + (t == (uint32_t)i % NT ? x : 0);

				/* deterministic "Poisson": the mean, rounded */
				c[t] = (uint64_t)floor(ms * per_ms + 0.5);
			}
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

static void test_tails(void)
{
	double z = gsl_cdf_ugaussian_Qinv(0.025) + gsl_cdf_ugaussian_Qinv(0.2);
	double d1 = sb_causes_delta_needed(2, 0.05, 0.8);
	/* chi'^2(1, 4) > 3.84: Q(1.96 - 2) + Q(1.96 + 2) */
	double x = 3.841458820694124, want = gsl_cdf_ugaussian_Q(sqrt(x) - 2) +
					     gsl_cdf_ugaussian_Q(sqrt(x) + 2);

	CHECK(fabs(sb_causes_ncx2_sf(x, 1, 4) - want) < 1e-9, "1-dof tail %.9f vs %.9f",
	      sb_causes_ncx2_sf(x, 1, 4), want);
	CHECK(fabs(sb_causes_ncx2_sf(5.0, 3, 0) - gsl_cdf_chisq_Q(5.0, 3)) < 1e-12,
	      "delta 0 is the central tail");
	/* the other tail adds Q(1.96 + 2.8) ~ 1e-6 */
	CHECK(fabs(d1 - z * z) < 1e-3, "delta* (1 dof, 0.05, 0.8) %.4f vs %.4f", d1, z * z);
	CHECK(isinf(sb_causes_delta_needed(1, 0.05, 0.8)), "one column: no test");
}

/* The noncentrality of power 0.8 for the F-test (1, d2), by bisection. */
static double delta_f(double d2)
{
	double c = gsl_cdf_fdist_Qinv(0.05, 1, d2), lo = 0, hi = 1000;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (sb_causes_ncf1_sf(c, d2, mid) < 0.8)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static void test_needed(void)
{
	/* times 2,1,1,1: mean 1.25, sum of squares 0.75, CV^2 = 0.75 / (4 *
	 * 1.5625) = 0.12; with m = 3 events the dispersion test's level is
	 * 0.05 / 6 (LIME's directed test takes the other half); the F-test's
	 * (1, 2) at 0.05 needs more with 4 columns */
	const double t[4] = { 2, 1, 1, 1 }, eq[4] = { 3, 3, 3, 3 };
	double dd = sb_causes_delta_needed(4, 0.05 / 6, 0.8), df = delta_f(2);
	double want = fmax(dd, df) / (4 * 0.12);

	/* F'(1, d2 -> inf, delta) is chi'^2(1, delta): the 1-dof answer */
	CHECK(fabs(sb_causes_ncf1_sf(3.841458820694124, 1e7, 7.849) -
		   sb_causes_ncx2_sf(3.841458820694124, 1, 7.849)) < 1e-4, "F'(1, inf) = chi'^2(1)");
	CHECK(fabs(sb_causes_ncf1_sf(gsl_cdf_fdist_Qinv(0.05, 1, 2), 2, 0) - 0.05) < 1e-9,
	      "delta 0: the central F tail");
	CHECK(df > dd, "4 columns: the F-test needs more (%.2f > %.2f)", df, dd);

	CHECK(fabs(sb_causes_samples_needed(t, 4, 3, 0.05) - want) < 1e-4 * want,
	      "S* = delta* / (n CV^2): %.4f vs %.4f", sb_causes_samples_needed(t, 4, 3, 0.05), want);
	CHECK(isinf(sb_causes_samples_needed(eq, 4, 3, 0.05)), "equal times need no cause");
}

static const struct sb_causes_evidence *ev0(const struct sb_causes *c)
{
	return c->nev == 1 && c->ev[0].section == 0 ? &c->ev[0] : NULL;
}

static void test_rotating(void)
{
	struct sb_profile *p = rotating(4, 30, 0);   /* 4 samples per ms: plenty */
	struct sb_causes c;
	const struct sb_causes_evidence *e;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.n >= 1 && c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 13,
	      "a rotating imbalance is found at the deciding branch (line %u)",
	      c.n && c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
	e = ev0(&c);
	CHECK(e && e->verdict == SB_VERDICT_CAUSES, "verdict causes");
	/* per instance: 20 + 20 samples per thread, + 120 in the busy one */
	CHECK(e && fabs(e->samples_per_thread - (NI * (4 * 40 + 120) / (double)NT)) < 1e-9,
	      "samples per thread %.3f", e ? e->samples_per_thread : -1);
	CHECK(e && e->nthreads == NT && e->ninstances == NI, "threads and instances");
	sb_causes_free(&c);
	sb_profile_free(p);
}

static void test_few(void)
{
	/* 10% more in one thread, all time in B2 (the worst case the need
	 * is derived for), 1 sample per ms: B2's columns 88, 80, 80, 80,
	 * index of dispersion 0.59 (chi-square, 3 dof): nothing found */
	struct sb_profile *p = rotating(1, 1, 1);
	struct sb_causes c;
	const struct sb_causes_evidence *e;
	char err[256] = "";
	int ret;
	/* rank columns: busiest 8 x 11 ms, the others 8 x 10 ms each */
	const double t[NT] = { 0.088, 0.08, 0.08, 0.08 };
	double s = NI * (4 * 10 + 1) / (double)NT, need = sb_causes_samples_needed(t, NT, 1, 0.05);
	/* share: busy seconds per thread (0.328 / 4) over a 2 s run; 500 Hz */
	double rate = 500 * (0.328 / NT) / 2.0;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	e = ev0(&c);
	CHECK(c.n == 0, "no cause from %g samples per thread", s);
	CHECK(e && e->verdict == SB_VERDICT_FEW_SAMPLES, "verdict few samples (%u)",
	      e ? e->verdict : 99);
	CHECK(e && fabs(e->samples_per_thread - s) < 1e-9, "S %.3f vs %.3f",
	      e ? e->samples_per_thread : -1, s);
	CHECK(need > s, "S* %.2f > S %.2f", need, s);
	CHECK(e && fabs(e->more_seconds - (need - s) / rate) < 1e-6 * (need - s) / rate,
	      "more seconds %.4f vs (S* - S) / (H share) = %.4f", e ? e->more_seconds : -1,
	      (need - s) / rate);
	sb_causes_free(&c);
	sb_profile_free(p);
}

int main(void)
{
	test_tails();
	test_needed();
	test_rotating();
	test_few();
	return CHECK_DONE("test_causes_evidence");
}
