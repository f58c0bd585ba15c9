// SPDX-License-Identifier: MIT
/*
 * Sampled sharing (analysis/coherence/coherence_sampled.c): candidates,
 * watchpoint windows, the footprint classification, the evidence rule and
 * the rows, each case's expected values derived in its comment.  The PMU
 * path is fed a PEBS load fixture (tests/unit/hw/fixtures/loads.hex,
 * record 4: a remote HITM load of 0x7f0000003000) through the parser the
 * recorder uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "coherence/coherence.h"
#include "hw/lbr_pebs.h"
#include "profile/profile.h"

#define L 0x10000ull          /* a line */
#define MS 1000000ull

static struct sb_cosample *alloc_default(void)
{
	struct sb_cosample_opts o;
	char err[128];
	struct sb_cosample *s;

	sb_cosample_opts_default(&o);
	s = sb_cosample_alloc(&o, err, sizeof(err));
	CHECK(s != NULL, "alloc: %s", err);
	return s;
}

static void access(struct sb_cosample *s, uint32_t tid, uint64_t ts, uint64_t addr, bool store,
		   uint64_t pc)
{
	struct sb_cosample_access a = { .ts = ts, .pc = pc, .addr = addr, .tid = tid, .size = 8,
					.store = store };

	sb_cosample_access(s, &a);
}

/* The one reported or windowed line at addr, copied out; false if none. */
static bool line_at(struct sb_cosample *s, uint64_t addr, struct sb_cosample_line *out)
{
	struct sb_cosample_line *v;
	size_t n;
	bool found = false;

	CHECK(sb_cosample_lines(s, &v, &n) == 0, "lines");
	for (size_t i = 0; i < n; i++)
		if (v[i].addr == addr) {
			*out = v[i];
			found = true;
		}
	free(v);
	return found;
}

static void test_opts(void)
{
	struct sb_cosample_opts o;
	char err[128] = "";

	sb_cosample_opts_default(&o);
	o.line = 32;
	CHECK(!sb_cosample_alloc(&o, err, sizeof(err)) && strstr(err, "64-byte"), "line 32: %s",
	      err);
	sb_cosample_opts_default(&o);
	o.max_windows = 0;
	CHECK(!sb_cosample_alloc(&o, err, sizeof(err)) && strstr(err, "bad limits"),
	      "max_windows 0: %s", err);
}

/*
 * Packed counters: threads 1..4 each store their own word k-1 of L.  The
 * line is a candidate (4 threads, stores); the window watches the 4 stored
 * words in the 4 threads.  Each thread's hit writes its own word: two
 * windows with 4 writers each confirm it twice (in region) and decide it.
 * No byte is written by one and touched by another: false; 8 hits.
 */
