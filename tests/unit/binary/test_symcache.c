// SPDX-License-Identifier: MIT
/*
 * test_symcache: symbolized addresses kept across recordings
 * (symcache.h): what is put comes back after a save and load (names
 * and "none" alike), a changed debug file or another build-id makes the
 * entry a miss, and damaged entries (truncated, bytes changed, a link)
 * are misses (a CRC), never half-read nor misread.
 */
#include "binary/symcache.h"
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define BID "0123456789abcdef0123456789abcdef01234567"

static char dir[] = "/tmp/sb_symcache_XXXXXX";
static char cdir[256], dbg[256], entry[512];

static void write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len, "write %s", path);
	if (fd >= 0)
		close(fd);
}

static size_t read_all(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap, f) : 0;

	if (f)
		fclose(f);
	return n;
}

/* An entry with three addresses: a full one, no line, no name at all. */
static void fill(void)
{
	struct sb_symcache *c = sb_symcache_new(cdir, BID, dbg, NULL);

	CHECK(c != NULL, "new");
	if (!c)
		return;
	CHECK(!strcmp(sb_symcache_debug_file(c), dbg), "its debug file");
	sb_symcache_put(c, 0x87510, "./nptl/pthread_barrier_wait.c", 96, "___pthread_barrier_wait");
	sb_symcache_put(c, 0x1000, NULL, 0, "only_a_symbol");
	sb_symcache_put(c, 0x2000, NULL, 7, NULL);   /* a line without a file is none */
	sb_symcache_put(c, 0x87510, "other.c", 1, "other");   /* the first stays */
	sb_symcache_close(c);
}

static void test_roundtrip(void)
{
	struct sb_symcache *c;
	const char *file, *func;
	unsigned line;

	fill();
	c = sb_symcache_load(cdir, BID, dbg);
	CHECK(c != NULL, "loaded");
	if (!c)
		return;
	CHECK(sb_symcache_get(c, 0x87510, &file, &line, &func) && file && line == 96 && func &&
	      !strcmp(file, "./nptl/pthread_barrier_wait.c") &&
	      !strcmp(func, "___pthread_barrier_wait"), "full location");
	CHECK(sb_symcache_get(c, 0x1000, &file, &line, &func) && !file && line == 0 && func &&
	      !strcmp(func, "only_a_symbol"), "name only");
	CHECK(sb_symcache_get(c, 0x2000, &file, &line, &func) && !file && line == 0 && !func,
	      "nothing known");
	CHECK(!sb_symcache_get(c, 0x3000, &file, &line, &func), "not in it");
	sb_symcache_close(c);   /* nothing added: not rewritten */
	CHECK(sb_symcache_load(cdir, "0123", dbg) == NULL, "another build-id is a miss");
	CHECK(sb_symcache_load(cdir, BID, "/elsewhere/lib.debug") == NULL,
	      "another debug file (a copy of the binary finds another, or none): a miss");
	CHECK(sb_symcache_load(cdir, BID, NULL) == NULL, "no debug file: a miss");
	CHECK(sb_symcache_load(cdir, "../x", dbg) == NULL, "a build-id that is no plain hex");
	CHECK(sb_symcache_new("", BID, dbg, NULL) == NULL, "no cache directory: none");
	CHECK(sb_symcache_new(cdir, BID, "/nonexistent/x.debug", NULL) == NULL, "no debug file: none");
}

static void test_debug_changed(void)
{
	struct timeval tv[2] = { { 1000000, 0 }, { 1000000, 0 } };
	struct sb_symcache *c;

	fill();
	utimes(dbg, tv);
	c = sb_symcache_load(cdir, BID, dbg);
	CHECK(c == NULL, "debug file changed since: a miss");
	sb_symcache_close(c);
	fill();
	unlink(dbg);
	c = sb_symcache_load(cdir, BID, dbg);
	CHECK(c == NULL, "debug file removed: a miss");
	sb_symcache_close(c);
	write_file(dbg, "debug", 5);
}

static void test_damaged(void)
{
	static char good[4096], bad[4096];
	size_t n;

	fill();
	n = read_all(entry, good, sizeof(good));
	CHECK(n > 100, "entry written: %zu bytes", n);
	/* every truncation is a miss */
	for (size_t len = 1; len < n; len++) {
		struct sb_symcache *c;

		write_file(entry, good, len);
		c = sb_symcache_load(cdir, BID, dbg);
		CHECK(c == NULL, "truncated at %zu of %zu", len, n);
		sb_symcache_close(c);
	}
	/* every changed byte: a miss (the CRC) */
	for (size_t i = 0; i < n; i++) {
		struct sb_symcache *c;

		memcpy(bad, good, n);
		bad[i] = bad[i] == '\n' ? 'x' : bad[i] == '0' ? '1' : '0';
		write_file(entry, bad, n);
		c = sb_symcache_load(cdir, BID, dbg);
		CHECK(c == NULL, "byte %zu of %zu changed", i, n);
		sb_symcache_close(c);
	}
	/* a link is not followed */
	write_file(entry, good, n);
	{
		char other[600];

		snprintf(other, sizeof(other), "%s/real", dir);
		rename(entry, other);
		CHECK(symlink(other, entry) == 0, "symlink");
		CHECK(sb_symcache_load(cdir, BID, dbg) == NULL, "a link is refused");
		unlink(entry);
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(cdir, sizeof(cdir), "%s/cache/sym", dir);
	snprintf(dbg, sizeof(dbg), "%s/lib.debug", dir);
	snprintf(entry, sizeof(entry), "%s/%s.sym", cdir, BID);
	write_file(dbg, "debug", 5);
	test_roundtrip();
	test_debug_changed();
	test_damaged();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return CHECK_DONE("test_symcache");
}
