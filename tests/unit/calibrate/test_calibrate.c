// SPDX-License-Identifier: MIT
/*
 * The calibration cache (user/calibrate/calibrate_cache.c): a round trip
 * keeps every value; another machine's file is stale; malformed and
 * incomplete files are refused with their line; the path follows
 * SCALEBPF_CALIBRATION, XDG_CACHE_HOME, HOME in that order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "calibrate/calibrate.h"

static char dir[] = "/tmp/sb_calibrate_test.XXXXXX";

static void sample(struct sb_calibration *c)
{
	memset(c, 0, sizeof(*c));
	sb_calibrate_identity(c->identity, sizeof(c->identity));
	c->when = 1700000000;
	c->line = 64;
	c->llc_nominal = 32ull << 20;
	c->llc_shared_by = 2;
	c->llc_effective = 2ull << 20;
	c->dram_latency_ns = 165.5;
	c->bw_one = 9.5e9;
	c->bw_all = 14.25e9;
	c->threads_all = 2;
	for (c->n = 0; c->n < 5; c->n++) {
		c->ws[c->n] = 16384ull << (2 * c->n);
		c->latency_ns[c->n] = 2.0 + 40.0 * c->n;
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	struct sb_calibration c, d;
	char path[512], got[512], err[512];

	if (!mkdtemp(dir))
		return 2;
	snprintf(path, sizeof(path), "%s/sub/dir/calibration", dir);
	setenv("SCALEBPF_CALIBRATION", path, 1);
	CHECK(sb_calibrate_path(got, sizeof(got)) == 0 && !strcmp(got, path), "env path: %s", got);

	CHECK(sb_calibrate_cached(&d, err, sizeof(err)) == -ENOENT, "none yet: %s", err);
	sample(&c);
	CHECK(sb_calibrate_save(&c, path, err, sizeof(err)) == 0, "save: %s", err);
	CHECK(sb_calibrate_cached(&d, err, sizeof(err)) == 0, "cached: %s", err);
	CHECK(!strcmp(d.identity, c.identity) && d.when == c.when && d.line == 64 &&
	      d.llc_nominal == c.llc_nominal && d.llc_shared_by == 2 &&
	      d.llc_effective == c.llc_effective && d.threads_all == 2 && d.n == 5 &&
	      d.ws[4] == c.ws[4], "round trip");
	CHECK_NEAR(d.dram_latency_ns, 165.5, 1e-3);
	CHECK_NEAR(d.bw_all, 14.25e9, 1);
	CHECK_NEAR(d.latency_ns[3], 122, 1e-3);

	snprintf(c.identity, sizeof(c.identity), "another CPU; 96 CPUs");
	CHECK(sb_calibrate_save(&c, path, err, sizeof(err)) == 0, "save other");
	CHECK(sb_calibrate_cached(&d, err, sizeof(err)) == -ESTALE && strstr(err, "another machine"),
	      "stale: %s", err);

	write_file(path, "scalebpf-calibration 1\nline 64\nbogus 12\n");
	CHECK(sb_calibrate_load(&d, path, err, sizeof(err)) == -EINVAL && strstr(err, ":3:"),
	      "malformed: %s", err);
	write_file(path, "scalebpf-calibration 1\nline 64\nllc_effective 100\n");
	CHECK(sb_calibrate_load(&d, path, err, sizeof(err)) == -EINVAL && strstr(err, "incomplete"),
	      "incomplete: %s", err);
	write_file(path, "something else\n");
	CHECK(sb_calibrate_load(&d, path, err, sizeof(err)) == -EINVAL, "wrong magic: %s", err);

	unsetenv("SCALEBPF_CALIBRATION");
	setenv("XDG_CACHE_HOME", "/x", 1);
	CHECK(sb_calibrate_path(got, sizeof(got)) == 0 && !strcmp(got, "/x/scalebpf/calibration"),
	      "XDG: %s", got);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	CHECK(sb_calibrate_path(got, sizeof(got)) == 0 &&
	      !strcmp(got, "/h/.cache/scalebpf/calibration"), "HOME: %s", got);
	unsetenv("HOME");
	CHECK(sb_calibrate_path(got, sizeof(got)) == -ENOENT, "no HOME");

	snprintf(got, sizeof(got), "rm -rf '%s'", dir);
	if (system(got))
		return 2;
	return CHECK_DONE("test_calibrate");
}