static void test_false_sharing(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_probe p;
	struct sb_cosample_line l;
	struct sb_cosample_stats st;
	uint64_t t = 100 * MS;

	for (uint32_t k = 0; k < 4; k++)
		access(s, 1 + k, t + k, L + 8 * k, true, 0x401000);
	CHECK(sb_cosample_next(s, t + 10, &p), "a candidate");
	CHECK(p.line == L && p.nwords == 4 && p.ntids == 4, "line %llx words %u tids %u",
	      (unsigned long long)p.line, p.nwords, p.ntids);
	for (uint32_t k = 0; k < 4; k++)
		CHECK(p.words[k] >= L && p.words[k] < L + 32 && p.words[k] % 8 == 0,
		      "word %u at %llx", k, (unsigned long long)p.words[k]);
	CHECK(!sb_cosample_next(s, t + 20, &p), "one window at a time per line");
	for (uint32_t k = 0; k < 4; k++)
		sb_cosample_hit(s, L, 1 + k, t + 100 + k, L + 8 * k, 8, 0x401000, false);
	sb_cosample_window_end(s, L, 16, t + 10 * MS);
	CHECK(!sb_cosample_next(s, t + 15 * MS, &p), "cooldown: not again within 20 ms");
	CHECK(sb_cosample_next(s, t + 31 * MS, &p) && p.line == L, "again after the cooldown");
	for (uint32_t k = 0; k < 4; k++)
		sb_cosample_hit(s, L, 1 + k, t + 32 * MS, L + 8 * k, 8, 0x401000, false);
	sb_cosample_window_end(s, L, 16, t + 41 * MS);
	CHECK(!sb_cosample_next(s, t + 100 * MS, &p), "decided after 2 confirming windows");
	CHECK(line_at(s, L, &l), "the line");
	CHECK(l.reported && !l.true_sharing && l.bytes_true == 0 && l.decided,
	      "reported %d true %d decided %d", l.reported, l.true_sharing, l.decided);
	CHECK(l.hits == 8 && l.confirmations == 8 && l.windows == 2 && l.windows_confirmed == 2 &&
	      l.windows_in_region == 2 && l.nthreads == 4 && l.samples == 4 && l.touches == 4,
	      "hits %llu conf %llu windows %llu/%llu/%llu thr %u",
	      (unsigned long long)l.hits, (unsigned long long)l.confirmations,
	      (unsigned long long)l.windows, (unsigned long long)l.windows_confirmed,
	      (unsigned long long)l.windows_in_region, l.nthreads);
	CHECK(l.name_off == 0 && l.name_len == 32, "named by bytes %u+%u", l.name_off, l.name_len);
	CHECK(l.verdict_ns == t + 10 * MS, "verdict at the first window's end");
	sb_cosample_get_stats(s, &st);
	CHECK(st.candidates == 1 && st.windows == 2 && st.decided == 1 && st.reported == 1 &&
	      st.hits == 8 && st.hits_unmatched == 0 && st.first_verdict_ns == t + 10 * MS,
	      "stats");
	/* a hit after the window: late, unmatched */
	sb_cosample_hit(s, L, 1, t + 200 * MS, L, 8, 0x401000, false);
	sb_cosample_get_stats(s, &st);
	CHECK(st.hits_unmatched == 1, "late hit counted as unmatched");
	sb_cosample_free(s);
}

/*
 * A mutex-protected hist[8] (one line): in the first window thread 1
 * writes bucket 0 and thread 2 bucket 1 (a disjoint pair); in the second
 * thread 1 writes bucket 1.  Over the run bucket 1 was written by both:
 * true sharing, bytes 8..15 (footprint, not one pair).
 */
static void test_true_by_footprint(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_probe p;
	struct sb_cosample_line l;

	access(s, 1, MS, L, true, 0x402000);
	access(s, 2, MS, L + 8, true, 0x402000);
	CHECK(sb_cosample_next(s, 2 * MS, &p), "candidate");
	sb_cosample_hit(s, L, 1, 3 * MS, L, 8, 0x402000, false);
	sb_cosample_hit(s, L, 2, 3 * MS, L + 8, 8, 0x402000, false);
	sb_cosample_window_end(s, L, 8, 12 * MS);
	CHECK(line_at(s, L, &l) && !l.true_sharing, "one disjoint pair: false so far");
	CHECK(sb_cosample_next(s, 40 * MS, &p), "second window");
	sb_cosample_hit(s, L, 1, 41 * MS, L + 8, 8, 0x402000, false);
	sb_cosample_hit(s, L, 1, 41 * MS, L + 8, 8, 0x402000, false);
	sb_cosample_window_end(s, L, 8, 50 * MS);
	CHECK(line_at(s, L, &l) && l.true_sharing && l.bytes_true == 0xff00ull && l.reported,
	      "true by footprint: bytes %llx", (unsigned long long)l.bytes_true);
	CHECK(l.name_off == 8 && l.name_len == 8, "named by its true bytes");
	sb_cosample_free(s);
}

/*
 * A flag: thread 1 stores word 0, threads 2 and 3 were sampled loading it
 * long before.  Windows see thread 1's writes only: each confirms (another
 * thread touched the line) but none is in region by the window rule.
 * True sharing (bytes 0..7 written by 1, read by 2).
 */
