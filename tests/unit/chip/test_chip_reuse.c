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
 *
 * The recorder's PMU path as it runs (chip_reuse.h, sb_chip_rdx_*): each
 * of 30,000 sampled loads is probed, armed 3,000 accesses after it (the
 * recorder's gap), its reuse taken between the first two traps, each
 * window 100,000 accesses; a load an L2 of 512 lines would serve (the
 * data source: its LRU distance) is near.  Within 0.03 of the truth at
 * every size (no point off by 0.08) on the four traces, a pure stream (7
 * of 8 hit: spatial hits inside the gap) and a mix of a small array and
 * a large one; without a data source, as exact on random and cyclic
 * access, a lower bound on the stream.
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

enum kind { RANDOM, CYCLIC, MICRO, STREAM, MIX };

static void make_trace(enum kind k, uint32_t w, uint64_t *t)
{
	uint64_t word = 0;

	for (uint32_t i = 0; i < N; i++) {
		if (k == RANDOM)
			t[i] = next_rand() % w;
		else if (k == CYCLIC)
			t[i] = i % w;
		else if (k == STREAM)
			t[i] = (1ull << 40) + i / 8;
		else if (k == MIX)   /* every other reference in 256 lines */
			t[i] = i % 2 ? (1ull << 41) + next_rand() % 256 : next_rand() % w;
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

#define L2_LINES STEP   /* the simulated data source's private cache */
#define GAP 3000u        /* sample to arming */
#define RDX_WINDOW 100000u

/* One probe of the recorder's protocol on line l, armed at a; traps are
 * the line's accesses (a watchpoint on its word stands for the line:
 * the traces are lines). */
static void rdx_probe(const struct occ *o, uint32_t l, uint32_t a, bool near,
		      struct sb_chip_rdx_sum *s)
{
	struct sb_chip_rdx_probe p;
	uint32_t first = occ_next(o, l, a), second;

	sb_chip_rdx_arm(&p, a, near);
	if (first >= N || first - a > RDX_WINDOW) {
		sb_chip_rdx_close(&p, s, a + RDX_WINDOW);
		return;
	}
	sb_chip_rdx_trap(&p, s, first);
	second = occ_next(o, l, first + 1);
	if (second >= N || second - first > RDX_WINDOW)
		sb_chip_rdx_close(&p, s, first + RDX_WINDOW);
	else
		CHECK(sb_chip_rdx_trap(&p, s, second), "two traps end a probe");
}

/* fits: as compare()'s; a stream without a data source: lower bounds */
static void rdx_compare(const char *what, enum kind k, uint32_t w, int fits, bool data_source)
{
	uint64_t *t = malloc(N * sizeof(*t)), *bsd = malloc(N * sizeof(*bsd)), depth[17];
	struct sb_chip_rdx_sum sum;
	double truth[16], mae = 0, max = 0, cum = 0;
	uint32_t resolved;
	struct lru_ref ref;
	struct occ o;

	if (!t || !bsd || occ_build((make_trace(k, w, t), t), &o) ||
	    lru_ref_init(&ref, N, o.lines, 16 * STEP + 1))
		abort();
	for (uint32_t i = 0; i < N; i++)
		bsd[i] = lru_ref_access(&ref, t[i]);
	for (int i = 0; i < 16; i++)
		truth[i] = lru_ref_hit_ratio(&ref, STEP * (size_t)(i + 1));
	memset(&sum, 0, sizeof(sum));
	sum.near_bytes = data_source ? L2_LINES * 64 : 0;
	for (uint32_t s = 0; s < SAMPLES; s++) {
		uint32_t i = N / 4 + (uint32_t)(next_rand() % (N - 2 * RDX_WINDOW - GAP - N / 4));

		rdx_probe(&o, o.id[i], i + GAP, data_source && bsd[i] < L2_LINES, &sum);
	}
	CHECK(sb_chip_rdx_depths(&sum, N, 16ull * STEP * 64, 64, depth, &resolved) == 0,
	      "%s: depths", what);
	if (k == MIX) {   /* compare() has not shown it */
		printf("%-8s truth", what);
		for (int i = 0; i < 16; i++)
			printf(" %.2f", truth[i]);
		printf("\n");
	}
	printf("%-8s rdx%s ", what, data_source ? "  " : "/0");
	for (int i = 0; i < 16; i++) {
		double h, d;

		cum += (double)depth[i];
		h = cum / N;
		d = fabs(h - truth[i]);
		printf(" %.2f%s", h, (resolved >> i) & 1 ? "" : "?");
		if (data_source || k != STREAM) {
			mae += d / 16;
			max = d > max ? d : max;
			CHECK(((resolved >> i) & 1) || i >= fits, "%s rdx: size %d resolved", what,
			      i);
			CHECK(((resolved >> i) & 1) || h <= truth[i] + 0.01,
			      "%s rdx: size %d bound %.3f of %.3f", what, i, h, truth[i]);
		} else {
			CHECK(h <= truth[i] + 0.01, "%s rdx, no data source: size %d %.3f a lower "
			      "bound of %.3f", what, i, h, truth[i]);
		}
	}
	cum += (double)depth[16];
	printf("  mae %.4f\n", mae);
	CHECK(cum == N, "%s rdx: depths sum to the accesses (%.0f)", what, cum);
	CHECK(mae <= 0.03 && max <= 0.08, "%s rdx%s: mae %.4f max %.4f", what,
	      data_source ? "" : " without a data source", mae, max);
	lru_ref_free(&ref);
	occ_free(&o);
	free(t);
	free(bsd);
}

static void rdx_steps(void)
{
	struct sb_chip_rdx_probe p;
	struct sb_chip_rdx_sum s;
	uint64_t depth[17];
	uint32_t resolved;

	memset(&s, 0, sizeof(s));
	sb_chip_rdx_arm(&p, 100, false);
	CHECK(!sb_chip_rdx_trap(&p, &s, 150) && sb_chip_rdx_trap(&p, &s, 400) &&
	      s.reuse.n[sb_chip_reuse_bucket(250)] == 1 && !s.reuse.censored,
	      "reuse between the traps: 250");
	sb_chip_rdx_arm(&p, 1000, false);
	sb_chip_rdx_close(&p, &s, 6000);
	CHECK(s.reuse.censored == 1 && s.reuse.window == 5000, "untouched: censored from arming");
	sb_chip_rdx_arm(&p, 10000, true);
	sb_chip_rdx_trap(&p, &s, 12000);
	sb_chip_rdx_close(&p, &s, 15000);
	CHECK(s.reuse.censored == 2 && s.reuse.window == 3000,
	      "touched once: censored from the trap, near or not");
	sb_chip_rdx_arm(&p, 20000, true);
	sb_chip_rdx_close(&p, &s, 30000);
	CHECK(s.reuse.censored == 2 && s.dead_near == 1 && s.reuse.n[1] == 1,
	      "near and untouched: a short reuse");
	/* the same trap twice (two watches on the word): no reuse of 0 */
	sb_chip_rdx_arm(&p, 40000, false);
	CHECK(!sb_chip_rdx_trap(&p, &s, 41000) && !sb_chip_rdx_trap(&p, &s, 41000) &&
	      p.traps == 1 && sb_chip_rdx_trap(&p, &s, 41500) &&
	      s.reuse.n[sb_chip_reuse_bucket(500)] == 1, "a repeated count is not a second trap");
	/* of 5 reuses one short, 250 and 500, two censored beyond 3,000
	 * accesses (SD ~1,350 lines): sizes of 64-1,024 lines resolved but
	 * the one below the L2's 128, 2 in 5 accesses missing in all */
	s.near_bytes = 128 * 64;
	CHECK(sb_chip_rdx_depths(&s, 1000, 16 * 64 * 64, 64, depth, &resolved) == 0 &&
	      resolved == 0xfffe && depth[16] == 400, "resolved 0x%x, %llu misses", resolved,
	      (unsigned long long)depth[16]);
	/* the L2's size unknown: short reuses make every size a bound */
	s.near_bytes = 0;
	CHECK(sb_chip_rdx_depths(&s, 1000, 16 * 64 * 64, 64, depth, &resolved) == 0 &&
	      resolved == 0, "no L2 size: 0x%x resolved", resolved);
	memset(&s, 0, sizeof(s));
	CHECK(sb_chip_rdx_depths(&s, 100, 16 << 20, 64, depth, &resolved) == -EINVAL,
	      "no probes refused");
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
	rdx_steps();
	rdx_compare("random", RANDOM, 4096, 16, true);
	rdx_compare("cyclic", CYCLIC, 3000, 16, true);
	rdx_compare("micro", MICRO, 2048, 4, true);
	rdx_compare("stream", STREAM, 0, 16, true);
	rdx_compare("mix", MIX, 3000, 6, true);
	rdx_compare("random", RANDOM, 4096, 16, false);
	rdx_compare("cyclic", CYCLIC, 3000, 16, false);
	rdx_compare("stream", STREAM, 0, 0, false);
	return CHECK_DONE("test_chip_reuse");
}
