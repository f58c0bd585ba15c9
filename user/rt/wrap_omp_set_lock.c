// SPDX-License-Identifier: MIT
/*
 * Trace builds only: an OpenMP lock taken is an ACQUIRE of the program's
 * omp_lock_t (opaque here: no omp.h needed), written before the call,
 * which stays a tail call (the site `record` takes), as in
 * wrap_pthread_mutex_lock.c.
 */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real_omp_set_lock(void *lock);

void __wrap_omp_set_lock(void *lock)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, lock, (uintptr_t)__builtin_return_address(0));
	__real_omp_set_lock(lock);
}
