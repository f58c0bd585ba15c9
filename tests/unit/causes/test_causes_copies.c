// SPDX-License-Identifier: MIT
/*
 * Exact mode, a callee's entry as the cause (causes_copies.c).  worker
 * calls `work` once unconditionally (line 39: a constant count), then NC
 * copies of one unrolled guarded call through a pointer (`if (owns(k))
 * fn(k)`: the test on line 41, the call on line 42, no CALL edge): copy k
 * runs for thread (i + k) % NT in instance i, and the busy time is the
 * calls'.  7 copies over 4 threads: each copy alone correlates 1/3 with
 * time, their sum 1, so LIME names work's entry (a CALL at line 16).  work calls `helper` once a call (its entry repeats work's
 * count: a callee, never the caller).  Known answers:
 *
 *  - the cause is shown at the copies' guard, line 41, a branch; the
 *    caller found is the first copy (all run equally often);
 *  - with the pointer going to `wrap`, which always calls work directly,
 *    the search from work's entry goes past wrap (its entry runs exactly
 *    as often as its call: no decision) to the copies in worker;
 *  - with the copies calling wrap directly and wrap ending in a tail
 *    `jmp work` (no edge: a block that leaves its function), the same;
 *  - with the copies' calls on two lines (42 and 44: two decisions, each
 *    a part of the variation), no line matches: no caller, the cause
 *    stays at the entry.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

#define NT 4
#define NI 16
#define NC 7
#define MAXB 64

enum { PLAIN, WRAP, TWO_LINES, TAIL };

struct blk {
	int func;      /* 0 worker, 1 wrap, 2 work, 3 helper, 4 cov */
	unsigned line;
	int counted;   /* its event: 0 none, else the kind of count below */
	int copy;      /* copy index for C/S blocks */
};
enum { NONE_, ONE, OWN, NOT_OWN, CALLS, CALLS_ALL };

struct prog {
	struct blk b[MAXB];
	int nb;
	int first_copy;    /* block index of copy 0's counted block */
	int work_entry;
	int wrap_entry;
	uint32_t e[3 * MAXB][3];
	int ne;
};

static int add(struct prog *g, int func, unsigned line, int counted, int copy)
{
	g->b[g->nb] = (struct blk){ func, line, counted, copy };
	return g->nb++;
}

static void edge(struct prog *g, int s, int d, int kind)
{
	g->e[g->ne][0] = (uint32_t)s;
	g->e[g->ne][1] = (uint32_t)d;
	g->e[g->ne][2] = (uint32_t)kind;
	g->ne++;
}

/* Blocks in address order, functions contiguous; edges after. */
static void build(struct prog *g, int mode)
{
	int b0, u, cov, x1 = -1, w1, h0, t, c, ptr, s;

	memset(g, 0, sizeof(*g));
	b0 = add(g, 0, 38, ONE, 0);
	u = add(g, 0, 39, NONE_, 0);
	for (int k = 0; k < NC; k++) {
		unsigned line = mode == TWO_LINES && k % 2 ? 44 : 42;

		t = add(g, 0, 41, NONE_, k);
		s = add(g, 0, 41, NOT_OWN, k);
		c = add(g, 0, line, OWN, k);
		ptr = add(g, 0, line, NONE_, k);
		if (!k) {
			g->first_copy = c;
			edge(g, u, t, SB_EDGE_CALL_RETURN);
		}
		edge(g, t, s, SB_EDGE_FALLTHROUGH);
		edge(g, t, c, SB_EDGE_TAKEN);
		edge(g, s, ptr + 1, SB_EDGE_JUMP);
		edge(g, c, ptr, SB_EDGE_CALL_RETURN);   /* after the cov call */
		edge(g, ptr, ptr + 1, SB_EDGE_CALL_RETURN); /* the pointer call */
	}
	/* the last copy's ways on end at the return block */
	add(g, 0, 46, NONE_, 0);
	g->wrap_entry = -1;
	if (mode == WRAP || mode == TAIL) {
		g->wrap_entry = add(g, 1, 50, CALLS, 0);
		x1 = add(g, 1, 51, NONE_, 0);
		if (mode == WRAP)
			add(g, 1, 52, NONE_, 0);
	}
	g->work_entry = add(g, 2, 16, CALLS_ALL, 0);
	w1 = add(g, 2, 18, NONE_, 0);
	add(g, 2, 20, NONE_, 0);
	h0 = add(g, 3, 60, CALLS_ALL, 0);
	cov = add(g, 4, 0, NONE_, 0);
	edge(g, b0, u, SB_EDGE_CALL_RETURN);
	edge(g, u, g->work_entry, SB_EDGE_CALL);
	for (int i = 0; i < g->nb; i++)
		if (g->b[i].counted != NONE_)
			edge(g, i, cov, SB_EDGE_CALL);
	if (mode == TAIL) {   /* wrap ends in `jmp work`: no edge */
		edge(g, g->wrap_entry, x1, SB_EDGE_CALL_RETURN);
		for (int i = 0; i < g->nb; i++)   /* the copies call wrap directly */
			if (g->b[i].func == 0 && g->b[i].counted == OWN)
				edge(g, i + 1, g->wrap_entry, SB_EDGE_CALL);
	}
	if (mode == WRAP) {
		edge(g, g->wrap_entry, x1, SB_EDGE_CALL_RETURN);
		edge(g, x1, g->work_entry, SB_EDGE_CALL);
		edge(g, x1, x1 + 1, SB_EDGE_CALL_RETURN);
	}
	edge(g, g->work_entry, w1, SB_EDGE_CALL_RETURN);
	edge(g, w1, h0, SB_EDGE_CALL);
	edge(g, w1, w1 + 1, SB_EDGE_CALL_RETURN);
}

