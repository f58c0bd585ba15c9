// SPDX-License-Identifier: MIT
/* Trace builds only: one level of a nestable OpenMP lock given back. */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real_omp_unset_nest_lock(void *lock);

void __wrap_omp_unset_nest_lock(void *lock)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, lock, (uintptr_t)__builtin_return_address(0));
	__real_omp_unset_nest_lock(lock);
}
