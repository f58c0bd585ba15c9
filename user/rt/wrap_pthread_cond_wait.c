// SPDX-License-Identifier: MIT
/*
 * A wait on a condition variable may be a barrier's (a SPLASH BARRIER
 * macro, a PARSEC-style barrier function): the waiter's segment ends here.
 * `record` finds the condvars that are barriers only at the end, from their
 * whole history, and then cuts segments at these calls (sections/condbar.c),
 * so the counts go before every wait on a condvar that may be a barrier's:
 * they reach the builder before the wait's event and join the segment it
 * closes.  A condvar that is no barrier (a work queue) cuts nothing: its
 * batches add up into whatever segment the thread's next closing sync
 * ends.  One that has been signalled is a queue's (a barrier never
 * signals, cv_signalled.c): its waits, one per item, flush nothing.  Else
 * the cost is one batch per wait that follows counted work; a wait with
 * nothing counted since the last flush costs nothing.
 *
 * The real call is a tail call: its return address is the program's call,
 * which `record` takes for the wait's site (records.c calls_probed).
 * In a trace build the wait gives the mutex back (RELEASE, before the
 * SYNC of a flushed wait) and takes it again: that ACQUIRE is owed and
 * written before the thread's next record (trace_mem.c), as the wrapper
 * writes nothing after the call.  Without it the mutex would look held
 * by the waiter while others take it.
 */
#include <pthread.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

int __real_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (sb_trace_lock)
		sb_trace_lock(SB_TRACE_RELEASE, m, (uintptr_t)__builtin_return_address(0));
	if (!sb_cv_signalled(c))
		sb_exact_sync(0, SB_TSYNC_COND_WAIT, (uintptr_t)c);
	if (sb_trace_reacquire)
		sb_trace_reacquire(m, (uintptr_t)__builtin_return_address(0));
	return __real_pthread_cond_wait(c, m);
}
