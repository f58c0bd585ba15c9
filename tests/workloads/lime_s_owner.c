/* lime_s_owner NTHREADS ITERS N
 *
 * Issue 12's "block ownership, work in a helper": an NB x NB block matrix
 * (NB = NTHREADS + NTHREADS / 2) is dealt by (I + J) % NTHREADS, so the
 * threads own unequal numbers of blocks (the same ones every iteration),
 * and every thread scans all blocks and calls the header's noinline
 * lime_s_block(N) on its own: the helper's loop runs exactly owned x N
 * times per thread.  Known truth: the ownership test on the marked cause
 * line.  Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lime_s_work.h"

static pthread_barrier_t bar;
static long nthreads, iters, n, nb;
static double *blocks;

static void *worker(void *arg)
{
	long me = (long)arg;

	for (long it = 0; it < iters; it++) {
		for (long i = 0; i < nb; i++)
			for (long j = 0; j < nb; j++)
				if ((i + j) % nthreads == me) /* SITE:cause */
					lime_s_block(&blocks[i * nb + j], n);
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *t;

	if (argc != 4 || (nthreads = atol(argv[1])) < 1 || (iters = atol(argv[2])) < 1 ||
	    (n = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: lime_s_owner NTHREADS ITERS N\n");
		return 2;
	}
	nb = nthreads + nthreads / 2;
	blocks = calloc((size_t)(nb * nb), sizeof(*blocks));
	t = calloc((size_t)nthreads, sizeof(*t));
	if (!blocks || !t || pthread_barrier_init(&bar, NULL, (unsigned)nthreads))
		return 1;
	/* main is thread 0, as in many programs: clang then inlines a copy
	 * of worker() specialized for me == 0 into main, a second call site
	 * of lime_s_block on the cause's line (causes_locate.c) */
	for (long i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	worker((void *)0);
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(blocks);
	free(t);
	return 0;
}
