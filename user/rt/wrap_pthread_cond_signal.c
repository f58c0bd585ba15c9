// SPDX-License-Identifier: MIT
/*
 * pthread_cond_signal flushes nothing (a barrier never signals, and in
 * producer/consumer code it comes per item); it only marks the condvar as
 * a queue's, whose waits then need no flush (cv_signalled.c).
 */
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_cond_signal(pthread_cond_t *c);

int __wrap_pthread_cond_signal(pthread_cond_t *c)
{
	sb_cv_mark_signalled(c);
	return __real_pthread_cond_signal(c);
}
