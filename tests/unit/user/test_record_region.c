// SPDX-License-Identifier: MIT
/*
 * user/record/record_region.c: --region functions' sums from constructed
 * entry/return records with known counters: a call's share is its
 * return's counters less its entry's; a recursive call is its outer
 * one's, its returns matched by the stack pointer (lost inner returns
 * cost nothing, a lost outer one is counted); threads interleave; a
 * return without its entry, counters read at one end only (or a failed
 * read), or going backwards are counted apart, never summed; an
 * unreturned call is open.  And the whole run's batches, and the spans
 * of the outermost calls kept for `record --chip`'s probes: one per
 * closed outermost call, none for a lost or inner one.
 */
#include <string.h>

#include "check.h"
#include "chip/chip_probes.h"
#include "record/record_region.h"

/* A record of region mark: tid, time, counters v (accesses = 10 v,
 * depth[i] = v + i) or none (v < 0), at call depth `level` (the stack
 * pointer: 0x10000 less 64 a level; a return 8 above its entry). */
static struct sb_rec_region markd(uint32_t tid, uint64_t ts, int enter, long v, int level)
{
	struct sb_rec_region r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SB_REC_REGION;
	r.hdr.size = sizeof(r);
	r.hdr.tid = tid;
	r.hdr.ts = ts;
	r.enter = (uint16_t)enter;
	r.sp = 0x10000 - 64 * (uint64_t)level + (enter ? 0 : 8);
	if (v >= 0) {
		r.counters = 1;
		for (int i = 0; i < SB_CHIP_NDEPTH; i++)
			r.depth[i] = (uint64_t)v + (uint64_t)i;
		r.accesses = 10 * (uint64_t)v;
	}
	return r;
}

static struct sb_rec_region mark(uint32_t tid, uint64_t ts, int enter, long v)
{
	return markd(tid, ts, enter, v, 0);
}

static void put(struct sb_regions *g, uint32_t idx, struct sb_rec_region r)
{
	CHECK(sb_regions_mark(g, idx, &r) == 0, "mark");
}

