/* lime_omp_tri ITERS N UNITS       (team size from OMP_NUM_THREADS)
 *
 * A planted load-imbalance cause: a static OpenMP loop over i in [0, N)
 * whose inner loop runs i times (a triangular iteration space), so the
 * thread with the last chunk of i does the most inner iterations.  Known
 * truth: the inner loop's trip count (the marked cause line) is the
 * cause.  Prints nothing on stdout; exits 0.
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long iters, n, units;

	if (argc != 4 || sb_parse_ul(argv[1], 1, SB_MAX_UNITS, &iters) ||
	    sb_parse_ul(argv[2], 1, 100000, &n) ||
	    sb_parse_ul(argv[3], 0, SB_MAX_UNITS, &units)) {
		fprintf(stderr, "usage: %s ITERS N UNITS\n", argv[0]);
		return 2;
	}
	for (unsigned long it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static) /* SITE:omp_region */
		for (unsigned long i = 0; i < n; i++)
			for (unsigned long j = 0; j < i; j++) /* SITE:cause */
				sb_work(units);
	}
	return 0;
}
