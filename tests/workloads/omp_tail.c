/* omp_tail ITERS UNITS    (OMP_NUM_THREADS threads)
 *
 * OpenMP regions whose outlined function ends in a jump to the barrier
 * (gcc: GOMP_barrier; clang: __kmpc_barrier), the shape of most NPB
 * kernels:
 *  - ITERS regions whose last statement is an explicit barrier;
 *  - ITERS regions whose only construct is a static `omp for` (its
 *    implicit barrier is the outlined function's last call with gcc).
 * Thread (or iteration) i does (i+1)*UNITS of work before the barrier:
 * busy times 1:2:...:N in every instance.  Prints nothing; exits 0.
 */
#include <omp.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long iters, units;

	if (argc != 3 || sb_parse_iters_units(argv + 1, 0, &iters, &units)) {
		fprintf(stderr, "usage: %s ITERS UNITS\n", argv[0]);
		return 2;
	}
	for (unsigned long it = 0; it < iters; it++) {
#pragma omp parallel
		{
			sb_work(units * (omp_get_thread_num() + 1));
#pragma omp barrier /* SITE:omp_tail_barrier */
		}
	}
	for (unsigned long it = 0; it < iters; it++) {
#pragma omp parallel
		{
			int n = omp_get_num_threads();

#pragma omp for schedule(static)
			for (int i = 0; i < n; i++)
				sb_work(units * (i + 1));
		}
	}
	return 0;
}
