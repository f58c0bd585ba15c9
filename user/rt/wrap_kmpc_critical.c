// SPDX-License-Identifier: MIT
/*
 * Trace builds only: an OpenMP critical section entered (libomp) is an
 * ACQUIRE of its name, the lock all criticals of that name share.  It
 * goes before the call, which stays a tail call (the site `record`
 * takes), as in wrap_pthread_mutex_lock.c.
 */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real___kmpc_critical(void *loc, int32_t gtid, void *crit);

void __wrap___kmpc_critical(void *loc, int32_t gtid, void *crit)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, crit, (uintptr_t)__builtin_return_address(0));
	__real___kmpc_critical(loc, gtid, crit);
}
