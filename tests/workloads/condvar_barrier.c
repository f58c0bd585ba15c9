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
#include <string.h>

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
		sb_work((w->idx + 1) * units);
		sb_user_barrier(&bar); /* SITE:user_barrier */
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
	    sb_parse_ul(argv[3], 0, SB_MAX_UNITS, &units)) {
		fprintf(stderr, "usage: %s NTHREADS ITERS UNITS\n"
			"  NTHREADS 1..%lu, ITERS >= 1, UNITS 0..%lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	bar.total = nthreads;
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
	return 0;
}
