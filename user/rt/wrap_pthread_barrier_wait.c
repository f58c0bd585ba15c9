// SPDX-License-Identifier: MIT
/* A barrier closes the caller's segment: its counts go before it arrives. */
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_barrier_wait(pthread_barrier_t *b);

int __wrap_pthread_barrier_wait(pthread_barrier_t *b)
{
	sb_exact_sync(0, SB_TSYNC_BARRIER, (uintptr_t)b);
	return __real_pthread_barrier_wait(b);
}
