/* trace_lock NTHREADS K
 *
 * Known truth for the lock records of `scalebpf cc --trace-mem`: every
 * worker takes one shared mutex K times, adds 1 to a shared counter under
 * it (a load and a store: the counter is a global the lock calls may
 * change, and main checks the total), gives it back, then waits at a
 * barrier.  So each worker's trace holds exactly K ACQUIRE and K RELEASE
 * records of the mutex, alternating, each pair around a store to the
 * counter.  Then the workers meet once at a condvar barrier (a second
 * mutex, cv_mutex, and a broadcast by the last to arrive): every thread
 * but the last waits on the condvar at least once, and each wait gives
 * cv_mutex back (RELEASE, then the wait's SYNC) and takes it again, an
 * ACQUIRE the runtime writes before the thread's next record, right after
 * the wait's RESUME.  Writes "mutex ADDR", "counter ADDR" and "cv_mutex
 * ADDR" (hex) to the file named by SB_ADDR_TRUTH (stdout without it);
 * exits 1 if the total is wrong.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t bar;
static unsigned long k, nthreads, arrived;
static long shared_counter;

static void *worker_main(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < k; i++) {
		pthread_mutex_lock(&m); /* SITE:lock */
		shared_counter += 1;
		pthread_mutex_unlock(&m);
	}
	pthread_mutex_lock(&cv_mutex); /* SITE:cvlock */
	if (++arrived == nthreads)
		pthread_cond_broadcast(&cv);
	else
		while (arrived < nthreads)
			pthread_cond_wait(&cv, &cv_mutex);
	pthread_mutex_unlock(&cv_mutex);
	pthread_barrier_wait(&bar); /* SITE:barrier */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = getenv("SB_ADDR_TRUTH");
	FILE *f;

	if (argc != 3 || sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[2], 1, SB_MAX_UNITS, &k)) {
		fprintf(stderr, "usage: %s NTHREADS K\n"
			"  NTHREADS 1..%lu, K 1..%lu locked increments per thread\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	f = path ? fopen(path, "w") : stdout;
	if (f) {
		fprintf(f, "mutex %lx\ncounter %lx\ncv_mutex %lx\n", (unsigned long)&m,
			(unsigned long)&shared_counter, (unsigned long)&cv_mutex);
		if (path)
			fclose(f);
	}
	sb_barrier_init(&bar, nthreads);
	sb_run_threads(nthreads, worker_main, NULL, 0);
	pthread_barrier_destroy(&bar);
	if (shared_counter != (long)(nthreads * k)) {
		fprintf(stderr, "trace_lock: counted %ld, not %lu\n", shared_counter,
			nthreads * k);
		return 1;
	}
	return 0;
}
