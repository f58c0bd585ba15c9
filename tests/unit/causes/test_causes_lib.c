// SPDX-License-Identifier: MIT
/*
 * Exact mode, work in a library: every thread calls an uncounted library
 * function (memcpy through its PLT stub: no CALL edge) equally often, but
 * the threads t % 3 == 0 copy a large working set and spend 8x the time in
 * it.  The library's block has samples but no counts.  Known answer: the
 * top cause is a hardware cause at the program's call (line 21), the
 * decision a reader can act on; no cause sits inside the library.  With
 * the same slowness also sampled at a block of the program's own work
 * (B3, a load that misses), the two are one hardware cluster, tied: the
 * load is shown first, the call after it.
 *
 *   worker: B0 (guard call) -> B1 (call copy, PLT) -> B2 (guard call) ->
 *   B3 -(taken, back)-> B1; B3 -> B4 return.
 *   __sanitizer_cov_trace_pc_guard: B5.  copy (library code): B6 -> B7.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 12
#define M 20     /* calls per instance and thread */

static long loc(struct sb_profile *p, uint64_t addr, unsigned line, char *fn,
		char *file)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0, .line = line,
			    .function = fn, .file = file };

	return sb_profile_add_loc(p, &l);
}

/* The samples of instance i, thread t, in the library's block. */
static uint64_t lib_samples(int i, uint32_t t)
{
	return (t % 3 == 0 ? 40 : 5) + (uint64_t)((t * 5 + (uint32_t)i * 3) % 4);
}

static struct sb_profile *profile(int with_load)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = sbt_lib_loop_graph();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events: counts of B0, B1, B2; samples of B1 (the call site: its
	 * callee's), of B6 (the library) */
	static const int blk[6] = { 0, 1, 2, 1, 6, 3 };
	int nev = with_load ? 6 : 5;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)loc(p, 0x1100, 50, "worker", "w.c");
	for (int e = 0; e < nev; e++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)blk[e];
		struct sb_event_def d = sbt_block_event(
			e < 3 ? SB_EVK_BLOCK_COUNT : SB_EVK_BLOCK_SAMPLES, a, -1, -1);

		d.loc = (int32_t)(blk[e] == 6 ? loc(p, a, 500, "copy", "memmove.S")
					      : loc(p, a, 20 + (unsigned)blk[e], "worker", "w.c"));
		d.loc2 = (int32_t)(blk[e] == 6 ? loc(p, a + 0xc, 509, "copy", "memmove.S")
					       : loc(p, a + 0xc, 20 + (unsigned)blk[e], "worker",
						     "w.c"));
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a sample (1 kHz), plus the loop's own time */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * lib_samples(i, t) + 20000 * M +
					3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < (uint32_t)nev; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? 1 : e < 3 ? M : lib_samples(i, t);
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

static void test_call(void)
{
	struct sb_profile *p = profile(0);
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.exact_counts && c.nsections_analyzed == 1, "exact counts, one section");
	CHECK(c.n >= 1, "a cause found");
	if (c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->kind == SB_CAUSE_HW, "hardware (%u)", top->kind);
		CHECK(top->loc >= 0 && p->locs[top->loc].line == 21 &&
		      !strcmp(p->locs[top->loc].file, "w.c"),
		      "at the program's call, w.c:21 (line %u)",
		      top->loc >= 0 ? p->locs[top->loc].line : 0);
	}
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].addr < 0x1060, "cause %zu not inside the library (%#llx)", i,
		      (unsigned long long)c.c[i].addr);
	sb_causes_free(&c);
	sb_profile_free(p);
}

static void test_load_first(void)
{
	struct sb_profile *p = profile(1);
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.n >= 2, "two causes: %zu", c.n);
	if (c.n >= 2) {
		CHECK(c.c[0].kind == SB_CAUSE_HW && c.c[1].kind == SB_CAUSE_HW, "hardware both");
		CHECK(fabs(c.c[0].score - c.c[1].score) < 1e-9, "tied %g %g", c.c[0].score,
		      c.c[1].score);
		CHECK(c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 23, "the load first (line %u)",
		      c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0);
		CHECK(c.c[1].loc >= 0 && p->locs[c.c[1].loc].line == 21, "the call after (line %u)",
		      c.c[1].loc >= 0 ? p->locs[c.c[1].loc].line : 0);
	}
	sb_causes_free(&c);
	sb_profile_free(p);
}

int main(void)
{
	test_call();
	test_load_first();
	return CHECK_DONE("test_causes_lib");
}
