/* dbg_split: 4 threads, work 1:2:3:4 done in libc (memset), 20 barriers.
 * Built by tests/integration/smalls.sh with its DWARF split into a separate
 * file (objcopy --only-keep-debug, --add-gnu-debuglink). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t bar;
static char bufs[4][1 << 20];

static void *worker(void *arg)
{
	long i = (long)arg;

	for (int it = 0; it < 20; it++) {
		for (long k = 0; k < 40 * (i + 1); k++)
			memset(bufs[i], (int)k, sizeof(bufs[i]));
		pthread_barrier_wait(&bar); /* SITE:split */
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	pthread_barrier_init(&bar, NULL, 4);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
