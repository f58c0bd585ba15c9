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
#include <string.h>
#include <unistd.h>

#include "work.h"

static pthread_barrier_t bar;
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
		pthread_barrier_wait(&bar); /* SITE:spawn_barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long delay_ms, nthreads;
	struct worker *w;
	int err;

	if (argc != 5 ||
	    sb_parse_ul(argv[1], 0, 86400000UL, &delay_ms) ||
	    sb_parse_ul(argv[2], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[3], 1, ULONG_MAX, &iters) ||
	    sb_parse_ul(argv[4], 0, SB_MAX_UNITS, &units)) {
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

	w = calloc(nthreads, sizeof(*w));
	if (!w) {
		perror("calloc");
		return 1;
	}
	err = pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	if (err) {
		fprintf(stderr, "pthread_barrier_init: %s\n", strerror(err));
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
	pthread_barrier_destroy(&bar);
	free(w);
	return 0;
}
