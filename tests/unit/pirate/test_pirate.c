// SPDX-License-Identifier: MIT
/*
 * The Cache Pirate (pirate/pirate.h): the residency check on reference
 * numbers (latency → fetch ratio, the thresholds of both paths, a run's
 * verdict), the framework's stats file round trip and its refusals, and
 * the pirate's thread live: it measures only while on, warms once per
 * turn, and a set far beyond any cache walks slower than one in L1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pirate.h"
#include "profiled.h"

static void test_fetch_ratio(void)
{
	/* hit 10 ns, DRAM 110 ns: the share of loads that went to memory */
	CHECK_NEAR(sb_pirate_fetch_ratio_latency(10, 10, 110), 0, 1e-12);
	CHECK_NEAR(sb_pirate_fetch_ratio_latency(60, 10, 110), 0.5, 1e-12);
	CHECK_NEAR(sb_pirate_fetch_ratio_latency(15, 10, 110), 0.05, 1e-12);
	CHECK_NEAR(sb_pirate_fetch_ratio_latency(5, 10, 110), 0, 1e-12);    /* faster than a hit */
	CHECK_NEAR(sb_pirate_fetch_ratio_latency(300, 10, 110), 1, 1e-12);  /* slower than DRAM */
	CHECK(sb_pirate_fetch_ratio_latency(50, 0, 110) < 0, "no hit latency: cannot tell");
	CHECK(sb_pirate_fetch_ratio_latency(50, 110, 110) < 0, "miss = hit: cannot tell");
	CHECK(sb_pirate_fetch_ratio_latency(50, 120, 110) < 0, "miss < hit: cannot tell");

	/* the paper's test with counted misses is strict, latency's wider */
	CHECK(sb_pirate_interval_held(0.02, 1), "2%% counted: held");
	CHECK(!sb_pirate_interval_held(0.021, 1), "2.1%% counted: not held");
	CHECK(sb_pirate_interval_held(0.10, 0), "10%% by latency: held");
	CHECK(!sb_pirate_interval_held(0.11, 0), "11%% by latency: not held");
	CHECK(!sb_pirate_interval_held(-1, 0), "unknown: not held");
}

static void test_verdict(void)
{
	struct sb_pirate_stats s = { .intervals = 100, .fetch_mean = 0.04, .counted = 0 };

	CHECK(sb_pirate_held(&s), "mean 4%% by latency: held");
	s.counted = 1;
	CHECK(!sb_pirate_held(&s), "mean 4%% counted: not held");
	s.fetch_mean = 0.01;
	CHECK(sb_pirate_held(&s), "mean 1%% counted: held");
	s.intervals = 0;
	CHECK(!sb_pirate_held(&s), "never measured: not held");
	s.intervals = 5;
	s.fetch_mean = -1;
	CHECK(!sb_pirate_held(&s), "no ratio known: not held");
}

static void test_stats_file(void)
{
	char path[] = "/tmp/sb-profiled-XXXXXX", err[256];
	struct sb_profiled_stats a, b;
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	memset(&a, 0, sizeof(a));
	a.ntids = 3;
	a.tids[0] = 101, a.tids[1] = 202, a.tids[2] = 303;
	a.turns = 41;
	a.alone_ns = 123456789;
	a.main_overlap = 2;
	a.abandoned = 1;
	snprintf(a.why, sizeof(a.why), "blocked: a condition variable");
	a.pirate = 1;
	a.ps.bytes = 1 << 20;
	a.ps.cpu = 1;
	a.ps.counted = 0;
	a.ps.intervals = 900;
	a.ps.intervals_held = 850;
	a.ps.loads = 900 * 8192;
	a.ps.load_ns = 12.5;
	a.ps.fetch_mean = 0.031;
	a.ps.fetch_max = 0.4;
	a.ps.warmups = 41;
	CHECK(sb_profiled_stats_write(&a, path) == 0, "written");
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == 0, "read: %s", err);
	CHECK(b.ntids == 3 && b.tids[0] == 101 && b.tids[2] == 303, "tids %u", b.ntids);
	CHECK(b.turns == 41 && b.alone_ns == 123456789 && b.main_overlap == 2, "counts");
	CHECK(b.abandoned == 1 && !strcmp(b.why, a.why), "why '%s'", b.why);
	CHECK(b.pirate == 1 && b.ps.bytes == 1 << 20 && b.ps.cpu == 1, "pirate");
	CHECK(b.ps.intervals == 900 && b.ps.intervals_held == 850 && b.ps.warmups == 41,
	      "intervals");
	CHECK_NEAR(b.ps.fetch_mean, 0.031, 1e-6);
	CHECK_NEAR(b.ps.load_ns, 12.5, 1e-3);

	/* an unknown key (a newer writer's) is skipped; a bad value is not */
	f = fopen(path, "a");
	fprintf(f, "future_key=7\n");
	fclose(f);
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == 0, "unknown key: %s", err);
	f = fopen(path, "a");
	fprintf(f, "pirate_fetch_mean=1.5\n");
	fclose(f);
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "line"), "a ratio above 1 refused: %s", err);
	f = fopen(path, "w");
	fprintf(f, "tids=12,x\n");
	fclose(f);
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == -EINVAL, "bad tid list");
	f = fopen(path, "w");
	fprintf(f, "turns\n");
	fclose(f);
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == -EINVAL, "no '='");
	unlink(path);
	CHECK(sb_profiled_stats_read(&b, path, err, sizeof(err)) == -ENOENT, "no file");
}

