/* SPDX-License-Identifier: MIT */
/*
 * Private to analysis/lime*.c and their unit tests: the stages of
 * sb_lime_analyze() (lime.h), exposed so each can be checked against
 * hand-computed answers.
 *
 * Every event vector is carried as its "unit vector": the per-thread
 * counts centered and scaled to Euclidean norm 1 (or all zeros when the
 * counts do not vary).  Pearson's r of two events is then the dot product
 * of their unit vectors, a Z-score is the unit vector times sqrt(n - 1),
 * and the average Z-score of a cluster is proportional to the sum of its
 * members' unit vectors.
 */
#ifndef SB_LIME_PRIV_H
#define SB_LIME_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lime.h"

#define SB_LIME_NONE UINT32_MAX

/* GNU C vectors (gcc and clang; SSE2 on x86-64): -O2 does not vectorize
 * a reduction by itself. */
typedef double sb_v2d __attribute__((vector_size(16)));

static inline double sb_lime_dot(const double *a, const double *b, uint32_t n)
{
	/* Four partial sums in two vectors: also shortens the add chain. */
	sb_v2d s01 = { 0, 0 }, s23 = { 0, 0 }, x, y;
	double s = 0;
	size_t t = 0;

	for (; t + 4 <= n; t += 4) {
		memcpy(&x, a + t, sizeof(x));
		memcpy(&y, b + t, sizeof(y));
		s01 += x * y;
		memcpy(&x, a + t + 2, sizeof(x));
		memcpy(&y, b + t + 2, sizeof(y));
		s23 += x * y;
	}
	for (; t < n; t++)
		s += a[t] * b[t];
	return ((s01[0] + s01[1]) + (s23[0] + s23[1])) + s;
}

/* Eq. 2: the final score of a leader node (or, with leader 1, of a
 * hardware event). */
static inline double sb_lime_final_score(double leader_score, double beta)
{
	return leader_score * beta;
}

/* ---- lime_result.c: the result of both entry points ---- */

/* No causes yet, every event SB_LIME_NO_CLUSTER; NULL on ENOMEM. */
struct sb_lime_result *sb_lime_result_new(size_t nevents);

/* qsort order of causes: score descending, then kind, addr, event. */
int sb_lime_cause_cmp(const void *a, const void *b);

/* ---- lime_vec.c: unit vectors and §3.1 ---- */

/* u = centered x scaled to norm 1; false (u all zeros) when x does not
 * vary across threads beyond rounding. */
bool sb_lime_unit(const double *x, uint32_t n, double *u);

/* x - y (y NULL: x) varies across threads beyond Poisson sampling noise
 * (index-of-dispersion test at level alpha): x and y count samples. */
bool sb_lime_overdispersed(const double *x, const double *y, uint32_t n, double alpha);

/* x's counts covary with time beyond Poisson noise (1-dof test at level
 * alpha), judged only with at least 5 samples a column on average. */
bool sb_lime_follows_time(const double *x, const double *time, uint32_t n, double alpha);

/*
 * Unit vectors of all events of `in` into u (nevents rows of nthreads),
 * live[e] = 1 when event e varies (a BLOCK event: beyond sampling noise,
 * family-wise level alpha over the block events).  Hardware events with a superior are
 * replaced by their Gram-Schmidt residual against the (already adjusted)
 * chain of superiors; a residual that vanishes is not live.  -EINVAL on a
 * cycle of superiors.
 */
int sb_lime_causal(const struct sb_lime_instance *in, double alpha, double *u, uint8_t *live);

/* ---- lime_cluster.c: §3.2 with §5.6 ---- */

struct sb_lime_cluster_params {
	double threshold;        /* UPGMA stops below this average r */
	double bulk;             /* bulk-merge events with r >= this to a seed */
	double pair_budget;      /* exact pair scan while ngroups^2/2 * n <= this;
				  * 0 = default, < 0 forces the hashed scan */
	double upgma_budget;     /* exact UPGMA of a component of s groups while
				  * 1.5 s^2 n <= this; 0 = default, < 0 forces
				  * the greedy fallback */
};

