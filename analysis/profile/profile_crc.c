// SPDX-License-Identifier: MIT
/*
 * The CRC-32 of the profile's chunks, the same function as
 * sb_bytes_crc32 (IEEE 802.3, reflected 0xEDB88320, chainable) eight
 * bytes a step ("slicing-by-8"): a 100,000-instance profile is ~10 MB,
 * which the byte-at-a-time table loop took ~20 ms to cover, on the
 * path from the target's exit to the profile on disk (issue 11), and
 * again in every report that reads it.
 */
#include "profile_priv.h"

#include <pthread.h>
#include <string.h>

static uint32_t tab[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
		tab[0][i] = c;
	}
	/* tab[k][i]: the CRC of byte i followed by k zero bytes. */
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			tab[k][i] = (tab[k - 1][i] >> 8) ^ tab[0][tab[k - 1][i] & 0xff];
}

uint32_t sb_pfmt_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	pthread_once(&tab_once, tab_init);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo, hi;

		/* little-endian loads (x86-64, the tool's platform; the bytes
		 * are combined the same way the byte loop would take them) */
		lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
		hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
		     (uint32_t)p[7] << 24;
		lo ^= crc;
		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		      tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		      tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		      tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
