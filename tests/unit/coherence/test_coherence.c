// SPDX-License-Identifier: MIT
/*
 * test_coherence: the ccSIM simulator against counts worked out by hand
 * (each case's comment derives them), through the access API and through
 * trace files the way `scalebpf cc --trace-mem` writes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "coherence/coherence.h"
#include "sbpf_trace.h"

#define X 0x10000ull        /* a line-aligned variable */
#define PC_LOAD 0x401000ull
#define PC_STORE 0x401008ull

static struct sb_coherence_sim *sim(uint32_t n, enum sb_coherence_mode mode)
{
	struct sb_coherence_opts o;
	char err[256];
	struct sb_coherence_sim *s;

	sb_coherence_opts_default(&o);
	o.mode = mode;
	s = sb_coherence_sim_alloc(n, &o, err, sizeof(err));
	CHECK(s, "alloc: %s", err);
	return s;
}

static void totals(struct sb_coherence_sim *s, struct sb_coherence_counts *c,
		   struct sb_coherence_result *r)
{
	CHECK(sb_coherence_sim_result(s, r) == 0, "result");
	sb_coherence_result_total(r, c);
}

/* Packed counters, piped: thread 0's 100 increments of bytes 0-7 run
 * alone (one cold miss); thread 1's first load shares the line, its
 * store of bytes 8-15 invalidates thread 0's copy, whose bytes it never
 * touched: one false, in-region invalidation, and no coherence miss
 * (thread 0 is done). */
