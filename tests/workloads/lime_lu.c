/* lime_lu NTHREADS N B [REPS]
 *
 * A blocked LU factorization (no pivoting) written the way SPLASH-2's LU
 * is: the N x N matrix is cut into B x B blocks, block (I,J) belongs to
 * thread (I + J) % NTHREADS, and in every step K of the factorization
 * every thread scans all blocks and works on the ones it owns, with a
 * barrier after each phase (diagonal, perimeter, interior).  The matrix is
 * factored REPS times (default 1), each time from the same start.
 *
 * Known truth: the imbalance of each phase comes from the ownership test
 * (`if (block_owner(I, J) == me)`, the marked cause lines; block_owner()
 * is small and inlined, so its own line, marked owner, names the same
 * test).  Which thread gets the surplus rotates from step to step, so
 * per-thread totals over the whole run are nearly equal: only per-step
 * (per instance) data shows the cause.  Prints nothing; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long nthreads, n, bs, nb, reps = 1;
static double *a, *orig;
static pthread_barrier_t bar;

static inline int block_owner(long i, long j)
{
	return (int)((i + j) % nthreads); /* SITE:owner */
}

static double *blk(long i, long j)
{
	return a + (i * nb + j) * bs * bs;
}

/* Factor the diagonal block in place: L (unit) below, U on and above. */
static void lu_diag(double *d)
{
	for (long k = 0; k < bs; k++)
		for (long i = k + 1; i < bs; i++) {
			d[i * bs + k] /= d[k * bs + k];
			for (long j = k + 1; j < bs; j++)
				d[i * bs + j] -= d[i * bs + k] * d[k * bs + j];
		}
}

/* A block right of the diagonal: solve L x = b. */
static void lu_row(const double *d, double *b)
{
	for (long k = 0; k < bs; k++)
		for (long i = k + 1; i < bs; i++)
			for (long j = 0; j < bs; j++)
				b[i * bs + j] -= d[i * bs + k] * b[k * bs + j];
}

/* A block below the diagonal: solve x U = b. */
static void lu_col(const double *d, double *b)
{
	for (long i = 0; i < bs; i++)
		for (long k = 0; k < bs; k++) {
			b[i * bs + k] /= d[k * bs + k];
			for (long j = k + 1; j < bs; j++)
				b[i * bs + j] -= b[i * bs + k] * d[k * bs + j];
		}
}

/* c -= l * u */
static void lu_mod(double *c, const double *l, const double *u)
{
	for (long i = 0; i < bs; i++)
		for (long k = 0; k < bs; k++) {
			double x = l[i * bs + k];

			for (long j = 0; j < bs; j++)
				c[i * bs + j] -= x * u[k * bs + j];
		}
}

static void *lu_thread(void *arg)
{
	int me = (int)(long)arg;

	for (long r = 0; r < reps; r++) {
		if (me == 0)
			memcpy(a, orig, (size_t)(n * n) * sizeof(*a));
		pthread_barrier_wait(&bar);
		for (long k = 0; k < nb; k++) {
			if (block_owner(k, k) == me)
				lu_diag(blk(k, k));
			pthread_barrier_wait(&bar); /* SITE:diag */
			for (long j = k + 1; j < nb; j++)
				if (block_owner(k, j) == me) /* SITE:perimeter_cause */
					lu_row(blk(k, k), blk(k, j));
			for (long i = k + 1; i < nb; i++)
				if (block_owner(i, k) == me)
					lu_col(blk(k, k), blk(i, k));
			pthread_barrier_wait(&bar); /* SITE:perimeter */
			for (long i = k + 1; i < nb; i++)
				for (long j = k + 1; j < nb; j++)
					if (block_owner(i, j) == me) /* SITE:cause */
						lu_mod(blk(i, j), blk(i, k), blk(k, j));
			pthread_barrier_wait(&bar); /* SITE:barrier */
		}
	}
	return NULL;
}

static long arg(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "lime_lu: bad argument '%s' (an integer >= %ld)\n", s, min);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t *t;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: lime_lu NTHREADS N B [REPS]  (B divides N)\n");
		return 2;
	}
	nthreads = arg(argv[1], 1);
	n = arg(argv[2], 1);
	bs = arg(argv[3], 1);
	if (argc == 5)
		reps = arg(argv[4], 1);
	if (n % bs) {
		fprintf(stderr, "lime_lu: B (%ld) must divide N (%ld)\n", bs, n);
		return 2;
	}
	nb = n / bs;
	a = malloc((size_t)(n * n) * sizeof(*a));
	orig = malloc((size_t)(n * n) * sizeof(*a));
	t = calloc((size_t)nthreads, sizeof(*t));
	if (!a || !orig || !t) {
		fprintf(stderr, "lime_lu: out of memory\n");
		return 1;
	}
	/* diagonally dominant: no pivoting needed */
	srand(1);
	for (long i = 0; i < n * n; i++)
		orig[i] = (double)rand() / RAND_MAX;
	for (long I = 0; I < nb; I++)
		for (long d = 0; d < bs; d++)
			orig[((I * nb + I) * bs + d) * bs + d] += (double)n;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (long i = 1; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, lu_thread, (void *)i)) {
			fprintf(stderr, "lime_lu: pthread_create failed\n");
			return 1;
		}
	lu_thread((void *)0);
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	free(t);
	free(orig);
	free(a);
	return 0;
}
