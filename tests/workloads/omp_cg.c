/* omp_cg ROWS OUTER              (benchmark: an OpenMP code with many regions)
 *
 * Shaped like the conjugate-gradient kernels of HPC suites (NPB CG): a
 * random sparse symmetric matrix in CSR form, then OUTER outer iterations
 * of 25 CG steps each (inverse power method: solve A z = x, normalise).
 * Every vector operation is its own "#pragma omp parallel for" (matrix-
 * vector product, dot products as reductions, axpys), as such codes are
 * written, so the program has a dozen distinct parallel regions (each
 * an outlined function: two probes each) and 5 region instances per CG
 * step: OUTER 20 gives ~2,600 instances.  Threads from OMP_NUM_THREADS.
 * tests/bench.sh times what recording costs after the program exits.
 * Prints nothing on stdout; exits 0.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

#define NZ_PER_ROW 12
#define CG_STEPS 25

struct csr {
	unsigned long n;
	unsigned long *rowptr;
	unsigned long *col;
	double *val;
};

static unsigned long lcg(unsigned long *s)
{
	*s = *s * 6364136223846793005UL + 1442695040888963407UL;
	return *s >> 33;
}

/* Row i holds its diagonal and NZ_PER_ROW - 1 off-diagonal entries at
 * columns from a hash of i: diagonally dominant, so CG converges. */
static void make_matrix(struct csr *a, unsigned long n)
{
	a->n = n;
	a->rowptr = sb_calloc(n + 1, sizeof(*a->rowptr));
	a->col = sb_calloc(n * NZ_PER_ROW, sizeof(*a->col));
	a->val = sb_calloc(n * NZ_PER_ROW, sizeof(*a->val));
#pragma omp parallel for /* SITE:cg_rowptr */
	for (unsigned long i = 0; i <= n; i++)
		a->rowptr[i] = i * NZ_PER_ROW;
#pragma omp parallel for /* SITE:cg_fill */
	for (unsigned long i = 0; i < n; i++) {
		unsigned long s = i * 2654435761UL + 1, k = i * NZ_PER_ROW;

		a->col[k] = i;
		a->val[k] = 2.0 * NZ_PER_ROW;
		for (unsigned long j = 1; j < NZ_PER_ROW; j++) {
			a->col[k + j] = lcg(&s) % n;
			a->val[k + j] = -1.0 / (double)(1 + lcg(&s) % 7);
		}
	}
}

static void matvec(const struct csr *a, const double *x, double *y)
{
#pragma omp parallel for /* SITE:cg_matvec */
	for (unsigned long i = 0; i < a->n; i++) {
		double sum = 0;

		for (unsigned long k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
			sum += a->val[k] * x[a->col[k]];
		y[i] = sum;
	}
}

static double dot(const double *x, const double *y, unsigned long n)
{
	double sum = 0;

#pragma omp parallel for reduction(+ : sum) /* SITE:cg_dot */
	for (unsigned long i = 0; i < n; i++)
		sum += x[i] * y[i];
	return sum;
}

/* One CG solve of A z = x from z = 0; returns ||x - A z||. */
static double conj_grad(const struct csr *a, const double *x, double *z, double *p,
			double *q, double *r)
{
	unsigned long n = a->n;
	double rho = 0, norm = 0;

#pragma omp parallel for reduction(+ : rho) /* SITE:cg_init */
	for (unsigned long i = 0; i < n; i++) {
		q[i] = z[i] = 0;
		r[i] = p[i] = x[i];
		rho += r[i] * r[i];
	}
	for (int step = 0; step < CG_STEPS; step++) {
		double alpha, beta, rho0 = rho, d;

		matvec(a, p, q);
		d = dot(p, q, n);
		alpha = rho0 / d;
#pragma omp parallel for /* SITE:cg_update */
		for (unsigned long i = 0; i < n; i++) {
			z[i] += alpha * p[i];
			r[i] -= alpha * q[i];
		}
		rho = 0;
#pragma omp parallel for reduction(+ : rho) /* SITE:cg_rho */
		for (unsigned long i = 0; i < n; i++)
			rho += r[i] * r[i];
		beta = rho / rho0;
#pragma omp parallel for /* SITE:cg_direction */
		for (unsigned long i = 0; i < n; i++)
			p[i] = r[i] + beta * p[i];
	}
	matvec(a, z, r);
#pragma omp parallel for reduction(+ : norm) /* SITE:cg_residual */
	for (unsigned long i = 0; i < n; i++) {
		double e = x[i] - r[i];

		norm += e * e;
	}
	return sqrt(norm);
}

int main(int argc, char **argv)
{
	unsigned long n, outer;
	double *x, *z, *p, *q, *r, zeta = 0, rnorm = 0;
	struct csr a;

	if (argc != 3 || sb_parse_ul(argv[1], 64, 1UL << 24, &n) ||
	    sb_parse_ul(argv[2], 1, 100000, &outer)) {
		fprintf(stderr, "usage: %s ROWS OUTER\n"
			"  ROWS 64..16777216 matrix rows, OUTER >= 1 outer iterations "
			"of %d CG steps; threads from OMP_NUM_THREADS\n", argv[0], CG_STEPS);
		return 2;
	}
	make_matrix(&a, n);
	x = sb_calloc(n, sizeof(*x));
	z = sb_calloc(n, sizeof(*z));
	p = sb_calloc(n, sizeof(*p));
	q = sb_calloc(n, sizeof(*q));
	r = sb_calloc(n, sizeof(*r));
#pragma omp parallel for /* SITE:cg_ones */
	for (unsigned long i = 0; i < n; i++)
		x[i] = 1.0;
	for (unsigned long it = 0; it < outer; it++) {
		double zx, zz = 0;

		rnorm = conj_grad(&a, x, z, p, q, r);
		zx = dot(x, z, n);
#pragma omp parallel for reduction(+ : zz) /* SITE:cg_znorm */
		for (unsigned long i = 0; i < n; i++)
			zz += z[i] * z[i];
		zeta = 10.0 + 1.0 / zx;
		zz = 1.0 / sqrt(zz);
#pragma omp parallel for /* SITE:cg_normalise */
		for (unsigned long i = 0; i < n; i++)
			x[i] = zz * z[i];
	}
	/* The result, so the computation cannot be dropped. */
	if (!isfinite(zeta) || !isfinite(rnorm)) {
		fprintf(stderr, "omp_cg: diverged (zeta %g, residual %g)\n", zeta, rnorm);
		return 1;
	}
	free(a.rowptr);
	free(a.col);
	free(a.val);
	free(x);
	free(z);
	free(p);
	free(q);
	free(r);
	return 0;
}
