/* SPDX-License-Identifier: MIT */
/* The profile model and file format: round trips, forward compatibility,
 * and a reader that survives every truncation and byte flip. */
#include "profile/profile.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static void tpath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* ---- bytes, for crafting files by hand ---- */

struct bytes {
	unsigned char *d;
	size_t len, cap;
};

static void b_put(struct bytes *b, const void *p, size_t n)
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

static void b_u32(struct bytes *b, uint32_t v)
{
	unsigned char x[4];

	for (int i = 0; i < 4; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	b_put(b, x, 4);
}

static void b_u64(struct bytes *b, uint64_t v)
{
	b_u32(b, (uint32_t)v);
	b_u32(b, (uint32_t)(v >> 32));
}

static void b_str(struct bytes *b, const char *s)
{
	b_u32(b, (uint32_t)strlen(s));
	b_put(b, s, strlen(s));
}

static void b_free(struct bytes *b)
{
	free(b->d);
	memset(b, 0, sizeof(*b));
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void set_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Bitwise, independent of the module's table-driven one. */
static uint32_t ref_crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
	}
	return ~c;
}

static void f_header(struct bytes *f, uint32_t version)
{
	b_put(f, SB_PROFILE_MAGIC, 8);
	b_u32(f, version);
	b_u32(f, 0);
}

static void f_chunk(struct bytes *f, uint32_t type, const struct bytes *pay)
{
	b_u32(f, type);
	b_u32(f, 0);
	b_u64(f, pay->len);
	b_put(f, pay->d, pay->len);
	/* over the chunk header and payload */
	b_u32(f, ref_crc32(f->d + f->len - 16 - pay->len, 16 + pay->len));
}

static void f_end(struct bytes *f, uint64_t nchunks)
{
	struct bytes pay = { 0 };

	b_u64(&pay, nchunks);
	f_chunk(f, SB_CHUNK_END, &pay);
	b_free(&pay);
}

/* Empty (count 0) chunks for the core types other than a and b: every
 * version-1 profile has all of them.  Returns how many were added. */
static uint64_t f_other_cores(struct bytes *f, uint32_t a, uint32_t b)
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
static size_t rec_begin(struct bytes *b)
{
	b_u32(b, 0);
	return b->len;
}

static void rec_end(struct bytes *b, size_t start)
{
	set_le32(b->d + start - 4, (uint32_t)(b->len - start));
}

/* ---- files ---- */

static void write_bytes(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

static unsigned char *read_bytes(const char *path, size_t *n)
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
static int read_image(const void *d, size_t n, struct sb_profile **out, char *err,
		      size_t errlen)
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

static int count_entries(const char *dir, int *tmps)
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
static size_t find_chunk(const unsigned char *d, size_t n, uint32_t type)
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

static struct sb_profile *make_full(void)
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

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_times(const struct sb_thread_time *a, const struct sb_thread_time *b,
		      uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].tid != b[i].tid || a[i].busy_ns != b[i].busy_ns ||
		    a[i].wait_ns != b[i].wait_ns || a[i].wall_ns != b[i].wall_ns)
			return 0;
	return 1;
}

/* Compares every field, one check per field. */
static void check_same(const struct sb_profile *a, const struct sb_profile *b)
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
static unsigned char *image_of(const struct sb_profile *p, size_t *n)
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

/* ---- tests ---- */

