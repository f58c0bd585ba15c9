// SPDX-License-Identifier: MIT
/* Trace builds only: `critical hint(...)`, as wrap_kmpc_critical.c. */
#include <stdint.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

void __real___kmpc_critical_with_hint(void *loc, int32_t gtid, void *crit, uint32_t hint);

void __wrap___kmpc_critical_with_hint(void *loc, int32_t gtid, void *crit, uint32_t hint)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_ACQUIRE, crit, (uintptr_t)__builtin_return_address(0));
	__real___kmpc_critical_with_hint(loc, gtid, crit, hint);
}
