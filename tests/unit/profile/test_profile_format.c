/* SPDX-License-Identifier: MIT */
/* The profile file format, byte by byte: forward compatibility (unknown
 * chunks, longer records), and a reader that survives every truncation,
 * byte flip, mutation and crafted lie.  The model: test_profile_model.c. */
#include "profile_builder.h"
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

/* An unknown chunk spliced in before END (count fixed) is skipped. */
static void test_unknown_chunk(void)
{
	struct sb_profile *p = make_full(), *q = NULL;
	struct bytes f = { 0 }, pay = { 0 };
	unsigned char *img;
	size_t n, end;
	char err[256];
	int st;

	img = image_of(p, &n);
	end = find_chunk(img, n, SB_CHUNK_END);
	CHECK(end > 16 && end + 28 == n, "END is last: %zu of %zu", end, n);
	b_put(&f, img, end);
	b_str(&pay, "a chunk from the future");
	b_u64(&pay, 0x0123456789abcdefull);
	f_chunk(&f, 0x46555455, &pay);
	f_end(&f, le64(img + end + 16) + 1);
	st = read_image(f.d, f.len, &q, err, sizeof(err));
	CHECK(st == SB_OK, "unknown chunk skipped: %d %s", st, err);
	if (q)
		check_same(p, q);
	sb_profile_free(q);

	/* Without fixing the END count the file is inconsistent. */
	f.len = end;
	f_chunk(&f, 0x46555455, &pay);
	f_end(&f, le64(img + end + 16));
	st = read_image(f.d, f.len, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "END"), "END count: %d %s", st, err);

	/* A known chunk twice is refused. */
	f.len = end;
	{
		size_t meta = find_chunk(img, n, SB_CHUNK_META);

		b_put(&f, img + meta, 16 + le64(img + meta + 8) + 4);
	}
	f_end(&f, le64(img + end + 16) + 1);
	st = read_image(f.d, f.len, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "META"), "duplicate: %d %s", st, err);

	/* A damaged type byte must not turn a chunk into an "unknown" one
	 * that readers skip: the CRC covers chunk headers. */
	{
		size_t waits = find_chunk(img, n, SB_CHUNK_WAITS);
		unsigned char *dam = malloc(n);

		memcpy(dam, img, n);
		dam[waits] ^= 0x40;
		st = read_image(dam, n, NULL, err, sizeof(err));
		CHECK(st == SB_ERR_CORRUPT && strstr(err, "CRC mismatch"),
		      "damaged chunk type: %d %s", st, err);
		free(dam);
	}

	/* Bytes after END. */
	f.len = 0;
	b_put(&f, img, n);
	b_put(&f, "x", 1);
	st = read_image(f.d, f.len, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "stray bytes after END: %d %s", st, err);

	b_free(&f);
	b_free(&pay);
	free(img);
	sb_profile_free(p);
}

