/* SPDX-License-Identifier: MIT */
/*
 * A protocol-buffers writer, as much of the wire format as pprof's
 * profile.proto needs: varints (wire type 0) and length-delimited fields
 * (wire type 2: bytes, strings, nested messages, packed repeated
 * varints).  A nested message is written into a buffer of its own and
 * appended whole (its length first).  Out of memory is sticky: every
 * later call does nothing and sb_pb_ok() says so.
 */
#ifndef SB_PB_H
#define SB_PB_H

#include <stddef.h>
#include <stdint.h>

struct sb_pb {
	uint8_t *b;
	size_t n, cap;
	int oom;
};

void sb_pb_init(struct sb_pb *p);
void sb_pb_free(struct sb_pb *p);
/* Empties it for reuse (the memory kept). */
void sb_pb_reset(struct sb_pb *p);
int sb_pb_ok(const struct sb_pb *p);

/* field = v as a varint (int64 and uint64 alike: two's complement);
 * written even when 0 (a repeated field's element may be). */
void sb_pb_varint_field(struct sb_pb *p, unsigned field, uint64_t v);
/* field = v unless v is 0 (proto3: 0 is the default, not written). */
void sb_pb_u64(struct sb_pb *p, unsigned field, uint64_t v);
void sb_pb_bytes(struct sb_pb *p, unsigned field, const void *d, size_t n);
void sb_pb_str(struct sb_pb *p, unsigned field, const char *s);
/* field = the message `sub` holds. */
void sb_pb_msg(struct sb_pb *p, unsigned field, const struct sb_pb *sub);
/* field = v[0..n) packed (one length-delimited run of varints). */
void sb_pb_packed(struct sb_pb *p, unsigned field, const uint64_t *v, size_t n);

#endif
