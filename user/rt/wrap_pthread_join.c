// SPDX-License-Identifier: MIT
#include <pthread.h>

#include "exact_rt.h"

int __real_pthread_join(pthread_t th, void **ret);

int __wrap_pthread_join(pthread_t th, void **ret)
{
	sb_exact_flush(0);
	return __real_pthread_join(th, ret);
}
