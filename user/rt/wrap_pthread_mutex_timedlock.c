// SPDX-License-Identifier: MIT
/*
 * Trace builds only: as wrap_pthread_mutex_lock.c, ACQUIRE before a tail
 * call.  A lock that times out is recorded as taken: rare, and accepted
 * to keep the program's site.
 */
#include <pthread.h>
#include <time.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime);

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, m, (uintptr_t)__builtin_return_address(0));
	return __real_pthread_mutex_timedlock(m, abstime);
}
