/* SPDX-License-Identifier: MIT */
/*
 * The one address search: symbols, mappings and CFG blocks are all
 * arrays of structs sorted by a u64 start address, and each lookup wants
 * the last element starting at or below an address.
 */
#ifndef SB_UTIL_SEARCH_H
#define SB_UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * How many of the n elements (each elem_size bytes from base, with a u64
 * at start_off, ascending) start at or below addr: the candidate that may
 * contain addr is the one before that index (none when 0).
 */
static inline size_t sb_search_starts(const void *base, size_t n, size_t elem_size,
				      size_t start_off, uint64_t addr)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, b + mid * elem_size + start_off, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* sb_search_starts over an array `arr` of n structs with a u64 `field`. */
#define SB_SEARCH_STARTS(arr, n, field, addr)                                      \
	sb_search_starts((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), \
			 (addr))

#endif