/* Records and time entries longer than this version knows are fine. */
static void test_forward_fields(void)
{
	struct bytes f = { 0 }, pay = { 0 };
	struct sb_profile *q = NULL;
	size_t r;
	char err[256];
	int st;

	f_header(&f, SB_PROFILE_VERSION);
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u64(&pay, 0x1000);
	b_u64(&pay, 0x10);
	b_u32(&pay, (uint32_t)-1);
	b_u32(&pay, 7);
	b_str(&pay, "fn");
	b_str(&pay, "");
	b_str(&pay, "a later field");
	rec_end(&pay, r);
	b_put(&pay, "trailing", 8);
	f_chunk(&f, SB_CHUNK_LOCS, &pay);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, SB_SECT_OMP_BARRIER);
	b_u32(&pay, 0);
	b_u64(&pay, 3);
	b_u64(&pay, 4);
	b_u64(&pay, 5);
	b_u32(&pay, 2);
	b_u32(&pay, 36); /* entries grew by 8 bytes */
	for (int i = 0; i < 2; i++) {
		b_u32(&pay, 10 + i);
		b_u64(&pay, 1);
		b_u64(&pay, 2);
		b_u64(&pay, 3);
		b_u64(&pay, 0xfeedull);
	}
	rec_end(&pay, r);
	f_chunk(&f, SB_CHUNK_SECTIONS, &pay);
	f_end(&f, 2 + f_other_cores(&f, SB_CHUNK_LOCS, SB_CHUNK_SECTIONS));
	st = read_image(f.d, f.len, &q, err, sizeof(err));
	CHECK(st == SB_OK, "longer records: %d %s", st, err);
	if (q) {
		CHECK(q->nlocs == 1 && q->locs[0].binary == -1 && q->locs[0].line == 7 &&
		      !strcmp(q->locs[0].function, "fn") && !q->locs[0].file, "loc fields");
		CHECK(q->nsections == 1 && q->sections[0].kind == SB_SECT_OMP_BARRIER &&
		      q->sections[0].capacity_ns == 5 && q->sections[0].nthreads == 2 &&
		      q->sections[0].per_thread[1].tid == 11 &&
		      q->sections[0].per_thread[1].wall_ns == 3, "section fields");
	}
	sb_profile_free(q);
	b_free(&f);
	b_free(&pay);
}

static void test_truncation(void)
{
	struct sb_profile *p = make_full();
	unsigned char *img;
	size_t n, bad = 0, first_bad = 0;
	char err[256];
	int st, bad_st = 0;

	img = image_of(p, &n);
	for (size_t len = 0; len < n; len++) {
		struct sb_profile *q = (struct sb_profile *)1;

		st = read_image(img, len, &q, err, sizeof(err));
		if ((st != SB_ERR_TRUNCATED && st != SB_ERR_MAGIC && st != SB_ERR_CORRUPT) ||
		    q != NULL || !err[0]) {
			if (!bad++) {
				first_bad = len;
				bad_st = st;
			}
		}
		sb_profile_free(q == (struct sb_profile *)1 ? NULL : q);
	}
	CHECK(bad == 0, "%zu of %zu truncations misread, first at %zu: %d", bad, n,
	      first_bad, bad_st);
	st = read_image(img, n - 1, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_TRUNCATED, "one byte short: %d %s", st, err);
	st = read_image(img, find_chunk(img, n, SB_CHUNK_END), NULL, err, sizeof(err));
	CHECK(st == SB_ERR_TRUNCATED && strstr(err, "END"), "no END: %d %s", st, err);
	st = read_image(img, 0, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_TRUNCATED, "empty file: %d %s", st, err);
	st = read_image(img, 5, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_TRUNCATED, "part of the magic: %d %s", st, err);
	free(img);
	sb_profile_free(p);
}

/* Every single-byte change in a payload or CRC breaks the CRC (CRC-32
 * catches all bursts up to 32 bits); header fields fail their checks. */
