// SPDX-License-Identifier: MIT
/*
 * Condition variables this process has signalled (pthread_cond_signal).
 * A barrier never signals: it releases everyone with one broadcast
 * (sections/condbar.c takes a signalled condvar for no barrier).  A
 * signalled condvar is a producer/consumer one, where a wait comes per
 * item: flushing there would cost a batch (a uprobe hit, ~10 us of CPU
 * with the recorder's share) per item for nothing, as no segment ends at
 * it.  So wrap_pthread_cond_wait.c skips the flush for these.
 *
 * An open-addressed set of addresses, inserted with a CAS and never
 * removed (a condvar destroyed and its memory reused for a barrier's is
 * taken for signalled: that barrier's counts then go to the segment its
 * next flush closes).  Full, it forgets nothing it holds and answers "not
 * signalled" for the rest: their waits flush, as every wait did before.
 */
#include "exact_rt.h"

#define CV_SLOTS 4096u     /* a power of two */
#define CV_PROBES 32u

static uintptr_t cv_set[CV_SLOTS];

static uint32_t cv_hash(uintptr_t a)
{
	return (uint32_t)(((uint64_t)(a >> 3) * 0x9e3779b97f4a7c15ull) >> 40) & (CV_SLOTS - 1);
}

void sb_cv_mark_signalled(const void *cv)
{
	uintptr_t a = (uintptr_t)cv;
	uint32_t h = cv_hash(a);

	for (uint32_t i = 0; i < CV_PROBES; i++) {
		uintptr_t *slot = &cv_set[(h + i) & (CV_SLOTS - 1)];
		uintptr_t cur = __atomic_load_n(slot, __ATOMIC_RELAXED), zero = 0;

		if (cur == a)
			return;
		if (!cur) {
			if (__atomic_compare_exchange_n(slot, &zero, a, false, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED) || zero == a)
				return;
		}
	}
}

bool sb_cv_signalled(const void *cv)
{
	uintptr_t a = (uintptr_t)cv;
	uint32_t h = cv_hash(a);

	for (uint32_t i = 0; i < CV_PROBES; i++) {
		uintptr_t cur = __atomic_load_n(&cv_set[(h + i) & (CV_SLOTS - 1)], __ATOMIC_RELAXED);

		if (cur == a)
			return true;
		if (!cur)
			return false;
	}
	return false;
}
