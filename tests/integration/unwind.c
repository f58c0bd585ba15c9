/* unwind callers NTHREADS(<=4) SECONDS | unwind cause|cause2 ITERS UNITS
 *
 * Built by tests/integration/unwind.sh as users build: gcc and clang -O2,
 * no frame-pointer flags, so leaf() and its callers are frameless.
 *
 * callers: thread t calls leaf() only through caller_t, so the caller of
 * every sample in leaf() is known by its thread; prints "base ADDR" (the
 * runtime address of main) and "T TID t" per thread.
 *
 * cause: four threads meet at a barrier every iteration; each calls the
 * helper leaf(UNITS), thread 0 also extra_work() -> leaf(3 UNITS) behind
 * the test on the cause line.  Known truth: that test is the cause of the
 * imbalance, not leaf()'s loop, which every path runs.  cause2: the
 * same with shared() -> leaf() in between, called from both paths.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static unsigned long units, iters;
static double seconds;
static pthread_barrier_t bar;

/* A dependent multiply-add chain: units * 1000 iterations, no memory. */
static __attribute__((noinline)) unsigned long leaf(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n * 1000; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Distinct bodies: gcc's identical-code folding must not merge them. */
static __attribute__((noinline)) unsigned long caller_0(unsigned long n)
{
	unsigned long r = leaf(n);

	sink += r + 10;
	return r ^ 1;
}

static __attribute__((noinline)) unsigned long caller_1(unsigned long n)
{
	unsigned long r = leaf(n);

	sink += r + 21;
	return r ^ 2;
}

static __attribute__((noinline)) unsigned long caller_2(unsigned long n)
{
	unsigned long r = leaf(n);

	sink += r + 32;
	return r ^ 3;
}

static __attribute__((noinline)) unsigned long caller_3(unsigned long n)
{
	unsigned long r = leaf(n);

	sink += r + 43;
	return r ^ 4;
}

static unsigned long (*const callers[4])(unsigned long) = {
	caller_0, caller_1, caller_2, caller_3,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *callers_thread(void *arg)
{
	long t = (long)arg;
	double end = now() + seconds;

	pthread_mutex_lock(&print_lock);
	printf("T %d %ld\n", gettid(), t);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	while (now() < end)
		sink += callers[t](200);
	return NULL;
}

static __attribute__((noinline)) void extra_work(void)
{
	sink += leaf(3 * units);
}

static void *cause_thread(void *arg)
{
	long me = (long)arg;

	for (unsigned long it = 0; it < iters; it++) {
		sink += leaf(units);
		if (me == 0) /* SITE:cause */
			extra_work();
		pthread_barrier_wait(&bar); /* SITE:barrier */
	}
	return NULL;
}

/* cause2: the same two levels deep, through shared(), itself shared. */
static __attribute__((noinline)) unsigned long shared(unsigned long n)
{
	return leaf(n) ^ n;
}

static __attribute__((noinline)) void extra_work2(void)
{
	sink += shared(3 * units);
}

static void *cause2_thread(void *arg)
{
	long me = (long)arg;

	for (unsigned long it = 0; it < iters; it++) {
		sink += shared(units);
		if (me == 0) /* SITE:cause2 */
			extra_work2();
		pthread_barrier_wait(&bar); /* SITE:barrier2 */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	long n = 4;
	void *(*fn)(void *);

	if (argc == 4 && !strcmp(argv[1], "callers")) {
		n = atol(argv[2]);
		seconds = atof(argv[3]);
		fn = callers_thread;
		printf("base %p\n", (void *)main);
	} else if (argc == 4 && (!strcmp(argv[1], "cause") || !strcmp(argv[1], "cause2"))) {
		iters = strtoul(argv[2], NULL, 10);
		units = strtoul(argv[3], NULL, 10);
		fn = strcmp(argv[1], "cause") ? cause2_thread : cause_thread;
	} else {
		fprintf(stderr, "usage: %s callers NTHREADS SECONDS | cause|cause2 ITERS UNITS\n",
			argv[0]);
		return 2;
	}
	if (n < 1 || n > 4)
		return 2;
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (long t = 0; t < n; t++)
		pthread_create(&th[t], NULL, fn, (void *)t);
	for (long t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	return 0;
}
