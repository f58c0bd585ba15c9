/* SPDX-License-Identifier: MIT */
/*
 * The byte level of scalebpf's files (the profile's chunks, serialized
 * CFGs): CRC-32, little-endian payload building and bounds-checked
 * parsing, atomic file output and whole-file input.  They know nothing of
 * any layout; the profile's chunk codecs are profile/profile_priv.h.
 */
#ifndef SB_UTIL_BYTES_H
#define SB_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320): start with crc = 0; a
 * buffer in pieces, each call given the last one's result, gives the
 * CRC of the whole. */
uint32_t sb_bytes_crc32(uint32_t crc, const void *buf, size_t len);

/*
 * A growable output buffer.  Failures are sticky (errno-style code in
 * err) so encoders can append without checking every call.
 */
struct sb_bytes_buf {
	unsigned char *data;
	size_t len, cap;
	int err;
};

void sb_bytes_buf_free(struct sb_bytes_buf *b);
void sb_bytes_put_u32(struct sb_bytes_buf *b, uint32_t v);
void sb_bytes_put_u64(struct sb_bytes_buf *b, uint64_t v);
/* NULL is written as the empty string. */
void sb_bytes_put_str(struct sb_bytes_buf *b, const char *s);
void sb_bytes_put_bytes(struct sb_bytes_buf *b, const void *data, size_t n);
/* A record is a u32 length followed by its fields: begin returns the
 * position of the length, end patches it. */
size_t sb_bytes_rec_begin(struct sb_bytes_buf *b);
void sb_bytes_rec_end(struct sb_bytes_buf *b, size_t start);

/*
 * A read cursor over untrusted bytes.  Reading past the end sets bad and
 * yields zeros/NULL, so a decoder checks once per record.
 */
struct sb_bytes_cur {
	const unsigned char *p;
	size_t len, pos;
	int bad;     /* short or malformed */
	int nomem;
};

static inline size_t sb_bytes_left(const struct sb_bytes_cur *c)
{
	return c->len - c->pos;
}

uint32_t sb_bytes_get_u32(struct sb_bytes_cur *c);
uint64_t sb_bytes_get_u64(struct sb_bytes_cur *c);
/* Returns a malloc'ed copy; NULL for "" when empty_is_null, or on error. */
char *sb_bytes_get_str(struct sb_bytes_cur *c, int empty_is_null);
/* Carves the next len bytes into sub (empty and bad if they are missing). */
void sb_bytes_take(struct sb_bytes_cur *c, uint64_t len, struct sb_bytes_cur *sub);

/* Atomic output: a temporary file in the target directory renamed over
 * the target on commit.  The file is created 0600 (owner only, whatever
 * the umask, as perf.data is); a file it replaces does not lend it its
 * mode. */
struct sb_bytes_out {
	int fd;
	int anon;          /* O_TMPFILE: no name until commit */
	char *tmp;         /* temporary name once one exists */
	char *dir;
	const char *path;
	unsigned char *buf;
	size_t used;
	int err;           /* first errno, sticky */
};

/* Return 0, or -1 with errno set (and the output cleaned up). */
int sb_bytes_out_open(struct sb_bytes_out *o, const char *path);
void sb_bytes_out_write(struct sb_bytes_out *o, const void *data, size_t len);
int sb_bytes_out_commit(struct sb_bytes_out *o);
void sb_bytes_out_abort(struct sb_bytes_out *o);

/* Files above this size are refused by sb_bytes_read_file(). */
#define SB_BYTES_MAX_FILE ((uint64_t)4 << 30)

/*
 * Reads a whole regular file (following symbolic links unless oflags has
 * O_NOFOLLOW, the only flag it takes).  Directories, FIFOs, devices and
 * sockets are refused without reading or blocking, and the buffer is
 * never larger than the size fstat() gives, so no input can make it
 * allocate more than the file holds.  Returns 0, or -1 with errno set
 * (EISDIR, EINVAL for other non-regular files, ELOOP for a link refused,
 * EFBIG over SB_BYTES_MAX_FILE) and the reason in why (may be NULL).
 */
int sb_bytes_read_file(const char *path, int oflags, unsigned char **data, size_t *len,
		       char *why, size_t whylen);
/* sb_bytes_read_file(path, 0, ...) without the reason. */
int sb_bytes_slurp(const char *path, unsigned char **data, size_t *len);

void sb_bytes_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * struct sb_profile keeps no capacities, so an array's capacity is
 * implied by its length: 0, then 8, 16, 32...  Appending reallocates only
 * when the length is 0 or a power of two from 8 up, and the reader
 * allocates the same way so a loaded profile can grow too.
 */
static inline size_t sb_bytes_cap_for(size_t n)
{
	size_t c = 8;

	if (n == 0)
		return 0;
	while (c < n)
		c *= 2;
	return c;
}

#endif
