/* SPDX-License-Identifier: MIT */
/*
 * What `report -i` may be given besides a profile: devices, FIFOs,
 * directories, links, files whose length fields lie.  Each is refused with
 * a clear message, at once (a child under alarm() proves no hang) and in
 * bounded memory (the child's peak RSS from wait4()).  Also the mode of
 * the files written: 0600, as perf does, whatever the umask.
 */
#include "profile_builder.h"
#include "util/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Generous: the reader needs a few MB; the old one took 4 GB of /dev/zero. */
#define RSS_SLACK_KB (64 * 1024)

struct outcome {
	int status;        /* sb_profile_read's, when the child finished */
	int finished;      /* 0: killed by the alarm (hung) or crashed */
	long rss_kb;       /* the child's peak RSS above the parent's */
	char err[256];
};

/* sb_profile_read(path) in a child killed after `secs`. */
static void read_in_child(const char *path, unsigned secs, struct outcome *o)
{
	struct rusage self, ru;
	int fds[2], wst;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	getrusage(RUSAGE_SELF, &self);
	if (pipe(fds) < 0)
		abort();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		struct sb_profile *p = NULL;
		struct outcome r = { 0 };

		close(fds[0]);
		alarm(secs);
		r.status = sb_profile_read(path, &p, r.err, sizeof(r.err));
		r.finished = 1;
		sb_profile_free(p);
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], o, sizeof(*o)) != sizeof(*o))
		o->finished = 0;
	close(fds[0]);
	if (wait4(pid, &wst, 0, &ru) != pid || !WIFEXITED(wst) || WEXITSTATUS(wst))
		o->finished = 0;
	o->rss_kb = ru.ru_maxrss - self.ru_maxrss;
}

/* Refused as SB_ERR_IO with `what` in the message, quickly and small. */
static void check_refused(const char *path, const char *what)
{
	struct outcome o;

	read_in_child(path, 10, &o);
	CHECK(o.finished, "%s: the reader hung or crashed", path);
	CHECK(o.status == SB_ERR_IO && strstr(o.err, what) && strstr(o.err, path),
	      "%s: %d '%s' (want '%s')", path, o.status, o.err, what);
	CHECK(o.rss_kb < RSS_SLACK_KB, "%s: %ld KB above the parent", path, o.rss_kb);
}

static void test_not_regular(void)
{
	char fifo[256], link[256], good[256], dlink[256];
	struct sb_profile *p = make_full(), *q = NULL;
	unsigned char *d;
	size_t n;
	char err[256];
	int st;

	check_refused("/dev/zero", "character device");
	check_refused("/dev/null", "character device");
	check_refused(tmpdir, "directory");
	/* No writer: opening it for reading would block forever. */
	tpath(fifo, sizeof(fifo), "fifo.sbp");
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
	check_refused(fifo, "FIFO");

	/* A link to a device is the device; a link to a profile is fine. */
	tpath(link, sizeof(link), "zero-link.sbp");
	CHECK(symlink("/dev/zero", link) == 0, "symlink: %s", strerror(errno));
	check_refused(link, "character device");
	tpath(dlink, sizeof(dlink), "dangling.sbp");
	CHECK(symlink("/nonexistent/x.sbp", dlink) == 0, "symlink: %s", strerror(errno));
	check_refused(dlink, "No such file");
	tpath(good, sizeof(good), "good.sbp");
	CHECK(sb_profile_write(p, good, err, sizeof(err)) == SB_OK, "write: %s", err);
	tpath(link, sizeof(link), "good-link.sbp");
	CHECK(symlink(good, link) == 0, "symlink: %s", strerror(errno));
	st = sb_profile_read(link, &q, err, sizeof(err));
	CHECK(st == SB_OK && q, "a link to a profile reads: %d %s", st, err);
	if (q)
		check_same(p, q);
	sb_profile_free(q);

	/* sb_bytes_read_file with O_NOFOLLOW (cache files) refuses links. */
	errno = 0;
	st = sb_bytes_read_file(link, O_NOFOLLOW, &d, &n, err, sizeof(err));
	CHECK(st < 0 && errno == ELOOP && strstr(err, "symbolic link") && !d,
	      "O_NOFOLLOW: %d %s", st, err);
	st = sb_bytes_read_file(good, O_NOFOLLOW, &d, &n, err, sizeof(err));
	CHECK(st == 0 && d && n > 16 && !memcmp(d, SB_PROFILE_MAGIC, 8), "O_NOFOLLOW, file");
	free(d);
	st = sb_bytes_slurp(fifo, &d, &n);
	CHECK(st < 0 && errno == EINVAL && !d, "slurp of a FIFO: %d", st);
	st = sb_bytes_slurp(tmpdir, &d, &n);
	CHECK(st < 0 && errno == EISDIR && !d, "slurp of a directory: %d", st);
	sb_profile_free(p);
}

