/* SPDX-License-Identifier: MIT */
/* Byte-level helpers of scalebpf's files; see bytes.h. */
#include "bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void sb_bytes_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- CRC-32 ----
 * Eight bytes a step ("slicing-by-8"): a 100,000-instance profile is
 * ~10 MB, which the byte-at-a-time table loop took ~20 ms to cover, on
 * the path from the target's exit to the profile on disk (issue 11), and
 * again in every report that reads it; the CFG and symbol caches' entries
 * are checked with it too.  The values are those of the byte loop. */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
		crc_tab[0][i] = c;
	}
	/* crc_tab[k][i]: the CRC of byte i followed by k zero bytes. */
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc_tab[k][i] = (crc_tab[k - 1][i] >> 8) ^ crc_tab[0][crc_tab[k - 1][i] & 0xff];
}

uint32_t sb_bytes_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo, hi;

		/* The reflected CRC takes the first byte as the lowest: the
		 * words are assembled byte by byte in that order, so the
		 * result does not depend on the host's byte order or on
		 * p's alignment. */
		lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
		hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
		     (uint32_t)p[7] << 24;
		lo ^= crc;
		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		      crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
		      crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- payload building ---- */

static int buf_reserve(struct sb_bytes_buf *b, size_t n)
{
	size_t cap;
	unsigned char *d;

	if (b->err)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len) {
		b->err = EOVERFLOW;
		return -1;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->err = ENOMEM;
		return -1;
	}
	b->data = d;
	b->cap = cap;
	return 0;
}

