/* barrier_loop NTHREADS N UNITS    (overhead benchmark)
 *
 * Each worker does N iterations of balanced sb_work(UNITS) followed by a
 * pthread_barrier_wait.  tests/bench.sh picks UNITS so that each thread
 * passes ~10,000 barriers per second.  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long n, units;

static void *worker_main(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < n; i++) {
		sb_work(units);
		pthread_barrier_wait(&bar); /* SITE:barrier_loop */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 0, &nthreads, &n, &units))
		sb_thread_args_usage(argv[0], "N", "UNITS", 0);
	sb_barrier_init(&bar, nthreads);
	sb_run_threads(nthreads, worker_main, NULL, 0);
	pthread_barrier_destroy(&bar);
	return 0;
}
