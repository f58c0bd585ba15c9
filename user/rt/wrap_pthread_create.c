// SPDX-License-Identifier: MIT
/* A thread's last segment ends when its start routine returns. */
#include <pthread.h>
#include <stdlib.h>

#include "exact_rt.h"

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *sbx_start_thread(void *p)
{
	struct start s = *(struct start *)p;
	void *ret;

	free(p);
	ret = s.fn(s.arg);
	sb_exact_thread_done();
	return ret;
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	struct start *s = malloc(sizeof(*s));
	int ret;

	if (!s)   /* still runs, only its last segment is not flushed */
		return __real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	/* What the creator did before is before all the new thread does:
	 * the trace says where (counts go on: no segment ends here). */
	if (sb_trace_sync)
		sb_trace_sync(0, SB_TSYNC_CREATE, 0);
	ret = __real_pthread_create(th, attr, sbx_start_thread, s);
	if (ret)
		free(s);
	return ret;
}