static void test_flips(void)
{
	struct sb_profile *p = make_full();
	unsigned char *img;
	size_t n, nflips = 0, bad = 0, first_bad = 0;
	char err[256];
	int st, bad_st = 0;

	img = image_of(p, &n);
	for (size_t off = 16; off + 16 <= n;) {
		uint64_t plen = le64(img + off + 8);

		for (size_t i = off + 4; i < off + 16 + plen + 4; i++) {
			int want = i < off + 8 ? SB_ERR_CORRUPT : /* reserved */
				   i < off + 16 ? 0 :             /* length */
				   SB_ERR_CORRUPT;                /* payload, CRC */

			for (int k = 0; k < 2; k++) {
				unsigned char mask = k ? 0xff : (unsigned char)(1u << (i % 8));

				img[i] ^= mask;
				st = read_image(img, n, NULL, err, sizeof(err));
				img[i] ^= mask;
				nflips++;
				if (st == SB_OK || (want && st != want)) {
					if (!bad++) {
						first_bad = i;
						bad_st = st;
					}
				}
			}
		}
		off += 16 + plen + 4;
	}
	CHECK(nflips > 2 * 500 && bad == 0, "%zu of %zu flips misread, first at %zu: %d",
	      bad, nflips, first_bad, bad_st);
	CHECK(err[0] && strstr(err, "offset"), "message: %s", err);

	/* A payload byte gives a CRC error naming the chunk and its offset. */
	{
		size_t locs = find_chunk(img, n, SB_CHUNK_LOCS);
		char want[64];

		img[locs + 20] ^= 1;
		st = read_image(img, n, NULL, err, sizeof(err));
		img[locs + 20] ^= 1;
		snprintf(want, sizeof(want), "LOCS chunk at offset %zu: CRC", locs);
		CHECK(st == SB_ERR_CORRUPT && strstr(err, want), "CRC message: %s", err);
	}
	/* Header: magic and version. */
	for (size_t i = 0; i < 12; i++) {
		img[i] ^= 0xff;
		st = read_image(img, n, NULL, err, sizeof(err));
		img[i] ^= 0xff;
		CHECK(st == (i < 8 ? SB_ERR_MAGIC : SB_ERR_VERSION), "header byte %zu: %d",
		      i, st);
	}
	set_le32(img + 8, SB_PROFILE_VERSION + 1);
	st = read_image(img, n, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_VERSION && strstr(err, "version 2"), "newer: %d %s", st, err);
	set_le32(img + 8, 0);
	st = read_image(img, n, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_VERSION, "version 0: %d %s", st, err);
	set_le32(img + 8, SB_PROFILE_VERSION);
	memcpy(img, "SCALEBPX", 8);
	st = read_image(img, n, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_MAGIC && strstr(err, "not a scalebpf profile"), "magic: %s", err);
	st = read_image("hello, world\n", 13, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_MAGIC, "text file: %d", st);
	st = read_image("XYZ", 3, NULL, err, sizeof(err));
	CHECK(st == SB_ERR_MAGIC, "short non-profile: %d", st);
	free(img);
	sb_profile_free(p);
}

/* Builds a file from hand-made LOCS (one loc, binary -1) and one other
 * chunk, all CRCs valid; returns the read status. */
static int read_crafted(uint32_t type, const struct bytes *pay, char *err, size_t errlen)
{
	struct bytes f = { 0 }, locs = { 0 };
	size_t r;
	int st;

	f_header(&f, SB_PROFILE_VERSION);
	b_u32(&locs, 1);
	r = rec_begin(&locs);
	b_u64(&locs, 1);
	b_u64(&locs, 2);
	b_u32(&locs, (uint32_t)-1);
	b_u32(&locs, 0);
	b_str(&locs, "f");
	b_str(&locs, "");
	rec_end(&locs, r);
	f_chunk(&f, SB_CHUNK_LOCS, &locs);
	f_chunk(&f, type, pay);
	f_end(&f, 2 + f_other_cores(&f, SB_CHUNK_LOCS, type));
	st = read_image(f.d, f.len, NULL, err, errlen);
	b_free(&f);
	b_free(&locs);
	return st;
}

static void section_record(struct bytes *pay, uint32_t loc, uint32_t nthreads,
			   uint32_t esz)
{
	size_t r;

	b_u32(pay, 1);
	r = rec_begin(pay);
	b_u32(pay, SB_SECT_BARRIER);
	b_u32(pay, loc);
	b_u64(pay, 1);
	b_u64(pay, 2);
	b_u64(pay, 3);
	b_u32(pay, nthreads);
	b_u32(pay, esz);
	for (uint32_t i = 0; i < nthreads && i < 2; i++) {
		b_u32(pay, i);
		b_u64(pay, 1);
		b_u64(pay, 2);
		b_u64(pay, 3);
	}
	rec_end(pay, r);
}

