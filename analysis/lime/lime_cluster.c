// SPDX-License-Identifier: MIT
/*
 * LIME §3.2 hierarchical clustering with the §5.6 bulk merge, scaled to
 * 10^5 events without an n^2 proximity matrix.
 *
 * The proximity of two events is Pearson's r, the dot product of their
 * unit vectors.  UPGMA's average linkage of clusters A and B is the mean
 * of r over all pairs, which for dot products is exactly
 *	link(A, B) = S_A . S_B / (|A| |B|)
 * with S the sum of a cluster's unit vectors.  So no proximity matrix is
 * stored at all: a cluster is (S, |A|) and any linkage costs O(threads).
 * Merging continues while the best linkage is >= threshold.
 *
 * 1. Bulk merge (§5.6): each event joins the first "seed" event with
 *    r >= b, else becomes a seed.  Candidate seeds come from random-
 *    hyperplane hashes (L tables of k sign bits, which collide with
 *    probability (1 - angle/pi)^k) plus the previous event's seed, since
 *    related events are usually adjacent.  Members are within r >= b of
 *    their seed, hence within 2b^2 - 1 of each other; b is raised to
 *    sqrt((1 + threshold) / 2) when needed so that a bulk group is always
 *    a valid cluster at the threshold.  A missed candidate only leaves
 *    two groups for step 3 to merge exactly.
 *    Cost O(m (n L k + L c n)) for m events, n threads, c <= SCAN_CAP.
 * 2. Threshold graph: groups g, h are joined when link(g, h) >= threshold.
 *    A cluster merge needs link >= threshold, and a linkage is a weighted
 *    mean of group linkages, so UPGMA never merges across the connected
 *    components of this graph.  Components are found by union-find during
 *    an all-pairs scan of the R groups (O(R^2 n), pairs already in one
 *    component skipped) when that costs <= PAIR_BUDGET multiply-adds;
 *    beyond it by hashing again (approximate: a pair at r = 0.95 is found
 *    with probability ~0.93; pairs near 1 almost surely).
 * 3. UPGMA in each component by the nearest-neighbour chain, exact for
 *    a reducible linkage such as UPGMA: ~1.5 s^2 n multiply-adds for a
 *    component of s groups, O(s) memory beyond the sums.  A cluster whose
 *    best linkage is below the threshold can never reach it again
 *    (linkages only average under merges), so it is retired.  §5.6's
 *    cached proximity matrix is not needed: a merge makes one new sum,
 *    and every linkage it takes part in is one dot product away.  Only a
 *    component beyond UPGMA_BUDGET (thousands of events correlated at
 *    [threshold, b) with no near-duplicates) is first clustered greedily
 *    (approximate, stats->exact_upgma false).
 * Memory: O(m n) for the group sums plus O(m L) for the hash tables.
 */
#include "lime_priv.h"
#include "util/rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BULK_TABLES 4            /* both table counts: multiples of 4 (lsh_sign) */
#define BULK_BITS_MAX 16
#define SCAN_CAP 64             /* seeds tried per hash bucket */
#define PAIR_BUDGET 2.5e9       /* multiply-adds of the exact pair scan */
#define PAIR_TABLES 8
#define PAIR_WINDOW 32          /* pairs per bucket entry, hashed scan */
#define FLOAT_SLACK 1e-4        /* float pair scan: err towards joining */
#define UPGMA_BUDGET 3e9        /* multiply-adds of one component's UPGMA */

/* GNU C vectors (gcc and clang): -O2 vectorizes neither of the two hot
 * loops below by itself. */
typedef float v4f __attribute__((vector_size(16)));

struct lsh {
	unsigned bits, tables, width;   /* width = bits * tables projections */
	float *dir;                     /* n x width, Gaussian; width % 4 == 0 */
	float *proj;                    /* width scratch */
};

static double gaussian(uint64_t *s)
{
	/* Box-Muller; u1 in (0, 1] keeps log finite. */
	double u1 = ((double)(sb_rng_next(s) >> 11) + 1) / 9007199254740992.0;
	double u2 = (double)(sb_rng_next(s) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static unsigned bitlen(size_t x)
{
	unsigned b = 0;

	while (x) {
		b++;
		x >>= 1;
	}
	return b;
}

static int lsh_init(struct lsh *h, unsigned bits, unsigned tables, uint32_t n, uint64_t seed)
{
	h->bits = bits;
	h->tables = tables;
	h->width = bits * tables;
	h->dir = malloc((size_t)n * h->width * sizeof(float));
	h->proj = malloc(h->width * sizeof(float));
	if (!h->dir || !h->proj)
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)n * h->width; i++)
		h->dir[i] = (float)gaussian(&seed);
	return 0;
}

