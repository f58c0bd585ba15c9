// SPDX-License-Identifier: MIT
/*
 * Sampled hit-ratio curves (analysis/chip/chip_reuse.c) against a full
 * LRU stack (lru_ref.h) on generated line traces: uniform random over W,
 * a cyclic sweep over W, the paper's Fig. 5 micro-benchmark (15 of 16
 * references random in a hot region, 1 of 16 the next word of a stream).
 *   - StatStack from the forward reuse distances (in accesses) of 30,000
 *     accesses sampled at random: what a PMU and a watchpoint measure.
 *   - HOTL from the same reuses as times (one access per ns) and 30,000
 *     footprint probes: a line drawn from a universe twice the trace's
 *     lines (mapped memory it never touches too), watched from a random
 *     time until its first touch: what watchpoints alone measure.
 * Each within 0.03 mean absolute error of the LRU truth over 16 sizes,
 * no point off by more than 0.08; a window too short leaves the sizes
 * beyond it unresolved, with a lower bound under the truth.  And the
 * buckets: every length in the bucket whose range holds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lru_ref.h"
#include "chip/chip.h"

#define N 400000u          /* references per trace */
#define SAMPLES 30000u
#define STEP 512u          /* lines per cache size step: 16 sizes to 8192 */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum kind { RANDOM, CYCLIC, MICRO };

static void make_trace(enum kind k, uint32_t w, uint64_t *t)
{
	uint64_t word = 0;

	for (uint32_t i = 0; i < N; i++) {
		if (k == RANDOM)
			t[i] = next_rand() % w;
		else if (k == CYCLIC)
			t[i] = i % w;
		else if (i % 16)
			t[i] = next_rand() % w;
		else
			t[i] = (1ull << 40) + word++ / 8;   /* 8 words a line */
	}
}

/* Dense ids of a trace's lines, each line's positions in order (CSR). */
struct occ {
	uint32_t *id, *start, *pos;
	uint32_t lines;
};