static void test_names(void)
{
	static const char *const prims[] = {
		"other", "barrier", "user_barrier", "join", "cond", "mutex", "sem",
		"spin", "rwlock", "omp_region_end", "omp_barrier", "omp_critical",
		"omp_lock", "omp_idle",
	};
	uint32_t i;

	CHECK(!strcmp(sb_section_kind_name(SB_SECT_BARRIER), "barrier"), "kind");
	CHECK(!strcmp(sb_section_kind_name(SB_SECT_USER_BARRIER), "user_barrier"), "kind");
	CHECK(!strcmp(sb_section_kind_name(SB_SECT_OMP_REGION), "omp_region"), "kind");
	CHECK(!strcmp(sb_section_kind_name(SB_SECT_OMP_BARRIER), "omp_barrier"), "kind");
	CHECK(!strcmp(sb_section_kind_name(SB_SECT_JOIN), "join"), "kind");
	CHECK(!strcmp(sb_section_kind_name(0), "unknown"), "kind 0");
	CHECK(!strcmp(sb_section_kind_name(SB_SECT_KIND_MAX), "unknown"), "kind max");
	CHECK(!strcmp(sb_section_kind_name(UINT32_MAX), "unknown"), "kind huge");
	CHECK(sizeof(prims) / sizeof(prims[0]) == SB_PRIM_MAX, "prim table");
	for (i = 0; i < SB_PRIM_MAX; i++) {
		CHECK(!strcmp(sb_prim_name(i), prims[i]), "prim %u: %s", i, sb_prim_name(i));
		CHECK(sb_prim_from_name(prims[i]) == i, "from_name %s", prims[i]);
	}
	CHECK(!strcmp(sb_prim_name(SB_PRIM_MAX), "unknown"), "prim max");
	CHECK(sb_prim_from_name("nope") == SB_PRIM_MAX, "unknown name");
	CHECK(sb_prim_from_name("unknown") == SB_PRIM_MAX, "\"unknown\"");
	CHECK(sb_prim_from_name(NULL) == SB_PRIM_MAX, "NULL name");
	for (int st = SB_ERR_NOMEM; st <= SB_OK; st++)
		CHECK(sb_profile_strerror(st) && *sb_profile_strerror(st) &&
		      strcmp(sb_profile_strerror(st), "unknown error"), "strerror %d", st);
	CHECK(!strcmp(sb_profile_strerror(42), "unknown error"), "strerror 42");
	CHECK(ref_crc32((const unsigned char *)"123456789", 9) == 0xCBF43926u,
	      "reference CRC");
}

static void test_meta(void)
{
	struct sb_profile *p = sb_profile_alloc();

	CHECK(sb_profile_meta_set(p, "a", "1") == 0, "first key");
	CHECK(sb_profile_meta_set(p, "b", "2") == 1, "second key");
	CHECK(sb_profile_meta_set(p, "a", "3") == 0, "replace keeps the index");
	CHECK(p->nmeta == 2, "no duplicate: %zu", p->nmeta);
	CHECK(!strcmp(sb_profile_meta_get(p, "a"), "3"), "replaced");
	CHECK(!strcmp(sb_profile_meta_get(p, "b"), "2"), "kept");
	CHECK(sb_profile_meta_get(p, "c") == NULL, "missing key");
	CHECK(sb_profile_meta_set(p, NULL, "x") == -1, "NULL key refused");
	CHECK(sb_profile_meta_set(p, "n", NULL) == 2 &&
	      !strcmp(sb_profile_meta_get(p, "n"), ""), "NULL value stored as \"\"");
	sb_profile_free(p);
	sb_profile_free(NULL);
}

/* add_* copy everything: the caller's buffers can change afterwards. */
static void test_deep_copy(void)
{
	struct sb_profile *p = sb_profile_alloc();
	char fn[16] = "fn", file[16] = "f.c", comm[16] = "comm", path[16] = "/bin/x";
	struct sb_thread_time pt[2] = { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } };
	struct sb_loc loc = { 1, 2, 0, 3, fn, file };
	struct sb_thread th = { 1, 0, comm, 1, 2, 3 };
	struct sb_section sec = { SB_SECT_BARRIER, 0, 1, 2, pt, 0, 0 };
	struct sb_instance in = { 0, 0, 1, 2, 2, pt };
	struct sb_loc empty = { 0, 0, -1, 0, "", "" };
	struct sb_section nothreads = { SB_SECT_BARRIER, 0, 1, 3, NULL, 0, 0 };

	CHECK(sb_profile_add_binary(p, path, "") == 0, "binary index");
	CHECK(sb_profile_add_loc(p, &loc) == 0, "loc index");
	CHECK(sb_profile_add_thread(p, &th) == 0, "thread index");
	CHECK(sb_profile_add_section(p, &sec) == 0, "section index");
	CHECK(sb_profile_add_instance(p, &in) == 0, "instance index");
	CHECK(sb_profile_add_loc(p, &empty) == 1, "second loc index");
	CHECK(sb_profile_add_section(p, &nothreads) == -1, "per_thread NULL refused");
	CHECK(p->nsections == 1, "refused section not added");
	strcpy(fn, "XX");
	strcpy(file, "XX");
	strcpy(comm, "XX");
	strcpy(path, "XX");
	pt[0].tid = 99;
	CHECK(!strcmp(p->locs[0].function, "fn") && !strcmp(p->locs[0].file, "f.c"),
	      "loc strings copied");
	CHECK(p->locs[0].function != fn, "loc function is a copy");
	CHECK(!strcmp(p->threads[0].comm, "comm"), "comm copied");
	CHECK(!strcmp(p->binaries[0].path, "/bin/x"), "path copied");
	CHECK(p->binaries[0].build_id == NULL, "empty build_id is NULL");
	CHECK(p->sections[0].per_thread != pt && p->sections[0].per_thread[0].tid == 1,
	      "section per_thread copied");
	CHECK(p->instances[0].per_thread != pt && p->instances[0].per_thread[0].tid == 1,
	      "instance per_thread copied");
	CHECK(p->locs[1].function == NULL && p->locs[1].file == NULL,
	      "empty loc strings are NULL");
	sb_profile_free(p);
}

