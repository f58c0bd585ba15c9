/* SPDX-License-Identifier: MIT */
/* The profile's fast CRC-32 (profile_crc.c) gives sb_bytes_crc32's
 * values: the standard check value, every length and alignment up to a
 * few words, and chained in pieces as the chunk framing uses it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profile/profile_priv.h"

int main(void)
{
	static unsigned char buf[4096 + 16];
	uint32_t seed = 12345;

	CHECK(sb_pfmt_crc32(0, "123456789", 9) == 0xCBF43926u, "check value %#x",
	      sb_pfmt_crc32(0, "123456789", 9));
	CHECK(sb_pfmt_crc32(0, "", 0) == 0, "empty");
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len < 80; len++)
			CHECK(sb_pfmt_crc32(0, buf + off, len) == sb_bytes_crc32(0, buf + off, len),
			      "offset %zu length %zu", off, len);
	CHECK(sb_pfmt_crc32(0, buf, 4096) == sb_bytes_crc32(0, buf, 4096), "4 KiB");
	/* chained: a 16-byte header, then the payload */
	for (size_t cut = 0; cut < 40; cut += 3)
		CHECK(sb_pfmt_crc32(sb_pfmt_crc32(0, buf, cut), buf + cut, 1000 - cut) ==
		      sb_bytes_crc32(0, buf, 1000), "cut at %zu", cut);
	return CHECK_DONE("test_profile_crc");
}
