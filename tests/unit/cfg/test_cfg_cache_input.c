// SPDX-License-Identifier: MIT
/*
 * test_cfg_cache_input: what sb_cfg_cached() (user/binary/cfg_cache.c)
 * accepts from its cache directory, which is input like any file.  The
 * entry of a real binary (cfg_build_test.h's program), damaged at random
 * with its CRC recomputed: every entry used must be the binary's true
 * graph, every other one rebuilt and replaced.  Entries that are a link
 * (to /dev/zero, to a good entry), a FIFO, a directory, empty or larger
 * than the binary could need: never read, never a hang, rebuilt.
 */
#include "binary/cfg_build.h"
#include "binary/elfsym.h"
#include "binary/cfg_build_test.h"
#include "cfg/cfg_io.h"
#include "cfg_compare.h"
#include "check.h"
#include "util/bytes.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/sb_cfg_cache_input_XXXXXX";
static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)       /* xorshift64*: deterministic */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static bool write_file(const char *path, const unsigned char *d, size_t len)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "w");
	return f && fwrite(d, 1, len, f) == len && fclose(f) == 0;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The entry at file is refused (not a hit), rebuilt as the true graph,
 * and replaced by a good regular file, quickly. */
static void check_refused(struct sb_elf *e, const char *cdir, const char *file,
			  const struct sb_cfg *ref, const char *what)
{
	char err[256];
	bool hit = true;
	double t0 = now();
	struct sb_cfg *g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	double dt = now() - t0;
	struct stat st;

	CHECK(g && !hit && same_graph(g, ref), "%s: refused and rebuilt", what);
	CHECK(dt < 2.0, "%s: in %.2f s", what, dt);
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode), "%s: replaced by a regular file", what);
	sb_cfg_free(g);
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && hit && same_graph(g, ref), "%s: the replacement is a hit", what);
	sb_cfg_free(g);
}

static void test_damage(struct sb_elf *e, const char *cdir, const char *file,
			const struct sb_cfg *ref)
{
	unsigned char *good, *copy;
	size_t len;
	int used_wrong = 0, used_right = 0, refused = 0;
	char err[256];

	CHECK(sb_bytes_slurp(file, &good, &len) == 0 && len > 40, "read the good entry");
	copy = malloc(len);
	for (int it = 0; it < 1500 && copy; it++) {
		struct sb_cfg *g;
		bool hit;
		uint32_t c;

		memcpy(copy, good, len);
		/* bytes after the fixed header, where the records are */
		for (uint64_t k = 1 + rnd() % 3; k > 0; k--)
			copy[24 + rnd() % (len - 28)] = (unsigned char)rnd();
		c = sb_bytes_crc32(0, copy, len - 4);
		for (int i = 0; i < 4; i++)
			copy[len - 4 + i] = (unsigned char)(c >> (8 * i));
		write_file(file, copy, len);
		g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
		if (!g)
			continue;
		if (!hit)
			refused++;
		else if (same_graph(g, ref))
			used_right++;     /* the damage did not change the graph */
		else
			used_wrong++;
		sb_cfg_free(g);
	}
	printf("damaged entries with a valid CRC: %d used but wrong, %d used (unchanged "
	       "graph), %d refused and rebuilt\n", used_wrong, used_right, refused);
	/* What the checks cannot see without decoding the code again (which
	 * is what the cache saves): a block boundary or a branch target moved
	 * inside its function.  Before the structural and symbol checks, one
	 * damaged entry in 4 was used. */
	CHECK(refused > 0 && used_wrong * 50 < refused,
	      "damaged entries: %d used but wrong, %d refused", used_wrong, refused);
	write_file(file, good, len);
	free(copy);
	free(good);
}

static void test_not_files(struct sb_elf *e, const char *cdir, const char *file,
			   const struct sb_cfg *ref)
{
	char other[1100];
	size_t blen;
	struct stat st;

	/* a link to /dev/zero: 4 GB read and 8.7 s before */
	unlink(file);
	CHECK(symlink("/dev/zero", file) == 0, "symlink to /dev/zero");
	check_refused(e, cdir, file, ref, "link to /dev/zero");
	/* a link to a good entry is still a link */
	snprintf(other, sizeof(other), "%s/good.cfg", dir);
	rename(file, other);
	CHECK(symlink(other, file) == 0, "symlink to a good entry");
	check_refused(e, cdir, file, ref, "link to a good entry");
	unlink(file);
	CHECK(mkfifo(file, 0600) == 0, "mkfifo");
	check_refused(e, cdir, file, ref, "FIFO");
	unlink(file);
	CHECK(mkdir(file, 0700) == 0, "mkdir");
	{
		char err[256];
		bool hit = true;
		struct sb_cfg *g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));

		CHECK(g && !hit && same_graph(g, ref), "a directory: refused, built");
		sb_cfg_free(g);
	}
	rmdir(file);
	write_file(file, (const unsigned char *)"", 0);
	check_refused(e, cdir, file, ref, "empty file");
	/* larger than the binary could need: not read (sparse, costs nothing) */
	CHECK(stat(sb_elf_path(e), &st) == 0, "stat the binary");
	blen = (size_t)st.st_size * 8 + (4u << 20) + 1;
	CHECK(truncate(file, 0) == 0 && truncate(file, (off_t)blen) == 0, "sparse file");
	check_refused(e, cdir, file, ref, "oversized file");
	/* good bytes others could have written: not trusted */
	CHECK(chmod(file, 0664) == 0, "chmod g+w");
	check_refused(e, cdir, file, ref, "group-writable entry");
	CHECK(chown(file, 65534, 65534) == 0, "chown nobody");
	check_refused(e, cdir, file, ref, "entry owned by another user");
}

int main(void)
{
	char bin[256], cdir[512], file[1024], err[256];
	struct sb_elf *e;
	struct sb_cfg *ref, *g;
	bool hit;

	if (!mkdtemp(dir) || !write_prog_source(dir) || compile_prog(dir) != 0) {
		CHECK(0, "write and compile %s/prog.c", dir);
		return CHECK_DONE("test_cfg_cache_input");
	}
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	snprintf(cdir, sizeof(cdir), "%s/cache", dir);
	e = sb_elf_open(bin, err, sizeof(err));
	ref = e ? sb_cfg_build(e, err, sizeof(err)) : NULL;
	CHECK(ref && sb_elf_build_id(e), "build the reference graph: %s", err);
	if (ref) {
		snprintf(file, sizeof(file), "%s/%s" SB_CFG_CACHE_EXT, cdir, sb_elf_build_id(e));
		g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
		CHECK(g && !hit, "first call writes the entry");
		sb_cfg_free(g);
		test_damage(e, cdir, file, ref);
		test_not_files(e, cdir, file, ref);
	}
	sb_cfg_free(ref);
	sb_elf_close(e);
	run("rm -rf %s", dir);
	return CHECK_DONE("test_cfg_cache_input");
}