static void test_round_trip(void)
{
	struct sb_profile *p = make_full(), *q = NULL;
	char path[256], err[256];
	int st;

	CHECK(p->nmeta == 3 && p->nbinaries == 2 && p->nlocs == 3 && p->nthreads == 3 &&
	      p->nsections == 2 && p->ninstances == 3 && p->nwaits == 3, "reference built");
	tpath(path, sizeof(path), "full.sbp");
	st = sb_profile_write(p, path, err, sizeof(err));
	CHECK(st == SB_OK, "write: %d %s", st, err);
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_OK && q, "read: %d %s", st, err);
	if (q) {
		check_same(p, q);
		CHECK(q->binaries[1].build_id == NULL, "NULL build_id survives");
		CHECK(q->locs[2].function == NULL && q->locs[2].file == NULL,
		      "NULL loc strings survive");
		CHECK(q->locs[1].file == NULL, "NULL file survives");
		CHECK(q->instances[2].per_thread == NULL, "no per_thread for 0 threads");
		CHECK(!strcmp(sb_profile_meta_get(q, "command"), "./app -n 4"), "meta get");
		CHECK(!strcmp(q->threads[2].comm, ""), "empty comm stays a string");
		/* A loaded profile can still grow (implied capacities). */
		for (int i = 0; i < 100; i++) {
			struct sb_loc l = { (uint64_t)i, 0, -1, 0, "grown", NULL };

			sb_profile_add_loc(q, &l);
			sb_profile_add_wait(q, &p->waits[0]);
			sb_profile_meta_set(q, i % 2 ? "odd" : "even", "v");
		}
		CHECK(q->nlocs == 103 && !strcmp(q->locs[102].function, "grown"),
		      "grew to %zu", q->nlocs);
		CHECK(q->nwaits == 103 && q->nmeta == 5, "waits %zu meta %zu",
		      q->nwaits, q->nmeta);
	}
	sb_profile_free(q);
	sb_profile_free(p);
	unlink(path);

	/* Empty profile. */
	p = sb_profile_alloc();
	st = sb_profile_write(p, path, err, sizeof(err));
	CHECK(st == SB_OK, "empty write: %s", err);
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_OK && q && !q->nmeta && !q->nlocs && !q->nwaits && !q->meta,
	      "empty read: %s", err);
	sb_profile_free(q);
	sb_profile_free(p);
	unlink(path);
}

/* Big enough to pass the 64 KiB write buffer and grow every buffer. */
static void test_large(void)
{
	struct sb_profile *p = sb_profile_alloc(), *q = NULL;
	static struct sb_thread_time pt[5000];
	struct sb_section sec = { SB_SECT_OMP_REGION, 0, 1, 5000, pt, 1, 2 };
	char path[256], err[256], name[300];
	int st;

	for (int i = 0; i < 5000; i++) {
		struct sb_loc l = { (uint64_t)i * 16, (uint64_t)i, -1, (uint32_t)i, name, name };

		snprintf(name, sizeof(name), "%0250d", i);
		sb_profile_add_loc(p, &l);
		pt[i] = (struct sb_thread_time){ (uint32_t)i, (uint64_t)i, 2, 3 };
	}
	sb_profile_add_section(p, &sec);
	tpath(path, sizeof(path), "large.sbp");
	st = sb_profile_write(p, path, err, sizeof(err));
	CHECK(st == SB_OK, "large write: %s", err);
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_OK, "large read: %s", err);
	if (q) {
		CHECK(q->nlocs == 5000 && q->locs[4999].line == 4999 &&
		      strlen(q->locs[4999].file) == 250, "large locs");
		CHECK(q->sections[0].nthreads == 5000 &&
		      q->sections[0].per_thread[4999].busy_ns == 4999, "large per_thread");
	}
	sb_profile_free(q);
	sb_profile_free(p);
	unlink(path);
}

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

