// SPDX-License-Identifier: MIT
/*
 * Exact mode's verdicts (causes_evidence.c, exact_verdict), against
 * answers derived here.  12 threads, 4 instances; every thread runs the
 * loop the same M times (equal exact counts: no control-flow cause), and
 * thread 0 is busy 1.3 ms an instance, the others 1.0 ms: a hardware
 * effect, which only the samples at the loop's library call (B1, the one
 * hardware event) can show.  The hardware test is between threads,
 * F(1, 10) at 0.05 (m = 1), so the samples per thread it needs are
 *     S* = delta* / (sum_t (T_t - Tbar)^2 / Tbar^2),
 * delta* the noncentrality of power 0.8 (bisection on the noncentral F
 * tail here).  T: 1.3, 1.0 x 11 per instance -> S* ~ 124.
 *  - few: 8 or 12 samples an instance (odd threads more: no relation to
 *    time), S = 40: no cause, FEW_SAMPLES (before: NONE, "no event
 *    explains"), more_seconds = duration x (S* - S) / S;
 *  - the same pattern x 100 (S = 4000): samples enough, still nothing
 *    follows time: NONE;
 *  - samples that follow time (13 in thread 0, 10 elsewhere; S = 41): the
 *    hardware cause passes, at a power below 0.8: CAUSES_LOW; x 100: CAUSES;
 *  - thread 0 runs the loop 1.3 M times and no sample at all: a control-flow
 *    cause from exact counts, CAUSES whatever the samples;
 *  - threads 0-3 run it M + 1 times, no sample: a control-flow cause that
 *    explains little of thread 0's surplus (score < 0.5), and no samples
 *    for the hardware test of the rest: CAUSES_LOW.
 *
 *   worker: B0 (guard call) -> B1 (call copy, PLT) -> B2 (guard call) ->
 *   B3 -(taken, back)-> B1; B3 -> B4 return.
 *   __sanitizer_cov_trace_pc_guard: B5.  copy (library code): B6 -> B7.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

#define NT 12
#define NI 4
#define M 20

enum plant { FEW, ENOUGH, HW_FEW, HW_ENOUGH, FLOW, FLOW_WEAK };

/* Samples at the library call, instance-independent. */
static uint64_t samples(enum plant k, uint32_t t)
{
	switch (k) {
	case FEW: return 8 + 4 * (t % 2);
	case ENOUGH: return 100 * (8 + 4 * (t % 2));
	case HW_FEW: return t ? 10 : 13;
	case HW_ENOUGH: return t ? 1000 : 1300;
	default: return 0;
	}
}

static struct sb_profile *profile(enum plant k)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = sbt_lib_loop_graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events: counts of B0..B3; samples of B1 (the library's) */
	static const int blk[5] = { 0, 1, 2, 3, 1 };

	sbt_add_binary_cfg(p, g);
	sb_profile_meta_set(p, "event_sources", "uprobes: 1 functions; cpu-clock sampling: 999 Hz "
			    "(per-thread IP samples, spin waits)");
	sb_profile_meta_set_u64(p, "duration_ns", 2000000000ull);
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int e = 0; e < 5; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)blk[e];
		struct sb_event_def d = sbt_block_event(
			e < 4 ? SB_EVK_BLOCK_COUNT : SB_EVK_BLOCK_SAMPLES, a, -1, -1);

		d.loc = (int32_t)sbt_wloc(p, a, 20 + (unsigned)blk[e]);
		d.loc2 = (int32_t)sbt_wloc(p, a + 0xc, 20 + (unsigned)blk[e]);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = t ? 1000000 : 1300000;
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 5; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 1 : e < 4 ? (k == FLOW && !t ? 26 :
							     k == FLOW_WEAK && t < 4 ? M + 1 : M)
						  : samples(k, t);
			if (e < 4 || (k != FLOW && k != FLOW_WEAK))
				sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* S* for the planted busy times: delta* (F(1, 10), level 0.05, power
 * 0.8) over sum_t (T_t - Tbar)^2 / Tbar^2. */