static const char *fname[5] = { "worker", "wrap", "work", "helper",
				"__sanitizer_cov_trace_pc_guard" };

static struct sb_cfg *graph(const struct prog *g)
{
	struct sb_cfg *cfg = sb_cfg_alloc();
	int f = -1;

	for (int i = 0; i < g->nb; i++)
		if (g->b[i].func != f) {
			int j = i;

			f = g->b[i].func;
			while (j < g->nb && g->b[j].func == f)
				j++;
			sb_cfg_add_func(cfg, fname[f], 0x1000 + 0x10 * (uint64_t)i,
					0x1000 + 0x10 * (uint64_t)j);
		}
	for (int i = 0, fi = -1, last = -1; i < g->nb; i++) {
		if (g->b[i].func != last) {
			fi++;
			last = g->b[i].func;
		}
		sb_cfg_add_block(cfg, (uint32_t)fi, 0x1000 + 0x10 * (uint64_t)i,
				 0x1010 + 0x10 * (uint64_t)i, 0x100c + 0x10 * (uint64_t)i);
	}
	for (int k = 0; k < g->ne; k++)
		sb_cfg_add_edge(cfg, g->e[k][0], g->e[k][1], (uint16_t)g->e[k][2]);
	sb_cfg_finalize(cfg);
	return cfg;
}

static int owns(int i, int k, uint32_t t)
{
	return (uint32_t)((i + k) % NT) == t;
}

static uint64_t count(const struct prog *g, int blk, int i, uint32_t t)
{
	int calls = 0;

	for (int k = 0; k < NC; k++)
		calls += owns(i, k, t);
	switch (g->b[blk].counted) {
	case ONE: return 1;
	case OWN: return (uint64_t)owns(i, g->b[blk].copy, t);
	case NOT_OWN: return (uint64_t)!owns(i, g->b[blk].copy, t);
	case CALLS: return (uint64_t)calls;
	case CALLS_ALL: return (uint64_t)calls + 1;   /* + the unconditional call */
	}
	return 0;
}