static void lsh_free(struct lsh *h)
{
	free(h->dir);
	free(h->proj);
}

/* Signature of x in every table: x times the direction matrix, the
 * output index innermost (4 projections per vector operation). */
static void lsh_sign(struct lsh *h, const double *x, const float *xf, uint32_t n,
		     uint32_t *sig)
{
	float *proj = h->proj;

	memset(proj, 0, h->width * sizeof(float));
	for (uint32_t t = 0; t < n; t++) {
		float v = x ? (float)x[t] : xf[t];
		const float *d = h->dir + (size_t)t * h->width;

		for (size_t j = 0; j < h->width; j += 4) {
			v4f p, w;

			memcpy(&p, proj + j, sizeof(p));
			memcpy(&w, d + j, sizeof(w));
			p += v * w;
			memcpy(proj + j, &p, sizeof(p));
		}
	}
	for (unsigned l = 0; l < h->tables; l++) {
		uint32_t s = 0;

		for (unsigned b = 0; b < h->bits; b++)
			s = s << 1 | (proj[l * h->bits + b] > 0);
		sig[l] = s;
	}
}

/* The pair scan's inner product, in explicit 4-wide vectors: the
 * auto-vectorizer will not reassociate a float sum. */
static inline float dotf(const float *a, const float *b, uint32_t n)
{
	v4f s0 = { 0 }, s1 = { 0 }, x0, x1, y0, y1;
	float s = 0;
	size_t t = 0;

	for (; t + 8 <= n; t += 8) {
		memcpy(&x0, a + t, sizeof(x0));
		memcpy(&x1, a + t + 4, sizeof(x1));
		memcpy(&y0, b + t, sizeof(y0));
		memcpy(&y1, b + t + 4, sizeof(y1));
		s0 += x0 * y0;
		s1 += x1 * y1;
	}
	s0 += s1;
	for (; t < n; t++)
		s += a[t] * b[t];
	return s + ((s0[0] + s0[1]) + (s0[2] + s0[3]));
}

/* ---- step 1: bulk groups ---- */

struct bulk {
	const double *u;
	uint32_t n;
	double b;
	uint32_t *head, *next;          /* per table: bucket -> seed chain */
	uint32_t *seed;                 /* group -> its seed event */
	uint32_t *group;                /* event -> group */
	size_t ngroups;
};

static bool close_to_seed(const struct bulk *k, size_t i, uint32_t s)
{
	return sb_lime_dot(k->u + i * k->n, k->u + (size_t)s * k->n, k->n) >= k->b;
}

static long find_seed(const struct bulk *k, const struct lsh *h, size_t m, size_t i,
		      const uint32_t *sig)
{
	for (unsigned l = 0; l < h->tables; l++) {
		uint32_t s = k->head[((size_t)l << h->bits) + sig[l]];

		for (int tries = 0; s != SB_LIME_NONE && tries < SCAN_CAP; tries++) {
			if (close_to_seed(k, i, s))
				return s;
			s = k->next[l * m + s];
		}
	}
	return -1;
}

static int bulk_merge(struct bulk *k, size_t m)
{
	struct lsh h;
	uint32_t sig[BULK_TABLES];
	unsigned bits = bitlen(m);
	size_t nb;
	int err;

	bits = bits < 4 ? 4 : bits > BULK_BITS_MAX ? BULK_BITS_MAX : bits;
	nb = (size_t)BULK_TABLES << bits;
	err = lsh_init(&h, bits, BULK_TABLES, k->n, 0x11e5eed);
	k->head = malloc(nb * sizeof(*k->head));
	k->next = malloc(BULK_TABLES * m * sizeof(*k->next));
	if (err || !k->head || !k->next) {
		lsh_free(&h);
		return -ENOMEM;
	}
	memset(k->head, 0xff, nb * sizeof(*k->head));
	k->ngroups = 0;
	for (size_t i = 0; i < m; i++) {
		long s = -1;

		if (i && close_to_seed(k, i, k->seed[k->group[i - 1]]))
			s = k->seed[k->group[i - 1]];
		if (s < 0) {
			lsh_sign(&h, k->u + i * k->n, NULL, k->n, sig);
			s = find_seed(k, &h, m, i, sig);
		}
		if (s >= 0) {
			k->group[i] = k->group[s];
			continue;
		}
		k->group[i] = (uint32_t)k->ngroups;
		k->seed[k->ngroups++] = (uint32_t)i;
		for (unsigned l = 0; l < BULK_TABLES; l++) {
			uint32_t *hd = &k->head[((size_t)l << bits) + sig[l]];

			k->next[l * m + i] = *hd;
			*hd = (uint32_t)i;
		}
	}
	lsh_free(&h);
	return 0;
}

