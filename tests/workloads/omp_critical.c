/* omp_critical ITERS HOLD_UNITS      (team size from OMP_NUM_THREADS)
 * One parallel region whose threads all loop on a contended
 * "#pragma omp critical" holding it for sb_work(HOLD_UNITS).  libgomp
 * spins, then sleeps on a futex: both must show as omp_critical waits at
 * the critical pragma. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long iters, hold;
	volatile unsigned long total = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: omp_critical ITERS HOLD_UNITS\n");
		return 2;
	}
	iters = strtoul(argv[1], NULL, 10);
	hold = strtoul(argv[2], NULL, 10);
#pragma omp parallel
	for (unsigned long i = 0; i < iters; i++) {
#pragma omp critical /* SITE:critical */
		{
			sb_work(hold);
			total = total + 1;
		}
		sb_work(1);
	}
	return total == 0;
}
