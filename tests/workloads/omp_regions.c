/* omp_regions N UNITS              (overhead benchmark)
 *
 * N small "#pragma omp parallel" regions, in each of which every thread of
 * the team (OMP_NUM_THREADS) does a balanced sb_work(UNITS).  tests/bench.sh
 * picks UNITS for ~1 ms regions.  Prints nothing on stdout; exits 0.
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long n, units;

	if (argc != 3 || sb_parse_iters_units(argv + 1, 0, &n, &units)) {
		fprintf(stderr, "usage: %s N UNITS\n"
			"  N >= 1 regions, UNITS 0..%lu; threads from "
			"OMP_NUM_THREADS\n",
			argv[0], SB_MAX_UNITS);
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
#pragma omp parallel /* SITE:omp_regions */
		sb_work(units);
	}
	return 0;
}
