/* share MODE NTHREADS ROUNDS ITEMS
 *
 * Known truth for the sharing analyses (issue 13).  NTHREADS workers run
 * ROUNDS rounds of ITEMS steps with a barrier after each round; MODE picks
 * what they share:
 *   packed    each thread adds into its own double of partial[] (8 to a
 *             64-byte line): false sharing, in region;
 *   padded    the same with each double alone on its line: nothing;
 *   mutex     each step increments a bucket of hist[8] under one mutex:
 *             true sharing in region, lock-protected;
 *   flag      worker 0 writes stage[8] ITEMS times in even rounds, the
 *             others read it ITEMS times in odd rounds: true sharing
 *             across regions;
 *   readonly  all read table[], filled by main before they start: nothing.
 * The shared arrays start a line (aligned) so that the counts of a piped
 * simulation are analytic (tests/integration/sharing.sh derives them).
 * Prints nothing on stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

#define LINE 64
#define TABLE 512

static pthread_barrier_t bar;
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long rounds, items, nthreads;
static const char *mode;

static double partial[8] __attribute__((aligned(LINE)));
static struct {
	double v;
	char pad[LINE - sizeof(double)];
} padded[8] __attribute__((aligned(LINE)));
static long hist[8] __attribute__((aligned(LINE)));
static long stage[8] __attribute__((aligned(LINE)));
static long table[TABLE];

/* A line each: what the workers write of their own is not shared. */
struct worker {
	unsigned long idx;
	double *sum;            /* packed or padded: this thread's slot */
	const double *in;
	long local;
} __attribute__((aligned(LINE)));

static SB_NOINLINE void add_items(double *sum, const double *in, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		*sum += in[i];
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	sb_name_thread("worker", w->idx);
	for (unsigned long r = 0; r < rounds; r++) {
		if (w->sum) {
			add_items(w->sum, w->in, items);
		} else if (!strcmp(mode, "mutex")) {
			for (unsigned long i = 0; i < items; i++) {
				pthread_mutex_lock(&hist_lock);
				hist[(i + w->idx) % 8]++;
				pthread_mutex_unlock(&hist_lock);
			}
		} else if (!strcmp(mode, "flag")) {
			if (r % 2 == 0 && w->idx == 0)
				for (unsigned long i = 0; i < items; i++)
					stage[i % 8] = (long)(r + i);
			else if (r % 2 == 1 && w->idx != 0)
				for (unsigned long i = 0; i < items; i++)
					w->local += stage[i % 8];
		} else {
			for (unsigned long i = 0; i < items; i++)
				w->local += table[(i * 7 + w->idx) % TABLE];
		}
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "packed", "padded", "mutex", "flag", "readonly" };
	struct worker *w;
	double *in;
	int known = 0;
	long total = 0;

	for (size_t i = 0; argc == 5 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(argv[1], modes[i]);
	if (!known || sb_parse_thread_args(argv + 2, 0, &nthreads, &rounds, &items) ||
	    nthreads > 8) {
		fprintf(stderr, "usage: %s packed|padded|mutex|flag|readonly NTHREADS(<=8) "
			"ROUNDS ITEMS\n", argv[0]);
		return 2;
	}
	mode = argv[1];
	w = aligned_alloc(LINE, nthreads * sizeof(*w));
	if (!w)
		return 1;
	memset(w, 0, nthreads * sizeof(*w));
	in = sb_calloc(items ? items : 1, sizeof(*in));
	for (unsigned long i = 0; i < items; i++)
		in[i] = (double)(i % 5);
	for (unsigned long i = 0; i < TABLE; i++)
		table[i] = (long)(i * i % 97);
	sb_barrier_init(&bar, nthreads);
	for (unsigned long k = 0; k < nthreads; k++) {
		w[k].idx = k;
		w[k].in = in;
		if (!strcmp(mode, "packed"))
			w[k].sum = &partial[k];
		else if (!strcmp(mode, "padded"))
			w[k].sum = &padded[k].v;
	}
	sb_run_threads(nthreads, worker_main, w, sizeof(*w));
	for (unsigned long k = 0; k < nthreads; k++)
		total += w[k].local + (long)partial[k] + (long)padded[k].v + hist[k];
	pthread_barrier_destroy(&bar);
	free(w);
	free(in);
	return total < 0;   /* uses every result: none is optimized away */
}
