// SPDX-License-Identifier: MIT
/*
 * Trace builds only: a nestable OpenMP lock taken, as wrap_omp_set_lock.c.
 * Every level is an ACQUIRE (and every unset a RELEASE): the lock is free
 * again at the RELEASE that balances the owner's first ACQUIRE.
 */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real_omp_set_nest_lock(void *lock);

void __wrap_omp_set_nest_lock(void *lock)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, lock, (uintptr_t)__builtin_return_address(0));
	__real_omp_set_nest_lock(lock);
}
