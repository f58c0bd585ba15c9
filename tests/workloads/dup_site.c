/* dup_site NTHREADS ITERS UNITS
 *
 * One barrier call in the source (sync_step, SITE:dup_site), inlined by the
 * compiler into both arms of a branch: two call instructions on one source
 * line.  Even iterations (arm A): worker i does sb_work((i + 1) * UNITS);
 * odd iterations (arm B): sb_work((N - i) * UNITS).  Known truth: two
 * barrier sections at the same line, ITERS/2 instances each (ITERS even),
 * busy ratio 1 : ... : N, ascending with the thread index in arm A and
 * descending in arm B.  Prints the serial-thread counts on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long nthreads, iters, units;
static unsigned long serial_a, serial_b;

static inline int sync_step(void)
{
	return pthread_barrier_wait(&bar); /* SITE:dup_site */
}

struct worker {
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (unsigned long it = 0; it < iters; it++) {
		if (it % 2 == 0) {
			sb_work((w->idx + 1) * units);
			if (sync_step() == PTHREAD_BARRIER_SERIAL_THREAD)
				serial_a++;
		} else {
			sb_work((nthreads - w->idx) * units);
			if (sync_step() == PTHREAD_BARRIER_SERIAL_THREAD)
				serial_b++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 0, &nthreads, &iters, &units))
		sb_thread_args_usage(argv[0], "ITERS", "UNITS", 0);
	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	pthread_barrier_destroy(&bar);
	printf("%lu %lu\n", serial_a, serial_b);
	free(w);
	return 0;
}