static double needed(void)
{
	double c = gsl_cdf_fdist_Qinv(0.05, 1, NT - 2), lo = 0, hi = 1000;
	double tbar = (1.3 + (NT - 1)) / NT, ss = 0;

	for (int it = 0; it < 200; it++) {
		double mid = (lo + hi) / 2;

		if (sb_causes_ncf1_sf(c, NT - 2, mid) < 0.8)
			lo = mid;
		else
			hi = mid;
	}
	for (uint32_t t = 0; t < NT; t++)
		ss += ((t ? 1.0 : 1.3) - tbar) * ((t ? 1.0 : 1.3) - tbar);
	return hi / (ss / (tbar * tbar));
}

static void run(enum plant k, uint16_t want, const char *what)
{
	struct sb_profile *p = profile(k);
	struct sb_causes c;
	const struct sb_causes_evidence *e;
	char err[256] = "";
	double s = 0, need = needed();
	int ret;

	for (uint32_t t = 0; t < NT; t++)
		s += (double)(NI * samples(k, t)) / NT;
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "%s: compute: %d %s", what, ret, err);
	e = c.nev == 1 ? &c.ev[0] : NULL;
	CHECK(c.exact_counts, "%s: exact counts", what);
	CHECK(e && e->verdict == want, "%s: verdict %u, want %u", what, e ? e->verdict : 99, want);
	if (k == FEW || k == ENOUGH)
		CHECK(c.n == 0, "%s: no cause (%zu)", what, c.n);
	if (k == HW_FEW || k == HW_ENOUGH)
		CHECK(c.n >= 1 && c.c[0].kind == SB_CAUSE_HW && c.c[0].loc >= 0 &&
		      p->locs[c.c[0].loc].line == 21, "%s: hardware at the call, line 21", what);
	if (k == FLOW)
		CHECK(c.n >= 1 && c.c[0].kind != SB_CAUSE_HW, "%s: a control-flow cause", what);
	if (k == FLOW_WEAK)
		CHECK(c.n >= 1 && c.c[0].kind != SB_CAUSE_HW && c.c[0].score < 0.5,
		      "%s: a control-flow cause that explains little (score %.3f)", what,
		      c.n >= 1 ? c.c[0].score : -1.0);
	if (k != FLOW)
		CHECK(e && fabs(e->samples_per_thread - s) < 1e-9, "%s: S %.3f vs %.3f", what,
		      e ? e->samples_per_thread : -1, s);
	if (k == FEW || k == HW_FEW) {
		CHECK(need > s && need < s * 1024 / (NT * NI), "%s: S %.1f < S* %.1f, reachable",
		      what, s, need);
		/* 2 s recorded: the samples come at S / 2 per second */
		CHECK(e && fabs(e->more_seconds - 2 * (need - s) / s) < 1e-3 * need / s,
		      "%s: more seconds %.4f vs 2 (S* - S) / S = %.4f", what,
		      e ? e->more_seconds : -1, 2 * (need - s) / s);
	}
	if (k == ENOUGH)
		CHECK(s > need, "%s: S %.1f > S* %.1f", what, s, need);
	sb_causes_free(&c);
	sb_profile_free(p);
}

int main(void)
{
	run(FEW, SB_VERDICT_FEW_SAMPLES, "few samples");
	run(ENOUGH, SB_VERDICT_NONE, "samples enough");
	run(HW_FEW, SB_VERDICT_CAUSES_LOW, "hardware, few samples");
	run(HW_ENOUGH, SB_VERDICT_CAUSES, "hardware, samples enough");
	run(FLOW, SB_VERDICT_CAUSES, "control flow, no samples");
	run(FLOW_WEAK, SB_VERDICT_CAUSES_LOW, "weak control flow, no samples");
	return CHECK_DONE("test_causes_exact_ev");
}