/* Files whose sizes lie, through the file path: each is an error that
 * says so, read in bounded memory. */
static void test_lying_files(void)
{
	struct sb_profile *p = make_full();
	struct bytes f = { 0 };
	struct outcome o;
	unsigned char *img;
	char path[256];
	size_t n = 0, locs;

	img = image_of(p, &n);
	tpath(path, sizeof(path), "lie.sbp");

	/* Truncated in the middle of a chunk. */
	write_bytes(path, img, n / 2);
	read_in_child(path, 10, &o);
	CHECK(o.finished && o.status == SB_ERR_TRUNCATED && strstr(o.err, "truncated"),
	      "half a file: %d %s", o.status, o.err);

	/* A chunk length beyond the file, and one that wraps offset + 16 +
	 * length + 4 around 2^64. */
	locs = find_chunk(img, n, SB_CHUNK_LOCS);
	for (int k = 0; k < 3; k++) {
		static const uint64_t lens[] = { 1u << 30, UINT64_MAX - 8, UINT64_MAX };

		b_put(&f, img, n);
		set_le32(f.d + locs + 8, (uint32_t)lens[k]);
		set_le32(f.d + locs + 12, (uint32_t)(lens[k] >> 32));
		write_bytes(path, f.d, f.len);
		f.len = 0;
		read_in_child(path, 10, &o);
		CHECK(o.finished && o.status == SB_ERR_TRUNCATED &&
		      strstr(o.err, "LOCS chunk") && strstr(o.err, "past the end"),
		      "chunk length %#llx: %d %s", (unsigned long long)lens[k], o.status, o.err);
		CHECK(o.rss_kb < RSS_SLACK_KB, "chunk length: %ld KB", o.rss_kb);
	}
	b_free(&f);
	free(img);
	unlink(path);
	sb_profile_free(p);
}

/* A file of the one hand-made chunk `type` (payload pay) and the other
 * core chunks, empty; returns the status of reading it. */
static int read_one_chunk(uint32_t type, const struct bytes *pay, char *err, size_t errlen)
{
	struct bytes f = { 0 };
	int st;

	f_header(&f, SB_PROFILE_VERSION);
	f_chunk(&f, type, pay);
	f_end(&f, 1 + f_other_cores(&f, type, type));
	st = read_image(f.d, f.len, NULL, err, errlen);
	b_free(&f);
	return st;
}

/* count × size products that overflow 32 bits (or come near 64): each
 * is checked against the bytes left before anything is allocated. */
