/* spin_lock NTHREADS ITERS HOLD_UNITS
 * Threads contend for one pthread_spinlock_t, holding it for
 * sb_work(HOLD_UNITS): the waiters spin on-CPU, so only sampling sees
 * their wait.  Known truth: the spin wait is at the pthread_spin_lock call, and
 * with N threads on fewer cores it is a large share of the run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

static pthread_spinlock_t spin;
static unsigned long iters, hold;

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < iters; i++) {
		pthread_spin_lock(&spin); /* SITE:spin */
		sb_work(hold);
		pthread_spin_unlock(&spin);
		sb_work(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int n;

	if (argc != 4 || (n = atoi(argv[1])) < 1 || n > 64) {
		fprintf(stderr, "usage: spin_lock NTHREADS(1-64) ITERS HOLD_UNITS\n");
		return 2;
	}
	iters = strtoul(argv[2], NULL, 10);
	hold = strtoul(argv[3], NULL, 10);
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			fprintf(stderr, "spin_lock: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
