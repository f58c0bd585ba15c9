/* omp_imbalance ITERS UNITS      (team size from OMP_NUM_THREADS)
 *
 * ITERS times: one "#pragma omp parallel" region in which thread t does
 * sb_work((t + 1) * UNITS), waits on an explicit "#pragma omp barrier",
 * then does a balanced sb_work(UNITS) before the region's implicit end
 * barrier.  Known truth: the explicit barrier's section has the 1..N
 * imbalance (1 - (N + 1) / (2N)); the region end is balanced.
 * Built with gcc -fopenmp (libgomp) as omp_imbalance and with
 * clang -fopenmp (LLVM libomp) as clang/omp_imbalance.
 * Prints nothing on stdout; exits 0.
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long iters, units;

	if (argc != 3 || sb_parse_iters_units(argv + 1, 0, &iters, &units)) {
		fprintf(stderr, "usage: %s ITERS UNITS\n"
			"  ITERS >= 1, UNITS 0..%lu; threads from OMP_NUM_THREADS\n",
			argv[0], SB_MAX_UNITS);
		return 2;
	}
	for (unsigned long it = 0; it < iters; it++) {
#pragma omp parallel /* SITE:omp_region */
		{
			unsigned long t = (unsigned long)omp_get_thread_num();

			sb_work((t + 1) * units);
#pragma omp barrier /* SITE:omp_barrier */
			sb_work(units);
		}
	}
	return 0;
}
