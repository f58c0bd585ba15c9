// SPDX-License-Identifier: MIT
/*
 * Sampled mode, a loop that only some threads enter (causes_entered.c).
 * One thread runs a loop of pure work behind a test (`if (rank == 0) {
 * setup; for (...) work; }`), the others skip it; every thread also
 * samples the outer loop's barrier call.  The test's block is no
 * predecessor of the loop: a preheader (the loop's setup) sits between
 * them, as gcc -O1 compiles it.
 *
 *   B0 entry -> B1 test (line 42) -(fall)-> B2 preheader (line 45)
 *   -> B3 work (line 46, back to itself) -> B4 barrier call (line 52);
 *   B1 -(taken)-> B4;  B4 -> B5 outer latch -(taken, back)-> B1;
 *   B5 -> B6 return.
 *
 * Known answers.  Thread 0 alone with ~1.5 samples in B3 per instance
 * over NI instances: the others entering at that rate would have shown
 * ~150 samples, so they did not enter, and the cause is the test, at
 * B1's branch (0x101c).  Every thread sampling B3, at a rate that grows
 * with its rank (a trip count that differs): no thread skipped it, so the
 * cause stays in the loop (its trip count), not at the test.  Thread 0
 * alone with 4 samples in all: zero samples in the others by chance is
 * plausible (4 expected), so nothing moves to the test either.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes.h"
#include "cfg/cfg.h"
#include "cfg/cfg_io.h"
#include "check.h"

#define NT 6
#define NI 100
#define NB 7
#define TEST_BRANCH 0x101c

enum shape { ROOT, TRIP, FEW };

static struct sb_cfg *graph(void)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1000 + 0x10 * NB);
	sb_cfg_add_func(g, "barrier", 0x2000, 0x2010);
	for (uint64_t b = 0; b < NB; b++)
		sb_cfg_add_block(g, 0, 0x1000 + 0x10 * b, 0x1010 + 0x10 * b, 0x100c + 0x10 * b);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x200c);
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 1, 4, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 2, 3, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 3, 3, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 3, 4, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 4, 7, SB_EDGE_CALL);
	sb_cfg_add_edge(g, 4, 5, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, 5, 1, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 5, 6, SB_EDGE_FALLTHROUGH);
	sb_cfg_finalize(g);
	return g;
}

static long loc(struct sb_profile *p, uint64_t addr, unsigned line)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0, .line = line,
			    .function = "worker", .file = "w.c" };

	return sb_profile_add_loc(p, &l);
}

/* Samples of thread t in the work block B3 in instance i. */
static uint64_t work(enum shape s, int i, uint32_t t)
{
	switch (s) {
	case ROOT:
		return t == 0 ? 1 + (uint64_t)(i % 2) : 0;
	case TRIP:
		return (t + 1) * (1 + (uint64_t)((i + (int)t) % 2)) / 2;
	case FEW:
		return t == 0 && i % 25 == 0 ? 1 : 0;
	}
	return 0;
}

static struct sb_profile *profile(enum shape s)
{
	static const unsigned line[NB] = { 40, 42, 45, 46, 52, 41, 55 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	struct sb_section sec = { .kind = SB_SECT_BARRIER, .nthreads = NT, .per_thread = pt };
	/* events: samples of B3 (the work), B4 (the barrier call), and B1,
	 * the test, named by the recorder with no samples of its own */
	static const int blk[3] = { 3, 4, 1 };
	unsigned char *blob;
	size_t len;

	sb_profile_add_binary(p, "/bin/w", "ab");
	sec.loc = (uint32_t)loc(p, 0x104c, 52);
	sb_cfg_serialize(g, &blob, &len);
	sb_profile_add_cfg(p, 0, blob, len);
	free(blob);
	sb_cfg_free(g);
	for (int e = 0; e < 3; e++) {
		uint64_t b = (uint64_t)blk[e];
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
			.vaddr = 0x1000 + 0x10 * b, .vaddr2 = 0x100c + 0x10 * b, .loc_hot = -1,
		};

		d.loc = (int32_t)loc(p, d.vaddr, line[b]);
		d.loc2 = (int32_t)loc(p, d.vaddr2, line[b]);
		if (e < 2) {
			d.hot = d.vaddr + 4;
			d.loc_hot = (int32_t)loc(p, d.hot, line[b]);
		}
		sb_profile_add_event(p, &d);
	}
	for (uint32_t t = 0; t < NT; t++)
		pt[t] = (struct sb_thread_time){ 100 + t, 0, 0, 0 };
	sb_profile_add_section(p, &sec);
	for (int i = 0; i < NI; i++) {
		struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = NT,
					  .per_thread = pt };

		/* 1 ms a sample of work, 0.2 ms the rest, a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * work(s, i, t) + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sb_profile_add_instance(p, &in);
		for (uint32_t e = 0; e < 2; e++) {
			uint64_t c[NT];
			struct sb_vector v = { .instance = (uint32_t)i, .event = e, .nthreads = NT,
					       .counts = c };

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e == 0 ? work(s, i, t) : (t + (uint32_t)i) % 3 == 0;
			sb_profile_add_vector(p, &v);
		}
	}
	return p;
}

/* The top cause of shape s, or NULL (c filled either way). */
static const struct sb_cause *top(enum shape s, struct sb_causes *c)
{
	struct sb_profile *p = profile(s);
	struct sb_lime_opts o;
	char err[256] = "";
	int ret;

	sb_lime_opts_default(&o);
	ret = sb_causes_compute(p, &o, c, err, sizeof(err));
	sb_profile_free(p);
	CHECK(ret == 0, "compute (%d): %d %s", s, ret, err);
	if (ret)
		return NULL;
	CHECK(!c->exact_counts && c->nsections_analyzed == 1, "samples, one section (%d)", s);
	return c->n ? &c->c[0] : NULL;
}

int main(void)
{
	const struct sb_cause *t;
	struct sb_causes c;

	t = top(ROOT, &c);
	CHECK(t != NULL, "root: a cause found");
	if (t)
		CHECK(t->addr == TEST_BRANCH, "root: at the test's branch, not in the loop: %#llx",
		      (unsigned long long)t->addr);
	sb_causes_free(&c);

	t = top(TRIP, &c);
	CHECK(t != NULL, "trip: a cause found");
	if (t)
		CHECK(t->addr != TEST_BRANCH && t->addr >= 0x1030 && t->addr < 0x1040,
		      "trip: in the loop, not at the test: %#llx", (unsigned long long)t->addr);
	sb_causes_free(&c);

	t = top(FEW, &c);
	if (t)
		CHECK(t->addr != TEST_BRANCH, "few: zero by chance is plausible, not at the test: %#llx",
		      (unsigned long long)t->addr);
	sb_causes_free(&c);
	return CHECK_DONE("test_causes_entered");
}
