// SPDX-License-Identifier: MIT
/*
 * Trace builds only: as wrap_pthread_mutex_lock.c, when it took the mutex.
 * It must see the result, so the call returns here (no tail call): the
 * real call's return address is in this wrapper.  That costs no site: a
 * trylock never waits, and `record` probes it for no section or lock
 * wait.
 */
#include <pthread.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_mutex_trylock(pthread_mutex_t *m);

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
	int ret = __real_pthread_mutex_trylock(m);

	if (!ret && sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, m, (uintptr_t)__builtin_return_address(0));
	return ret;
}