static void test_crafted(void)
{
	struct bytes pay = { 0 };
	char err[256];
	size_t r;
	int st;

	/* Sanity: the crafted base file itself is fine. */
	section_record(&pay, 0, 2, 28);
	st = read_crafted(SB_CHUNK_SECTIONS, &pay, err, sizeof(err));
	CHECK(st == SB_OK, "crafted base: %d %s", st, err);

	/* Huge counts with valid CRCs: refused before allocating. */
	pay.len = 0;
	b_u32(&pay, UINT32_MAX);
	st = read_crafted(SB_CHUNK_WAITS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "WAITS") && strstr(err, "offset"),
	      "huge count: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 0x10000000);
	b_put(&pay, "0123456789abcdef0123456789abcdef0123456789abcdef", 48);
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "big count, small payload: %d %s", st, err);
	pay.len = 0;
	section_record(&pay, 0, UINT32_MAX, 28);
	st = read_crafted(SB_CHUNK_SECTIONS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "SECTIONS"), "huge nthreads: %d %s", st, err);
	pay.len = 0;
	section_record(&pay, 0, 2, 0);
	st = read_crafted(SB_CHUNK_SECTIONS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "entry size 0: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	b_u32(&pay, UINT32_MAX); /* record length */
	b_put(&pay, "0123456789abcdef", 16);
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "record 0"), "huge record: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, UINT32_MAX); /* key length */
	b_str(&pay, "v");
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "huge string: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, 3);
	b_put(&pay, "a\0b", 3);
	b_str(&pay, "v");
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "NUL inside a string: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_str(&pay, "key only");
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "malformed"), "short record: %d %s", st, err);
	pay.len = 0;
	st = read_crafted(SB_CHUNK_META, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "empty payload: %d %s", st, err);

	/* Out-of-range indices. */
	pay.len = 0;
	section_record(&pay, 1, 0, 28);
	st = read_crafted(SB_CHUNK_SECTIONS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "SECTIONS chunk at offset") &&
	      strstr(err, "loc 1"), "section loc: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, SB_PRIM_MUTEX);
	b_u32(&pay, (uint32_t)-2);
	b_u64(&pay, 0);
	b_u64(&pay, 1);
	b_u64(&pay, 1);
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_WAITS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "WAITS"), "wait loc -2: %d %s", st, err);
	set_le32(pay.d + 12, 1);
	st = read_crafted(SB_CHUNK_WAITS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT, "wait loc 1: %d %s", st, err);
	set_le32(pay.d + 12, 0);
	st = read_crafted(SB_CHUNK_WAITS, &pay, err, sizeof(err));
	CHECK(st == SB_OK, "wait loc 0: %d %s", st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, 0);
	b_u64(&pay, 0);
	b_u64(&pay, 1);
	b_u64(&pay, 2);
	b_u32(&pay, 0);
	b_u32(&pay, 28);
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_INSTANCES, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "INSTANCES"), "instance section: %d %s",
	      st, err);
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_str(&pay, "/bin/x");
	b_str(&pay, "");
	rec_end(&pay, r);
	st = read_crafted(SB_CHUNK_BINARIES, &pay, err, sizeof(err));
	CHECK(st == SB_OK, "binaries: %d %s", st, err);
	{
		/* LOCS pointing at binary 5 of 0. */
		struct bytes f = { 0 }, locs = { 0 };

		f_header(&f, SB_PROFILE_VERSION);
		b_u32(&locs, 1);
		r = rec_begin(&locs);
		b_u64(&locs, 1);
		b_u64(&locs, 2);
		b_u32(&locs, 5);
		b_u32(&locs, 0);
		b_str(&locs, "");
		b_str(&locs, "");
		rec_end(&locs, r);
		f_chunk(&f, SB_CHUNK_LOCS, &locs);
		f_end(&f, 1 + f_other_cores(&f, SB_CHUNK_LOCS, SB_CHUNK_LOCS));
		st = read_image(f.d, f.len, NULL, err, sizeof(err));
		CHECK(st == SB_ERR_CORRUPT && strstr(err, "LOCS") && strstr(err, "binary 5"),
		      "loc binary: %d %s", st, err);
		/* A payload length past the end of the file. */
		f.len = 16;
		b_u32(&f, SB_CHUNK_LOCS);
		b_u32(&f, 0);
		b_u64(&f, UINT64_MAX);
		b_put(&f, locs.d, locs.len);
		st = read_image(f.d, f.len, NULL, err, sizeof(err));
		CHECK(st == SB_ERR_TRUNCATED, "huge chunk length: %d %s", st, err);
		b_free(&f);
		b_free(&locs);
	}
	b_free(&pay);
}