/* A pirate of `bytes` on for ~ms ms: its stats. */
static int live(uint64_t bytes, unsigned ms, double hit, double miss, struct sb_pirate_stats *s)
{
	struct sb_pirate_opts o = { .bytes = bytes, .cpu = -1, .hit_ns = hit, .miss_ns = miss,
				    .no_pmu = 1 };
	struct sb_pirate *p;
	struct sb_pirate_stats before;
	char err[160];

	if (sb_pirate_alloc(&p, &o, err, sizeof(err))) {
		CHECK(0, "pirate of %llu bytes: %s", (unsigned long long)bytes, err);
		return -1;
	}
	usleep(20000);
	sb_pirate_stats(p, &before);
	CHECK(before.intervals == 0 && before.warmups == 0, "off: nothing measured (%llu)",
	      (unsigned long long)before.intervals);
	sb_pirate_resume(p);
	usleep(ms * 500);
	sb_pirate_pause(p);
	sb_pirate_resume(p);
	usleep(ms * 500);
	sb_pirate_pause(p);
	sb_pirate_stats(p, s);
	usleep(20000);
	sb_pirate_stats(p, &before);
	CHECK(before.intervals == s->intervals, "paused: nothing more measured");
	CHECK(s->warmups == 2, "a warm walk per turn: %llu", (unsigned long long)s->warmups);
	CHECK(s->intervals > 0, "measured while on");
	sb_pirate_free(p);
	return 0;
}

static void test_live(void)
{
	struct sb_pirate_stats small, big;
	char err[160];
	struct sb_pirate *p;
	struct sb_pirate_opts o = { .bytes = 100, .cpu = -1 };

	CHECK(sb_pirate_alloc(&p, &o, err, sizeof(err)) == -EINVAL && strstr(err, "lines"),
	      "two lines refused: %s", err);
	if (live(16 << 10, 100, 0, 0, &small) || live(256ull << 20, 400, 0, 0, &big))
		return;
	/* any machine: a 256 MB random walk misses, a 16 KB one hits L1 */
	CHECK(big.load_ns > 3 * small.load_ns, "256 MB %.1f ns/load vs 16 KB %.1f",
	      big.load_ns, small.load_ns);
	CHECK(small.fetch_mean < 0 && !sb_pirate_held(&small), "no latencies: cannot tell");
	/* with those two as the machine's hit and miss latencies, a set in
	 * L1 holds and one in DRAM does not */
	if (live(16 << 10, 100, small.load_ns * 1.2, big.load_ns, &small) ||
	    live(256ull << 20, 400, small.load_ns * 1.2, big.load_ns, &big))
		return;
	CHECK(sb_pirate_held(&small), "16 KB held: fetch %.3f", small.fetch_mean);
	CHECK(!sb_pirate_held(&big), "256 MB not held: fetch %.3f", big.fetch_mean);
	CHECK(big.fetch_mean > 0.5, "256 MB mostly from memory: %.3f", big.fetch_mean);
}

int main(void)
{
	test_fetch_ratio();
	test_verdict();
	test_stats_file();
	test_live();
	return CHECK_DONE("test_pirate");
}
