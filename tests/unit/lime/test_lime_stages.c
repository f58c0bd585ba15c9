// SPDX-License-Identifier: MIT
/*
 * LIME stage by stage against hand computations: eq. 1 and eq. 2,
 * standardized betas and the forward selection's F-test, Gram-Schmidt
 * (§3.1), clustering against a naive O(m^3) UPGMA, collinear events,
 * events unrelated to time, and §3.6 combination.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "check.h"
#include "lime/lime_priv.h"

static uint64_t rng = 0x5eed;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double dot(const double *a, const double *b, uint32_t n)
{
	double s = 0;

	for (uint32_t t = 0; t < n; t++)
		s += a[t] * b[t];
	return s;
}

/* k orthonormal centered vectors in R^n. */
static void basis(uint32_t n, int k, double *q)
{
	for (int i = 0; i < k; i++) {
		double *v = q + (size_t)i * n, mean = 0, norm;

		for (uint32_t t = 0; t < n; t++)
			mean += (v[t] = uniform() - 0.5) / n;
		for (uint32_t t = 0; t < n; t++)
			v[t] -= mean;
		for (int pass = 0; pass < 2; pass++)
			for (int j = 0; j < i; j++) {
				double d = dot(v, q + (size_t)j * n, n);

				for (uint32_t t = 0; t < n; t++)
					v[t] -= d * q[(size_t)j * n + t];
			}
		norm = sqrt(dot(v, v, n));
		for (uint32_t t = 0; t < n; t++)
			v[t] /= norm;
	}
}

static void test_equations(void)
{
	const double out[] = { 0.92, 0.3, -0.5 }, in[] = { 0.1, -0.2 };

	CHECK_NEAR(sb_lime_eq1(out, 3, in, 2), 0.82, 1e-12);
	CHECK_NEAR(sb_lime_eq1(out, 3, NULL, 0), 0.92, 1e-12);   /* function entry */
	CHECK_NEAR(sb_lime_eq1(NULL, 0, in, 2), -0.1, 1e-12);
	CHECK_NEAR(sb_lime_final_score(0.82, 0.91), 0.7462, 1e-12);
}

/* Two predictors: beta_1 = (r1y - r12 r2y) / (1 - r12^2), and the same for
 * beta_2, from Pearson correlations computed by GSL on raw data. */
static void test_beta(void)
{
	enum { N = 12 };
	double a[N], b[N], y[N], ua[N], ub[N], uy[N], beta[2];
	const double *cols[2] = { ua, ub };

	for (int t = 0; t < N; t++) {
		a[t] = 10 + 5 * uniform();
		b[t] = 3 + a[t] * 0.3 + 2 * uniform();
		y[t] = 100 + 7 * a[t] - 4 * b[t] + 3 * uniform();
	}
	double r1y = gsl_stats_correlation(a, 1, y, 1, N);
	double r2y = gsl_stats_correlation(b, 1, y, 1, N);
	double r12 = gsl_stats_correlation(a, 1, b, 1, N);

	sb_lime_unit(a, N, ua);
	sb_lime_unit(b, N, ub);
	sb_lime_unit(y, N, uy);
	CHECK_NEAR(dot(ua, uy, N), r1y, 1e-12);
	CHECK(sb_lime_beta(cols, 2, uy, N, beta) == 0, "beta");
	CHECK_NEAR(beta[0], (r1y - r12 * r2y) / (1 - r12 * r12), 1e-9);
	CHECK_NEAR(beta[1], (r2y - r12 * r1y) / (1 - r12 * r12), 1e-9);
}

/* Figure 4's vectors: x2 enters first (r = 0.92), then x1; a and g, with
 * nothing along the residual, stay out.  Betas exact. */
