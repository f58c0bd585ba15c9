// SPDX-License-Identifier: MIT
/*
 * PEBS samples as accesses (user/hw/lbr_pebs.c, hwagg.c): which loads
 * and stores make sharing candidates (sb_hw_load_access), and which loads
 * the private caches served (sb_hw_load_private: reuse probes' near
 * ones).  Records are built to the ABI here, with the kernel's data
 * source encodings: no PMU exists on the machines this runs on.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "hw/hwagg.h"
#include "hw/lbr_pebs.h"
#include "coherence/coherence.h"

/* PEBS samples as sharing accesses (sb_hw_load_access): which loads say
 * a line moved between caches, and the store sampler's records. */
static struct sb_rec_load mem_rec(uint64_t addr, uint64_t src, uint32_t flags)
{
	struct sb_rec_load r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SB_REC_LOAD;
	r.hdr.size = sizeof(r);
	r.hdr.tid = 77;
	r.hdr.ts = 1000;
	r.ip = 0x401300;
	r.addr = addr;
	r.data_src = src;
	r.flags = flags;
	return r;
}

/* Which PEBS loads the private caches served (reuse probes' near ones). */
static void test_load_private(void)
{
	const uint32_t src = SB_LOAD_HAVE_ADDR | SB_LOAD_HAVE_SRC;
	static const struct {
		const char *what;
		uint64_t src;
		uint32_t flags;
		int want;
	} cases[] = {
		{ "L1 hit", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L1) | PERF_MEM_S(LVL, HIT), 0, 1 },
		{ "fill buffer", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, LFB) | PERF_MEM_S(LVL, HIT), 0,
		  1 },
		{ "L2 hit", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L2) | PERF_MEM_S(LVL, HIT), 0, 1 },
		{ "L2 by level number (AMD)", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVLNUM, L2), 0, 1 },
		{ "L3 hit", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L3) | PERF_MEM_S(LVL, HIT), 0, 0 },
		{ "DRAM", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, LOC_RAM) | PERF_MEM_S(LVL, HIT), 0,
		  0 },
		{ "L2 miss", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L2) | PERF_MEM_S(LVL, MISS), 0,
		  0 },
		{ "no data source", 0, SB_LOAD_HAVE_ADDR, -1 },
		{ "a store", PERF_MEM_S(OP, STORE) | PERF_MEM_S(LVL, L1) | PERF_MEM_S(LVL, HIT),
		  SB_LOAD_STORE, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sb_rec_load r = mem_rec(0x7f0000005000, cases[i].src,
					       cases[i].flags ? cases[i].flags : src);
		struct sb_hw_load l;

		if (cases[i].flags == SB_LOAD_STORE)
			r.flags = src | SB_LOAD_STORE;
		CHECK(sb_hw_load_decode(&r, sizeof(r), &l) == 0 &&
		      sb_hw_load_private(&l) == cases[i].want, "%s: %d", cases[i].what,
		      sb_hw_load_private(&l));
	}
}

static void test_mem_access(struct sb_hwagg *a)
{
	const uint32_t src = SB_LOAD_HAVE_ADDR | SB_LOAD_HAVE_SRC;
	static const struct {
		const char *what;
		uint64_t src;
		uint32_t flags;
		bool ok, store, moved;
	} cases[] = {
		{ "HITM load", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L3) | PERF_MEM_S(LVL, HIT) |
		  PERF_MEM_S(SNOOP, HITM), src, true, false, true },
		{ "another socket's cache", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, REM_CCE1) |
		  PERF_MEM_S(LVL, HIT) | PERF_MEM_S(SNOOP, HIT), src, true, false, true },
		{ "clean L3 hit", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, L3) | PERF_MEM_S(LVL, HIT) |
		  PERF_MEM_S(SNOOP, HIT), src, true, false, false },
		{ "no data source", 0, SB_LOAD_HAVE_ADDR, true, false, false },
		{ "store sampler", 0, SB_LOAD_HAVE_ADDR | SB_LOAD_STORE, true, true, false },
		{ "store by data source", PERF_MEM_S(OP, STORE) | PERF_MEM_S(LVL, L1) |
		  PERF_MEM_S(LVL, HIT), src, true, true, false },
		{ "no address", PERF_MEM_S(OP, LOAD) | PERF_MEM_S(SNOOP, HITM), SB_LOAD_HAVE_SRC,
		  false, false, false },
	};
	struct sb_hwagg_stats before, after;

	sb_hwagg_get_stats(a, &before);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sb_rec_load r = mem_rec(0x7f0000005008 + 64 * i, cases[i].src, cases[i].flags);
		struct sb_cosample_access c;
		struct sb_hw_load l;
		bool ok;

		CHECK(sb_hw_load_decode(&r, sizeof(r), &l) == 0, "%s: decoded", cases[i].what);
		ok = sb_hw_load_access(&l, &c);
		CHECK(ok == cases[i].ok, "%s: access %d", cases[i].what, ok);
		if (ok)
			CHECK(c.store == cases[i].store && c.hitm == cases[i].moved && c.pmu &&
			      c.ahead && c.tid == 77 && c.pc == 0x401300 && c.addr == r.addr,
			      "%s: store %d moved %d", cases[i].what, c.store, c.hitm);
		CHECK(sb_hwagg_record(a, NULL, &r, sizeof(r)) == 0, "%s: aggregated",
		      cases[i].what);
	}
	sb_hwagg_get_stats(a, &after);
	/* stores are sharing's evidence, not LIME's load vector */
	CHECK(after.stores - before.stores == 2 && after.loads - before.loads == 5,
	      "stores %llu, loads %llu", (unsigned long long)(after.stores - before.stores),
	      (unsigned long long)(after.loads - before.loads));
}

int main(void)
{
	struct sb_hwagg *a = sb_hwagg_alloc();

	if (!a)
		return 2;
	test_mem_access(a);
	test_load_private();
	sb_hwagg_free(a);
	return CHECK_DONE("test_pebs_access");
}