/* Recomputes every chunk CRC so that mutations reach the decoders. */
static void fix_crcs(unsigned char *d, size_t n)
{
	for (size_t off = 16; off + 16 <= n;) {
		uint64_t plen = le64(d + off + 8);

		if (plen > n - off - 16 || n - off - 16 - plen < 4)
			return;
		set_le32(d + off + 16 + plen, ref_crc32(d + off, 16 + plen));
		off += 16 + plen + 4;
	}
}

/* Garbage with valid CRCs: any status is fine, but never a crash or leak
 * (the sanitizers watch), and what loads can be written back. */
static void test_mutations(void)
{
	struct sb_profile *p = make_full();
	unsigned char *img, *m;
	size_t n, bad = 0, ok = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char path[256], err[256];

	img = image_of(p, &n);
	m = malloc(n);
	tpath(path, sizeof(path), "mutant-out.sbp");
	for (int it = 0; it < 3000; it++) {
		struct sb_profile *q = NULL;
		int st, nmut;

		memcpy(m, img, n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		nmut = 1 + (int)(x % 6);
		for (int k = 0; k < nmut; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			m[16 + (x >> 8) % (n - 16)] = (unsigned char)(k & 1 ? x : x >> 40);
		}
		fix_crcs(m, n);
		st = read_image(m, n, &q, err, sizeof(err));
		if (st == SB_OK) {
			ok++;
			if (!q || sb_profile_write(q, path, err, sizeof(err)) != SB_OK)
				bad++;
		} else if (q || st < SB_ERR_NOMEM || !err[0]) {
			bad++;
		}
		sb_profile_free(q);
	}
	CHECK(bad == 0, "%zu mutants misread (%zu loaded): %s", bad, ok, err);
	unlink(path);
	free(m);
	free(img);
	sb_profile_free(p);
}

/* sb_profile_check_path: what sb_profile_write would fail on, found
 * before a recording; a writable path is left as it was. */
static void test_check_path(void)
{
	char path[PATH_MAX], err[256];
	struct stat st;
	int r;

	r = sb_profile_check_path("", err, sizeof(err));
	CHECK(r != SB_OK && strstr(err, "empty"), "empty path: %d %s", r, err);
	r = sb_profile_check_path(tmpdir, err, sizeof(err));
	CHECK(r != SB_OK && strstr(err, "directory"), "a directory: %d %s", r, err);
	snprintf(path, sizeof(path), "%s/no/such/x.sbp", tmpdir);
	r = sb_profile_check_path(path, err, sizeof(err));
	CHECK(r == SB_ERR_IO && strstr(err, "No such file"), "no directory: %d %s", r, err);
	r = sb_profile_check_path("/proc/sb_test.sbp", err, sizeof(err));
	CHECK(r == SB_ERR_IO && err[0], "/proc: %d %s", r, err);
	snprintf(path, sizeof(path), "%s/check.sbp", tmpdir);
	r = sb_profile_check_path(path, err, sizeof(err));
	CHECK(r == SB_OK && !err[0], "writable: %d %s", r, err);
	CHECK(stat(path, &st) != 0 && errno == ENOENT, "writable: nothing left at %s", path);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/sb_test_profile_format.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_unknown_chunk();
	test_forward_fields();
	test_truncation();
	test_flips();
	test_mutations();
	test_crafted();
	test_check_path();
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return CHECK_DONE("test_profile_format");
}
