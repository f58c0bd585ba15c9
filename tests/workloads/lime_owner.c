/* lime_owner NTHREADS ITERS UNITS
 *
 * A planted load-imbalance cause like SPLASH-2 LU's BlockOwner(): the
 * upper triangle of an NB x NB block matrix (NB = 2 * NTHREADS) is dealt
 * out by the rule owner = bi % NTHREADS, which gives low-numbered threads
 * more blocks (rows near the top are longer).  Every thread scans all
 * blocks and works on the ones it owns.  Known truth: the imbalance
 * comes from the ownership test on the marked cause line (a branch
 * decided differently per thread).  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, units, nthreads;

struct worker {
	unsigned long idx;
};

static __attribute__((noinline)) unsigned long block_owner(unsigned long bi)
{
	return bi % nthreads;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long nb = 2 * nthreads;

	sb_name_thread("worker", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		for (unsigned long bi = 0; bi < nb; bi++)
			for (unsigned long bj = bi; bj < nb; bj++)
				if (block_owner(bi) == w->idx) /* SITE:cause */
					sb_work(units);
		pthread_barrier_wait(&bar); /* SITE:barrier */
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
	free(w);
	return 0;
}