static int occ_build(const uint64_t *t, struct occ *o)
{
	size_t cap = 1u << 21;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = calloc(cap, sizeof(*vals)), *fill;

	memset(o, 0, sizeof(*o));
	o->id = calloc(N, sizeof(*o->id));
	if (!keys || !vals || !o->id)
		return -1;
	for (uint32_t i = 0; i < N; i++) {
		size_t h = (size_t)((t[i] * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);

		while (keys[h] && keys[h] != t[i] + 1)
			h = (h + 1) & (cap - 1);
		if (!keys[h]) {
			keys[h] = t[i] + 1;
			vals[h] = o->lines++;
		}
		o->id[i] = vals[h];
	}
	free(keys);
	free(vals);
	o->start = calloc(o->lines + 1, sizeof(*o->start));
	o->pos = calloc(N, sizeof(*o->pos));
	fill = calloc(o->lines + 1, sizeof(*fill));
	if (!o->start || !o->pos || !fill)
		return -1;
	for (uint32_t i = 0; i < N; i++)
		o->start[o->id[i] + 1]++;
	for (uint32_t l = 0; l < o->lines; l++)
		o->start[l + 1] += o->start[l];
	for (uint32_t i = 0; i < N; i++)
		o->pos[o->start[o->id[i]] + fill[o->id[i]]++] = i;
	free(fill);
	return 0;
}

static void occ_free(struct occ *o)
{
	free(o->id);
	free(o->start);
	free(o->pos);
}

/* The first position of line l at or after s, or N. */
static uint32_t occ_next(const struct occ *o, uint32_t l, uint32_t s)
{
	uint32_t lo = o->start[l], hi = o->start[l + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->pos[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->start[l + 1] ? o->pos[lo] : N;
}

/* Reuses of SAMPLES random accesses in [N/4, N - window); footprint
 * probes over a universe of 2 × the trace's lines. */
static void sample(const struct occ *o, uint32_t window, uint32_t fwindow,
		   struct sb_chip_reuse *reuse, struct sb_chip_reuse *first)
{
	memset(reuse, 0, sizeof(*reuse));
	memset(first, 0, sizeof(*first));
	for (uint32_t k = 0; k < SAMPLES; k++) {
		uint32_t i = N / 4 + (uint32_t)(next_rand() % (N - window - N / 4));
		uint32_t nx = occ_next(o, o->id[i], i + 1);
		uint32_t s = N / 4 + (uint32_t)(next_rand() % (N - window - N / 4));
		uint32_t l = (uint32_t)(next_rand() % (2ull * o->lines)), ft;

		if (nx - i <= window)
			sb_chip_reuse_add(reuse, nx - i);
		else
			sb_chip_reuse_censor(reuse, window);
		ft = l < o->lines ? occ_next(o, l, s) : N;   /* the idle half: never */
		if (ft - s <= fwindow)
			sb_chip_reuse_add(first, ft - s + 1);
		else
			sb_chip_reuse_censor(first, fwindow);
	}
}

/* fits: the sizes below the working set, where every point must be
 * resolved; beyond, a point may be a lower bound (reuses not seen within
 * the window: the stream's last touches), never over the truth */
static void compare(const char *what, enum kind k, uint32_t w, int fits)
{
	uint64_t *t = malloc(N * sizeof(*t));
	struct sb_chip_reuse reuse, first;
	struct sb_chip_reuse_point ss[16], ho[16];
	double sizes[16], truth[16], mae_s = 0, mae_h = 0, max_s = 0, max_h = 0;
	struct lru_ref ref;
	struct occ o;

	if (!t || occ_build((make_trace(k, w, t), t), &o) ||
	    lru_ref_init(&ref, N, o.lines, 16 * STEP + 1))
		abort();
	for (uint32_t i = 0; i < N; i++)
		lru_ref_access(&ref, t[i]);
	for (int i = 0; i < 16; i++) {
		sizes[i] = (double)STEP * (i + 1);
		truth[i] = lru_ref_hit_ratio(&ref, STEP * (size_t)(i + 1));
	}
	sample(&o, 100000, 100000, &reuse, &first);
	CHECK(sb_chip_statstack(&reuse, sizes, 16, ss) == 0, "%s: statstack", what);
	CHECK(sb_chip_hotl(&reuse, &first, 2.0 * o.lines, sizes, 16, ho) == 0, "%s: hotl", what);
	for (int i = 0; i < 16; i++) {
		double ds = fabs(ss[i].hit - truth[i]), dh = fabs(ho[i].hit - truth[i]);

		mae_s += ds / 16;
		mae_h += dh / 16;
		max_s = ds > max_s ? ds : max_s;
		max_h = dh > max_h ? dh : max_h;
		CHECK((ss[i].resolved && ho[i].resolved) || i >= fits, "%s: size %d resolved",
		      what, i);
		CHECK(ss[i].resolved || ss[i].hit <= truth[i] + 0.01, "%s: size %d bound %.3f of %.3f",
		      what, i, ss[i].hit, truth[i]);
		CHECK(ho[i].resolved || ho[i].hit <= truth[i] + 0.01, "%s: size %d bound %.3f of %.3f",
		      what, i, ho[i].hit, truth[i]);
		/* binomial: none at 0 or 1 */
		CHECK(ho[i].stderr_ < 0.05 && (ho[i].stderr_ > 0 || !ho[i].resolved ||
					       ho[i].hit < 0.01 || ho[i].hit > 0.99),
		      "%s: size %d error %.4f", what, i, ho[i].stderr_);
	}
	printf("%-8s truth", what);
	for (int i = 0; i < 16; i++)
		printf(" %.2f", truth[i]);
	printf("\n%-8s stack", "");
	for (int i = 0; i < 16; i++)
		printf(" %.2f", ss[i].hit);
	printf("  mae %.4f\n%-8s hotl ", mae_s, "");
	for (int i = 0; i < 16; i++)
		printf(" %.2f", ho[i].hit);
	printf("  mae %.4f\n", mae_h);
	CHECK(mae_s <= 0.03 && max_s <= 0.08, "%s: StatStack mae %.4f max %.4f", what, mae_s,
	      max_s);
	CHECK(mae_h <= 0.03 && max_h <= 0.08, "%s: HOTL mae %.4f max %.4f", what, mae_h, max_h);

	/* windows of 1,500 accesses: random over 4,096 lines reuses beyond
	 * them, so the large sizes are only lower bounds, under the truth */
	if (k == RANDOM) {
		sample(&o, 1500, 1500, &reuse, &first);
		sb_chip_statstack(&reuse, sizes, 16, ss);
		sb_chip_hotl(&reuse, &first, 2.0 * o.lines, sizes, 16, ho);
		CHECK(!ss[15].resolved && !ho[15].resolved && ss[15].hit <= truth[15] &&
		      ho[15].hit <= truth[15] && ss[0].resolved,
		      "short windows: %.3f and %.3f lower bounds of %.3f", ss[15].hit, ho[15].hit,
		      truth[15]);
		/* every reuse seen, the footprint only to 1,500: the sizes it
		 * does not reach are bounds, though no reuse was censored */
		sample(&o, 100000, 1500, &reuse, &first);
		sb_chip_hotl(&reuse, &first, 2.0 * o.lines, sizes, 16, ho);
		CHECK(!reuse.censored && !ho[15].resolved && ho[15].hit <= truth[15] &&
		      ho[0].resolved, "short footprint windows: %.3f a lower bound of %.3f",
		      ho[15].hit, truth[15]);
	}
	lru_ref_free(&ref);
	occ_free(&o);
	free(t);
}

static void buckets(void)
{
	struct sb_chip_reuse r;
	struct sb_chip_reuse_point p;
	double one = 1;
	int bad = 0;

	for (uint64_t v = 1; v < (1ull << 62); v += v / 7 + 1) {
		unsigned b = sb_chip_reuse_bucket(v);

		bad += !(b < SB_CHIP_REUSE_BUCKETS && sb_chip_reuse_bucket_lo(b) <= v &&
			 (b + 1 == SB_CHIP_REUSE_BUCKETS || v < sb_chip_reuse_bucket_lo(b + 1)));
	}
	CHECK(!bad, "%d lengths outside their bucket", bad);
	CHECK(sb_chip_reuse_bucket(UINT64_MAX) == SB_CHIP_REUSE_BUCKETS - 1, "the last bucket");
	memset(&r, 0, sizeof(r));
	CHECK(sb_chip_statstack(&r, &one, 1, &p) == -EINVAL, "no samples refused");
	sb_chip_reuse_add(&r, 5);
	sb_chip_reuse_censor(&r, 100);
	sb_chip_reuse_censor(&r, 50);
	CHECK(sb_chip_reuse_samples(&r) == 3 && r.window == 50, "samples and window");
}

int main(void)
{
	buckets();
	compare("random", RANDOM, 4096, 16);
	compare("cyclic", CYCLIC, 3000, 16);
	compare("micro", MICRO, 2048, 4);
	return CHECK_DONE("test_chip_reuse");
}
