/* lime_owner_hdr NTHREADS NB UNITS
 *
 * Block ownership as in a blocked factorization, the work in a small
 * static noinline helper from a shared header (work.h's sb_work, whose
 * loop runs exactly owned x UNITS x 1000 times per thread).  In step k
 * every thread scans the blocks (i, j) with k < i, j < NB and works on
 * those with (i + j) % NTHREADS == its index; a barrier ends each step.
 * Known truth: the imbalance comes from the ownership test on the marked
 * cause line; which thread gets the surplus changes from step to step,
 * so per-thread totals over the run are nearly equal.  The helper's loop
 * runs as often as the test sends work to it: it is no cause of its own.
 * Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long nb, units, nthreads;

struct worker {
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long k = 0; k < nb; k++) {
		for (unsigned long i = k + 1; i < nb; i++)
			for (unsigned long j = k + 1; j < nb; j++)
				if ((i + j) % nthreads == w->idx) /* SITE:cause */
					sb_work(units);
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 0, &nthreads, &nb, &units))
		sb_thread_args_usage(argv[0], "NB", "UNITS", 0);
	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	pthread_barrier_destroy(&bar);
	free(w);
	return 0;
}
