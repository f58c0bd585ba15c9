/* chip_phases SMALL_KB LARGE_KB REFS [THREADS]
 *
 * A serial program in two phases, the CHiP paper's setting (a region of
 * serial code profiled before it is parallelized): a driver runs the
 * phases of a table one after the other, each REFS random 8-byte reads
 * of an array of its own, SMALL_KB then LARGE_KB.  The hit ratio of an
 * LRU cache of C bytes for each phase is C / W below its W, then all but
 * the first touch of each line: `record --region phase_small --region
 * phase_large` must give each function that curve; the whole run mixes
 * them.  With THREADS > 1 (default 1) the same phases run in that many
 * threads, each on arrays of its own.  Prints nothing on stdout.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

struct phase_arg {
	uint64_t *a;
	size_t words;
	unsigned long refs;
	uint64_t seed, sum;
};

uint64_t phase_small(struct phase_arg *g);
uint64_t phase_large(struct phase_arg *g);

/* xorshift64: the next random word index */
static inline size_t next_index(uint64_t *x, size_t words)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x % words;
}

/* a sum of random words */
uint64_t phase_small(struct phase_arg *g)
{
	uint64_t x = g->seed, s = 0;

	for (unsigned long i = 0; i < g->refs; i++)
		s += g->a[next_index(&x, g->words)];
	return s;
}

/* their largest */
uint64_t phase_large(struct phase_arg *g)
{
	uint64_t x = g->seed, m = 0, v;

	for (unsigned long i = 0; i < g->refs; i++)
		if ((v = g->a[next_index(&x, g->words)]) > m)
			m = v;
	return m;
}

static unsigned long kbs[2], refs;

/* the driver's table (a program may swap in other kernels) */
uint64_t (*phases[2])(struct phase_arg *) = { phase_small, phase_large };

static void *worker(void *v)
{
	uint64_t *sum = v;

	for (int p = 0; p < 2; p++) {
		struct phase_arg g = { .words = kbs[p] * 1024 / 8, .refs = refs,
				       .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(p + 1) };

		if (!(g.a = malloc(g.words * 8)))
			exit(1);
		memset(g.a, 1, g.words * 8);
		*sum += phases[p](&g);
		free(g.a);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long threads = 1;
	uint64_t sums[64] = { 0 }, total = 0;
	pthread_t t[64];

	if ((argc != 4 && argc != 5) || sb_parse_ul(argv[1], 1, 1ul << 22, &kbs[0]) ||
	    sb_parse_ul(argv[2], 1, 1ul << 22, &kbs[1]) ||
	    sb_parse_ul(argv[3], 1, 1ul << 40, &refs) ||
	    (argc == 5 && sb_parse_ul(argv[4], 1, 64, &threads))) {
		fprintf(stderr, "usage: %s SMALL_KB LARGE_KB REFS [THREADS]\n", argv[0]);
		return 2;
	}
	if (threads == 1) {
		worker(&sums[0]);
	} else {
		for (unsigned long i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, &sums[i]))
				return 1;
		for (unsigned long i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	}
	for (unsigned long i = 0; i < threads; i++)
		total += sums[i];
	return total == 42;   /* keeps the sums */
}
