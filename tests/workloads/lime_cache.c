/* lime_cache NTHREADS ITERS ACCESSES
 *
 * A planted cache-behaviour cause: every thread runs the SAME control
 * flow (ACCESSES dependent random loads per iteration), but thread i
 * chases pointers through a working set of 16 KiB << (3 * i): thread 0
 * stays in L1, the last ones miss to DRAM.  Known truth: the imbalance is
 * in how long the load at the marked cause line takes, not in how
 * often it runs.  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, accesses;

struct worker {
	unsigned long idx;
	size_t *chain;     /* a random cyclic permutation: chain[k] = next */
	size_t len;
};

/* Sattolo's algorithm: one cycle through every slot, in random order,
 * so the hardware prefetchers cannot follow it. */
static void make_chain(struct worker *w)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ w->idx;

	for (size_t k = 0; k < w->len; k++)
		w->chain[k] = k;
	for (size_t k = w->len - 1; k > 0; k--) {
		size_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (size_t)(x % k);
		t = w->chain[k];
		w->chain[k] = w->chain[j];
		w->chain[j] = t;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	volatile size_t sink;
	size_t p = 0;

	sb_name_thread("worker", w->idx);
	make_chain(w);
	pthread_barrier_wait(&bar);
	for (unsigned long it = 0; it < iters; it++) {
		for (unsigned long a = 0; a < accesses; a++)
			p = w->chain[p]; /* SITE:cause */
		sink = p;
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	(void)sink;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;
	struct worker *w;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 1, &nthreads, &iters, &accesses) || nthreads > 5)
		sb_thread_args_usage(argv[0], "ITERS", "ACCESSES", 1);
	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++) {
		w[i].idx = i;
		w[i].len = (16384UL << (3 * i)) / sizeof(size_t);
		w[i].chain = sb_calloc(w[i].len, sizeof(size_t));
	}
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++)
		free(w[i].chain);
	pthread_barrier_destroy(&bar);
	free(w);
	return 0;
}
