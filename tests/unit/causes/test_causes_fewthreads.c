// SPDX-License-Identifier: MIT
/*
 * Exact mode with 3 threads and nothing but hardware to tell them apart
 * (causes_exact_hw.c): every thread calls the library copy M times an
 * instance (equal exact counts), thread 0 copies a large working set.
 * Between threads the test has one degree of freedom, too few for any
 * level; the pairs say the effect persists.
 *  - PERSISTS: thread 0's samples at the call are 4x the others' in every
 *    one of 24 instances (jitter 0-3).  Known answer: hardware at the call
 *    (line 21).
 *  - CHANCE: every thread 10 + jitter 0-3 drawn afresh in each instance
 *    (its threads' means differ a little, by chance), and busy time
 *    following it.  Known answer: no hardware cause.
 *
 *   worker: B0 (guard call) -> B1 (call copy, PLT) -> B2 (guard call) ->
 *   B3 -(taken, back)-> B1; B3 -> B4 return.
 *   __sanitizer_cov_trace_pc_guard: B5.  copy (library code): B6 -> B7.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 3
#define NI 24
#define M 20

enum plant { PERSISTS, CHANCE };

static uint64_t samples(enum plant k, int i, uint32_t t)
{
	/* 0-3, a hash of (instance, thread): the threads' means differ a
	 * little over 24 instances, as chance has them, and do not persist */
	uint64_t jitter = ((uint64_t)(i * 7 + 3) * (t + 11) * 2654435761u >> 13) % 4;

	return (k == PERSISTS && t == 0 ? 40 : 10) + jitter;
}

static struct sb_profile *profile(enum plant k)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	/* events: counts of B0..B3; samples at the call (the library's) */
	static const int blk[5] = { 0, 1, 2, 3, 1 };
	uint32_t sec_loc;

	sbt_add_binary_cfg(p, sbt_lib_loop_graph());
	sb_profile_meta_set(p, "event_sources", "cpu-clock sampling: 1000 Hz");
	sec_loc = (uint32_t)sbt_wloc(p, 0x1100, 50);
	for (int e = 0; e < 5; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)blk[e];
		struct sb_event_def d = sbt_block_event(
			e < 4 ? SB_EVK_BLOCK_COUNT : SB_EVK_BLOCK_SAMPLES, a,
			sbt_wloc(p, a, 20 + (unsigned)blk[e]), sbt_wloc(p, a + 0xc, 20 + (unsigned)blk[e]));

		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a sample, the loop's own 20 us a trip, and time no
		 * sample here sees (3 ms x t: in the kernel, say), so the
		 * threads' times follow the call's samples at r^2 = 0.99,
		 * p = 0.06 between 3 threads */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * samples(k, i, t) + 20000 * M + 3000000ull * t;
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < 5; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 1 : e < 4 ? M : samples(k, i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

static void run(enum plant k)
{
	struct sb_profile *p = profile(k);
	struct sb_causes c;
	char err[256] = "";
	int ret = sbt_compute(p, &c, err, sizeof(err));
	bool hw = false;

	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	for (size_t i = 0; i < c.n; i++)
		hw |= c.c[i].kind == SB_CAUSE_HW;
	if (k == PERSISTS)
		CHECK(c.n >= 1 && c.c[0].kind == SB_CAUSE_HW && c.c[0].loc >= 0 &&
		      p->locs[c.c[0].loc].line == 21,
		      "3 threads, one missing the cache throughout: hardware at the call, line 21 "
		      "(%zu causes)", c.n);
	else
		CHECK(!hw, "3 threads, chance differences only: no hardware cause");
	sb_causes_free(&c);
	sb_profile_free(p);
}

int main(void)
{
	run(PERSISTS);
	run(CHANCE);
	return CHECK_DONE("test_causes_fewthreads");
}