/* ---- step 2: components of the threshold graph ---- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static void uf_join(uint32_t *p, uint32_t a, uint32_t b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	p[a > b ? a : b] = a < b ? a : b;
}

static void pairs_exact(const float *mean, size_t r, uint32_t n, float thr, uint32_t *uf)
{
	for (size_t i = 0; i < r; i++) {
		uint32_t ri = uf_find(uf, (uint32_t)i);

		for (size_t j = i + 1; j < r; j++) {
			if (uf_find(uf, (uint32_t)j) == ri ||
			    dotf(mean + i * n, mean + j * n, n) < thr)
				continue;
			uf_join(uf, (uint32_t)i, (uint32_t)j);
			ri = uf_find(uf, (uint32_t)i);
		}
	}
}

/* Candidate pairs share a signature in one of PAIR_TABLES tables; each
 * table's buckets come from a counting sort of the signatures. */
static int pairs_hashed(const float *mean, size_t r, uint32_t n, float thr, uint32_t *uf)
{
	unsigned bits = bitlen(r) > 8 ? bitlen(r) - 4 : 4;
	size_t nb;
	struct lsh h;
	uint32_t *sig, *start, *order;
	int err;

	bits = bits > 16 ? 16 : bits;
	nb = (size_t)1 << bits;
	err = lsh_init(&h, bits, PAIR_TABLES, n, 0xc1a55);
	sig = malloc(r * PAIR_TABLES * sizeof(*sig));
	start = malloc((nb + 1) * sizeof(*start));
	order = malloc(r * sizeof(*order));
	if (err || !sig || !start || !order) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r; i++)
		lsh_sign(&h, NULL, mean + i * n, n, sig + i * PAIR_TABLES);
	for (unsigned l = 0; l < PAIR_TABLES; l++) {
		memset(start, 0, (nb + 1) * sizeof(*start));
		for (size_t i = 0; i < r; i++)
			start[sig[i * PAIR_TABLES + l] + 1]++;
		for (size_t b = 0; b < nb; b++)
			start[b + 1] += start[b];
		for (size_t i = 0; i < r; i++)
			order[start[sig[i * PAIR_TABLES + l]]++] = (uint32_t)i;
		/* start[b] is now the end of bucket b, i.e. the start of b + 1 */
		for (size_t b = 0, lo = 0; b < nb; lo = start[b++])
			for (size_t x = lo; x < start[b]; x++)
				for (size_t y = x + 1; y < start[b] && y <= x + PAIR_WINDOW; y++) {
					uint32_t i = order[x], j = order[y];

					if (uf_find(uf, i) != uf_find(uf, j) &&
					    dotf(mean + (size_t)i * n, mean + (size_t)j * n,
						 n) >= thr)
						uf_join(uf, i, j);
				}
	}
out:
	lsh_free(&h);
	free(sig);
	free(start);
	free(order);
	return err;
}

/* ---- step 3: UPGMA by nearest-neighbour chain ---- */

struct upgma {
	double *sum;            /* R x n: sum of member unit vectors */
	double *cnt;            /* members */
	uint32_t *up;           /* merged into, or itself */
	uint8_t *live;          /* still a candidate for merging */
	uint32_t *chain;
	uint32_t n;
	double thr;
	double budget;          /* multiply-adds for one component's UPGMA */
	bool exact;             /* no component needed the greedy fallback */
};

static double linkage(const struct upgma *g, uint32_t a, uint32_t b)
{
	return sb_lime_dot(g->sum + (size_t)a * g->n, g->sum + (size_t)b * g->n, g->n) /
	       (g->cnt[a] * g->cnt[b]);
}

