// SPDX-License-Identifier: MIT
/*
 * A condvar wait with a timeout: as pthread_cond_wait
 * (wrap_pthread_cond_wait.c).  Timed out or not, it takes the mutex
 * again: a trace build owes the ACQUIRE either way.
 */
#include <pthread.h>
#include <time.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime);

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, m, (uintptr_t)__builtin_return_address(0));
	if (!sb_cv_signalled(c))
		sb_exact_sync(0, SB_TSYNC_COND_WAIT, (uintptr_t)c);
	if (sb_trace_reacquire)
		sb_trace_reacquire(m, (uintptr_t)__builtin_return_address(0));
	return __real_pthread_cond_timedwait(c, m, abstime);
}
