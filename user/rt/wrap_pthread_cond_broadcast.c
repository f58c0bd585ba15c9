// SPDX-License-Identifier: MIT
/*
 * The broadcast that releases a condvar barrier is made by its last
 * arriver, which does not wait: its segment ends here (sections/condbar.c
 * makes it arrive and leave at the broadcast).  pthread_cond_signal
 * flushes nothing: a barrier never signals (condbar.c takes a signalled
 * condvar for no barrier), and in producer/consumer code it is a per-item
 * fast path (wrap_pthread_cond_signal.c).
 */
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_cond_broadcast(pthread_cond_t *c);

int __wrap_pthread_cond_broadcast(pthread_cond_t *c)
{
	sb_exact_sync(0, SB_TSYNC_COND_WAKE, (uintptr_t)c);
	return __real_pthread_cond_broadcast(c);
}
