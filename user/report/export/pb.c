// SPDX-License-Identifier: MIT
/* A protocol-buffers writer (pb.h). */
#include "pb.h"

#include <stdlib.h>
#include <string.h>

void sb_pb_init(struct sb_pb *p)
{
	memset(p, 0, sizeof(*p));
}

void sb_pb_free(struct sb_pb *p)
{
	free(p->b);
	sb_pb_init(p);
}

void sb_pb_reset(struct sb_pb *p)
{
	p->n = 0;
}

int sb_pb_ok(const struct sb_pb *p)
{
	return !p->oom;
}

static int room(struct sb_pb *p, size_t more)
{
	size_t cap = p->cap ? p->cap : 256;
	uint8_t *b;

	if (p->oom)
		return 0;
	if (p->n + more <= p->cap)
		return 1;
	while (cap < p->n + more) {
		if (cap > SIZE_MAX / 2) {
			p->oom = 1;
			return 0;
		}
		cap *= 2;
	}
	if (!(b = realloc(p->b, cap))) {
		p->oom = 1;
		return 0;
	}
	p->b = b;
	p->cap = cap;
	return 1;
}

static void varint(struct sb_pb *p, uint64_t v)
{
	if (!room(p, 10))
		return;
	while (v >= 0x80) {
		p->b[p->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p->b[p->n++] = (uint8_t)v;
}

static void tag(struct sb_pb *p, unsigned field, unsigned wire)
{
	varint(p, (uint64_t)field << 3 | wire);
}

void sb_pb_varint_field(struct sb_pb *p, unsigned field, uint64_t v)
{
	tag(p, field, 0);
	varint(p, v);
}

void sb_pb_u64(struct sb_pb *p, unsigned field, uint64_t v)
{
	if (v)
		sb_pb_varint_field(p, field, v);
}

void sb_pb_bytes(struct sb_pb *p, unsigned field, const void *d, size_t n)
{
	tag(p, field, 2);
	varint(p, n);
	if (n && room(p, n)) {
		memcpy(p->b + p->n, d, n);
		p->n += n;
	}
}

void sb_pb_str(struct sb_pb *p, unsigned field, const char *s)
{
	sb_pb_bytes(p, field, s, strlen(s));
}

void sb_pb_msg(struct sb_pb *p, unsigned field, const struct sb_pb *sub)
{
	if (sub->oom)
		p->oom = 1;
	else
		sb_pb_bytes(p, field, sub->b, sub->n);
}

void sb_pb_packed(struct sb_pb *p, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];

		do {
			len++;
			x >>= 7;
		} while (x);
	}
	tag(p, field, 2);
	varint(p, len);
	for (size_t i = 0; i < n; i++)
		varint(p, v[i]);
}
