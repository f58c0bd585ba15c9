/* SPDX-License-Identifier: MIT */
/* The profile model: names, metadata, deep copies, round trips through a
 * file, and the writer's files (refused references, I/O errors, atomic
 * replacement).  The file format's bytes: test_profile_format.c. */
#include "profile_builder.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>

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

int main(void)
{
	strcpy(tmpdir, "/tmp/sb_test_profile_model.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_names();
	test_meta();
	test_deep_copy();
	test_round_trip();
	test_large();
	test_writer_refuses_bad_refs();
	test_io_errors();
	test_replace();
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return CHECK_DONE("test_profile_model");
}