static void test_forward(void)
{
	enum { N = 16 };
	const double b1 = 0.3, b2 = 0.91, r12 = 1.0 / 30, c = 0.1 / (b2 + b1 * r12);
	double q[5 * N], x[4 * N], y[N], beta[N];
	uint32_t sel[N];
	const double rsq = b1 * b1 + b2 * b2 + 2 * b1 * b2 * r12;

	basis(N, 5, q);
	for (int t = 0; t < N; t++) {
		x[t] = c * q[t] + sqrt(1 - c * c) * q[3 * N + t];          /* a  */
		x[N + t] = r12 * q[t] + sqrt(1 - r12 * r12) * q[N + t];    /* x1 */
		x[2 * N + t] = q[4 * N + t];                               /* g  */
		x[3 * N + t] = q[t];                                       /* x2 */
	}
	for (int t = 0; t < N; t++)
		y[t] = b1 * x[N + t] + b2 * q[t] + sqrt(1 - rsq) * q[2 * N + t];
	CHECK(sb_lime_forward(x, 4, y, N, 0.05, sel, beta) == 2, "two enter");
	CHECK(sel[0] == 3 && sel[1] == 1, "x2 then x1: %u %u", sel[0], sel[1]);
	CHECK_NEAR(beta[0], 0.91, 1e-9);
	CHECK_NEAR(beta[1], 0.3, 1e-9);
}

/* The partial F-test decides at alpha, and n - 2 predictors at most. */
static void test_ftest(void)
{
	enum { N = 5 };
	static const double w[4] = { 0.9, 0.4, 0.15, 0.1 };
	double q[4 * N], y[N] = { 0 }, beta[N], norm = 0, p;
	uint32_t sel[N];

	basis(N, 4, q);
	for (int i = 0; i < 4; i++)
		norm += w[i] * w[i];
	for (int i = 0; i < 4; i++)
		for (int t = 0; t < N; t++)
			y[t] += w[i] / sqrt(norm) * q[i * N + t];
	/* Second entry: reduction w1^2 of residual 1 - w0^2, df (1, N - 3). */
	double red = w[1] * w[1] / norm, rest = 1 - (w[0] * w[0] + w[1] * w[1]) / norm;

	p = gsl_cdf_fdist_Q(red / (rest / (N - 3)), 1, N - 3);
	CHECK(sb_lime_forward(q, 4, y, N, p * 1.001, sel, beta) >= 2, "enters at p < alpha");
	CHECK(sb_lime_forward(q, 4, y, N, p * 0.999, sel, beta) == 1, "stays out at p > alpha");
	CHECK(sb_lime_forward(q, 4, y, N, 0.5, sel, beta) == N - 2, "at most n - 2");
	CHECK(sb_lime_forward(q, 4, y, 2, 0.5, sel, beta) == 0, "2 threads: none");
}

/*
 * A branch's two sides as clusters: the taken side grows with time, the
 * not-taken side is its mirror image, made a little cleaner by chance (an
 * edge that joined the taken side at r >= 0.9 blurs it: its reduction is
 * 2e-4 smaller).  The side that grows with time enters, beta > 0.
 */
static void test_mirror_tie(void)
{
	enum { N = 4 };
	double raw[2][N] = { { 60, 0, 0, 0 }, { 61, 0, 0, 1 } }, x[2 * N], y[N], beta[N], pos[N];
	double t[N] = { 4e8, 1e8, 1.01e8, 0.99e8 };
	uint32_t sel[N];

	sb_lime_unit(t, N, y);
	/* x0: the taken cluster's score, blurred; x1: the clean mirror */
	sb_lime_unit(raw[1], N, pos);
	for (int i = 0; i < N; i++)
		pos[i] = 0.99 * pos[i] + 0.01 * (raw[0][i] - 15) / 52.0;
	sb_lime_unit(pos, N, x);
	for (int i = 0; i < N; i++)
		raw[0][i] = -raw[0][i];
	sb_lime_unit(raw[0], N, x + N);
	CHECK(fabs(sb_lime_dot(x + N, y, N)) > fabs(sb_lime_dot(x, y, N)),
	      "the mirror correlates a little better");
	CHECK(sb_lime_forward(x, 2, y, N, 0.05, sel, beta) == 1, "one side enters");
	CHECK(sel[0] == 0 && beta[0] > 0, "the side growing with time: %u, beta %.3f", sel[0],
	      beta[0]);
}

