// SPDX-License-Identifier: MIT
/*
 * Trace builds only: the RELEASE goes before the real unlock, after every
 * access the mutex protected and before another thread can take it.
 */
#include <pthread.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_mutex_unlock(pthread_mutex_t *m);

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, m, (uintptr_t)__builtin_return_address(0));
	return __real_pthread_mutex_unlock(m);
}
