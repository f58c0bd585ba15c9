/* condvar_barrier NTHREADS ITERS UNITS
 *
 * Same known truth as barrier_ratio (worker i does sb_work((i + 1) * UNITS)
 * per iteration; busy ratio 1 : 2 : ... : N; imbalance 1 - (N + 1) / (2N)),
 * but the barrier is a hand-written one, sb_user_barrier(), built from a
 * pthread mutex + condition variable with a generation counter as in
 * SPLASH-2 / PARSEC.  No pthread_barrier_* is used.
 * Workers are named "worker-<i>".  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

struct user_barrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long count;      /* arrivals in the current generation */
	unsigned long total;      /* participants */
	unsigned long generation; /* bumped when the last one arrives */
};

void sb_user_barrier(struct user_barrier *b);

SB_NOINLINE void sb_user_barrier(struct user_barrier *b)
{
	unsigned long gen;

	pthread_mutex_lock(&b->lock);
	gen = b->generation;
	if (++b->count == b->total) {
		b->count = 0;
		b->generation++;
		pthread_cond_broadcast(&b->cond);
	} else {
		while (gen == b->generation)
			pthread_cond_wait(&b->cond, &b->lock); /* SITE:cond_wait */
	}
	pthread_mutex_unlock(&b->lock);
}

static struct user_barrier bar = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};
static unsigned long iters, units;

struct worker {
	unsigned long idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		sb_work((w->idx + 1) * units);
		sb_user_barrier(&bar); /* SITE:user_barrier */
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
	bar.total = nthreads;
	w = sb_calloc(nthreads, sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	free(w);
	return 0;
}