static void packed_piped(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_PIPED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	for (uint32_t t = 0; t < 2; t++)
		for (int i = 0; i < 100; i++) {
			sb_coherence_sim_access(s, t, X + 8 * t, 8, false, PC_LOAD);
			sb_coherence_sim_access(s, t, X + 8 * t, 8, true, PC_STORE);
		}
	totals(s, &c, &r);
	CHECK(c.misses == 2 && c.inv.in_false == 1 && sb_coherence_inv_total(&c.inv) == 1,
	      "misses %lu, inv in_false %lu of %lu", (unsigned long)c.misses,
	      (unsigned long)c.inv.in_false, (unsigned long)sb_coherence_inv_total(&c.inv));
	CHECK(c.coh_true + c.coh_false == 0, "no coherence miss");
	CHECK(r.nlines == 1 && r.lines[0].addr == X && r.lines[0].nthreads == 2 &&
	      r.lines[0].bytes_true == 0 && !r.lines[0].footprint_true,
	      "one line, two threads, no true bytes");
	CHECK(r.ninvalidators == 1 && r.refs[r.invalidators[0].victim].pc == PC_LOAD &&
	      r.refs[r.invalidators[0].store].pc == PC_STORE && r.invalidators[0].thread == 1,
	      "thread 0's load invalidated by thread 1's store");
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* The same accesses interleaved one per thread: iteration 1 has two cold
 * misses, then the stores ping-pong: every store after the first finds the
 * line lost (a coherence miss, false: the other thread wrote other bytes)
 * and invalidates the other copy.  K iterations: 2K invalidations, 2K - 1
 * coherence misses, all false. */
static void packed_interleaved(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_INTERLEAVED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;
	const int K = 100;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	for (int i = 0; i < K; i++) {
		for (uint32_t t = 0; t < 2; t++)
			sb_coherence_sim_access(s, t, X + 8 * t, 8, false, PC_LOAD);
		for (uint32_t t = 0; t < 2; t++)
			sb_coherence_sim_access(s, t, X + 8 * t, 8, true, PC_STORE);
	}
	totals(s, &c, &r);
	CHECK(c.inv.in_false == 2 * K && sb_coherence_inv_total(&c.inv) == 2 * K,
	      "inv %lu", (unsigned long)sb_coherence_inv_total(&c.inv));
	CHECK(c.coh_false == 2 * K - 1 && c.coh_true == 0, "coh false %lu true %lu",
	      (unsigned long)c.coh_false, (unsigned long)c.coh_true);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* Padded counters: a line each, never an invalidation. */
static void padded(void)
{
	struct sb_coherence_sim *s = sim(4, SB_COHERENCE_INTERLEAVED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	for (int i = 0; i < 100; i++)
		for (uint32_t t = 0; t < 4; t++)
			sb_coherence_sim_access(s, t, X + 64 * t, 8, true, PC_STORE);
	totals(s, &c, &r);
	CHECK(sb_coherence_inv_total(&c.inv) == 0 && c.misses == 4 && r.nlines == 0,
	      "inv %lu misses %lu lines %zu", (unsigned long)sb_coherence_inv_total(&c.inv),
	      (unsigned long)c.misses, r.nlines);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* A flag read in even regions by thread 1 and written in odd ones by
 * thread 0, N rounds: each store invalidates thread 1's copy, last read in
 * the region before (true, across region): N invalidations; each read
 * after the first is a coherence miss on the written bytes: N - 1 true. */
static void across_regions(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_PIPED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;
	const int N = 20;

	if (!s)
		return;
	for (int k = 0; k < N; k++) {
		sb_coherence_sim_region(s, 2 * (uint64_t)k);
		sb_coherence_sim_access(s, 1, X, 4, false, PC_LOAD);
		sb_coherence_sim_region(s, 2 * (uint64_t)k + 1);
		sb_coherence_sim_access(s, 0, X, 4, true, PC_STORE);
	}
	totals(s, &c, &r);
	CHECK(c.inv.across_true == N && sb_coherence_inv_total(&c.inv) == N,
	      "across true %lu of %lu", (unsigned long)c.inv.across_true,
	      (unsigned long)sb_coherence_inv_total(&c.inv));
	CHECK(c.coh_true == N - 1 && c.coh_false == 0, "coh true %lu false %lu",
	      (unsigned long)c.coh_true, (unsigned long)c.coh_false);
	CHECK(r.regions == 2 * N, "regions %lu", (unsigned long)r.regions);
	CHECK(r.nlines == 1 && r.lines[0].bytes_true == 0xf, "true bytes %#lx",
	      r.nlines ? (unsigned long)r.lines[0].bytes_true : 0ul);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* Two threads store one word in one region without a lock: a possible
 * data race, both stores named; under a lock, lock-protected instead. */
static void race_or_locked(bool locked)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_PIPED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	for (uint32_t t = 0; t < 2; t++) {
		if (locked)
			sb_coherence_sim_lock(s, t, +1);
		sb_coherence_sim_access(s, t, X, 8, true, PC_STORE + 0x100 * t);
		if (locked)
			sb_coherence_sim_lock(s, t, -1);
	}
	totals(s, &c, &r);
	CHECK(c.inv.in_true == 1 && c.inv.in_true_locked == locked &&
	      c.inv.in_true_race == !locked, "locked %d: in_true %lu locked %lu race %lu",
	      locked, (unsigned long)c.inv.in_true, (unsigned long)c.inv.in_true_locked,
	      (unsigned long)c.inv.in_true_race);
	if (!locked)
		CHECK(r.nraces == 1 && r.races[0].count == 1 &&
		      r.refs[r.races[0].a].pc + r.refs[r.races[0].b].pc == 2 * PC_STORE + 0x100,
		      "the race names both stores");
	else
		CHECK(r.nraces == 0, "no race under a lock");
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* Two threads take turns storing one bucket each of hist[8], never the
 * bucket the other just touched: every invalidation is false by the
 * pair of accesses, yet both write all eight buckets over the run: the
 * line is true sharing by footprint (the issue's mutex-protected array). */
static void buckets_footprint(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_INTERLEAVED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	for (uint64_t i = 0; i < 16; i++)
		for (uint32_t t = 0; t < 2; t++)
			sb_coherence_sim_access(s, t, X + 8 * ((i + 4 * t) % 8), 8, true, PC_STORE);
	totals(s, &c, &r);
	CHECK(c.inv.in_false == sb_coherence_inv_total(&c.inv) && c.inv.in_false > 16,
	      "all %lu invalidations false by their pairs", (unsigned long)c.inv.in_false);
	CHECK(r.nlines == 1 && r.lines[0].footprint_true && r.lines[0].bytes_true == ~0ull,
	      "true sharing by footprint, all 64 bytes: %d %#lx",
	      r.nlines ? r.lines[0].footprint_true : -1,
	      r.nlines ? (unsigned long)r.lines[0].bytes_true : 0ul);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* Thread 0 writes bytes 8-15, thread 1 reads them, thread 0 writes
 * bytes 16-23: the invalidation's pair is disjoint, but thread 1 read
 * what thread 0 wrote during the same stay: true sharing by footprint,
 * named by byte 8 (bytes 0-7 are nobody's: padding or a neighbour). */
static void storer_footprint(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_PIPED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	sb_coherence_sim_access(s, 0, X + 8, 8, true, PC_STORE);
	sb_coherence_sim_access(s, 1, X + 8, 8, false, PC_LOAD);
	sb_coherence_sim_access(s, 0, X + 16, 8, true, PC_STORE);
	totals(s, &c, &r);
	CHECK(c.inv.in_false == 1 && sb_coherence_inv_total(&c.inv) == 1, "one false pair");
	CHECK(r.nlines == 1 && r.lines[0].footprint_true && r.lines[0].bytes_true == 0xff00 &&
	      r.lines[0].name_off == 8, "true by footprint, bytes 8-15, named at 8: %d %#lx %u",
	      r.nlines ? r.lines[0].footprint_true : -1,
	      r.nlines ? (unsigned long)r.lines[0].bytes_true : 0ul,
	      r.nlines ? r.lines[0].name_off : 0u);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

/* Capacity: thread 0 reads X, then 17 lines of X's L2 set (16 ways)
 * evict it; thread 1's store then invalidates nothing, and thread 0's
 * next read is a plain miss, not a coherence miss. */
static void eviction(void)
{
	struct sb_coherence_sim *s = sim(2, SB_COHERENCE_PIPED);
	struct sb_coherence_counts c;
	struct sb_coherence_result r;
	uint64_t set_stride = (1 << 20) / 16;  /* L2 bytes per way */

	if (!s)
		return;
	sb_coherence_sim_region(s, 0);
	sb_coherence_sim_access(s, 0, X, 8, false, PC_LOAD);
	for (uint64_t i = 1; i <= 17; i++)
		sb_coherence_sim_access(s, 0, X + i * set_stride, 8, false, PC_LOAD);
	sb_coherence_sim_access(s, 1, X, 8, true, PC_STORE);
	sb_coherence_sim_access(s, 0, X, 8, false, PC_LOAD);
	totals(s, &c, &r);
	CHECK(sb_coherence_inv_total(&c.inv) == 0 && c.coh_true + c.coh_false == 0 &&
	      c.misses == 20, "inv %lu coh %lu misses %lu",
	      (unsigned long)sb_coherence_inv_total(&c.inv),
	      (unsigned long)(c.coh_true + c.coh_false), (unsigned long)c.misses);
	sb_coherence_result_free(&r);
	sb_coherence_sim_free(s);
}

static void bad_options(void)
{
	struct sb_coherence_opts o;
	char err[256] = "";

	sb_coherence_opts_default(&o);
	o.line = 48;
	CHECK(sb_coherence_opts_check(&o, err, sizeof(err)) < 0 && strstr(err, "power of two"),
	      "line 48: %s", err);
	sb_coherence_opts_default(&o);
	o.l2.size = 3 << 20;
	CHECK(sb_coherence_opts_check(&o, err, sizeof(err)) < 0 && strstr(err, "L2"),
	      "3 MiB 16-way: %s", err);
	sb_coherence_opts_default(&o);
	CHECK(!sb_coherence_sim_alloc(0, &o, err, sizeof(err)) && strstr(err, "threads"),
	      "0 threads: %s", err);
}

/* ---- through trace files ---- */

struct tw {
	FILE *f;
	uint64_t now;
};

static void put(struct tw *w, uint32_t kind, uint64_t addr, uint64_t pc, uint32_t size)
{
	struct sb_trace_rec r = { .addr = addr, .pc = pc, .kind = kind, .size = size };

	fwrite(&r, sizeof(r), 1, w->f);
}

static void open_tw_pid(struct tw *w, const char *dir, uint32_t pid, uint32_t tid)
{
	struct sb_trace_hdr h = { .magic = SB_TRACE_MAGIC, .pid = pid, .tid = tid };
	char path[512];

	snprintf(path, sizeof(path), "%s/trace.%u", dir, tid);
	w->f = fopen(path, "wb");
	CHECK(w->f, "%s", path);
	fwrite(&h, sizeof(h), 1, w->f);
}

static void open_tw(struct tw *w, const char *dir, uint32_t tid)
{
	open_tw_pid(w, dir, 1, tid);
}

/*
 * Two threads, K critical sections each (lock, load x, store x, unlock),
 * then a barrier.  Piped: thread 0's K, then thread 1's: one true,
 * in-region, lock-protected invalidation.  Interleaved: the lock changes
 * hands at every section (a release ends the turn), so every section
 * after the first invalidates the other copy (2K - 1) and every one after
 * the second starts with a coherence miss on the bytes just written
 * (2K - 2, true).  After the barrier each thread reads x once (region 1).
 */
static void traces_critical(enum sb_coherence_mode mode)
{
	char dir[] = "/tmp/sb_test_coh.XXXXXX";
	struct sb_coherence_opts o;
	struct sb_coherence_result r;
	struct sb_coherence_trace_info info;
	struct sb_coherence_counts c;
	char err[512] = "", path[512];
	const int K = 50;
	const uint64_t lock = 0x7000;
	int ret;

	CHECK(mkdtemp(dir), "mkdtemp");
	for (uint32_t t = 0; t < 2; t++) {
		struct tw w;

		open_tw(&w, dir, 100 + t);
		if (!w.f)
			return;
		put(&w, SB_TRACE_RESUME, 1000 + t, 0, 0);
		for (int i = 0; i < K; i++) {
			put(&w, SB_TRACE_ACQUIRE, lock, 0x400100, 0);
			put(&w, SB_TRACE_LOAD, X, PC_LOAD, 8);
			put(&w, SB_TRACE_STORE, X, PC_STORE, 8);
			put(&w, SB_TRACE_RELEASE, lock, 0x400200, 0);
		}
		/* arrive at the barrier (object 0xba7), leave it */
		put(&w, SB_TRACE_SYNC, 5000 + t, 0xba7, SB_TSYNC_BARRIER << 8);
		put(&w, SB_TRACE_RESUME, 6000 + t, 0, 0);
		put(&w, SB_TRACE_LOAD, X, PC_LOAD + 0x40, 8);
		put(&w, SB_TRACE_SYNC, 9000 + t, 0, 1 | SB_TSYNC_THREAD_END << 8);
		fclose(w.f);
	}
	{
		/* An earlier run's thread (another pid) in the same directory:
		 * its stores would change every count below. */
		struct tw w;

		open_tw_pid(&w, dir, 2, 99);
		if (!w.f)
			return;
		for (int i = 0; i < K; i++)
			put(&w, SB_TRACE_STORE, X, 0x400300, 8);
		fclose(w.f);
		/* and a file cut before its header: skipped, counted */
		snprintf(path, sizeof(path), "%s/trace.98", dir);
		w.f = fopen(path, "wb");
		if (w.f) {
			fputs("SBTR", w.f);
			fclose(w.f);
		}
	}
	sb_coherence_opts_default(&o);
	o.mode = mode;
	ret = sb_coherence_trace_run(dir, 1, &o, &r, &info, err, sizeof(err));
	CHECK(ret == 0, "trace run: %s", err);
	if (ret)
		return;
	sb_coherence_result_total(&r, &c);
	CHECK(info.nthreads == 2 && info.tids[0] == 100 && info.tids[1] == 101 &&
	      info.files_other == 1 && info.files_bad == 1 &&
	      info.regions == 2 && info.accesses == 4 * (uint64_t)K + 2 && info.resumes &&
	      info.locks == 2 * (uint64_t)K && info.locks_forced == 0,
	      "info: %u threads, %lu regions, %lu accesses, %lu locks, %lu forced", info.nthreads,
	      (unsigned long)info.regions, (unsigned long)info.accesses,
	      (unsigned long)info.locks, (unsigned long)info.locks_forced);
	if (mode == SB_COHERENCE_PIPED) {
		/* region 1: thread 0 reads what thread 1 wrote last */
		CHECK(c.inv.in_true_locked == 1 && sb_coherence_inv_total(&c.inv) == 1 &&
		      c.coh_true == 1 && c.coh_false == 0, "piped: locked %lu of %lu, coh %lu",
		      (unsigned long)c.inv.in_true_locked,
		      (unsigned long)sb_coherence_inv_total(&c.inv),
		      (unsigned long)(c.coh_true + c.coh_false));
	} else {
		CHECK(c.inv.in_true_locked == 2 * (uint64_t)K - 1 &&
		      sb_coherence_inv_total(&c.inv) == 2 * (uint64_t)K - 1,
		      "interleaved: locked %lu of %lu", (unsigned long)c.inv.in_true_locked,
		      (unsigned long)sb_coherence_inv_total(&c.inv));
		/* region 1: the thread that did not write last misses, true */
		CHECK(c.coh_true == 2 * (uint64_t)K - 2 + 1 && c.coh_false == 0,
		      "interleaved: coh true %lu false %lu", (unsigned long)c.coh_true,
		      (unsigned long)c.coh_false);
	}
	sb_coherence_result_free(&r);
	sb_coherence_trace_info_free(&info);
	for (uint32_t t = 0; t < 4; t++) {
		snprintf(path, sizeof(path), "%s/trace.%u", dir, t < 2 ? 100 + t : 96 + t);
		unlink(path);
	}
	rmdir(dir);
}

static void traces_bad_input(void)
{
	char dir[] = "/tmp/sb_test_coh.XXXXXX", path[512], err[512] = "";
	struct sb_coherence_opts o;
	struct sb_coherence_result r;
	struct sb_coherence_trace_info info;
	FILE *f;

	sb_coherence_opts_default(&o);
	CHECK(sb_coherence_trace_run("/no/such/dir", 0, &o, &r, &info, err, sizeof(err)) < 0 &&
	      strstr(err, "/no/such/dir"), "missing dir: %s", err);
	CHECK(mkdtemp(dir), "mkdtemp");
	CHECK(sb_coherence_trace_run(dir, 0, &o, &r, &info, err, sizeof(err)) < 0 &&
	      strstr(err, "--trace-mem"), "empty dir: %s", err);
	snprintf(path, sizeof(path), "%s/trace.7", dir);
	f = fopen(path, "wb");
	if (f) {
		fputs("not a trace at all, no magic", f);
		fclose(f);
	}
	CHECK(sb_coherence_trace_run(dir, 0, &o, &r, &info, err, sizeof(err)) < 0 &&
	      strstr(err, "with a trace header") && info.files_bad == 1,
	      "only a file without a header: %s", err);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	packed_piped();
	packed_interleaved();
	padded();
	across_regions();
	race_or_locked(false);
	race_or_locked(true);
	buckets_footprint();
	storer_footprint();
	eviction();
	bad_options();
	traces_critical(SB_COHERENCE_PIPED);
	traces_critical(SB_COHERENCE_INTERLEAVED);
	traces_bad_input();
	return CHECK_DONE("test_coherence");
}
