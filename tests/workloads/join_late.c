/* join_late NTHREADS UNITS
 *
 * main creates NTHREADS workers, then works itself before it joins them
 * (the "main takes a share" pattern): worker i (0-based) does
 * sb_work((i + 1) * UNITS), main does sb_work((NTHREADS + 2) * UNITS), so
 * every worker has exited before main reaches its first pthread_join.  Then
 * the same again in a second phase with its own join loop.  Known truth:
 * two join sections, each at its own pthread_join line (SITE:join1,
 * SITE:join2), each with NTHREADS threads and busy ratio 1 : 2 : ... : N.
 * Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "work.h"

static unsigned long units;

static void *worker_main(void *arg)
{
	sb_work(((unsigned long)(uintptr_t)arg + 1) * units);
	return NULL;
}

static void start(pthread_t *tids, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int err = pthread_create(&tids[i], NULL, worker_main, (void *)(uintptr_t)i);

		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long n;
	pthread_t *tids;

	if (argc != 3 || sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &n) ||
	    sb_parse_ul(argv[2], 1, SB_MAX_UNITS, &units) || (n + 2) * units > SB_MAX_UNITS) {
		fprintf(stderr, "usage: %s NTHREADS UNITS\n"
			"  NTHREADS 1..%lu, UNITS >= 1, (NTHREADS + 2) * UNITS <= %lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	tids = sb_calloc(n, sizeof(*tids));
	start(tids, n);
	sb_work((n + 2) * units);
	for (unsigned long i = 0; i < n; i++)
		pthread_join(tids[i], NULL); /* SITE:join1 */
	start(tids, n);
	sb_work((n + 2) * units);
	for (unsigned long i = 0; i < n; i++)
		pthread_join(tids[i], NULL); /* SITE:join2 */
	free(tids);
	return 0;
}
