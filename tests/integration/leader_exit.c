/* leader_exit NTHREADS ITERS UNITS
 *
 * main starts NTHREADS workers and calls pthread_exit: the process lives on
 * in its workers while its leader is a zombie (state Z in /proc/PID/stat).
 * In every iteration worker i (0-based) does sb_work((i + 1) * UNITS) and
 * waits on one pthread barrier.  Known truth: ITERS barrier instances of
 * NTHREADS threads, busy ratio 1 : 2 : ... : N.  Exits 0 with the last
 * worker.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, units;

static void *worker(void *arg)
{
	unsigned long idx = (unsigned long)arg;

	for (unsigned long it = 0; it < iters; it++) {
		sb_work((idx + 1) * units);
		pthread_barrier_wait(&bar); /* SITE:leader_exit_barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n;

	if (argc != 4 || sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &n) ||
	    sb_parse_ul(argv[2], 1, 100000000UL, &iters) ||
	    sb_parse_ul(argv[3], 1, SB_MAX_UNITS, &units)) {
		fprintf(stderr, "usage: %s NTHREADS ITERS UNITS\n", argv[0]);
		return 2;
	}
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (unsigned long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)i))
			return 1;
	}
	pthread_exit(NULL);
}