static struct sb_profile *profile(const struct prog *g)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *cfg = graph(g);
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;
	struct sb_loc l0 = { .addr = 0x2000, .offset = 0x2000, .line = 47, .function = "worker",
			     .file = "w.c" };
	int ev[MAXB], nev = 0;

	sbt_add_binary_cfg(p, cfg);
	sec_loc = (uint32_t)sb_profile_add_loc(p, &l0);
	for (int b = 0; b < g->nb; b++) {
		uint64_t a = 0x1000 + 0x10 * (uint64_t)b;
		struct sb_loc la = { .addr = a, .offset = a, .line = g->b[b].line,
				     .function = (char *)fname[g->b[b].func], .file = "w.c" };
		struct sb_loc lz = la;
		struct sb_event_def d = { .kind = SB_EVK_BLOCK_COUNT, .binary = 0, .vaddr = a,
					  .vaddr2 = a + 0xc, .loc_hot = -1 };

		lz.addr = lz.offset = a + 0xc;
		d.loc = (int32_t)sb_profile_add_loc(p, &la);
		d.loc2 = (int32_t)sb_profile_add_loc(p, &lz);
		/* as the recorder does: every block of a counted function is
		 * named, those without counts of their own without vectors */
		if (g->b[b].func == 4)
			continue;
		sb_profile_add_event(p, &d);
		ev[nev++] = b;
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a call, plus a little of the thread's own */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * count(g, g->work_entry, i, t) +
					3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (int e = 0; e < nev; e++) {
			uint64_t c[NT];
			struct sb_vector v = { .instance = (uint32_t)i, .event = (uint32_t)e,
					       .nthreads = NT, .counts = c };

			if (g->b[ev[e]].counted == NONE_)
				continue;
			for (uint32_t t = 0; t < NT; t++)
				c[t] = count(g, ev[e], i, t);
			sb_profile_add_vector(p, &v);
		}
	}
	return p;
}

/* sb_causes_copies_caller from block `from` of mode's program. */
static long caller(int mode, int from_wrap)
{
	struct prog g;
	struct sb_profile *p;
	struct sb_causes_graph gr;
	char err[256] = "";
	long r = -2;

	build(&g, mode);
	p = profile(&g);
	if (!sb_causes_graph_load(p, &gr, err, sizeof(err)))
		r = sb_causes_copies_caller(p, &gr, 0, from_wrap ? g.wrap_entry : g.work_entry);
	else
		CHECK(0, "graph: %s", err);
	sb_causes_graph_free(&gr, p->nbinaries);
	sb_profile_free(p);
	return r;
}

static void test_found(void)
{
	struct prog g;

	build(&g, PLAIN);
	CHECK(caller(PLAIN, 0) == g.first_copy, "work's entry: the first copy %d (got %ld)",
	      g.first_copy, caller(PLAIN, 0));
	build(&g, WRAP);
	CHECK(caller(WRAP, 0) == g.first_copy, "past wrap to the copies %d (got %ld)",
	      g.first_copy, caller(WRAP, 0));
	CHECK(caller(WRAP, 1) == g.first_copy, "wrap's entry: the copies %d (got %ld)",
	      g.first_copy, caller(WRAP, 1));
	build(&g, TAIL);
	CHECK(caller(TAIL, 0) == g.first_copy, "past a tail call to the copies %d (got %ld)",
	      g.first_copy, caller(TAIL, 0));
	CHECK(caller(TWO_LINES, 0) == -1, "two lines: no caller (got %ld)", caller(TWO_LINES, 0));
}

/* End to end: the top cause at the guard of the copies. */
static void test_shown(int mode, unsigned line, uint16_t kind)
{
	struct prog g;
	struct sb_profile *p;
	struct sb_causes c;
	char err[256] = "";
	int ret;

	build(&g, mode);
	p = profile(&g);
	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.n >= 1, "mode %d: a cause found", mode);
	if (c.n >= 1) {
		const struct sb_cause *top = &c.c[0];

		CHECK(top->kind == kind, "mode %d: kind %u (got %u)", mode, kind, top->kind);
		CHECK(top->loc >= 0 && p->locs[top->loc].line == line,
		      "mode %d: at w.c:%u (got line %u)", mode, line,
		      top->loc >= 0 ? p->locs[top->loc].line : 0);
	}
	sb_causes_free(&c);
	sb_profile_free(p);
}

int main(void)
{
	test_found();
	test_shown(PLAIN, 41, SB_CAUSE_BRANCH);
	test_shown(WRAP, 41, SB_CAUSE_BRANCH);
	test_shown(TWO_LINES, 16, SB_CAUSE_CALL);
	test_shown(TAIL, 41, SB_CAUSE_BRANCH);
	return CHECK_DONE("test_causes_copies");
}
