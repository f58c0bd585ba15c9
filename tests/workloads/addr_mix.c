/* addr_mix CHASE_MSTEPS STREAM_PASSES [NEXT_MSTEPS]
 *
 * Known truth for software address sampling: two threads, each touching
 * only its own array from its own loop function.
 *   - "chase-0" walks a random single-cycle linked list of 4 Mi 16-byte
 *     nodes (64 MiB: beyond the L3 share) for CHASE_MSTEPS million
 *     steps, in chase_loop();
 *   - "stream-0" sums a 64 MiB array of longs STREAM_PASSES times, in
 *     stream_loop().
 *   - with NEXT_MSTEPS, "next-0" walks its own such list NEXT_MSTEPS
 *     million steps in next_loop(), whose only load overwrites its own
 *     address register (p = p->next): no address can be recovered there.
 * Every load of chase_loop is inside the node array, every load of
 * stream_loop inside the long array.  Before the loops start, each thread
 * writes one line "chase|stream TID LO HI" (hex [LO, HI) of its array) to
 * the file named by SB_ADDR_TRUTH, or to stdout without it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "work.h"

#define NODES (1ul << 22)
#define LONGS (8ul << 20)

struct node {
	struct node *next;
	long val;
};

static unsigned long chase_steps, stream_passes, next_steps;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long sink;

static void truth(const char *kind, const void *lo, const void *hi)
{
	const char *path = getenv("SB_ADDR_TRUTH");
	FILE *f = path ? fopen(path, "a") : stdout;

	if (!f) {
		perror(path);
		exit(1);
	}
	pthread_mutex_lock(&truth_lock);
	fprintf(f, "%s %d %#lx %#lx\n", kind, gettid(), (unsigned long)lo,
		(unsigned long)hi);
	fflush(f);
	pthread_mutex_unlock(&truth_lock);
	if (path)
		fclose(f);
}

static SB_NOINLINE long chase_loop(const struct node *p, unsigned long steps)
{
	long s = 0;

	while (steps--) {
		s += p->val;
		p = p->next;
	}
	return s;
}

static SB_NOINLINE const struct node *next_loop(const struct node *p, unsigned long steps)
{
	while (steps--)
		p = p->next;
	return p;
}

static SB_NOINLINE long stream_loop(const long *a, unsigned long n)
{
	long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += a[i];
	return s;
}

/* Sattolo's algorithm: one cycle through all nodes in random order, so
 * the prefetchers cannot follow it. */
static struct node *make_list(uint64_t x)
{
	struct node *a = sb_calloc(NODES, sizeof(*a));
	size_t *perm = sb_calloc(NODES, sizeof(*perm));

	for (size_t k = 0; k < NODES; k++)
		perm[k] = k;
	for (size_t k = NODES - 1; k > 0; k--) {
		size_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (size_t)(x % k);
		t = perm[k];
		perm[k] = perm[j];
		perm[j] = t;
	}
	for (size_t k = 0; k < NODES; k++) {
		a[perm[k]].next = &a[perm[(k + 1) % NODES]];
		a[perm[k]].val = (long)k;
	}
	free(perm);
	return a;
}

static void *chase_main(void *arg)
{
	struct node *a;

	(void)arg;
	sb_name_thread("chase", 0);
	a = make_list(0x9e3779b97f4a7c15ull);
	truth("chase", a, a + NODES);
	sink = chase_loop(a, chase_steps * 1000000ul);
	free(a);
	return NULL;
}

static void *next_main(void *arg)
{
	struct node *a;

	(void)arg;
	sb_name_thread("next", 0);
	a = make_list(0x243f6a8885a308d3ull);
	truth("next", a, a + NODES);
	sink = (long)next_loop(a, next_steps * 1000000ul);
	free(a);
	return NULL;
}

static void *stream_main(void *arg)
{
	long *b = sb_calloc(LONGS, sizeof(*b));
	long s = 0;

	(void)arg;
	sb_name_thread("stream", 0);
	for (size_t k = 0; k < LONGS; k++)
		b[k] = (long)k;
	truth("stream", b, b + LONGS);
	for (unsigned long i = 0; i < stream_passes; i++) {
		/* stream_loop is pure: without the clobber gcc calls it once */
		__asm__ volatile("" : : : "memory");
		s += stream_loop(b, LONGS);
	}
	sink = s;
	free(b);
	return NULL;
}

static void *run(void *arg)
{
	static void *(*const mains[])(void *) = { chase_main, stream_main, next_main };

	return mains[*(const int *)arg](NULL);
}

int main(int argc, char **argv)
{
	int kinds[3] = { 0, 1, 2 };

	if ((argc != 3 && argc != 4) || sb_parse_ul(argv[1], 1, 100000, &chase_steps) ||
	    sb_parse_ul(argv[2], 1, 1000000, &stream_passes) ||
	    (argc == 4 && sb_parse_ul(argv[3], 1, 100000, &next_steps))) {
		fprintf(stderr, "usage: %s CHASE_MSTEPS STREAM_PASSES [NEXT_MSTEPS]\n"
			"  CHASE_MSTEPS 1..100000 (million list steps), "
			"STREAM_PASSES 1..1000000 (passes over 64 MiB),\n"
			"  NEXT_MSTEPS 1..100000 (million steps of a self-clobbering "
			"chase in a third thread)\n", argv[0]);
		return 2;
	}
	sb_run_threads(next_steps ? 3 : 2, run, kinds, sizeof(kinds[0]));
	return 0;
}
