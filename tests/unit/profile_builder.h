/* SPDX-License-Identifier: MIT */
/*
 * Shared by the profile tests (tests/unit/profile/): files crafted byte by
 * byte (a builder and a bitwise CRC-32 independent of the module's
 * encoder), whole-file helpers in the binary's temporary directory, and a
 * reference profile that puts edge values in every field, with a
 * field-by-field comparison.
 */
#ifndef SB_TEST_PROFILE_BUILDER_H
#define SB_TEST_PROFILE_BUILDER_H

#include "profile/profile.h"
#include "check.h"

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Each test binary makes its own (mkdtemp) and removes it at the end. */
static char tmpdir[64];

static inline void tpath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- bytes, for crafting files by hand ---- */

struct bytes {
	unsigned char *d;
	size_t len, cap;
};

static inline void b_put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->d = realloc(b->d, b->cap);
		if (!b->d)
			abort();
	}
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
}

static inline void b_u32(struct bytes *b, uint32_t v)
{
	unsigned char x[4];

	for (int i = 0; i < 4; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	b_put(b, x, 4);
}

static inline void b_u64(struct bytes *b, uint64_t v)
{
	b_u32(b, (uint32_t)v);
	b_u32(b, (uint32_t)(v >> 32));
}

static inline void b_str(struct bytes *b, const char *s)
{
	b_u32(b, (uint32_t)strlen(s));
	b_put(b, s, strlen(s));
}

static inline void b_free(struct bytes *b)
{
	free(b->d);
	memset(b, 0, sizeof(*b));
}

static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline void set_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Bitwise, independent of the module's table-driven one. */
static inline uint32_t ref_crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
	}
	return ~c;
}

static inline void f_header(struct bytes *f, uint32_t version)
{
	b_put(f, SB_PROFILE_MAGIC, 8);
	b_u32(f, version);
	b_u32(f, 0);
}

static inline void f_chunk(struct bytes *f, uint32_t type, const struct bytes *pay)
{
	b_u32(f, type);
	b_u32(f, 0);
	b_u64(f, pay->len);
	b_put(f, pay->d, pay->len);
	/* over the chunk header and payload */
	b_u32(f, ref_crc32(f->d + f->len - 16 - pay->len, 16 + pay->len));
}

static inline void f_end(struct bytes *f, uint64_t nchunks)
{
	struct bytes pay = { 0 };

	b_u64(&pay, nchunks);
	f_chunk(f, SB_CHUNK_END, &pay);
	b_free(&pay);
}

/* Empty (count 0) chunks for the core types other than a and b: every
 * version-1 profile has all of them.  Returns how many were added. */
static inline uint64_t f_other_cores(struct bytes *f, uint32_t a, uint32_t b)
{
	static const uint32_t core[] = { SB_CHUNK_META, SB_CHUNK_BINARIES, SB_CHUNK_LOCS,
					 SB_CHUNK_THREADS, SB_CHUNK_SECTIONS,
					 SB_CHUNK_INSTANCES, SB_CHUNK_WAITS };
	struct bytes empty = { 0 };
	uint64_t n = 0;

	b_u32(&empty, 0);
	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
		if (core[i] == a || core[i] == b)
			continue;
		f_chunk(f, core[i], &empty);
		n++;
	}
	b_free(&empty);
	return n;
}

/* Starts a record: returns where its length goes (see rec_end). */
static inline size_t rec_begin(struct bytes *b)
{
	b_u32(b, 0);
	return b->len;
}

static inline void rec_end(struct bytes *b, size_t start)
{
	set_le32(b->d + start - 4, (uint32_t)(b->len - start));
}

/* ---- files ---- */

static inline void write_bytes(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static inline unsigned char *read_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct bytes b = { 0 };
	unsigned char buf[4096];
	size_t r;

	if (!f)
		return NULL;
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		b_put(&b, buf, r);
	fclose(f);
	*n = b.len;
	return b.d ? b.d : calloc(1, 1);
}

/* Reads an in-memory image through a file; returns the status. */
static inline int read_image(const void *d, size_t n, struct sb_profile **out,
			     char *err, size_t errlen)
{
	char path[256];
	struct sb_profile *p = NULL;
	int st;

	tpath(path, sizeof(path), "image.sbp");
	write_bytes(path, d, n);
	st = sb_profile_read(path, out ? out : &p, err, errlen);
	if (!out)
		sb_profile_free(p);
	unlink(path);
	return st;
}

