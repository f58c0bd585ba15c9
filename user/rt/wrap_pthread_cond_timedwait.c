// SPDX-License-Identifier: MIT
/* A condvar wait with a timeout: as pthread_cond_wait (wrap_pthread_cond_wait.c). */
#include <pthread.h>
#include <time.h>

#include "exact_rt.h"

int __real_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime);

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				  const struct timespec *abstime)
{
	if (!sb_cv_signalled(c))
		sb_exact_flush(0);
	return __real_pthread_cond_timedwait(c, m, abstime);
}