/*
 * The same with the times of a noisy machine (lime_owner's four threads,
 * work 12:10:8:6, on two shared cores): the edge that joined the taken
 * side moves its reduction by 2e-3, more than any tie, yet the two sides
 * are still mirror images.  The side that grows with time enters.
 */
static void test_mirror_noisy(void)
{
	enum { N = 4 };
	double taken[N] = { 480, 400, 320, 245 }, mirror[N] = { -480, -400, -320, -240 };
	double t[N] = { 300e6, 263e6, 207e6, 150e6 }, x[2 * N], y[N], beta[N];
	uint32_t sel[N];

	sb_lime_unit(t, N, y);
	sb_lime_unit(taken, N, x);
	sb_lime_unit(mirror, N, x + N);
	CHECK(sb_lime_dot(x + N, y, N) * sb_lime_dot(x + N, y, N) >
	      1.001 * sb_lime_dot(x, y, N) * sb_lime_dot(x, y, N),
	      "the mirror's reduction is larger by more than a tie");
	CHECK(sb_lime_forward(x, 2, y, N, 0.05, sel, beta) == 1, "noisy: one side enters");
	CHECK(sel[0] == 0 && beta[0] > 0, "noisy: the side growing with time: %u, beta %.3f",
	      sel[0], beta[0]);
}

/* §3.1: misses lose what execution counts explain, L2 what both explain. */
static void test_gram_schmidt(void)
{
	enum { N = 12 };
	double q[4 * N], cnt[3][N], u[3 * N], ce[N], cm[N], want[N], norm = 0;
	uint8_t live[3];
	struct sb_lime_event ev[3] = {
		{ .kind = SB_LIME_HW, .superior = -1, .counts = cnt[0] },  /* executions */
		{ .kind = SB_LIME_HW, .superior = 0, .counts = cnt[1] },   /* L1 misses */
		{ .kind = SB_LIME_HW, .superior = 1, .counts = cnt[2] },   /* L2 misses */
	};
	struct sb_lime_instance in = { .nthreads = N, .nevents = 3, .events = ev };

	basis(N, 4, q);
	for (int t = 0; t < N; t++) {
		cnt[0][t] = 1000 + 100 * q[t] + 30 * q[N + t];
		cnt[1][t] = 0.1 * cnt[0][t] + 20 * q[2 * N + t] + 5 * q[t];
		cnt[2][t] = 0.3 * cnt[1][t] + 4 * q[3 * N + t];
	}
	CHECK(sb_lime_causal(&in, 0.05, u, live) == 0 && live[0] && live[1] && live[2], "causal");
	/* Hand computation: centered misses minus their projection on the
	 * centered executions, normalized. */
	double me = 0, mm = 0;

	for (int t = 0; t < N; t++) {
		me += cnt[0][t] / N;
		mm += cnt[1][t] / N;
	}
	for (int t = 0; t < N; t++) {
		ce[t] = cnt[0][t] - me;
		cm[t] = cnt[1][t] - mm;
	}
	for (int t = 0; t < N; t++)
		norm += pow(want[t] = cm[t] - dot(cm, ce, N) / dot(ce, ce, N) * ce[t], 2);
	for (int t = 0; t < N; t++)
		CHECK_NEAR(u[N + t], want[t] / sqrt(norm), 1e-12);
	CHECK_NEAR(dot(u + N, ce, N), 0, 1e-9);
	CHECK_NEAR(dot(u + 2 * N, u, N), 0, 1e-12);
	CHECK_NEAR(dot(u + 2 * N, u + N, N), 0, 1e-12);

	/* Misses exactly proportional to executions: nothing of their own. */
	for (int t = 0; t < N; t++)
		cnt[1][t] = 0.1 * cnt[0][t];
	CHECK(sb_lime_causal(&in, 0.05, u, live) == 0 && live[0] && !live[1], "fully explained");
	ev[0].superior = 2;
	CHECK(sb_lime_causal(&in, 0.05, u, live) == -EINVAL, "a cycle of superiors");
}

