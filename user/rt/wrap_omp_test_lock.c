// SPDX-License-Identifier: MIT
/*
 * Trace builds only: as wrap_omp_set_lock.c, when it took the lock.  It
 * must see the result, so the call returns here (no tail call); a test
 * never waits, and `record` probes it for no section or lock wait.
 */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_omp_test_lock(void *lock);

int __wrap_omp_test_lock(void *lock)
{
	int ret = __real_omp_test_lock(lock);

	if (ret && sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, lock, (uintptr_t)__builtin_return_address(0));
	return ret;
}
