/* share_omp MODE ROWS COLS [PASSES]
 *
 * Known truth for the sharing analyses (issue 13), OpenMP (run with
 * OMP_NUM_THREADS):
 *   split     every row of a ROWS x COLS matrix of doubles is filled by a
 *             parallel loop over its columns (schedule(static)): where a
 *             chunk border falls inside a cache line, two threads write
 *             the same line: false sharing, in region;
 *   cyclic    the same split element by element (schedule(static, 1)),
 *             inside one parallel region: every line of a row is written
 *             by every thread, the costly form of it;
 *   critical  each thread adds COLS values into hist[8] in an omp
 *             critical section, ROWS times: true sharing in region,
 *             lock-protected.
 * PASSES (default 1) runs it that many times over, as a solver's time
 * steps sweep the same arrays.
 * The matrix and hist start a line (aligned), so the piped counts are
 * analytic (tests/integration/sharing.sh).  Prints nothing on stdout.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"   /* its own wall time for make bench (SB_WALL_FILE) */

#define LINE 64

static long hist[8] __attribute__((aligned(LINE)));

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s split|cyclic|critical ROWS COLS [PASSES]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long rows, cols, passes = 1;
	double *a, total = 0;
	char *end;

	if ((argc != 4 && argc != 5) || (strcmp(argv[1], "split") && strcmp(argv[1], "cyclic") &&
					 strcmp(argv[1], "critical")))
		usage(argv[0]);
	rows = strtoul(argv[2], &end, 10);
	if (*end || !rows || rows > 100000)
		usage(argv[0]);
	cols = strtoul(argv[3], &end, 10);
	if (*end || !cols || cols > 1000000)
		usage(argv[0]);
	if (argc == 5) {
		passes = strtoul(argv[4], &end, 10);
		if (*end || !passes || passes > 100000000)
			usage(argv[0]);
	}
	if (!strcmp(argv[1], "cyclic")) {
		a = aligned_alloc(LINE, (rows * cols * sizeof(double) + LINE - 1) / LINE * LINE);
		if (!a)
			return 1;
#pragma omp parallel
		for (unsigned long i = 0; i < rows * passes; i++) {
			double *row = a + i % rows * cols;

#pragma omp for schedule(static, 1)
			for (unsigned long j = 0; j < cols; j++)
				row[j] = (double)(i + j);
		}
		for (unsigned long i = 0; i < rows * cols; i++)
			total += a[i];
		free(a);
	} else if (!strcmp(argv[1], "split")) {
		a = aligned_alloc(LINE, (rows * cols * sizeof(double) + LINE - 1) / LINE * LINE);
		if (!a)
			return 1;
		for (unsigned long i = 0; i < rows * passes; i++) {
			double *row = a + i % rows * cols;

#pragma omp parallel for schedule(static)
			for (unsigned long j = 0; j < cols; j++)
				row[j] = (double)(i + j);
		}
		for (unsigned long i = 0; i < rows * cols; i++)
			total += a[i];
		free(a);
	} else {
#pragma omp parallel
		for (unsigned long r = 0; r < rows * passes; r++)
			for (unsigned long j = 0; j < cols; j++) {
#pragma omp critical
				hist[(j + (unsigned long)omp_get_thread_num()) % 8] += 1;
			}
		for (int k = 0; k < 8; k++)
			total += (double)hist[k];
	}
	return total < 0;
}