static void test_writer_refuses_bad_refs(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_section s = { SB_SECT_BARRIER, 4, 1, 0, NULL, 0, 0 };
	char path[256], err[256];
	int st, tmps;

	tpath(path, sizeof(path), "badrefs.sbp");
	sb_profile_add_section(p, &s);
	st = sb_profile_write(p, path, err, sizeof(err));
	CHECK(st != SB_OK && strstr(err, "section 0") && access(path, F_OK) != 0,
	      "bad refs not written: %d %s", st, err);
	CHECK(count_entries(tmpdir, &tmps) == 0 && tmps == 0, "nothing left behind");
	sb_profile_free(p);
}

static void test_io_errors(void)
{
	struct sb_profile *p = make_full(), *q = (struct sb_profile *)1;
	char path[256], err[256], sub[256];
	int st, n, tmps;

	tpath(path, sizeof(path), "does-not-exist.sbp");
	errno = 0;
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_ERR_IO && errno == ENOENT && q == NULL, "missing file: %d", st);
	CHECK(strstr(err, path) && strstr(err, "No such file"), "message: %s", err);
	st = sb_profile_read(tmpdir, &q, err, sizeof(err));
	CHECK(st == SB_ERR_IO && q == NULL, "directory: %d %s", st, err);

	/* Into a directory that does not exist. */
	tpath(path, sizeof(path), "no-such-dir/p.sbp");
	n = count_entries(tmpdir, &tmps);
	st = sb_profile_write(p, path, err, sizeof(err));
	CHECK(st == SB_ERR_IO, "no dir: %d", st);
	CHECK(strstr(err, "cannot write profile") && strstr(err, path) &&
	      strstr(err, "No such file or directory"), "message: %s", err);
	CHECK(count_entries(tmpdir, &tmps) == n && tmps == 0, "no dir: nothing created");

	/* Over a directory: the rename fails, the temp file must go. */
	tpath(sub, sizeof(sub), "adir");
	mkdir(sub, 0755);
	n = count_entries(tmpdir, &tmps);
	st = sb_profile_write(p, sub, err, sizeof(err));
	CHECK(st == SB_ERR_IO && strstr(err, "cannot write profile"), "over a dir: %s", err);
	CHECK(count_entries(tmpdir, &tmps) == n && tmps == 0, "over a dir: %d temps", tmps);
	rmdir(sub);
	sb_profile_free(p);
}

static void test_replace(void)
{
	struct sb_profile *a = make_full(), *b = sb_profile_alloc(), *q = NULL;
	struct rlimit old, small;
	char path[256], err[256];
	int st, tmps;

	tpath(path, sizeof(path), "replace.sbp");
	write_bytes(path, "not a profile", 13);
	st = sb_profile_write(a, path, err, sizeof(err));
	CHECK(st == SB_OK, "over a plain file: %s", err);
	sb_profile_meta_set(b, "which", "b");
	st = sb_profile_write(b, path, err, sizeof(err));
	CHECK(st == SB_OK, "over a profile: %s", err);
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_OK && q && q->nmeta == 1 && q->nlocs == 0 &&
	      !strcmp(sb_profile_meta_get(q, "which"), "b"), "replaced: %s", err);
	sb_profile_free(q);
	q = NULL;
	CHECK(count_entries(tmpdir, &tmps) == 1 && tmps == 0, "only the target is left");

	/* A failing write (file size limit) leaves the old file intact. */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 64;
	if (setrlimit(RLIMIT_FSIZE, &small) == 0) {
		st = sb_profile_write(a, path, err, sizeof(err));
		setrlimit(RLIMIT_FSIZE, &old);
		CHECK(st == SB_ERR_IO && strstr(err, "File too large") && strstr(err, path),
		      "size limit: %d %s", st, err);
		st = sb_profile_read(path, &q, err, sizeof(err));
		CHECK(st == SB_OK && q && q->nmeta == 1, "old file intact: %s", err);
		sb_profile_free(q);
		CHECK(count_entries(tmpdir, &tmps) == 1 && tmps == 0, "no temp left: %d", tmps);
	}
	signal(SIGXFSZ, SIG_DFL);
	unlink(path);
	sb_profile_free(a);
	sb_profile_free(b);
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/sb_test_profile.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_names();
	test_meta();
	test_deep_copy();
	test_round_trip();
	test_large();
	test_unknown_chunk();
	test_forward_fields();
	test_truncation();
	test_flips();
	test_mutations();
	test_crafted();
	test_writer_refuses_bad_refs();
	test_io_errors();
	test_replace();
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return CHECK_DONE("test_profile");
}
