/* pf_subsets ROUNDS: three threads, two barriers each shared by a pair:
 * A and B meet at X, B and C at Y (B: Y, then X, each round).  Right
 * under any schedule; under the profiled-thread framework (A profiled)
 * B and C pass Y, a barrier A never reaches, and B is then held until A
 * reaches its next barrier while A waits at X for B: the framework must
 * notice and let go (tests/integration/pirate.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t x, y;
static unsigned long rounds;
static volatile unsigned long sink;

static void spin(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i;
}

static void *a(void *v)
{
	(void)v;
	for (unsigned long r = 0; r < rounds; r++) {
		spin();
		pthread_barrier_wait(&x);
	}
	return NULL;
}

static void *b(void *v)
{
	(void)v;
	for (unsigned long r = 0; r < rounds; r++) {
		pthread_barrier_wait(&y);
		spin();
		pthread_barrier_wait(&x);
	}
	return NULL;
}

static void *c(void *v)
{
	(void)v;
	for (unsigned long r = 0; r < rounds; r++) {
		spin();
		pthread_barrier_wait(&y);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 5;
	pthread_barrier_init(&x, NULL, 2);
	pthread_barrier_init(&y, NULL, 2);
	if (pthread_create(&t[0], NULL, a, NULL) || pthread_create(&t[1], NULL, b, NULL) ||
	    pthread_create(&t[2], NULL, c, NULL))
		return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 0;
}
