// SPDX-License-Identifier: MIT
/* Phase times of a recording (rec_timing.h). */
#include "rec_timing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

enum { SB_TM_MAX = 48 };

static struct {
	int on;   /* 0 unknown, 1 on, -1 off */
	unsigned n;
	uint64_t t0;
	const char *name[SB_TM_MAX];
	uint64_t at[SB_TM_MAX];
	unsigned nspans;
	const char *span_name[8];
	uint64_t span[8][2];
} tm;

static bool tm_on(void)
{
	if (!tm.on) {
		const char *e = getenv("SCALEBPF_TIMING");

		tm.on = e && *e && *e != '0' ? 1 : -1;
		tm.t0 = sb_now_ns();
	}
	return tm.on > 0;
}

void sb_tm_mark(const char *name)
{
	if (!tm_on() || tm.n >= SB_TM_MAX)
		return;
	tm.name[tm.n] = name;
	tm.at[tm.n++] = sb_now_ns();
}

void sb_tm_span(const char *name, uint64_t start_ns, uint64_t end_ns)
{
	if (!tm_on() || tm.nspans >= 8)
		return;
	tm.span_name[tm.nspans] = name;
	tm.span[tm.nspans][0] = start_ns;
	tm.span[tm.nspans++][1] = end_ns;
}

void sb_tm_report(void)
{
	if (!tm_on() || !tm.n)
		return;
	sb_tm_mark("end");
	fprintf(stderr, "scalebpf timing (ms): at      took  phase\n");
	for (unsigned i = 0; i + 1 < tm.n; i++)
		fprintf(stderr, "scalebpf timing:   %7.1f %7.1f  %s\n",
			(double)(tm.at[i] - tm.t0) / 1e6,
			(double)(tm.at[i + 1] - tm.at[i]) / 1e6, tm.name[i]);
	for (unsigned i = 0; i < tm.nspans; i++)
		fprintf(stderr, "scalebpf timing:   %7.1f %7.1f  %s\n",
			(double)(tm.span[i][0] - tm.t0) / 1e6,
			(double)(tm.span[i][1] - tm.span[i][0]) / 1e6, tm.span_name[i]);
	tm.n = tm.nspans = 0;
}
