// SPDX-License-Identifier: MIT
/* A barrier closes the caller's segment: its counts go before it arrives. */
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_barrier_wait(pthread_barrier_t *b);

int __wrap_pthread_barrier_wait(pthread_barrier_t *b)
{
	sb_exact_flush(0);
	return __real_pthread_barrier_wait(b);
}
