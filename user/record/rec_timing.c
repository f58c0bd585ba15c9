// SPDX-License-Identifier: MIT
/* Phase times of a recording (rec_timing.h). */
#include "rec_timing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clock.h"

enum { SB_TM_MAX = 64, SB_TM_SPANS = 8 };

/* One entry per phase name, in the order first entered: a phase entered
 * again (an exec of a driver script's hundred) adds to it, so the table
 * never fills before the stop and the write are marked. */
struct tm_phase {
	const char *name;
	uint64_t first, wall, cpu;
	unsigned count;
};

static struct {
	int on;   /* 0 unknown, 1 on, -1 off */
	uint64_t t0, t0_real;
	struct tm_phase ph[SB_TM_MAX];
	unsigned n, cur;   /* phases; the open one (n: none) */
	uint64_t cur_at, cur_cpu;
	unsigned nspans;
	const char *span_name[SB_TM_SPANS];
	uint64_t span[SB_TM_SPANS][3];   /* start, end, CPU */
} tm;

uint64_t sb_tm_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

uint64_t sb_tm_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool tm_on(void)
{
	if (!tm.on) {
		const char *e = getenv("SCALEBPF_TIMING");
		struct timespec rt;

		tm.on = e && *e && strcmp(e, "0") ? 1 : -1;
		tm.t0 = sb_now_ns();
		clock_gettime(CLOCK_REALTIME, &rt);
		tm.t0_real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
		tm.cur = SB_TM_MAX;
	}
	return tm.on > 0;
}

void sb_tm_mark(const char *name)
{
	uint64_t now, cpu;
	unsigned i;

	if (!tm_on())
		return;
	now = sb_now_ns();
	cpu = sb_tm_cpu_ns();
	if (tm.cur < tm.n) {
		tm.ph[tm.cur].wall += now - tm.cur_at;
		tm.ph[tm.cur].cpu += cpu - tm.cur_cpu;
	}
	for (i = 0; i < tm.n && strcmp(tm.ph[i].name, name); i++)
		;
	if (i == tm.n && tm.n < SB_TM_MAX)
		tm.ph[tm.n++] = (struct tm_phase){ .name = name, .first = now };
	tm.cur = i < tm.n ? i : SB_TM_MAX;
	if (tm.cur < tm.n)
		tm.ph[tm.cur].count++;
	tm.cur_at = now;
	tm.cur_cpu = cpu;
}

void sb_tm_span(const char *name, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns)
{
	if (!tm_on() || tm.nspans >= SB_TM_SPANS)
		return;
	tm.span_name[tm.nspans] = name;
	tm.span[tm.nspans][0] = start_ns;
	tm.span[tm.nspans][1] = end_ns;
	tm.span[tm.nspans++][2] = cpu_ns;
}

void sb_tm_report(void)
{
	if (!tm_on() || !tm.n)
		return;
	sb_tm_mark("end");   /* closes the last phase */
	fprintf(stderr, "scalebpf timing: the recorder started at realtime %llu ns; "
		"ms: at (since then), took (wall), cpu (the recorder's, all threads; the "
		"thread's own in a span of another thread, listed last)\n",
		(unsigned long long)tm.t0_real);
	fprintf(stderr, "scalebpf timing:      at    took     cpu  phase\n");
	for (unsigned i = 0; i < tm.n; i++) {
		const struct tm_phase *p = &tm.ph[i];

		if (!strcmp(p->name, "end"))
			continue;
		fprintf(stderr, "scalebpf timing: %7.1f %7.1f %7.1f  %s", (double)(p->first - tm.t0) / 1e6,
			(double)p->wall / 1e6, (double)p->cpu / 1e6, p->name);
		if (p->count > 1)
			fprintf(stderr, " (%u times)", p->count);
		fputc('\n', stderr);
	}
	for (unsigned i = 0; i < tm.nspans; i++)
		fprintf(stderr, "scalebpf timing: %7.1f %7.1f %7.1f  %s\n",
			(double)(tm.span[i][0] - tm.t0) / 1e6,
			(double)(tm.span[i][1] - tm.span[i][0]) / 1e6,
			(double)tm.span[i][2] / 1e6, tm.span_name[i]);
	tm.n = tm.nspans = 0;
	tm.cur = SB_TM_MAX;
}
