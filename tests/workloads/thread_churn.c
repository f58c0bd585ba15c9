/* thread_churn ROUNDS NTHREADS UNITS [barrier]
 *
 * Thread churn, as a server or a fork-join program without a pool does
 * it: ROUNDS times, main creates NTHREADS short-lived workers, each does
 * sb_work(UNITS) (UNITS may be 0: the thread only starts and ends), and
 * main joins them all before the next round.  With "barrier", the workers
 * of a round also meet once at a pthread_barrier_wait (SITE:churn_barrier)
 * after their work, before they return.
 *
 * Known truth: ROUNDS * NTHREADS threads besides main, each exiting once;
 * one join section at SITE:churn_join with exactly ROUNDS instances of
 * NTHREADS threads each (a round's join instance gathers the exits of
 * that round's children and closes at main's pthread_join once all have
 * exited); with "barrier", one barrier section at SITE:churn_barrier
 * with exactly ROUNDS instances of NTHREADS threads.  Prints nothing on
 * stdout; exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

static unsigned long units;
static int use_barrier;
static pthread_barrier_t bar;

static void *worker_main(void *arg)
{
	(void)arg;
	sb_work(units);
	if (use_barrier)
		pthread_barrier_wait(&bar); /* SITE:churn_barrier */
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long rounds, n;
	pthread_t *tids;

	if ((argc != 4 && argc != 5) || sb_parse_ul(argv[1], 1, 10000000UL, &rounds) ||
	    sb_parse_ul(argv[2], 1, SB_MAX_THREADS, &n) ||
	    sb_parse_ul(argv[3], 0, SB_MAX_UNITS, &units) ||
	    (argc == 5 && strcmp(argv[4], "barrier"))) {
		fprintf(stderr, "usage: %s ROUNDS NTHREADS UNITS [barrier]\n"
			"  ROUNDS 1..10000000, NTHREADS 1..%lu, UNITS 0..%lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	use_barrier = argc == 5;
	if (use_barrier)
		sb_barrier_init(&bar, n);
	tids = sb_calloc(n, sizeof(*tids));
	for (unsigned long r = 0; r < rounds; r++) {
		for (unsigned long i = 0; i < n; i++) {
			int err = pthread_create(&tids[i], NULL, worker_main, NULL);

			if (err) {
				fprintf(stderr, "pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
		for (unsigned long i = 0; i < n; i++)
			pthread_join(tids[i], NULL); /* SITE:churn_join */
	}
	if (use_barrier)
		pthread_barrier_destroy(&bar);
	free(tids);
	return 0;
}
