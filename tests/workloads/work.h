/* work.h — shared helpers for the scalebpf test workloads.
 *
 * Workloads have KNOWN TRUTH: every thread does a fixed number of CPU
 * instructions (never a time-based amount), so that per-thread busy times
 * keep exact ratios even when threads are oversubscribed (8 threads on
 * 2 cores).
 *
 * sb_work(units) runs units * 1000 iterations of a dependent 64-bit LCG
 * chain (multiply + add, ~4 cycles of latency per iteration).  The empty
 * asm with a "+r" constraint on every iteration makes the accumulator
 * opaque to the compiler, so the loop cannot be folded, strength-reduced
 * or vectorized; the chain is a pure register dependency with no memory
 * traffic, so its cost does not depend on cache state or on the other
 * threads.
 *
 * Measured on the development machine (KVM guest, AMD EPYC, 2 vCPUs,
 * gcc 12 -O2 and clang 14 -O2 alike): one unit ~= 1.27-1.30 microseconds
 * of on-CPU time (200000 units: 254-259 ms task-clock).  Re-measure with
 *   perf stat -e task-clock build/workloads/barrier_ratio 1 1 200000
 * Each blocking synchronization call costs the waiting thread a few
 * microseconds of CPU as well, so use UNITS >= ~1000 per barrier interval
 * where per-thread busy ratios must hold to within 1%.
 */
#ifndef SB_WORKLOADS_WORK_H
#define SB_WORKLOADS_WORK_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SB_WORK_ITERS_PER_UNIT 1000UL

/* Largest accepted "units" argument: keeps units * NTHREADS * 1000 far
 * from overflow. */
#define SB_MAX_UNITS 10000000UL
#define SB_MAX_THREADS 1024UL

/* noinline (and noclone on gcc) keeps a single, stable symbol for stacks. */
#if defined(__clang__)
#define SB_NOINLINE __attribute__((noinline))
#else
#define SB_NOINLINE __attribute__((noinline, noclone))
#endif

static volatile unsigned long sb_work_sink __attribute__((unused));

static SB_NOINLINE __attribute__((unused)) void sb_work(unsigned long units)
{
	unsigned long n = units * SB_WORK_ITERS_PER_UNIT;
	unsigned long x = units | 1;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	sb_work_sink = x;
}

/*
 * The program's own wall time, for the overhead benchmark: with
 * SB_WALL_FILE set, the elapsed nanoseconds from start to exit are written
 * there, so the recorder's own start-up and teardown (not overhead on the
 * target) stay out of the ratio; a second line holds the exit time
 * (CLOCK_REALTIME ns, as `date +%s%N`): how long the recorder takes after
 * the program exited.
 */
static struct timespec sb_wall_start;

static void sb_wall_report(void)
{
	const char *path = getenv("SB_WALL_FILE");
	struct timespec now, real;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &real);
	fprintf(f, "%lld\n", (long long)(now.tv_sec - sb_wall_start.tv_sec) * 1000000000LL +
			       (now.tv_nsec - sb_wall_start.tv_nsec));
	fprintf(f, "%lld\n", (long long)real.tv_sec * 1000000000LL + real.tv_nsec);
	fclose(f);
}

static __attribute__((constructor, unused)) void sb_wall_begin(void)
{
	clock_gettime(CLOCK_MONOTONIC, &sb_wall_start);
	atexit(sb_wall_report);
}

/* Parse a whole decimal argument in [min, max]; 0 on success, -1 if not. */
static __attribute__((unused)) int sb_parse_ul(const char *s, unsigned long min,
					       unsigned long max,
					       unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * The common "NTHREADS ITERS UNITS" arguments, args[0..2]: NTHREADS
 * 1..SB_MAX_THREADS, ITERS >= 1, UNITS units_min..SB_MAX_UNITS.  0 on
 * success, -1 if any is not.  sb_parse_iters_units() is the "ITERS UNITS"
 * tail alone.  The caller checks argc.
 */
static __attribute__((unused)) int sb_parse_iters_units(char **args,
							unsigned long units_min,
							unsigned long *iters,
							unsigned long *units)
{
	if (sb_parse_ul(args[0], 1, ULONG_MAX, iters) ||
	    sb_parse_ul(args[1], units_min, SB_MAX_UNITS, units))
		return -1;
	return 0;
}

static __attribute__((unused)) int sb_parse_thread_args(char **args,
							unsigned long units_min,
							unsigned long *nthreads,
							unsigned long *iters,
							unsigned long *units)
{
	if (sb_parse_ul(args[0], 1, SB_MAX_THREADS, nthreads) ||
	    sb_parse_iters_units(args + 1, units_min, iters, units))
		return -1;
	return 0;
}

/*
 * The usage message of a program whose arguments are exactly NTHREADS
 * ITERS UNITS, ITERS and UNITS named iters_name and units_name (e.g. "N",
 * "HOLD_UNITS"), on stderr; then exit 2.
 */
static __attribute__((unused, noreturn)) void
sb_thread_args_usage(const char *argv0, const char *iters_name,
		     const char *units_name, unsigned long units_min)
{
	fprintf(stderr, "usage: %s NTHREADS %s %s\n"
		"  NTHREADS 1..%lu, %s >= 1, %s %lu..%lu\n",
		argv0, iters_name, units_name, SB_MAX_THREADS, iters_name,
		units_name, units_min, SB_MAX_UNITS);
	exit(2);
}

/* calloc, or "calloc: <reason>" on stderr and exit 1. */
static __attribute__((unused)) void *sb_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

/* pthread_barrier_init for n threads, or "pthread_barrier_init: <reason>"
 * on stderr and exit 1. */
static __attribute__((unused)) void sb_barrier_init(pthread_barrier_t *bar,
						    unsigned long n)
{
	int err = pthread_barrier_init(bar, NULL, (unsigned)n);

	if (err) {
		fprintf(stderr, "pthread_barrier_init: %s\n", strerror(err));
		exit(1);
	}
}

/*
 * Create n threads running fn, thread i getting &args[i] (args: an array
 * of n elements of elem_size bytes; NULL gives every thread NULL), then
 * join them all.  A thread that cannot be created: "pthread_create:
 * <reason>" on stderr and exit 1.
 */
static __attribute__((unused)) void sb_run_threads(unsigned long n,
						   void *(*fn)(void *),
						   void *args, size_t elem_size)
{
	pthread_t *tids = (pthread_t *)sb_calloc(n, sizeof(*tids));

	for (unsigned long i = 0; i < n; i++) {
		void *arg = args ? (char *)args + i * elem_size : NULL;
		int err = pthread_create(&tids[i], NULL, fn, arg);

		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	for (unsigned long i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
}

#ifdef _GNU_SOURCE
/* Name the calling thread "<prefix>-<idx>" (pthread_setname_np is a GNU
 * extension: only for sources that define _GNU_SOURCE). */
static __attribute__((unused)) void sb_name_thread(const char *prefix,
						   unsigned long idx)
{
	char name[16];

	snprintf(name, sizeof(name), "%s-%lu", prefix, idx);
	pthread_setname_np(pthread_self(), name);
}
#endif

/* Sleep for ms milliseconds, resuming after signal interruptions. */
static __attribute__((unused)) void sb_sleep_ms(unsigned long ms)
{
	struct timespec req = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};
	struct timespec rem;

	while (nanosleep(&req, &rem) != 0 && errno == EINTR)
		req = rem;
}

#endif /* SB_WORKLOADS_WORK_H */
