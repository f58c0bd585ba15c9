/* demo [NTHREADS [ITERS]]      (defaults: 4 threads, 1100 iterations)
 *
 * The bundled demo for "make demo": a toy blocked "solver" with a planted
 * load imbalance in the style of SPLASH-2 LU's BlockOwner().  The upper
 * triangle (bi <= bj) of an NB x NB block matrix, NB = NTHREADS + 1, is
 * dealt out with owner = (bi + bj) % NTHREADS, which gives threads unequal
 * block counts (with 4 threads: 5, 3, 4, 3 blocks).  Every iteration:
 *   phase 1 "factor": each thread processes its owned blocks (a fixed
 *            sb_work per block), then pthread_barrier_wait   -> imbalanced
 *   phase 2 "update": balanced work, interleaved with DEMO_LOCKS updates of
 *            a shared accumulator under one pthread mutex (with some work
 *            inside the critical section: moderate contention), then
 *            pthread_barrier_wait                            -> balanced
 * The per-thread owned block counts are printed on stderr at the start.
 * Nothing is printed on stdout.  Exits 0.
 * Default runtime: ~2.5 s on 2 cores.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

#define DEMO_DEFAULT_THREADS 4UL
#define DEMO_DEFAULT_ITERS 1100UL
#define DEMO_BLOCK_UNITS 100UL  /* per owned block, phase 1 */
#define DEMO_UPDATE_UNITS 300UL /* per thread, phase 2, outside the lock */
#define DEMO_LOCKS 4UL          /* accumulator updates per thread per iter */
#define DEMO_LOCK_UNITS 10UL    /* work while holding the lock */

static pthread_barrier_t factor_bar, update_bar;
static pthread_mutex_t acc_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long accumulator; /* protected by acc_lock */
static unsigned long nthreads, iters, nblocks_dim;

struct worker {
	unsigned long idx;
	unsigned long nowned;
};

/* SPLASH-2 LU style ownership rule over the upper block triangle. */
static unsigned long block_owner(unsigned long bi, unsigned long bj)
{
	return (bi + bj) % nthreads;
}

static SB_NOINLINE void factor_block(void)
{
	sb_work(DEMO_BLOCK_UNITS);
}

static SB_NOINLINE void add_to_accumulator(unsigned long v)
{
	pthread_mutex_lock(&acc_lock); /* SITE:demo_lock */
	sb_work(DEMO_LOCK_UNITS);
	accumulator += v;
	pthread_mutex_unlock(&acc_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("solver", w->idx);
	for (unsigned long it = 0; it < iters; it++) {
		/* phase 1: factor the owned blocks (imbalanced) */
		for (unsigned long bi = 0; bi < nblocks_dim; bi++)
			for (unsigned long bj = bi; bj < nblocks_dim; bj++)
				if (block_owner(bi, bj) == w->idx) /* SITE:demo_cause */
					factor_block();
		pthread_barrier_wait(&factor_bar); /* SITE:demo_factor */

		/* phase 2: balanced update + shared accumulator */
		for (unsigned long k = 0; k < DEMO_LOCKS; k++) {
			sb_work(DEMO_UPDATE_UNITS / DEMO_LOCKS);
			add_to_accumulator(w->idx + 1);
		}
		pthread_barrier_wait(&update_bar); /* SITE:demo_update */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	unsigned long expect;

	nthreads = DEMO_DEFAULT_THREADS;
	iters = DEMO_DEFAULT_ITERS;
	if (argc > 3 ||
	    (argc > 1 && sb_parse_ul(argv[1], 1, 64, &nthreads)) ||
	    (argc > 2 && sb_parse_ul(argv[2], 1, ULONG_MAX / 1024, &iters))) {
		fprintf(stderr, "usage: %s [NTHREADS [ITERS]]\n"
			"  NTHREADS 1..64 (default %lu), ITERS >= 1 (default %lu)\n",
			argv[0], DEMO_DEFAULT_THREADS, DEMO_DEFAULT_ITERS);
		return 2;
	}
	nblocks_dim = nthreads + 1;

	w = sb_calloc(nthreads, sizeof(*w));
	for (unsigned long bi = 0; bi < nblocks_dim; bi++)
		for (unsigned long bj = bi; bj < nblocks_dim; bj++)
			w[block_owner(bi, bj)].nowned++;
	fprintf(stderr,
		"demo: %lu threads x %lu iterations; %lux%lu block triangle "
		"dealt with owner = (bi + bj) %% %lu\n",
		nthreads, iters, nblocks_dim, nblocks_dim, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		fprintf(stderr, "demo:   thread %lu (solver-%lu) owns %lu blocks\n",
			i, i, w[i].nowned);

	sb_barrier_init(&factor_bar, nthreads);
	sb_barrier_init(&update_bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));

	expect = iters * DEMO_LOCKS * (nthreads * (nthreads + 1) / 2);
	if (accumulator != expect) {
		fprintf(stderr, "demo: accumulator %lu != %lu\n", accumulator,
			expect);
		return 1;
	}
	pthread_barrier_destroy(&factor_bar);
	pthread_barrier_destroy(&update_bar);
	free(w);
	return 0;
}
