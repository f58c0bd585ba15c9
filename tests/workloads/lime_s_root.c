/* lime_s_root NTHREADS ITERS N
 *
 * Issue 12's "root-only extra work through a shared helper": every
 * thread calls the header's noinline lime_s_block(N) directly; the root
 * thread also calls it again through a wrapper that tail-calls it (a
 * `jmp`, no call edge).  Known truth: the `if (me == 0)` test on the
 * marked cause line.  Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lime_s_work.h"

static pthread_barrier_t bar;
static long nthreads, iters, n;
static double *cells;

static __attribute__((noinline)) void root_extra(double *v)
{
	lime_s_block(v, 2 * n);
}

static void *worker(void *arg)
{
	long me = (long)arg;

	for (long it = 0; it < iters; it++) {
		lime_s_block(&cells[me * 8], n);
		if (me == 0) /* SITE:cause */
			root_extra(&cells[me * 8]);
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *t;

	if (argc != 4 || (nthreads = atol(argv[1])) < 1 || (iters = atol(argv[2])) < 1 ||
	    (n = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: lime_s_root NTHREADS ITERS N\n");
		return 2;
	}
	cells = calloc((size_t)nthreads * 8, sizeof(*cells));
	t = calloc((size_t)nthreads, sizeof(*t));
	if (!cells || !t || pthread_barrier_init(&bar, NULL, (unsigned)nthreads))
		return 1;
	/* every worker a thread of its own: with main as thread 0 (the
	 * root), every block only main runs (_start, main's call) is as
	 * perfectly correlated with the root's extra time as the decision,
	 * a tie of one cluster's leaders that the same-cluster collapse
	 * (issue 12, causes.c) is to resolve, not the pooling */
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (long i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	free(cells);
	free(t);
	return 0;
}
