/* futex_other NTHREADS HOLD_MS
 *
 * A hand-made gate on a raw futex (syscall(SYS_futex), as programs with
 * their own locks do): NTHREADS threads wait on one futex word (SITE:futex)
 * while main sleeps HOLD_MS milliseconds, then main opens the gate and
 * wakes them all.  No pthread or OpenMP primitive is involved.  Known
 * truth: NTHREADS blocking waits of about HOLD_MS each at the SITE line,
 * of the primitive "other".  Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "work.h"

static atomic_int gate;
static atomic_int waiting;

static void *worker_main(void *arg)
{
	(void)arg;
	atomic_fetch_add(&waiting, 1);
	while (!atomic_load(&gate))
		syscall(SYS_futex, &gate, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* SITE:futex */
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, hold_ms;
	pthread_t *tids;

	if (argc != 3 || sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &n) ||
	    sb_parse_ul(argv[2], 1, 100000, &hold_ms)) {
		fprintf(stderr, "usage: %s NTHREADS HOLD_MS\n"
			"  NTHREADS 1..%lu, HOLD_MS 1..100000\n", argv[0], SB_MAX_THREADS);
		return 2;
	}
	tids = sb_calloc(n, sizeof(*tids));
	for (unsigned long i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, worker_main, NULL)) {
			perror("pthread_create");
			return 1;
		}
	while (atomic_load(&waiting) < (int)n)
		sb_sleep_ms(1);
	sb_sleep_ms(hold_ms);
	atomic_store(&gate, 1);
	syscall(SYS_futex, &gate, FUTEX_WAKE_PRIVATE, (int)n, NULL, NULL, 0);
	for (unsigned long i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return 0;
}
