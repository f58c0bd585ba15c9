/* spawner DELAY_MS NTHREADS ITERS UNITS
 *
 * For attaching with "scalebpf record -p PID" to a running process that
 * creates its threads later: prints its pid and a newline on stdout
 * (flushed), sleeps DELAY_MS milliseconds (restarting after EINTR), and
 * only then creates NTHREADS workers running the barrier_ratio logic:
 * worker i does sb_work((i + 1) * UNITS) then a pthread_barrier_wait, ITERS
 * times.  Known truth: busy ratio 1 : 2 : ... : N, imbalance
 * 1 - (N + 1) / (2N).  Workers are named "worker-<i>".  Exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "work.h"

static pthread_barrier_t bar;
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
		pthread_barrier_wait(&bar); /* SITE:spawn_barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long delay_ms, nthreads;
	struct worker *w;

	if (argc != 5 ||
	    sb_parse_ul(argv[1], 0, 86400000UL, &delay_ms) ||
	    sb_parse_thread_args(argv + 2, 0, &nthreads, &iters, &units)) {
		fprintf(stderr, "usage: %s DELAY_MS NTHREADS ITERS UNITS\n"
			"  DELAY_MS 0..86400000, NTHREADS 1..%lu, ITERS >= 1, "
			"UNITS 0..%lu\n",
			argv[0], SB_MAX_THREADS, SB_MAX_UNITS);
		return 2;
	}
	printf("%ld\n", (long)getpid());
	if (fflush(stdout) != 0)
		return 1;

	sb_sleep_ms(delay_ms);

	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long i = 0; i < nthreads; i++)
		w[i].idx = i;
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	pthread_barrier_destroy(&bar);
	free(w);
	return 0;
}