static void calls(void)
{
	struct sb_regions g;
	const struct sb_region_total *t = &g.tot[3];

	CHECK(sb_regions_init(&g) == 0, "init");
	g.keep_spans = true;
	/* thread 7: a call from counters 100 to 150, with a recursive call
	 * inside (its own marks change nothing) */
	put(&g, 3, mark(7, 1000, 1, 100));
	put(&g, 3, markd(7, 1100, 1, 120, 1));
	put(&g, 3, markd(7, 1200, 0, 130, 1));
	/* thread 8 interleaved: 40 to 45 */
	put(&g, 3, mark(8, 1250, 1, 40));
	put(&g, 3, mark(7, 1500, 0, 150));
	put(&g, 3, mark(8, 1600, 0, 45));
	CHECK(t->calls == 2 && t->counted == 2, "calls %llu counted %llu",
	      (unsigned long long)t->calls, (unsigned long long)t->counted);
	CHECK(t->busy_ns == 500 + 350, "busy %llu", (unsigned long long)t->busy_ns);
	CHECK(t->counts[0] == 50 + 5 && t->counts[SB_CHIP_NDEPTH - 1] == 55 &&
	      t->counts[SB_CHIP_NDEPTH] == 10 * 55, "counts %llu %llu",
	      (unsigned long long)t->counts[0], (unsigned long long)t->counts[SB_CHIP_NDEPTH]);
	CHECK(t->threads == 2, "threads %u", t->threads);
	/* thread 7 again: one more call, not one more thread */
	put(&g, 3, mark(7, 2000, 1, 150));
	put(&g, 3, mark(7, 2100, 0, 160));
	CHECK(t->threads == 2 && t->calls == 3 && t->counts[SB_CHIP_NDEPTH] == 10 * 65,
	      "third call");
	/* deep recursion whose inner returns were lost (the kernel's 64
	 * uretprobes a thread): the outer return still closes the call */
	put(&g, 3, mark(7, 2200, 1, 160));
	for (int lv = 1; lv < 70; lv++)
		put(&g, 3, markd(7, 2200 + (uint64_t)lv, 1, 160 + lv, lv));
	put(&g, 3, markd(7, 2300, 0, 240, 3));
	put(&g, 3, mark(7, 2400, 0, 250));
	CHECK(t->calls == 4 && t->counts[SB_CHIP_NDEPTH] == 10 * 155 && !t->lost,
	      "lost inner returns: %llu calls", (unsigned long long)t->calls);
	/* an outer return lost (longjmp): the next call says so, as does a
	 * return past the frame */
	put(&g, 3, mark(7, 2500, 1, 250));
	put(&g, 3, mark(7, 2600, 1, 260));
	put(&g, 3, mark(7, 2700, 0, 270));
	put(&g, 3, markd(7, 2800, 1, 270, 2));
	put(&g, 3, markd(7, 2900, 0, 280, 0));
	CHECK(t->calls == 5 && t->lost == 2 && t->counts[SB_CHIP_NDEPTH] == 10 * 165 &&
	      sb_regions_open(&g, 3) == 0, "lost outer returns: %llu calls, %llu lost",
	      (unsigned long long)t->calls, (unsigned long long)t->lost);
	{
		/* the five closed calls' spans, in the order they closed */
		static const struct { uint32_t tid; uint64_t start, end; } want[5] = {
			{ 7, 1000, 1500 }, { 8, 1250, 1600 }, { 7, 2000, 2100 },
			{ 7, 2200, 2400 }, { 7, 2600, 2700 },
		};
		bool same = g.nspans == 5;

		for (size_t i = 0; same && i < 5; i++)
			same = g.spans[i].tid == want[i].tid && g.spans[i].region == 3 &&
			       g.spans[i].start == want[i].start && g.spans[i].end == want[i].end;
		CHECK(same && !g.spans_dropped, "spans of the closed outermost calls: %zu",
		      g.nspans);
	}
	/* counters at one end only; going backwards: a call, not summed */
	put(&g, 3, mark(9, 3000, 1, -1));
	put(&g, 3, mark(9, 3100, 0, 5));   /* a profile made inside: from 0 */
	put(&g, 3, mark(9, 3200, 1, 70));
	put(&g, 3, mark(9, 3300, 0, -1));
	put(&g, 3, mark(9, 3400, 1, 90));
	put(&g, 3, mark(9, 3500, 0, 80));
	/* and a read that failed at the entry (2): unread, not from 0 */
	{
		struct sb_rec_region e = mark(9, 3600, 1, -1);

		e.counters = 2;
		put(&g, 3, e);
		put(&g, 3, mark(9, 3700, 0, 95));
	}
	CHECK(t->calls == 9 && t->counted == 6 && t->unread == 3, "unread %llu counted %llu",
	      (unsigned long long)t->unread, (unsigned long long)t->counted);
	CHECK(t->counts[SB_CHIP_NDEPTH] == 10 * 165 + 50, "from 0: %llu",
	      (unsigned long long)t->counts[SB_CHIP_NDEPTH]);
	/* a plain program: times only */
	put(&g, 1, mark(7, 0, 1, -1));
	put(&g, 1, mark(7, 90, 0, -1));
	CHECK(g.tot[1].calls == 1 && g.tot[1].busy_ns == 90 && !g.tot[1].unread &&
	      !g.tot[1].counted && g.tot[1].uncounted == 1, "times only");
	/* a return with no entry (attached inside the call); an open call;
	 * a region index out of range */
	put(&g, 5, mark(11, 10, 0, 3));
	put(&g, 5, mark(12, 10, 1, 3));
	put(&g, SB_REGION_MAX, mark(12, 10, 1, 3));
	CHECK(g.tot[5].unmatched == 1 && !g.tot[5].calls && sb_regions_open(&g, 5) == 1 &&
	      sb_regions_open(&g, 3) == 0 && g.bad == 1, "unmatched, open, bad");
	sb_regions_fini(&g);
}

static void run(void)
{
	struct sb_regions g;
	struct sb_chip_batch b;

	CHECK(sb_regions_init(&g) == 0, "init");
	memset(&b, 0, sizeof(b));
	b.accesses = 100;
	b.depth[0] = 60;
	b.depth[SB_CHIP_NDEPTH - 1] = 40;
	CHECK(!sb_regions_batch(&g, 1, &b) && !sb_regions_batch(&g, 2, &b) &&
	      !sb_regions_batch(&g, 1, &b), "batches");
	CHECK(g.run.counts[SB_CHIP_NDEPTH] == 300 && g.run.counts[0] == 180 &&
	      g.run.counts[SB_CHIP_NDEPTH - 1] == 120 && g.run.threads == 2,
	      "run: %llu accesses, %u threads", (unsigned long long)g.run.counts[SB_CHIP_NDEPTH],
	      g.run.threads);
	sb_regions_fini(&g);
}

int main(void)
{
	calls();
	run();
	return CHECK_DONE("test_record_region");
}
