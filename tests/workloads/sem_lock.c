/* sem_lock NTHREADS ITERS HOLD_UNITS
 * A binary semaphore used as a lock: threads loop on sem_wait, do
 * sb_work(HOLD_UNITS), sem_post.  Known truth: contended sem_wait waits at
 * the line marked SITE:sem. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

static sem_t sem;
static unsigned long iters, hold;

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < iters; i++) {
		sem_wait(&sem); /* SITE:sem */
		sb_work(hold);
		sem_post(&sem);
		sb_work(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	unsigned long n;

	if (argc != 4 || sb_parse_ul(argv[1], 1, 64, &n) ||
	    sb_parse_ul(argv[2], 1, SB_MAX_UNITS, &iters) ||
	    sb_parse_ul(argv[3], 1, SB_MAX_UNITS, &hold)) {
		fprintf(stderr, "usage: sem_lock NTHREADS(1-64) ITERS HOLD_UNITS\n");
		return 2;
	}
	sem_init(&sem, 0, 1);
	for (unsigned long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			fprintf(stderr, "sem_lock: pthread_create failed\n");
			return 1;
		}
	for (unsigned long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
