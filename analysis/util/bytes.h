/* SPDX-License-Identifier: MIT */
/*
 * Private to the profile module (profile.c, profile_format.c,
 * profile_io.c).  profile_io.c holds the byte-level helpers: CRC-32,
 * little-endian payload building and bounds-checked parsing, atomic file
 * output and whole-file input; they know nothing of the chunk layouts.
 */
#ifndef SB_UTIL_BYTES_H
#define SB_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320); start with crc = 0. */
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
 * the target on commit. */
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

/* Files above this size are refused by sb_bytes_slurp(). */
#define SB_PIO_MAX_FILE ((uint64_t)4 << 30)

/* Reads a whole file.  Returns 0, or -1 with errno set (EFBIG when the
 * file is over SB_PIO_MAX_FILE). */
int sb_bytes_slurp(const char *path, unsigned char **data, size_t *len);

void sb_bytes_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Codecs of the optional chunks (profile_vectors.c), one record each. */
struct sb_profile;
void sb_pfmt_enc_event(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_event(struct sb_bytes_cur *c, void *elem);
void sb_pfmt_enc_vector(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_vector(struct sb_bytes_cur *c, void *elem);
void sb_pfmt_enc_cfg(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_cfg(struct sb_bytes_cur *c, void *elem);
/* Their cross references; returns the bad chunk's type, or 0. */
uint32_t sb_pfmt_check_vector_refs(const struct sb_profile *p, char *why, size_t len);

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

/* ---- profile_format.c: chunk payloads and framing ---- */

struct sb_profile;

/* What the writer relies on (counts fit a u32, per_thread arrays exist,
 * indices in range).  Returns 0, or -1 with the reason in why. */
int sb_pfmt_check(const struct sb_profile *p, char *why, size_t len);
/* Header, chunks and END trailer; returns 0 or an errno value. */
int sb_pfmt_write(const struct sb_profile *p, struct sb_bytes_out *o);
/* Decodes a whole file image into the empty profile p; returns an
 * enum sb_status with a message in err.  p may be partly filled on
 * failure and is left for the caller to free. */
int sb_pfmt_parse(const unsigned char *data, size_t len, struct sb_profile *p,
		  const char *path, char *err, size_t errlen);

#endif
