// SPDX-License-Identifier: MIT
/*
 * test_symcache: symbolized addresses kept across recordings
 * (symcache.h): what is put comes back after a save and load (names
 * and "none" alike), a changed debug file or another build-id makes the
 * entry a miss, and damaged entries (truncated, bytes changed, a link)
 * are misses (a CRC), never half-read nor misread; entries crafted with
 * a valid CRC but out of bounds (a length past the end, more entries
 * than there are, a length of -2, "0x" numbers, too short for a CRC
 * line) are refused by the parser itself (sb_symcache_read).
 */
#include "binary/symcache.h"
#include "check.h"
#include "util/bytes.h"

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

/* Writes header + body as the entry, with a valid CRC line after it. */
static void write_crafted(const char *body)
{
	static char buf[8192];
	struct stat st;
	int n;

	if (stat(dbg, &st))
		memset(&st, 0, sizeof(st));
	n = snprintf(buf, sizeof(buf), "scalebpf-symcache 2\n" BID "\n%llu %llu %llu %llu %zu\n%s\n%s",
		     (unsigned long long)st.st_size,
		     (unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
			     (unsigned long long)st.st_mtim.tv_nsec,
		     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, strlen(dbg), dbg,
		     body);
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%08x\n", sb_bytes_crc32(0, buf, (size_t)n));
	write_file(entry, buf, (size_t)n);
}

static void test_crafted(void)
{
	static const struct { const char *body, *what; } bad[] = {
		{ "1\n1000 5 60000 4\na.cmain\n", "a FILELEN past the end" },
		{ "1\n1000 5 3 60000\na.cmain\n", "a FUNCLEN past the end" },
		{ "3\n1000 5 3 4\na.cmain\n", "COUNT larger than the entries" },
		{ "1\n1000 5 -2 4\na.cmain\n", "a length of -2" },
		{ "1\n1000 5 3 -2\na.cmain\n", "a function length of -2" },
		{ "1\n0x1000 5 3 4\na.cmain\n", "a 0x-prefixed address" },
		{ "1\n1000 0x5 3 4\na.cmain\n", "a 0x-prefixed line" },
		{ "1\n1000 5 +3 4\na.cmain\n", "a signed length" },
		{ "1\n1000 5 70000 4\na.cmain\n", "a length over the limit" },
		{ "1\n1000 5 3 4\na.cmain\nx", "bytes after the entries" },
		{ "2\n1000 5 3 4\na.cmain\n", "COUNT one more than the entries" },
	};
	struct sb_symcache *c;
	const char *file, *func;
	unsigned line;

	/* the control: the same builder, well-formed, is read and used */
	write_crafted("2\n1000 5 3 4\na.cmain\n2000 0 -1 -1\n\n");
	c = sb_symcache_read(cdir, BID);
	CHECK(c != NULL, "crafted control entry read");
	CHECK(c && !sb_symcache_get(c, 0x1000, &file, &line, &func), "nothing looked up before the check");
	CHECK(c && sb_symcache_check(c, dbg, NULL), "crafted control entry current");
	CHECK(c && sb_symcache_get(c, 0x1000, &file, &line, &func) && file && line == 5 && func &&
	      !strcmp(file, "a.c") && !strcmp(func, "main"), "crafted control location");
	CHECK(c && sb_symcache_get(c, 0x2000, &file, &line, &func) && !file && !func,
	      "crafted control: none");
	sb_symcache_close(c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_crafted(bad[i].body);
		c = sb_symcache_read(cdir, BID);
		CHECK(c == NULL, "valid CRC, %s: refused", bad[i].what);
		sb_symcache_close(c);
	}
	/* shorter than a CRC line after the magic: refused before any
	 * pointer into it is formed (a valid CRC for what there is) */
	for (size_t len = 1; len < 30; len++) {
		char b[64];
		size_t n = len > 9 ? len - 9 : 0;

		memset(b, '0', sizeof(b));
		memcpy(b, "scalebpf-symcache 2\n", n < 20 ? n : 20);
		if (len >= 9)
			snprintf(b + n, sizeof(b) - n, "%08x\n", sb_bytes_crc32(0, b, n));
		write_file(entry, b, len);
		c = sb_symcache_read(cdir, BID);
		CHECK(c == NULL, "%zu bytes: refused", len);
		sb_symcache_close(c);
	}
	unlink(entry);
}

/* An entry stops growing where a load would refuse it: what was put
 * beyond is not kept (read from DWARF next time), what fits still is. */
static void test_cap(void)
{
	static char name[60000];
	struct sb_symcache *c = sb_symcache_new(cdir, BID, dbg, NULL);
	const char *file, *func;
	unsigned line;
	uint64_t n = 0;

	CHECK(c != NULL, "new");
	if (!c)
		return;
	memset(name, 'f', sizeof(name) - 1);
	/* ~120 KB an address: past 64 MiB after ~560 of them */
	for (n = 0; n < 700; n++)
		sb_symcache_put(c, 0x1000 + n, name, 1, name);
	sb_symcache_close(c);
	c = sb_symcache_load(cdir, BID, dbg);
	CHECK(c != NULL, "a full entry still loads");
	CHECK(c && sb_symcache_get(c, 0x1000, &file, &line, &func) && line == 1, "the first kept");
	CHECK(c && !sb_symcache_get(c, 0x1000 + 699, &file, &line, &func), "the last not kept");
	sb_symcache_close(c);
	unlink(entry);
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
	test_crafted();
	test_cap();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return CHECK_DONE("test_symcache");
}
