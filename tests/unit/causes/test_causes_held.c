/*
 * Sampled mode, a callee reached by a tail call (causes_callee.c,
 * sb_causes_holding_calls): `for (j) if (owns(j)) dispatch(n);` unrolled
 * into six guarded copies of the call, dispatch a `jmp do_block` the CFG
 * has no edge for (as clang -O3 compiles p056 of the accuracy suite).
 * Each copy's block holds its owner's samples of do_block (a call site
 * holds its callees' samples, the tail call's target's too), so do_block
 * leads, with no call edge to the copies.  The decision is the owner
 * test guarding them.
 *
 *   worker: B0 entry (64); for k = 0..5: guard G_k (71) -(fall)-> call
 *   C_k (73, to dispatch), G_k -(taken)-> next;  B13 barrier call (76)
 *   -> B14 latch (68, back to G_0) -> B15 return.  G_k = B(1 + 2k),
 *   C_k = B(2 + 2k).  dispatch: B16 (59, a jmp: no edge).  do_block: B17
 *   loop (39, back to itself), B18 return (42).
 *
 * Known answer: copy k is owned by thread k % 4 (threads 0 and 1 own two
 * copies, 2 and 3 one), 2 samples a call: the cause is an owner test's
 * branch (line 71), not do_block's loop (39).  The same with the tail
 * call in the graph (CFG version 4: a CALL edge from dispatch's `jmp`,
 * flagged SB_BLOCK_TAIL_CALL): do_block's one caller passes the call on,
 * unguarded, and dispatch's callers are the copies (causes_callee.c,
 * sb_causes_call_copies); and with B0 calling dispatch too, every
 * thread alike (common work on another line, 64): the copies' line has
 * the most calls.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 4
#define NI 200
#define NCOPY 6
#define NW 16   /* worker's blocks */

static struct sb_cfg *graph(bool tail, bool common)
{
	static const struct sbt_edge edges[] = {
		{ 13, 19, SB_EDGE_CALL }, { 13, 14, SB_EDGE_CALL_RETURN },
		{ 14, 1, SB_EDGE_TAKEN }, { 14, 15, SB_EDGE_FALLTHROUGH },
		{ 17, 17, SB_EDGE_TAKEN }, { 17, 18, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sbt_worker_graph(NW);

	sb_cfg_add_func(g, "dispatch", 0x2000, 0x2010);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x2000);
	sb_cfg_add_func(g, "do_block", 0x2010, 0x2030);
	sb_cfg_add_block(g, 2, 0x2010, 0x2020, 0x201c);
	sb_cfg_add_block(g, 2, 0x2020, 0x2030, 0x202c);
	sb_cfg_add_func(g, "barrier", 0x3000, 0x3010);
	sb_cfg_add_block(g, 3, 0x3000, 0x3010, 0x300c);
	if (common) {
		sb_cfg_add_edge(g, 0, 16, SB_EDGE_CALL);
		sb_cfg_add_edge(g, 0, 1, SB_EDGE_CALL_RETURN);
	} else {
		sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	}
	for (uint32_t k = 0; k < NCOPY; k++) {
		uint32_t gk = 1 + 2 * k, ck = 2 + 2 * k;

		sb_cfg_add_edge(g, gk, ck, SB_EDGE_FALLTHROUGH);
		sb_cfg_add_edge(g, gk, gk + 2, SB_EDGE_TAKEN);
		sb_cfg_add_edge(g, ck, 16, SB_EDGE_CALL);
		sb_cfg_add_edge(g, ck, gk + 2, SB_EDGE_CALL_RETURN);
	}
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	if (tail) {
		g->has_flags = g->has_tail_calls = true;
		sb_cfg_add_edge(g, 16, 17, SB_EDGE_CALL);
		g->blocks[16].flags = SB_BLOCK_TAIL_CALL;
	}
	sb_cfg_finalize(g);
	return g;
}

static long loc(struct sb_profile *p, uint64_t addr, unsigned line, const char *fn)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0, .line = line,
			    .function = (char *)fn, .file = "w.c" };

	return sb_profile_add_loc(p, &l);
}

/* Samples of thread t in do_block for copy k's call in instance i. */
static uint64_t call_smp(uint32_t k, int i, uint32_t t)
{
	return k % NT == t ? 2 + (uint64_t)((i + (int)k) % 2) : 0;
}

static struct sb_profile *profile(bool tail, bool common)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph(tail, common);
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	uint32_t nev = 0;

	sbt_add_binary_cfg(p, g);
	sec_loc = (uint32_t)loc(p, 0x10dc, 76, "worker");
	/* events 0..5: the call copies; 6: do_block's loop; 7: the barrier
	 * call; then the guards, named with no samples; with common, B0's
	 * call last */
	for (uint32_t e = 0; e < 8 + NCOPY + (uint32_t)common; e++) {
		uint64_t a = e < NCOPY ? 0x1020 + 0x20 * e : e == 6 ? 0x2010 : e == 7 ? 0x10d0
			     : e == 8 + NCOPY ? 0x1000 : 0x1010 + 0x20 * (e - 8);
		unsigned ln = e < NCOPY ? 73 : e == 6 ? 39 : e == 7 ? 76 : e == 8 + NCOPY ? 64 : 71;
		const char *fn = e == 6 ? "do_block" : "worker";
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0, .vaddr = a, .vaddr2 = a + 0xc,
			.loc_hot = -1,
		};

		d.loc = (int32_t)loc(p, a, ln, fn);
		d.loc2 = (int32_t)loc(p, a + 0xc, ln, fn);
		if (e < 8 || e == 8 + NCOPY) {
			d.hot = a + 4;
			d.loc_hot = (int32_t)loc(p, d.hot, ln, fn);
		}
		sb_profile_add_event(p, &d);
		nev++;
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = NT,
					  .per_thread = pt };
		uint64_t c[9][NT] = { { 0 } };

		for (uint32_t t = 0; t < NT; t++) {
			for (uint32_t k = 0; k < NCOPY; k++) {
				c[k][t] = call_smp(k, i, t);
				c[6][t] += c[k][t];
			}
			c[8][t] = common ? 2 : 0;      /* every thread's common call */
			c[6][t] += c[8][t];
			c[7][t] = (t + (uint32_t)i) % 3 == 0;
			pt[t].busy_ns = 1000000 * c[6][t] + 200000 +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		}
		sb_profile_add_instance(p, &in);
		for (uint32_t e = 0; e < 8 + (uint32_t)common; e++) {
			struct sb_vector v = { .instance = (uint32_t)i,
					       .event = e < 8 ? e : 8 + NCOPY, .nthreads = NT,
					       .counts = c[e] };

			sb_profile_add_vector(p, &v);
		}
	}
	return p;
}

int main(void)
{
	for (int v = 0; v < 3; v++) {
		bool tail = v > 0, common = v > 1;
		struct sb_profile *p = profile(tail, common);
		struct sb_causes c;
		char err[256] = "";
		int ret;

		ret = sbt_compute(p, &c, err, sizeof(err));
		CHECK(ret == 0, "compute (tail edge %d, common call %d): %d %s", tail, common, ret,
		      err);
		if (!ret) {
			CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
			CHECK(c.n > 0, "a cause found");
			if (c.n)
				CHECK(c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 71,
				      "tail edge %d, common call %d: an owner test (line 71), not "
				      "do_block: line %u at %#llx", tail, common,
				      c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0,
				      (unsigned long long)c.c[0].addr);
			sb_causes_free(&c);
		}
		sb_profile_free(p);
	}
	return CHECK_DONE("test_causes_held");
}
