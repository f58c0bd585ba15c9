/* lime_cv func|macro NTHREADS ITERS UNITS
 *
 * lime_owner's planted cause (the upper triangle of an NB x NB block
 * matrix, NB = 2 * NTHREADS, dealt out by owner = bi % NTHREADS: thread k
 * works on (NB - k) + (NB/2 - k) blocks a pass) between barriers built
 * from a mutex and a condition variable, as SPLASH-2 and PARSEC build
 * them: `func` calls a barrier function, rendezvous() (not named
 * *barrier*: the recorder is told with --barrier rendezvous), `macro`
 * expands SPLASH's BARRIER macro inline in the worker.  Known truth: the
 * imbalance comes from the ownership test on the marked cause line, and in
 * an exact build every count of the loop lands in the barrier's section.
 * Workers are named "worker-<i>".  Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

struct cv_bar {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned long count, total, gen;
};

static struct cv_bar bar = {
	.m = PTHREAD_MUTEX_INITIALIZER,
	.c = PTHREAD_COND_INITIALIZER,
};
static unsigned long iters, units, nthreads;
static int use_macro;

/* SPLASH-2's BARRIER(b, P): one pthread_cond_wait, no loop. */
#define CV_BARRIER(b) do { \
	pthread_mutex_lock(&(b)->m); \
	unsigned long g_ = (b)->gen; \
	if (++(b)->count == (b)->total) { \
		(b)->count = 0; \
		(b)->gen++; \
		pthread_cond_broadcast(&(b)->c); \
	} else { \
		while (g_ == (b)->gen) \
			pthread_cond_wait(&(b)->c, &(b)->m); \
	} \
	pthread_mutex_unlock(&(b)->m); \
} while (0)

SB_NOINLINE void rendezvous(struct cv_bar *b);

SB_NOINLINE void rendezvous(struct cv_bar *b)
{
	CV_BARRIER(b);
}

static SB_NOINLINE unsigned long block_owner(unsigned long bi)
{
	return bi % nthreads;
}

struct worker {
	unsigned long idx;
};

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
		if (use_macro)
			CV_BARRIER(&bar); /* SITE:macro */
		else
			rendezvous(&bar); /* SITE:call */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;

	if (argc != 5 || (strcmp(argv[1], "func") && strcmp(argv[1], "macro")) ||
	    sb_parse_thread_args(argv + 2, 0, &nthreads, &iters, &units)) {
		fprintf(stderr, "usage: %s func|macro NTHREADS ITERS UNITS\n", argv[0]);
		return 2;
	}
	use_macro = !strcmp(argv[1], "macro");
	bar.total = nthreads;
	w = sb_calloc(nthreads, sizeof(*w));
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	free(w);
	return 0;
}
