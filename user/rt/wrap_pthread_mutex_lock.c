// SPDX-License-Identifier: MIT
/*
 * Trace builds only (`scalebpf cc --trace-mem`): a mutex taken is an
 * ACQUIRE record, so the simulation keeps the accesses it protects
 * mutually exclusive.  No flush: a lock ends no segment.
 *
 * The ACQUIRE goes before the call, which stays a tail call: `record`
 * takes its return address for the lock's site (records.c calls_probed),
 * and the thread records nothing inside it, so the ACQUIRE lands at the
 * same place among its records.  A call that fails (EDEADLK, EINVAL...)
 * is recorded as taken too.
 */
#include <pthread.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_mutex_lock(pthread_mutex_t *m);

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, m, (uintptr_t)__builtin_return_address(0));
	return __real_pthread_mutex_lock(m);
}