static inline int count_entries(const char *dir, int *tmps)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*tmps = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (strstr(e->d_name, ".tmp"))
			(*tmps)++;
	}
	closedir(d);
	return n;
}

/* Offset of the chunk of the given type, or 0. */
static inline size_t find_chunk(const unsigned char *d, size_t n, uint32_t type)
{
	for (size_t off = 16; off + 16 <= n;) {
		uint64_t plen = le64(d + off + 8);

		if (le32(d + off) == type)
			return off;
		off += 16 + plen + 4;
	}
	return 0;
}

/* ---- the reference profile ---- */

static struct sb_thread_time pt_a[3] = {
	{ 101, 1000, 20, 1100 }, { 102, 900, 120, 1100 }, { 103, UINT64_MAX, 0, 7 },
};
static struct sb_thread_time pt_b[2] = { { 101, 5, 6, 11 }, { 102, 50, 60, 110 } };

static inline struct sb_profile *make_full(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_loc locs[] = {
		{ 0x401000, 0x1000, 0, 42, "worker", "src/app.c" },
		{ 0x7f0000012345, 0x9a345, 1, 0, "pthread_barrier_wait", NULL },
		{ UINT64_MAX, 0, -1, UINT32_MAX, NULL, NULL },
	};
	struct sb_thread threads[] = {
		{ 100, 0, "app", 10, 90000, 5000 },
		{ 101, 100, "worker-1", 20, 80000, 40000 },
		{ 102, 100, "", 30, UINT64_MAX, 0 },
	};
	struct sb_section secs[] = {
		{ SB_SECT_BARRIER, 1, 10, 3, pt_a, 123, 456 },
		{ SB_SECT_JOIN, 0, 1, 2, pt_b, 0, UINT64_MAX },
	};
	struct sb_instance insts[] = {
		{ 0, 0, 100, 200, 3, pt_a },
		{ 0, 1, 200, 300, 2, pt_b },
		{ 1, 0, 50, 5000, 0, NULL },
	};
	struct sb_wait waits[] = {
		{ SB_PRIM_MUTEX, 0, 0x5555aaaa0000, 5, 999 },
		{ SB_PRIM_SPIN, -1, 0, 1, 1 },
		{ SB_PRIM_OMP_IDLE, 2, UINT64_MAX, UINT64_MAX, 0 },
	};
	size_t i;

	if (!p)
		abort();
	sb_profile_meta_set(p, "command", "./app -n 4");
	sb_profile_meta_set(p, "host", "box");
	sb_profile_meta_set(p, "empty", "");
	sb_profile_add_binary(p, "/usr/bin/app", "0123456789abcdef");
	sb_profile_add_binary(p, "/lib/x86_64-linux-gnu/libc.so.6", NULL);
	for (i = 0; i < 3; i++)
		sb_profile_add_loc(p, &locs[i]);
	for (i = 0; i < 3; i++)
		sb_profile_add_thread(p, &threads[i]);
	for (i = 0; i < 2; i++)
		sb_profile_add_section(p, &secs[i]);
	for (i = 0; i < 3; i++)
		sb_profile_add_instance(p, &insts[i]);
	for (i = 0; i < 3; i++)
		sb_profile_add_wait(p, &waits[i]);
	return p;
}

static inline int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static inline int same_times(const struct sb_thread_time *a,
			     const struct sb_thread_time *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].tid != b[i].tid || a[i].busy_ns != b[i].busy_ns ||
		    a[i].wait_ns != b[i].wait_ns || a[i].wall_ns != b[i].wall_ns)
			return 0;
	return 1;
}

