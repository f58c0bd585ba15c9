/* exec_phases NTHREADS ITERS UNITS [-t] [PROGRAM ARGS...]
 *
 * One phase of barrier_ratio's work, then, if more arguments follow,
 * exec(PROGRAM, ARGS): a program that runs its threads and then replaces
 * itself (a driver that execs the next stage, a re-exec after setup).
 * -t: the last worker execs, after its last barrier, while main waits to
 * join it (runtimes such as Go's exec from whichever thread runs; the
 * kernel then gives the exec'ing thread the process's id).
 * NTHREADS worker pthreads; in every iteration worker i (0-based) does
 * sb_work((i + 1) * UNITS) and waits on one pthread barrier.  Known truth
 * per image: ITERS barrier instances of NTHREADS threads, busy ratio
 * 1 : ... : N, imbalance 1 - (N + 1) / (2N); one join of the workers.
 * Prints nothing on stdout; exits 0 (or exec's failure: 127).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long nthreads, iters, units;
static char **next;     /* -t: the program the last worker execs */

static void *worker_main(void *arg)
{
	unsigned long idx = *(unsigned long *)arg;

	sb_name_thread("worker", idx);
	for (unsigned long it = 0; it < iters; it++) {
		sb_work((idx + 1) * units);
		pthread_barrier_wait(&bar); /* SITE:phase_barrier */
	}
	if (next && idx == nthreads - 1) {
		execvp(next[0], next);
		perror(next[0]);
		exit(127);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, *idx;
	int prog = 4;

	if (argc < 4 || sb_parse_thread_args(argv + 1, 0, &n, &iters, &units) ||
	    (argc > 4 && !strcmp(argv[4], "-t") && argc == 5)) {
		fprintf(stderr, "usage: %s NTHREADS ITERS UNITS [-t] [PROGRAM ARGS...]\n",
			argv[0]);
		return 2;
	}
	nthreads = n;
	if (argc > 4 && !strcmp(argv[4], "-t"))
		next = argv + (prog = 5);
	idx = sb_calloc(n, sizeof(*idx));
	for (unsigned long i = 0; i < n; i++)
		idx[i] = i;
	sb_barrier_init(&bar, n);
	sb_run_threads(n, worker_main, idx, sizeof(*idx));
	free(idx);
	if (argc > prog) {
		execvp(argv[prog], argv + prog);
		perror(argv[prog]);
		return 127;
	}
	return 0;
}