static void test_flag_across(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_probe p;
	struct sb_cosample_line l;

	access(s, 2, MS, L, false, 0x403000);
	access(s, 3, MS, L, false, 0x403000);
	access(s, 1, 2 * MS, L, true, 0x403100);
	CHECK(sb_cosample_next(s, 50 * MS, &p) && p.ntids == 3, "candidate, 3 threads");
	sb_cosample_hit(s, L, 1, 51 * MS, L, 8, 0x403100, false);
	sb_cosample_window_end(s, L, 3, 60 * MS);
	CHECK(line_at(s, L, &l) && l.windows_confirmed == 1 && l.windows_in_region == 0 &&
	      !l.reported, "one hit: confirmed once, not yet reported (confirmations %llu)",
	      (unsigned long long)l.confirmations);
	CHECK(sb_cosample_next(s, 90 * MS, &p), "again");
	sb_cosample_hit(s, L, 1, 91 * MS, L, 8, 0x403100, false);
	sb_cosample_window_end(s, L, 3, 100 * MS);
	CHECK(line_at(s, L, &l) && l.reported && l.true_sharing && l.windows_in_region == 0 &&
	      l.decided, "reported, true, across");
	sb_cosample_free(s);
}

/* Padded counters and a read-only table: no candidate, nothing reported.
 * The padded stores come from one instruction run by 4 threads into one
 * region: a store site, whose lines get windows, in which only their own
 * thread writes: never confirmed, decided after 3 windows. */
static void test_padded_readonly(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_probe p;
	struct sb_cosample_stats st;
	uint64_t t = MS;
	int windows = 0;

	for (uint32_t k = 0; k < 4; k++)
		for (int i = 0; i < 5; i++)
			access(s, 1 + k, t + (uint64_t)i, 4 * L + 64 * k, true, 0x404000);
	for (uint32_t k = 0; k < 4; k++)
		access(s, 1 + k, t, 8 * L + 8 * k, false, 0x404100);   /* the table */
	while (windows < 100 && sb_cosample_next(s, t, &p)) {
		CHECK(p.line != 8 * L, "a read-only line is never probed");
		sb_cosample_hit(s, p.line, 1 + (uint32_t)((p.line - 4 * L) / 64), t + 1,
				p.line, 8, 0x404000, false);
		t += 30 * MS;
		sb_cosample_window_end(s, p.line, 4, t);
		windows++;
	}
	sb_cosample_get_stats(s, &st);
	CHECK(st.candidates == 0 && windows == 12 && st.decided == 4 && st.reported == 0,
	      "candidates %llu windows %d decided %llu reported %llu",
	      (unsigned long long)st.candidates, windows, (unsigned long long)st.decided,
	      (unsigned long long)st.reported);
	sb_cosample_free(s);
}

/* A lock word: only the runtime stores to it.  Confirmed, never reported,
 * counted as a sync line.  An unarmed window does not count. */
static void test_runtime_and_unarmed(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_probe p;
	struct sb_cosample_stats st;
	struct sb_cosample_access a = { .ts = MS, .pc = 0x7f0000001000, .addr = L, .tid = 1,
					.size = 4, .store = true, .runtime = true };
	struct sb_cosample_line l;

	sb_cosample_access(s, &a);
	a.tid = 2;
	sb_cosample_access(s, &a);
	CHECK(sb_cosample_next(s, 2 * MS, &p), "candidate");
	sb_cosample_window_end(s, L, 0, 3 * MS);
	sb_cosample_get_stats(s, &st);
	CHECK(st.windows == 0 && st.windows_unarmed == 1, "unarmed window not counted");
	for (int w = 0; w < 2; w++) {
		CHECK(sb_cosample_next(s, (uint64_t)(40 + 40 * w) * MS, &p), "window %d", w);
		sb_cosample_hit(s, L, 1, (uint64_t)(41 + 40 * w) * MS, L, 4, 0x7f0000001000, true);
		sb_cosample_hit(s, L, 2, (uint64_t)(41 + 40 * w) * MS, L, 4, 0x7f0000001000, true);
		sb_cosample_window_end(s, L, 8, (uint64_t)(50 + 40 * w) * MS);
	}
	CHECK(line_at(s, L, &l) && l.runtime_only && !l.reported && l.windows_confirmed == 2,
	      "runtime line confirmed, not reported");
	sb_cosample_get_stats(s, &st);
	CHECK(st.sync_lines == 1 && st.reported == 0, "a sync line");
	sb_cosample_free(s);
}

