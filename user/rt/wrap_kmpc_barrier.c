// SPDX-License-Identifier: MIT
/* An explicit (or a worksharing loop's) OpenMP barrier under libomp. */
#include <stdint.h>

#include "exact_rt.h"

void __real___kmpc_barrier(void *loc, int32_t gtid);

void __wrap___kmpc_barrier(void *loc, int32_t gtid)
{
	sb_exact_sync(0, SB_TSYNC_OMP_BARRIER, sbx_region);
	__real___kmpc_barrier(loc, gtid);
}