/* Best live partner of c in the component; on a tie the chain's previous
 * element wins (the chain needs it to terminate). */
static uint32_t nearest(const struct upgma *g, const uint32_t *mem, size_t s, uint32_t c,
			uint32_t prev, double *best)
{
	uint32_t arg = SB_LIME_NONE;

	*best = -INFINITY;
	for (size_t i = 0; i < s; i++) {
		uint32_t d = mem[i];
		double l;

		if (d == c || !g->live[d])
			continue;
		l = linkage(g, c, d);
		if (l > *best || (l == *best && d == prev)) {
			*best = l;
			arg = d;
		}
	}
	return arg;
}

static void merge(struct upgma *g, uint32_t into, uint32_t from)
{
	double *a = g->sum + (size_t)into * g->n;
	const double *b = g->sum + (size_t)from * g->n;

	for (uint32_t t = 0; t < g->n; t++)
		a[t] += b[t];
	g->cnt[into] += g->cnt[from];
	g->live[from] = 0;
	g->up[from] = into;
}

/* Every round starts a chain at the first live cluster and ends with it
 * merged or retired, so the component is done when none is live. */
static void nn_chain(struct upgma *g, const uint32_t *mem, size_t s)
{
	for (size_t i = 0; i < s;) {
		size_t top = 0;

		if (!g->live[mem[i]]) {
			i++;
			continue;
		}
		g->chain[top++] = mem[i];
		while (top) {
			uint32_t c = g->chain[top - 1];
			uint32_t prev = top > 1 ? g->chain[top - 2] : SB_LIME_NONE;
			double best;
			uint32_t d = nearest(g, mem, s, c, prev, &best);

			if (d == SB_LIME_NONE || best < g->thr) {
				g->live[c] = 0;     /* retired: nothing reaches it */
				top--;
			} else if (d == prev) {
				merge(g, prev < c ? prev : c, prev < c ? c : prev);
				top -= 2;
			} else if (top < s) {
				g->chain[top++] = d;
			} else {
				top = 0;            /* cannot happen: links grow */
			}
		}
	}
}

/* ---- driver ---- */

/*
 * Fallback for a component too large for O(s^2 n): each group joins the
 * existing cluster with the best linkage if that is >= threshold, else
 * starts one; then exact UPGMA merges those clusters if they are few
 * enough.  Approximate (order-dependent), O(s c n) for c clusters.
 */
static size_t greedy(struct upgma *g, uint32_t *mem, size_t s)
{
	size_t nl = 0;

	for (size_t i = 0; i < s; i++) {
		double best = -INFINITY;
		size_t arg = 0;

		for (size_t j = 0; j < nl; j++) {
			double l = linkage(g, mem[j], mem[i]);

			if (l > best) {
				best = l;
				arg = j;
			}
		}
		if (best >= g->thr)
			merge(g, mem[arg], mem[i]);
		else
			mem[nl++] = mem[i];
	}
	return nl;
}

static bool upgma_affordable(const struct upgma *g, size_t s)
{
	return g->budget >= 0 && 1.5 * (double)s * (double)s * g->n <= g->budget;
}

static void component(struct upgma *g, uint32_t *mem, size_t s)
{
	if (!upgma_affordable(g, s)) {
		g->exact = false;
		s = greedy(g, mem, s);
	}
	if (upgma_affordable(g, s))
		nn_chain(g, mem, s);
}

static int components_upgma(struct upgma *g, const uint32_t *uf, size_t r)
{
	uint32_t *start = calloc(r + 1, sizeof(*start));
	uint32_t *mem = malloc(r * sizeof(*mem));

	if (!start || !mem) {
		free(start);
		free(mem);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r; i++)
		start[uf[i] + 1]++;
	for (size_t i = 0; i < r; i++)
		start[i + 1] += start[i];
	for (size_t i = 0; i < r; i++)
		mem[start[uf[i]]++] = (uint32_t)i;
	for (size_t c = 0, lo = 0; c < r; lo = start[c++])
		if (start[c] - lo > 1)
			component(g, mem + lo, start[c] - lo);
	free(start);
	free(mem);
	return 0;
}

