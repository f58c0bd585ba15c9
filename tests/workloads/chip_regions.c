/* chip_regions SMALL_KB LARGE_KB STEPS SMALL_REFS LARGE_REFS
 *
 * A time-stepped OpenMP program with two parallel regions of different
 * cache behaviour: each of STEPS steps runs a region of SMALL_REFS random
 * 8-byte reads per thread over a shared array of SMALL_KB, then one of
 * LARGE_REFS over a shared array of LARGE_KB (a cache's reads are faster:
 * more of them make regions of like length).  The footprint of a window inside either
 * region is at most its array (all of it once the window is long: the
 * threads read every line within a few milliseconds), so a recording's
 * per-section cache profiles must tell the two apart where the whole
 * run's mixes them.  Threads from OMP_NUM_THREADS.  Prints nothing on
 * stdout.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

static inline size_t next_index(uint64_t *x, size_t words)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x % words;
}

static uint64_t *array_of(unsigned long kb)
{
	uint64_t *a = malloc(kb * 1024);

	if (!a) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(a, 1, kb * 1024);
	return a;
}

int main(int argc, char **argv)
{
	unsigned long small_kb, large_kb, steps, small_refs, large_refs;
	uint64_t *small, *large, total = 0;

	if (argc != 6 || sb_parse_ul(argv[1], 1, 1ul << 22, &small_kb) ||
	    sb_parse_ul(argv[2], 1, 1ul << 22, &large_kb) ||
	    sb_parse_ul(argv[3], 1, 1ul << 30, &steps) ||
	    sb_parse_ul(argv[4], 1, 1ul << 40, &small_refs) ||
	    sb_parse_ul(argv[5], 1, 1ul << 40, &large_refs)) {
		fprintf(stderr, "usage: %s SMALL_KB LARGE_KB STEPS SMALL_REFS LARGE_REFS\n"
			"  random reads per thread per region; threads from "
			"OMP_NUM_THREADS\n", argv[0]);
		return 2;
	}
	small = array_of(small_kb);
	large = array_of(large_kb);
	for (unsigned long s = 0; s < steps; s++) {
#pragma omp parallel reduction(+ : total) /* SITE:small */
		{
			uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(omp_get_thread_num() + 1) + s;
			size_t words = small_kb * 1024 / 8;

			for (unsigned long i = 0; i < small_refs; i++)
				total += small[next_index(&x, words)];
		}
#pragma omp parallel reduction(+ : total) /* SITE:large */
		{
			uint64_t x = 0xbf58476d1ce4e5b9ull * (uint64_t)(omp_get_thread_num() + 1) + s;
			size_t words = large_kb * 1024 / 8;

			for (unsigned long i = 0; i < large_refs; i++)
				total += large[next_index(&x, words)];
		}
	}
	free(small);
	free(large);
	return total == 42;   /* keeps the sums */
}
