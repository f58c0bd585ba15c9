/* lime_root_tail NTHREADS ITERS UNITS
 *
 * Root-only extra work through a shared helper: every thread calls
 * helper(UNITS) directly in each iteration, and the root thread (index 0)
 * also calls it through root_extra(), a wrapper that tail-calls it (a
 * `jmp`, no call edge) with 3 * UNITS.  Known truth: the imbalance comes
 * from the `me == 0` test on the marked cause line, not from the helper's
 * loop, which every thread runs.  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, units;
static volatile unsigned long sink;

struct worker {
	unsigned long idx;
};

static SB_NOINLINE unsigned long helper(unsigned long n)
{
	unsigned long x = n | 1;

	for (unsigned long i = 0; i < n * SB_WORK_ITERS_PER_UNIT; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static SB_NOINLINE unsigned long root_extra(unsigned long n)
{
	return helper(3 * n);   /* a tail call at -O2 */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		sink = helper(units);
		if (w->idx == 0) /* SITE:cause */
			sink = root_extra(units);
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;
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