void sb_bytes_buf_free(struct sb_bytes_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void put_le(unsigned char *d, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

void sb_bytes_put_u32(struct sb_bytes_buf *b, uint32_t v)
{
	if (buf_reserve(b, 4) == 0) {
		put_le(b->data + b->len, v, 4);
		b->len += 4;
	}
}

void sb_bytes_put_u64(struct sb_bytes_buf *b, uint64_t v)
{
	if (buf_reserve(b, 8) == 0) {
		put_le(b->data + b->len, v, 8);
		b->len += 8;
	}
}

void sb_bytes_put_bytes(struct sb_bytes_buf *b, const void *data, size_t n)
{
	if (n && buf_reserve(b, n) == 0) {
		memcpy(b->data + b->len, data, n);
		b->len += n;
	}
}

void sb_bytes_put_str(struct sb_bytes_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > UINT32_MAX) {
		b->err = EOVERFLOW;
		return;
	}
	sb_bytes_put_u32(b, (uint32_t)n);
	if (n && buf_reserve(b, n) == 0) {
		memcpy(b->data + b->len, s, n);
		b->len += n;
	}
}

size_t sb_bytes_rec_begin(struct sb_bytes_buf *b)
{
	size_t start = b->len;

	sb_bytes_put_u32(b, 0);
	return start;
}

void sb_bytes_rec_end(struct sb_bytes_buf *b, size_t start)
{
	size_t n;

	if (b->err)
		return;
	n = b->len - start - 4;
	if (n > UINT32_MAX)
		b->err = EOVERFLOW;
	else
		put_le(b->data + start, n, 4);
}

/* ---- payload parsing ---- */

static const unsigned char *cur_need(struct sb_bytes_cur *c, uint64_t n)
{
	const unsigned char *p;

	if (c->bad || n > sb_bytes_left(c)) {
		c->bad = 1;
		return NULL;
	}
	p = c->p + c->pos;
	c->pos += n;
	return p;
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint32_t sb_bytes_get_u32(struct sb_bytes_cur *c)
{
	const unsigned char *p = cur_need(c, 4);

	return p ? (uint32_t)get_le(p, 4) : 0;
}

uint64_t sb_bytes_get_u64(struct sb_bytes_cur *c)
{
	const unsigned char *p = cur_need(c, 8);

	return p ? get_le(p, 8) : 0;
}

char *sb_bytes_get_str(struct sb_bytes_cur *c, int empty_is_null)
{
	uint32_t n = sb_bytes_get_u32(c);
	const unsigned char *p = cur_need(c, n);
	char *s;

	if (!p || (empty_is_null && n == 0))
		return NULL;
	/* A C string cannot hold a NUL: such bytes were never written. */
	if (memchr(p, 0, n)) {
		c->bad = 1;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		c->nomem = 1;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

void sb_bytes_take(struct sb_bytes_cur *c, uint64_t len, struct sb_bytes_cur *sub)
{
	const unsigned char *p = cur_need(c, len);

	memset(sub, 0, sizeof(*sub));
	sub->p = p;
	sub->len = p ? (size_t)len : 0;
	sub->bad = !p;
}

/* ---- atomic output ---- */

#define OUT_BUFSZ (64 * 1024)

/* Owner only, as `perf record` makes perf.data: a profile holds the
 * command line, paths and timings of the recorded program, and root
 * writes most of them.  The temporary file has it from its creation, so
 * the data is never readable by others, not even before the rename. */
#define SB_BYTES_OUT_MODE 0600

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void out_flush(struct sb_bytes_out *o)
{
	if (!o->err && o->used)
		o->err = write_all(o->fd, o->buf, o->used);
	o->used = 0;
}

void sb_bytes_out_write(struct sb_bytes_out *o, const void *data, size_t len)
{
	if (o->err || len == 0)
		return;
	if (len > OUT_BUFSZ - o->used)
		out_flush(o);
	if (len >= OUT_BUFSZ) {
		if (!o->err)
			o->err = write_all(o->fd, data, len);
		return;
	}
	memcpy(o->buf + o->used, data, len);
	o->used += len;
}

/* "<path>.tmp.<pid>.<counter>.<ns>": the pid and counter keep concurrent
 * writers apart, the clock keeps a reused pid from a stale name. */
static char *tmp_name(const struct sb_bytes_out *o)
{
	static atomic_uint counter;
	struct timespec ts;
	char *s;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (asprintf(&s, "%s.tmp.%ld.%x.%lx", o->path, (long)getpid(),
		     atomic_fetch_add(&counter, 1), (unsigned long)ts.tv_nsec) < 0)
		return NULL;
	return s;
}

/* Creates and names the temporary file when O_TMPFILE is unavailable. */
static int open_named_tmp(struct sb_bytes_out *o)
{
	for (int tries = 0; tries < 100; tries++) {
		o->tmp = tmp_name(o);
		if (!o->tmp)
			return -1;
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			     SB_BYTES_OUT_MODE);
		if (o->fd >= 0)
			return 0;
		free(o->tmp);
		o->tmp = NULL;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

int sb_bytes_out_open(struct sb_bytes_out *o, const char *path)
{
	int e;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = path;
	o->buf = malloc(OUT_BUFSZ);
	o->dir = dir_of(path);
	if (!o->buf || !o->dir) {
		errno = ENOMEM;
		goto fail;
	}
	/* Linking an O_TMPFILE file needs /proc (or CAP_DAC_READ_SEARCH). */
	if (access("/proc/self/fd", X_OK) == 0) {
		o->fd = open(o->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, SB_BYTES_OUT_MODE);
		if (o->fd >= 0) {
			o->anon = 1;
			return 0;
		}
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			goto fail;
	}
	if (open_named_tmp(o) == 0)
		return 0;
fail:
	e = errno;
	sb_bytes_out_abort(o);
	errno = e;
	return -1;
}

static int link_tmp(struct sb_bytes_out *o)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int tries = 0; tries < 100; tries++) {
		o->tmp = tmp_name(o);
		if (!o->tmp)
			return ENOMEM;
		if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		free(o->tmp);
		o->tmp = NULL;
		if (errno != EEXIST)
			return errno;
	}
	return EEXIST;
}

/* Makes the rename itself durable; the data already is, so failure here
 * is not reported. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int sb_bytes_out_commit(struct sb_bytes_out *o)
{
	int e;

	out_flush(o);
	if (!o->err && fsync(o->fd) < 0)
		o->err = errno;
	if (!o->err && o->anon)
		o->err = link_tmp(o);
	/* close() can report a deferred write error (NFS). */
	if (close(o->fd) < 0 && !o->err)
		o->err = errno;
	o->fd = -1;
	if (!o->err && rename(o->tmp, o->path) < 0)
		o->err = errno;
	if (o->err) {
		e = o->err;
		sb_bytes_out_abort(o);
		errno = e;
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	sync_dir(o->dir);
	sb_bytes_out_abort(o);
	return 0;
}

void sb_bytes_out_abort(struct sb_bytes_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->dir);
	free(o->buf);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

/* ---- input ---- */

static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "of an unknown type";
}

/* Why a non-regular file is refused, with the errno slurp reports. */
static int not_regular(mode_t m, char *why, size_t whylen)
{
	if (S_ISDIR(m))
		sb_bytes_seterr(why, whylen, "it is a directory");
	else
		sb_bytes_seterr(why, whylen, "it is %s, not a regular file", kind_of(m));
	return S_ISDIR(m) ? EISDIR : EINVAL;
}

int sb_bytes_read_file(const char *path, int oflags, unsigned char **data, size_t *len,
		       char *why, size_t whylen)
{
	unsigned char *buf = NULL;
	size_t n = 0, size;
	struct stat st;
	int fd, e, fl;

	*data = NULL;
	*len = 0;
	sb_bytes_seterr(why, whylen, "%s", "");
	/* Looked at before opening: opening a device can have effects of its
	 * own (a tape rewinds, a tty becomes the controlling one). */
	if (((oflags & O_NOFOLLOW) ? lstat(path, &st) : stat(path, &st)) == 0 &&
	    !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		e = not_regular(st.st_mode, why, whylen);
		errno = e;
		return -1;
	}
	/* O_NONBLOCK: a FIFO swapped in since the stat() must not block the
	 * open waiting for a writer; fstat() below refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (oflags & O_NOFOLLOW));
	if (fd < 0) {
		e = errno;
		if (e == ELOOP && (oflags & O_NOFOLLOW))
			sb_bytes_seterr(why, whylen, "it is a symbolic link");
		else
			sb_bytes_seterr(why, whylen, "%s", strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0)
		goto fail_errno;
	if (!S_ISREG(st.st_mode)) {
		e = not_regular(st.st_mode, why, whylen);
		goto fail;
	}
	if ((uint64_t)st.st_size > SB_BYTES_MAX_FILE) {
		sb_bytes_seterr(why, whylen, "larger than %" PRIu64 " GiB",
				SB_BYTES_MAX_FILE >> 30);
		e = EFBIG;
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto fail_errno;
	/* Never more than the size fstat() gave: what a file says about
	 * itself cannot make this allocate more than it holds.  A file that
	 * grows meanwhile is read as it was. */
	size = (size_t)st.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		errno = ENOMEM;
		goto fail_errno;
	}
	while (n < size) {
		ssize_t r = read(fd, buf + n, size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail_errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*data = buf;
	*len = n;
	return 0;
fail_errno:
	e = errno;
	sb_bytes_seterr(why, whylen, "%s", strerror(e));
fail:
	free(buf);
	close(fd);
	errno = e;
	return -1;
}

int sb_bytes_slurp(const char *path, unsigned char **data, size_t *len)
{
	return sb_bytes_read_file(path, 0, data, len, NULL, 0);
}
