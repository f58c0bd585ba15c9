/* stack_ub KIND SYNC THREADS N M ITER
 *
 * The speedup-stacks paper's micro-benchmarks (§6.3, Listing 1): each of
 * THREADS threads runs N rounds of its share of M steps (M / THREADS,
 * strong scaling: the work is the same at any thread count), a step being
 * compute(ITER) and then a short critical section under one mutex (100
 * updates of a counter); a barrier ends each round.  The threads work on
 * disjoint data (the counter is each thread's own, as in the paper), so
 * with SYNC 0 (no mutex, no barrier, the same work) the program is still
 * correct: that run's speedup is the truth the synchronization-free
 * estimate is checked against.  compute by KIND:
 *   tiny  ITER read-modify-writes in the thread's slice of 32 KB (L1);
 *   rnd   ITER random reads in its slice of 64 MB (cache misses);
 *   seq   ITER sequential reads on through its slice of 64 MB (a stream);
 *   imb   as tiny, without the critical section, and imbalanced: in round
 *         r thread r mod THREADS does twice the steps of each other
 *         (2 M / (THREADS + 1) against M / (THREADS + 1)), so each thread
 *         waits at the barrier in all but one round of THREADS; every
 *         thread's total is the same, and the barrier's cost is the
 *         imbalance alone.
 * SYNC 2 runs both, one after the other, each its own fork-join phase
 * (the joins at lines of their own, JOIN:sync and JOIN:nosync): one
 * recording then holds the estimate's phase and its truth, measured
 * seconds apart under the same host conditions.  With STACK_UB_TIME_FILE
 * set, the last phase's wall time in ns is written there.  Prints
 * nothing on stdout.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "work.h"

enum kind { TINY, RND, SEQ, IMB };

#define CRIT 100   /* the critical section's updates of its counter */

static enum kind kind;
static unsigned long mode, sync_on, threads, rounds, steps, iters;
static uint64_t *data;
static size_t words;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

struct slice {
	uint64_t *a;
	size_t n, pos;
	uint64_t x, sum;
	volatile uint64_t crit;   /* the critical section's: the thread's own */
};

static void compute(struct slice *s)
{
	for (unsigned long i = 0; i < iters; i++) {
		switch (kind) {
		case TINY:
		case IMB:
			s->a[s->pos] += i;
			s->pos = (s->pos + 7) % s->n;
			break;
		case RND:
			s->x ^= s->x << 13;
			s->x ^= s->x >> 7;
			s->x ^= s->x << 17;
			s->sum += s->a[s->x % s->n];
			break;
		case SEQ:
			s->sum += s->a[s->pos];
			if (++s->pos == s->n)
				s->pos = 0;
			break;
		}
	}
}

static void *worker(void *v)
{
	unsigned long id = (unsigned long)(uintptr_t)v, mine = steps / threads;
	struct slice s = { .a = data + id * (words / threads), .n = words / threads,
			   .x = 0x9e3779b97f4a7c15ull * (id + 1) };

	for (unsigned long r = 0; r < rounds; r++) {
		if (kind == IMB)
			mine = steps / (threads + 1) * (r % threads == id ? 2 : 1);
		for (unsigned long j = 0; j < mine; j++) {
			compute(&s);
			if (kind == IMB)
				continue;
			/* a short critical section; without SYNC the same work
			 * unlocked (the paper comments the lock out) */
			if (sync_on)
				pthread_mutex_lock(&lock);
			for (int k = 0; k < CRIT; k++)
				s.crit += s.sum + (uint64_t)k;
			if (sync_on)
				pthread_mutex_unlock(&lock);
		}
		if (sync_on)
			pthread_barrier_wait(&barrier);
	}
	return (void *)(uintptr_t)((s.sum + s.crit) & 1);
}

int main(int argc, char **argv)
{
	pthread_t t[256];
	struct timespec a, b;
	const char *tf = getenv("STACK_UB_TIME_FILE");
	size_t bytes;

	if (argc != 7 || sb_parse_ul(argv[2], 0, 2, &mode) ||
	    sb_parse_ul(argv[3], 1, 256, &threads) || sb_parse_ul(argv[4], 1, 1ul << 30, &rounds) ||
	    sb_parse_ul(argv[5], 1, 1ul << 30, &steps) || sb_parse_ul(argv[6], 1, 1ul << 30, &iters) ||
	    (strcmp(argv[1], "tiny") && strcmp(argv[1], "rnd") && strcmp(argv[1], "seq") &&
	     strcmp(argv[1], "imb"))) {
		fprintf(stderr, "usage: %s tiny|rnd|seq|imb SYNC(0|1|2) THREADS N M ITER\n",
			argv[0]);
		return 2;
	}
	kind = !strcmp(argv[1], "tiny") ? TINY : !strcmp(argv[1], "rnd") ? RND :
	       !strcmp(argv[1], "seq") ? SEQ : IMB;
	bytes = kind == TINY || kind == IMB ? 32u << 10 : 64u << 20;
	words = bytes / 8;
	if (!(data = malloc(bytes)) ||
	    (mode && pthread_barrier_init(&barrier, NULL, (unsigned)threads)))
		return 1;
	memset(data, 1, bytes);
	if (mode != 0) {   /* the synchronized phase */
		sync_on = 1;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (unsigned long i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
				return 1;
		for (unsigned long i = 0; i < threads; i++)
			pthread_join(t[i], NULL);   /* JOIN:sync */
		clock_gettime(CLOCK_MONOTONIC, &b);
	}
	if (mode != 1) {   /* the unsynchronized phase: the truth */
		sync_on = 0;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (unsigned long i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
				return 1;
		for (unsigned long i = 0; i < threads; i++)
			pthread_join(t[i], NULL);   /* JOIN:nosync */
		clock_gettime(CLOCK_MONOTONIC, &b);
	}
	if (tf) {
		FILE *f = fopen(tf, "w");

		if (!f)
			return 1;
		fprintf(f, "%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000ll +
				     (b.tv_nsec - a.tv_nsec));
		fclose(f);
	}
	free(data);
	return 0;
}
