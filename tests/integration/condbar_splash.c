/* condbar_splash NPROCS STEPS UNITS
 *
 * A SPLASH-2 program as Splash-3 builds it: the m4 macros of
 * codes/pthread_macros/pthread.m4.stougie expanded by hand, so BARRIER is
 * an inline mutex + condition variable barrier (one pthread_cond_wait,
 * no generation loop) at every place the program synchronizes.  The
 * master creates NPROCS - 1 slaves and works itself (SlaveStart), as the
 * SPLASH codes do.  In each of STEPS steps process p (0-based) computes
 * (p + 1) * UNITS units of work, then waits at the step's barrier.
 * Known truth: busy ratio 1 : 2 : ... : NPROCS at the barrier, imbalance
 * 1 - (NPROCS + 1) / (2 NPROCS), STEPS barrier episodes (plus one start
 * barrier, before any timed work).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

/* pthread.m4.stougie */
#define BARDEC(B) struct { pthread_mutex_t bar_mutex; pthread_cond_t bar_cond; unsigned bar_teller; } B;
#define BARINIT(B, N) { pthread_mutex_init(&(B).bar_mutex, NULL); pthread_cond_init(&(B).bar_cond, NULL); (B).bar_teller = 0; }
#define BARRIER(B, N) { pthread_mutex_lock(&(B).bar_mutex); if (++(B).bar_teller == (N)) { (B).bar_teller = 0; pthread_cond_broadcast(&(B).bar_cond); } else pthread_cond_wait(&(B).bar_cond, &(B).bar_mutex); pthread_mutex_unlock(&(B).bar_mutex); }
#define LOCKDEC(L) pthread_mutex_t L;
#define LOCKINIT(L) pthread_mutex_init(&(L), NULL);
#define LOCK(L) pthread_mutex_lock(&(L));
#define UNLOCK(L) pthread_mutex_unlock(&(L));
#define CREATE(F, ARG) { pthread_create(&PThreadTable[ARG], NULL, F, (void *)(ARG)); }
#define WAIT_FOR_END(N) { for (long i = 1; i <= (N); i++) pthread_join(PThreadTable[i], NULL); }

pthread_t PThreadTable[MAX_THREADS];

struct GlobalMemory {
	BARDEC(start)
	LOCKDEC(idlock)
	long id;
	double sum;
} *Global;

long P = 1, steps = 1, units = 1;

static double work(long n)
{
	unsigned long x = (unsigned long)n | 1;

	for (long i = 0; i < n * 1000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return (double)(x >> 11);
}

void *SlaveStart(void *arg)
{
	long MyNum;
	double local = 0;

	(void)arg;
	LOCK(Global->idlock)
	MyNum = Global->id++;
	UNLOCK(Global->idlock)
	BARRIER(Global->start, P) /* SITE:splash_start */
	for (long s = 0; s < steps; s++) {
		local += work((MyNum + 1) * units);
		BARRIER(Global->start, P) /* SITE:splash_step */
	}
	LOCK(Global->idlock)
	Global->sum += local;
	UNLOCK(Global->idlock)
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (P = atol(argv[1])) < 1 || P > MAX_THREADS ||
	    (steps = atol(argv[2])) < 1 || (units = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: %s NPROCS STEPS UNITS\n", argv[0]);
		return 2;
	}
	Global = calloc(1, sizeof(*Global));
	BARINIT(Global->start, P)
	LOCKINIT(Global->idlock)
	for (long i = 1; i < P; i++)
		CREATE(SlaveStart, i)
	SlaveStart(NULL);
	WAIT_FOR_END(P - 1)
	return Global->sum < 0;
}
