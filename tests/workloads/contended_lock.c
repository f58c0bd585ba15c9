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

#include "work.h"

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long iters, hold_units, free_units;
static unsigned long total_acquisitions; /* protected by global_lock */

struct worker {
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
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

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 1, &nthreads, &iters, &hold_units))
		sb_thread_args_usage(argv[0], "ITERS", "HOLD_UNITS", 1);
	free_units = hold_units / 4 ? hold_units / 4 : 1;
	w = sb_calloc(nthreads, sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	free(w);
	if (total_acquisitions != nthreads * iters) {
		fprintf(stderr, "contended_lock: lost updates (%lu != %lu)\n",
			total_acquisitions, nthreads * iters);
		return 1;
	}
	return 0;
}