/* The PMU path: a HITM load (fixture) and another thread's plain load of
 * the same line make a candidate without any sampled store; the same two
 * loads without HITM do not. */
static void test_pmu_hitm(void)
{
	const char *slash = strrchr(__FILE__, '/');
	char path[512], line[512];
	unsigned char buf[4096];
	size_t n = 0, off = 0, k = 0;
	struct sb_hw_load ld;
	struct sb_cosample_access a;
	struct sb_cosample_probe p;
	FILE *f;

	/* the hardware parser's own fixtures, next to this folder */
	snprintf(path, sizeof(path), "%.*s/../hw/fixtures/loads.hex",
		 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
	f = fopen(path, "r");
	CHECK(f != NULL, "fixture %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		for (char *q = line, *end; *line != '#'; q = end) {
			unsigned long v = strtoul(q, &end, 16);

			if (end == q || n == sizeof(buf))
				break;
			buf[n++] = (unsigned char)v;
		}
	fclose(f);
	for (; off + sizeof(struct sb_rec_hdr) <= n && k < 3; k++)
		off += ((const struct sb_rec_hdr *)(buf + off))->size;
	CHECK(k == 3 && sb_hw_load_decode(buf + off, n - off, &ld) == 0 && ld.src.snoop_hitm &&
	      ld.addr == 0x7f0000003000ull, "the fixture's 4th load is a HITM one");
	for (int hitm = 1; hitm >= 0; hitm--) {
		struct sb_cosample *s = alloc_default();

		CHECK(sb_hw_load_access(&ld, &a) && a.hitm && a.addr == ld.addr && a.pc == ld.ip,
		      "load -> access");
		a.hitm = hitm;
		sb_cosample_access(s, &a);
		a.tid = ld.tid + 1;
		a.hitm = false;
		a.addr = ld.addr + 16;
		sb_cosample_access(s, &a);
		CHECK(sb_cosample_next(s, MS, &p) == (hitm == 1), "HITM %d: candidate %d", hitm,
		      hitm);
		sb_cosample_free(s);
	}
	ld.flags &= ~(uint32_t)SB_LOAD_HAVE_ADDR;
	CHECK(!sb_hw_load_access(&ld, &a), "a load without an address is no access");
}

/* The PMU's precise stores: two threads sampled storing from one
 * instruction into one line make it a candidate, with no cpu-clock
 * sample; one thread's stores do not.  Counted as PEBS stores. */
static void test_pmu_stores(void)
{
	for (int threads = 2; threads >= 1; threads--) {
		struct sb_cosample *s = alloc_default();
		struct sb_cosample_stats st;
		struct sb_cosample_probe p;
		struct sb_hw_load ld;
		struct sb_cosample_access a;

		memset(&ld, 0, sizeof(ld));
		ld.ip = 0x401400;
		ld.flags = SB_LOAD_HAVE_ADDR | SB_LOAD_STORE;
		ld.store = true;
		for (int i = 0; i < 4; i++) {
			ld.tid = 100 + (uint32_t)(i % threads);
			ld.ts = MS + (uint64_t)i * 1000;
			ld.addr = L + 8 * (uint64_t)(i % threads);
			CHECK(sb_hw_load_access(&ld, &a) && a.store && a.pmu && !a.hitm,
			      "store sample -> access");
			sb_cosample_access(s, &a);
		}
		sb_cosample_get_stats(s, &st);
		CHECK(st.pmu_stores == 4 && st.pmu_loads == 0, "PEBS stores counted: %llu",
		      (unsigned long long)st.pmu_stores);
		CHECK(sb_cosample_next(s, 2 * MS, &p) == (threads == 2) && (threads < 2 ||
		      p.line == L), "%d storing threads: candidate %d", threads, threads == 2);
		sb_cosample_free(s);
	}
}

/* Bounded memory: 16 lines at most; one-thread lines are forgotten for
 * room, a two-thread line survives the purges. */
static void test_bound(void)
{
	struct sb_cosample_opts o;
	struct sb_cosample_probe p;
	struct sb_cosample_stats st;
	char err[64];
	struct sb_cosample *s;

	sb_cosample_opts_default(&o);
	o.max_lines = 16;
	s = sb_cosample_alloc(&o, err, sizeof(err));
	CHECK(s != NULL, "alloc 16");
	if (!s)
		return;
	access(s, 1, MS, L, true, 0x405000);
	access(s, 2, MS, L + 8, false, 0x405100);
	for (uint64_t i = 1; i <= 200; i++)
		access(s, 3, MS, L + 64 * i, false, 0x405200);
	sb_cosample_get_stats(s, &st);
	CHECK(st.purges > 0 && st.accesses == 202, "purges %llu", (unsigned long long)st.purges);
	CHECK(sb_cosample_next(s, 2 * MS, &p) && p.line == L, "the shared line survived");
	sb_cosample_free(s);
}

/* Look-ahead accesses touch (evidence) but take no time (samples). */
static void test_ahead(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_cosample_access a = { .ts = MS, .pc = 0x406000, .addr = L, .tid = 1, .size = 8,
					.store = true, .ahead = true };
	struct sb_cosample_probe p;
	struct sb_cosample_line l;

	sb_cosample_access(s, &a);
	a.tid = 2;
	a.addr = L + 8;
	sb_cosample_access(s, &a);
	CHECK(sb_cosample_next(s, 2 * MS, &p), "candidate from look-ahead stores");
	sb_cosample_hit(s, L, 1, 3 * MS, L, 8, 0x406000, false);
	sb_cosample_hit(s, L, 2, 3 * MS, L + 8, 8, 0x406000, false);
	sb_cosample_window_end(s, L, 8, 10 * MS);
	CHECK(line_at(s, L, &l) && l.touches == 2 && l.samples == 0 && l.ref_samples == 0 &&
	      l.reported, "touches 2, no time");
	sb_cosample_free(s);
}

static void name_fn(void *ctx, uint64_t addr, uint32_t len, char *buf, size_t buflen)
{
	(void)ctx;
	snprintf(buf, buflen, "var\t[%llu..%u]", (unsigned long long)(addr - L) / 8,
		 (unsigned)((addr - L + len) / 8 - 1));
}

static long loc_fn(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc == 0x401000 ? 0 : -1;
}

/*
 * Rows and cost.  The packed line of test_false_sharing plus 16 more
 * samples of its store (20 samples of 0x401000, all the line's time), in
 * a profile with one section of 4 threads x 250 ms busy (1 s) and one
 * instance over [0, 1 s].  Period 10 ms: 20 x 10 ms / 1 s = 20%, times
 * 2 of 2 windows confirmed: cost 200000 ppm.  The hits of threads 1..4 in
 * the first window share the instance: in region by pairs.
 */
static void test_store(void)
{
	struct sb_cosample *s = alloc_default();
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time tt[4];
	struct sb_coherence_var *v;
	struct sb_cosample_probe pr;
	size_t n;
	uint64_t t = 100 * MS;

	for (uint32_t k = 0; k < 4; k++) {
		tt[k] = (struct sb_thread_time){ .tid = 1 + k, .busy_ns = 250 * MS };
		access(s, 1 + k, t, L + 8 * k, true, 0x401000);
		for (int i = 0; i < 4; i++)
			access(s, 1 + k, t + 1, L + 8 * k, true, 0x401000);
	}
	for (int w = 0; w < 2; w++) {
		CHECK(sb_cosample_next(s, t + (uint64_t)w * 40 * MS, &pr), "window %d", w);
		for (uint32_t k = 0; k < 4; k++)
			sb_cosample_hit(s, L, 1 + k, t + (uint64_t)w * 40 * MS + 1, L + 8 * k, 8,
					0x401000, false);
		sb_cosample_window_end(s, L, 16, t + (uint64_t)w * 40 * MS + 10 * MS);
	}
	p->nsections = 1;
	p->sections = calloc(1, sizeof(*p->sections));
	p->sections[0].nthreads = 4;
	p->sections[0].per_thread = calloc(4, sizeof(tt[0]));
	memcpy(p->sections[0].per_thread, tt, sizeof(tt));
	p->ninstances = 1;
	p->instances = calloc(1, sizeof(*p->instances));
	p->instances[0] = (struct sb_instance){ .section = 0, .start_ns = 0, .end_ns = 1000 * MS,
						.nthreads = 4 };
	p->instances[0].per_thread = calloc(4, sizeof(tt[0]));
	memcpy(p->instances[0].per_thread, tt, sizeof(tt));
	CHECK(sb_cosample_store(s, 10 * MS, loc_fn, name_fn, NULL, p) == 0, "store");
	CHECK(p->nsharing == 2 && p->sharing[0].kind == SB_SHARING_LINE &&
	      p->sharing[0].mode == SB_SHARING_SAMPLED && p->sharing[1].kind == SB_SHARING_REF,
	      "a line row and a ref row (%zu rows)", p->nsharing);
	if (p->nsharing == 2) {
		const struct sb_sharing *r = &p->sharing[0];

		CHECK(r->v[SB_SHV_COST_PPM] == 200000 && r->v[SB_SHV_SECTION] == 1 &&
		      r->v[SB_SHV_SAMPLES] == 20 && r->v[SB_SHV_CONFIRMS] == 8 &&
		      r->v[SB_SHV_WINDOWS] == 2 && r->v[SB_SHV_WINDOWS_CONFIRMED] == 2 &&
		      r->v[SB_SHV_FOOTPRINT_TRUE] == 0 && r->v[SB_SHV_PAIRS_IN_REGION] > 0 &&
		      r->refs[0] == 0 && !strcmp(r->name, "var\t[0..3]"),
		      "cost %llu ppm, section %llu, name %s",
		      (unsigned long long)r->v[SB_SHV_COST_PPM],
		      (unsigned long long)r->v[SB_SHV_SECTION], r->name);
		CHECK(p->sharing[1].loc == 0 && p->sharing[1].v[SB_SHV_STORES] == 28 &&
		      p->sharing[1].v[SB_SHV_LOADS] == 0, "ref: 20 sampled + 8 hit stores");
	}
	CHECK(sb_coherence_vars(p, SB_SHARING_SAMPLED, &v, &n) == 0 && n == 1, "one variable");
	if (n == 1)
		CHECK(!strcmp(v[0].name, "var") && !strcmp(v[0].parts, "[0..3]") &&
		      v[0].cost_ppm == 200000 && v[0].section == 0 && v[0].in_region &&
		      !v[0].true_sharing && v[0].samples == 20 && v[0].confirmations == 8,
		      "var %s %s cost %llu", v[0].name, v[0].parts,
		      (unsigned long long)v[0].cost_ppm);
	free(v);
	sb_profile_free(p);
	sb_cosample_free(s);
}

int main(void)
{
	test_opts();
	test_false_sharing();
	test_true_by_footprint();
	test_flag_across();
	test_pmu_stores();
	test_padded_readonly();
	test_runtime_and_unarmed();
	test_pmu_hitm();
	test_bound();
	test_ahead();
	test_store();
	return CHECK_DONE("test_coherence_sampled");
}
