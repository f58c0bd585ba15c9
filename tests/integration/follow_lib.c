/* follow_lib.c: the plugin follow_dlmain loads with dlopen.
 *
 * run_phases(N, ITERS, UNITS): N pthreads; in every iteration thread i
 * (0-based) does sb_work((i + 1) * UNITS), then waits at a barrier: a
 * pthread barrier, or with -DUSER_BARRIER lib_barrier_wait(), a mutex +
 * condition variable barrier (SPLASH style) that record finds by its
 * name.  Known truth: ITERS barrier instances of N threads, busy ratio
 * 1 : 2 : ... : N, imbalance 1 - (N + 1) / (2N).
 */
#include "work.h"

static unsigned long iters, units;

#ifdef USER_BARRIER
struct lib_barrier {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned long n, count, gen;
};

static struct lib_barrier lb = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

__attribute__((noinline)) void lib_barrier_wait(struct lib_barrier *b)
{
	unsigned long gen;

	pthread_mutex_lock(&b->m);
	gen = b->gen;
	if (++b->count == b->n) {
		b->count = 0;
		b->gen++;
		pthread_cond_broadcast(&b->c);
	} else {
		while (gen == b->gen)
			pthread_cond_wait(&b->c, &b->m);
	}
	pthread_mutex_unlock(&b->m);
}
#define BARRIER_INIT(n) (lb.n = (n))
#define BARRIER_WAIT() lib_barrier_wait(&lb)
#else
static pthread_barrier_t bar;
#define BARRIER_INIT(n) sb_barrier_init(&bar, (n))
#define BARRIER_WAIT() pthread_barrier_wait(&bar)
#endif

static void *worker(void *arg)
{
	unsigned long idx = *(unsigned long *)arg;

	for (unsigned long it = 0; it < iters; it++) {
		sb_work((idx + 1) * units);
		BARRIER_WAIT(); /* SITE:lib_barrier */
	}
	return NULL;
}

int run_phases(unsigned long n, unsigned long it, unsigned long u)
{
	unsigned long *idx;

	if (!n || n > SB_MAX_THREADS || !it || u > SB_MAX_UNITS)
		return -1;
	iters = it;
	units = u;
	idx = sb_calloc(n, sizeof(*idx));
	for (unsigned long i = 0; i < n; i++)
		idx[i] = i;
	BARRIER_INIT(n);
	sb_run_threads(n, worker, idx, sizeof(*idx));
	free(idx);
	return 0;
}