/* Reference UPGMA: full matrix, merge the best pair while >= thr. */
static void naive_upgma(const double *u, int m, uint32_t n, double thr, int *lab)
{
	double *l = malloc(sizeof(double) * m * m), *sz = malloc(sizeof(double) * m);

	for (int i = 0; i < m; i++) {
		lab[i] = i;
		sz[i] = 1;
		for (int j = 0; j < m; j++)
			l[i * m + j] = dot(u + (size_t)i * n, u + (size_t)j * n, n);
	}
	for (;;) {
		int a = -1, b = -1;
		double best = -2;

		for (int i = 0; i < m; i++)
			for (int j = i + 1; j < m; j++)
				if (sz[i] > 0 && sz[j] > 0 && l[i * m + j] > best) {
					best = l[i * m + j];
					a = i;
					b = j;
				}
		if (a < 0 || best < thr)
			break;
		for (int k = 0; k < m; k++) {
			double v = (sz[a] * l[a * m + k] + sz[b] * l[b * m + k]) / (sz[a] + sz[b]);

			l[a * m + k] = l[k * m + a] = v;
		}
		sz[a] += sz[b];
		sz[b] = 0;
		for (int i = 0; i < m; i++)
			if (lab[i] == b)
				lab[i] = a;
	}
	free(l);
	free(sz);
}

static int same_partition(const int *a, const uint32_t *b, int m)
{
	for (int i = 0; i < m; i++)
		for (int j = i + 1; j < m; j++)
			if ((a[i] == a[j]) != (b[i] == b[j]))
				return 0;
	return 1;
}

/* m = groups * per + noise unit vectors: members of group g are its random
 * center plus uniform noise of width s0 .. s1 (growing with g), in
 * interleaved order; then independent noise vectors. */
static int planted(double *u, uint32_t n, int groups, int per, int noise, double s0,
		   double s1)
{
	int m = groups * per + noise;
	double *c = malloc(sizeof(double) * n * groups), *x = malloc(sizeof(double) * n);

	for (size_t i = 0; i < (size_t)n * groups; i++)
		c[i] = uniform() - 0.5;
	for (int i = 0; i < m; i++) {
		int g = i < groups * per ? i % groups : -1;
		double s = s0 + (s1 - s0) * (g > 0 ? g : 0) / (groups > 1 ? groups - 1 : 1);

		for (uint32_t t = 0; t < n; t++)
			x[t] = g >= 0 ? c[(size_t)g * n + t] + s * (uniform() - 0.5) : uniform();
		sb_lime_unit(x, n, u + (size_t)i * n);
	}
	free(c);
	free(x);
	return m;
}

static void test_cluster_vs_naive(void)
{
	enum { N = 24, M = 160 };
	double *u = malloc(sizeof(double) * N * M);
	int lab[M];
	uint32_t clus[M];
	struct sb_lime_cluster_params exact = { .threshold = 0.9, .bulk = 1 };
	struct sb_lime_cluster_params hashed = { .threshold = 0.9, .bulk = 1, .pair_budget = -1 };
	struct sb_lime_cluster_params bulk = { .threshold = 0.9, .bulk = 0.99 };
	struct sb_lime_cluster_stats st;
	int m;

	/* Loose groups: r from ~0.99 down to ~0.6 within a group. */
	m = planted(u, N, 10, 14, 20, 0.05, 0.6);
	naive_upgma(u, m, N, 0.9, lab);
	CHECK(sb_lime_cluster(u, (size_t)m, N, &exact, clus, &st) > 0 && st.exact_pairs,
	      "exact");
	CHECK(same_partition(lab, clus, m), "exact pair scan == naive UPGMA");
	for (double thr = 0.5; thr < 1; thr += 0.2) {
		exact.threshold = thr;
		naive_upgma(u, m, N, thr, lab);
		sb_lime_cluster(u, (size_t)m, N, &exact, clus, NULL);
		CHECK(same_partition(lab, clus, m), "== naive UPGMA at %.1f", thr);
	}
	/* Tight groups: hashing and bulk merging change nothing. */
	m = planted(u, N, 10, 14, 20, 0.01, 0.03);
	naive_upgma(u, m, N, 0.9, lab);
	CHECK(sb_lime_cluster(u, (size_t)m, N, &hashed, clus, &st) > 0 && !st.exact_pairs,
	      "hashed");
	CHECK(same_partition(lab, clus, m), "hashed pair scan == naive UPGMA");
	hashed.upgma_budget = -1;
	CHECK(sb_lime_cluster(u, (size_t)m, N, &hashed, clus, &st) > 0 && !st.exact_upgma,
	      "greedy");
	CHECK(same_partition(lab, clus, m), "greedy fallback == naive UPGMA");
	CHECK(sb_lime_cluster(u, (size_t)m, N, &bulk, clus, &st) > 0 && st.exact_upgma, "bulk");
	CHECK(same_partition(lab, clus, m), "bulk merge == naive UPGMA");
	CHECK(st.ngroups < (size_t)m / 2, "bulk merged: %zu groups of %d", st.ngroups, m);
	CHECK(sb_lime_cluster(u, 0, N, &bulk, clus, NULL) == 0, "no events");
	free(u);
}

