/* mutex_loop NTHREADS N            (overhead benchmark)
 *
 * Each worker locks and unlocks its OWN pthread mutex N times in a tight
 * loop around a trivial increment: the uncontended fast path only (no
 * futex system calls).  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

struct worker {
	pthread_mutex_t lock;
	unsigned long counter; /* protected by lock */
	unsigned long n;
} __attribute__((aligned(128)));

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (unsigned long i = 0; i < w->n; i++) {
		pthread_mutex_lock(&w->lock); /* SITE:mutex_loop */
		w->counter++;
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads, n;
	struct worker *w;

	if (argc != 3 ||
	    sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[2], 1, ULONG_MAX, &n)) {
		fprintf(stderr, "usage: %s NTHREADS N\n"
			"  NTHREADS 1..%lu, N >= 1 lock/unlock pairs per thread\n",
			argv[0], SB_MAX_THREADS);
		return 2;
	}
	w = aligned_alloc(128, nthreads * sizeof(*w));
	if (!w) {
		perror("aligned_alloc");
		return 1;
	}
	memset(w, 0, nthreads * sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++) {
		pthread_mutex_init(&w[i].lock, NULL);
		w[i].n = n;
	}
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++) {
		if (w[i].counter != n) {
			fprintf(stderr, "mutex_loop: thread %lu counted %lu\n",
				i, w[i].counter);
			return 1;
		}
	}
	free(w);
	return 0;
}
