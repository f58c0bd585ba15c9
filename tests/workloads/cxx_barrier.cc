/* cxx_barrier NTHREADS ITERS UNITS — a C++ program with a PARSEC-style barrier
 *
 * Same known truth as condvar_barrier (worker i does sb_work((i + 1) * UNITS)
 * per iteration; busy ratio 1 : 2 : ... : N; imbalance 1 - (N + 1) / (2N)),
 * written as C++ code is: the barrier is parsec::parsec_barrier_wait(), a
 * mutex + condition variable barrier in a namespace (as PARSEC's
 * parsec_barrier.hpp), so every symbol is mangled
 * (_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierE), and the phase
 * function takes the barrier as an argument, as streamcluster's pkmedian /
 * pgain do: its mangled name mentions the barrier type too.
 * Workers are named "worker-<i>".  Prints nothing on stdout; exits 0.
 */
#ifndef _GNU_SOURCE /* g++ defines it */
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>

#include "work.h"

namespace parsec {

struct parsec_barrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long count, total, generation;
};

void parsec_barrier_init(parsec_barrier *b, unsigned long n)
{
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->count = 0;
	b->total = n;
	b->generation = 0;
}

void parsec_barrier_destroy(parsec_barrier *b)
{
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
}

SB_NOINLINE void parsec_barrier_wait(parsec_barrier *b)
{
	pthread_mutex_lock(&b->lock);
	unsigned long gen = b->generation;

	if (++b->count == b->total) {
		b->count = 0;
		b->generation++;
		pthread_cond_broadcast(&b->cond);
	} else {
		while (gen == b->generation)
			pthread_cond_wait(&b->cond, &b->lock);
	}
	pthread_mutex_unlock(&b->lock);
}

} // namespace parsec

static unsigned long iters, units;
static parsec::parsec_barrier bar;

struct worker {
	unsigned long idx;
};

/* The thread's whole computation, phase after phase (a real code's phase
 * function is large; this one is kept a call as it would be). */
SB_NOINLINE void run_phases(unsigned long idx, parsec::parsec_barrier *barrier)
{
	for (unsigned long it = 0; it < iters; it++) {
		sb_work((idx + 1) * units);
		parsec::parsec_barrier_wait(barrier); /* SITE:cxx_barrier */
	}
}

static void *worker_main(void *arg)
{
	worker *w = static_cast<worker *>(arg);

	sb_name_thread("worker", w->idx);
	run_phases(w->idx, &bar);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;

	if (argc != 4 ||
	    sb_parse_thread_args(argv + 1, 0, &nthreads, &iters, &units))
		sb_thread_args_usage(argv[0], "ITERS", "UNITS", 0);
	parsec::parsec_barrier_init(&bar, nthreads);
	worker *w = static_cast<worker *>(sb_calloc(nthreads, sizeof(worker)));
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	free(w);
	parsec::parsec_barrier_destroy(&bar);
	return 0;
}
