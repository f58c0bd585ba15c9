// SPDX-License-Identifier: MIT
/* Trace builds only: an OpenMP lock given back, RELEASE before. */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real_omp_unset_lock(void *lock);

void __wrap_omp_unset_lock(void *lock)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, lock, (uintptr_t)__builtin_return_address(0));
	__real_omp_unset_lock(lock);
}