/* Compares every field, one check per field. */
static inline void check_same(const struct sb_profile *a, const struct sb_profile *b)
{
	size_t i;

	CHECK(a->nmeta == b->nmeta, "nmeta %zu vs %zu", a->nmeta, b->nmeta);
	for (i = 0; i < a->nmeta && i < b->nmeta; i++) {
		CHECK(same_str(a->meta[i].key, b->meta[i].key), "meta %zu key", i);
		CHECK(same_str(a->meta[i].value, b->meta[i].value), "meta %zu value", i);
	}
	CHECK(a->nbinaries == b->nbinaries, "nbinaries");
	for (i = 0; i < a->nbinaries && i < b->nbinaries; i++) {
		CHECK(same_str(a->binaries[i].path, b->binaries[i].path), "bin %zu path", i);
		CHECK(same_str(a->binaries[i].build_id, b->binaries[i].build_id),
		      "bin %zu build_id", i);
	}
	CHECK(a->nlocs == b->nlocs, "nlocs");
	for (i = 0; i < a->nlocs && i < b->nlocs; i++) {
		const struct sb_loc *x = &a->locs[i], *y = &b->locs[i];

		CHECK(x->addr == y->addr, "loc %zu addr", i);
		CHECK(x->offset == y->offset, "loc %zu offset", i);
		CHECK(x->binary == y->binary, "loc %zu binary", i);
		CHECK(x->line == y->line, "loc %zu line", i);
		CHECK(same_str(x->function, y->function), "loc %zu function", i);
		CHECK(same_str(x->file, y->file), "loc %zu file", i);
	}
	CHECK(a->nthreads == b->nthreads, "nthreads");
	for (i = 0; i < a->nthreads && i < b->nthreads; i++) {
		const struct sb_thread *x = &a->threads[i], *y = &b->threads[i];

		CHECK(x->tid == y->tid, "thread %zu tid", i);
		CHECK(x->parent_tid == y->parent_tid, "thread %zu parent", i);
		CHECK(same_str(x->comm, y->comm), "thread %zu comm", i);
		CHECK(x->start_ns == y->start_ns, "thread %zu start", i);
		CHECK(x->end_ns == y->end_ns, "thread %zu end", i);
		CHECK(x->oncpu_ns == y->oncpu_ns, "thread %zu oncpu", i);
	}
	CHECK(a->nsections == b->nsections, "nsections");
	for (i = 0; i < a->nsections && i < b->nsections; i++) {
		const struct sb_section *x = &a->sections[i], *y = &b->sections[i];

		CHECK(x->kind == y->kind, "section %zu kind", i);
		CHECK(x->loc == y->loc, "section %zu loc", i);
		CHECK(x->ninstances == y->ninstances, "section %zu ninstances", i);
		CHECK(x->lost_ns == y->lost_ns, "section %zu lost", i);
		CHECK(x->capacity_ns == y->capacity_ns, "section %zu capacity", i);
		CHECK(x->nthreads == y->nthreads, "section %zu nthreads", i);
		CHECK(x->nthreads != y->nthreads ||
		      same_times(x->per_thread, y->per_thread, x->nthreads),
		      "section %zu per_thread", i);
	}
	CHECK(a->ninstances == b->ninstances, "ninstances");
	for (i = 0; i < a->ninstances && i < b->ninstances; i++) {
		const struct sb_instance *x = &a->instances[i], *y = &b->instances[i];

		CHECK(x->section == y->section, "instance %zu section", i);
		CHECK(x->seq == y->seq, "instance %zu seq", i);
		CHECK(x->start_ns == y->start_ns, "instance %zu start", i);
		CHECK(x->end_ns == y->end_ns, "instance %zu end", i);
		CHECK(x->nthreads == y->nthreads, "instance %zu nthreads", i);
		CHECK(x->nthreads != y->nthreads ||
		      same_times(x->per_thread, y->per_thread, x->nthreads),
		      "instance %zu per_thread", i);
	}
	CHECK(a->nwaits == b->nwaits, "nwaits");
	for (i = 0; i < a->nwaits && i < b->nwaits; i++) {
		const struct sb_wait *x = &a->waits[i], *y = &b->waits[i];

		CHECK(x->prim == y->prim, "wait %zu prim", i);
		CHECK(x->loc == y->loc, "wait %zu loc", i);
		CHECK(x->object == y->object, "wait %zu object", i);
		CHECK(x->count == y->count, "wait %zu count", i);
		CHECK(x->wait_ns == y->wait_ns, "wait %zu wait_ns", i);
	}
}

/* Writes p and returns the file image. */
static inline unsigned char *image_of(const struct sb_profile *p, size_t *n)
{
	char path[256], err[256];
	unsigned char *d;

	tpath(path, sizeof(path), "image-src.sbp");
	if (sb_profile_write(p, path, err, sizeof(err)) != SB_OK) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	d = read_bytes(path, n);
	unlink(path);
	return d;
}

static inline int rm_entry(const char *path, const struct stat *st, int flag,
			   struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

#endif
