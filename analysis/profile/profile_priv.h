/* SPDX-License-Identifier: MIT */
/*
 * Private to the profile module: the chunk codecs and the framing behind
 * sb_profile_read() and sb_profile_write() (profile.h).  profile_format.c
 * holds the one table of chunk types and the codecs of the required
 * chunks; the optional chunks' codecs live beside it, one file per
 * family: profile_vectors.c (EVENTS, VECTORS, CFGS) and profile_addrs.c
 * (ADDRS).  The byte helpers are util/bytes.h; they know no chunk.
 */
#ifndef SB_PROFILE_PRIV_H
#define SB_PROFILE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "util/bytes.h"

/* ---- profile_vectors.c: EVENTS, VECTORS, CFGS, one record each ---- */
void sb_pfmt_enc_event(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_event(struct sb_bytes_cur *c, void *elem);
void sb_pfmt_enc_vector(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_vector(struct sb_bytes_cur *c, void *elem);
void sb_pfmt_enc_cfg(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_cfg(struct sb_bytes_cur *c, void *elem);
/* Their cross references; returns the bad chunk's type, or 0. */
uint32_t sb_pfmt_check_vector_refs(const struct sb_profile *p, char *why, size_t len);

/* ---- profile_addrs.c: ADDRS ---- */
/* A record's bytes in version 1 (its layout: profile_addrs.c). */
#define SB_ADDR_REC_SIZE 44
void sb_pfmt_enc_addr(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_addr(struct sb_bytes_cur *c, void *elem);
/* loc and instance indices; returns SB_CHUNK_ADDRS with why, or 0. */
uint32_t sb_pfmt_check_addr_refs(const struct sb_profile *p, char *why, size_t len);

/* ---- profile_stack.c: STACK ---- */
void sb_pfmt_enc_stack(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_stack(struct sb_bytes_cur *c, void *elem);
uint32_t sb_pfmt_check_stack(const struct sb_profile *p, char *why, size_t len);

/* ---- profile_chip.c: CHIP ---- */
void sb_pfmt_enc_chip(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_chip(struct sb_bytes_cur *c, void *elem);
/* Sections, modes and shapes in range; SB_CHUNK_CHIP with why, or 0. */
uint32_t sb_pfmt_check_chip(const struct sb_profile *p, char *why, size_t len);

/* ---- profile_sharing.c: SHARING ---- */
void sb_pfmt_enc_sharing(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i);
void sb_pfmt_dec_sharing(struct sb_bytes_cur *c, void *elem);
/* Kinds, modes and locs in range; returns SB_CHUNK_SHARING with why, or 0. */
uint32_t sb_pfmt_check_sharing(const struct sb_profile *p, char *why, size_t len);

/* ---- profile_format.c: chunk payloads and framing ---- */

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
