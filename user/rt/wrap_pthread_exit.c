// SPDX-License-Identifier: MIT
#include <pthread.h>

#include "exact_rt.h"

void __real_pthread_exit(void *ret) __attribute__((noreturn));

void __wrap_pthread_exit(void *ret)
{
	sb_exact_thread_done();
	__real_pthread_exit(ret);
}
