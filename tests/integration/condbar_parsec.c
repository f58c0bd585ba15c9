/* condbar_parsec NTHREADS STEPS UNITS
 *
 * A SPLASH-2 kernel as PARSEC ships it (ext/splash2x, c.m4.null.pthread):
 * BARRIER is a mutex + condition variable + counter + cycle flag, the
 * waiters loop `while (Cycle == cycle) pthread_cond_wait`, the last one to
 * arrive flips the cycle and broadcasts.  The main thread creates NTHREADS
 * workers and joins them.  In each step worker i (0-based) computes
 * (i + 1) * UNITS units of work, then waits at the barrier.
 * Known truth: STEPS barrier episodes, NTHREADS threads, busy ratio
 * 1 : 2 : ... : NTHREADS, imbalance 1 - (NTHREADS + 1) / (2 NTHREADS).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* c.m4.null.pthread */
#define BARDEC(B) struct { pthread_mutex_t mutex; pthread_cond_t cv; unsigned long counter; unsigned long cycle; } B;
#define BARINIT(B, N) { pthread_mutex_init(&(B).mutex, NULL); pthread_cond_init(&(B).cv, NULL); (B).counter = 0; (B).cycle = 0; }
#define BARRIER(B, N) { \
	unsigned long Error, Cycle; \
	int Cancel, Temp; \
	Error = pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &Cancel); \
	if (Error != 0) { printf("Error while trying to disable cancellation\n"); exit(-1); } \
	Error = pthread_mutex_lock(&(B).mutex); \
	if (Error != 0) { printf("Error while trying to get lock in barrier.\n"); exit(-1); } \
	Cycle = (B).cycle; \
	if (++(B).counter != (N)) { \
		Error = pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &Temp); \
		while (Cycle == (B).cycle) { \
			Error = pthread_cond_wait(&(B).cv, &(B).mutex); \
			if (Error != 0) { break; } \
		} \
		Error = pthread_setcancelstate(Cancel, &Temp); \
	} else { \
		(B).cycle = !(B).cycle; \
		(B).counter = 0; \
		Error = pthread_cond_broadcast(&(B).cv); \
	} \
	pthread_mutex_unlock(&(B).mutex); \
	Error = pthread_setcancelstate(Cancel, &Temp); \
}

struct GlobalMemory {
	BARDEC(barrier)
	pthread_mutex_t lock;
	double sum;
} *gm;

static long nthreads, steps, units;

static double work(long n)
{
	unsigned long x = (unsigned long)n | 1;

	for (long i = 0; i < n * 1000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return (double)(x >> 11);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	double local = 0;

	for (long s = 0; s < steps; s++) {
		local += work((id + 1) * units);
		BARRIER(gm->barrier, nthreads) /* SITE:parsec_step */
	}
	pthread_mutex_lock(&gm->lock);
	gm->sum += local;
	pthread_mutex_unlock(&gm->lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];

	if (argc != 4 || (nthreads = atol(argv[1])) < 1 || nthreads > 64 ||
	    (steps = atol(argv[2])) < 1 || (units = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: %s NTHREADS STEPS UNITS\n", argv[0]);
		return 2;
	}
	gm = calloc(1, sizeof(*gm));
	BARINIT(gm->barrier, nthreads)
	pthread_mutex_init(&gm->lock, NULL);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (long i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return gm->sum < 0;
}
