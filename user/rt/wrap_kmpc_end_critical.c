// SPDX-License-Identifier: MIT
/* Trace builds only: leaving an OpenMP critical section, RELEASE before. */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real___kmpc_end_critical(void *loc, int32_t gtid, void *crit);

void __wrap___kmpc_end_critical(void *loc, int32_t gtid, void *crit)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, crit, (uintptr_t)__builtin_return_address(0));
	__real___kmpc_end_critical(loc, gtid, crit);
}