static struct sb_lime_result *analyze_hw(double (*cnt)[10], int ne, const double *time,
					 int *err)
{
	static struct sb_lime_event ev[8];
	struct sb_lime_instance in = { .nthreads = 10, .time = time, .nevents = (size_t)ne,
				       .events = ev };
	struct sb_lime_result *r = NULL;

	for (int e = 0; e < ne; e++)
		ev[e] = (struct sb_lime_event){ .kind = SB_LIME_HW, .superior = -1,
						.addr = 0xa0 + (uint64_t)e, .counts = cnt[e] };
	*err = sb_lime_analyze(NULL, &in, NULL, &r);
	return r;
}

/* Exact multiples merge; opposite, independent and constant events not. */
static void test_collinear(void)
{
	double q[3 * 10], cnt[6][10], time[10];
	struct sb_lime_result *r;
	int err;

	basis(10, 3, q);
	for (int t = 0; t < 10; t++) {
		cnt[0][t] = 50 + 10 * q[t];
		cnt[1][t] = 3 * cnt[0][t];
		cnt[2][t] = 0.5 * cnt[0][t] + 7;
		cnt[3][t] = 50 + 10 * q[10 + t];
		cnt[4][t] = 100 - cnt[0][t];
		cnt[5][t] = 42;
		time[t] = 1e6 + 1e4 * q[t] + 1e4 * q[20 + t];
	}
	r = analyze_hw(cnt, 6, time, &err);
	CHECK(!err && r, "analyze");
	if (!r)
		return;
	CHECK(r->cluster_of[0] == r->cluster_of[1] && r->cluster_of[1] == r->cluster_of[2],
	      "multiples share a cluster");
	CHECK(r->cluster_of[3] != r->cluster_of[0], "independent apart");
	CHECK(r->cluster_of[4] != r->cluster_of[0], "negatively correlated apart");
	CHECK(r->cluster_of[5] == SB_LIME_NO_CLUSTER, "constant: no cluster");
	CHECK(r->nclusters == 3, "3 clusters: %zu", r->nclusters);
	sb_lime_result_free(r);
}

/* A hardware event that follows time is a cause, scored by beta alone;
 * one orthogonal to time is left out of the regression. */
static void test_unrelated(void)
{
	double q[4 * 10], cnt[2][10], time[10];
	struct sb_lime_result *r;
	int err;

	basis(10, 4, q);
	for (int t = 0; t < 10; t++) {
		cnt[0][t] = 500 + 40 * q[t] + 2 * q[10 + t];
		cnt[1][t] = 500 + 40 * q[20 + t];
		time[t] = 1e6 + 1e4 * q[t] + 1e3 * q[30 + t];
	}
	r = analyze_hw(cnt, 2, time, &err);
	CHECK(!err && r && r->ncauses == 1, "one cause");
	if (r && r->ncauses == 1) {
		double u0[10], uy[10];

		sb_lime_unit(cnt[0], 10, u0);
		sb_lime_unit(time, 10, uy);
		CHECK(r->causes[0].kind == SB_CAUSE_HW && r->causes[0].addr == 0xa0 &&
		      r->causes[0].event == 0, "the correlated event");
		CHECK(r->causes[0].leader_score == 1 && r->causes[0].score == r->causes[0].beta,
		      "hardware: score = beta");
		CHECK_NEAR(r->causes[0].beta, dot(u0, uy, 10), 1e-9);
	}
	for (size_t i = 0; r && i < r->ncauses; i++)
		CHECK(r->causes[i].addr != 0xa1, "no cause for the unrelated event");
	sb_lime_result_free(r);
}