static int threshold_graph(const struct upgma *g, size_t r, double budget, uint32_t *uf,
			   bool *exact)
{
	uint32_t n = g->n;
	float *mean = malloc((r ? r : 1) * n * sizeof(*mean));
	int err = 0;

	if (!mean)
		return -ENOMEM;
	for (size_t i = 0; i < r; i++) {
		uf[i] = (uint32_t)i;
		for (uint32_t t = 0; t < n; t++)
			mean[i * n + t] = (float)(g->sum[i * n + t] / g->cnt[i]);
	}
	*exact = budget >= 0 && (double)r * (double)r / 2 * n <= budget;
	if (*exact)
		pairs_exact(mean, r, n, (float)(g->thr - FLOAT_SLACK), uf);
	else
		err = pairs_hashed(mean, r, n, (float)(g->thr - FLOAT_SLACK), uf);
	for (size_t i = 0; i < r; i++)
		uf[i] = uf_find(uf, (uint32_t)i);
	free(mean);
	return err;
}

static long label(const struct upgma *g, const struct bulk *k, size_t m, uint32_t *clus)
{
	uint32_t *id = malloc((k->ngroups ? k->ngroups : 1) * sizeof(*id));
	long nclus = 0;

	if (!id)
		return -ENOMEM;
	memset(id, 0xff, k->ngroups * sizeof(*id));
	for (size_t i = 0; i < m; i++) {
		uint32_t root = uf_find(g->up, k->group[i]);

		if (id[root] == SB_LIME_NONE)
			id[root] = (uint32_t)nclus++;
		clus[i] = id[root];
	}
	free(id);
	return nclus;
}

static int group_sums(struct upgma *g, const struct bulk *k, size_t m)
{
	size_t r = k->ngroups ? k->ngroups : 1;

	g->sum = calloc(r * g->n, sizeof(*g->sum));
	g->cnt = calloc(r, sizeof(*g->cnt));
	g->up = malloc(r * sizeof(*g->up));
	g->live = malloc(r);
	g->chain = malloc(r * sizeof(*g->chain));
	if (!g->sum || !g->cnt || !g->up || !g->live || !g->chain)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		double *s = g->sum + (size_t)k->group[i] * g->n;

		for (uint32_t t = 0; t < g->n; t++)
			s[t] += k->u[i * g->n + t];
		g->cnt[k->group[i]]++;
	}
	for (size_t i = 0; i < k->ngroups; i++)
		g->up[i] = (uint32_t)i;
	memset(g->live, 1, k->ngroups);
	return 0;
}

long sb_lime_cluster(const double *u, size_t m, uint32_t n,
		     const struct sb_lime_cluster_params *p, uint32_t *clus,
		     struct sb_lime_cluster_stats *st)
{
	struct bulk k = { .u = u, .n = n };
	struct upgma g = { .n = n, .thr = p->threshold, .exact = true,
			   .budget = p->upgma_budget ? p->upgma_budget : UPGMA_BUDGET };
	double budget = p->pair_budget ? p->pair_budget : PAIR_BUDGET;
	uint32_t *uf = NULL;
	bool exact = true;
	long ret;

	/* Members within r >= b of a seed are within 2b^2 - 1 of each other. */
	k.b = fmax(p->bulk, sqrt((1 + p->threshold) / 2));
	k.b = fmin(k.b, 1) - 1e-12;         /* exact duplicates round below 1 */
	k.seed = malloc((m ? m : 1) * sizeof(*k.seed));
	k.group = malloc((m ? m : 1) * sizeof(*k.group));
	ret = !k.seed || !k.group ? -ENOMEM : m ? bulk_merge(&k, m) : 0;
	if (!ret)
		ret = group_sums(&g, &k, m);
	if (!ret && !(uf = malloc((k.ngroups ? k.ngroups : 1) * sizeof(*uf))))
		ret = -ENOMEM;
	if (!ret)
		ret = threshold_graph(&g, k.ngroups, budget, uf, &exact);
	if (!ret)
		ret = components_upgma(&g, uf, k.ngroups);
	if (!ret)
		ret = label(&g, &k, m, clus);
	if (st) {
		st->ngroups = k.ngroups;
		st->exact_pairs = exact;
		st->exact_upgma = g.exact;
	}
	free(k.head);
	free(k.next);
	free(k.seed);
	free(k.group);
	free(g.sum);
	free(g.cnt);
	free(g.up);
	free(g.live);
	free(g.chain);
	free(uf);
	return ret;
}
