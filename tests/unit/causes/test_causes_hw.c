// SPDX-License-Identifier: MIT
/*
 * causes.c on constructed hardware-path profiles (`record --events hw`):
 * LBR taken-branch samples as SB_EVK_EDGE events, PEBS loads weighted by
 * latency as SB_EVK_HW events.  Known answers:
 *   - threads whose loop runs longer: a loop cause at the loop (its back
 *     edge is a taken branch LBR sees);
 *   - the same loop counts everywhere, slower loads in some threads (the
 *     lime_cache case): a hardware cause at the load, not control flow.
 *
 *   B0 entry -> B1 if: taken -> B3 (skip), fall-through -> B2 loop body;
 *   B2 -> B2 (taken, back edge), B2 -> B3;  B3 returns to its caller
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "check.h"

#define NT 6

static struct sb_cfg *graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 3, SB_EDGE_TAKEN },
		{ 1, 2, SB_EDGE_FALLTHROUGH }, { 2, 2, SB_EDGE_TAKEN },
		{ 2, 3, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1040);
	for (uint64_t a = 0x1000; a < 0x1040; a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* Lines: block b starts at 10 + 2b and ends at 11 + 2b; the load is line
 * 23; anything else 99 (an address has one line, whoever asks). */
static long loc(struct sb_profile *p, uint64_t addr)
{
	unsigned b = (unsigned)((addr - 0x1000) / 0x10);
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0,
			    .function = "worker", .file = "w.c" };

	l.line = addr < 0x1000 || addr >= 0x1040 ? 99 : addr % 16 == 0 ? 10 + 2 * b :
		 addr % 16 == 0xc ? 11 + 2 * b : 23;
	return sb_profile_add_loc(p, &l);
}

enum { EV_SKIP, EV_BACK, EV_RET, EV_LOAD, NEV };

/* One section, one instance; per-thread busy ms and event counts. */
static struct sb_profile *profile(const double *busy, const uint64_t (*counts)[NT])
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	struct sb_section sec = { .kind = SB_SECT_BARRIER, .nthreads = NT, .per_thread = pt };
	struct sb_instance in = { .section = 0, .nthreads = NT, .per_thread = pt };
	/* (from, to): LBR edges; the load: vaddr only */
	static const uint64_t ev[NEV][2] = {
		[EV_SKIP] = { 0x101c, 0x1030 },   /* B1's taken branch */
		[EV_BACK] = { 0x102c, 0x1020 },   /* the loop's back edge */
		[EV_RET] = { 0x103c, 0x5000 },    /* a return: no CFG edge */
		[EV_LOAD] = { 0x1024, 0 },        /* the load in the loop */
	};

	sbt_add_binary_cfg(p, g);
	sec.loc = (uint32_t)loc(p, 0x1100);
	for (int e = 0; e < NEV; e++) {
		struct sb_event_def d = { .kind = e == EV_LOAD ? SB_EVK_HW : SB_EVK_EDGE,
					  .binary = 0, .vaddr = ev[e][0], .vaddr2 = ev[e][1],
					  .loc2 = -1, .loc_hot = -1 };

		d.loc = (int32_t)loc(p, d.vaddr);
		if (d.kind == SB_EVK_EDGE)
			d.loc2 = (int32_t)loc(p, d.vaddr2);
		sb_profile_add_event(p, &d);
	}
	/* the blocks' last instructions, where control-flow causes are shown */
	for (int b = 0; b < 4; b++) {
		struct sb_event_def d = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
					  .vaddr = 0x1000 + 0x10 * (uint64_t)b,
					  .vaddr2 = 0x100c + 0x10 * (uint64_t)b, .loc_hot = -1 };

		d.loc = (int32_t)loc(p, d.vaddr);
		d.loc2 = (int32_t)loc(p, d.vaddr2);
		sb_profile_add_event(p, &d);
	}
	for (uint32_t t = 0; t < NT; t++)
		pt[t] = (struct sb_thread_time){ 100 + t, (uint64_t)(busy[t] * 1e6), 0, 0 };
	sb_profile_add_section(p, &sec);
	sb_profile_add_instance(p, &in);
	for (uint32_t e = 0; e < NEV; e++) {
		struct sb_vector v = { .instance = 0, .event = e, .nthreads = NT,
				       .counts = (uint64_t *)counts[e] };

		sb_profile_add_vector(p, &v);
	}
	return p;
}

static const struct sb_cause *top(const struct sb_profile *p, struct sb_causes *c)
{
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(!c->block_samples && !c->exact_counts, "from LBR edges: kinds determined");
	return ret == 0 && c->n ? &c->c[0] : NULL;
}

int main(void)
{
	/* threads 0..5 run the loop 100, 200, ... times: time follows */
	static const double busy_loop[NT] = { 10, 20.5, 29.8, 40.2, 50, 60.3 };
	static const uint64_t loop[NEV][NT] = {
		[EV_SKIP] = { 50, 40, 31, 20, 10, 1 },
		[EV_BACK] = { 100, 200, 300, 400, 500, 600 },
		[EV_RET] = { 7, 7, 7, 7, 7, 7 },
		[EV_LOAD] = { 400, 800, 1200, 1600, 2000, 2400 },   /* 4 cycles a load */
	};
	/* the same 300 iterations everywhere, loads slower in some threads */
	static const double busy_cache[NT] = { 10, 12, 30, 31, 60, 58 };
	static const uint64_t cache[NEV][NT] = {
		[EV_SKIP] = { 20, 21, 20, 19, 20, 21 },
		[EV_BACK] = { 300, 301, 299, 300, 300, 301 },
		[EV_RET] = { 7, 7, 7, 7, 7, 7 },
		[EV_LOAD] = { 1200, 1500, 9000, 9300, 30000, 29000 },
	};
	struct sb_profile *p = profile(busy_loop, loop);
	const struct sb_cause *x;
	struct sb_causes c;

	x = top(p, &c);
	CHECK(x && x->kind == SB_CAUSE_LOOP, "a longer loop is a loop cause (%u)", x ? x->kind : 0);
	CHECK(x && x->addr == 0x102c && x->loc >= 0 && p->locs[x->loc].line == 15,
	      "shown at the loop's branch: %#llx line %u", x ? (unsigned long long)x->addr : 0,
	      x && x->loc >= 0 ? p->locs[x->loc].line : 0);
	CHECK(x && x->score > 0.8, "strong: %.3f", x ? x->score : 0);
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].kind != SB_CAUSE_HW, "latency that executions explain is no cause");
	sb_causes_free(&c);
	sb_profile_free(p);

	p = profile(busy_cache, cache);
	x = top(p, &c);
	CHECK(x && x->kind == SB_CAUSE_HW, "slower loads, same flow: hardware (%u)",
	      x ? x->kind : 0);
	CHECK(x && x->addr == 0x1024 && x->loc >= 0 && p->locs[x->loc].line == 23,
	      "at the load: %#llx line %u", x ? (unsigned long long)x->addr : 0,
	      x && x->loc >= 0 ? p->locs[x->loc].line : 0);
	for (size_t i = 0; i < c.n; i++)
		CHECK(c.c[i].kind == SB_CAUSE_HW, "no control-flow cause from equal counts");
	sb_causes_free(&c);
	sb_profile_free(p);
	return CHECK_DONE("test_causes_hw");
}
