/* condbar_queue NCONSUMERS ROUNDS UNITS
 *
 * Condition variables that are not barriers, written the usual ways:
 * a master hands out one batch of work per round to NCONSUMERS workers
 * through a queue (pthread_cond_broadcast "work is there" from the
 * master's own loop, workers wait while the queue is empty), and workers
 * report each item done with pthread_cond_signal to the master, which
 * waits for the round to drain.  Every round all workers often wait at
 * once and one broadcast releases them: a detector that looked only at
 * that would call it a barrier.  Known truth: no barrier; condition
 * waits at the workers' and the master's wait sites.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t drained = PTHREAD_COND_INITIALIZER;
static long queued, pending, done_flag, units;
static double sink;

static double work(long n)
{
	unsigned long x = (unsigned long)n | 1;

	for (long i = 0; i < n * 1000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return (double)(x >> 11);
}

static void *consumer(void *arg)
{
	double local = 0;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (!queued && !done_flag)
			pthread_cond_wait(&nonempty, &qlock); /* SITE:queue_wait */
		if (!queued && done_flag) {
			pthread_mutex_unlock(&qlock);
			break;
		}
		queued--;
		pthread_mutex_unlock(&qlock);
		local += work(units);
		pthread_mutex_lock(&qlock);
		if (--pending == 0)
			pthread_cond_signal(&drained);
		pthread_mutex_unlock(&qlock);
	}
	pthread_mutex_lock(&qlock);
	sink += local;
	pthread_mutex_unlock(&qlock);
	return NULL;
}

int main(int argc, char **argv)
{
	long n, rounds;
	pthread_t th[64];

	if (argc != 4 || (n = atol(argv[1])) < 1 || n > 64 || (rounds = atol(argv[2])) < 1 ||
	    (units = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: %s NCONSUMERS ROUNDS UNITS\n", argv[0]);
		return 2;
	}
	for (long i = 0; i < n; i++)
		pthread_create(&th[i], NULL, consumer, NULL);
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&qlock);
		queued += n;
		pending += n;
		pthread_cond_broadcast(&nonempty);
		while (pending)
			pthread_cond_wait(&drained, &qlock); /* SITE:drain_wait */
		pthread_mutex_unlock(&qlock);
	}
	pthread_mutex_lock(&qlock);
	done_flag = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&qlock);
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return sink < 0;
}
