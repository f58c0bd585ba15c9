/* chip_ws MODE KB THREADS REFS
 *
 * Known truth for the cache hit profile (issue 14): every thread works on
 * an array of its own, so each thread's CHiP sees exactly one of these
 * reference streams (-O2 keeps the loop's pointers in registers: the
 * array's loads are all it traces, bar a handful):
 *   random  REFS reads of random 8-byte words of KB kilobytes: the hit
 *           ratio of an LRU cache of C bytes is C / W below W, then all
 *           but the first touch of each line;
 *   chase   REFS reads, line after line, round and round KB kilobytes:
 *           every read misses below W, all but the first round hit above;
 *   stream  REFS reads with an 8-byte stride through a fresh 256 MB array:
 *           7 of 8 hit at every size (the line's first word misses);
 *   micro   the paper's Fig. 5: 15 of 16 reads random in a hot region of
 *           KB kilobytes, 1 of 16 the next line of a 256 MB one;
 *   shuffle the Fig. 5 task as a latency-bound loop: a pointer chase
 *           through KB kilobytes' lines in a random cyclic order, each
 *           read waiting for the one before (the CHiP curve is random's;
 *           make bench times it at 1 and 2 threads).
 * Prints nothing on stdout.  With CHIP_WS_CPU_FILE set, writes there the
 * CPU time (ns) the threads spent in their loops, summed: make bench's
 * time per load, which a busy host's steal time does not inflate (two
 * vCPUs here often get 1.2 CPUs between them: wall time would count that
 * as a cache effect).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "work.h"

#define BIG (256ul << 20)

static int mode;
static size_t words;
static unsigned long refs;

struct arg {
	uint64_t *a, *big;
	uint64_t seed, sum;
	long long cpu_ns;
};

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *run(void *v)
{
	struct arg *g = v;
	uint64_t x = mode == 4 ? 0 : g->seed, s = 0;
	const uint64_t *a = g->a, *big = g->big;
	size_t n = words;
	long long c0 = thread_cpu_ns();

	for (unsigned long i = 0; i < refs; i++) {
		switch (mode) {
		case 0:
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			s += a[x % n];
			break;
		case 1:
			s += a[(i * 8) % n];
			break;
		case 2:
			s += big[i % (BIG / 8)];
			break;
		case 4:
			x = a[x * 8];
			s += x;
			break;
		default:
			if (i % 16) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				s += a[x % n];
			} else {
				s += big[(i / 16 * 8) % (BIG / 8)];
			}
		}
	}
	g->sum = s;
	g->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

/* A random cycle through the n lines of a (Sattolo): a[8 * k] holds the
 * line after line k. */
static void shuffle(uint64_t *a, size_t n, uint64_t seed)
{
	size_t *order = malloc(n * sizeof(*order));

	if (!order)
		exit(1);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j, t;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		j = (size_t)(seed % i);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		a[8 * order[i]] = order[(i + 1) % n];
	free(order);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "random", "chase", "stream", "micro", "shuffle" };
	unsigned long kb, threads;
	struct arg *g;
	pthread_t *t;
	uint64_t total = 0;
	long long cpu_ns = 0;
	const char *cpu_file = getenv("CHIP_WS_CPU_FILE");

	if (argc != 5)
		goto usage;
	for (mode = 0; mode < 5 && strcmp(argv[1], modes[mode]); mode++)
		;
	if (mode == 5 || sb_parse_ul(argv[2], 1, 1ul << 22, &kb) ||
	    sb_parse_ul(argv[3], 1, 256, &threads) ||
	    sb_parse_ul(argv[4], 1, 1ul << 40, &refs))
		goto usage;
	words = kb * 1024 / 8;
	g = calloc(threads, sizeof(*g));
	t = calloc(threads, sizeof(*t));
	if (!g || !t)
		return 1;
	for (unsigned long i = 0; i < threads; i++) {
		g[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
		if (!(g[i].a = aligned_alloc(4096, words * 8)) ||
		    ((mode == 2 || mode == 3) && !(g[i].big = aligned_alloc(4096, BIG))))
			return 1;
		memset(g[i].a, 1, words * 8);
		if (mode == 4)
			shuffle(g[i].a, words / 8, g[i].seed);
		if (g[i].big)
			memset(g[i].big, 1, BIG);
	}
	for (unsigned long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, run, &g[i]))
			return 1;
	for (unsigned long i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += g[i].sum;
		cpu_ns += g[i].cpu_ns;
	}
	if (cpu_file && *cpu_file) {
		FILE *f = fopen(cpu_file, "w");

		if (!f || fprintf(f, "%lld\n", cpu_ns) < 0 || fclose(f))
			return 1;
	}
	return total == 42;   /* keeps the sums */
usage:
	fprintf(stderr, "usage: %s random|chase|stream|micro|shuffle KB THREADS REFS\n", argv[0]);
	return 2;
}
