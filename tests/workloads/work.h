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
#include <stdio.h>
#include <stdlib.h>
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

	/* gcc skips the frame-pointer setup in leaf functions that need no
	 * stack frame even with -fno-omit-frame-pointer; that would drop the
	 * caller from frame-pointer stack walks of samples taken in here.
	 * Taking the frame address forces a real frame. */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
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
 * target) stay out of the ratio.
 */
static struct timespec sb_wall_start;

static void sb_wall_report(void)
{
	const char *path = getenv("SB_WALL_FILE");
	struct timespec now;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(f, "%lld\n", (long long)(now.tv_sec - sb_wall_start.tv_sec) * 1000000000LL +
			       (now.tv_nsec - sb_wall_start.tv_nsec));
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
