// SPDX-License-Identifier: MIT
/*
 * The protocol-buffers writer of the pprof export (user/report/export/
 * pb.h) against the wire format's published examples (protobuf.dev,
 * "Encoding"): 150 as field 1 is 08 96 01; "testing" as field 2 is 12 07
 * 74 65 73 74 69 6e 67; that first message nested as field 3 is 1a 03 08
 * 96 01; [3, 270, 86942] packed as field 4 is 22 06 03 8e 02 9e a7 05.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "report/export/pb.h"

static int same(const struct sb_pb *p, const uint8_t *want, size_t n)
{
	return sb_pb_ok(p) && p->n == n && !memcmp(p->b, want, n);
}

int main(void)
{
	static const uint8_t f1[] = { 0x08, 0x96, 0x01 };
	static const uint8_t f2[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	static const uint8_t f3[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	static const uint8_t f4[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };
	static const uint8_t big[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0x01 };
	static const uint8_t zero[] = { 0x08, 0x00 };
	const uint64_t packed[] = { 3, 270, 86942 };
	struct sb_pb p, sub;

	sb_pb_init(&p);
	sb_pb_init(&sub);
	sb_pb_u64(&p, 1, 150);
	CHECK(same(&p, f1, sizeof(f1)), "150 as field 1");
	sb_pb_reset(&p);
	sb_pb_str(&p, 2, "testing");
	CHECK(same(&p, f2, sizeof(f2)), "a string as field 2");
	sb_pb_u64(&sub, 1, 150);
	sb_pb_reset(&p);
	sb_pb_msg(&p, 3, &sub);
	CHECK(same(&p, f3, sizeof(f3)), "a nested message as field 3");
	sb_pb_reset(&p);
	sb_pb_packed(&p, 4, packed, 3);
	CHECK(same(&p, f4, sizeof(f4)), "packed varints as field 4");
	sb_pb_reset(&p);
	sb_pb_u64(&p, 1, UINT64_MAX);
	CHECK(same(&p, big, sizeof(big)), "2^64 - 1: ten bytes (int64 -1 alike)");
	sb_pb_reset(&p);
	sb_pb_u64(&p, 1, 0);
	CHECK(p.n == 0, "0 is proto3's default: not written");
	sb_pb_varint_field(&p, 1, 0);
	CHECK(same(&p, zero, sizeof(zero)), "an explicit 0");
	/* growth past the first buffer keeps every byte */
	sb_pb_reset(&p);
	for (int i = 0; i < 1000; i++)
		sb_pb_str(&p, 2, "testing");
	CHECK(sb_pb_ok(&p) && p.n == 9000 && !memcmp(p.b + 8991, f2, sizeof(f2)),
	      "1000 strings: %zu bytes", p.n);
	/* a nested message that ran out of memory spoils its parent */
	sub.oom = 1;
	sb_pb_msg(&p, 3, &sub);
	CHECK(!sb_pb_ok(&p), "out of memory is sticky");
	sb_pb_free(&p);
	sb_pb_free(&sub);
	return CHECK_DONE("test_pb");
}
