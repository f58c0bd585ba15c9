/* tail_barrier NTHREADS ITERS UNITS
 *
 * Barriers reached through tail calls, as gcc and clang -O2 compile them
 * (a void function whose last act is a call ends in `jmp`):
 *  - phase(): one step of work, then the barrier; called ITERS times;
 *  - slave_start(): the SPLASH-2 shape (LU's SlaveStart, the CREATE
 *    macro): main starts NTHREADS-1 threads on it, cast to a thread
 *    start routine, and runs it itself; its last act is one more barrier.
 * Thread i (0-based, in start order) does (i+1)*UNITS of work before each
 * barrier: every barrier instance has busy times 1:2:...:NTHREADS.
 * Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long nthreads, iters, units;
static atomic_ulong next_id;

static SB_NOINLINE void phase(unsigned long id)
{
	sb_work(units * (id + 1));
	pthread_barrier_wait(&bar); /* SITE:tail_phase */
}

static SB_NOINLINE void slave_start(void)
{
	unsigned long id = atomic_fetch_add(&next_id, 1);

	for (unsigned long i = 0; i < iters; i++)
		phase(id);
	sb_work(units * (id + 1));
	pthread_barrier_wait(&bar); /* SITE:tail_last */
}

int main(int argc, char **argv)
{
	pthread_t *tids;

	if (argc != 4 || sb_parse_thread_args(argv + 1, 0, &nthreads, &iters, &units))
		sb_thread_args_usage(argv[0], "ITERS", "UNITS", 0);
	sb_barrier_init(&bar, nthreads);
	tids = sb_calloc(nthreads, sizeof(*tids));
	for (unsigned long i = 1; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, (void *(*)(void *))slave_start, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	slave_start();
	for (unsigned long i = 1; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	pthread_barrier_destroy(&bar);
	return 0;
}