struct sb_lime_cluster_stats {
	size_t ngroups;          /* after bulk merging */
	bool exact_pairs;        /* the threshold graph was scanned exactly */
	bool exact_upgma;        /* every component was clustered exactly */
};

/* Clusters m unit vectors (rows of u, n wide): clus[i] in [0, return),
 * numbered by first member.  Returns the number of clusters or -ENOMEM. */
long sb_lime_cluster(const double *u, size_t m, uint32_t n,
		     const struct sb_lime_cluster_params *p, uint32_t *clus,
		     struct sb_lime_cluster_stats *st);

/* ---- lime_regress.c: §3.5 ---- */

/*
 * Forward selection of k candidate unit vectors (rows of x) to explain the
 * unit vector y: each step enters the candidate that most reduces the
 * residual sum of squares if its partial F-test has p < alpha, at most
 * n - 2 of them.  Writes the chosen rows to sel[] and their standardized
 * coefficients to beta[] (both >= n - 2 long); returns how many, or a
 * negative errno.
 */
long sb_lime_forward(const double *x, size_t k, const double *y, uint32_t n, double alpha,
		     uint32_t *sel, double *beta);
/* The same on columns centred within ngroups groups of rows (observations
 * that are (instance, thread) pairs): ngroups - 1 fewer degrees of
 * freedom. */
long sb_lime_forward_groups(const double *x, size_t k, const double *y, uint32_t n,
			    uint32_t ngroups, double alpha, uint32_t *sel, double *beta);

/* Standardized coefficients of y on p unit-vector columns (least squares,
 * GSL).  0, -ENOMEM, or -EDOM when GSL fails. */
int sb_lime_beta(const double *const *cols, size_t p, const double *y, uint32_t n,
		 double *beta);

/* ---- lime_leader.c: §3.3-§3.4 ---- */

/* Eq. 1: max of the outgoing edges' r with time minus max of the incoming
 * ones' (an empty side counts 0). */
double sb_lime_eq1(const double *out_r, size_t nout, const double *in_r, size_t nin);

struct sb_lime_causes {
	struct sb_lime_cause *v;
	size_t n, cap;
};

int sb_lime_causes_push(struct sb_lime_causes *c, const struct sb_lime_cause *x);

struct sb_lime_leaders;

/* ecorr[e]: r of event e with time (0 when not live); cluster_of[e] its
 * cluster or SB_LIME_NO_CLUSTER; alpha the level of the sampling-noise
 * tests (block events). */
struct sb_lime_leaders *sb_lime_leaders_new(const struct sb_cfg *cfg,
					    const struct sb_lime_instance *in,
					    const double *ecorr, const uint32_t *cluster_of,
					    double alpha);
void sb_lime_leaders_free(struct sb_lime_leaders *l);

/* The causes of one regression-selected cluster (its live members):
 * leaders for a control-flow cluster, every event of a hardware one. */
int sb_lime_cluster_causes(struct sb_lime_leaders *l, const uint32_t *members, size_t nm,
			   double beta, struct sb_lime_causes *out);

/* ---- lime_latch.c ---- */

/* Loop header h heads several loops (back edges from two latches or more
 * in the cluster: ein[e] == gen for its edges e): the conditional block
 * of the one latch whose exit leaves the cluster (that loop's trip count
 * varies), or SB_LIME_NONE (see lime_latch.c). */
uint32_t sb_lime_varying_latch(const struct sb_cfg *g, uint32_t h, const uint32_t *ein,
			       uint32_t gen);

/* Loop header h that the section never enters (its one way in from
 * outside the loop has no count here: edge_ev[] NONE), only repeats: the
 * conditional block that chose this copy of the loop before the section,
 * or SB_LIME_NONE (see lime_latch.c). */
uint32_t sb_lime_copy_choice(const struct sb_cfg *g, uint32_t h, const uint32_t *edge_ev);

#endif
