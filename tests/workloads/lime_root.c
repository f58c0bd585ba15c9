/* lime_root NTHREADS ITERS UNITS
 *
 * A planted load-imbalance cause: every thread does sb_work(UNITS) per
 * iteration, and the root thread (me == 0) does 3 * UNITS extra behind
 * the test on the marked cause line.  Known truth: that branch is
 * the cause.  Prints nothing on stdout; exits 0.
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

static __attribute__((noinline)) void root_only_work(void)
{
	sb_work(3 * units);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		sb_work(units);
		if (w->idx == 0) /* SITE:cause */
			root_only_work();
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
