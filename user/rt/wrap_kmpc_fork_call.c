// SPDX-License-Identifier: MIT
/*
 * An OpenMP parallel region under libomp.  The master's serial work is
 * flushed before the fork; every team thread runs the outlined function
 * through sbx_task(), which flushes the region's work right after it returns,
 * flagged SB_EXACT_LAST: by then `record` has seen the task end (its
 * uretprobe on the outlined function), and the counts belong to the
 * segment that closed.
 */
#include <alloca.h>
#include <stdarg.h>
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_events.h"

void sbx_call_n(void *fn, long n, const uintptr_t *args);
void __real___kmpc_fork_call(void *loc, int32_t argc, void *fn, ...);

/* At least 6 slots, zeroed beyond n, as sbx_call_n reads them. */
static uintptr_t *slots(uintptr_t *v, long n)
{
	for (long i = n; i < 6; i++)
		v[i] = 0;
	return v;
}

/* The n pointer-sized variadic arguments after ap's start into v[]. */
static void take(va_list ap, uintptr_t *v, intptr_t n)
{
	for (intptr_t i = 0; i < n; i++)
		v[i] = va_arg(ap, uintptr_t);
}

__thread uintptr_t sbx_region;
static uintptr_t regions;      /* numbers handed out */

static void sbx_task(int32_t *gtid, int32_t *btid, void *fn, intptr_t argc, uintptr_t region,
		     ...)
{
	uintptr_t *v = alloca((size_t)(argc + 8) * sizeof(*v));
	uintptr_t outer = sbx_region;   /* a nested region's team thread */
	va_list ap;

	v[0] = (uintptr_t)gtid;
	v[1] = (uintptr_t)btid;
	va_start(ap, region);
	take(ap, v + 2, argc);
	va_end(ap);
	sbx_region = region;
	sb_exact_sync(0, SB_TSYNC_OMP_TASK, region);
	sbx_call_n(fn, argc + 2, slots(v, argc + 2));
	sb_exact_sync(SB_EXACT_LAST, SB_TSYNC_OMP_TASK_END, region);
	sbx_region = outer;
}

void __wrap___kmpc_fork_call(void *loc, int32_t argc, void *fn, ...)
{
	uintptr_t *v = alloca(((size_t)(argc > 0 ? argc : 0) + 8) * sizeof(*v));
	va_list ap;

	if (argc < 0)
		argc = 0;
	v[0] = (uintptr_t)loc;
	v[1] = (uintptr_t)(argc + 3);
	v[2] = (uintptr_t)sbx_task;
	v[3] = (uintptr_t)fn;
	v[4] = (uintptr_t)argc;
	v[5] = __atomic_add_fetch(&regions, 1, __ATOMIC_RELAXED);
	va_start(ap, fn);
	take(ap, v + 6, argc);
	va_end(ap);
	sb_exact_sync(0, SB_TSYNC_OMP_FORK, v[5]);
	sbx_call_n((void *)__real___kmpc_fork_call, argc + 6, slots(v, argc + 6));
}
