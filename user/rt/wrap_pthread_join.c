// SPDX-License-Identifier: MIT
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_join(pthread_t th, void **ret);

int __wrap_pthread_join(pthread_t th, void **ret)
{
	sb_exact_sync(0, SB_TSYNC_JOIN, (uintptr_t)th);
	return __real_pthread_join(th, ret);
}