static void test_count_overflow(void)
{
	static const uint32_t sizes[][2] = {
		{ 0x80000000u, 0x80000000u }, { UINT32_MAX, UINT32_MAX },
		{ 0x10000000u, 0x10u }, { 0x40000000u, 28 },
	};
	struct bytes pay = { 0 };
	char err[256];
	size_t r;
	int st;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		/* An instance's per-thread times: count, entry size. */
		pay.len = 0;
		b_u32(&pay, 1);
		r = rec_begin(&pay);
		b_u32(&pay, 0);
		b_u64(&pay, 0);
		b_u64(&pay, 1);
		b_u64(&pay, 2);
		b_u32(&pay, sizes[k][0]);
		b_u32(&pay, sizes[k][1]);
		b_put(&pay, "0123456789abcdef0123456789abcdef", 32);
		rec_end(&pay, r);
		st = read_one_chunk(SB_CHUNK_INSTANCES, &pay, err, sizeof(err));
		CHECK(st == SB_ERR_CORRUPT && strstr(err, "INSTANCES"),
		      "times %#x x %#x: %d %s", sizes[k][0], sizes[k][1], st, err);
	}
	/* A vector of 2^29 counts: 2^32 bytes, 0 in 32-bit arithmetic. */
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, 0);
	b_u32(&pay, 0);
	b_u32(&pay, 0x20000000u);
	b_u64(&pay, 7);
	rec_end(&pay, r);
	st = read_one_chunk(SB_CHUNK_VECTORS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "VECTORS"), "vector 2^29: %d %s", st, err);
	/* A CFG blob of 2^64 - 1 bytes. */
	pay.len = 0;
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, 0);
	b_u64(&pay, UINT64_MAX);
	b_put(&pay, "cfg", 3);
	rec_end(&pay, r);
	st = read_one_chunk(SB_CHUNK_CFGS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "CFGS"), "cfg 2^64-1: %d %s", st, err);
	/* A record count whose records, at their smallest, overflow u32. */
	pay.len = 0;
	b_u32(&pay, 0x40000000u);
	b_put(&pay, "0123456789abcdef", 16);
	st = read_one_chunk(SB_CHUNK_THREADS, &pay, err, sizeof(err));
	CHECK(st == SB_ERR_CORRUPT && strstr(err, "cannot fit"), "count 2^30: %d %s", st, err);
	b_free(&pay);
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 07777;
}

/* Profiles (and every sb_bytes_out file: CFG cache entries) are private
 * to their owner, as perf.data is: they hold command lines, paths and
 * timings of the recorded program. */
static void test_modes(void)
{
	static const mode_t umasks[] = { 0, 022, 077 };
	struct sb_profile *p = make_full();
	struct sb_bytes_out o;
	char path[256], err[256];
	mode_t old = umask(0);

	tpath(path, sizeof(path), "mode.sbp");
	for (size_t k = 0; k < sizeof(umasks) / sizeof(umasks[0]); k++) {
		umask(umasks[k]);
		unlink(path);
		CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write: %s", err);
		CHECK(mode_of(path) == 0600, "umask %03o: mode %03o", (unsigned)umasks[k],
		      mode_of(path));
	}
	/* Replacing a readable file does not keep it readable. */
	umask(022);
	CHECK(chmod(path, 0644) == 0, "chmod");
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "rewrite: %s", err);
	CHECK(mode_of(path) == 0600, "rewritten: mode %03o", mode_of(path));
	unlink(path);
	CHECK(sb_bytes_out_open(&o, path) == 0, "out_open: %s", strerror(errno));
	sb_bytes_out_write(&o, "x", 1);
	CHECK(sb_bytes_out_commit(&o) == 0, "commit: %s", strerror(errno));
	CHECK(mode_of(path) == 0600, "sb_bytes_out: mode %03o", mode_of(path));
	unlink(path);
	umask(old);
	sb_profile_free(p);
}

int main(void)
{
	strcpy(tmpdir, "/tmp/sb_test_profile_input.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* A regression that blocks (a FIFO read in this process) fails the
	 * test instead of hanging `make check`. */
	alarm(120);
	test_not_regular();
	test_lying_files();
	test_count_overflow();
	test_modes();
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return CHECK_DONE("test_profile_input");
}
