// SPDX-License-Identifier: MIT
/*
 * Trace builds only: as wrap_omp_set_nest_lock.c when it returns the new
 * nesting count, 0 when another thread holds the lock.  Without it, an
 * unset after a successful test would be a RELEASE with no ACQUIRE.  It
 * returns here to be seen (no tail call), as wrap_omp_test_lock.c.
 */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_omp_test_nest_lock(void *lock);

int __wrap_omp_test_nest_lock(void *lock)
{
	int ret = __real_omp_test_nest_lock(lock);

	if (ret && sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, lock, (uintptr_t)__builtin_return_address(0));
	return ret;
}
