/* barrier_loop NTHREADS N UNITS    (overhead benchmark)
 *
 * Each worker does N iterations of balanced sb_work(UNITS) followed by a
 * pthread_barrier_wait.  tests/bench.sh picks UNITS so that each thread
 * passes ~10,000 barriers per second.  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
	pthread_t *tids;
	int err;

	if (argc != 4 ||
	    sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[2], 1, ULONG_MAX, &n) ||
	    sb_parse_ul(argv[3], 0, SB_MAX_UNITS, &units)) {
		fprintf(stderr, "usage: %s NTHREADS N UNITS\n"
			"  NTHREADS 1..%lu, N >= 1, UNITS 0..%lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	tids = calloc(nthreads, sizeof(*tids));
	if (!tids) {
		perror("calloc");
		return 1;
	}
	err = pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	if (err) {
		fprintf(stderr, "pthread_barrier_init: %s\n", strerror(err));
		return 1;
	}
	for (unsigned long i = 0; i < nthreads; i++) {
		err = pthread_create(&tids[i], NULL, worker_main, NULL);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&bar);
	free(tids);
	return 0;
}
