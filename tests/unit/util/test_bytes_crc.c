// SPDX-License-Identifier: MIT
/* sb_bytes_crc32 (eight bytes a step) against the CRC-32 computed one
 * bit at a time from its definition: the standard check value, every
 * length and alignment up to a few words, long buffers, and chained in
 * pieces as the profile's chunk framing uses it (a 16-byte header, then
 * the payload). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/bytes.h"

/* IEEE 802.3, reflected polynomial 0xEDB88320, bit by bit. */
static uint32_t crc_bits(const unsigned char *p, size_t len)
{
	uint32_t crc = 0xFFFFFFFFu;

	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	}
	return ~crc;
}

int main(void)
{
	static unsigned char buf[65536 + 16];
	uint32_t seed = 12345;

	CHECK(sb_bytes_crc32(0, "123456789", 9) == 0xCBF43926u, "check value %#x",
	      sb_bytes_crc32(0, "123456789", 9));
	CHECK(sb_bytes_crc32(0, "", 0) == 0, "empty");
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len < 80; len++)
			CHECK(sb_bytes_crc32(0, buf + off, len) == crc_bits(buf + off, len),
			      "offset %zu length %zu", off, len);
	CHECK(sb_bytes_crc32(0, buf + 3, 65536) == crc_bits(buf + 3, 65536), "64 KiB");
	memset(buf, 0xff, 4096);
	CHECK(sb_bytes_crc32(0, buf, 4096) == crc_bits(buf, 4096), "all ones");
	for (size_t cut = 0; cut < 40; cut += 3)
		CHECK(sb_bytes_crc32(sb_bytes_crc32(0, buf, cut), buf + cut, 1000 - cut) ==
		      crc_bits(buf, 1000), "cut at %zu", cut);
	return CHECK_DONE("test_bytes_crc");
}
