/* barrier_ratio NTHREADS ITERS UNITS
 *
 * NTHREADS worker pthreads (main only creates and joins them).  In every
 * iteration worker i (0-based) does sb_work((i + 1) * UNITS) and then waits
 * on one pthread_barrier.  Known truth:
 *   per-thread busy ratio      1 : 2 : ... : N
 *   imbalance at the barrier   1 - mean/max = 1 - (N + 1) / (2N)
 * Workers are named "worker-<i>".  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, units;

struct worker {
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		sb_work((w->idx + 1) * units);
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;
	struct worker *w;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 0, &nthreads, &iters, &units))
		sb_thread_args_usage(argv[0], "ITERS", "UNITS", 0);
	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	pthread_barrier_destroy(&bar);
	free(w);
	return 0;
}
