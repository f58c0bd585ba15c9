/*
 * Sampled mode, a loop that only some threads enter (causes_entered.c).
 * One thread runs a loop behind a test (`if (rank == 0) { setup; for
 * (...) work; }`), the others skip it; every thread also samples the
 * outer loop's barrier call.  The test's block is no predecessor of the
 * loop: a preheader (the loop's setup) sits between them, as gcc -O1
 * compiles it.  The loop's work is its own (pure computation) or a call
 * (a library's memcpy: the call site holds its callee's samples).
 *
 *   B0 entry -> B1 test (line 42) -(fall)-> B2 preheader (line 44)
 *   -> B3 work (line 46; or a call of copy, B9) -> B4 inner latch (line
 *   45, back to B3) -> B5 barrier call (line 52, B8);  B1 -(taken)-> B5;
 *   B5 -> B6 outer latch -(taken, back)-> B1;  B6 -> B7 return.
 *
 * Known answers.  Thread 0 alone with ~1.5 samples in the loop per
 * instance over NI instances: the others entering at that rate would
 * have shown ~150 samples, so they did not enter, and the cause is the
 * test, at B1's branch (0x101c), the work its own or a call.  Every
 * thread sampling the loop, at a rate that grows with its rank (a trip
 * count that differs): no thread skipped it, so the cause stays with the
 * loop (its block or latch), not at the test.  Thread 0 alone with 4
 * samples in all: zero samples in the others by chance is plausible
 * (4 expected), so nothing moves to the test either.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6
#define NI 100
#define NB 8
#define TEST_BRANCH 0x101c

enum shape { ROOT, TRIP, FEW };

static struct sb_cfg *graph(int call)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH },
		{ 1, 5, SB_EDGE_TAKEN }, { 2, 3, SB_EDGE_SEQUENTIAL },
	};
	static const struct sbt_edge edges1[] = {
		{ 4, 3, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 5, 8, SB_EDGE_CALL }, { 5, 6, SB_EDGE_CALL_RETURN },
		{ 6, 1, SB_EDGE_TAKEN }, { 6, 7, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NB);

	sb_cfg_add_func(g, "barrier", 0x2000, 0x2010);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x200c);
	sb_cfg_add_func(g, "copy", 0x2010, 0x2020);
	sb_cfg_add_block(g, 2, 0x2010, 0x2020, 0x201c);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (call) {
		sb_cfg_add_edge(g, 3, 9, SB_EDGE_CALL);
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_CALL_RETURN);
	} else {
		sb_cfg_add_edge(g, 3, 4, SB_EDGE_SEQUENTIAL);
	}
	sbt_add_edges(g, edges1, sizeof(edges1) / sizeof(edges1[0]));
	sb_cfg_finalize(g);
	return g;
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

static struct sb_profile *profile(enum shape s, int call)
{
	static const unsigned line[NB + 2] = { 40, 42, 44, 46, 45, 52, 41, 55, 60, 70 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph(call);
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	/* events: samples of B3 (the work, or its call), B5 (the barrier
	 * call), copy's block B9 (with a call); B1, the test, and B4, the
	 * latch, named by the recorder with no samples of their own */
	static const int blk[5] = { 3, 5, 9, 1, 4 };

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)sbt_wloc(p, 0x105c, 52);
	for (int e = 0; e < 5; e++) {
		uint64_t b = (uint64_t)blk[e];

		sbt_add_sampled_block(p, sbt_block_addr(b, NB), line[b], line[b], e < 3);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a sample of work, 0.2 ms the rest, a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * work(s, i, t) + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < (call ? 3u : 2u); e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++)
				c[t] = e != 1 ? work(s, i, t) : (t + (uint32_t)i) % 3 == 0;
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

/* The top cause of shape s (the work a call or not), or NULL (c filled either way). */
static const struct sb_cause *top(enum shape s, int call, struct sb_causes *c)
{
	struct sb_profile *p = profile(s, call);
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, c, err, sizeof(err));
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

	for (int call = 0; call < 2; call++) {
		t = top(ROOT, call, &c);
		CHECK(t != NULL, "root (call %d): a cause found", call);
		if (t)
			CHECK(t->addr == TEST_BRANCH,
			      "root (call %d): at the test's branch, not in the loop: %#llx", call,
			      (unsigned long long)t->addr);
		sb_causes_free(&c);

		t = top(TRIP, call, &c);
		CHECK(t != NULL, "trip (call %d): a cause found", call);
		if (t)
			CHECK(t->addr >= 0x1030 && t->addr < 0x1050,
			      "trip (call %d): in the loop (work or latch), not at the test: %#llx",
			      call, (unsigned long long)t->addr);
		sb_causes_free(&c);

		t = top(FEW, call, &c);
		if (t)
			CHECK(t->addr != TEST_BRANCH,
			      "few (call %d): zero by chance is plausible, not at the test: %#llx",
			      call, (unsigned long long)t->addr);
		sb_causes_free(&c);
	}
	return CHECK_DONE("test_causes_entered");
}
