/* SPDX-License-Identifier: MIT */
/*
 * splitmix64 (Steele, Lea, Flood 2014): a small, fast generator whose
 * fixed seeds make sampled analyses reproducible run to run (the address
 * reservoir keeps the same records, LIME's k-means starts the same).
 */
#ifndef SB_UTIL_RNG_H
#define SB_UTIL_RNG_H

#include <stdint.h>

static inline uint64_t sb_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
