// SPDX-License-Identifier: MIT
/*
 * hold_breakpoints: takes every debug register of every CPU with CPU-wide
 * write breakpoints (as a debugger or `perf record -e mem:ADDR` would), so
 * that a recorder's per-thread watchpoints meet ENOSPC.  Prints "held N"
 * once it holds N, then waits to be killed.  For sharing_sampled.sh.
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long watched[4];

int main(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int held = 0;

	for (long cpu = 0; cpu < ncpu; cpu++)
		for (int k = 0; k < 4; k++) {
			struct perf_event_attr a;

			memset(&a, 0, sizeof(a));
			a.type = PERF_TYPE_BREAKPOINT;
			a.size = sizeof(a);
			a.bp_type = HW_BREAKPOINT_W;
			a.bp_addr = (unsigned long)&watched[k];
			a.bp_len = HW_BREAKPOINT_LEN_8;
			a.sample_period = 1;
			a.exclude_kernel = 1;
			if (syscall(__NR_perf_event_open, &a, -1, (int)cpu, -1, 0) >= 0)
				held++;
		}
	printf("held %d\n", held);
	fflush(stdout);
	for (;;)
		pause();
}
