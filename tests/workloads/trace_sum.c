/* trace_sum NTHREADS PASSES LONGS
 *
 * Known truth for exact-mode memory traces (`scalebpf cc --trace-mem`):
 * thread k sums its own array of LONGS longs PASSES times, one scalar
 * 8-byte load per element (the empty asm keeps the loop from being
 * vectorized), stores each pass's sum to its own slot, then waits at a
 * barrier.  So its trace holds exactly PASSES * LONGS loads inside its
 * array, PASSES stores to its slot, and a sync record per barrier.
 * Each thread writes "sum TID LO HI" and "out TID LO HI" (hex, [LO, HI))
 * to the file named by SB_ADDR_TRUTH (stdout without it).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long passes, longs, nthreads;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
	unsigned long idx;
	long *a;
	long out;
};

static void truth(const char *what, const void *lo, size_t len)
{
	const char *path = getenv("SB_ADDR_TRUTH");
	FILE *f;

	pthread_mutex_lock(&truth_lock);
	f = path ? fopen(path, "a") : stdout;
	if (f) {
		fprintf(f, "%s %ld %lx %lx\n", what, (long)gettid(), (unsigned long)lo,
			(unsigned long)lo + len);
		if (path)
			fclose(f);
	}
	pthread_mutex_unlock(&truth_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	truth("sum", w->a, longs * sizeof(long));
	truth("out", &w->out, sizeof(w->out));
	for (unsigned long p = 0; p < passes; p++) {
		long s = 0;

		for (unsigned long i = 0; i < longs; i++) {
			s += w->a[i];
			__asm__ volatile("" : "+r"(s));
		}
		w->out = s;
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;

	if (argc != 4 || sb_parse_thread_args(argv + 1, 0, &nthreads, &passes, &longs))
		sb_thread_args_usage(argv[0], "PASSES", "LONGS", 0);
	w = sb_calloc(nthreads, sizeof(*w));
	sb_barrier_init(&bar, nthreads);
	for (unsigned long k = 0; k < nthreads; k++) {
		w[k].idx = k;
		w[k].a = sb_calloc(longs ? longs : 1, sizeof(long));
		for (unsigned long i = 0; i < longs; i++)
			w[k].a[i] = (long)(i + k);
	}
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	for (unsigned long k = 0; k < nthreads; k++)
		free(w[k].a);
	free(w);
	pthread_barrier_destroy(&bar);
	return 0;
}