static void test_combine(void)
{
	struct sb_lime_cause c1[] = {
		{ .kind = SB_CAUSE_BRANCH, .addr = 0x10, .score = 0.8, .beta = 0.9, .leader_score = 0.9 },
		{ .kind = SB_CAUSE_HW, .addr = 0x20, .score = 0.4, .beta = 0.4, .leader_score = 1 },
		{ .kind = SB_CAUSE_BRANCH, .addr = 0x10, .score = 0.2, .beta = 0.2, .leader_score = 1 },
	};
	struct sb_lime_cause c2[] = {
		{ .kind = SB_CAUSE_HW, .addr = 0x20, .score = 0.9, .beta = 0.9, .leader_score = 1 },
		{ .kind = SB_CAUSE_LOOP, .addr = 0x30, .score = 0.4, .beta = 0.5, .leader_score = 0.8 },
		{ .kind = SB_CAUSE_HW, .addr = 0x30, .score = 0.05, .beta = 0.05, .leader_score = 1 },
	};
	struct sb_lime_result r1 = { .ncauses = 3, .causes = c1 }, r2 = { .ncauses = 3, .causes = c2 };
	const struct sb_lime_result *rs[] = { &r1, &r2 };
	const double w[] = { 0.3, 0.1 }, zero[] = { 0, 0 }, bad[] = { 0.3, NAN };
	struct sb_lime_result *out = NULL;

	CHECK(sb_lime_combine(rs, w, 2, &out) == 0 && out && out->ncauses == 4, "combine");
	if (out && out->ncauses == 4) {
		/* (0.3 * 0.8 + 0.1 * 0) / 0.4; the worse duplicate 0.2 is ignored */
		CHECK(out->causes[0].kind == SB_CAUSE_BRANCH && out->causes[0].addr == 0x10,
		      "branch first");
		CHECK_NEAR(out->causes[0].score, 0.6, 1e-12);
		CHECK_NEAR(out->causes[0].beta, 0.9, 1e-12);
		CHECK(out->causes[1].kind == SB_CAUSE_HW && out->causes[1].addr == 0x20, "hw");
		CHECK_NEAR(out->causes[1].score, (0.3 * 0.4 + 0.1 * 0.9) / 0.4, 1e-12);
		CHECK(out->causes[2].kind == SB_CAUSE_LOOP, "loop third");
		CHECK_NEAR(out->causes[2].score, 0.1 * 0.4 / 0.4, 1e-12);
		CHECK_NEAR(out->causes[2].leader_score, 0.8, 1e-12);
		CHECK(out->causes[3].kind == SB_CAUSE_HW && out->causes[3].addr == 0x30,
		      "same address, other kind: its own key");
		CHECK(!out->cluster_of, "no clusters after combining");
	}
	sb_lime_result_free(out);
	CHECK(sb_lime_combine(rs, zero, 2, &out) == 0 && out && out->ncauses == 4, "zero weights");
	if (out && out->ncauses == 4)
		CHECK_NEAR(out->causes[0].score, 0.65, 1e-12);  /* HW 0x20 equal-weighted */
	sb_lime_result_free(out);
	CHECK(sb_lime_combine(rs, bad, 2, &out) == -EINVAL && !out, "NaN weight");
	CHECK(sb_lime_combine(rs, w, 0, &out) == 0 && out && !out->ncauses, "nothing");
	sb_lime_result_free(out);
}

int main(void)
{
	test_equations();
	test_beta();
	test_forward();
	test_ftest();
	test_mirror_tie();
	test_mirror_noisy();
	test_gram_schmidt();
	test_cluster_vs_naive();
	test_collinear();
	test_unrelated();
	test_combine();
	return CHECK_DONE("test_lime_stages");
}
