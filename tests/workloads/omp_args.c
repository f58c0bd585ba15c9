/* omp_args [ITERS]   (team size from OMP_NUM_THREADS)
 *
 * OpenMP regions that share many variables: clang passes each one as an
 * argument of the outlined function, so under `scalebpf cc` the fork
 * wrapper and its trampoline forward 10 and 11 arguments, partly on the
 * stack, in both parities.  The two regions run ITERS times (default 1),
 * each thread doing sb_work(20) in each.  Prints "ok N" (N = team size)
 * when every thread saw every variable, else "bad ..." and exits 1.
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long iters = 1;
	long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9, j = 10;
	long s9[256] = { 0 }, s10[256] = { 0 }, want = 0, got9 = 0, got10 = 0;
	int n = 0;

	if (argc > 2 || (argc == 2 && sb_parse_ul(argv[1], 1, SB_MAX_UNITS, &iters))) {
		fprintf(stderr, "usage: %s [ITERS]\n", argv[0]);
		return 2;
	}
	for (unsigned long it = 0; it < iters; it++) {
#pragma omp parallel
		{
			int t = omp_get_thread_num();

			sb_work(20);
			if (t < 256)
				s9[t] = a + b + c + d + e + f + g + h + i + t;
			if (t == 0)
				n = omp_get_num_threads();
		}
#pragma omp parallel
		{
			int t = omp_get_thread_num();

			sb_work(20);
			if (t < 256)
				s10[t] = a + b + c + d + e + f + g + h + i + j + t;
		}
	}
	for (int t = 0; t < n && t < 256; t++) {
		got9 += s9[t];
		got10 += s10[t];
		want += t;
	}
	if (got9 != 45L * n + want || got10 != 55L * n + want) {
		printf("bad %ld %ld (n %d)\n", got9, got10, n);
		return 1;
	}
	printf("ok %d\n", n);
	return 0;
}
