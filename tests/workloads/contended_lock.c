/* contended_lock NTHREADS ITERS HOLD_UNITS
 *
 * NTHREADS workers each loop ITERS times: lock one global pthread mutex,
 * sb_work(HOLD_UNITS) while holding it, unlock, then sb_work(max(1,
 * HOLD_UNITS / 4)) outside.  The critical section is 80% of each thread's
 * work, so the lock is heavily contended on purpose.
 * Workers are named "worker-<i>".  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long iters, hold_units, free_units;
static unsigned long total_acquisitions; /* protected by global_lock */

struct worker {
	pthread_t tid;
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%lu", w->idx);
	pthread_setname_np(pthread_self(), name);
	for (unsigned long it = 0; it < iters; it++) {
		pthread_mutex_lock(&global_lock); /* SITE:lock */
		sb_work(hold_units);
		total_acquisitions++;
		pthread_mutex_unlock(&global_lock);
		sb_work(free_units);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;
	struct worker *w;
	int err;

	if (argc != 4 ||
	    sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[2], 1, ULONG_MAX, &iters) ||
	    sb_parse_ul(argv[3], 1, SB_MAX_UNITS, &hold_units)) {
		fprintf(stderr, "usage: %s NTHREADS ITERS HOLD_UNITS\n"
			"  NTHREADS 1..%lu, ITERS >= 1, HOLD_UNITS 1..%lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	free_units = hold_units / 4 ? hold_units / 4 : 1;
	w = calloc(nthreads, sizeof(*w));
	if (!w) {
		perror("calloc");
		return 1;
	}
	for (unsigned long i = 0; i < nthreads; i++) {
		w[i].idx = i;
		err = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long i = 0; i < nthreads; i++)
		pthread_join(w[i].tid, NULL);
	free(w);
	if (total_acquisitions != nthreads * iters) {
		fprintf(stderr, "contended_lock: lost updates (%lu != %lu)\n",
			total_acquisitions, nthreads * iters);
		return 1;
	}
	return 0;
}
